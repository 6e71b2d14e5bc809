"""Tensor arguments where numbers are usual: fill's value, lstsq's
l2_regularizer (both must stay on the tape), clip_by_value's bounds in
TensorFlow's order (lo > hi gives lo), and range's dtype from its arguments'.
Expected numbers were measured with TensorFlow 2.21.
"""
import numpy as np
import pytest

import minitape as mt

A = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]])
B = np.array([[1.0], [2.0], [4.0]])


def _central(f, x, eps=1e-6):
    """d f / dx at the Python float x, by a float64 central difference."""
    return (f(x + eps) - f(x - eps)) / (2 * eps)


# --- fill ------------------------------------------------------------------------------

def test_fill_gradient_of_a_variable_value_is_the_sum_of_the_upstream_gradient():
    v = mt.Variable(3.0)
    with mt.GradientTape() as tape:
        y = mt.reduce_sum(mt.fill([2, 3], v) * mt.constant([[0.0, 1, 2], [3, 4, 5]]))
    assert float(y) == 45.0
    assert float(tape.gradient(y, v)) == 15.0  # TF 2.21: 15.0


def test_fill_second_order_jvp_and_dtype_of_a_tensor_value():
    v = mt.Variable(3.0, dtype=mt.float64)
    w = mt.constant([[0.0, 1, 2], [3, 4, 5]], dtype=mt.float64)
    loss = lambda x: mt.reduce_sum(mt.fill([2, 3], x) ** 2 * w)  # noqa: E731
    with mt.GradientTape() as outer:
        with mt.GradientTape() as inner:
            y = loss(v)
        g = inner.gradient(y, v)
    # TF 2.21: y = 135, dy/dv = 90, d2y/dv2 = 30
    assert (float(y), float(g), float(outer.gradient(g, v))) == (135.0, 90.0, 30.0)
    at = lambda x: float(loss(mt.constant(x, mt.float64)))  # noqa: E731
    np.testing.assert_allclose(float(g), _central(at, 3.0), rtol=1e-8)
    with mt.autodiff.ForwardAccumulator(v, mt.constant(2.0, mt.float64)) as acc:
        f = mt.fill([2, 3], v)
    np.testing.assert_array_equal(acc.jvp(f).numpy(), np.full((2, 3), 2.0))  # TF 2.21
    # a tensor value keeps its dtype; numbers are as before
    assert mt.fill([2], mt.constant(2, dtype=mt.int64)).dtype == mt.int64  # TF 2.21: int64
    assert float(mt.fill([], mt.constant(1.5))) == 1.5
    assert mt.fill([2], 1.5).dtype == mt.float32
    with pytest.raises(ValueError, match="fill: value must be a scalar"):
        mt.fill([2], mt.constant([1.0, 2.0]))  # TF 2.21: InvalidArgumentError


# --- lstsq's l2_regularizer ------------------------------------------------------------

def _lstsq_sum(a, b, r):
    return mt.reduce_sum(mt.linalg.lstsq(mt.constant(a), mt.constant(b), l2_regularizer=r))


@pytest.mark.parametrize("a, b, expected", [
    # TF 2.21 (float64): y, dy/dr, d2y/dr2 at r = 0.5
    (A, B, (0.6113207547169798, 0.0122463510145982, -0.05727358826414519)),
    (A.T.copy(), np.array([[1.0], [2.0]]),
     (0.44528301886792576, -0.17742969028124225, 0.548976134661514)),
], ids=["overdetermined", "underdetermined"])
def test_lstsq_is_differentiable_in_a_tensor_regularizer(a, b, expected):
    r = mt.Variable(0.5, dtype=mt.float64)
    with mt.GradientTape() as outer:
        with mt.GradientTape() as inner:
            y = _lstsq_sum(a, b, r)
        g = inner.gradient(y, r)
    h = outer.gradient(g, r)
    np.testing.assert_allclose([float(y), float(g), float(h)], expected, rtol=1e-10)
    np.testing.assert_allclose(float(g), _central(lambda x: float(_lstsq_sum(a, b, x)), 0.5),
                               rtol=1e-6)
    with mt.autodiff.ForwardAccumulator(r, mt.constant(1.0, mt.float64)) as acc:
        y = _lstsq_sum(a, b, r)
    np.testing.assert_allclose(float(acc.jvp(y)), expected[1], rtol=1e-10)


def test_lstsq_regularizer_number_unchanged_and_tensor_checked():
    np.testing.assert_allclose(float(_lstsq_sum(A, B, 0.5)), 0.6113207547169798, rtol=1e-12)
    with pytest.raises(TypeError, match="linalg.lstsq.*float64 and float32"):
        _lstsq_sum(A, B, mt.constant(0.5))  # TF 2.21: InvalidArgumentError in Mul
    with pytest.raises(ValueError, match="linalg.lstsq: l2_regularizer must be a scalar"):
        _lstsq_sum(A, B, mt.constant([0.5, 0.5], dtype=mt.float64))


# --- clip_by_value: TensorFlow's max(min(t, hi), lo) -----------------------------------

