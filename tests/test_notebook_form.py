"""Issue 29: the notebooks read like JAX's Autodiff Cookbook: a short paragraph,
the code, one check, and the test machinery out of the way.

- prose: at most tools.notebook_words.LIMIT words of Markdown per notebook;
- every claim check (a code cell that asserts, other than a graded exercise's
  cells) is a *check cell*: tagged `check`, its source folded in JupyterLab
  (`jupyter.source_hidden`) and in Colab (`cellView: form`), and it prints one
  line starting with "✓ " that says what it checked, so the folded cell shows
  its summary (docs/notebooks.md, "Check cells").
"""
import ast
import json
from pathlib import Path

import pytest

from tools import colab, notebook_words

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CHECK_TAG = "check"


def _source(cell):
    return "".join(cell["source"])


def _asserts(source):
    """Whether the code asserts at its top level: an assert statement, or a call
    of an `assert_*` function (np.testing's)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics: not a check
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(
                node.func, "id", "")
            if name.startswith("assert_"):
                return True
    return False


def _checks(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code" and "nbgrader" not in
            c.get("metadata", {}) and colab.source_text(c) != colab.cell_source()
            and (_asserts(_source(c)) or CHECK_TAG in c.get("metadata", {}).get("tags", []))]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_prose_is_brief(path):
    words = notebook_words.notebook_words(path)
    assert words <= notebook_words.LIMIT, (
        f"{path.name}: {words} words of Markdown, over {notebook_words.LIMIT}: cut prose that "
        "repeats (python -m tools.notebook_words)")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_claim_check_is_a_folded_check_cell_with_a_summary(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    checks = _checks(nb)
    assert checks, f"{path.name}: no check cell"
    for cell in checks:
        meta, first = cell.get("metadata", {}), _source(cell).splitlines()[0][:70]
        where = f"{path.name}, the check cell starting {first!r}"
        assert CHECK_TAG in meta.get("tags", []), f"{where}: tag it {CHECK_TAG!r}"
        assert meta.get("jupyter", {}).get("source_hidden") is True, (
            f"{where}: fold it in JupyterLab (metadata jupyter.source_hidden: true)")
        assert meta.get("cellView") == "form", f"{where}: fold it in Colab (cellView: form)"
        printed = "".join("".join(o.get("text", "")) for o in cell.get("outputs", [])
                          if o.get("output_type") == "stream" and o.get("name") == "stdout")
        last = printed.rstrip("\n").splitlines()[-1] if printed.strip() else ""
        assert last.startswith("✓ ") and len(last) > 4, (
            f"{where}: end it with print('✓ ...'), one line saying what it checked "
            f"(printed {printed[-80:]!r}); rebuild the notebook")
