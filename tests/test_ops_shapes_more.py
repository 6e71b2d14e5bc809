"""The shapes, indexing, scans, sorting and statistics ops of issue 16:
values against NumPy in float32 and float64, the dtypes TensorFlow returns,
bad arguments (an error naming the op and the value, nothing left on the
tape), the places where TensorFlow's derivative is a choice (ties, zeros,
NaN), traced functions whose indices change between calls, and Hypothesis
over shapes and axes, empty dims included. The op table rows
(op_table_shapes.py) check the calculus; tests/conformance/cases_shapes_more.py
runs the same programs under TensorFlow."""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitape as mt
from minitape.test import check_gradients
from test_bad_arguments import ANY_BAD, EXPECTED, Scene

SETTINGS = settings(max_examples=30, deadline=None)
rng = np.random.default_rng(7)
X = rng.uniform(-2.0, 2.0, (2, 3, 4))


def grad(fn, *xs):
    xs = [mt.constant(np.asarray(x, np.float64)) for x in xs]
    with mt.GradientTape() as tape:
        tape.watch(xs)
        y = fn(*xs)
    return [None if g is None else g.numpy() for g in tape.gradient(y, xs)]


def jvp(fn, x, v):
    x = mt.constant(np.asarray(x, np.float64))
    with mt.autodiff.ForwardAccumulator(x, mt.constant(np.asarray(v, np.float64))) as acc:
        y = fn(x)
    return acc.jvp(y).numpy()


# --- values and dtypes against NumPy ---------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_match_numpy(dtype):
    x = X.astype(dtype)
    t = mt.constant(x)
    same = [
        (mt.math.reduce_variance(t, axis=1), np.var(x, axis=1)),
        (mt.math.reduce_std(t, axis=[0, 2], keepdims=True), np.std(x, axis=(0, 2),
                                                                   keepdims=True)),
        (mt.reduce_logsumexp(t, axis=-1), np.log(np.exp(x).sum(-1))),
        (mt.math.reduce_euclidean_norm(t, axis=0), np.sqrt((x * x).sum(0))),
        (mt.cumsum(t, axis=1), np.cumsum(x, axis=1)),
        (mt.math.cumprod(t, axis=2, reverse=True), np.cumprod(x[..., ::-1], 2)[..., ::-1]),
        (mt.sort(t, axis=1), np.sort(x, axis=1)),
        (mt.sort(t, direction="DESCENDING"), -np.sort(-x, axis=-1)),
        (mt.gather(t, [3, 0, 0], axis=2), np.take(x, [3, 0, 0], axis=2)),
        (mt.gather_nd(t, [[1, 2], [0, 0]]), x[[1, 0], [2, 0]]),
        (mt.tile(t, [1, 2, 1]), np.tile(x, [1, 2, 1])),
        (mt.repeat(t, [2, 0, 1], axis=1), np.repeat(x, [2, 0, 1], axis=1)),
        (mt.roll(t, [1, -5], axis=[2, 1]), np.roll(x, (1, -5), axis=(2, 1))),
        (mt.reverse(t, [1, 2]), x[:, ::-1, ::-1]),
        (mt.tensordot(t, t, [[0, 2], [0, 2]]), np.tensordot(x, x, [[0, 2], [0, 2]])),
        (mt.pad(t, [[0, 0], [2, 1], [3, 3]], mode="REFLECT"),
         np.pad(x, [[0, 0], [2, 1], [3, 3]], mode="reflect")),
        (mt.pad(t, [[1, 2], [3, 0], [0, 4]], mode="SYMMETRIC"),
         np.pad(x, [[1, 2], [3, 0], [0, 4]], mode="symmetric")),
        (mt.boolean_mask(t, x[:, :, 0] > 0), x[x[:, :, 0] > 0]),
    ]
    tol = 1e-6 if dtype == np.float64 else 1e-5
    for k, (got, want) in enumerate(same):
        assert got.dtype == dtype, k
        np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol, err_msg=str(k))
    top = mt.math.top_k(t, k=3)
    np.testing.assert_array_equal(top.values.numpy(), -np.sort(-x, axis=-1)[..., :3])
    assert top.indices.dtype == np.int32
    parts = mt.split(t, [1, -1, 2], axis=2)
    for got, want in zip(parts, np.split(x, [1, 2], axis=2)):
        np.testing.assert_array_equal(got.numpy(), want)


