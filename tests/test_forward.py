"""Forward mode: JVP rules, ForwardAccumulator, forward-mode Jacobians and the
automatic choice of direction in `GradientTape.jacobian`.

The op table is the one of test_ops_gradients.py (every op of the spec, as
`case(id, fn, *float64 inputs)`), so a new op there is checked here too:
- its JVP against central differences along a random direction (float64);
- its forward-mode Jacobian against its reverse-mode Jacobian;
- Hessian-vector products through it, three ways: forward-over-reverse,
  reverse-over-forward and reverse-over-reverse (nested tapes).
"""
import numpy as np
import pytest

import minitape as mt
import minitape.tape_jacobians as jacobians_module
from minitape.autodiff import ForwardAccumulator
from minitape.widgets.forward import count_numbers
from test_ops_gradients import ALL_CASES, BINARY, SHAPES

ZERO = mt.UnconnectedGradients.ZERO


def _directions(args, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(np.shape(a)) for a in args]


def _finite_difference_jvp(fn, args, directions, eps):
    """(f(x + eps v) - f(x - eps v)) / (2 eps), every input moved at once."""
    def at(sign):
        xs = [mt.constant(a + sign * eps * v) for a, v in zip(args, directions)]
        return np.asarray(fn(*xs), dtype=np.float64)
    return (at(1) - at(-1)) / (2 * eps)


def _tolerances(check_kwargs):
    """The table's looser tolerances for the float32 cast cases, else tight ones."""
    return (check_kwargs.get("eps", 1e-6), 10 * check_kwargs.get("rtol", 1e-6),
            10 * check_kwargs.get("atol", 1e-7))


# --- every op: JVP, forward Jacobian, Hessian-vector products -------------------------

