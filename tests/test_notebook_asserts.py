"""Every assertion a student can meet says what went wrong: each `assert` in
a notebook's code cells has a message, and the message names only what the
assertion itself uses or its cell defines (so it cannot fail with a NameError
of its own). The
exercise cells (nbgrader's solution and check cells) are left to the
grading's own tests."""
import ast
import builtins
import json
from pathlib import Path

import pytest
from IPython.core.inputtransformer2 import TransformerManager

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
IPYTHON = TransformerManager()


def asserts(path):
    """(cell index, assert node, cell source, names the cell binds) for each
    assert outside the exercise cells."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code" or "nbgrader" in cell["metadata"]:
            continue
        source = IPYTHON.transform_cell("".join(cell["source"]))  # %magics to Python
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert):
                yield index, node, source, bound(tree)


def names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def bound(tree):
    """Names `tree` (a cell, or a message) binds: assignments, loop and
    comprehension targets, arguments, imports, definitions."""
    found = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            found.add(n.id)
        elif isinstance(n, ast.arg):
            found.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            found.add(n.name)
        elif isinstance(n, ast.alias):
            found.add((n.asname or n.name).split(".")[0])
    return found


def problems(path):
    wrong = []
    for index, node, source, defined in asserts(path):
        where = f"cell {index}: {ast.get_source_segment(source, node).splitlines()[0]}"
        if node.msg is None:
            wrong.append(f"{where}: no message")
            continue
        unknown = names(node.msg) - names(node.test) - defined - set(dir(builtins))
        if unknown:
            wrong.append(f"{where}: the message uses {sorted(unknown)}, which the test does not")
    return wrong


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_assert_says_what_went_wrong(path):
    assert problems(path) == []


def test_a_bare_assert_and_a_message_with_a_name_of_its_own_are_found(tmp_path):
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": [
        "%matplotlib inline\n", "assert x == 1\n", "assert y == 2, f'y is {y}, z {z}'\n",
        "assert [a for a in w] == [], f'{[a for a in w]}'\n"]},
        {"cell_type": "code", "metadata": {"nbgrader": {"grade": True}},
         "source": ["assert graded\n"]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    assert problems(path) == ["cell 0: assert x == 1: no message",
                              "cell 0: assert y == 2, f'y is {y}, z {z}': the message uses "
                              "['z'], which the test does not"]
