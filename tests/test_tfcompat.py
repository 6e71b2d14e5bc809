"""TensorFlow behaviours a student notices (issue 9): Keras-style layers, the
zero gradient of sign, empty tensors, recompute_grad, grad_pass_through,
newaxis and no_gradient. Each test states TensorFlow's documented result."""
import gc

import numpy as np
import pytest

import minitape as mt

# ---------------------------------------------------------------------------
# Keras-style layers: activations by name, build(), built
# ---------------------------------------------------------------------------

X = np.array([[1.0, -2.0, 3.0], [-0.5, 0.25, -4.0]], np.float32)


@pytest.mark.parametrize("name, fn", [
    ("relu", mt.nn.relu), ("sigmoid", mt.nn.sigmoid), ("tanh", mt.nn.tanh),
    ("softmax", mt.nn.softmax), ("softplus", mt.nn.softplus), ("elu", mt.nn.elu),
    ("linear", lambda y: y), (None, lambda y: y)])
def test_dense_takes_the_activation_by_its_keras_name(name, fn):
    mt.random.set_seed(3)
    layer = mt.layers.Dense(4, activation=name)
    out = layer(X)
    plain = mt.matmul(mt.constant(X), layer.kernel) + layer.bias
    np.testing.assert_allclose(out.numpy(), fn(plain).numpy(), rtol=1e-6)


def test_an_unknown_activation_name_is_a_value_error_listing_the_known_ones():
    with pytest.raises(ValueError) as info:
        mt.layers.Dense(2, activation="rleu")
    message = str(info.value)
    assert "'rleu'" in message
    for name in ("relu", "sigmoid", "tanh", "softmax", "softplus", "elu", "linear"):
        assert repr(name) in message


def test_an_activation_that_is_neither_a_name_nor_a_function_is_a_type_error():
    with pytest.raises(TypeError, match="activation"):
        mt.layers.Dense(2, activation=3)


def test_build_makes_the_variables_and_the_first_call_uses_them():
    layer = mt.layers.Dense(3)
    assert layer.built is False and layer.trainable_variables == ()
    layer.build([None, 2])   # Keras: the batch size may be None
    assert layer.built is True
    kernel, bias = layer.kernel, layer.bias
    assert kernel.shape == (2, 3) and bias.shape == (3,)
    layer(mt.ones((4, 2)))
    assert layer.kernel is kernel and layer.bias is bias
    assert layer.trainable_variables == (kernel, bias)


def test_build_with_an_unknown_last_dimension_is_a_value_error():
    with pytest.raises(ValueError, match=r"Dense .*last dimension"):
        mt.layers.Dense(3).build([2, None])


def test_batch_normalization_can_be_built_first_too():
    bn = mt.layers.BatchNormalization()
    bn.build((None, 4))
    assert bn.built and bn.gamma.shape == (4,)
    gamma = bn.gamma
    bn(mt.ones((2, 4)), training=True)
    assert bn.gamma is gamma


def test_forward_accumulator_docstring_dense_kernel_jvp():
    # tf.autodiff.ForwardAccumulator's docstring builds the layer first, then
    # watches dense.kernel. TensorFlow prints `numpy=...` (a random kernel), so
    # the test states the value the JVP must have: d loss along (1, 0) of the
    # kernel, by hand, and the same number from the tape's gradient.
    x = mt.constant([[2.0, 3.0], [1.0, 4.0]])
    targets = mt.constant([[1.], [-1.]])
    dense = mt.layers.Dense(1)
    dense.build([None, 2])
    with mt.autodiff.ForwardAccumulator(
            primals=dense.kernel,
            tangents=mt.constant([[1.], [0.]])) as acc:
        loss = mt.reduce_sum((dense(x) - targets) ** 2.)
    jvp = acc.jvp(loss)
    assert jvp is not None and jvp.shape == () and jvp.dtype == np.float32
    k0, k1 = dense.kernel.numpy()[:, 0].astype(np.float64)
    residual = np.array([2 * k0 + 3 * k1 - 1, k0 + 4 * k1 + 1])
    expected = np.sum(2 * residual * np.array([2.0, 1.0]))
    np.testing.assert_allclose(float(jvp), expected, rtol=1e-5)
    with mt.GradientTape() as tape:
        loss = mt.reduce_sum((dense(x) - targets) ** 2.)
    np.testing.assert_allclose(float(jvp), tape.gradient(loss, dense.kernel)[0, 0],
                               rtol=1e-5)


