"""Conformance cases for the shapes, indexing, scans, sorting and statistics
ops of issue 16: each case runs once with `m = tensorflow` and once with
`m = minitape`, and the harness compares what they return (or raise)."""
import numpy as np

X = np.arange(24.0).reshape(2, 3, 4) / 7.0 - 1.0
V = np.array([0.3, -1.2, 2.0, 0.7, -0.4])


def _grad(m, f, *xs):
    xs = [m.constant(np.asarray(x, np.float64)) for x in xs]
    with m.GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    return tape.gradient(y, xs)


def _grad2(m, f, x):
    """First and second derivative of a scalar function (nested tapes)."""
    x = m.constant(np.asarray(x, np.float64))
    with m.GradientTape() as outer:
        outer.watch(x)
        with m.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
    return g, outer.gradient(g, x)


def _jvp(m, f, x, v):
    x = m.constant(np.asarray(x, np.float64))
    with m.autodiff.ForwardAccumulator(x, m.constant(np.asarray(v, np.float64))) as acc:
        y = f(x)
    return acc.jvp(y)


def _weights(m, n):
    return m.constant(np.linspace(0.5, 2.0, n))


# --- indexing -------------------------------------------------------------------------

def case_gather_axis(m):
    return m.gather(m.constant(X), [2, 0, 2], axis=1)


def case_gather_batch_dims(m):
    return m.gather(m.constant(X), [[1, 0], [2, 2]], axis=1, batch_dims=1)


def case_gather_negative_batch_dims(m):
    return m.gather(m.constant(X), [[1, 0], [2, 2]], axis=-1, batch_dims=-1)


def case_gather_batch_dims_axes_between(m):
    x = m.constant(np.arange(120.0).reshape(2, 3, 4, 5))
    return (m.gather(x, [[3, 0], [1, 1]], axis=2, batch_dims=1),
            m.gather(x, [[[4], [0], [2]], [[1], [1], [3]]], axis=-1, batch_dims=2),
            m.gather_nd(x, [[[1, 2], [0, 0]], [[2, 3], [1, 1]]], batch_dims=1),
            m.gather_nd(x, np.zeros((2, 3, 1, 2), np.int32), batch_dims=2))


def case_gather_batch_dims_grad(m):
    x = np.arange(24.0).reshape(2, 3, 4) / 10.0
    w = m.constant(np.arange(1.0, 13.0).reshape(2, 3, 2))
    return _grad(m, lambda v: m.reduce_sum(m.gather(v * v, [[3, 0], [1, 1]], axis=2,
                                                    batch_dims=1) * w), x)


def case_gather_scalar_index(m):
    return m.gather(m.constant(X), 1, axis=2)


def case_gather_int64_indices(m):
    return m.gather(m.constant([1.0, 2.0]), m.constant(np.array([1, 0, 1], np.int64)))


def case_gather_out_of_range(m):
    return m.gather(m.constant(X), [3], axis=1)


def case_gather_negative_index(m):
    return m.gather(m.constant(X), [-1], axis=1)


def case_gather_float_indices(m):
    return m.gather(m.constant(X), m.constant([1.0]), axis=1)


def case_gather_grad_repeats(m):
    return _grad(m, lambda v: m.reduce_sum(m.gather(v, [0, 0, 2, 4]) * _weights(m, 4)), V)


def case_gather_jvp(m):
    return _jvp(m, lambda v: m.gather(v, [[0, 0], [3, 1]]), V, np.arange(5.0))


def case_gather_second_derivative(m):
    return _grad2(m, lambda v: m.reduce_sum(m.gather(v * v * v, [1, 1, 3])), V)


def case_gather_nd(m):
    return m.gather_nd(m.constant(X), [[0, 1], [1, 2]])


def case_gather_nd_full_index(m):
    return m.gather_nd(m.constant(X), [[0, 1, 3], [1, 0, 0]])


def case_gather_nd_batch_dims(m):
    return m.gather_nd(m.constant(X), [[[1]], [[2]]], batch_dims=1)