def test_dtypes_are_tensorflows():
    x = mt.constant(X.astype(np.float32))
    assert mt.argmax(x).dtype == np.int64 and mt.argmin(x, 1, mt.int32).dtype == np.int32
    assert mt.math.count_nonzero(x).dtype == np.int64
    assert mt.math.count_nonzero(x, dtype=mt.int32).dtype == np.int32
    assert mt.where(x > 0).dtype == np.int64 and mt.where(x > 0).shape[1] == 3
    assert mt.one_hot([0, 1], 2).dtype == np.float32
    assert mt.one_hot([0, 1], 2, on_value=3).dtype == np.int32
    assert mt.argsort(x).dtype == np.int32
    assert mt.math.top_k(x, 2, index_type=mt.int64).indices.dtype == np.int64
    assert mt.rank(x).dtype == np.int32 and int(mt.rank(x)) == 3
    assert mt.math.reduce_euclidean_norm(mt.constant([3, 4])).dtype == np.int32
    assert int(mt.math.reduce_euclidean_norm(mt.constant([3, 4]))) == 5
    assert mt.cumsum(mt.constant([1, 2, 3])).dtype == np.int32
    assert mt.reduce_any(x > 0).dtype == np.bool_


def test_namespaces_are_tensorflows():
    for name in ("reduce_logsumexp", "reduce_any", "reduce_all", "argmax", "argmin", "cumsum",
                 "split", "tile", "repeat", "roll", "reverse", "sort", "argsort", "gather",
                 "gather_nd", "boolean_mask", "one_hot", "scatter_nd", "meshgrid", "rank",
                 "tensordot", "where"):
        assert hasattr(mt, name), name
    for name in ("reduce_variance", "reduce_std", "reduce_logsumexp", "reduce_euclidean_norm",
                 "reduce_any", "reduce_all", "count_nonzero", "argmax", "argmin", "cumsum",
                 "cumprod", "segment_sum", "top_k"):
        assert hasattr(mt.math, name), name
    assert mt.nn.top_k is mt.math.top_k and mt.linalg.tensordot is mt.tensordot
    for name in ("reduce_variance", "count_nonzero", "cumprod", "segment_sum", "top_k"):
        assert not hasattr(mt, name), name  # TensorFlow has them in tf.math only


def test_edge_values_are_tensorflows():
    nan, inf = np.nan, np.inf
    # TensorFlow's argmax skips NaN (index 0 when all are NaN); ties: the first
    assert [int(mt.argmax(mt.constant(v))) for v in ([nan, 1.0], [1.0, nan, 3.0],
                                                     [nan, nan], [1.0, 3.0, 3.0])] == [1, 2, 0, 1]
    assert float(mt.reduce_logsumexp(mt.constant([-inf, -inf]))) == -inf
    assert float(mt.reduce_logsumexp(mt.constant([inf, 1.0]))) == inf
    assert float(mt.reduce_logsumexp(mt.constant([1000.0, 1000.0]))) == pytest.approx(
        1000.0 + np.log(2.0))
    np.testing.assert_array_equal(mt.reduce_logsumexp(mt.zeros([0, 2]), axis=0).numpy(),
                                  [-inf, -inf])
    assert np.isnan(mt.math.reduce_variance(mt.zeros([0]))).all()
    assert int(mt.math.reduce_euclidean_norm(mt.constant([50000, 50000]))) == 26552  # int32
    np.testing.assert_array_equal(mt.one_hot([0, -1, 3], 3).numpy(),
                                  [[1, 0, 0], [0, 0, 0], [0, 0, 0]])
    # Python numbers take `dtype` where they are exact there, as TensorFlow's
    # dtype_hint (minitape read 1.0 as float32 and refused the float64 dtype).
    hot = mt.one_hot([0, 2], 3, on_value=1.0, off_value=0.0, dtype=mt.float64)
    assert hot.dtype == np.float64
    np.testing.assert_array_equal(hot.numpy(), [[1, 0, 0], [0, 0, 1]])
    assert mt.one_hot([0], 2, on_value=1, off_value=0, dtype=mt.float64).dtype == np.float64
    assert mt.one_hot([0], 2, on_value=1.5, off_value=0.0, dtype=mt.float16).dtype == np.float16
    with pytest.raises(TypeError, match="one_hot"):  # a float32 tensor is not converted
        mt.one_hot([0], 2, on_value=mt.constant(1.0), off_value=0.0, dtype=mt.float64)
    np.testing.assert_array_equal(mt.argsort(mt.constant([1.0, 3.0, 3.0, 1.0]),
                                             direction="DESCENDING").numpy(), [1, 2, 0, 3])
    np.testing.assert_array_equal(mt.scatter_nd([[1], [3], [1]], mt.constant([1.0, 2.0, 3.0]),
                                                 [5]).numpy(), [0, 4, 0, 2, 0])
    np.testing.assert_array_equal(mt.math.segment_sum(mt.constant([1.0, 2.0, 3.0]),
                                                      [0, 2, 2]).numpy(), [1, 0, 5])
    np.testing.assert_array_equal(mt.cumsum(mt.constant([[1.0, 2.0, 3.0]]), 1, exclusive=True,
                                            reverse=True).numpy(), [[5, 3, 0]])
    np.testing.assert_array_equal(mt.math.cumprod(mt.constant([2.0, 3.0, 4.0]),
                                                  exclusive=True).numpy(), [1, 2, 6])