# ---------------------------------------------------------------------------
# sign: a zero gradient, not None
# ---------------------------------------------------------------------------

def test_the_gradient_of_sign_is_zeros_not_none():
    x = mt.constant([-2.0, 0.0, 3.0])
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.sign(x)
    g = tape.gradient(y, x)
    assert g is not None
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0, 0.0])
    assert g.dtype == np.float32


def test_second_derivative_of_abs_is_zero_through_sign():
    # TensorFlow's Abs gradient is grad * sign(x), and sign's gradient is
    # zeros: so d2|x|/dx2 is 0.0, not None. The zeros themselves come from
    # ZerosLike, which is not differentiable: the third derivative is None.
    x = mt.constant(-1.5)
    with mt.GradientTape() as t3:
        t3.watch(x)
        with mt.GradientTape() as t2:
            t2.watch(x)
            with mt.GradientTape() as t1:
                t1.watch(x)
                y = mt.abs(x)
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    assert float(d1) == -1.0 and float(d2) == 0.0
    assert t3.gradient(d2, x) is None


def test_forward_mode_tangent_of_sign_is_none():
    # TensorFlow 2.21: acc.jvp(tf.sign(x)) is None (sign's output does not
    # move); a product with it still moves: jvp(sign(x) * x) = sign(x) * t.
    x = mt.constant([1.0, -1.0])
    with mt.autodiff.ForwardAccumulator(x, mt.constant([1.0, 1.0])) as acc:
        y = mt.sign(x)
        z = y * x
    assert acc.jvp(y) is None
    np.testing.assert_array_equal(acc.jvp(z).numpy(), [1.0, -1.0])


# ---------------------------------------------------------------------------
# Empty tensors
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(0, 3), (3, 0)])
@pytest.mark.parametrize("fn", [mt.nn.softmax, mt.nn.log_softmax])
def test_softmax_of_an_empty_tensor_is_empty_and_differentiable(fn, shape):
    x = mt.zeros(shape)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    assert y.shape == shape and y.dtype == np.float32
    assert tape.gradient(y, x).shape == shape


def test_pad_of_a_scalar_with_empty_paddings_is_the_scalar():
    x = mt.constant(3.0)
    for paddings in (np.zeros((0, 2), np.int32), mt.zeros((0, 2), mt.int32)):
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = mt.pad(x, paddings)
        assert y.shape == () and float(y) == 3.0
        assert float(tape.gradient(y, x)) == 1.0


def test_reduce_max_and_min_of_nothing_are_their_identities():
    empty = mt.zeros((0, 3))
    assert float(mt.reduce_max(empty)) == -np.inf
    assert float(mt.reduce_min(empty)) == np.inf
    np.testing.assert_array_equal(mt.reduce_max(empty, axis=0).numpy(), [-np.inf] * 3)
    np.testing.assert_array_equal(mt.reduce_min(empty, axis=0).numpy(), [np.inf] * 3)
    assert mt.reduce_max(empty, axis=1).shape == (0,)
    assert mt.reduce_min(mt.zeros((3, 0)), axis=1, keepdims=True).shape == (3, 1)
    assert mt.reduce_max(empty, axis=0).dtype == np.float32


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_reduce_max_and_min_of_no_integers_are_the_dtype_limits(dtype):
    # TensorFlow issue #31325: reduce_max of an empty int32 tensor is -2147483648.
    empty = mt.constant(np.zeros((0,), dtype))
    assert int(mt.reduce_max(empty)) == np.iinfo(dtype).min
    assert int(mt.reduce_min(empty)) == np.iinfo(dtype).max
    assert mt.reduce_max(empty).dtype == dtype


