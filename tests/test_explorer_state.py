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
def test_every_explorer_is_stored_with_its_widget_state_and_a_fallback(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    state = rb.widget_state(nb)
    assert state, (f"{path.name}: no saved widget state; rebuild it with "
                   f"`python -m tools.rebuild_notebooks {path.relative_to(ROOT)}`")
    for cell in _code(nb):
        if not EXPLORER_CALL.search(_src(cell)):
            continue
        views = _widget_outputs(cell)
        assert views, f"{path.name}: an explorer cell has no stored widget:\n{_src(cell)}"
        for out in views:
            model_id = out["data"][rb.WIDGET_VIEW]["model_id"]
            assert model_id in state, f"{path.name}: widget {model_id} has no saved state"
            for model in rb.reachable_models(state, model_id):
                for ref in rb._model_ids(model.get("state", {})):
                    assert ref in state, f"{path.name}: {model['model_name']} refers to {ref}"
            fallback = out["data"].get("text/html", "")
            assert rb.FALLBACK_CAPTION in "".join(fallback), (
                f"{path.name}: the explorer output has no static fallback")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_saved_widget_state_is_complete_json(path):
    """Every stored widget view has its model saved (a dangling view renders as
    an error in JupyterLab), and the state has the keys viewers require."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    widgets = nb.get("metadata", {}).get("widgets")
    views = [o for c in _code(nb) for o in _widget_outputs(c)]
    if widgets is None:
        assert not views, f"{path.name}: widget outputs without saved widget state"
        return
    saved = widgets[rb.WIDGET_STATE]
    assert saved["version_major"] == 2 and isinstance(saved["state"], dict)
    for out in views:
        assert out["data"][rb.WIDGET_VIEW]["model_id"] in saved["state"]


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
    assert "<b>dc/da = 4.0</b>" in html and "<i>step 0</i>" in html
    assert "elsewhere" not in html
    assert rb.fallback_html(state, "slider") is None  # nothing static drawn


def test_fallbacks_go_only_to_cells_nbval_ignores():
    state = {"out": _model("OutputModel", outputs=[
        {"output_type": "display_data", "data": {"text/html": "<b>first</b>"}}])}
    view = {"output_type": "display_data",
            "data": {rb.WIDGET_VIEW: {"model_id": "out", "version_major": 2,
                                      "version_minor": 0}, "text/plain": "Output()"}}
    nb = {"metadata": {"widgets": {rb.WIDGET_STATE: {"state": state, "version_major": 2,
                                                     "version_minor": 0}}},
          "cells": [{"cell_type": "code", "source": "# NBVAL_IGNORE_OUTPUT\nw",
                     "outputs": [json.loads(json.dumps(view))]},
                    {"cell_type": "code", "source": "w", "outputs": [json.loads(json.dumps(view))]}]}
    assert rb.add_fallbacks(nb) == 1
    assert "<b>first</b>" in nb["cells"][0]["outputs"][0]["data"]["text/html"]
    assert "text/html" not in nb["cells"][1]["outputs"][0]["data"]