# --- derivatives where TensorFlow's answer is a choice ----------------------------------

def test_sort_and_top_k_ties_send_the_gradient_to_one_entry():
    # TensorFlow: sort([3, 1, 3]) takes x[0] then x[2]; top_k too
    w = mt.constant([1.0, 2.0, 3.0], mt.float64)
    assert grad(lambda v: mt.reduce_sum(mt.sort(v) * w), [3.0, 1.0, 3.0])[0].tolist() == \
        [2.0, 1.0, 3.0]
    assert grad(lambda v: mt.reduce_sum(mt.math.top_k(v, 2).values * w[:2]),
                [3.0, 1.0, 3.0])[0].tolist() == [1.0, 0.0, 2.0]
    assert jvp(lambda v: mt.math.top_k(v, 2).values, [3.0, 1.0, 3.0],
               [1.0, 2.0, 3.0]).tolist() == [1.0, 3.0]


def test_cumprod_at_zeros_has_the_true_derivative():
    # TensorFlow's rule (cumsum(y * g) / x with div_no_nan) gives [1, 0, 0] and
    # the JVP [1, 0, 0]; the true derivatives, which minitape returns:
    assert grad(lambda v: mt.reduce_sum(mt.math.cumprod(v)), [2.0, 0.0, 3.0])[0].tolist() == \
        [1.0, 8.0, 0.0]
    assert jvp(lambda v: mt.math.cumprod(v), [2.0, 0.0, 3.0], [1.0, 1.0, 1.0]).tolist() == \
        [1.0, 2.0, 6.0]
    check_gradients(lambda v: mt.math.cumprod(v, exclusive=True),
                    [np.array([0.0, 1.5, 0.0, -0.5])], order=2)


def test_nan_derivatives_as_tensorflow():
    # TensorFlow: NaN for the std of equal entries and the norm of zeros, both directions
    assert np.isnan(grad(lambda v: mt.math.reduce_std(v), [2.0, 2.0])[0]).all()
    assert np.isnan(jvp(lambda v: mt.math.reduce_std(v), [2.0, 2.0], [1.0, 0.0]))
    assert np.isnan(grad(lambda v: mt.math.reduce_euclidean_norm(v), [0.0, 0.0])[0]).all()
    assert np.isnan(jvp(lambda v: mt.math.reduce_euclidean_norm(v), [0.0, 0.0], [1.0, 0.0]))
    g = grad(lambda v: mt.reduce_logsumexp(v), [np.inf, 1.0])[0]
    assert np.isnan(g[0]) and g[1] == 0.0


def test_index_outputs_have_no_gradient():
    for fn in (lambda v: mt.cast(mt.argmax(v), mt.float64),
               lambda v: mt.cast(mt.argsort(v), mt.float64),
               lambda v: mt.cast(mt.math.top_k(v, 2).indices, mt.float64),
               lambda v: mt.cast(mt.where(v > 0), mt.float64),
               lambda v: mt.cast(mt.reduce_any(v > 0), mt.float64),
               lambda v: mt.cast(mt.math.count_nonzero(v), mt.float64),
               lambda v: mt.one_hot([1], 2, on_value=v[0], off_value=v[1])):
        assert grad(fn, [0.5, -1.0, 2.0]) == [None]


