"""tools.rebuild_notebooks on two tiny notebooks: one with an explorer (stored
as a static picture, without widget state, metadata stripped), one whose
cell raises (left unchanged, exit status 1)."""
import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from tools import colab
from tools import rebuild_notebooks as rb

pytest.importorskip("ipywidgets")
pytestmark = [pytest.mark.slow, pytest.mark.tooling]


def _write(path, *sources):
    """A notebook of code cells; a cell whose source starts with "[explorer]" is
    tagged as nbval ignores it (the explorer's cell)."""
    cells = [new_code_cell(s.removeprefix("[explorer]"),
                           metadata={"tags": [rb.IGNORE_OUTPUT]} if s.startswith("[explorer]")
                           else {}) for s in sources]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, str(path))
    return path


def test_rebuild_stores_each_explorer_as_a_picture_and_strips(tmp_path):
    good = _write(tmp_path / "good.ipynb", "print('old colab cell')",
                  "import ipywidgets as w\nfrom IPython.display import HTML, display\n"
                  "from minitape.widgets.compat import interactive",
                  "[explorer]"
                  "interactive(lambda x: display(HTML(f'<b>x is {x}</b>')),\n"
                  "            x=w.IntSlider(value=3, description='x'))")
    bad = _write(tmp_path / "bad.ipynb", "print('colab')", "raise ValueError('boom')")
    bad_before = bad.read_bytes()

    assert rb.main([str(good), str(bad), "-j", "2", "--timeout", "120"]) == 1

    assert bad.read_bytes() == bad_before  # a failed run changes nothing
    nb = json.loads(good.read_text(encoding="utf-8"))
    assert colab.source_text(colab.first_code_cell(nb)) == colab.cell_source()
    assert "widgets" not in nb["metadata"]  # no state: no inert controls to draw
    assert nb["cells"][0]["source"] == [colab.badge_cell_source("good.ipynb")]
    assert nb["cells"][0]["id"] == colab.BADGE_CELL_ID  # kept through the strip
    (picture,) = nb["cells"][3]["outputs"]  # the note and the view became one picture
    assert rb.WIDGET_VIEW not in picture["data"]
    fallback = "".join(picture["data"]["text/html"])
    assert rb.FALLBACK_CAPTION in fallback and "x = 3" in fallback
    assert "<b>x is 3</b>" in fallback
    assert rb.NOTE_CLASS not in fallback
    for cell in nb["cells"][1:]:  # nbstripout ran: counts kept, volatile metadata gone
        assert cell["execution_count"] is not None
        assert "execution" not in cell["metadata"]
