"""tf.nn's activations, normalisation helpers and losses: values against NumPy
formulas (float32 and float64), dtypes, TensorFlow's choices at kinks and edges
(measured with TensorFlow 2.21), and errors naming the op and the shapes.
Derivatives against finite differences are the op table's (op_table_nn.py)."""
import math

import numpy as np
import pytest

import minitape as mt

X = np.array([-7.0, -1.0, -1e-5, 0.0, 0.5, 3.0, 6.0, 7.0])
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805
ERFC = np.vectorize(math.erfc)


def derivatives(fn, x):
    """f(x), f'(x) and f''(x) (elementwise ops: gradients of sums)."""
    x = x if isinstance(x, mt.Tensor) else mt.constant(np.asarray(x, np.float64))
    with mt.GradientTape() as outer:
        outer.watch(x)
        with mt.GradientTape() as inner:
            inner.watch(x)
            y = fn(x)
        g = inner.gradient(y, x)
    h = outer.gradient(g, x)
    return y.numpy(), g.numpy(), None if h is None else h.numpy()


ACTIVATIONS = {  # name: (op, NumPy formula)
    "relu6": (mt.nn.relu6, lambda x: np.minimum(np.maximum(x, 0), 6)),
    "leaky_relu": (mt.nn.leaky_relu,
                   lambda x: np.where(x > 0, x, x * x.dtype.type(np.float32(0.2)))),
    "elu": (mt.nn.elu, lambda x: np.where(x < 0, np.exp(x) - 1, x)),
    "selu": (mt.nn.selu, lambda x: SELU_SCALE * np.where(x < 0, SELU_ALPHA * (np.exp(x) - 1), x)),
    "gelu": (mt.nn.gelu, lambda x: 0.5 * x * ERFC(-x / np.sqrt(2))),
    "gelu_tanh": (lambda x: mt.nn.gelu(x, approximate=True),
                  lambda x: 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x**3)))),
    "silu": (mt.nn.silu, lambda x: x / (1 + np.exp(-x))),
    "swish-beta": (lambda x: mt.nn.swish(x, beta=2.0), lambda x: x / (1 + np.exp(-2 * x))),
    "softsign": (mt.nn.softsign, lambda x: x / (1 + np.abs(x))),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_values_match_numpy(name, dtype):
    op, formula = ACTIVATIONS[name]
    y = op(mt.constant(X.astype(dtype)))
    assert y.dtype == dtype and y.shape == X.shape
    expected = formula(X.astype(dtype)).astype(dtype)  # computed in the dtype, as TensorFlow
    np.testing.assert_allclose(y.numpy(), expected, rtol=4e-7 if dtype == np.float32 else 1e-13,
                               atol=1e-30)
    assert op(mt.zeros((0, 3), dtype)).shape == (0, 3)


def test_elu_and_selu_use_exp_minus_one_as_tensorflow_does():
    # TensorFlow's kernels compute exp(x) - 1, not expm1: in float32 at -1e-5
    # they give -1.001358e-05 (expm1: -9.99995e-06).
    x = np.float32(-1e-5)
    assert mt.nn.elu(mt.constant([x])).numpy()[0] == np.float32(-1.001358e-05)
    assert mt.nn.selu(mt.constant([x])).numpy()[0] == np.float32(-1.7604869e-05)


def test_relu6_kinks_take_tensorflows_subgradient():
    # TensorFlow 2.21: the gradient is 1 only for 0 < x < 6 (0 at x = 0 and 6);
    # the second derivative is zeros (not None).
    y, g, h = derivatives(mt.nn.relu6, [-7.0, -1.0, 0.0, 3.0, 6.0, 7.0])
    np.testing.assert_array_equal(y, [0, 0, 0, 3, 6, 6])
    np.testing.assert_array_equal(g, [0, 0, 0, 1, 0, 0])
    np.testing.assert_array_equal(h, np.zeros(6))
    assert not np.signbit(g).any()


def test_relu6_keeps_integers():
    y = mt.nn.relu6(mt.constant([-3, 2, 9]))
    assert y.dtype == np.int32 and y.numpy().tolist() == [0, 2, 6]


def test_leaky_relu_at_the_kink_and_alpha_as_float32():
    # TensorFlow 2.21: slope alpha at 0; alpha is a float32 attribute (so the
    # float64 value at -7 is -1.40000002...); second derivative zeros.
    y, g, h = derivatives(mt.nn.leaky_relu, [-7.0, -1.0, 0.0, 3.0])
    np.testing.assert_array_equal(y, [-7 * float(np.float32(0.2)), -float(np.float32(0.2)), 0, 3])
    assert y[0] != -1.4
    np.testing.assert_array_equal(g, [np.float32(0.2)] * 3 + [1])
    np.testing.assert_array_equal(h, np.zeros(4))
    # alpha > 1 is no maximum(x, alpha x): the negative side is alpha x
    np.testing.assert_array_equal(mt.nn.leaky_relu(mt.constant([-7.0, 3.0]), 2.0).numpy(),
                                  [-14.0, 3.0])