def test_gather_adds_the_gradients_of_repeated_indices():
    g = grad(lambda v: mt.reduce_sum(mt.gather(v, [[0, 0], [2, 0]])), [1.0, 2.0, 3.0])[0]
    assert g.tolist() == [3.0, 0.0, 1.0]
    g = grad(lambda u: mt.reduce_sum(mt.scatter_nd([[1], [1]], u, [3]) * [1.0, 2.0, 3.0]),
             [1.0, 2.0])[0]
    assert g.tolist() == [2.0, 2.0]


# --- traced functions read indices at each call -----------------------------------------

@pytest.mark.parametrize("jit", [False, True])
def test_traced_gathers_follow_the_indices_of_each_call(jit):
    @mt.function(jit_compile=jit)
    def f(x):
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = mt.reduce_sum(mt.math.top_k(x, 2).values) + mt.gather(x, mt.argmin(x))
            y = y + mt.reduce_sum(mt.boolean_mask(x, x > 0.5))
        return y, tape.gradient(y, x)

    for v in ([1.0, 3.0, 2.0, 0.0], [4.0, -1.0, 0.7, 0.9], [0.0, 0.1, 0.2, 0.3]):
        x = mt.constant(np.array(v))
        top = np.sort(v)[-2:].sum() + min(v) + sum(e for e in v if e > 0.5)
        want = np.zeros(4)
        want[np.argsort(v, kind="stable")[::-1][:2]] += 1
        want[np.argmin(v)] += 1
        want[np.array(v) > 0.5] += 1
        if (np.array(v) > 0.5).sum() != 3:  # boolean_mask picks 3 entries when traced
            with pytest.raises(ValueError, match=r"where: in this traced function the "
                                                 r"result had shape \(3, 1\), now \(0, 1\)"):
                f(x)
            continue
        y, g = f(x)
        assert float(y) == pytest.approx(top)
        np.testing.assert_array_equal(g.numpy(), want)


def test_traced_segment_sum_and_where_follow_each_call():
    f = mt.function(lambda x, ids: (mt.math.segment_sum(x, ids), mt.where(x > 0)))
    s, w = f(mt.constant([1.0, -2.0, 3.0]), mt.constant([0, 0, 1]))
    assert s.numpy().tolist() == [-1.0, 3.0] and w.numpy().tolist() == [[0], [2]]
    s, w = f(mt.constant([1.0, 2.0, -3.0]), mt.constant([0, 1, 1]))
    assert s.numpy().tolist() == [1.0, -1.0] and w.numpy().tolist() == [[0], [1]]
    with pytest.raises(ValueError, match="segment_sum: in this traced function"):
        f(mt.constant([1.0, 2.0, -3.0]), mt.constant([0, 1, 2]))


# --- bad arguments ------------------------------------------------------------------------

TRUE = mt.constant(np.ones((2, 3), bool))

