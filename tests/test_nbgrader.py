"""Teachers hand out the exercises with nbgrader (docs/teaching.md).

nbgrader's generate_assignment turns every notebook into a student copy in a
temporary course folder; then for each notebook with exercises:

- no solution survives in the student copy (no markers, and no distinctive
  line of any solution);
- each check cell fails on the blank exercise and passes on the solution
  (`tools.assignments.round_trip`: one kernel per notebook, two at a time);
- the exercise cells have the metadata nbgrader expects;

and real `nbgrader autograde`, configured for grading in fresh processes
(minitape.grading), gives the solutions every point and blank copies, issue
29's attacks and a walk that fails only the hidden tests none. Hidden tests
(between the BEGIN and END HIDDEN TESTS markers of a check cell, in any of its
three parts) are missing from the student copies, and grading runs them.
"""
import json
import multiprocessing
import os
import re
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from minitape.grading.cells import split_parts
from tools import assignments

pytest.importorskip("nbgrader")
pytestmark = [pytest.mark.slow, pytest.mark.tooling,
              # nbgrader's gradebook (SQLAlchemy) warns about its own session handling
              pytest.mark.filterwarnings("ignore:Object of type:Warning")]

ROOT = Path(__file__).resolve().parent.parent
ALL_NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _load(path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


EXERCISE_NOTEBOOKS = [p for p in ALL_NOTEBOOKS
                      if any(assignments.is_check(c) for c in _load(p)["cells"])]
ids = [p.stem for p in EXERCISE_NOTEBOOKS]


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebook_has_a_graded_exercise(path):
    cells = _load(path)["cells"]
    assert any(assignments.is_solution(c) for c in cells), f"{path.name}: no solution cell"
    assert any(assignments.is_check(c) for c in cells), f"{path.name}: no check cell"


@pytest.mark.parametrize("path", EXERCISE_NOTEBOOKS, ids=ids)
def test_exercise_cells_have_nbgrader_metadata(path):
    code = [c for c in _load(path)["cells"] if c["cell_type"] == "code"]
    graded = [(i, c) for i, c in enumerate(code) if "nbgrader" in c.get("metadata", {})]
    assert graded
    prefix = None
    for i, cell in graded:
        meta = cell["metadata"]["nbgrader"]
        if meta.get("solution"):
            match = re.fullmatch(r"(ex\w+(?:-[\w-]+)?)-solution", meta["grade_id"])
            assert match, meta["grade_id"]
            prefix = match.group(1)
            assert meta == {"grade": False, "grade_id": meta["grade_id"], "locked": False,
                            "schema_version": 3, "solution": True, "task": False}
            regions = assignments.solution_regions(assignments.source_text(cell))
            assert regions and all(r.strip() for r in regions), "an empty solution region"
            nxt = code[i + 1] if i + 1 < len(code) else {}
            assert nxt.get("metadata", {}).get("nbgrader", {}).get("grade"), (
                f"{meta['grade_id']}: the next code cell must be its check cell")
        else:
            assert meta == {"grade": True, "grade_id": meta["grade_id"], "locked": True,
                            "points": meta.get("points"), "schema_version": 3,
                            "solution": False, "task": False}
            assert meta["points"] and meta["points"] > 0
            assert meta["grade_id"] == f"{prefix}-check", (
                f"{meta['grade_id']} does not follow the solution {prefix}-solution")
            assert "assert" in assignments.source_text(cell), "a check cell must assert"
            parts = split_parts(assignments.source_text(cell), meta["grade_id"])  # three parts
            assert "got" in parts["run"].text and "got" in parts["judge"].text
    ids_ = [c["metadata"]["nbgrader"]["grade_id"] for _, c in graded]
    assert len(set(ids_)) == len(ids_), "grade ids must be unique in a notebook"


@pytest.fixture(scope="session")
def course(tmp_path_factory):
    """Student copies of every notebook, made by nbgrader's generate_assignment."""
    course_dir = tmp_path_factory.mktemp("course")
    released = assignments.generate(ALL_NOTEBOOKS, course_dir)
    return course_dir, released


def test_every_notebook_gets_a_student_copy(course):
    _, released = course
    assert sorted(p.name for p in released.glob("*.ipynb")) == [p.name for p in ALL_NOTEBOOKS]


def _distinctive_lines(nb):
    """Per solution region, its lines that appear nowhere else in the notebook."""
    outside = "\n".join(
        assignments.source_text(c) if not assignments.is_solution(c)
        else re.sub(r"### BEGIN SOLUTION.*?### END SOLUTION", "",
                    assignments.source_text(c), flags=re.S)
        for c in nb["cells"])
    per_region = []
    for cell in nb["cells"]:
        if assignments.is_solution(cell):
            for region in assignments.solution_regions(assignments.source_text(cell)):
                lines = {ln.strip() for ln in region.splitlines()}
                per_region.append((region, [ln for ln in lines
                                            if len(ln) >= 8 and ln not in outside]))
    return per_region


@pytest.mark.parametrize("path", EXERCISE_NOTEBOOKS, ids=ids)
def test_student_copy_keeps_no_solution(course, path):
    _, released = course
    student_text = (released / path.name).read_text(encoding="utf-8")
    assert assignments.BEGIN not in student_text and assignments.END not in student_text
    assert assignments.BEGIN_HIDDEN not in student_text
    assert assignments.END_HIDDEN not in student_text
    student = json.loads(student_text)
    assert all(c.get("outputs", []) == [] for c in student["cells"] if c["cell_type"] == "code")
    student_sources = "\n".join(assignments.source_text(c) for c in student["cells"])
    instructor_sources = "\n".join(assignments.source_text(c) for c in _load(path)["cells"])
    for region, lines in _distinctive_lines(_load(path)):
        assert lines, f"no line of this solution is distinctive enough to test:\n{region}"
        assert all(ln in instructor_sources for ln in lines)  # the search itself works
        leaked = [ln for ln in lines if ln in student_sources]
        assert not leaked, f"{path.name}: the student copy still holds {leaked}"


@pytest.fixture(scope="session")
def round_trips(course):
    """`assignments.round_trip` for every notebook with exercises, two at a time
    (one kernel each), in the temporary course folder."""
    course_dir, released = course
    work = course_dir / "work"
    work.mkdir()
    with ProcessPoolExecutor(max_workers=2,
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {p.name: pool.submit(assignments.round_trip, p, released / p.name, work)
                   for p in EXERCISE_NOTEBOOKS}
        return {name: f.result() for name, f in futures.items()}


@pytest.mark.parametrize("path", EXERCISE_NOTEBOOKS, ids=ids)
def test_each_check_fails_blank_and_passes_solved(round_trips, path):
    results = round_trips[path.name]
    checks = [assignments.nbgrader_meta(c)["grade_id"] for c in _load(path)["cells"]
              if assignments.is_check(c)]
    assert [r["check"] for r in results] == checks
    for r in results:
        assert r["blank_error"] is not None, (
            f"{r['check']} passes on the blank exercise: it must fail until it is solved")
        assert r["solution_error"] is None, (
            f"{r['check']} fails on the solution {r['solution']}: {r['solution_error']}")


def _nbgrader(course_dir, *args):
    """Run the `nbgrader` command of this Python's environment in `course_dir`,
    as a teacher would, with this checkout's minitape."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    here = os.path.dirname(sys.executable)
    env["PATH"] = here + os.pathsep + env.get("PATH", "")
    result = subprocess.run([os.path.join(here, "nbgrader"), *args], cwd=course_dir, env=env,
                            capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def _with_answer(student_copy, grade_id, text):
    nb = _load(student_copy)
    for cell in nb["cells"]:
        if assignments.nbgrader_meta(cell).get("grade_id") == grade_id:
            cell["source"] = text
    return nb


TRANSFORMER = """def jacobian_matrix(f, values):
    return None


def skip_checks(lines):
    return ["pass\\n"] if any("assert" in line for line in lines) else lines


get_ipython().input_transformers_post.append(skip_checks)
"""
SOURCE = """import json

for cell in json.load(open("../../../source/course/07_jacobians.ipynb"))["cells"]:
    if "ex07-solution" in str(cell["metadata"]):
        exec("".join(cell["source"]))
"""


def test_real_autograde_grades_in_fresh_processes(tmp_path):
    """`nbgrader autograde`, configured by `python -m minitape.grading config` as
    docs/teaching.md says: solutions get every point, blank copies none, and
    issue 29's attacks that passed every exercise (an input transformer, the
    instructor's notebook read from ../../../source/) none; a walk that passes
    the visible check but not the hidden one loses that exercise's point."""
    from nbgrader.api import Gradebook

    notebooks = [ROOT / "notebooks" / "00a_build_a_tape.ipynb",
                 ROOT / "notebooks" / "07_jacobians.ipynb"]
    out = subprocess.run([sys.executable, "-m", "minitape.grading", "config", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "nbgrader_config.py" in out
    released = assignments.generate(notebooks, tmp_path)
    walk, jacobian = (released / p.name for p in notebooks)
    submissions = {
        "solved": {p.name: p.read_bytes() for p in notebooks},
        "blank": {p.name: (released / p.name).read_bytes() for p in notebooks},
        "attacks": {walk.name: json.dumps(_walk_shortcut(walk)).encode(),
                    jacobian.name: json.dumps(_with_answer(jacobian, "ex07-solution",
                                                           TRANSFORMER)).encode()},
        "source": {jacobian.name: json.dumps(_with_answer(jacobian, "ex07-solution",
                                                          SOURCE)).encode()},
    }
    for student, files in submissions.items():
        folder = tmp_path / "submitted" / student / assignments.ASSIGNMENT
        folder.mkdir(parents=True)
        for name, data in files.items():
            (folder / name).write_bytes(data)
    log = _nbgrader(tmp_path, "autograde", assignments.ASSIGNMENT).stderr
    assert "Grading ex07-check in fresh processes" in log
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        def scores(student, notebook):
            found = gb.find_submission_notebook(notebook, assignments.ASSIGNMENT, student)
            return {g.name: g.score for g in found.grades}
        assert set(scores("solved", "00a_build_a_tape").values()) == {1.0}
        assert scores("solved", "07_jacobians") == {"ex07-check": 1.0}
        assert set(scores("blank", "00a_build_a_tape").values()) == {0.0}
        assert scores("blank", "07_jacobians") == {"ex07-check": 0.0}
        assert scores("attacks", "00a_build_a_tape") == {
            "ex00a-record-check": 1.0, "ex00a-rules-check": 1.0, "ex00a-walk-check": 0.0}
        assert scores("attacks", "07_jacobians") == {"ex07-check": 0.0}
        assert scores("source", "07_jacobians") == {"ex07-check": 0.0}
    graded = _load(tmp_path / "autograded" / "source" / assignments.ASSIGNMENT / jacobian.name)
    (check,) = [c for c in graded["cells"] if assignments.is_check(c)]
    assert check["outputs"][0]["output_type"] == "error"
    assert "not available to an answer" in check["outputs"][0]["evalue"]


REVERSED_TAPE_WALK = """def gradient(tape, target, source):
    grads = {id(target): Tensor(1.0)}
    for op, inputs, out in reversed(tape.ops):
        if id(out) in grads:
            for x, gx in zip(inputs, RULES[op](inputs, grads[id(out)])):
                grads[id(x)] = gx if id(x) not in grads else grads[id(x)] + gx
    return grads.get(id(source))
"""


def _walk_shortcut(student_copy):
    """The student copy of 00a_build_a_tape with every solution filled in, the
    walk by REVERSED_TAPE_WALK."""
    nb = _load(student_copy)
    solved = _load(ROOT / "notebooks" / "00a_build_a_tape.ipynb")
    answers = {assignments.nbgrader_meta(c)["grade_id"]: c["source"]
               for c in solved["cells"] if assignments.is_solution(c)}
    answers["ex00a-walk-solution"] = REVERSED_TAPE_WALK
    for cell in nb["cells"]:
        if assignments.is_solution(cell):
            cell["source"] = answers[assignments.nbgrader_meta(cell)["grade_id"]]
    return nb


def test_reversed_tape_walk_passes_the_visible_check(course):
    """The shortcut above passes the check the student sees (graded as the
    autograder grades, with the student copy's check), so the zero it gets
    comes from the hidden tests."""
    from minitape.grading import runner

    _, released = course
    student = _walk_shortcut(released / "00a_build_a_tape.ipynb")
    visible = runner.grade_notebook(student, only={"ex00a-walk-check"})
    assert [g.passed for g in visible] == [True], visible[0].message
    (hidden,) = runner.grade_notebook(ROOT / "notebooks" / "00a_build_a_tape.ipynb", student,
                                      only={"ex00a-walk-check"})
    assert not hidden.passed and "another order" in hidden.message


def _hidden_regions(text):
    return re.findall(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", text, flags=re.S)


@pytest.mark.parametrize("path", EXERCISE_NOTEBOOKS, ids=ids)
def test_every_check_has_hidden_tests_the_student_copy_lacks(course, path):
    """Each check cell grades inputs the student never sees: it has a hidden
    part, and no line of it is in the student copy."""
    _, released = course
    student = _load(released / path.name)
    student_checks = {assignments.nbgrader_meta(c)["grade_id"]: assignments.source_text(c)
                      for c in student["cells"] if assignments.is_check(c)}
    for cell in _load(path)["cells"]:
        if not assignments.is_check(cell):
            continue
        grade_id = assignments.nbgrader_meta(cell)["grade_id"]
        text = assignments.source_text(cell)
        hidden = _hidden_regions(text)
        assert hidden and all(h.strip() for h in hidden), f"{grade_id}: no hidden tests"
        visible = re.sub(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS\n?", "", text, flags=re.S)
        assert student_checks[grade_id].strip() == visible.strip(), (
            f"{grade_id}: the student's check is not the visible part of the instructor's")
        for line in {ln.strip() for h in hidden for ln in h.splitlines()}:
            if len(line) >= 12 and line not in visible:
                assert line not in student_checks[grade_id], f"{grade_id}: hidden line leaked: {line}"


def _tiny_notebook(path, check_source, solution="answer = 42"):
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    sol = new_code_cell(f"### BEGIN SOLUTION\n{solution}\n### END SOLUTION")
    sol.metadata["nbgrader"] = {"grade": False, "grade_id": "ex-solution", "locked": False,
                                "schema_version": 3, "solution": True, "task": False}
    chk = new_code_cell(check_source)
    chk.metadata["nbgrader"] = {"grade": True, "grade_id": "ex-check", "locked": True,
                                "points": 1, "schema_version": 3, "solution": False,
                                "task": False}
    nb = new_notebook(cells=[new_code_cell("answer = 0"), sol, chk])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, str(path))
    return path


def test_round_trip_reports_checks_that_pass_blank_or_fail_solved(tmp_path):
    """The round trip itself can fail: a check that passes without the answer, and
    one that fails with it, are both reported."""
    weak = _tiny_notebook(tmp_path / "weak.ipynb", "assert isinstance(answer, int)")
    wrong = _tiny_notebook(tmp_path / "wrong.ipynb", "assert answer == 43")
    released = assignments.generate([weak, wrong], tmp_path / "course")
    (weak_result,) = assignments.round_trip(weak, released / "weak.ipynb", tmp_path)
    (wrong_result,) = assignments.round_trip(wrong, released / "wrong.ipynb", tmp_path)
    assert weak_result["blank_error"] is None and weak_result["solution_error"] is None
    assert wrong_result["blank_error"].startswith("AssertionError")
    assert wrong_result["solution_error"].startswith("AssertionError")
