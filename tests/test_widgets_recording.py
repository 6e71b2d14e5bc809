"""The recording explorers (minitape/widgets/recording.py), run headless.

Setting a widget's `.value` on an `interactive` runs the callback at once; its
return value lands in `.result`, which is what these tests check.
"""
import math

import pytest

pytest.importorskip("ipywidgets")

import minitape as mt  # noqa: E402
from minitape.widgets import recording  # noqa: E402


def controls(ui):
    return {w._kwarg: w for w in ui.kwargs_widgets}


# --- the plain computations ------------------------------------------------------
@pytest.mark.parametrize("uses", [2, 3, 5])
def test_counted_walk_waits_for_every_use(uses):
    tape, a, c = recording.usage_count_graph(uses)
    grad, log = recording.counted_walk(tape, c, a)
    assert float(grad) == 2.0 * uses
    assert log[-1] == ("b", float(uses))  # b's rule runs last, with every contribution
    assert float(tape.gradient(c, a)) == 2.0 * uses  # the real walk agrees


@pytest.mark.parametrize("uses", [2, 3, 5])
def test_eager_walk_loses_late_contributions(uses):
    tape, a, c = recording.usage_count_graph(uses)
    grad, log = recording.eager_walk(tape, c, a)
    assert float(grad) == 2.0  # only the first use of b ever reaches a
    assert dict(log)["b"] == 1.0
    assert [name for name, _ in log].count("b") == 1


def test_usage_count_graph_needs_two_uses():
    with pytest.raises(ValueError, match="at least 2"):
        recording.usage_count_graph(1)


def test_controlled_recording_matches_the_guide():
    full = recording.controlled_recording()
    assert (full["dz_dx"], full["dz_dy"], full["z"]) == (4.0, 6.0, 13.0)
    assert full["ops"] == ["y_sq", "x_sq", "z"]
    for kwargs in ({"pause_y": True}, {"reset_after_y": True}):
        r = recording.controlled_recording(**kwargs)
        assert (r["dz_dx"], r["dz_dy"], r["z"]) == (4.0, None, 13.0)
        assert r["ops"] == ["x_sq", "z"]
        assert r["watched"] == ["x:0"]
        assert "<table" in r["tape_html"]


def test_pausing_x_after_a_reset_leaves_an_empty_tape():
    r = recording.controlled_recording(reset_after_y=True, pause_x=True)
    assert r["ops"] == [] and r["dz_dx"] is None and r["dz_dy"] is None
    assert r["z"] == 13.0


@pytest.mark.parametrize("first,second,expected", [
    (False, False, 6.0), (True, False, 3.0), (False, True, 3.0), (True, True, None)])
def test_stop_gradient_paths(first, second, expected):
    r = recording.stop_gradient_paths(3.0, first, second)
    assert r["z"] == 9.0
    assert r["dz_dy"] == expected
    assert r["live_paths"] == 2 - first - second


def test_clipped_gradient_reproduces_the_guide():
    r = recording.clipped_gradient()  # v = 2, clip_norm = 0.5, upstream 1
    assert (r["received"], r["sent"], r["grad"]) == (1.0, 0.5, 2.0)
    assert r["op_types"] == ["Mul", "IdentityN"]


def test_clipped_gradient_without_clipping_and_with_a_negative_upstream():
    assert recording.clipped_gradient(clip_norm=2.0)["grad"] == 4.0
    r = recording.clipped_gradient(v=2.0, clip_norm=1.0, upstream=-3.0)
    assert r["sent"] == -1.0 and r["grad"] == -4.0 and r["unclipped"] == -12.0


def test_two_tapes_reproduces_the_guide():
    r = recording.two_tapes()
    assert r["tape0"] == {"ops": ["Sin", "AddV2", "Sum"], "d_x0": 1.0, "d_x1": None}
    assert r["tape1"] == {"ops": ["Sigmoid", "AddV2", "Sum"], "d_x0": None, "d_x1": 0.25}
    assert "tape0" in r["table_html"] and "tape1" in r["table_html"]


def test_two_tapes_with_one_tape_watching_everything():
    r = recording.two_tapes(0.5, 1.0, ["x0", "x1"], [])
    assert r["tape1"] == {"ops": [], "d_x0": None, "d_x1": None}
    assert math.isclose(r["tape0"]["d_x0"], math.cos(0.5), rel_tol=1e-6)
    s = 1 / (1 + math.exp(-1.0))
    assert math.isclose(r["tape0"]["d_x1"], s * (1 - s), rel_tol=1e-6)