BAD = [  # (call, error, fragments of its message)
    (lambda s: mt.gather(s.x, [3], axis=1), ValueError, ["gather", "[3]", "[3]"]),
    (lambda s: mt.gather(s.x, [-1]), ValueError, ["gather", "-1"]),
    (lambda s: mt.gather(s.x, [0.5]), TypeError, ["gather", "float32"]),
    (lambda s: mt.gather(s.x, [[0]], axis=0, batch_dims=1), ValueError, ["gather", "axis 0"]),
    (lambda s: mt.gather_nd(s.x, [[0, 3]]), ValueError, ["gather_nd", "[0, 3]", "[2, 3]"]),
    (lambda s: mt.gather_nd(s.x, [[0, 1, 2]]), ValueError, ["gather_nd", "<= 2"]),
    (lambda s: mt.scatter_nd([[2]], s.x, [2, 3]), ValueError, ["scatter_nd", "updates"]),
    (lambda s: mt.scatter_nd([[2]], mt.ones([1, 3]), [2, 3]), ValueError, ["scatter_nd", "[2]"]),
    (lambda s: mt.boolean_mask(s.x, [True]), ValueError, ["boolean_mask", "(1,)", "(2, 3)"]),
    (lambda s: mt.boolean_mask(s.x, True), ValueError, ["boolean_mask", "scalar"]),
    (lambda s: mt.one_hot([1], -1), ValueError, ["one_hot", "depth", "-1"]),
    (lambda s: mt.one_hot([1], 2, on_value=2.0, dtype=mt.int32), TypeError, ["one_hot"]),
    (lambda s: mt.where(TRUE, x=s.x), ValueError, ["where", "both"]),
    (lambda s: mt.where(True), ValueError, ["where", "scalar"]),
    (lambda s: mt.math.reduce_variance(mt.constant([1, 2])), TypeError,
     ["reduce_variance", "int32"]),
    (lambda s: mt.math.reduce_std(s.x, axis=2), ValueError, ["reduce_std", "axis 2"]),
    (lambda s: mt.math.reduce_variance(mt.constant(np.array([1 + 2j, 3 - 1j]))), TypeError,
     ["reduce_variance", "complex"]),  # TensorFlow: 3.25, the mean of |x - mean|^2
    (lambda s: mt.reduce_logsumexp(mt.constant(np.array([1j]))), TypeError,
     ["reduce_logsumexp", "complex"]),
    (lambda s: mt.reduce_logsumexp(s.x, axis=[0, 0]), ValueError, ["reduce_logsumexp"]),
    (lambda s: mt.reduce_any(s.x), TypeError, ["reduce_any", "float32"]),
    (lambda s: mt.argmax(s.s), ValueError, ["argmax", "scalar"]),
    (lambda s: mt.argmax(s.x, axis=[1]), TypeError, ["argmax", "axis"]),
    (lambda s: mt.argmin(mt.zeros([0])), ValueError, ["argmin", "empty"]),
    (lambda s: mt.argmax(s.x, output_type=mt.float32), TypeError, ["argmax", "float32"]),
    (lambda s: mt.cumsum(s.s), ValueError, ["cumsum", "scalar"]),
    (lambda s: mt.math.cumprod(s.x, axis=2), ValueError, ["cumprod", "axis 2"]),
    (lambda s: mt.math.segment_sum(s.x, [1, 0]), ValueError, ["segment_sum", "sorted"]),
    (lambda s: mt.math.segment_sum(s.x, [0]), ValueError, ["segment_sum", "(1,)", "(2, 3)"]),
    (lambda s: mt.sort(s.x, direction="UP"), ValueError, ["sort", "'UP'"]),
    (lambda s: mt.sort(s.s), ValueError, ["sort", "scalar"]),
    (lambda s: mt.sort(TRUE), TypeError, ["sort", "bool"]),
    (lambda s: mt.math.top_k(s.x, k=4), ValueError, ["top_k", "k=4", "3"]),
    (lambda s: mt.split(s.x, 2, axis=1), ValueError, ["split", "2 parts", "(2, 3)"]),
    (lambda s: mt.split(s.x, [1, 1], axis=1), ValueError, ["split", "[1, 1]", "3"]),
    (lambda s: mt.split(s.x, [-1, -1, 1], axis=1), ValueError, ["split", "-1"]),
    (lambda s: mt.split(s.x, [1, 2], axis=1, num=3), ValueError, ["split", "num=3"]),
    (lambda s: mt.tile(s.x, [2]), ValueError, ["tile", "[2]", "(2, 3)"]),
    (lambda s: mt.tile(s.x, [1, -1]), ValueError, ["tile", "-1"]),
    (lambda s: mt.repeat(s.x, [1, 2], axis=1), ValueError, ["repeat", "[1, 2]"]),
    (lambda s: mt.repeat(s.x, [1, 2]), ValueError, ["repeat", "[1, 2]"]),
    (lambda s: mt.roll(s.x, [1, 2], axis=[0]), ValueError, ["roll", "[1, 2]", "[0]"]),
    (lambda s: mt.roll(s.x, 1, axis=2), ValueError, ["roll", "axis 2"]),
    (lambda s: mt.reverse(s.x, 1), ValueError, ["reverse", "list"]),
    (lambda s: mt.reverse(s.x, [1, -1]), ValueError, ["reverse", "twice"]),
    (lambda s: mt.meshgrid(s.x, mt.constant([1])), TypeError, ["meshgrid", "int32"]),
    (lambda s: mt.meshgrid(s.x, indexing="zz"), ValueError, ["meshgrid", "'zz'"]),
    (lambda s: mt.tensordot(s.x, s.x, 1), ValueError, ["tensordot", "(2, 3)"]),
    (lambda s: mt.tensordot(s.x, s.x, 3), ValueError, ["tensordot", "axes=3"]),
    (lambda s: mt.tensordot(s.x, s.x, [[0], [0, 1]]), ValueError, ["tensordot", "[0, 1]"]),
    (lambda s: mt.tensordot(s.x, mt.constant(np.ones((3, 2))), 1), TypeError,
     ["tensordot", "float64"]),
    (lambda s: mt.pad(s.x, [[2, 0], [0, 0]], mode="REFLECT"), ValueError,
     ["pad", "REFLECT", "[2, 0]"]),
    (lambda s: mt.pad(s.x, [[0, 0], [0, 4]], mode="SYMMETRIC"), ValueError,
     ["pad", "SYMMETRIC", "[0, 4]"]),
    (lambda s: mt.pad(s.x, [[0, 0], [0, 1]], mode="WRAP"), ValueError, ["pad", "'WRAP'"]),
]


