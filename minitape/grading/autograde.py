"""nbgrader's autograder, grading in fresh processes (the only module of
minitape that imports nbgrader).

nbgrader's `autograde` copies each submission, restores the instructor's
check cells (hidden tests included) and then runs the notebook in a Jupyter
kernel: nbgrader's `Execute` preprocessor, first in the list
`Autograde.autograde_preprocessors`. The course's `nbgrader_config.py` puts
`FreshProcessGrading` in its place. It runs no kernel: for each check cell it
grades the exercise as `minitape.grading.runner` does, taking the context
cells and the check (hidden tests included) from the instructor's notebook
in `source/<assignment>/` and only the answer cells from the submission, and
writes the result into the check cell's outputs: an error output (0 points
in nbgrader's SaveAutoGrades) when it fails, a short stream output when it
passes. Other cells get no outputs.

    python -m minitape.grading config COURSE_DIR   # writes COURSE_DIR/nbgrader_config.py
"""
import os

from nbformat.v4 import new_output
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Float, Integer

from . import cells, runner

# nbgrader 0.9's Autograde.autograde_preprocessors, with Execute replaced.
AUTOGRADE_PREPROCESSORS = [
    "minitape.grading.autograde.FreshProcessGrading",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]

CONFIG = f'''# nbgrader configuration for a minitape course (written by `python -m minitape.grading
# config`). `nbgrader autograde` grades each exercise in two fresh Python processes
# (minitape.grading), not in a Jupyter kernel: see minitape's docs/teaching.md.
c = get_config()  # noqa: F821 (nbgrader defines it)

c.Autograde.autograde_preprocessors = {AUTOGRADE_PREPROCESSORS!r}
# Limits per grading process (each exercise starts two): wall-clock and CPU seconds,
# and memory in MiB.
c.FreshProcessGrading.timeout = 120
c.FreshProcessGrading.cpu_seconds = 60
c.FreshProcessGrading.memory_mb = 2048
'''


class FreshProcessGrading(NbGraderPreprocessor):
    """Grades each check cell in fresh processes; see the module docstring."""

    timeout = Float(120.0, help="Wall-clock seconds per grading process").tag(config=True)
    cpu_seconds = Integer(60, help="CPU seconds per grading process").tag(config=True)
    memory_mb = Integer(2048, help="Address space per grading process, MiB").tag(config=True)

    def _source_notebook(self, resources):
        """The instructor's notebook: source/<assignment>/<notebook>.ipynb."""
        owner = self.parent
        while owner is not None and getattr(owner, "coursedir", None) is None:
            owner = getattr(owner, "parent", None)
        coursedir = owner.coursedir if owner is not None else CourseDirectory(config=self.config)
        info = resources["nbgrader"]
        folder = coursedir.format_path(coursedir.source_directory, ".", info["assignment"])
        return os.path.join(folder, info["notebook"] + ".ipynb")

    def preprocess(self, nb, resources):
        path = self._source_notebook(resources)
        try:
            source = cells.load(path)
        except OSError as error:
            raise RuntimeError(f"grading needs the instructor's notebook, {path}: {error}") from None
        answers = cells.answers_of(nb)
        limits = runner.Limits(seconds=self.timeout, cpu_seconds=self.cpu_seconds,
                               memory_bytes=self.memory_mb * 2**20)
        exercises = {e.check_id: e for e in cells.exercises(source)}
        for cell in nb.cells:
            if not cells.is_check(cell):
                continue
            check_id = cells.meta(cell)["grade_id"]
            if check_id not in exercises:
                cell.outputs = [new_output("error", ename="GradingError", evalue=(
                    f"{check_id} is not a check of {path}"), traceback=[])]
                continue
            self.log.info("Grading %s in fresh processes", check_id)
            result = runner.grade(exercises[check_id], answers, limits)
            if result.passed:
                cell.outputs = [new_output("stream", name="stdout", text=(
                    result.printed or "") + "(graded in fresh processes: passed)\n")]
            else:
                head, _, rest = result.message.partition(": ")
                cell.outputs = [new_output("error", ename=head if " " not in head else "Failed",
                                           evalue=rest if " " not in head else result.message,
                                           traceback=result.message.splitlines())]
            cell.execution_count = None
        return nb, resources


def write_config(course_dir):
    """Write COURSE_DIR/nbgrader_config.py (refuses to replace another one)."""
    path = os.path.join(course_dir, "nbgrader_config.py")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as file:
            if file.read() != CONFIG:
                raise FileExistsError(f"{path} exists: add these lines to it instead:\n\n{CONFIG}")
    os.makedirs(course_dir, exist_ok=True)
    with open(path, "w", encoding="utf-8") as file:
        file.write(CONFIG)
    return path