# (t, lo, hi, value, d/dt, d/dlo, d/dhi) of sum(clip(t, lo, hi) * [1, 10, 100, 1000]),
# all from TF 2.21 (float64)
CLIP_CASES = [
    ([1.0, -2.0, 3.0], 2.0, -1.0, 222.0, [0, 0, 0], 111.0, 0.0),          # inverted
    ([2.0, -1.0, 0.0], 2.0, -1.0, 222.0, [0, 0, 0], 111.0, 0.0),          # inverted, ties
    ([0.0, 1.0, 2.0, 3.0], 1.0, 2.0, 2211.0, [0, 10, 100, 0], 1.0, 1000.0),  # ties
    ([1.0, 1.0], 1.0, 1.0, 11.0, [1, 10], 0.0, 0.0),
    ([2.0, 0.0, 5.0], 2.0, 2.0, 222.0, [1, 0, 0], 10.0, 100.0),
]


def test_clip_by_value_inverted_bounds_give_the_lower_one():
    np.testing.assert_array_equal(  # TF 2.21: [2, 2, 2]
        mt.clip_by_value(mt.constant([1.0, -2.0, 3.0]), 2.0, -1.0).numpy(), [2, 2, 2])


@pytest.mark.parametrize("t, lo, hi, value, d_t, d_lo, d_hi", CLIP_CASES)
def test_clip_by_value_gradient_and_jvp_match_tensorflow(t, lo, hi, value, d_t, d_lo, d_hi):
    xs = [mt.Variable(mt.constant(x, dtype=mt.float64)) for x in (t, lo, hi)]
    w = mt.constant([1.0, 10.0, 100.0, 1000.0][:len(t)], dtype=mt.float64)
    with mt.GradientTape() as tape:
        y = mt.reduce_sum(mt.clip_by_value(*xs) * w)
    assert float(y) == value
    g = tape.gradient(y, xs)
    np.testing.assert_array_equal(g[0].numpy(), d_t)
    assert (float(g[1]), float(g[2])) == (d_lo, d_hi)
    for k, expected in enumerate((d_t, d_lo, d_hi)):  # one tangent at a time
        tangents = [mt.zeros_like(x) for x in xs]
        tangents[k] = mt.ones_like(xs[k])
        with mt.autodiff.ForwardAccumulator(xs, tangents) as acc:
            y = mt.reduce_sum(mt.clip_by_value(*xs) * w)
        assert float(acc.jvp(y)) == float(np.sum(expected))


# --- range's dtype ---------------------------------------------------------------------

I64 = lambda x: mt.constant(x, dtype=mt.int64)  # noqa: E731
F64 = lambda x: mt.constant(x, dtype=mt.float64)  # noqa: E731


@pytest.mark.parametrize("make, dtype, values", [
    # TF 2.21: the widest of int32 < int64 < float16 < float32 < float64 wins;
    # Python ints are int32, Python floats float32, NumPy values keep theirs
    (lambda: mt.range(I64(3)), "int64", [0, 1, 2]),
    (lambda: mt.range(mt.Variable(I64(3))), "int64", [0, 1, 2]),
    (lambda: mt.range(mt.constant(3)), "int32", [0, 1, 2]),
    (lambda: mt.range(I64(1), 5), "int64", [1, 2, 3, 4]),
    (lambda: mt.range(1, I64(5)), "int64", [1, 2, 3, 4]),
    (lambda: mt.range(mt.constant(1), I64(4)), "int64", [1, 2, 3]),
    (lambda: mt.range(I64(1), 5.0), "float32", [1, 2, 3, 4]),
    (lambda: mt.range(I64(1), 3, 0.5), "float32", [1, 1.5, 2, 2.5]),
    (lambda: mt.range(F64(3.0)), "float64", [0, 1, 2]),
    (lambda: mt.range(F64(1.0), 4.5), "float64", [1, 2, 3, 4]),
    (lambda: mt.range(mt.constant(1.0), F64(3.0)), "float64", [1, 2]),
    (lambda: mt.range(mt.constant(3.0, dtype=mt.float16)), "float16", [0, 1, 2]),
    (lambda: mt.range(mt.constant(1), 3.5), "float32", [1, 2, 3]),
    (lambda: mt.range(np.int64(3)), "int64", [0, 1, 2]),
    (lambda: mt.range(np.float64(3)), "float64", [0, 1, 2]),
    (lambda: mt.range(2**31, 2**31 + 2), "int64", [2**31, 2**31 + 1]),
    (lambda: mt.range(3, 5.0), "float32", [3, 4]),
    # dtype=: tensors are cast (toward zero) first
    (lambda: mt.range(I64(3), dtype=mt.float64), "float64", [0, 1, 2]),
    (lambda: mt.range(mt.constant(3.5), dtype=mt.int32), "int32", [0, 1, 2]),
    (lambda: mt.range(F64(-2.7), 3, dtype=mt.int64), "int64", [-2, -1, 0, 1, 2]),
])
def test_range_dtype_follows_tensorflow(make, dtype, values):
    r = make()
    assert r.dtype == dtype
    np.testing.assert_array_equal(r.numpy(), values)


def test_range_rejects_what_tensorflow_rejects():
    with pytest.raises(TypeError, match="range: limit"):
        mt.range(np.int8(3))  # TF 2.21: AssertionError (int8 is not a range dtype)
    with pytest.raises(TypeError, match="range: limit"):
        mt.range(3.5, dtype=mt.int32)  # TF 2.21: TypeError, cannot convert 3.5 to int32