@pytest.mark.parametrize("fn, args, check_kwargs", ALL_CASES)
def test_jvp_matches_finite_differences(fn, args, check_kwargs):
    eps, rtol, atol = _tolerances(check_kwargs)
    vs = _directions(args)
    xs = [mt.constant(a) for a in args]
    with ForwardAccumulator(xs, [mt.constant(v) for v in vs]) as acc:
        y = fn(*xs)
    jvp = acc.jvp(y, unconnected_gradients=ZERO)
    assert jvp.shape == y.shape and jvp.dtype == y.dtype
    expected = _finite_difference_jvp(fn, args, vs, eps)
    np.testing.assert_allclose(jvp.numpy(), expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("fn, args, check_kwargs", ALL_CASES)
def test_forward_jacobian_equals_reverse_jacobian(fn, args, check_kwargs):
    xs = [mt.constant(a) for a in args]
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(xs)
        y = fn(*xs)
    reverse = tape.jacobian(y, xs, unconnected_gradients=ZERO,
                            experimental_direction="reverse")
    forward = tape.jacobian(y, xs, unconnected_gradients=ZERO,
                            experimental_direction="forward")
    loop = tape.jacobian(y, xs, unconnected_gradients=ZERO,
                         experimental_direction="forward", experimental_use_pfor=False)
    # float32 inside (the cast cases) rounds differently in the two directions
    rtol = 1e-6 if "rtol" in check_kwargs else 1e-10
    for x, r, f, f_loop in zip(xs, reverse, forward, loop):
        assert f.shape == y.shape + x.shape
        np.testing.assert_allclose(f.numpy(), r.numpy(), rtol=rtol, atol=1e-12)
        np.testing.assert_allclose(f_loop.numpy(), r.numpy(), rtol=rtol, atol=1e-12)


def _loss(fn, xs):
    """A scalar of fn's output whose Hessian is not zero even for linear ops."""
    y = fn(*xs)
    w = mt.constant(np.linspace(0.5, 1.5, y.size).reshape(y.shape).astype(y.dtype))
    return mt.reduce_sum(w * mt.sin(y))


def _dot(gs, vs):
    total = mt.reduce_sum(gs[0] * vs[0])
    for g, v in zip(gs[1:], vs[1:]):
        total = total + mt.reduce_sum(g * v)
    return total


@pytest.mark.parametrize("fn, args, check_kwargs", ALL_CASES)
def test_hessian_vector_products_three_ways(fn, args, check_kwargs):
    """H v by forward-over-reverse (the JVP of the gradient: runs the JVP rules
    of every op that a gradient rule uses), reverse-over-forward (the gradient
    of the JVP: differentiates the JVP rules) and nested tapes."""
    xs = [mt.constant(a) for a in args]
    vs = [mt.constant(v) for v in _directions(args, seed=1)]

    with ForwardAccumulator(xs, vs) as acc:
        with mt.GradientTape() as tape:
            tape.watch(xs)
            loss = _loss(fn, xs)
        g = tape.gradient(loss, xs, unconnected_gradients=ZERO)
    forward_over_reverse = acc.jvp(g, unconnected_gradients=ZERO)

    with mt.GradientTape() as outer:
        outer.watch(xs)
        with ForwardAccumulator(xs, vs) as acc:
            loss = _loss(fn, xs)
        jvp = acc.jvp(loss)
    reverse_over_forward = outer.gradient(jvp, xs, unconnected_gradients=ZERO)

    with mt.GradientTape() as outer:
        outer.watch(xs)
        with mt.GradientTape() as inner:
            inner.watch(xs)
            loss = _loss(fn, xs)
        gv = _dot(inner.gradient(loss, xs, unconnected_gradients=ZERO), vs)
    nested_tapes = outer.gradient(gv, xs, unconnected_gradients=ZERO)

    assert max(np.abs(h.numpy()).max() for h in nested_tapes) > 0
    rtol = 1e-6 if "rtol" in check_kwargs else 1e-9  # float32 inside: the cast cases
    for a, b, c in zip(forward_over_reverse, reverse_over_forward, nested_tapes):
        np.testing.assert_allclose(a.numpy(), c.numpy(), rtol=rtol, atol=1e-11)
        np.testing.assert_allclose(b.numpy(), c.numpy(), rtol=rtol, atol=1e-11)


@pytest.mark.parametrize("x_shape, y_shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_broadcasting_binary_ops_forward(name, x_shape, y_shape):
    """Batched tangents of inputs of different ranks are lifted before they
    broadcast: a forward Jacobian through every broadcasting pattern."""
    fn, draw_x, draw_y = BINARY[name]
    rng = np.random.default_rng(7)
    args = [draw_x(rng, x_shape), draw_y(rng, y_shape)]
    xs = [mt.constant(a) for a in args]
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(xs)
        z = fn(*xs)
    forward = tape.jacobian(z, xs, unconnected_gradients=ZERO,
                            experimental_direction="forward")
    reverse = tape.jacobian(z, xs, unconnected_gradients=ZERO,
                            experimental_direction="reverse")
    for f, r in zip(forward, reverse):
        np.testing.assert_allclose(f.numpy(), r.numpy(), rtol=1e-12, atol=1e-14)
    vs = _directions(args, seed=3)
    with ForwardAccumulator(xs, vs) as acc:
        z = fn(*xs)
    np.testing.assert_allclose(acc.jvp(z).numpy(),
                               _finite_difference_jvp(fn, args, vs, 1e-6),
                               rtol=1e-6, atol=1e-8)


# --- the Hessian-vector product of a small model ------------------------------------

def _model_loss(w, x):
    h = mt.tanh(x @ w[:, :3])
    return mt.reduce_mean(mt.nn.softplus(h @ w[:3, 3:]) ** 2)


def test_hvp_forward_over_reverse_equals_nested_tapes_equals_h_times_v():
    rng = np.random.default_rng(0)
    w = mt.Variable(rng.standard_normal((4, 5)))
    x = mt.constant(rng.standard_normal((6, 4)))
    v = mt.constant(rng.standard_normal((4, 5)))
    with ForwardAccumulator(w, v) as acc:
        with mt.GradientTape() as tape:
            loss = _model_loss(w, x)
        g = tape.gradient(loss, w)
    hvp_forward = acc.jvp(g)

    with mt.GradientTape() as outer:
        with mt.GradientTape() as inner:
            loss = _model_loss(w, x)
        gv = mt.reduce_sum(inner.gradient(loss, w) * v)
    hvp_tapes = outer.gradient(gv, w)

    with mt.GradientTape() as outer:
        with mt.GradientTape() as inner:
            loss = _model_loss(w, x)
        g = inner.gradient(loss, w)
    h = outer.jacobian(g, w).numpy().reshape(20, 20)
    h_v = (h @ v.numpy().reshape(20)).reshape(4, 5)

    np.testing.assert_allclose(hvp_forward.numpy(), h_v, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hvp_tapes.numpy(), h_v, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h, h.T, atol=1e-12)


def test_nested_accumulators_give_second_directional_derivatives():
    x = mt.constant(np.float64(0.7))
    with ForwardAccumulator(x, 1.0) as outer:
        with ForwardAccumulator(x, 1.0) as inner:
            y = mt.sin(x) * x
        dy = inner.jvp(y)
    d2y = outer.jvp(dy)
    xv = 0.7
    np.testing.assert_allclose(float(dy), np.cos(xv) * xv + np.sin(xv), rtol=1e-12)
    np.testing.assert_allclose(float(d2y), -np.sin(xv) * xv + 2 * np.cos(xv), rtol=1e-12)


def test_inner_accumulator_does_not_record_the_outer_ones_rules():
    x = mt.constant([0.3, 0.5], dtype=mt.float64)
    with ForwardAccumulator(x, [1.0, 0.0]) as outer:
        with ForwardAccumulator(x, [0.0, 1.0]) as inner:
            y = mt.exp(x)
        t_outer = outer.jvp(y)
    # The outer tangent is computed by the outer accumulator's rule, which ran
    # with the inner one paused: the inner one knows nothing about it.
    assert inner.jvp(t_outer) is None
    np.testing.assert_allclose(t_outer.numpy(), [np.exp(0.3), 0.0])


# --- ForwardAccumulator: TensorFlow's behaviour ----------------------------------------

@pytest.mark.parametrize("accumulator_made_first", [True, False])
def test_a_tape_inside_an_accumulator_does_not_record_the_tangents(accumulator_made_first):
    # TensorFlow's forwardprop_test (testForwardOverBackwardMemoryEfficiency and
    # testBackwardOverForward): what counts is nesting, not creation order. A
    # tape inside the accumulator gives None for the gradient of a tangent
    # (minitape gave -0.054); a tape around it gives -0.1 * cos(1).
    for accumulator_inside in (False, True):
        c = mt.constant(1.0)
        if accumulator_made_first:
            acc, tape = ForwardAccumulator(c, 0.1), mt.GradientTape()
        else:
            tape, acc = mt.GradientTape(), ForwardAccumulator(c, 0.1)
        outer, inner = (tape, acc) if accumulator_inside else (acc, tape)
        with outer:
            with inner:
                tape.watch(c)
                tangent = acc.jvp(mt.cos(c))
        np.testing.assert_allclose(float(tangent), -0.1 * np.sin(1.0), rtol=1e-6)
        grad = tape.gradient(tangent, c)
        if accumulator_inside:
            np.testing.assert_allclose(float(grad), -0.1 * np.cos(1.0), rtol=1e-6)
        else:
            assert grad is None



def test_accumulator_with_variables_nests_and_unconnected():
    v = mt.Variable([1.0, 2.0])
    c = mt.constant([3.0, 4.0])
    with ForwardAccumulator(primals=[v], tangents=[mt.constant([1.0, 0.0])]) as acc:
        y = mt.reduce_sum(v ** 3.0)
        z = c * 2.0
    np.testing.assert_allclose(acc.jvp(y).numpy(), 3.0)
    assert acc.jvp(z) is None
    np.testing.assert_allclose(acc.jvp(z, unconnected_gradients=ZERO).numpy(), [0.0, 0.0])
    # A nest of targets gets a nest of tangents, and a primal its own tangent.
    out = acc.jvp({"y": y, "v": v})
    assert set(out) == {"y", "v"}
    np.testing.assert_allclose(out["v"].numpy(), [1.0, 0.0])


def test_ops_outside_the_block_are_not_seen():
    x = mt.constant([1.0, 2.0])
    acc = ForwardAccumulator(x, mt.constant([1.0, 1.0]))
    y = x * 2.0
    with acc:
        z = x * 3.0
    w = x * 4.0
    assert acc.jvp(y) is None and acc.jvp(w) is None
    np.testing.assert_allclose(acc.jvp(z).numpy(), [3.0, 3.0])


def test_accumulator_checks_its_arguments():
    x = mt.constant([1.0, 2.0])
    with pytest.raises(ValueError, match="tangent 0 has shape"):
        ForwardAccumulator(x, mt.constant([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="1 primal"):
        ForwardAccumulator([x], [x, x])
    with pytest.raises(ValueError, match="structure"):
        ForwardAccumulator({"a": x}, {"b": x})
    with pytest.raises(TypeError, match="dtype int32"):
        ForwardAccumulator(mt.constant([1, 2]), [1, 1])
    with pytest.raises(TypeError, match="primal 0 must be a tensor"):
        ForwardAccumulator([1.0], [1.0])
    acc = ForwardAccumulator(x, x)
    with acc:
        with pytest.raises(ValueError, match="Accumulator is already recording"):
            acc.__enter__()  # TensorFlow's ValueError and words (minitape: RuntimeError)


def test_stop_gradient_stops_tangents():
    x = mt.constant(2.0)
    with ForwardAccumulator(x, 1.0) as acc:
        y = mt.stop_gradient(x * x) + x
    np.testing.assert_allclose(float(acc.jvp(y)), 1.0)


# --- ops without JVP rules ---------------------------------------------------------

@mt.primitive("ForwardTestCube")
def _cube(x):
    return x ** 3


@mt.RegisterGradient("ForwardTestCube")
def _cube_grad(op, grad):
    return grad * 3.0 * op.inputs[0] * op.inputs[0]


@mt.primitive("ForwardTestNoGradient")
def _no_gradient(x):
    return x * 2


@mt.primitive("ForwardTestRound")
def _round(x):
    return np.round(x)


mt.NotDifferentiable("ForwardTestRound")


def test_an_op_with_only_a_gradient_uses_it_through_double_backward():
    x = mt.constant([0.5, -1.5], dtype=mt.float64)
    with ForwardAccumulator(x, [1.0, 2.0]) as acc:
        y = _cube(x)
    np.testing.assert_allclose(acc.jvp(y).numpy(), 3 * x.numpy() ** 2 * [1.0, 2.0])


def test_an_op_with_no_rule_at_all_raises_lookup_error_naming_it():
    x = mt.constant([0.5, -1.5])
    with ForwardAccumulator(x, [1.0, 2.0]):
        with pytest.raises(LookupError, match="ForwardTestNoGradient"):
            _no_gradient(x)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.concat([_no_gradient(x)] * 3, 0)
    with pytest.raises(LookupError, match="ForwardTestNoGradient"):
        tape.jacobian(y, x)


def test_a_not_differentiable_op_has_no_tangent():
    x = mt.constant([0.4, 1.6])
    with ForwardAccumulator(x, [1.0, 1.0]) as acc:
        y = _round(x)
    assert acc.jvp(y) is None


def test_a_registered_jvp_rule_that_is_not_batch_safe_runs_per_direction():
    @mt.primitive("ForwardTestSquarePlain")
    def square(x):
        return x * x

    @mt.RegisterGradient("ForwardTestSquarePlain")
    def _grad(op, grad):
        return grad * 2.0 * op.inputs[0]

    seen = []

    @mt.autodiff.RegisterJVP("ForwardTestSquarePlain")
    def _jvp(op, t):
        seen.append(t.shape)
        return t * 2.0 * op.inputs[0]

    x = mt.constant([1.0, 2.0, 3.0], dtype=mt.float64)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.concat([square(x)] * 3, 0)
    j = tape.jacobian(y, x, experimental_direction="forward")
    np.testing.assert_allclose(j.numpy(), np.tile(np.diag(2 * x.numpy()), (3, 1)))
    assert seen == [(3,)] * 3  # one plain tangent per direction, no batch axis


def test_a_jvp_rule_with_a_wrong_shape_is_reported_with_the_op():
    @mt.primitive("ForwardTestBadJVP")
    def ident(x):
        return x + 0

    @mt.autodiff.RegisterJVP("ForwardTestBadJVP", batch_safe=True)
    def _jvp(op, t):
        return mt.reduce_sum(t)

    x = mt.constant([1.0, 2.0])
    with ForwardAccumulator(x, [1.0, 1.0]):
        with pytest.raises(ValueError, match="ForwardTestBadJVP.*needs shape"):
            ident(x)


def test_custom_gradient_in_forward_mode_follows_its_forward_ops():
    @mt.custom_gradient
    def scale_gradient(x):
        def grad_fn(dy):
            return dy * 0.1
        return mt.identity(x), grad_fn

    x = mt.constant([3.0, 4.0])
    with ForwardAccumulator(x, [3.0, 4.0]) as acc:
        y = scale_gradient(x)
    # As in TensorFlow 2.21: the JVP follows the function's own ops (the
    # identity), not the custom gradient (which would give [0.3, 0.4]).
    np.testing.assert_allclose(acc.jvp(y).numpy(), [3.0, 4.0], rtol=1e-6)


def test_custom_gradient_jvp_matches_tensorflow():
    # TensorFlow 2.21: x**2 with a rule of 7*dy has the JVP 6 at x = 3 (its
    # forward ops); an output its ops do not move (a constant, a round) takes
    # the custom rule's JVP: 7, and grad_pass_through(round) gives 1.
    @mt.custom_gradient
    def square(x):
        return x * x, lambda dy: 7 * dy

    @mt.custom_gradient
    def constant_out(x):
        return mt.constant(5.0), lambda dy: 7 * dy

    x = mt.constant(3.0)
    with ForwardAccumulator(x, mt.constant(1.0)) as acc:
        a, b = square(x), constant_out(x)
        c = mt.grad_pass_through(mt.round)(x)
        d = mt.grad_pass_through(lambda v: v * 3.0)(x)
    assert [float(acc.jvp(t)) for t in (a, b, c, d)] == [6.0, 7.0, 1.0, 3.0]


# --- GradientTape.jacobian: direction, chunks -------------------------------------------

def _spy(monkeypatch):
    calls = {"forward": 0, "reverse": 0}
    forward, reverse = jacobians_module._forward_sweep, mt.GradientTape._backward

    def spy_forward(tape, *a):
        calls["forward"] += 1
        return forward(tape, *a)

    def spy_reverse(self, *a):
        calls["reverse"] += 1
        return reverse(self, *a)

    monkeypatch.setattr(jacobians_module, "_forward_sweep", spy_forward)
    monkeypatch.setattr(mt.GradientTape, "_backward", spy_reverse)
    return calls


def _tanh_layer(n_in, n_out, seed=0):
    rng = np.random.default_rng(seed)
    w = mt.constant(rng.standard_normal((n_out, n_in)) / np.sqrt(n_in))
    x = mt.constant(rng.standard_normal((n_in, 1)))
    tape = mt.GradientTape(persistent=True)
    with tape:
        tape.watch(x)
        y = mt.tanh(w @ x)
    return tape, x, y, w


# tanh(W @ x) with x of shape (n, 1) and m outputs: a forward sweep computes 2m
# numbers (MatMul's and Tanh's output tangents), a backward walk n + m (the
# gradients of x and of W @ x). Assembling the (m, 1, n, 1) Jacobian, forward
# mode transposes and reshapes its (n, m, 1) columns (2nm numbers), reverse
# mode reshapes its (m, n, 1) rows (nm). Forward computes 4nm, reverse
# m(2n + m) (count_numbers agrees, plus 2m for tanh's 1 - y*y in both):
# forward is cheaper exactly when 2n < m; on a tie, reverse.
@pytest.mark.parametrize("n_in, n_out, expected", [
    (4, 64, "forward"),
    (4, 9, "forward"),
    (4, 8, "reverse"),    # a tie: 144 numbers each way
    (64, 4, "reverse"),
    (5, 5, "reverse"),    # a tie
])
def test_auto_direction_follows_the_sizes(monkeypatch, n_in, n_out, expected):
    tape, x, y, w = _tanh_layer(n_in, n_out)
    calls = _spy(monkeypatch)
    j = tape.jacobian(y, x)
    assert calls[expected] == 1 and sum(calls.values()) == 1
    d = 1 - np.tanh(w.numpy() @ x.numpy()) ** 2
    np.testing.assert_allclose(j.numpy().reshape(n_out, n_in), d * w.numpy(), rtol=1e-12)


@pytest.mark.parametrize("direction", ["forward", "reverse"])
def test_direction_can_be_forced(monkeypatch, direction):
    tape, x, y, _ = _tanh_layer(3, 30)
    calls = _spy(monkeypatch)
    tape.jacobian(y, x, experimental_direction=direction)
    assert calls[direction] == 1 and sum(calls.values()) == 1


def test_a_bad_direction_is_an_error():
    tape, x, y, _ = _tanh_layer(3, 30)
    with pytest.raises(ValueError, match="experimental_direction"):
        tape.jacobian(y, x, experimental_direction="sideways")


def test_several_sources_sum_their_sizes(monkeypatch):
    rng = np.random.default_rng(2)
    a, b = mt.constant(rng.standard_normal(3)), mt.constant(rng.standard_normal(4))
    with mt.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y = mt.sin(mt.reshape(a, (3, 1)) * mt.reshape(b, (1, 4)))  # 12 outputs
    # forward: 3 sweeps of 3 + 12 + 12 numbers (Reshape, Mul, Sin) and 4 of
    # 4 + 12 + 12 = 193, plus the transposes of the (3, 3, 4) and (4, 3, 4)
    # columns, 84; reverse: 12 walks of 3 + 4 + 7 + 12 = 312, plus the
    # reshapes of the (12, 3) and (12, 4) rows to (3, 4, 3) and (3, 4, 4), 84
    assert jacobians_module.direction_costs(tape, y, [a, b]) == (193 + 84, 312 + 84)
    forward, reverse = (count_numbers(lambda: tape.jacobian(y, [a, b],
                                                            experimental_direction=d))[1]
                        for d in ("forward", "reverse"))
    assert forward < reverse  # 301 < 780: the rules' internals (Mul's unbroadcasting sums) add more
    calls = _spy(monkeypatch)
    ja, jb = tape.jacobian(y, [a, b])
    assert calls == {"forward": 2, "reverse": 0}  # one sweep per source
    z = mt.concat([mt.reshape(y, [-1])] * 2, 0)  # not recorded: the tape is closed
    assert tape.jacobian(z, [a, b])[0] is None
    with tape:
        z = mt.concat([mt.reshape(y, [-1])] * 2, 0)  # 24 outputs > 14: forward
    calls.update(forward=0, reverse=0)
    za, zb = tape.jacobian(z, [a, b])
    assert calls == {"forward": 2, "reverse": 0}  # one sweep per source
    np.testing.assert_allclose(za.numpy()[:12].reshape(3, 4, 3), ja.numpy(), rtol=1e-12)
    np.testing.assert_allclose(zb.numpy()[12:].reshape(3, 4, 4), jb.numpy(), rtol=1e-12)


@pytest.mark.parametrize("direction", ["forward", "reverse"])
@pytest.mark.parametrize("chunk", [1, 3, 7, 64])
def test_chunks_give_the_same_jacobian(monkeypatch, direction, chunk):
    tape, x, y, _ = _tanh_layer(7, 20)
    whole = tape.jacobian(y, x, experimental_direction=direction)
    calls = _spy(monkeypatch)
    parts = tape.jacobian(y, x, experimental_direction=direction, parallel_iterations=chunk)
    n = 7 if direction == "forward" else 20
    assert calls[direction] == -(-n // chunk)  # ceil(n / chunk) passes
    np.testing.assert_allclose(parts.numpy(), whole.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("direction", ["forward", "reverse"])
def test_default_chunks_keep_batched_tensors_bounded(monkeypatch, direction):
    tape, x, y, _ = _tanh_layer(7, 20)
    whole = tape.jacobian(y, x, experimental_direction=direction)
    # The largest recorded tensor has 20 numbers: at most 2 rows per chunk.
    monkeypatch.setattr(jacobians_module, "_CHUNK_ELEMENTS", 40)
    calls = _spy(monkeypatch)
    parts = tape.jacobian(y, x, experimental_direction=direction)
    n = 7 if direction == "forward" else 20
    assert calls[direction] == -(-n // 2)
    np.testing.assert_allclose(parts.numpy(), whole.numpy(), rtol=1e-12, atol=1e-15)


def test_loop_mode_runs_one_pass_per_column(monkeypatch):
    tape, x, y, _ = _tanh_layer(3, 30)
    whole = tape.jacobian(y, x)
    calls = _spy(monkeypatch)
    loop = tape.jacobian(y, x, experimental_use_pfor=False)
    assert calls == {"forward": 3, "reverse": 0}
    np.testing.assert_allclose(loop.numpy(), whole.numpy(), rtol=1e-12)


def test_non_persistent_tape_forward_jacobian_then_used_up():
    x = mt.constant([1.0, 2.0])
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.concat([x * x] * 5, 0)
    j = tape.jacobian(y, x)
    assert j.shape == (10, 2)
    with pytest.raises(RuntimeError, match="only be used to compute one"):
        tape.jacobian(y, x)


def test_forward_jacobian_of_unconnected_and_of_the_source_itself():
    x = mt.constant([1.0, 2.0])
    c = mt.constant([5.0, 6.0, 7.0, 8.0, 9.0])
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = c * 2.0
    assert tape.jacobian(y, x, experimental_direction="forward") is None
    z = tape.jacobian(y, x, experimental_direction="forward", unconnected_gradients=ZERO)
    assert z.shape == (5, 2) and not z.numpy().any()
    np.testing.assert_allclose(
        tape.jacobian(x, x, experimental_direction="forward").numpy(), np.eye(2))


def test_forward_jacobian_inside_an_outer_tape_is_differentiable():
    """A Hessian as the forward Jacobian of a gradient, and the derivative of a
    forward Jacobian: an outer tape records the sweep like a backward walk."""
    x = mt.constant(np.array([0.3, -0.7]))
    with mt.GradientTape() as outer:
        outer.watch(x)
        with mt.GradientTape(persistent=True) as inner:
            inner.watch(x)
            y = mt.concat([mt.sin(x) * x[0]] * 3, 0)  # 6 outputs, 2 inputs
        j = inner.jacobian(y, x)  # forward
        total = mt.reduce_sum(j)
    g = outer.gradient(total, x)
    # total = 3 * sum_i d/dx_j (sin(x_i) x0) summed over i, j
    x0, x1 = 0.3, -0.7
    expected = 3 * np.array([2 * np.cos(x0) - x0 * np.sin(x0) + np.cos(x1),
                             np.cos(x1) - x0 * np.sin(x1)])
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-12)


def test_batch_jacobian_forward_equals_reverse_for_independent_examples(monkeypatch):
    rng = np.random.default_rng(4)
    x = mt.constant(rng.standard_normal((5, 2)))
    w = mt.constant(rng.standard_normal((2, 9)))
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = mt.nn.elu(x @ w)
    calls = _spy(monkeypatch)
    reverse = tape.batch_jacobian(y, x)
    assert calls == {"forward": 0, "reverse": 1}  # the default stays TensorFlow's
    auto = tape.batch_jacobian(y, x, experimental_direction="auto")  # 2 * 2 < 9
    assert calls == {"forward": 1, "reverse": 1}
    loop = tape.batch_jacobian(y, x, experimental_direction="forward",
                               experimental_use_pfor=False)
    assert auto.shape == (5, 9, 2)
    np.testing.assert_allclose(auto.numpy(), reverse.numpy(), rtol=1e-12)
    np.testing.assert_allclose(loop.numpy(), reverse.numpy(), rtol=1e-12)


def test_batch_jacobian_directions_differ_when_examples_interact():
    """With a batch mean inside, reverse differentiates each output column
    summed over the batch, forward each input column summed over the batch."""
    x = mt.constant(np.random.default_rng(5).standard_normal((4, 3)))
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x - mt.reduce_mean(x, axis=0)
    reverse = tape.batch_jacobian(y, x, experimental_direction="reverse")
    forward = tape.batch_jacobian(y, x, experimental_direction="forward")
    j = tape.jacobian(y, x).numpy()            # (4, 3, 4, 3)
    np.testing.assert_allclose(reverse.numpy(), np.einsum("bkcj->ckj", j), atol=1e-12)
    np.testing.assert_allclose(forward.numpy(), np.einsum("bkcj->bkj", j), atol=1e-12)


def test_a_failing_forward_sweep_leaves_the_outer_tape_as_it_was():
    x = mt.constant([0.5, 1.5])
    with mt.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with mt.GradientTape() as inner:
            inner.watch(x)
            y = mt.concat([_no_gradient(mt.sin(x))] * 3, 0)
        n = len(outer.operations)
        with pytest.raises(LookupError):
            inner.jacobian(y, x, experimental_direction="forward")
        assert len(outer.operations) == n


def test_the_same_primal_twice_is_a_value_error():
    """TensorFlow raises ValueError for a tensor given twice among the primals."""
    x = mt.constant([1.0, 2.0])
    with pytest.raises(ValueError, match="primal 1.*specified as a primal multiple times"):
        ForwardAccumulator(primals=[x, x], tangents=[[1.0, 0.0], [0.0, 1.0]])
    v = mt.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match="primal 1.*specified as a primal multiple times"):
        ForwardAccumulator(primals=(v, v), tangents=([1.0, 0.0], [0.0, 1.0]))
    # the same values in two different tensors are two primals
    y = mt.constant([1.0, 2.0])
    with ForwardAccumulator(primals=[x, y], tangents=[[1.0, 0.0], [0.0, 1.0]]) as acc:
        z = x * y
    np.testing.assert_allclose(acc.jvp(z).numpy(), [1.0 * 1.0, 2.0 * 1.0])


@pytest.mark.parametrize("m", [1, 32, 63, 64, 65, 96, 128, 1024])
def test_auto_picks_the_direction_that_computes_less(monkeypatch, m):
    """Issue 12: with 64 inputs and m outputs of tanh(W @ x), "auto" counts the
    numbers each direction computes on the recorded ops (forward: 64 sweeps of
    2m; reverse: m walks of 64 + m) and in assembling the Jacobian (forward:
    transpose and reshape 64m; reverse: reshape 64m; issue 19), and takes the
    cheaper: with x of shape (64, 1), forward only when m > 128.
    Both directions give the same Jacobian."""
    n = 64
    tape, x, y, w = _tanh_layer(n, m)
    forward, reverse = jacobians_module.direction_costs(tape, y, [x])
    assert (forward, reverse) == (n * 2 * m + 2 * n * m, m * (n + m) + n * m)
    cheaper = "forward" if forward < reverse else "reverse"
    assert cheaper == ("forward" if m > 2 * n else "reverse")
    worked = {d: count_numbers(lambda: tape.jacobian(y, x, experimental_direction=d))[1]
              for d in ("forward", "reverse")}
    assert worked[cheaper] <= worked[{"forward": "reverse", "reverse": "forward"}[cheaper]]
    calls = _spy(monkeypatch)
    auto = tape.jacobian(y, x)
    assert calls[cheaper] == 1 and sum(calls.values()) == 1
    other = tape.jacobian(y, x, experimental_direction="reverse" if cheaper == "forward"
                          else "forward")
    np.testing.assert_allclose(auto.numpy(), other.numpy(), rtol=1e-12, atol=1e-15)
    d = 1 - np.tanh(w.numpy() @ x.numpy()) ** 2
    np.testing.assert_allclose(auto.numpy().reshape(m, n), d * w.numpy(), rtol=1e-12)


def test_jacobian_direction_weighs_passes_by_their_numbers():
    assert mt.autodiff.jacobian_direction(64, 96) == "forward"    # equal passes: n < m
    assert mt.autodiff.jacobian_direction(64, 64) == "reverse"    # a tie: reverse
    assert mt.autodiff.jacobian_direction(64, 96, 2 * 96, 64 + 96) == "forward"
    assert mt.autodiff.jacobian_direction(64, 32, 2 * 32, 64 + 32) == "reverse"
    assert mt.autodiff.jacobian_direction(10, 100, 50, 1) == "reverse"  # cheap walks


def test_auto_keeps_reverse_mode_through_a_users_gradient_function(monkeypatch):
    """A custom gradient that clips its upstream is not linear in it, so forward
    mode (which borrows a JVP from it) and reverse mode disagree; "auto" then
    keeps TensorFlow's reverse mode, whatever the sizes."""
    @mt.custom_gradient
    def clip(v):
        return v * 1.0, lambda dy: mt.clip_by_norm(dy, 0.01)

    x = mt.constant([1.0, 2.0], dtype=mt.float64)
    w = mt.constant(np.linspace(-0.1, 0.1, 128).reshape(64, 2))
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = mt.tanh(mt.reshape(w @ mt.reshape(clip(x * x), (2, 1)), (64,)))
    forward, reverse = jacobians_module.direction_costs(tape, y, [x])
    assert forward < reverse  # by the count alone, forward would be cheaper
    calls = _spy(monkeypatch)
    auto = tape.jacobian(y, x)
    assert calls == {"forward": 0, "reverse": 1}
    rev = tape.jacobian(y, x, experimental_direction="reverse")
    fwd = tape.jacobian(y, x, experimental_direction="forward")
    np.testing.assert_allclose(auto.numpy(), rev.numpy())
    assert not np.allclose(fwd.numpy(), rev.numpy())  # the clip makes them differ


@pytest.mark.parametrize("name, f", [("sqrt", mt.sqrt),
                                     ("asin", lambda x: mt.math.asin(x / 4))])
def test_auto_keeps_reverse_mode_where_a_derivative_is_infinite(monkeypatch, name, f):
    """sqrt at 0 and asin at 1 have an infinite derivative and a finite value.
    A forward sweep's one-hot column is 0 there, and 0 * inf is NaN, which
    the product with W spreads over the whole column; TensorFlow's jacobian
    (reverse mode) keeps the inf to the one column. "auto" would have chosen
    forward (3 inputs, 8 outputs) and must give TensorFlow's numbers."""
    w = np.arange(24, dtype=np.float32).reshape(3, 8) / 10 - 1
    x = mt.constant(np.array([0.0, 1.0, 4.0], np.float32))
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = mt.matmul(f(x)[None, :], mt.constant(w))[0]
    forward, reverse = jacobians_module.direction_costs(tape, y, [x])
    assert forward < reverse  # by the count alone, forward would be cheaper
    calls = _spy(monkeypatch)
    auto = tape.jacobian(y, x).numpy()
    assert calls == {"forward": 0, "reverse": 1}
    singular = 0 if name == "sqrt" else 2
    assert np.isinf(auto[:, singular]).all() and np.isfinite(np.delete(auto, singular, 1)).all()
    if name == "sqrt":  # TensorFlow 2.21's tape.jacobian, first three rows
        np.testing.assert_allclose(auto[:3, 1:], [[-0.1, 0.15], [-0.05, 0.175], [0.0, 0.2]],
                                   rtol=1e-6)
    fwd = tape.jacobian(y, x, experimental_direction="forward").numpy()
    assert np.isnan(fwd).any()  # what forward mode gives (and ForwardAccumulator, as TF's)


def test_complex_jacobians_stay_in_reverse_mode(monkeypatch):
    """For complex numbers TensorFlow's gradients (and so reverse mode) give
    the conjugate of the derivative; a forward sweep gives the derivative
    itself. "auto" keeps reverse mode, and asking for forward is an error."""
    z = mt.constant(np.array([1 + 2j, -0.5 + 1j], np.complex64))
    c = mt.constant((np.arange(5) + 1j).astype(np.complex64))
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(z)
        y = mt.reshape(z[:, None] * z[:, None] * c[None, :], [-1])  # 10 outputs, 2 inputs
    calls = _spy(monkeypatch)
    j = tape.jacobian(y, z).numpy()
    assert calls == {"forward": 0, "reverse": 1}
    np.testing.assert_allclose(j[1], [-2 - 6j, 0], atol=1e-6)  # TensorFlow 2.21: conj(2 z c)
    with pytest.raises(ValueError, match="'forward' cannot take a complex64"):
        tape.jacobian(y, z, experimental_direction="forward")


def test_a_hessian_stays_in_reverse_mode(monkeypatch):
    """The Jacobian of a gradient: a sweep's tangent terms and a walk's
    gradients count the same numbers on the gradient's ops; forward mode
    also transposes its (16, 4, 4) columns, so "auto" keeps reverse mode."""
    rng = np.random.default_rng(3)
    x = mt.constant(rng.standard_normal((8, 4)))
    w = mt.Variable(rng.standard_normal((4, 4)))
    with mt.GradientTape(persistent=True) as outer:
        with mt.GradientTape() as inner:
            loss = mt.reduce_mean(mt.tanh(x @ w) ** 2)
        g = inner.gradient(loss, w)
    forward, reverse = jacobians_module.direction_costs(outer, g, [w])
    assert forward == reverse + 16 * 16 > 16 * 16
    calls = _spy(monkeypatch)
    h = outer.jacobian(g, w)
    assert calls == {"forward": 0, "reverse": 1}
    np.testing.assert_allclose(
        h.numpy(), outer.jacobian(g, w, experimental_direction="forward").numpy(),
        rtol=1e-10, atol=1e-12)
