"""Issue 30's new ops: xlog1py, segment_max, segment_min, segment_mean,
unsorted_segment_sum, tensor_scatter_nd_update and tensor_scatter_nd_add.
TensorFlow 2.21's numbers, any shapes against NumPy, traced and compiled
calls, bad input. (Finite differences to third order, pfor Jacobians, forward
mode, compiled and saved programs: their op-table rows in op_table_elementwise.py
and op_table_shapes.py; conformance: tests/conformance/cases_issue30_ops.py.)"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitape as mt
from minitape.test import check_gradients


def value_and_gradients(f, *args):
    xs = [mt.constant(a) for a in args]
    with mt.GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    return y, tape.gradient(y, xs)


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


DATA = np.array([[1.0, 2.0], [3.0, 1.0], [5.0, 6.0], [2.0, 2.0]], np.float32)
WEIGHTS = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
IDS = [0, 0, 2, 2]


@pytest.mark.parametrize("name, value, grad", [
    # TensorFlow 2.21: value and gradient of segment_x(DATA, [0, 0, 2, 2]) * WEIGHTS
    ("segment_max", [[3, 4], [0, 0], [25, 36]], [[0, 2], [1, 0], [5, 6], [0, 0]]),
    ("segment_min", [[1, 2], [0, 0], [10, 12]], [[1, 0], [0, 2], [0, 0], [5, 6]]),
    ("segment_mean", [[2, 3], [0, 0], [17.5, 24]], [[0.5, 1], [0.5, 1], [2.5, 3], [2.5, 3]]),
    ("segment_sum", [[4, 6], [0, 0], [35, 48]], [[1, 2], [1, 2], [5, 6], [5, 6]]),
])
def test_segment_ops_are_tensorflows(name, value, grad):
    fn = getattr(mt.math, name)
    y, (g,) = value_and_gradients(lambda x: fn(x, IDS) * WEIGHTS, DATA)
    close(y, value)
    close(g, grad)


def test_ties_share_the_gradient_as_in_tensorflow():
    _, (g,) = value_and_gradients(lambda x: mt.math.segment_max(x, [0, 0, 0]), [1.0, 3.0, 3.0])
    close(g, [0.0, 0.5, 0.5])                                   # TensorFlow 2.21
    _, (g,) = value_and_gradients(lambda x: mt.math.segment_mean(x, [0, 0, 0]), [1.0, 3.0, 3.0])
    close(g, [1 / 3, 1 / 3, 1 / 3])


def test_unsorted_segment_sum_is_tensorflows():
    d = mt.constant(DATA)
    close(mt.math.unsorted_segment_sum(d, [1, 0, 1, 3], 4),
          [[3, 1], [6, 8], [0, 0], [2, 2]])                     # TensorFlow 2.21
    y, (g,) = value_and_gradients(
        lambda x: mt.math.unsorted_segment_sum(x, [1, -1, 1, 0], 2) * [[1.0, 2.0], [3.0, 4.0]],
        DATA)
    close(y, [[2, 4], [18, 32]])
    close(g, [[3, 4], [0, 0], [3, 4], [1, 2]])                  # the dropped row: 0
    y, (g,) = value_and_gradients(
        lambda x: mt.math.unsorted_segment_sum(x, [[0, 1], [1, 2], [0, 0], [2, 2]], 3), DATA)
    close(y, [12, 5, 5])
    close(g, np.ones((4, 2)))
    whole = mt.math.unsorted_segment_sum(d, 1, 3)               # a scalar id: all of data
    assert whole.shape == (3, 4, 2) and float(mt.reduce_sum(whole[1] - d)) == 0.0


def test_xlog1py_is_tensorflows():
    y, (gx, gy) = value_and_gradients(mt.math.xlog1py, np.array([0, 1, 2, 0.5], np.float32),
                                      np.array([-1, 0, 3, -0.5], np.float32))
    close(y, [0.0, 0.0, 2.7725887, -0.34657359])               # TensorFlow 2.21
    close(gx, [0.0, 0.0, 1.3862944, -0.6931472])
    close(gy, [0.0, 1.0, 0.5, 1.0])
    y, (gx, gy) = value_and_gradients(mt.math.xlog1py, np.array([0, 1], np.float32),
                                      np.array([-1, -1], np.float32))
    assert y.numpy().tolist() == [0.0, -np.inf]
    assert gx.numpy().tolist() == [0.0, -np.inf] and gy.numpy().tolist() == [0.0, np.inf]
    check_gradients(mt.math.xlog1py, [np.array([0.3, -1.2, 2.0]), np.array([0.5, 1.5, -0.4])])


def test_tensor_scatters_are_tensorflows():
    t = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
    w = WEIGHTS
    y, (gt, gu) = value_and_gradients(
        lambda a, b: mt.tensor_scatter_nd_update(a, [[0], [2]], b) * w, t,
        np.array([[10.0, 20.0], [30.0, 40.0]], np.float32))
    close(y, [[10, 40], [9, 16], [150, 240]])                   # TensorFlow 2.21
    close(gt, [[0, 0], [3, 4], [0, 0]])
    close(gu, [[1, 2], [5, 6]])
    y, (gt, gu) = value_and_gradients(
        lambda a, b: mt.tensor_scatter_nd_add(a, [[0, 1], [0, 1], [1, 0]], b) * w, t,
        np.array([10.0, 30.0, 7.0], np.float32))
    close(y, [[1, 84], [30, 16], [25, 36]])
    close(gt, w)
    close(gu, [2, 2, 3])
    # where an index repeats, update keeps the last slice, as TensorFlow does
    close(mt.tensor_scatter_nd_update(t, [[0, 1], [0, 1]], [10.0, 30.0]), [[1, 30], [3, 4], [5, 6]])


# --- any shapes ---------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(st.data())
def test_segment_ops_match_numpy_on_any_shape(data):
    n = data.draw(st.integers(1, 6))
    rest = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
    x = data.draw(hnp.arrays(np.float64, (n,) + rest, elements=st.floats(-5, 5)))
    ids = np.sort(data.draw(hnp.arrays(np.int32, (n,), elements=st.integers(0, 4))))
    rows = ids[-1] + 1
    for name, reduce in [("segment_max", np.max), ("segment_min", np.min),
                         ("segment_mean", np.mean), ("segment_sum", np.sum)]:
        expected = np.zeros((rows,) + rest)
        for k in range(rows):
            if (ids == k).any():
                expected[k] = reduce(x[ids == k], axis=0)
        close(getattr(mt.math, name)(x, ids), expected, 1e-12)
    num = data.draw(st.integers(0, 5))
    free = data.draw(hnp.arrays(np.int32, (n,), elements=st.integers(-1, max(num - 1, -1))))
    expected = np.zeros((num,) + rest)
    for i, k in enumerate(free):
        if k >= 0:
            expected[k] += x[i]
    close(mt.math.unsorted_segment_sum(x, free, num), expected, 1e-12)


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_tensor_scatters_match_numpy_on_any_shape(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
    k = data.draw(st.integers(1, len(shape)))
    count = data.draw(st.integers(0, 4))
    idx = np.stack([data.draw(hnp.arrays(np.int64, (count,), elements=st.integers(0, d - 1)))
                    for d in shape[:k]], axis=-1).reshape(count, k)
    t = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-5, 5)))
    u = data.draw(hnp.arrays(np.float64, (count,) + shape[k:], elements=st.floats(-5, 5)))
    added, updated = t.copy(), t.copy()
    for i in range(count):
        added[tuple(idx[i])] += u[i]
        updated[tuple(idx[i])] = u[i]   # one after the other: the last one stays
    close(mt.tensor_scatter_nd_add(t, idx, u), added, 1e-12)
    close(mt.tensor_scatter_nd_update(t, idx, u), updated, 1e-12)


# --- in functions --------------------------------------------------------------------------

@pytest.mark.parametrize("jit", [False, True])
def test_traced_and_compiled_calls_follow_each_calls_ids(jit):
    @mt.function(jit_compile=jit)
    def f(x, ids, where, u):
        return (mt.math.segment_max(x, ids), mt.math.unsorted_segment_sum(x, ids, 3),
                mt.tensor_scatter_nd_update(x, where, u), mt.tensor_scatter_nd_add(x, where, u))

    x = mt.constant([[1.0, 2.0], [3.0, 1.0], [5.0, 6.0]])
    u = mt.constant([[7.0, 8.0]])
    for ids, where in [([0, 0, 1], [[2]]), ([0, 1, 1], [[0]])]:
        got = f(x, mt.constant(ids), mt.constant(where), u)
        eager = (mt.math.segment_max(x, ids), mt.math.unsorted_segment_sum(x, ids, 3),
                 mt.tensor_scatter_nd_update(x, where, u), mt.tensor_scatter_nd_add(x, where, u))
        for a, b in zip(got, eager):
            close(a, b, 0)
    with pytest.raises(ValueError, match="segment_max: in this traced function"):
        f(x, mt.constant([0, 1, 2]), mt.constant([[0]]), u)   # 3 segments, traced with 2


# --- bad input -------------------------------------------------------------------------------

BAD = [
    (lambda x: mt.math.segment_max(x, [1, 0, 2]), ValueError, ["segment_max", "sorted"]),
    (lambda x: mt.math.segment_min(x, [0, 0]), ValueError, ["segment_min", "(2,)", "(3, 2)"]),
    (lambda x: mt.math.segment_mean(x, [0.0, 0.0, 1.0]), TypeError, ["segment_mean", "float"]),
    (lambda x: mt.math.segment_max(mt.constant([True]), [0]), TypeError, ["segment_max", "bool"]),
    (lambda x: mt.math.unsorted_segment_sum(x, [0, 1, 5], 4), ValueError,
     ["unsorted_segment_sum", "segment_ids[2] = 5", "[0, 4)"]),
    (lambda x: mt.math.unsorted_segment_sum(x, [0, 1], 4), ValueError,
     ["unsorted_segment_sum", "(3, 2)", "(2,)"]),
    (lambda x: mt.math.unsorted_segment_sum(x, [0, 1, 1], -1), ValueError,
     ["unsorted_segment_sum", "-1"]),
    (lambda x: mt.tensor_scatter_nd_update(x, [[3]], [[1.0, 2.0]]), ValueError,
     ["tensor_scatter_nd_update", "[3]", "[3, 2]"]),
    (lambda x: mt.tensor_scatter_nd_add(x, [[0]], [[1.0, 2.0, 3.0]]), ValueError,
     ["tensor_scatter_nd_add", "[1, 2]", "(1, 3)"]),
    (lambda x: mt.tensor_scatter_nd_add(x, [[0, 1, 0]], [1.0]), ValueError,
     ["tensor_scatter_nd_add", "(1, 3)", "(3, 2)"]),
    (lambda x: mt.tensor_scatter_nd_update(x, [[0]], mt.constant([[1, 2]])), TypeError,
     ["tensor_scatter_nd_update", "int32", "float32"]),
    (lambda x: mt.math.xlog1py(mt.constant([1]), mt.constant([1])), TypeError,
     ["xlog1py", "int32"]),
]


@pytest.mark.parametrize("call, error, fragments", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_input_names_the_op_and_leaves_the_tape_alone(call, error, fragments):
    x = mt.constant([[1.0, 2.0], [3.0, 1.0], [5.0, 6.0]])
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        before = len(tape.operations)
        with pytest.raises(error) as info:
            call(x)
        assert len(tape.operations) == before
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))
    close(tape.gradient(y, x), 2 * x.numpy())


@pytest.mark.parametrize("name", ["segment_max", "segment_min", "segment_mean", "segment_sum"])
def test_a_traced_segment_op_checks_the_last_id_before_it_allocates(name):
    f = mt.function(lambda x, ids: getattr(mt.math, name)(x, ids),
                    input_signature=[mt.TensorSpec([3]), mt.TensorSpec([3], mt.int64)])
    x = mt.constant([1.0, 2.0, 3.0])
    close(f(x, mt.constant([0, 0, 1], mt.int64)), getattr(mt.math, name)(x, [0, 0, 1]))
    with pytest.raises(ValueError, match=f"{name}: in this traced function there were 2 "):
        f(x, mt.constant([0, 0, 10 ** 12]))   # eagerly: 10**12 rows
