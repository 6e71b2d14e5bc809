"""What grading reads from a notebook: exercises, their check cells' three
parts, and the cells each exercise needs.

A notebook is read as plain JSON (no Jupyter needed). An exercise is
nbgrader's pair of cells: a solution cell (metadata `nbgrader.solution`,
grade id `exNN-solution` or `exNN-name-solution`), then a check cell
(`nbgrader.grade`, grade id `exNN-check` or `exNN-name-check`).

A check cell has three parts, each opened by a comment line at column 0:

    # inputs: ...   the inputs the answer is run on (made by trusted code)
    # run: ...      calls the answer; puts what it returned, as plain data,
                    and what spies saw it do, in the dict `got`
    # judge: ...    compares `got` with what it must be (the expected
                    values live here, and only here)

In a student's kernel the cell just runs top to bottom. In grading, the
inputs and run parts run in the answer's process and the inputs and judge
parts in another process that never runs the answer's code (see
`minitape.grading.processes`). nbgrader's hidden-test regions may sit in any
part, but may not cross a part's opening line.

A cell the exercise needs (a class the answer builds on, say) carries the
cell tag `<prefix>-context`, where `<prefix>` starts the check's grade id:
`ex00a-context` serves `ex00a-record-check`, `ex00a-rules-check` and
`ex00a-walk-check`; `ex07-context` serves `ex07-check`. Every process
starts with `PRELUDE`, the imports of the notebooks' setup cell.
"""
import ast
import json
import re
from dataclasses import dataclass

PRELUDE = ("import numpy as np\n"
           "import minitape as mt\n"
           "\n"
           "np.set_printoptions(precision=4, suppress=True)\n"
           "mt.random.set_seed(42)\n")
PARTS = ("inputs", "run", "judge")
_MARKER = re.compile(r"^# (inputs|run|judge):")
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"


class NotebookError(ValueError):
    """A notebook whose exercises grading cannot read."""


@dataclass
class Part:
    name: str        # "inputs", "run" or "judge"
    text: str        # the part's lines, its opening comment included
    first_line: int  # the line number of its opening comment in the cell (1-based)


@dataclass
class Exercise:
    check_id: str         # the check cell's grade id
    solution_id: str      # the grade id of the solution cell right before it
    points: float
    parts: dict           # name -> Part (the instructor's text, hidden tests included)
    steps: list           # ("context", cell index, text) and ("answer", grade id, text) in order
    exports: dict         # solution grade id -> names its cell binds (the instructor's)


def source(cell):
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def is_solution(cell):
    return cell.get("cell_type") == "code" and bool(meta(cell).get("solution"))


def is_check(cell):
    return cell.get("cell_type") == "code" and bool(meta(cell).get("grade"))


def load(path):
    with open(path, encoding="utf-8") as file:
        return json.load(file)


def split_parts(text, check_id="check"):
    """The three parts of a check cell's text, or NotebookError naming what is
    wrong with its form."""
    lines = text.splitlines(keepends=True)
    starts, hidden = [], False
    for number, line in enumerate(lines, start=1):
        if BEGIN_HIDDEN in line:
            hidden = True
        elif END_HIDDEN in line:
            hidden = False
        match = _MARKER.match(line)
        if match:
            if hidden:
                raise NotebookError(f"{check_id}: '# {match.group(1)}:' on line {number} is "
                                    "inside hidden tests (a region may not cross a part)")
            starts.append((match.group(1), number))
    if [name for name, _ in starts] != list(PARTS) or starts[0][1] != 1:
        raise NotebookError(
            f"{check_id}: a check cell starts with a line '# inputs: ...' and has one "
            f"'# run: ...' and one '# judge: ...' line after it, in that order (found "
            f"{[f'# {name}: (line {n})' for name, n in starts] or 'none'})")
    parts = {}
    for k, (name, number) in enumerate(starts):
        end = starts[k + 1][1] - 1 if k + 1 < len(starts) else len(lines)
        body = "".join(lines[number - 1:end])
        parts[name] = Part(name, body if body.endswith("\n") else body + "\n", number)
    return parts


def bound_names(text):
    """The names a cell binds at its top level (assignments, defs, classes,
    imports), in order of first binding; [] when it does not parse."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    names = []

    def add(name):
        if name not in names:
            names.append(name)

    def targets(node):
        if isinstance(node, ast.Name):
            add(node.id)
        elif isinstance(node, (ast.Tuple, ast.List)):
            for element in node.elts:
                targets(element)
        elif isinstance(node, ast.Starred):
            targets(node.value)

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                targets(target)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets(node.target)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, (ast.For, ast.With)):
            for target in ([node.target] if isinstance(node, ast.For)
                           else [i.optional_vars for i in node.items if i.optional_vars]):
                targets(target)
    return names


def exercises(notebook):
    """The notebook's exercises, in order (a list of Exercise). Raises
    NotebookError when a check cell is not in the three-part form or has no
    solution cell before it."""
    cells = notebook["cells"]
    found, solutions_so_far, last_solution = [], [], None
    for index, cell in enumerate(cells):
        if is_solution(cell):
            last_solution = meta(cell)["grade_id"]
            solutions_so_far.append(last_solution)
        if not is_check(cell):
            continue
        check_id = meta(cell)["grade_id"]
        if last_solution is None:
            raise NotebookError(f"{check_id}: no solution cell before this check")
        steps, exports = [], {}
        for k in range(index):
            before = cells[k]
            if before.get("cell_type") != "code":
                continue
            if is_solution(before):
                grade_id = meta(before)["grade_id"]
                steps.append(("answer", grade_id, source(before)))
                exports[grade_id] = bound_names(source(before))
            elif any(check_id.startswith(tag[:-len("context")])
                     for tag in before.get("metadata", {}).get("tags", [])
                     if tag.endswith("-context")):
                steps.append(("context", k, source(before)))
        found.append(Exercise(check_id=check_id, solution_id=last_solution,
                              points=float(meta(cell).get("points", 0)),
                              parts=split_parts(source(cell), check_id),
                              steps=steps, exports=exports))
        last_solution = None
    return found


def answers_of(notebook):
    """Solution grade id -> the text of that solution cell (a student's answers)."""
    return {meta(c)["grade_id"]: source(c) for c in notebook["cells"] if is_solution(c)}