def case_gather_nd_empty_tuple(m):
    return m.gather_nd(m.constant(X), m.constant(np.zeros((2, 0), np.int32)))


def case_gather_nd_out_of_range(m):
    return m.gather_nd(m.constant(X), [[2, 1]])


def case_gather_nd_too_deep(m):
    return m.gather_nd(m.constant(X), [[0, 1, 2, 3]])


def case_gather_nd_grad(m):
    x = X.reshape(6, 4)
    return _grad(m, lambda v: m.reduce_sum(m.gather_nd(v, [[0, 1], [0, 1], [5, 3]])
                                           * _weights(m, 3)), x)


def case_scatter_nd(m):
    return m.scatter_nd([[1], [3], [1]], m.constant([1.0, 2.0, 3.0]), [5])


def case_scatter_nd_slices(m):
    return m.scatter_nd([[0, 1]], m.constant([[7.0, 8.0]]), [2, 2, 2])


def case_scatter_nd_int(m):
    return m.scatter_nd([[1]], m.constant([2]), [3])


def case_scatter_nd_out_of_range(m):
    return m.scatter_nd([[5]], m.constant([1.0]), [5])


def case_scatter_nd_bad_updates(m):
    return m.scatter_nd([[1]], m.constant([1.0, 2.0]), [5])


def case_scatter_nd_grad(m):
    return _grad(m, lambda u: m.reduce_sum(m.scatter_nd([[1], [1], [4]], u, [5])
                                           * _weights(m, 5)), [1.0, 2.0, 3.0])


def case_scatter_nd_jvp(m):
    return _jvp(m, lambda u: m.scatter_nd([[1], [1]], u, [3]), [1.0, 2.0], [3.0, -1.0])


def case_boolean_mask(m):
    return m.boolean_mask(m.constant(X), [[True, False, True], [False, False, True]])


def case_boolean_mask_axis(m):
    return m.boolean_mask(m.constant(X), [True, False, True], axis=1)


def case_boolean_mask_ints(m):
    return m.boolean_mask(m.constant([[1, 2], [3, 4], [5, 6]]), [True, False, True])


def case_boolean_mask_scalar_mask(m):
    return m.boolean_mask(m.constant(X), True)


def case_boolean_mask_grad(m):
    return _grad(m, lambda v: m.reduce_sum(m.boolean_mask(v, [True, False, True, True, False])
                                           * _weights(m, 3)), V)


def case_one_hot(m):
    return m.one_hot([0, 2, -1, 5], 3)


def case_one_hot_values_axis(m):
    return m.one_hot([[0, 2]], 3, on_value=5, off_value=-1, axis=0)


def case_one_hot_dtype(m):
    return m.one_hot([1], 2, dtype=m.float64)


def case_one_hot_float_on_value(m):
    return m.one_hot([1], 2, on_value=2.0)


def case_one_hot_mismatched_dtype(m):
    return m.one_hot([1], 2, on_value=2.0, dtype=m.int32)


def case_one_hot_float_indices(m):
    return m.one_hot(m.constant([1.0]), 2)


def case_one_hot_no_gradient(m):
    return _grad(m, lambda u: m.reduce_sum(m.one_hot([1], 2, on_value=u[0], off_value=u[1])),
                 [1.0, 2.0])


def case_where_coordinates(m):
    return m.where([[True, False], [True, True]])


def case_where_coordinates_numbers(m):
    return m.where(m.constant([[1.0, 0.0], [0.0, 2.0]]))


def case_where_scalar(m):
    return m.where(True)


def case_where_x_only(m):
    return m.where([True], x=[1.0])


# --- statistics -----------------------------------------------------------------------

def case_reduce_variance(m):
    return m.math.reduce_variance(m.constant(X), axis=1)


def case_reduce_variance_keepdims(m):
    return m.math.reduce_variance(m.constant([1.0, 2.0]), axis=0, keepdims=True)