@pytest.mark.parametrize("call, error, fragments", BAD, ids=range(len(BAD)))
def test_bad_arguments_name_the_op_and_leave_the_tape_alone(call, error, fragments):
    scene = Scene()
    try:
        with pytest.raises(error) as info:
            call(scene)
        for fragment in fragments:
            assert fragment in str(info.value), (fragment, str(info.value))
        scene.check_afterwards()
    finally:
        if scene.active:
            scene.tape.__exit__(None, None, None)


EVERY_ARGUMENT = [
    ("gather-indices", lambda s, b: mt.gather(s.x, b)),
    ("gather-axis", lambda s, b: mt.gather(s.x, [0], axis=b)),
    ("gather-batch_dims", lambda s, b: mt.gather(s.x, [[0]], axis=1, batch_dims=b)),
    ("gather_nd", lambda s, b: mt.gather_nd(s.x, b)),
    ("scatter_nd-shape", lambda s, b: mt.scatter_nd([[0]], mt.ones([1, 3]), b)),
    ("scatter_nd-updates", lambda s, b: mt.scatter_nd([[0]], b, [2, 3])),
    ("boolean_mask", lambda s, b: mt.boolean_mask(s.x, b)),
    ("one_hot-depth", lambda s, b: mt.one_hot([0], b)),
    ("one_hot-axis", lambda s, b: mt.one_hot([0], 2, axis=b)),
    ("one_hot-on", lambda s, b: mt.one_hot([0], 2, on_value=b)),
    ("where", lambda s, b: mt.where(b)),
    ("reduce_variance", lambda s, b: mt.math.reduce_variance(s.x, b)),
    ("reduce_logsumexp", lambda s, b: mt.reduce_logsumexp(s.x, b)),
    ("reduce_euclidean_norm", lambda s, b: mt.math.reduce_euclidean_norm(s.x, b)),
    ("reduce_all", lambda s, b: mt.reduce_all(b)),
    ("count_nonzero-dtype", lambda s, b: mt.math.count_nonzero(s.x, dtype=b)),
    ("argmax-axis", lambda s, b: mt.argmax(s.x, b)),
    ("argmax-output_type", lambda s, b: mt.argmax(s.x, output_type=b)),
    ("cumsum-axis", lambda s, b: mt.cumsum(s.x, b)),
    ("cumprod-axis", lambda s, b: mt.math.cumprod(s.x, b)),
    ("segment_sum-ids", lambda s, b: mt.math.segment_sum(s.x, b)),
    ("sort-axis", lambda s, b: mt.sort(s.x, b)),
    ("sort-direction", lambda s, b: mt.sort(s.x, direction=b)),
    ("top_k-k", lambda s, b: mt.math.top_k(s.x, b)),
    ("split", lambda s, b: mt.split(s.x, b, axis=1)),
    ("tile", lambda s, b: mt.tile(s.x, b)),
    ("repeat", lambda s, b: mt.repeat(s.x, b, axis=1)),
    ("roll-shift", lambda s, b: mt.roll(s.x, b, axis=0)),
    ("roll-axis", lambda s, b: mt.roll(s.x, 1, axis=b)),
    ("reverse", lambda s, b: mt.reverse(s.x, b)),
    ("meshgrid", lambda s, b: mt.meshgrid(s.x, b)),
    ("tensordot-axes", lambda s, b: mt.tensordot(s.x, s.x, b)),
    ("pad-reflect", lambda s, b: mt.pad(s.x, b, mode="REFLECT")),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name, call", EVERY_ARGUMENT, ids=[n for n, _ in EVERY_ARGUMENT])
def test_every_argument_with_every_wrong_kind(name, call):
    """Whatever the wrong value, a Python error (never NumPy's internals
    leaking), and nothing recorded by the failed call."""
    for bad in ANY_BAD:
        scene = Scene()
        try:
            try:
                call(scene, bad)
            except EXPECTED:
                pass
            except Exception as e:  # pragma: no cover - the failure message
                pytest.fail(f"{name}({bad!r}) raised {type(e).__name__}: {e}")
            else:
                continue  # a legal value for this argument
            scene.check_afterwards()
        finally:
            if scene.active:
                scene.tape.__exit__(None, None, None)


# --- Hypothesis over shapes and axes, empty dims included --------------------------------

shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4)


