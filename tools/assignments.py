"""Student copies of the course notebooks, and the check that grading works.

Every exercise is one solution cell (the answer between the BEGIN SOLUTION and
END SOLUTION marker comments) followed by one locked check cell in three parts
(inputs, run, judge; minitape.grading.cells); docs/teaching.md has the
teacher's workflow with nbgrader. This module:

    python -m tools.assignments release OUT [notebooks...]   # student copies into OUT/

and, for tests/test_nbgrader.py, `generate` (nbgrader's generate_assignment in
a course folder) and `round_trip` (in a student's kernel, each check fails on
the blank exercise and passes on the solution). Grading itself runs elsewhere:
`minitape.grading` (docs/teaching.md).
"""
import argparse
import copy
import os
import shutil
import sys
import tempfile
from pathlib import Path

from tools.kernels import CELL_TIMEOUT, NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
ASSIGNMENT = "course"
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"


def nbgrader_meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def is_solution(cell):
    return cell["cell_type"] == "code" and bool(nbgrader_meta(cell).get("solution"))


def is_check(cell):
    return cell["cell_type"] == "code" and bool(nbgrader_meta(cell).get("grade"))


def source_text(cell):
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def solution_regions(text):
    """The texts between the BEGIN and END SOLUTION markers of one cell."""
    regions, current = [], None
    for line in text.splitlines():
        if BEGIN in line:
            current = []
        elif END in line:
            regions.append("\n".join(current))
            current = None
        elif current is not None:
            current.append(line)
    return regions


def generate(notebooks, course_dir):
    """Copy `notebooks` to `course_dir/source/course/` and run nbgrader's
    generate_assignment. Returns the folder of the student copies
    (`course_dir/release/course/`). Raises RuntimeError with nbgrader's log
    when it fails."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config

    # nbgrader runs the `alembic` command of its environment: find it when this
    # Python was started by path (.venv/bin/python) without activating the venv.
    here = os.path.dirname(sys.executable)
    if here not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = here + os.pathsep + os.environ.get("PATH", "")
    course_dir = Path(course_dir)
    source = course_dir / "source" / ASSIGNMENT
    source.mkdir(parents=True, exist_ok=True)
    for path in notebooks:
        shutil.copy(path, source / Path(path).name)
    config = Config()
    config.CourseDirectory.root = str(course_dir)
    result = NbGraderAPI(config=config).generate_assignment(ASSIGNMENT)
    if not result["success"]:
        raise RuntimeError(f"nbgrader generate_assignment failed:\n{result.get('log', '')}\n"
                           f"{result.get('error', '')}")
    return course_dir / "release" / ASSIGNMENT


def _error(cell):
    """'Name: message' of the first error output of an executed cell, or None."""
    for out in cell.get("outputs", []):
        if out["output_type"] == "error":
            return f"{out['ename']}: {out['evalue']}"[:300]
    return None


def round_trip(instructor, student, workdir, timeout=CELL_TIMEOUT):
    """Run the student copy top to bottom in one kernel, with errors allowed.
    At each check cell: record whether it failed on the blank exercise, then
    run the instructor's solution cell, the cells between it and the check,
    and the check again, which must pass; later cells then see the solved
    state. Returns one dict per check cell: check, solution (grade ids),
    blank_error (None if the check passed on the blank exercise) and
    solution_error (None if it passed on the solution)."""
    import nbformat

    inst = nbformat.read(str(instructor), as_version=4)
    stud = nbformat.read(str(student), as_version=4)
    solutions = {nbgrader_meta(c)["grade_id"]: c for c in inst.cells if is_solution(c)}
    client = NotebookClient(stud, timeout=timeout, kernel_name="python3", allow_errors=True,
                            record_timing=False, resources={"metadata": {"path": str(workdir)}})
    results, last_solution = [], None
    with client.setup_kernel():
        for index, cell in enumerate(stud.cells):
            if cell.cell_type != "code":
                continue
            if is_solution(cell):
                last_solution = index
            client.execute_cell(cell, index)
            if not is_check(cell):
                continue
            result = {"check": nbgrader_meta(cell)["grade_id"], "solution": None,
                      "blank_error": _error(cell), "solution_error": "no solution cell before it"}
            if last_solution is not None:
                sol_id = nbgrader_meta(stud.cells[last_solution])["grade_id"]
                replay = [copy.deepcopy(solutions[sol_id])] + [
                    copy.deepcopy(c) for c in stud.cells[last_solution + 1:index + 1]
                    if c.cell_type == "code"]
                errors = []
                for c in replay:
                    c.outputs = []
                    client.execute_cell(c, index)
                    errors.append(_error(c))
                result.update(solution=sol_id, solution_error=errors[-1] or next(
                    (f"in a cell before the check: {e}" for e in errors if e), None))
            results.append(result)
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description="Write student copies of the notebooks "
                                     "(solutions removed) with nbgrader.")
    sub = parser.add_subparsers(dest="command", required=True)
    release = sub.add_parser("release", help="student copies into OUT/")
    release.add_argument("out", type=Path)
    release.add_argument("notebooks", nargs="*", type=Path,
                         help="default: notebooks/*.ipynb")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    with tempfile.TemporaryDirectory(prefix="minitape-course-") as tmp:
        released = generate(paths, tmp)
        args.out.mkdir(parents=True, exist_ok=True)
        for path in sorted(released.glob("*.ipynb")):
            shutil.copy(path, args.out / path.name)
            print(f"wrote {args.out / path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