def case_reduce_variance_int(m):
    return m.math.reduce_variance(m.constant([1, 2]))


def case_reduce_variance_empty(m):
    return m.math.reduce_variance(m.zeros([0, 3]), axis=0)


def case_reduce_variance_grad(m):
    return _grad2(m, lambda v: m.math.reduce_variance(v), V)


def case_reduce_std(m):
    return m.math.reduce_std(m.constant(X), axis=[0, 2])


def case_reduce_std_grad_constant(m):
    return _grad(m, lambda v: m.math.reduce_std(v), [2.0, 2.0])


def case_reduce_std_jvp_constant(m):
    return _jvp(m, lambda v: m.math.reduce_std(v), [2.0, 2.0], [1.0, 0.0])


def case_reduce_logsumexp(m):
    return m.reduce_logsumexp(m.constant(X * 30.0), axis=0)


def case_reduce_logsumexp_empty(m):
    return m.reduce_logsumexp(m.zeros([0, 3]), axis=0)


def case_reduce_logsumexp_infinities(m):
    return (m.reduce_logsumexp(m.constant([-np.inf, -np.inf])),
            m.reduce_logsumexp(m.constant([np.inf, 1.0])))


def case_reduce_logsumexp_int(m):
    return m.reduce_logsumexp(m.constant([1, 2]))


def case_reduce_logsumexp_grad(m):
    return _grad2(m, lambda v: m.reduce_logsumexp(v), V)


def case_reduce_logsumexp_grad_infinities(m):
    return (_grad(m, lambda v: m.reduce_logsumexp(v), [-np.inf, -np.inf]),
            _grad(m, lambda v: m.reduce_logsumexp(v), [np.inf, 1.0]))


def case_reduce_euclidean_norm(m):
    return m.math.reduce_euclidean_norm(m.constant(X), axis=2, keepdims=True)


def case_reduce_euclidean_norm_int(m):
    return (m.math.reduce_euclidean_norm(m.constant([3, 4])),
            m.math.reduce_euclidean_norm(m.constant([1, 1])),
            m.math.reduce_euclidean_norm(m.constant([50000, 50000])))


def case_reduce_euclidean_norm_empty(m):
    return m.math.reduce_euclidean_norm(m.zeros([0, 3]), axis=0)


def case_reduce_euclidean_norm_grad(m):
    return _grad2(m, lambda v: m.math.reduce_euclidean_norm(v), V)


def case_reduce_euclidean_norm_at_zero(m):
    return (_grad(m, lambda v: m.math.reduce_euclidean_norm(v), [0.0, 0.0]),
            _jvp(m, lambda v: m.math.reduce_euclidean_norm(v), [0.0, 0.0], [1.0, 0.0]))


def case_reduce_euclidean_norm_jvp(m):
    return _jvp(m, lambda v: m.math.reduce_euclidean_norm(v, axis=1),
                [[1.0, 2.0], [3.0, 5.0]], [[1.0, 1.0], [1.0, 1.0]])


def case_reduce_any_all(m):
    b = m.constant([[True, False], [False, False]])
    return (m.reduce_any(b, axis=1), m.reduce_all(b, axis=0, keepdims=True),
            m.reduce_all(m.constant(np.zeros(0, bool))),
            m.reduce_any(m.constant(np.zeros(0, bool))))


def case_reduce_any_float(m):
    return m.reduce_any(m.constant([1.0, 0.0]))


def case_reduce_any_no_gradient(m):
    return _grad(m, lambda v: m.cast(m.reduce_any(v > 0), m.float64), V)


def case_count_nonzero(m):
    x = m.constant(X * 7.0 - np.round(X * 7.0 / 3) * 3)
    return (m.math.count_nonzero(x), m.math.count_nonzero(x, axis=0),
            m.math.count_nonzero(x, axis=1, keepdims=True),
            m.math.count_nonzero(x, dtype=m.int32),
            m.math.count_nonzero(m.constant([True, False])))