def test_gradients_of_empty_reductions_are_empty():
    x = mt.zeros((0, 3))
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        hi = mt.reduce_max(x, axis=0)
        lo = mt.reduce_min(x)
    assert tape.gradient(hi, x).shape == (0, 3)
    assert tape.gradient(lo, x).shape == (0, 3)


# ---------------------------------------------------------------------------
# recompute_grad
# ---------------------------------------------------------------------------

SHAPE = (257,)   # a shape nothing else in the test process uses


def _live_tensors():
    gc.collect()
    return sum(1 for o in gc.get_objects()
               if type(o) is mt.Tensor and o.shape == SHAPE)


def _block(x):
    for _ in range(10):
        x = mt.sin(x) * 1.5 + x
    return x


def _forward(fn, x):
    tape = mt.GradientTape()
    with tape:
        tape.watch(x)
        y = mt.reduce_sum(fn(x))
    return tape, y


def test_recompute_grad_keeps_fewer_values_alive_and_gives_the_same_gradient():
    x = mt.constant(np.linspace(-1, 1, SHAPE[0]))
    base = _live_tensors()
    tape, y = _forward(_block, x)
    kept_plain = _live_tensors() - base
    g_plain = tape.gradient(y, x)
    del tape, y
    base = _live_tensors()
    tape, y = _forward(mt.recompute_grad(_block), x)
    kept_recomputed = _live_tensors() - base
    g_recomputed = tape.gradient(y, x)
    # Plain: the tape holds every intermediate of the 10 steps (30 of them).
    # Recomputed: only the block's output.
    assert kept_plain >= 30
    assert kept_recomputed <= 2
    np.testing.assert_allclose(g_recomputed.numpy(), g_plain.numpy(), rtol=1e-12)


def test_recompute_grad_docstring_runs_f_again_during_the_backward_pass():
    # tf.recompute_grad's docstring: 'running' is printed 4 times going
    # forward and 4 more times for the gradient; without it, only 4 times.
    y = mt.Variable(1.0)
    runs = []

    def my_function(x):
        runs.append("running")
        return x * y

    my_function_recompute = mt.recompute_grad(my_function)
    with mt.GradientTape() as tape:
        r = mt.constant(1.0)
        for i in range(4):
            r = my_function_recompute(r)
    assert len(runs) == 4
    grad = tape.gradient(r, [y])
    assert len(runs) == 8
    assert float(grad[0]) == 4.0   # r = y ** 4, dr/dy = 4 y ** 3
    with mt.GradientTape() as tape:
        r = mt.constant(1.0)
        for i in range(4):
            r = my_function(r)
    grad = tape.gradient(r, [y])
    assert len(runs) == 12 and float(grad[0]) == 4.0


def _second_order(fn, x, w):
    with mt.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with mt.GradientTape() as inner:
            inner.watch(x)
            y = mt.reduce_sum(fn(x))
        gx, gw = inner.gradient(y, [x, w])
    return (gx, gw), outer.gradient(gx, [x, w]), outer.gradient(gw, [x, w])


def test_recompute_grad_with_a_variable_read_inside_first_and_second_order():
    w = mt.Variable(np.array([0.5, -1.0, 2.0]))
    x = mt.constant(np.array([0.1, 0.7, -0.3]))

    def f(x):
        return mt.tanh(x * w) * x + w * w

    plain = _second_order(f, x, w)
    recomputed = _second_order(mt.recompute_grad(f), x, w)
    for a, b in zip(plain, recomputed):
        for u, v in zip(a, b):
            assert u is not None and v is not None
            np.testing.assert_allclose(v.numpy(), u.numpy(), rtol=1e-12)


