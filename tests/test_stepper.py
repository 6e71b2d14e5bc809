"""The backward stepper: the engine's own backward walk, one rule at a time,
tested headless (no browser: set the slider's value, read the HTML)."""
import numpy as np
import pytest

import minitape as mt
from minitape import nest
from minitape import tape as tape_module
from minitape.widgets.stepper import StepperState, backward_stepper


def _np(t):
    return None if t is None else np.asarray(t.numpy())


def _example():
    x = mt.Variable(3.0, name="x")
    a = mt.constant(2.0)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(a)
        y = x * x + mt.sin(a) * x
    return tape, x, a, y


@pytest.fixture
def spy(monkeypatch):
    """Record every step the engine's BackwardPass.steps yields, and every pull."""
    seen = {"steps": [], "pulls": 0}
    original = tape_module.BackwardPass.steps

    def steps(self):
        for step in original(self):
            seen["pulls"] += 1
            seen["steps"].append(step)
            yield step

    monkeypatch.setattr(tape_module.BackwardPass, "steps", steps)
    return seen


def test_final_gradients_equal_tape_gradient():
    tape, x, a, y = _example()
    state = StepperState(tape, y, [x, a]).run_all()
    expected = tape.gradient(y, [x, a])
    got = state.gradients()
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(_np(g), _np(e))
    assert float(got[0]) == pytest.approx(2 * 3.0 + np.sin(2.0))
    # the final view lists them as final
    final = state.view(len(state.steps))
    rows = {name: (grad, status) for name, _, grad, status, _ in final["gradients"]}
    assert rows["x:0"] == ("6.909", "source: final")


@pytest.mark.parametrize("case", ["dense", "fanout", "custom", "dict", "matrix"])
def test_final_gradients_equal_tape_gradient_on_more_tapes(case):
    if case == "dense":
        mt.random.set_seed(1)
        layer = mt.layers.Dense(3, activation=mt.nn.sigmoid)
        x = mt.constant([[1.0, -2.0], [0.5, 0.25]])
        with mt.GradientTape(persistent=True) as tape:
            target = mt.reduce_sum(layer(x) ** 2)
        sources = layer.trainable_variables
    elif case == "fanout":
        x = mt.constant([1.0, 2.0])
        with mt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x
            target = mt.reduce_sum(y + mt.sin(y) + y * x)
        sources = x
    elif case == "custom":
        @mt.custom_gradient
        def clip(v):
            return mt.identity(v), lambda dy: mt.clip_by_value(dy, -0.5, 0.5)

        x = mt.constant(3.0)
        with mt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            target = clip(x * x) * 4.0
        sources = [x]
    elif case == "dict":
        w = mt.Variable([1.0, 2.0], name="w")
        b = mt.constant(0.5)
        with mt.GradientTape(persistent=True) as tape:
            tape.watch(b)
            target = mt.reduce_mean(w * b + b)
        sources = {"w": w, "b": b}
    else:
        m = mt.constant([[1.0, 2.0], [3.0, 4.0]])
        with mt.GradientTape(persistent=True) as tape:
            tape.watch(m)
            target = mt.reduce_sum(mt.matmul(m, m))
        sources = m
    got = nest.flatten(StepperState(tape, target, sources).gradients())
    expected = nest.flatten(tape.gradient(target, sources))
    assert len(got) == len(expected) > 0
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(_np(g), _np(e))


def test_steps_are_the_engines_own_iterator(spy):
    tape, x, a, y = _example()
    state = StepperState(tape, y, [x, a]).run_all()
    assert [s[0] for s in state.steps] == [s[0] for s in spy["steps"]]
    for mine, theirs in zip(state.steps, spy["steps"]):  # the very same tensors
        assert all(g is h for g, h in zip(mine[1], theirs[1]))
        assert all(g is h for g, h in zip(mine[2], theirs[2]))
    # tape.gradient runs the very same generator
    spy["steps"].clear()
    tape.gradient(y, [x, a])
    assert [s[0] for s in spy["steps"]] == [s[0] for s in state.steps]