def case_argmax_argmin(m):
    x = m.constant(X)
    return (m.argmax(x), m.argmax(x, axis=2, output_type=m.int32), m.argmin(x, axis=-1),
            m.math.argmax(m.constant([1.0, 3.0, 3.0])),
            m.math.argmin(m.constant([1.0, 1.0, 3.0])),
            m.argmax(m.constant([False, True])), m.argmax(m.zeros([2, 0]), axis=0))


def case_argmax_nan(m):
    nan = np.nan
    return [(m.argmax(m.constant(v)), m.argmin(m.constant(v)))
            for v in ([nan, 1.0], [1.0, nan], [nan, nan], [1.0, nan, 3.0], [3.0, nan, 1.0])]


def case_argmax_scalar(m):
    return m.argmax(m.constant(1.0))


def case_argmax_empty_axis(m):
    return m.argmax(m.zeros([0]))


def case_argmax_axis_list(m):
    return m.argmax(m.constant(X), axis=[1])


def case_argmax_float_output(m):
    return m.argmax(m.constant(X), output_type=m.float32)


def case_argmax_no_gradient(m):
    return _grad(m, lambda v: m.cast(m.argmax(v), m.float64), V)


# --- scans ----------------------------------------------------------------------------

def case_cumsum(m):
    x = m.constant(X)
    return (m.cumsum(x), m.cumsum(x, axis=1, exclusive=True),
            m.math.cumsum(x, axis=-1, reverse=True),
            m.cumsum(x, axis=2, exclusive=True, reverse=True),
            m.cumsum(m.constant([1, 2, 3])), m.cumsum(m.zeros([2, 0]), axis=1))


def case_cumsum_scalar(m):
    return m.cumsum(m.constant(1.0))


def case_cumsum_bad_axis(m):
    return m.cumsum(m.constant(X), axis=3)


def case_cumsum_grad(m):
    return (_grad(m, lambda v: m.reduce_sum(m.cumsum(v, exclusive=True) * _weights(m, 5)), V),
            _grad(m, lambda v: m.reduce_sum(m.cumsum(v, reverse=True) * _weights(m, 5)), V))


def case_cumsum_jvp(m):
    return _jvp(m, lambda v: m.cumsum(v, exclusive=True, reverse=True), V, np.arange(5.0))


def case_cumprod(m):
    x = m.constant(X)
    return (m.math.cumprod(x), m.math.cumprod(x, axis=1, exclusive=True),
            m.math.cumprod(x, axis=-1, reverse=True),
            m.math.cumprod(x, axis=2, exclusive=True, reverse=True),
            m.math.cumprod(m.constant([1, 2, 3])), m.math.cumprod(m.zeros([2, 0]), axis=1))


def case_cumprod_grad(m):
    return [_grad2(m, lambda v: m.reduce_sum(m.math.cumprod(v, exclusive=e, reverse=r)
                                             * _weights(m, 5)), V)
            for e in (False, True) for r in (False, True)]


def case_cumprod_jvp(m):
    return _jvp(m, lambda v: m.math.cumprod(v, reverse=True), V, np.arange(5.0))


def case_cumprod_grad_at_zero(m):
    return _grad(m, lambda v: m.reduce_sum(m.math.cumprod(v)), [2.0, 0.0, 3.0])


# TensorFlow's rule divides by x (div_no_nan) and gives [1, 0, 0]; minitape
# gives the true derivative [1, 8, 0] (and the JVP [1, 2, 6] along ones)
case_cumprod_grad_at_zero.differs = "the gradient of `cumprod` where an entry is 0"


def case_cumprod_jvp_at_zero(m):
    return _jvp(m, lambda v: m.math.cumprod(v), [2.0, 0.0, 3.0], [1.0, 1.0, 1.0])


case_cumprod_jvp_at_zero.differs = "the gradient of `cumprod` where an entry is 0"


