"""Ops at their singular points and the arguments minitape used to refuse,
each against the number TensorFlow 2.21 gives (tests/conformance/
cases_singular_points.py runs the same programs under TensorFlow)."""
import numpy as np
import pytest

import minitape as mt


@pytest.mark.parametrize("dtype", [mt.int32, mt.int64])
def test_round_of_an_integer_tensor_is_the_tensor(dtype):
    # TensorFlow: tf.round returns an integer tensor unchanged, of its dtype
    x = mt.constant([1, -2, 3], dtype=dtype)
    y = mt.round(x)
    assert y.dtype == dtype
    np.testing.assert_array_equal(y.numpy(), [1, -2, 3])
    np.testing.assert_array_equal(mt.round(mt.constant([0.5, 1.5, -2.5])).numpy(), [0, 2, -2])
    with pytest.raises(TypeError, match="round"):
        mt.round(mt.constant([True]))   # TensorFlow: InvalidArgumentError


def test_round_of_floats_has_no_gradient():
    x = mt.constant([1.2, 2.5])
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.round(x)
    assert tape.gradient(y, x) is None   # TensorFlow: None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_l2_normalize_takes_a_tensor_epsilon(dtype):
    # TensorFlow: y = [[.6, .8], [0, 0], [.1, 0]], d sum(y * [1, 2]) / d eps = -5e4
    x = mt.constant(np.array([[3.0, 4.0], [0.0, 0.0], [1e-4, 0.0]], dtype))
    w = mt.constant(np.array([[1.0, 2.0]], dtype))
    for eps in (mt.constant(dtype(1e-6)), mt.constant(np.array([1e-6], dtype)),
                mt.Variable(dtype(1e-6))):
        with mt.GradientTape() as tape:
            tape.watch([x, eps])
            y = mt.math.l2_normalize(x, axis=1, epsilon=eps)
            s = mt.reduce_sum(y * w)
        gx, ge = tape.gradient(s, [x, eps])
        rtol = 1e-6 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(y.numpy(), [[0.6, 0.8], [0, 0], [0.1, 0]], rtol=rtol)
        np.testing.assert_allclose(gx.numpy()[1:], [[1000, 2000], [1000, 2000]], rtol=rtol)
        np.testing.assert_allclose(np.ravel(ge.numpy()), [-5e4], rtol=rtol)


def test_l2_normalize_epsilon_gradient_matches_finite_differences():
    x = np.array([0.001, 0.002])

    def f(x, e):
        w = mt.constant([1.0, -3.0], dtype=mt.float64)
        return mt.reduce_sum(mt.math.l2_normalize(x, epsilon=e) * w)

    xs = mt.constant(x)
    for e in (1e-5, 1e-7):   # epsilon above and below sum(x^2) = 5e-6
        es = mt.constant(e, dtype=mt.float64)
        with mt.GradientTape(persistent=True) as outer:
            outer.watch([xs, es])
            with mt.GradientTape() as inner:
                inner.watch([xs, es])
                s = f(xs, es)
            gx, ge = inner.gradient(s, [xs, es])
        h = e * 1e-5
        fd = (float(f(xs, mt.constant(e + h, mt.float64)))
              - float(f(xs, mt.constant(e - h, mt.float64)))) / (2 * h)
        np.testing.assert_allclose(float(ge), fd, rtol=1e-6)
        # the second derivative in epsilon, by differences of the gradient
        g2 = outer.gradient(ge, es)

        def grad_e(e):
            es = mt.constant(e, dtype=mt.float64)
            with mt.GradientTape() as tape:
                tape.watch(es)
                s = f(xs, es)
            return float(tape.gradient(s, es))
        fd2 = (grad_e(e + h) - grad_e(e - h)) / (2 * h)
        np.testing.assert_allclose(float(g2), fd2, rtol=1e-5, atol=1e-6 * abs(fd2) + 1e-12)


def test_l2_normalize_epsilon_of_another_dtype_or_shape_is_refused():
    x = mt.constant([[1.0, 2.0]], dtype=mt.float64)
    with pytest.raises(TypeError, match="l2_normalize"):   # TensorFlow: InvalidArgumentError
        mt.math.l2_normalize(x, epsilon=mt.constant(1e-6))
    with pytest.raises(ValueError, match="l2_normalize: epsilon of shape"):
        mt.math.l2_normalize(x, axis=1, epsilon=mt.constant([1e-6, 1e-6, 1e-6], mt.float64))


def test_clip_by_value_of_a_complex_tensor_names_clip_by_value():
    # TensorFlow: InvalidArgumentError (no complex kernel for the clip's Minimum)
    with pytest.raises(TypeError, match=r"^clip_by_value: complex input"):
        mt.clip_by_value(mt.constant([1 + 2j]), 0.0, 1.0)


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
def test_atan2_second_derivative_at_the_origin_is_nan(dtype):
    # TensorFlow: gradient and second derivative NaN at the origin (the old
    # rule gave -inf and inf, a number where no derivative exists)
    y = mt.constant([0.0, 1.0], dtype=dtype)
    x = mt.constant([0.0, 0.0], dtype=dtype)
    with mt.GradientTape(persistent=True) as outer:
        outer.watch([y, x])
        with mt.GradientTape() as inner:
            inner.watch([y, x])
            a = mt.math.atan2(y, x)
        gy, gx = inner.gradient(a, [y, x])
        s = mt.reduce_sum(gy) + mt.reduce_sum(gx)
    assert np.isnan(gy.numpy()[0]) and np.isnan(gx.numpy()[0])
    hy, hx = outer.gradient(s, [y, x])
    assert np.isnan(hy.numpy()[0]) and np.isnan(hx.numpy()[0])
    np.testing.assert_allclose([hy.numpy()[1], hx.numpy()[1]], [1, 1], rtol=1e-6)  # TF too
    # the branch where did not pick: atan2's rule is not masked, so the origin
    # still sends back NaN, as in TensorFlow ([nan, 0.4] and [nan, -0.2] here)
    y, x = mt.constant([0.0, 1.0], dtype=dtype), mt.constant([0.0, 2.0], dtype=dtype)
    with mt.GradientTape() as tape:
        tape.watch([y, x])
        b = mt.where(x > 0, mt.math.atan2(y, x), 0.0)
    np.testing.assert_allclose([g.numpy() for g in tape.gradient(b, [y, x])],
                               [[np.nan, 0.4], [np.nan, -0.2]], rtol=1e-6)