# --- the widgets ---------------------------------------------------------------------
def test_usage_count_explorer():
    ui = recording.usage_count_explorer()
    assert ui.result["grad"] == 4.0  # built with uses=2, waiting for all uses
    c = controls(ui)
    c["uses"].value = 4
    assert ui.result["grad"] == 8.0 and ui.result["b_upstream"] == 4.0
    c["wait_for_all"].value = False
    assert ui.result["grad"] == 2.0 and ui.result["b_upstream"] == 1.0
    assert ui.result["truth"] == 8.0


def test_recording_explorer():
    ui = recording.recording_explorer()
    assert (ui.result["dz_dx"], ui.result["dz_dy"]) == (4.0, 6.0)
    c = controls(ui)
    c["pause_y"].value = True
    assert (ui.result["dz_dx"], ui.result["dz_dy"]) == (4.0, None)
    c["pause_y"].value = False
    c["reset_after_y"].value = True
    assert ui.result["dz_dy"] is None and ui.result["ops"] == ["x_sq", "z"]
    c["pause_x"].value = True
    assert ui.result["dz_dx"] is None and ui.result["ops"] == []
    c["pause_x"].value = False
    c["x"].value = -1.5
    assert ui.result["dz_dx"] == -3.0


def test_stop_gradient_explorer():
    ui = recording.stop_gradient_explorer()
    assert ui.result["dz_dy"] == 6.0
    c = controls(ui)
    c["stop_first"].value = True
    assert ui.result["dz_dy"] == 3.0
    c["y"].value = -2.0
    assert ui.result["dz_dy"] == -2.0 and ui.result["z"] == 4.0
    c["stop_second"].value = True
    assert ui.result["dz_dy"] is None


def test_clip_explorer():
    ui = recording.clip_explorer()
    assert ui.result["grad"] == 2.0
    c = controls(ui)
    c["clip_norm"].value = 2.0
    assert ui.result["grad"] == 4.0  # |upstream| = 1 is already within the clip
    c["upstream"].value = 3.0
    assert math.isclose(ui.result["grad"], 8.0, rel_tol=1e-6)  # 3 clipped to 2, times 2v
    c["v"].value = -1.0
    assert math.isclose(ui.result["grad"], -4.0, rel_tol=1e-6)


def test_two_tapes_explorer():
    ui = recording.two_tapes_explorer()
    assert ui.result["tape0"]["d_x0"] == 1.0 and ui.result["tape1"]["d_x1"] == 0.25
    c = controls(ui)
    c["tape1_x0"].value = True
    assert ui.result["tape1"]["d_x0"] == 1.0
    assert ui.result["tape1"]["ops"] == ["Sin", "Sigmoid", "AddV2", "Sum"]
    c["tape0_x0"].value = False
    assert ui.result["tape0"]["ops"] == [] and ui.result["tape0"]["d_x0"] is None
    c["x1"].value = 2.0
    s = 1 / (1 + math.exp(-2.0))
    assert math.isclose(ui.result["tape1"]["d_x1"], s * (1 - s), rel_tol=1e-6)


def test_explorers_leave_no_tape_recording():
    # The explorers open and close their own tapes: none is left recording.
    recording.two_tapes_explorer()
    recording.recording_explorer()
    with mt.GradientTape() as tape:
        x = mt.constant(1.0)
        tape.watch(x)
        y = x * x
    assert float(tape.gradient(y, x)) == 2.0
    from minitape.core.context import state
    assert state.tapes == []


def test_explorer_html_names_the_numbers_it_teaches():
    walk = recording._walk_html(recording._walk_result(3, wait_for_all=False))
    assert "dc/da" in walk and "2.0" in walk and "true value 6.0" in walk
    rec = recording._recording_html(recording.controlled_recording(pause_y=True), 2.0, 3.0)
    assert "dz/dy" in rec and "None" in rec and "<table" in rec
    sg = recording._stop_gradient_html(recording.stop_gradient_paths(3.0, True, False), 3.0)
    assert "one path cut" in sg and "3.0000" in sg
    clip = recording._clip_html(recording.clipped_gradient(), 0.5)
    assert "clipped to norm 0.50" in clip and "2.0000" in clip
    two = recording._two_tapes_html(recording.two_tapes())
    assert "0.2500" in two and "Sigmoid" in two