def test_recompute_grad_of_several_inputs_and_outputs_and_an_integer_input():
    def f(a, b, n):
        return a * b, mt.sin(a) * mt.cast(n, a.dtype)

    a, b, n = mt.constant(0.3), mt.constant(2.0), mt.constant(3)
    g = mt.recompute_grad(f)
    with mt.GradientTape() as tape:
        tape.watch([a, b])
        p, q = g(a, b, n)
        total = p + q
    ga, gb = tape.gradient(total, [a, b])
    np.testing.assert_allclose(float(ga), 2.0 + 3 * np.cos(0.3), rtol=1e-6)
    np.testing.assert_allclose(float(gb), 0.3, rtol=1e-6)
    assert g.__name__ == "f"


def test_recompute_grad_of_the_same_tensor_twice_counts_each_use_once():
    # TensorFlow's regression test (recompute_grad of f(x, x), f(a, b) = a * b)
    # at x = 3: the gradient is 6.0 (minitape gave 12.0, each use getting the
    # total), and eagerly, traced and as a second derivative (2.0) alike.
    g = mt.recompute_grad(lambda a, b: a * b)
    x = mt.constant(3.0)

    def first_and_second(x):
        with mt.GradientTape() as outer:
            outer.watch(x)
            with mt.GradientTape() as tape:
                tape.watch(x)
                y = g(x, x)
            dy = tape.gradient(y, x)
        return y, dy, outer.gradient(dy, x)

    for run in (first_and_second, mt.function(first_and_second)):
        y, dy, d2y = run(x)
        assert (float(y), float(dy), float(d2y)) == (9.0, 6.0, 2.0)


# ---------------------------------------------------------------------------
# grad_pass_through
# ---------------------------------------------------------------------------

def test_grad_pass_through_docstring_assign_example():
    # tf.grad_pass_through's docstring: y evaluates to 9.0, grads to 6.0.
    x = mt.Variable(1.0, name="x")
    z = mt.Variable(3.0, name="z")
    with mt.GradientTape() as tape:
        y = mt.grad_pass_through(x.assign)(z ** 2)
    grads = tape.gradient(y, z)
    assert float(y) == 9.0 and float(grads) == 6.0
    assert float(x.numpy()) == 9.0


def test_grad_pass_through_as_a_straight_through_quantiser():
    # Rounding has no gradient; passed through, the gradient is the identity's.
    x = mt.constant([0.2, 1.7, -2.6])
    with mt.GradientTape() as tape:
        tape.watch(x)
        q = mt.grad_pass_through(mt.round)(x)
        y = mt.reduce_sum(q * q)
    np.testing.assert_array_equal(q.numpy(), [0.0, 2.0, -3.0])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 4.0, -6.0])


def test_grad_pass_through_gives_variables_read_inside_no_gradient():
    w = mt.Variable(5.0)
    x = mt.constant(2.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.grad_pass_through(lambda t: t * w)(x)
    gx, gw = tape.gradient(y, [x, w])
    assert float(y) == 10.0 and float(gx) == 1.0 and gw is None


# ---------------------------------------------------------------------------
# newaxis and no_gradient
# ---------------------------------------------------------------------------

def test_newaxis_indexes_and_differentiates():
    assert mt.newaxis is None
    x = mt.constant([1.0, 2.0, 3.0])
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x[:, mt.newaxis] * mt.constant([[1.0, 10.0]])
    assert y.shape == (3, 2)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [11.0, 11.0, 11.0])
    assert x[mt.newaxis].shape == (1, 3)


def test_no_gradient_is_not_differentiable_by_its_tf2_name():
    @mt.primitive("TfcompatSize")
    def size(x):
        return np.asarray(x.size, np.float32)

    mt.no_gradient("TfcompatSize")
    x = mt.constant([1.0, 2.0])
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = size(x) * x
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 2.0])
    with pytest.raises(TypeError, match="op_type must be a string"):
        mt.no_gradient(3)
