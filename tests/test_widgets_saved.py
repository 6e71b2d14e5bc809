"""The saved-model explorer (minitape/widgets/saved.py), run headless.

Setting a control's `.value` on an `interactive` runs the callback at once; its
return value lands in `.result`, which is what these tests check.
"""
import pytest

pytest.importorskip("ipywidgets")

from minitape.widgets import saved  # noqa: E402

TWO = "mt.Tensor(2.0, shape=(), dtype=float32)"
LOOKUP = "LookupError: No gradient defined for operation 'IdentityN' (op type: IdentityN)"


def controls(ui):
    return {w._kwarg: w for w in ui.kwargs_widgets}


# --- the plain computation ---------------------------------------------------------
@pytest.mark.parametrize("fresh", [False, True])
def test_saved_custom_gradient_works_everywhere(fresh):
    r = saved.saved_gradient(custom_gradients=True, fresh_process=fresh)
    assert r["saved_gradient_graphs"] == 1
    assert r["ok"] and r["printed"] == TWO and r["gradient"] == 2.0


def test_unsaved_custom_gradient_works_in_the_same_process():
    r = saved.saved_gradient(custom_gradients=False, fresh_process=False)
    assert r["saved_gradient_graphs"] == 0
    assert r["ok"] and r["printed"] == TWO  # the live registry still has the rule
    assert "still holds" in r["why"]


def test_unsaved_custom_gradient_fails_in_a_fresh_process():
    r = saved.saved_gradient(custom_gradients=False, fresh_process=True)
    assert r["saved_gradient_graphs"] == 0
    assert not r["ok"] and r["gradient"] is None
    assert r["printed"] == LOOKUP


@pytest.mark.parametrize("v", [-1.5, 0.5, 3.0])
def test_loaded_gradient_is_the_clipped_one(v):
    # upstream 1 is clipped to 0.5, then the Mul rule multiplies by 2v: v, not 2v
    r = saved.saved_gradient(custom_gradients=True, fresh_process=False, v=v)
    assert r["gradient"] == pytest.approx(v) and r["expected"] == v


def test_fresh_process_gradient_follows_v():
    r = saved.saved_gradient(custom_gradients=True, fresh_process=True, v=-2.5)
    assert r["gradient"] == pytest.approx(-2.5)
    assert r["printed"] == "mt.Tensor(-2.5, shape=(), dtype=float32)"


# --- the widget ----------------------------------------------------------------------
def test_explorer_toggles_show_the_gradient_or_the_error():
    import ipywidgets as widgets
    ui = saved.saved_gradient_explorer()
    c = controls(ui)
    assert set(c) == {"custom_gradients", "process", "v"}
    assert isinstance(c["custom_gradients"], widgets.Checkbox)
    assert isinstance(c["process"], widgets.ToggleButtons)
    assert list(c["process"].options) == ["same process", "fresh process"]

    # the default: saved with the gradient, loaded here
    if ui.result is None:  # ipywidgets 7 runs the callback when displayed, 8 at once
        ui.update()
    r = ui.result
    assert (r["custom_gradients"], r["fresh_process"]) == (True, False)
    assert r["printed"] == TWO

    c["custom_gradients"].value = False          # still fine: the live registry
    r = ui.result
    assert (r["custom_gradients"], r["fresh_process"], r["ok"]) == (False, False, True)
    assert r["saved_gradient_graphs"] == 0 and r["printed"] == TWO

    c["process"].value = "fresh process"         # now the rule is missing
    r = ui.result
    assert (r["custom_gradients"], r["fresh_process"], r["ok"]) == (False, True, False)
    assert r["printed"] == LOOKUP

    c["custom_gradients"].value = True           # the saved graph brings it along
    r = ui.result
    assert (r["custom_gradients"], r["fresh_process"], r["ok"]) == (True, True, True)
    assert r["printed"] == TWO

    c["v"].value = 1.0
    r = ui.result
    assert r["fresh_process"] and r["v"] == 1.0 and r["gradient"] == pytest.approx(1.0)


def test_explorer_html_marks_the_outcome():
    ok = saved._saved_html(saved.saved_gradient(True, False))
    bad = saved._saved_html(saved.saved_gradient(False, True))
    assert saved._GOOD in ok and "holds 1 gradient graph<" in ok
    assert saved._BAD in bad and "holds 0 gradient graphs" in bad
    assert "LookupError: No gradient defined for operation &#x27;IdentityN&#x27;" in bad