def test_steps_are_pulled_lazily_and_replayed_from_the_list(spy):
    tape, x, a, y = _example()
    state = StepperState(tape, y, [x, a])
    assert spy["pulls"] == 0
    state.view(1)  # knowing the state after step 1 needs step 2 to be pulled
    assert spy["pulls"] == 2 and not state.finished
    state.run_all()
    pulls = spy["pulls"]
    for k in (4, 0, 3, 1, 2, 4):
        state.html(k)
    assert spy["pulls"] == pulls == len(state.steps) == 4


def test_the_stepper_does_not_use_up_a_one_shot_tape():
    x = mt.constant(2.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x ** 3
    state = StepperState(tape, y, x).run_all()
    assert float(state.gradients()) == 12.0
    assert float(tape.gradient(y, x)) == 12.0  # the tape's one use is still there
    with pytest.raises(RuntimeError, match="only be used to compute one set"):
        tape.gradient(y, x)


def test_each_step_shows_the_op_its_upstream_what_it_sent_and_the_sums():
    tape, x, a, y = _example()
    state = StepperState(tape, y, {"x": x, "a": a})
    v0 = state.view(0)
    assert v0["op"] is None and v0["upstream"] == []
    assert [(n, g) for n, _, g, _, _ in v0["gradients"]] == [("AddV2", "1.0")]
    assert state.title(0).startswith("Step 0")

    v1 = state.view(1)  # AddV2 ran first: it passes 1 to both of its inputs
    assert (v1["op"], v1["op_type"]) == ("AddV2", "AddV2")
    assert v1["upstream"] == [("AddV2", "()", "1.0")]
    assert v1["sent"] == [("Mul", "()", "1.0", ""), ("Mul_1", "()", "1.0", "")]

    v2 = state.view(2)  # Mul_1 = sin(a) * x
    assert v2["op"] == "Mul_1"
    assert v2["sent"] == [("Sin", "()", "3.0", ""), ("x:0", "()", "0.9093", "")]
    changed = {n for n, _, _, _, c in v2["gradients"] if c}
    assert changed == {"x:0", "Sin"}
    rows = {n: (g, st) for n, _, g, st, _ in v2["gradients"]}
    assert rows["x:0"] == ("0.9093", "source")
    assert rows["AddV2"][1] == "complete: passed to the rule of AddV2"
    assert rows["Mul"] == ("1.0", "complete: Mul's rule can run")
    # the watched tensor is named by its key in the sources dict
    assert state.view(3)["sent"] == [("a", "()", "-1.248", "")]
    assert "x:0 (): 6.909  [source: final]" in state.text(4)
    assert state.title(4) == "Step 4 of 4: the gradient rule of Mul ran"


def test_a_gradient_still_waiting_for_contributions():
    x = mt.constant(1.0)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 2.0
        z = mt.sin(y) + mt.exp(y)  # y feeds two ops
    state = StepperState(tape, z, x)
    if state._pending[0] is None:
        pytest.skip("this engine does not expose BackwardPass.pending")
    statuses = {n: st for n, _, _, st, _ in state.view(2)["gradients"]}
    assert statuses["Mul"] == "partial: waiting for 1 more contribution"
    statuses = {n: st for n, _, _, st, _ in state.view(3)["gradients"]}
    assert statuses["Mul"] == "complete: Mul's rule can run"


def test_constants_and_inputs_that_lead_to_no_source():
    x = mt.constant(2.0)
    c = mt.constant(5.0)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch([x, c])
        y = x * c * 3.0
    state = StepperState(tape, y, x)
    sent = state.view(1)["sent"]
    assert sent[1] == ("const 3.0", "()", "-", "not needed: a constant")
    sent = state.view(2)["sent"]
    assert sent[1] == ("watched_1", "()", "-", "not needed: leads to no source")
    assert float(state.gradients()) == 15.0


def test_a_rule_that_raises_is_shown_as_the_last_step():
    @mt.primitive("StepperNoGrad")
    def no_grad(v):
        return v * 2.0

    x = mt.constant(1.0)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = mt.sin(no_grad(x))
    state = StepperState(tape, y, x).run_all()
    assert isinstance(state.error, LookupError)
    assert len(state.steps) == 1  # Sin ran, then StepperNoGrad had no rule
    last = state.view(1)
    assert last["error"].startswith("LookupError: No gradient defined for operation")
    assert "the next rule raised</b> LookupError" in state.html(1)
    with pytest.raises(LookupError, match="StepperNoGrad"):
        state.gradients()


def test_html_is_deterministic_and_escaped():
    def html():
        tape, x, a, y = _example()
        return [StepperState(tape, y, [x, a], names={"<x>": x}).html(k) for k in range(5)]

    first = html()
    assert first == html()
    assert "&lt;x&gt;" in first[4] and "<x>" not in first[4]
    assert all("0x" not in h and " id=" not in h for h in first)


# --- the widget, headless -------------------------------------------------------
def test_widget_slider_shows_each_step():
    tape, x, a, y = _example()
    w = backward_stepper(tape, y, [x, a])
    state = w.state
    assert (w.slider.min, w.slider.max, w.slider.value) == (0, 4, 0)
    assert w.view.value == state.html(0)
    for k in (3, 1, 4, 0, 2):
        w.slider.value = k
        assert w.view.value == state.html(k)
    w.slider.value = w.slider.max
    assert "Step 4 of 4" in w.view.value and "6.909" in w.view.value


def test_widget_buttons_step_and_stop_at_the_ends():
    tape, x, a, y = _example()
    w = backward_stepper(tape, y, [x, a])
    assert w.back_button.disabled and not w.next_button.disabled
    w.back_button.click()
    assert w.slider.value == 0
    for k in range(1, 5):
        w.next_button.click()
        assert w.slider.value == k
        assert w.view.value == w.state.html(k)
    assert w.next_button.disabled
    w.next_button.click()
    assert w.slider.value == 4
    w.back_button.click()
    assert w.slider.value == 3 and not w.next_button.disabled


def test_widget_final_gradients_equal_tape_gradient():
    tape, x, a, y = _example()
    w = backward_stepper(tape, y, [x, a])
    w.slider.value = w.slider.max
    got = w.state.gradients()
    expected = tape.gradient(y, [x, a])
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(_np(g), _np(e))


def test_widget_with_graph_draws_each_step(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import minitape.inspection.viz

    drawn = []
    original = minitape.inspection.viz.draw_tape

    def draw_tape(*args, **kwargs):
        ax = original(*args, **kwargs)
        drawn.append((kwargs.get("step"), [e.grad for e in ax.minitape_layout.edges]))
        return ax

    monkeypatch.setattr(minitape.inspection.viz, "draw_tape", draw_tape)
    tape, x, a, y = _example()
    w = backward_stepper(tape, y, [x, a], graph=True)
    w.slider.value = 4
    assert [d[0] for d in drawn] == [0, 4]
    assert drawn[0][1].count(None) == len(drawn[0][1]) - 1  # step 0: only the target
    assert None not in drawn[1][1]  # after the last step every edge has its gradient
    import matplotlib.pyplot as plt
    assert plt.get_fignums() == []  # each drawing is closed after showing it


def test_widget_for_a_target_that_does_not_depend_on_the_sources():
    x = mt.constant(1.0)
    u = mt.constant(2.0)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch([x, u])
        y = u * u
    w = backward_stepper(tape, y, x)
    assert w.slider.max == 0 and w.next_button.disabled and w.back_button.disabled
    assert w.state.gradients() is None