def case_segment_sum(m):
    x = m.constant(X.reshape(4, 6))
    return (m.math.segment_sum(x, [0, 0, 1, 3]),
            m.math.segment_sum(m.constant([1.0, 2.0, 3.0]), m.constant(np.array([0, 2, 2]))),
            m.math.segment_sum(m.zeros([0, 2]), m.constant(np.zeros(0, np.int32))))


def case_segment_sum_unsorted(m):
    return m.math.segment_sum(m.constant([1.0, 2.0, 3.0]), [1, 0, 2])


def case_segment_sum_negative(m):
    return m.math.segment_sum(m.constant([1.0, 2.0, 3.0]), [-1, 0, 2])


def case_segment_sum_length(m):
    return m.math.segment_sum(m.constant([1.0, 2.0, 3.0]), [0, 0])


def case_segment_sum_grad(m):
    return _grad(m, lambda v: m.reduce_sum(m.math.segment_sum(v, [0, 0, 2, 2, 3])
                                           * _weights(m, 4)), V)


def case_segment_sum_jvp(m):
    return _jvp(m, lambda v: m.math.segment_sum(v, [0, 0, 2, 2, 3]), V, np.arange(5.0))


# --- sorting --------------------------------------------------------------------------

T = np.array([[1.0, 3.0, 3.0, 2.0], [0.5, -1.0, 0.5, 4.0]])


def case_sort(m):
    x = m.constant(T)
    return (m.sort(x), m.sort(x, direction="DESCENDING"), m.sort(x, axis=0),
            m.sort(m.constant(np.array([3, 1, 2], np.int64))),
            m.sort(m.constant(np.array([3, 1, 2], np.uint8)), direction="DESCENDING"))


def case_argsort_ties(m):
    x = m.constant([1.0, 3.0, 3.0, 1.0])
    return (m.argsort(x), m.argsort(x, direction="DESCENDING"),
            m.argsort(x, stable=True, direction="DESCENDING"), m.argsort(m.constant(T), axis=0),
            m.argsort(m.constant(np.array([-2**31, 0], np.int32)), direction="DESCENDING"))


def case_sort_nan_ascending(m):
    return m.sort(m.constant([1.0, np.nan, 0.0])), m.argsort(m.constant([1.0, np.nan, 0.0]))


def case_sort_nan_descending(m):
    return m.sort(m.constant([1.0, np.nan, 0.0]), direction="DESCENDING")


case_sort_nan_descending.differs = "the order of NaNs in `sort`, `argsort`, `top_k`"


def case_traced_boolean_mask_of_another_count(m):
    f = m.function(lambda x: m.reduce_sum(m.boolean_mask(x, x > 0)))
    f(m.constant([1.0, -2.0, 3.0]))
    return f(m.constant([1.0, -2.0, -3.0]))  # TensorFlow: 1.0; minitape: ValueError


case_traced_boolean_mask_of_another_count.differs = (
    "ops whose result's shape depends on values (`where(condition)`, `boolean_mask`, "
    "`segment_sum`) inside `mt.function`")


def case_traced_boolean_mask_of_the_same_count(m):
    f = m.function(lambda x: m.reduce_sum(m.boolean_mask(x, x > 0)))
    return f(m.constant([1.0, -2.0, 3.0])), f(m.constant([5.0, 2.0, -3.0]))


def case_sort_bad_direction(m):
    return m.sort(m.constant(T), direction="UP")


def case_sort_scalar(m):
    return m.sort(m.constant(1.0))


def case_sort_bool(m):
    return m.sort(m.constant([True, False]))


def case_sort_grad_ties(m):
    return _grad(m, lambda v: m.reduce_sum(m.sort(v) * _weights(m, 3)), [3.0, 1.0, 3.0])


def case_sort_grad(m):
    return _grad2(m, lambda v: m.reduce_sum(m.sort(v * v * v, direction="DESCENDING")
                                            * _weights(m, 5)), V)


def case_sort_jvp(m):
    return _jvp(m, lambda v: m.sort(v), V, np.arange(5.0))