def test_leaky_relu_casts_integers_to_float32_and_checks_alpha():
    y = mt.nn.leaky_relu(mt.constant([1, -2]))
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.numpy(), [1.0, -0.4], rtol=1e-6)
    with pytest.raises(TypeError, match="leaky_relu: alpha"):
        mt.nn.leaky_relu(mt.constant([1.0]), alpha=mt.constant(0.3))
    assert mt.nn.leaky_relu(mt.constant([-1.0]), alpha=np.array(0.5)).numpy()[0] == -0.5


def test_elu_and_selu_derivatives_at_zero_are_tensorflows():
    # TensorFlow 2.21 (EluGrad/SeluGrad and their GradGrad rules): at 0 the
    # slope is the positive side's (1, scale) and the second derivative is 0.
    x = [-7.0, -1.0, 0.0, 3.0]
    _, g, h = derivatives(mt.nn.elu, x)
    np.testing.assert_allclose(g, [np.exp(-7), np.exp(-1), 1, 1], rtol=1e-12)
    np.testing.assert_allclose(h, [np.exp(-7), np.exp(-1), 0, 0], rtol=1e-12)
    _, g, h = derivatives(mt.nn.selu, x)
    sa = SELU_SCALE * SELU_ALPHA
    np.testing.assert_allclose(g, [sa * np.exp(-7), sa * np.exp(-1), SELU_SCALE, SELU_SCALE],
                               rtol=1e-12)
    np.testing.assert_allclose(h, [sa * np.exp(-7), sa * np.exp(-1), 0, 0], rtol=1e-12)


def test_gelu_and_silu_derivatives_at_zero():
    # TensorFlow 2.21: gelu'(0) = 0.5, gelu''(0) = 0.7978845608 (both forms);
    # silu'(0) = 0.5, silu''(0) = 0.5.
    for fn in (mt.nn.gelu, lambda x: mt.nn.gelu(x, approximate=True)):
        _, g, h = derivatives(fn, [0.0])
        np.testing.assert_allclose([g[0], h[0]], [0.5, 0.7978845608028654], rtol=1e-9)
    _, g, h = derivatives(mt.nn.silu, [0.0])
    np.testing.assert_allclose([g[0], h[0]], [0.5, 0.5], rtol=1e-14)


def test_gelu_keeps_its_digits_far_left():
    # x Phi(x) at -7 is -8.9586878e-12 (TensorFlow's 1 + erf cancels: -8.95869547e-12)
    y = mt.nn.gelu(mt.constant([-7.0], mt.float64)).numpy()[0]
    np.testing.assert_allclose(y, -7 * 0.5 * math.erfc(7 / math.sqrt(2)), rtol=1e-14)


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_large_inputs_stay_finite(name):
    op, _ = ACTIVATIONS[name]
    x = mt.constant([-1e30, -80.0, 80.0, 1e30], mt.float32)
    _, g, h = derivatives(op, x)
    assert np.isfinite(op(x).numpy()).all() and np.isfinite(g).all()
    # tanh-gelu's second derivative at 1e30 is NaN (inf - inf), in TensorFlow 2.21 too
    assert h is None or np.isfinite(h if name != "gelu_tanh" else h[1:3]).all()


def test_silu_beta_has_a_gradient_summed_over_the_features():
    x = mt.constant([[-1.0, 0.5], [2.0, 3.0]], mt.float64)
    beta = mt.constant(1.5, mt.float64)
    with mt.GradientTape() as tape:
        tape.watch(beta)
        y = mt.nn.silu(x, beta)
    v = x.numpy()
    s = 1 / (1 + np.exp(-1.5 * v))
    np.testing.assert_allclose(tape.gradient(y, beta).numpy(),
                               np.sum(v * v * s * (1 - s)), rtol=1e-14)
    assert mt.nn.swish is mt.nn.silu


@pytest.mark.parametrize("op", [mt.nn.selu, mt.nn.elu, mt.nn.softsign, mt.nn.silu])
def test_float_only_activations_refuse_integers(op):
    with pytest.raises(TypeError, match=op.__name__):
        op(mt.constant([1, 2]))


def test_gelu_refuses_integers_with_tensorflows_value_error():
    with pytest.raises(ValueError, match="gelu: features must be a floating point tensor"):
        mt.nn.gelu(mt.constant([1, 2]))


def test_silu_beta_that_does_not_broadcast_is_an_error():
    with pytest.raises(ValueError, match=r"silu: beta of shape \(3,\).*\(2,\)"):
        mt.nn.silu(mt.constant([1.0, 2.0]), mt.constant([1.0, 2.0, 3.0]))


def test_tanh_gelu_gradient_where_x_cubed_overflows_is_the_limit():
    # x^3 is inf at 1e30 in float32. TensorFlow 2.21 gives NaN (0 * inf in
    # tanh's chain); minitape's products let a zero factor win (see
    # elementwise._moved), which gives the limits 0 and 1.
    _, g, _ = derivatives(lambda x: mt.nn.gelu(x, approximate=True),
                          mt.constant([-1e30, 1e30], mt.float32))
    np.testing.assert_array_equal(g, [0.0, 1.0])
