"""Explorers render when a notebook is opened, before anything runs.

`python -m tools.rebuild_notebooks` stores every widget's state with the
outputs (JupyterLab and nbviewer draw the explorer from it) and gives each
explorer output a static HTML fallback of its first state (for GitHub's
preview). These tests check the stored notebooks, and the fallback builder
on a made-up widget state.
"""
import base64
import json
import re
from pathlib import Path

import pytest

from minitape.widgets.compat import NOTE_CLASS, NOTE_HTML
from tools import rebuild_notebooks as rb

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXPLORER_CALL = re.compile(r"\b(\w+_explorer|backward_stepper)\(")


def _code(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def _src(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _widget_outputs(cell):
    return [o for o in cell.get("outputs", []) if rb.WIDGET_VIEW in o.get("data", {})]


WITH_EXPLORERS = [p for p in NOTEBOOKS
                  if any(EXPLORER_CALL.search(_src(c))
                         for c in _code(json.loads(p.read_text(encoding="utf-8"))))]


def test_the_course_has_explorers():
    assert len(WITH_EXPLORERS) >= 10


@pytest.mark.parametrize("path", WITH_EXPLORERS, ids=lambda p: p.stem)
def test_every_explorer_is_stored_as_a_static_picture(path):
    """Issue 19: stored widget state made JupyterLab draw inert controls (red
    broken-link icons, clipped buttons) in a trusted notebook before it ran.
    Each explorer is stored as one picture of its first state, with no widget
    view and no widget state, so every viewer shows the same picture until the
    kernel runs the cell."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    rebuild = f"rebuild it with `python -m tools.rebuild_notebooks {path.relative_to(ROOT)}`"
    assert "widgets" not in nb.get("metadata", {}), f"{path.name}: widget state stored; {rebuild}"
    for cell in _code(nb):
        if not EXPLORER_CALL.search(_src(cell)):
            continue
        assert not _widget_outputs(cell), f"{path.name}: a live widget view is stored; {rebuild}"
        pictures = [o for o in cell.get("outputs", [])
                    if rb.FALLBACK_CAPTION in "".join(o.get("data", {}).get("text/html", ""))]
        assert len(pictures) == 1, f"{path.name}: an explorer without its picture; {rebuild}"
        notes = [o for o in cell.get("outputs", []) if rb._is_note(o)]
        assert not notes, f"{path.name}: the live explorer's note was stored; {rebuild}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_notebook_stores_a_widget_view(path):
    """A stored view needs a model the kernel made; without it JupyterLab shows
    "Error displaying widget: model not found"."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert not [o for c in _code(nb) for o in _widget_outputs(c)]


PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"0" * 16).decode()


def _model(name, **state):
    return {"model_name": name, "model_module": "@jupyter-widgets/controls",
            "model_module_version": "2.0.0", "state": state}


def test_fallback_shows_plots_html_and_control_values():
    state = {
        "box": _model("VBoxModel", children=["IPY_MODEL_slider", "IPY_MODEL_out",
                                             "IPY_MODEL_text"]),
        "slider": _model("FloatSliderModel", description="delta", value=0.5),
        "out": _model("OutputModel", outputs=[
            {"output_type": "display_data", "data": {"image/png": PNG,
                                                     "text/plain": "<Figure>"}},
            {"output_type": "display_data", "data": {"text/html": "<b>dc/da = 4.0</b>"}}]),
        "text": _model("HTMLModel", value="<i>step 0</i>"),
        "unrelated": _model("OutputModel", outputs=[
            {"output_type": "display_data", "data": {"text/html": "<b>elsewhere</b>"}}]),
    }
    html = rb.fallback_html(state, "box")
    assert rb.FALLBACK_CAPTION in html and "delta = 0.5" in html
    assert f'src="data:image/png;base64,{PNG}"' in html
    assert 'alt="plot of the explorer, as first drawn (delta = 0.5)"' in html
    assert "<b>dc/da = 4.0</b>" in html and "<i>step 0</i>" in html
    assert "elsewhere" not in html
    assert rb.fallback_html(state, "slider") is None  # nothing static drawn


def _view(model_id):
    return {"output_type": "display_data",
            "data": {rb.WIDGET_VIEW: {"model_id": model_id, "version_major": 2,
                                      "version_minor": 0}, "text/plain": ""}}


def test_freezing_goes_only_to_cells_nbval_ignores():
    state = {"out": _model("OutputModel", outputs=[
        {"output_type": "display_data", "data": {"text/html": "<b>first</b>"}}]),
        "slider": _model("IntSliderModel", description="k", value=2)}
    note = {"output_type": "display_data", "metadata": {},
            "data": {"text/html": NOTE_HTML, "text/plain": "<HTML>"}}
    printed = {"output_type": "stream", "name": "stdout", "text": "kept\n"}
    nb = {"metadata": {"widgets": {rb.WIDGET_STATE: {"state": state, "version_major": 2,
                                                     "version_minor": 0}}},
          "cells": [{"cell_type": "code", "source": "w", "metadata": {"tags": [rb.IGNORE_OUTPUT]},
                     "outputs": [printed, note, _view("out")]},
                    {"cell_type": "code", "source": "v", "metadata": {"tags": [rb.IGNORE_OUTPUT]},
                     "outputs": [note, _view("slider")]},
                    {"cell_type": "code", "source": "w", "outputs": [_view("out")]}]}
    assert rb.freeze_explorers(nb) == 2
    first, picture = nb["cells"][0]["outputs"]
    assert first == printed
    assert "<b>first</b>" in picture["data"]["text/html"]
    assert rb.WIDGET_VIEW not in picture["data"]
    (inert,) = nb["cells"][1]["outputs"]  # drew nothing static: the note's words
    assert "Run the notebook to use this explorer" in inert["data"]["text/html"]
    assert nb["cells"][2]["outputs"] == [_view("out")]  # nbval compares this one
    assert "widgets" not in nb["metadata"]


def test_an_explorer_displays_a_note_then_its_widget():
    """The note is a plain HTML output, so it survives a save; its style hides
    the widget view JupyterLab can no longer draw after a reopen."""
    pytest.importorskip("ipywidgets")
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.display import display
    from IPython.utils.capture import capture_output

    from minitape.widgets.recording import usage_count_explorer
    InteractiveShell.instance()
    widget = usage_count_explorer()
    with capture_output() as captured:
        display(widget)
    note, view = captured.outputs
    assert NOTE_CLASS in note.data["text/html"] and "<style>" in note.data["text/html"]
    assert view.data[rb.WIDGET_VIEW]["model_id"] == widget.model_id
    assert view.data["text/plain"] == ""  # untrusted: no `interactive(children=...`


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_kernelspec_is_what_jupyterlab_writes_back(path):
    """JupyterLab saves the kernel's display name; any other makes a save of an
    unchanged notebook a git diff (tests/test_browser_explorers.py saves one)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert nb["metadata"]["kernelspec"] == rb.KERNELSPEC


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_explorer_cells_carry_nbvals_tag_and_no_marker(path):
    """Issue 29: the course shows no test machinery in a cell's source. An
    explorer's cell carries nbval's cell tag `nbval-ignore-output`, never the
    `# NBVAL_...` markers, which a student would read as code."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in _code(nb):
        source = _src(cell)
        assert "NBVAL_" not in source, f"{path.name}: a # NBVAL_ marker in {source[:60]!r}"
        if EXPLORER_CALL.search(source):
            assert rb.IGNORE_OUTPUT in cell.get("metadata", {}).get("tags", []), (
                f"{path.name}: the explorer cell {source[:60]!r} lacks the tag "
                f"{rb.IGNORE_OUTPUT!r}")