def case_top_k(m):
    r = m.math.top_k(m.constant(T), k=2)
    return r.values, r.indices, m.math.top_k(m.constant([1, 5, 3]), k=2), \
        m.nn.top_k(m.constant(T))


def case_top_k_k_tensor(m):
    return m.math.top_k(m.constant([1, 5, 3]), k=m.constant(2))


def case_top_k_index_type(m):
    return m.math.top_k(m.constant(T), k=3, index_type=m.int64)


def case_top_k_too_many(m):
    return m.math.top_k(m.constant([1.0, 3.0]), k=3)


def case_top_k_negative(m):
    return m.math.top_k(m.constant([1.0, 3.0]), k=-1)


def case_top_k_scalar(m):
    return m.math.top_k(m.constant(1.0), k=1)


def case_top_k_grad_ties(m):
    return _grad(m, lambda v: m.reduce_sum(m.math.top_k(v, 2).values * _weights(m, 2)),
                 [3.0, 1.0, 3.0])


def case_top_k_jvp(m):
    return _jvp(m, lambda v: m.math.top_k(v, 2).values, [3.0, 1.0, 3.0], [1.0, 2.0, 3.0])


def case_top_k_indices_no_gradient(m):
    return _grad(m, lambda v: m.cast(m.math.top_k(v, 2).indices, m.float64), V)


# --- arrangement ----------------------------------------------------------------------

A = np.arange(6.0).reshape(2, 3)


def case_split(m):
    x = m.constant(A)
    return (m.split(x, 3, axis=1), m.split(x, [1, -1], axis=1), m.split(x, [1, 2], axis=1,
                                                                          num=2),
            m.split(x, [0, 3], axis=1), m.split(x, m.constant([1, 2]), axis=1),
            m.split(x, [3], axis=-1))


def case_split_uneven(m):
    return m.split(m.constant(A), 2, axis=1)


def case_split_bad_sizes(m):
    return m.split(m.constant(A), [1, 1], axis=1)


def case_split_two_unknown(m):
    return m.split(m.constant(A), [-1, -1, 1], axis=1)


def case_split_negative_size(m):
    return m.split(m.constant(A), [-2, 5], axis=1)


def case_split_scalar(m):
    return m.split(m.constant(1.0), 1)


def case_split_zero_parts(m):
    return m.split(m.constant(A), 0, axis=1)


def case_split_grad(m):
    return _grad(m, lambda v: m.reduce_sum(m.split(v, [2, -1])[1] * _weights(m, 3)), V)


def case_tile(m):
    x = m.constant(A)
    return m.tile(x, [2, 1]), m.tile(x, [0, 2]), m.tile(m.constant(1.0), [])


def case_tile_bad_length(m):
    return m.tile(m.constant(A), [2])


def case_tile_negative(m):
    return m.tile(m.constant(A), [-1, 1])


def case_tile_grad(m):
    return _grad2(m, lambda v: m.reduce_sum(m.tile(v * v * v, [3]) * _weights(m, 15)), V)


def case_tile_jvp(m):
    return _jvp(m, lambda v: m.tile(v, [2]), V, np.arange(5.0))


def case_repeat(m):
    x = m.constant(A)
    return (m.repeat(x, 2), m.repeat(x, [1, 2], axis=0), m.repeat(x, 2, axis=1),
            m.repeat(m.constant(3.0), 2), m.repeat(x, [2], axis=0))


def case_repeat_bad_counts(m):
    return m.repeat(m.constant(A), [1, 2, 3], axis=0)


def case_repeat_grad(m):
    return _grad(m, lambda v: m.reduce_sum(m.repeat(v, [0, 1, 2, 3, 1]) * _weights(m, 7)), V)


def case_roll(m):
    x = m.constant(A)
    return (m.roll(x, 1, axis=1), m.roll(x, [1, -1], axis=[0, 1]),
            m.roll(x, [1, 1], axis=[1, 1]), m.roll(x, 7, axis=1))