@SETTINGS
@given(shape=shapes, data=st.data())
def test_scans_and_sorts_match_numpy_on_any_shape(shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-3, 3)))
    t = mt.constant(x)
    np.testing.assert_allclose(mt.cumsum(t, axis).numpy(), np.cumsum(x, axis), atol=1e-12)
    exclusive = mt.cumsum(t, axis, exclusive=True, reverse=True).numpy()
    flipped = np.flip(x, axis)
    want = np.flip(np.cumsum(flipped, axis) - flipped, axis)
    np.testing.assert_allclose(exclusive, want, atol=1e-12)
    np.testing.assert_allclose(mt.math.cumprod(t, axis).numpy(), np.cumprod(x, axis))
    order = mt.argsort(t, axis).numpy()
    np.testing.assert_array_equal(order, np.argsort(x, axis, kind="stable"))
    np.testing.assert_array_equal(mt.sort(t, axis).numpy(), np.sort(x, axis))
    np.testing.assert_array_equal(mt.reverse(t, [axis]).numpy(), np.flip(x, axis))
    np.testing.assert_array_equal(mt.roll(t, 3, axis).numpy(), np.roll(x, 3, axis))


@SETTINGS
@given(shape=shapes, data=st.data())
def test_gathers_match_numpy_on_any_shape(shape, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    x = np.arange(float(np.prod(shape))).reshape(shape)
    n = shape[axis]
    idx = data.draw(hnp.arrays(np.int32, hnp.array_shapes(min_dims=0, max_dims=2, min_side=0,
                                                          max_side=3),
                               elements=st.integers(0, max(n - 1, 0))))
    if n == 0 and idx.size:
        with pytest.raises(ValueError, match="gather"):
            mt.gather(mt.constant(x), idx, axis=axis)
        return
    got = mt.gather(mt.constant(x), idx, axis=axis).numpy()
    np.testing.assert_array_equal(got, np.take(x, idx, axis=axis))
    counts = data.draw(st.integers(0, 2))
    np.testing.assert_array_equal(mt.repeat(mt.constant(x), counts, axis=axis).numpy(),
                                  np.repeat(x, counts, axis=axis))
    multiples = data.draw(st.lists(st.integers(0, 2), min_size=len(shape),
                                   max_size=len(shape)))
    np.testing.assert_array_equal(mt.tile(mt.constant(x), multiples).numpy(),
                                  np.tile(x, multiples))
    mask = data.draw(hnp.arrays(np.bool_, shape[:axis + 1]))
    np.testing.assert_array_equal(mt.boolean_mask(mt.constant(x), mask).numpy(), x[mask])


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3), data=st.data())
def test_gradients_of_reductions_and_scans_on_any_shape(shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    seed = data.draw(st.integers(0, 2**16))
    x = np.random.default_rng(seed).uniform(0.5, 1.5, shape) * \
        np.random.default_rng(seed + 1).choice([-1.0, 1.0], shape)
    for fn in (lambda v: mt.math.reduce_variance(v, axis),
               lambda v: mt.reduce_logsumexp(v, axis, keepdims=True),
               lambda v: mt.math.reduce_euclidean_norm(v, axis),
               lambda v: mt.math.cumprod(v, axis, exclusive=True),
               lambda v: mt.cumsum(v, axis, reverse=True),
               lambda v: mt.tile(v, [2] + [1] * (len(shape) - 1)),
               lambda v: mt.pad(v, [[0, 0]] * (axis % len(shape)) + [[shape[axis] - 1, 0]]
                                + [[0, 0]] * (len(shape) - 1 - axis % len(shape)),
                                mode="REFLECT")):
        check_gradients(fn, [x], order=2, seed=seed)


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3), data=st.data())
def test_gather_nd_and_scatter_nd_are_adjoint(shape, data):
    """<gather_nd(x, i), u> == <x, scatter_nd(i, u, shape)> for any indices,
    repeated ones included: each is the other's gradient."""
    k = data.draw(st.integers(1, len(shape)))
    if 0 in shape[:k]:
        return  # nothing to index
    lead = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    idx = np.stack([data.draw(hnp.arrays(np.int64, lead, elements=st.integers(0, n - 1)))
                    for n in shape[:k]], axis=-1)
    seed = data.draw(st.integers(0, 2**16))
    x = np.random.default_rng(seed).normal(size=shape)
    u = np.random.default_rng(seed + 1).normal(size=lead + shape[k:])
    gathered = mt.gather_nd(mt.constant(x), idx).numpy()
    scattered = mt.scatter_nd(idx, mt.constant(u), shape).numpy()
    np.testing.assert_allclose((gathered * u).sum(), (x * scattered).sum(), atol=1e-10)


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=3), data=st.data())
def test_tensordot_split_and_meshgrid_match_numpy_on_any_shape(shape, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    a = rng.normal(size=shape)
    n = data.draw(st.integers(0, len(shape)))
    a_axes = data.draw(st.permutations(range(len(shape))))[:n]
    b_shape = tuple(shape[i] for i in a_axes) + (2,)
    b = rng.normal(size=b_shape)
    pairs = [list(a_axes), list(range(n))]
    got = mt.tensordot(mt.constant(a), mt.constant(b), pairs).numpy()
    np.testing.assert_allclose(got, np.tensordot(a, b, pairs), atol=1e-12)
    axis = data.draw(st.integers(0, len(shape) - 1))
    cut = data.draw(st.integers(0, shape[axis]))
    parts = mt.split(mt.constant(a), [cut, -1], axis=axis)
    for got, want in zip(parts, np.split(a, [cut], axis=axis)):
        np.testing.assert_array_equal(got.numpy(), want)
    vectors = [rng.normal(size=k) for k in shape]
    for indexing in ("xy", "ij"):
        for got, want in zip(mt.meshgrid(*vectors, indexing=indexing),
                             np.meshgrid(*vectors, indexing=indexing)):
            np.testing.assert_array_equal(got.numpy(), want)


EMPTY_OK = {
    "cumsum": lambda v: mt.cumsum(v, 1), "cumprod": lambda v: mt.math.cumprod(v, 1),
    "sort": lambda v: mt.sort(v, 1), "top_k-0": lambda v: mt.math.top_k(v, 0).values,
    "gather-none": lambda v: mt.gather(v, np.zeros((0,), np.int32), axis=0),
    "tile-0": lambda v: mt.tile(v, [2, 0]), "reduce_logsumexp": lambda v: mt.reduce_logsumexp(v, 1),
    "reduce_euclidean_norm": lambda v: mt.math.reduce_euclidean_norm(v, 1),
    "boolean_mask-none": lambda v: mt.boolean_mask(v, np.zeros(v.shape, bool)),
    "segment_sum": lambda v: mt.math.segment_sum(v, np.zeros(v.shape[0], np.int32)),
    "reverse": lambda v: mt.reverse(v, [1]), "roll": lambda v: mt.roll(v, 1, 1),
    "repeat": lambda v: mt.repeat(v, 2, axis=1),
    "pad-symmetric": lambda v: mt.pad(v, [[0, 0], [0, 0]], mode="SYMMETRIC"),
    "tensordot": lambda v: mt.tensordot(v, v, [[1], [1]]),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("shape", [(2, 0), (0, 3)])
@pytest.mark.parametrize("name", sorted(EMPTY_OK))
def test_empty_dims_give_gradients_and_jacobians_of_the_right_shape(name, shape):
    x = mt.constant(np.ones(shape))
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = EMPTY_OK[name](x)
    zero = mt.UnconnectedGradients.ZERO
    g = tape.gradient(y, x, unconnected_gradients=zero)
    j = tape.jacobian(y, x, unconnected_gradients=zero)
    assert g.shape == x.shape and j.shape == y.shape + x.shape


def test_op_table_ids_are_unique():
    from op_table_shapes import CASES
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"shapes\.[\w\-]+", i) for i in ids)
