"""tf.nn's activations, normalisation helpers and losses: values against NumPy
formulas (float32 and float64), dtypes, TensorFlow's choices at kinks and edges
(measured with TensorFlow 2.21), and errors naming the op and the shapes.
Derivatives against finite differences are the op table's (op_table_nn.py)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitape as mt
from minitape.test import check_gradients
from op_table_nn import CASES

X = np.array([-7.0, -1.0, -1e-5, 0.0, 0.5, 3.0, 6.0, 7.0])
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805
ERFC = np.vectorize(math.erfc)
GELU_C = np.float32(0.7071067811865476)  # TensorFlow's 1/sqrt(2), a float32 constant


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
    "gelu": (mt.nn.gelu, lambda x: 0.5 * x * ERFC(-x * x.dtype.type(GELU_C))),
    "gelu_tanh": (lambda x: mt.nn.gelu(x, approximate=True),
                  lambda x: 0.5 * x * (1 + np.tanh(0.7978845608028654 * (
                      x + x.dtype.type(np.float32(0.044715)) * x**3)))),
    "silu": (mt.nn.silu, lambda x: x / (1 + np.exp(-x))),
    "swish-beta": (lambda x: mt.nn.swish(x, beta=2.0), lambda x: x / (1 + np.exp(-2 * x))),
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
    # TensorFlow 2.21 (float64): gelu'(0) = 0.5; gelu''(0) = 2c/sqrt(pi) with
    # its float32 c = 1/sqrt(2), 0.7978845471..., and 0.7978845608... for the
    # tanh form; silu'(0) = 0.5, silu''(0) = 0.5.
    _, g, h = derivatives(mt.nn.gelu, [0.0])
    np.testing.assert_allclose([g[0], h[0]], [0.5, 2 * float(GELU_C) / np.sqrt(np.pi)],
                               rtol=1e-15)
    assert abs(h[0] - 0.7978845471) < 1e-10
    _, g, h = derivatives(lambda x: mt.nn.gelu(x, approximate=True), [0.0])
    np.testing.assert_allclose([g[0], h[0]], [0.5, 0.7978845608028654], rtol=1e-15)
    _, g, h = derivatives(mt.nn.silu, [0.0])
    np.testing.assert_allclose([g[0], h[0]], [0.5, 0.5], rtol=1e-14)


def test_gelu_far_left_is_tensorflows():
    # TensorFlow 2.21 at -7 in float64: -8.95869547e-12 (its float32 c; with the
    # exact 1/sqrt(2) it would be -8.9586878e-12)
    y = mt.nn.gelu(mt.constant([-7.0], mt.float64)).numpy()[0]
    np.testing.assert_allclose(y, -8.95869547e-12, rtol=1e-9)


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


@pytest.mark.parametrize("op", [mt.nn.selu, mt.nn.elu, mt.nn.silu])
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


# --- l2_normalize, moments, batch_normalization -------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_l2_normalize_values(dtype):
    x = np.array([[3.0, 4.0], [0.0, 0.0], [1e-7, 0.0]], dtype)
    y = mt.nn.l2_normalize(mt.constant(x), axis=1)
    expected = x / np.sqrt(np.maximum((x * x).sum(1, keepdims=True), dtype(1e-12)))
    assert y.dtype == dtype
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6 if dtype == np.float32 else 1e-15)
    np.testing.assert_allclose(mt.nn.l2_normalize(mt.constant(x)).numpy(), x / 5, rtol=1e-6)
    np.testing.assert_array_equal(mt.nn.l2_normalize(mt.constant(x), dim=1).numpy(), y.numpy())
    assert mt.math.l2_normalize is mt.nn.l2_normalize


def test_l2_normalize_gradient_at_the_zero_vector_is_one_over_sqrt_epsilon():
    # TensorFlow 2.21: d sum(w * l2_normalize(x)) / dx at x = 0 is w / sqrt(1e-12)
    x = mt.constant([[3.0, 4.0], [0.0, 0.0]], mt.float64)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.reduce_sum(mt.nn.l2_normalize(x, axis=1) * mt.constant([[1.0, 2.0]], mt.float64))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(),
                               [[-0.064, 0.048], [1e6, 2e6]], rtol=1e-12)


def test_l2_normalize_bad_arguments():
    with pytest.raises(ValueError, match="l2_normalize"):
        mt.nn.l2_normalize(mt.ones((2, 3)), axis=2)
    with pytest.raises(ValueError, match="l2_normalize: give axis or dim"):
        mt.nn.l2_normalize(mt.ones((2, 3)), axis=1, dim=1)
    with pytest.raises(TypeError, match="l2_normalize"):
        mt.nn.l2_normalize(mt.constant([1, 2]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("axes, keepdims", [([0], False), (0, False), ([0, 2], True), (-1, True)])
def test_moments_values_and_shapes(dtype, axes, keepdims):
    x = np.random.default_rng(3).normal(size=(3, 2, 4)).astype(dtype)
    mean, variance = mt.nn.moments(mt.constant(x), axes=axes, keepdims=keepdims)
    axis = tuple(np.atleast_1d(axes))
    assert mean.dtype == variance.dtype == dtype
    np.testing.assert_allclose(mean.numpy(), x.mean(axis, keepdims=keepdims), rtol=1e-5)
    np.testing.assert_allclose(variance.numpy(), x.var(axis, keepdims=keepdims), rtol=1e-5)


def test_moments_of_float16_are_float16_and_of_nothing_nan():
    mean, variance = mt.nn.moments(mt.constant([[1.0, 2.0], [3.0, 5.0]], mt.float16), axes=[0])
    assert mean.dtype == variance.dtype == np.float16
    np.testing.assert_array_equal(variance.numpy(), [1.0, 2.25])
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        mean, variance = mt.nn.moments(mt.zeros((0, 2)), axes=[0])
    assert np.isnan(mean.numpy()).all() and np.isnan(variance.numpy()).all()  # as TensorFlow


def test_moments_variance_derivatives_are_tensorflows():
    # First derivative 2 (x - mean) / n (finite differences agree); TensorFlow
    # stops the mean's gradient inside the variance, so its second derivative is
    # 2/n I (TensorFlow 2.21: diag(0.667) for n = 3), not 2/n (I - 1/n).
    check_gradients(lambda x: mt.nn.moments(x, axes=[1])[1], [np.array([[1.0, 2.0, 4.0]])],
                    order=1)
    x = mt.constant([1.0, 2.0, 4.0], mt.float64)
    with mt.GradientTape() as outer:
        outer.watch(x)
        with mt.GradientTape() as inner:
            inner.watch(x)
            _, variance = mt.nn.moments(x, axes=[0])
        g = inner.gradient(variance, x)
    np.testing.assert_allclose(g.numpy(), [-8 / 9, -2 / 9, 10 / 9], rtol=1e-14)
    np.testing.assert_allclose(outer.jacobian(g, x).numpy(), np.eye(3) * 2 / 3, rtol=1e-14)


def test_moments_of_integers_is_a_type_error_like_reduce_mean():
    # TensorFlow 2.21 gives a truncated integer mean ([2, 3] for [[1, 2], [3, 5]]);
    # minitape refuses, as its reduce_mean does (docs/differences.md)
    with pytest.raises(TypeError, match="moments: expected a floating-point tensor"):
        mt.nn.moments(mt.constant([[1, 2], [3, 5]]), axes=[0])


def test_moments_bad_axes():
    with pytest.raises(ValueError, match="moments"):
        mt.nn.moments(mt.ones((2, 3)), axes=[3])
    with pytest.raises(ValueError, match="moments: axes"):
        mt.nn.moments(mt.ones((2, 3)), axes=None)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_normalization_values(dtype):
    rng = np.random.default_rng(4)
    x, mean, offset = (rng.normal(size=s).astype(dtype) for s in [(4, 3), (3,), (3,)])
    variance, scale = (rng.uniform(0.5, 2, 3).astype(dtype) for _ in range(2))
    y = mt.nn.batch_normalization(*(mt.constant(a) for a in (x, mean, variance, offset, scale)),
                                  1e-3)
    expected = (x - mean) * scale / np.sqrt(variance + dtype(1e-3)) + offset
    assert y.dtype == dtype
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5, atol=1e-6)
    y = mt.nn.batch_normalization(mt.constant(x), 2.0, 1.0, None, None, 0.0)
    np.testing.assert_allclose(y.numpy(), x - 2, rtol=1e-6)


def test_batch_normalization_computes_in_the_statistics_dtype():
    # TensorFlow 2.21: Python numbers make float32 statistics, cast to x's
    # dtype at the end: x = 1, mean 2, variance 1, eps 0.01 gives -0.995037138
    # in float64 (1/sqrt(1.01) = -0.99503719... at full precision)
    y = mt.nn.batch_normalization(mt.constant([[1.0]], mt.float64), 2.0, 1.0, None, None, 0.01)
    assert y.dtype == np.float64
    np.testing.assert_allclose(y.numpy(), [[-0.995037138]], rtol=1e-9)
    y = mt.nn.batch_normalization(mt.constant([1.0], mt.float16), mt.constant([2.0]),
                                  mt.constant([1.0]), None, None, 0.01)
    assert y.dtype == np.float16


def test_batch_normalization_shapes_that_do_not_broadcast():
    with pytest.raises(ValueError, match=r"batch_normalization: x of shape \(4, 3\) and "
                                         r"mean \(2,\)"):
        mt.nn.batch_normalization(mt.ones((4, 3)), mt.ones(2), mt.ones(3), None, None, 1e-3)
    with pytest.raises(TypeError, match="batch_normalization"):
        mt.nn.batch_normalization(mt.ones((4, 3)), mt.ones(3, mt.float64), mt.ones(3),
                                  None, None, 1e-3)


# --- bias_add, embedding_lookup ------------------------------------------------------

def test_bias_add_values_formats_and_dtypes():
    x = np.arange(12.0).reshape(2, 3, 2)
    b = np.array([10.0, 20.0, 30.0])
    y = mt.nn.bias_add(mt.constant(x), mt.constant(b), data_format="NCHW")
    np.testing.assert_array_equal(y.numpy(), x + b[:, None])
    y = mt.nn.bias_add(mt.constant(x.transpose(0, 2, 1)), mt.constant(b))
    np.testing.assert_array_equal(y.numpy(), x.transpose(0, 2, 1) + b)
    y = mt.nn.bias_add(mt.ones((2, 3), mt.int32), mt.constant([1, 2, 3]))
    assert y.dtype == np.int32 and y.numpy().tolist() == [[2, 3, 4], [2, 3, 4]]


def test_bias_add_gradient_of_the_bias_sums_over_the_other_axes():
    x, b = mt.constant(np.ones((2, 3, 4))), mt.constant(np.zeros(3))
    with mt.GradientTape() as tape:
        tape.watch([x, b])
        y = mt.nn.bias_add(x, b, data_format="NCW") * mt.constant(np.arange(24.0).reshape(2, 3, 4))
    gx, gb = tape.gradient(y, [x, b])
    np.testing.assert_array_equal(gb.numpy(), np.arange(24.0).reshape(2, 3, 4).sum((0, 2)))
    np.testing.assert_array_equal(gx.numpy(), np.arange(24.0).reshape(2, 3, 4))


@pytest.mark.parametrize("value, bias, data_format, error, message", [
    ((2, 3), (2,), None, ValueError, r"bias of shape \(2,\) does not match axis 1 of value "
                                     r"of shape \(2, 3\)"),
    ((2, 3), (1, 3), None, ValueError, r"bias must be 1-D, got shape \(1, 3\)"),
    ((3,), (3,), None, ValueError, r"value must be at least 2-D, got shape \(3,\)"),
    ((2, 3), (3,), "XY", ValueError, "data_format must be of the form"),
])
def test_bias_add_bad_arguments(value, bias, data_format, error, message):
    with pytest.raises(error, match="bias_add: " + message):
        mt.nn.bias_add(mt.ones(value), mt.ones(bias), data_format=data_format)
    with pytest.raises(TypeError, match="bias_add: value and bias have different dtypes"):
        mt.nn.bias_add(mt.ones((2, 3)), mt.ones(3, mt.float64))


def test_embedding_lookup_values_shards_and_max_norm():
    table = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    y = mt.nn.embedding_lookup(mt.constant(table), [[0, 2], [1, 1]])
    np.testing.assert_array_equal(y.numpy(), table[[[0, 2], [1, 1]]])
    y = mt.nn.embedding_lookup([mt.constant(table[:2]), mt.constant(table[2:])], [2, 0, 1])
    np.testing.assert_array_equal(y.numpy(), table[[2, 0, 1]])
    y = mt.nn.embedding_lookup(mt.constant([[3.0, 4.0], [0.3, 0.4]]), [0, 1], max_norm=1.0)
    np.testing.assert_allclose(y.numpy(), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
    ids = mt.constant(np.array([2, 0], np.int64))
    np.testing.assert_array_equal(mt.nn.embedding_lookup(mt.constant([1.0, 2.0, 3.0]), ids)
                                  .numpy(), [3.0, 1.0])


def test_embedding_lookup_gradient_adds_repeated_ids_and_ids_have_none():
    params = mt.constant(np.ones((3, 2)))
    ids = mt.constant([0, 0, 2])
    with mt.GradientTape() as tape:
        tape.watch([params, ids])
        y = mt.nn.embedding_lookup(params, ids)
    gp, gi = tape.gradient(y, [params, ids])
    np.testing.assert_array_equal(gp.numpy(), [[2, 2], [0, 0], [1, 1]])
    assert gi is None


def test_embedding_lookup_in_a_function_reads_new_ids():
    lookup = mt.function(lambda p, i: mt.nn.embedding_lookup(p, i), jit_compile=True)
    table = mt.constant([[1.0], [2.0], [3.0]])
    assert lookup(table, mt.constant([0, 1])).numpy().tolist() == [[1.0], [2.0]]
    assert lookup(table, mt.constant([2, 2])).numpy().tolist() == [[3.0], [3.0]]


@pytest.mark.parametrize("params, ids, error, message", [
    (np.ones((3, 2)), [3], ValueError, r"ids\[0\] = 3 is not in \[0, 3\)"),
    (np.ones((3, 2)), [[1, -1]], ValueError, r"ids\[0, 1\] = -1 is not in \[0, 3\)"),
    (np.ones((3, 2)), [0.0], TypeError, "ids must be int32 or int64"),
    ([np.ones((1, 2)), np.ones((2, 2))], [0], ValueError, r"shards with \[1, 2\] rows"),
    (np.float64(1.0), [0], ValueError, "params must be at least 1-D"),
])
def test_embedding_lookup_bad_ids_and_shards(params, ids, error, message):
    params = [mt.constant(p) for p in params] if isinstance(params, list) else mt.constant(params)
    with pytest.raises(error, match="embedding_lookup: " + message):
        mt.nn.embedding_lookup(params, ids)


# --- losses ----------------------------------------------------------------------------

def _log_softmax(z, axis=-1):
    shifted = z - z.max(axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis, keepdims=True))


LABELS = np.array([[0.0, 1.0, 0.0], [0.3, 0.3, 0.4]])
LOGITS = np.array([[1000.0, -1000.0, 0.0], [2.0, 1.0, -3.0]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_loss_values_match_numpy(dtype):
    y, z = LABELS.astype(dtype), LOGITS.astype(dtype)
    small = np.array([[0.5, -1.0, 2.0], [-0.3, 0.1, 1.5]], dtype)
    tol = dict(rtol=1e-6 if dtype == np.float32 else 1e-14)
    # sigmoid: computed on moderate logits in the naive form
    naive = -y * np.log(1 / (1 + np.exp(-small))) - (1 - y) * np.log(1 - 1 / (1 + np.exp(-small)))
    out = mt.nn.sigmoid_cross_entropy_with_logits(labels=mt.constant(y), logits=mt.constant(small))
    assert out.dtype == dtype
    np.testing.assert_allclose(out.numpy(), naive, rtol=1e-5 if dtype == np.float32 else 1e-12)
    # ... and on large ones in the stable form: max(z, 0) - z y + log(1 + exp(-|z|))
    out = mt.nn.sigmoid_cross_entropy_with_logits(labels=mt.constant(y), logits=mt.constant(z))
    np.testing.assert_allclose(out.numpy(), np.maximum(z, 0) - z * y + np.log1p(np.exp(-abs(z))),
                               **tol)
    out = mt.nn.weighted_cross_entropy_with_logits(mt.constant(y), mt.constant(z), 2.0)
    np.testing.assert_allclose(out.numpy(), (1 - y) * z + (1 + y) * (
        np.log1p(np.exp(-abs(z))) + np.maximum(-z, 0)), **tol)
    out = mt.nn.softmax_cross_entropy_with_logits(mt.constant(y), mt.constant(z))
    assert out.dtype == dtype and out.shape == (2,)
    np.testing.assert_allclose(out.numpy(), -(y * _log_softmax(z)).sum(-1), **tol)
    np.testing.assert_allclose(out.numpy()[0], 2000.0)  # TensorFlow 2.21: 2000
    out = mt.nn.sparse_softmax_cross_entropy_with_logits(mt.constant([1, 2]), mt.constant(z))
    np.testing.assert_allclose(out.numpy(), -_log_softmax(z)[[0, 1], [1, 2]], **tol)
    out = mt.nn.l2_loss(mt.constant(z))
    assert out.dtype == dtype and out.shape == ()
    np.testing.assert_allclose(out.numpy(), (z * z).sum() / 2, **tol)


@pytest.mark.parametrize("name", ["sigmoid", "weighted", "softmax", "sparse"])
def test_large_logits_give_finite_losses_and_gradients(name):
    z = mt.constant(np.array([[1e4, -1e4, 0.0], [-1e30, 1e30, 1.0]], np.float32))
    y = mt.constant(np.array([[0.0, 1.0, 0.0], [0.5, 0.5, 0.0]], np.float32))
    loss = {"sigmoid": lambda z: mt.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=z),
            "weighted": lambda z: mt.nn.weighted_cross_entropy_with_logits(y, z, 3.0),
            "softmax": lambda z: mt.nn.softmax_cross_entropy_with_logits(y, z),
            "sparse": lambda z: mt.nn.sparse_softmax_cross_entropy_with_logits([1, 0], z)}[name]
    with mt.GradientTape() as tape:
        tape.watch(z)
        out = loss(z)
    assert np.isfinite(out.numpy()).all() and np.isfinite(tape.gradient(out, z).numpy()).all()


def test_gradients_at_zero_logits_are_tensorflows():
    # TensorFlow 2.21: the sigmoid loss (written with where) has 0.5 - labels;
    # the weighted one (written with abs and relu) has 1 - labels.
    z = mt.constant([0.0, 0.0], mt.float64)
    y = mt.constant([0.0, 1.0], mt.float64)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(z)
        a = mt.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=z)
        b = mt.nn.weighted_cross_entropy_with_logits(y, z, 3.0)
    np.testing.assert_array_equal(tape.gradient(a, z).numpy(), [0.5, -0.5])
    np.testing.assert_array_equal(tape.gradient(b, z).numpy(), [1.0, 0.0])


def test_softmax_cross_entropy_gradients_follow_tensorflows_rule():
    # TensorFlow 2.21: d/dlogits = softmax - labels (even where labels do not
    # sum to 1), d/dlabels = -log_softmax, and d/dlabels of the logits'
    # gradient is 0 (not None).
    y = mt.constant([[0.0, 1.0, 1.0]], mt.float64)   # sums to 2
    z = mt.constant([[1.0, 2.0, -1.0]], mt.float64)
    with mt.GradientTape(persistent=True) as outer:
        outer.watch([y, z])
        with mt.GradientTape() as inner:
            inner.watch([y, z])
            loss = mt.nn.softmax_cross_entropy_with_logits(labels=y, logits=z)
        gy, gz = inner.gradient(loss, [y, z])
    s = np.exp(z.numpy()) / np.exp(z.numpy()).sum()
    np.testing.assert_allclose(gz.numpy(), s - y.numpy(), rtol=1e-14)
    np.testing.assert_allclose(gy.numpy(), -_log_softmax(z.numpy()), rtol=1e-14)
    np.testing.assert_array_equal(outer.gradient(gz, y).numpy(), np.zeros((1, 3)))
    # the labels' gradient is exact (the loss is linear in them)
    check_gradients(lambda y: mt.nn.softmax_cross_entropy_with_logits(y, z),
                    [np.array([[0.2, 0.5, 0.3]])], order=2)


def test_softmax_cross_entropy_casts_and_broadcasts_labels_as_tensorflow():
    z = mt.constant(LOGITS)
    out = mt.nn.softmax_cross_entropy_with_logits(mt.constant(LABELS[0]), z)
    np.testing.assert_allclose(out.numpy(), [2000.0, 1.31817543], rtol=1e-8)
    out = mt.nn.softmax_cross_entropy_with_logits(mt.constant(LABELS, mt.float32), z)
    assert out.dtype == np.float64   # labels cast to the logits' dtype
    np.testing.assert_allclose(out.numpy()[1], 2.61817548, rtol=1e-8)
    out = mt.nn.softmax_cross_entropy_with_logits(mt.constant(LABELS), z, axis=0)
    np.testing.assert_allclose(out.numpy(), [299.4, 1001.0, 1.21943494], rtol=1e-8)
    out = mt.nn.softmax_cross_entropy_with_logits(mt.constant([[0.5, 0.5]], mt.float16),
                                                  mt.constant([[1.0, 2.0]], mt.float16))
    assert out.dtype == np.float16


def test_sparse_labels_have_no_gradient_and_empty_batches_work():
    z = mt.constant(LOGITS)
    labels = mt.constant([1, 2])
    with mt.GradientTape() as tape:
        tape.watch([z, labels])
        loss = mt.nn.sparse_softmax_cross_entropy_with_logits(labels, z)
    gz, gl = tape.gradient(loss, [z, labels])
    assert gl is None
    np.testing.assert_allclose(gz.numpy()[0], [1.0, -1.0, 0.0])   # TensorFlow 2.21
    empty = mt.nn.sparse_softmax_cross_entropy_with_logits(mt.zeros((0,), mt.int32),
                                                           mt.zeros((0, 3)))
    assert empty.shape == (0,) and empty.dtype == np.float32
    assert mt.nn.softmax_cross_entropy_with_logits(mt.zeros((0, 3)), mt.zeros((0, 3))).shape \
        == (0,)
    np.testing.assert_array_equal(
        mt.nn.softmax_cross_entropy_with_logits(mt.zeros((2, 0)), mt.zeros((2, 0))).numpy(),
        [0.0, 0.0])   # no classes: TensorFlow 2.21 gives zeros
    assert mt.nn.l2_loss(mt.zeros((0, 3))).numpy() == 0.0


def test_sparse_cross_entropy_in_a_function_reads_new_labels():
    loss = mt.function(lambda y, z: mt.nn.sparse_softmax_cross_entropy_with_logits(y, z),
                       jit_compile=True)
    z = mt.constant([[0.0, 1.0, 2.0]], mt.float64)
    for label in (0, 2):
        expected = -_log_softmax(z.numpy())[0, label]
        np.testing.assert_allclose(loss(mt.constant([label]), z).numpy(), [expected])


@pytest.mark.parametrize("call, error, message", [
    (lambda: mt.nn.sigmoid_cross_entropy_with_logits(labels=mt.ones((2, 3)),
                                                     logits=mt.ones((2, 2))),
     ValueError, r"sigmoid_cross_entropy_with_logits: logits and labels must have the same "
                 r"shape, got logits \(2, 2\) and labels \(2, 3\)"),
    (lambda: mt.nn.sigmoid_cross_entropy_with_logits(labels=mt.ones(3)),
     ValueError, "sigmoid_cross_entropy_with_logits: both labels and logits must be given"),
    (lambda: mt.nn.sigmoid_cross_entropy_with_logits(labels=mt.ones(3, mt.float64),
                                                     logits=mt.ones(3)),
     TypeError, "sigmoid_cross_entropy_with_logits: the operands have different dtypes"),
    (lambda: mt.nn.weighted_cross_entropy_with_logits(mt.ones((2, 3)), mt.ones((3, 2)), 2.0),
     ValueError, r"weighted_cross_entropy_with_logits: logits and labels must have the same "
                 r"shape"),
    (lambda: mt.nn.weighted_cross_entropy_with_logits(mt.ones((2, 3)), mt.ones((2, 3)),
                                                      mt.ones(2)),
     ValueError, r"pos_weight of shape \(2,\) cannot be broadcast against logits of shape"),
    (lambda: mt.nn.softmax_cross_entropy_with_logits(mt.ones((2, 3)), mt.ones((2, 2))),
     ValueError, r"softmax_cross_entropy_with_logits: logits and labels must be "
                 r"broadcastable: logits \(2, 2\), labels \(2, 3\)"),
    (lambda: mt.nn.softmax_cross_entropy_with_logits(1.0, 2.0),
     ValueError, "softmax_cross_entropy_with_logits: logits must be at least 1-D"),
    (lambda: mt.nn.softmax_cross_entropy_with_logits([[0, 1]], [[1, 2]]),
     TypeError, "softmax_cross_entropy_with_logits: expected a floating-point tensor"),
    (lambda: mt.nn.sparse_softmax_cross_entropy_with_logits([1, 3], mt.ones((2, 3))),
     ValueError, r"a label value of 3 is outside the valid range of \[0, 3\)"),
    (lambda: mt.nn.sparse_softmax_cross_entropy_with_logits([1, -1], mt.ones((2, 3))),
     ValueError, r"a label value of -1 is outside the valid range of \[0, 3\)"),
    (lambda: mt.nn.sparse_softmax_cross_entropy_with_logits([1, 2, 0], mt.ones((2, 3))),
     ValueError, r"labels.shape must equal logits.shape except for the last dimension, got "
                 r"labels \(3,\) and logits \(2, 3\)"),
    (lambda: mt.nn.sparse_softmax_cross_entropy_with_logits([1.0, 2.0], mt.ones((2, 3))),
     TypeError, "labels must be int32 or int64"),
    (lambda: mt.nn.sparse_softmax_cross_entropy_with_logits([], mt.ones(())),
     ValueError, "logits cannot be a scalar"),
    (lambda: mt.nn.sparse_softmax_cross_entropy_with_logits([0, 0], mt.ones((2, 0))),
     ValueError, "must have at least one class"),
    (lambda: mt.nn.l2_loss(mt.constant([1, 2])), TypeError, "l2_loss"),
])
def test_loss_errors_name_the_op_and_shapes(call, error, message):
    with pytest.raises(error, match=message):
        call()


BAD_CALLS = [
    lambda z, i: mt.nn.sparse_softmax_cross_entropy_with_logits([5], z),
    lambda z, i: mt.nn.sigmoid_cross_entropy_with_logits(labels=mt.ones((3,)), logits=z),
    lambda z, i: mt.nn.weighted_cross_entropy_with_logits(z, z, mt.ones(3)),
    lambda z, i: mt.nn.softmax_cross_entropy_with_logits(mt.ones((2, 3)), z),
    lambda z, i: mt.nn.leaky_relu(i, alpha=[0.1]),
    lambda z, i: mt.nn.silu(z, beta=mt.constant([1, 2, 3])),
    lambda z, i: mt.nn.embedding_lookup([z, z], [0, 4]),
    lambda z, i: mt.nn.embedding_lookup(z, [0], max_norm=[1.0, 2.0]),
    lambda z, i: mt.nn.bias_add(z, mt.ones(3)),
    lambda z, i: mt.nn.batch_normalization(z, mt.ones(3), 1.0, None, None, 0.1),
    lambda z, i: mt.nn.moments(z, axes=[2]),
    lambda z, i: mt.nn.l2_normalize(z, axis=5),
]


@pytest.mark.parametrize("call", BAD_CALLS)
def test_a_bad_call_leaves_the_tape_untouched(call):
    z, i = mt.constant([[1.0, 2.0]]), mt.constant([1, 2])
    with mt.GradientTape() as tape:
        tape.watch([z, i])
        with pytest.raises((ValueError, TypeError)):
            call(z, i)
    assert tape.operations == ()


# --- shapes that vary: empty dimensions and axes (Hypothesis) --------------------------

@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_shapes_and_axes_vary(data):
    shape = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3).map(tuple),
                      label="shape")
    ndim = len(shape)
    axis = data.draw(st.integers(-ndim, ndim - 1), label="axis")
    rng = np.random.default_rng(0)
    x = rng.normal(size=shape)
    xt = mt.constant(x)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(xt)
        normalized = mt.nn.l2_normalize(xt, axis=axis)
        mean, variance = mt.nn.moments(xt, axes=[axis], keepdims=True)
        labels = mt.constant(np.full(shape, 0.5))
        xent = mt.nn.softmax_cross_entropy_with_logits(labels, xt, axis=axis)
        activations = [mt.nn.selu(xt), mt.nn.gelu(xt), mt.nn.relu6(xt), mt.nn.l2_loss(xt)]
    norm = np.sqrt(np.maximum((x * x).sum(axis, keepdims=True), 1e-12))
    np.testing.assert_allclose(normalized.numpy(), x / norm, rtol=1e-12)
    assert mean.shape == variance.shape == x.mean(axis, keepdims=True).shape
    if x.shape[axis]:
        np.testing.assert_allclose(variance.numpy(), x.var(axis, keepdims=True), atol=1e-12)
        expected = -(0.5 * (x - x.max(axis, keepdims=True) - np.log(np.exp(
            x - x.max(axis, keepdims=True)).sum(axis, keepdims=True)))).sum(axis)
        np.testing.assert_allclose(xent.numpy(), expected, rtol=1e-12)
    else:  # no classes: TensorFlow 2.21 gives zeros
        np.testing.assert_array_equal(xent.numpy(), np.zeros(tuple(np.delete(shape, axis))))
    for y in [normalized, variance, xent] + activations:
        g = tape.gradient(y, xt)
        assert g is not None and g.shape == shape and np.isfinite(g.numpy()).all()


# --- traced (mt.function, replayed op by op) under an outer tape ----------------------

@pytest.mark.parametrize("fn, args, check_kwargs", CASES)
def test_traced_calls_replay_every_op_and_differentiate(fn, args, check_kwargs):
    xs = [mt.constant(a) for a in args]
    traced = mt.function(lambda *a: mt.reduce_sum(mt.sin(fn(*a))))

    def value_and_gradients(f):
        with mt.GradientTape(persistent=True) as outer:
            outer.watch(xs)
            with mt.GradientTape() as inner:
                inner.watch(xs)
                y = f(*xs)
            g = inner.gradient(y, xs)
            s = mt.reduce_sum(g[0] * g[0])
        return [y] + g + [outer.gradient(s, xs[0])]

    traced(*xs)  # traced once, before the taped call replays it
    for a, b in zip(value_and_gradients(traced),
                    value_and_gradients(lambda *a: mt.reduce_sum(mt.sin(fn(*a))))):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14)