def case_roll_mismatch(m):
    return m.roll(m.constant(A), [1, 1], axis=[1])


def case_roll_bad_axis(m):
    return m.roll(m.constant(A), 1, axis=2)


def case_roll_grad(m):
    return _grad(m, lambda v: m.reduce_sum(m.roll(v, 2, axis=0) * _weights(m, 5)), V)


def case_reverse(m):
    x = m.constant(X)
    return m.reverse(x, [1]), m.reverse(x, [0, -1]), m.reverse(x, [])


def case_reverse_twice(m):
    return m.reverse(m.constant(A), [1, -1])


def case_reverse_int_axis(m):
    return m.reverse(m.constant(A), 1)


def case_reverse_bad_axis(m):
    return m.reverse(m.constant(A), [2])


def case_reverse_grad(m):
    return _grad(m, lambda v: m.reduce_sum(m.reverse(v, [0]) * _weights(m, 5)), V)


def case_meshgrid(m):
    return (m.meshgrid([1, 2, 3], [4, 5]), m.meshgrid([1, 2, 3], [4, 5], indexing="ij"),
            m.meshgrid([1.0, 2.0, 3.0], [4.0, 5.0], [6.0, 7.0, 8.0, 9.0]),
            m.meshgrid([1, 2]), m.meshgrid(), m.meshgrid([[1, 2]], [1]))


def case_meshgrid_mixed_dtypes(m):
    return m.meshgrid([1, 2], [1.0])


def case_meshgrid_bad_indexing(m):
    return m.meshgrid([1, 2], [1], indexing="zz")


def case_meshgrid_grad(m):
    def f(x, y):
        gx, gy = m.meshgrid(x, y)
        return m.reduce_sum(gx * gx * gy)
    return _grad(m, f, [1.0, 2.0, 3.0], [0.5, -1.0])


def case_rank(m):
    return m.rank(m.constant(X)), m.rank([[1, 2]]), m.rank(m.constant(1.0))


def case_tensordot(m):
    return (m.tensordot(m.constant(X), m.constant(X), [[0, 1], [0, 1]]),
            m.tensordot(m.constant(A), m.constant(A.T), 1),
            m.tensordot(m.constant([1.0, 2.0]), m.constant([3.0, 4.0, 5.0]), 0),
            m.tensordot(m.constant(X), m.constant(A), [[-3, 1], [0, 1]]),
            m.tensordot(m.constant(A), m.constant(A), 2),
            m.tensordot(m.constant([[1, 2]]), m.constant([[3], [4]]), [1, 0]),
            m.linalg.tensordot(m.constant(A), m.constant(A), [[0], [0]]))


def case_tensordot_mismatched_sizes(m):
    return m.tensordot(m.constant(A), m.constant(A), 1)


def case_tensordot_too_many_axes(m):
    return m.tensordot(m.constant(A), m.constant(A), 3)


def case_tensordot_negative_axes(m):
    return m.tensordot(m.constant(A), m.constant(A), -1)


def case_tensordot_grad(m):
    a = X[0]
    return _grad(m, lambda x, y: m.reduce_sum(m.tensordot(x, y, [[1], [1]]) ** 2), a, a * 2)


def case_tensordot_second_derivative(m):
    return _grad2(m, lambda v: m.tensordot(v * v, v, 1), V)


# --- pad's mirror modes ---------------------------------------------------------------

P9 = np.arange(9.0).reshape(3, 3)


def case_pad_reflect(m):
    x = m.constant(P9)
    return (m.pad(x, [[1, 2], [2, 0]], mode="REFLECT"), m.pad(x, [[1, 0], [0, 0]], mode="reflect"),
            m.pad(x, [[1, 0], [0, 0]], mode="REFLECT", constant_values=3),
            m.pad(m.constant([1, 2, 3]), [[2, 2]], mode="REFLECT"),
            m.pad(m.constant([5.0]), [[0, 0]], mode="REFLECT"))


def case_pad_symmetric(m):
    x = m.constant(P9)
    return (m.pad(x, [[1, 3], [0, 1]], mode="SYMMETRIC"),
            m.pad(m.constant([5.0]), [[1, 1]], mode="SYMMETRIC"))


def case_pad_reflect_too_wide(m):
    return m.pad(m.constant(P9), [[3, 0], [0, 0]], mode="REFLECT")


def case_pad_symmetric_too_wide(m):
    return m.pad(m.constant(P9), [[4, 0], [0, 0]], mode="SYMMETRIC")


def case_pad_reflect_empty_axis(m):
    return m.pad(m.zeros([0, 2]), [[0, 0], [1, 1]], mode="REFLECT")


def case_pad_bad_mode(m):
    return m.pad(m.constant(P9), [[1, 0], [0, 0]], mode="WRAP")


def case_pad_reflect_grad(m):
    return _grad(m, lambda v: m.reduce_sum(m.pad(v, [[2, 0]], mode="REFLECT")
                                           * _weights(m, 5)), [1.0, 2.0, 3.0])


def case_pad_symmetric_grad(m):
    return _grad2(m, lambda v: m.reduce_sum(m.pad(v * v * v, [[2, 3]], mode="SYMMETRIC")
                                            * _weights(m, 10)), V)


def case_pad_reflect_jvp(m):
    return _jvp(m, lambda v: m.pad(v, [[1, 1]], mode="REFLECT"), V, np.arange(5.0))


# --- linspace with tensor endpoints ---------------------------------------------------

def case_linspace_vector_endpoints(m):
    return (m.linspace([0.0, 1.0], [1.0, 3.0], 3), m.linspace([0.0, 1.0], [1.0, 3.0], 3, axis=-1),
            m.linspace(0.0, [1.0, 3.0], 4), m.linspace([[0.0], [1.0]], [1.0, 3.0], 2),
            m.linspace([0.0, 1.0], [1.0, 3.0], 1), m.linspace([0.0, 1.0], [1.0, 3.0], 0),
            m.linspace([0, 1], [1, 3], 3), m.linspace(m.constant([0.0, 1.0], m.float64),
                                                      m.constant(2.0, m.float64), 5, axis=1))


def case_linspace_bad_axis(m):
    return m.linspace([0.0, 1.0], [1.0, 3.0], 3, axis=2)


def case_linspace_vector_grad(m):
    w = m.constant(np.arange(12.0).reshape(4, 3))
    return _grad(m, lambda s, e: m.reduce_sum(m.linspace(s, e, 4) * w), [0.0, 1.0, -1.0],
                 [1.0, 3.0, 2.0])


def case_linspace_vector_jvp(m):
    return _jvp(m, lambda s: m.linspace(s, 2.0 * s + 1.0, 3, axis=1), [0.0, 1.0], [1.0, -1.0])


# --- dtypes TensorFlow refuses ----------------------------------------------------------

def case_cumsum_bool(m):
    return m.cumsum(m.constant([True, False]))


def case_argmax_complex(m):
    return m.argmax(m.constant(np.array([1 + 1j, 2])))


def case_segment_sum_bool(m):
    return m.math.segment_sum(m.constant([True]), [0])


def case_reduce_euclidean_norm_bool(m):
    return m.math.reduce_euclidean_norm(m.constant([True]))


def case_bools_rearranged(m):
    b = m.constant([True, False])
    return m.tile(b, [2]), m.gather(b, [1]), m.reverse(b, [0]), m.roll(b, 1, 0)


def case_complex_cumsum(m):
    return m.cumsum(m.constant(np.array([1 + 1j, 2])))


def case_reduce_variance_complex(m):
    return m.math.reduce_variance(m.constant(np.array([1 + 2j, 3 - 1j])))


case_reduce_variance_complex.xfail = ("issue 16: reduce_variance/reduce_std of complex "
                                      "numbers (TensorFlow: 3.25, real); minitape raises "
                                      "TypeError")
