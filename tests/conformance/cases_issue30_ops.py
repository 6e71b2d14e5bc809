"""Issue 30's new ops: xlog1py, unsorted_segment_sum, segment_max, segment_min,
segment_mean (and segment_sum), tensor_scatter_nd_update and
tensor_scatter_nd_add: values, gradients to second order, Jacobians and JVPs
(probes.py), dtypes, edge values and errors, under TensorFlow 2.21 and
minitape."""
import numpy as np

from .probes import probe

DATA = [[1.0, 2.0], [3.0, 1.0], [5.0, 6.0], [2.0, 2.5], [0.5, -1.0]]
WEIGHTS = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]


# --- xlog1py ------------------------------------------------------------------------------

def case_xlog1py(m):
    return probe(m, m.math.xlog1py, [0.0, 1.0, 2.0, 0.5], [-0.5, 0.0, 3.0, -0.25])


def case_xlog1py_broadcast(m):
    return probe(m, m.math.xlog1py, [[0.5], [2.0]], [1.0, 2.0, 3.0])


def case_xlog1py_edges(m):
    # 0 where x is 0, even at y = -1; -inf and its gradients at x != 0, y = -1
    x = m.constant([0.0, 1.0, 0.0])
    y = m.constant([-1.0, -1.0, np.inf])
    with m.GradientTape() as tape:
        tape.watch([x, y])
        z = m.math.xlog1py(x, y)
    return z, tape.gradient(z, [x, y]), m.math.xlog1py(m.constant([1.0], m.float16),
                                                       m.constant([1.0], m.float16))


def case_xlog1py_complex(m):
    x = m.constant([1 + 1j, 0j], m.complex64)
    y = m.constant([0.5 + 0.2j, 2 - 1j], m.complex64)
    with m.GradientTape() as tape:
        tape.watch([x, y])
        z = m.math.xlog1py(x, y)
    return z, tape.gradient(z, [x, y])


def case_xlog1py_integers(m):
    return m.math.xlog1py(m.constant([1]), m.constant([1]))


case_xlog1py_integers.error_only = True


# --- segment ops ----------------------------------------------------------------------------

def _segments(m, name, ids):
    fn = getattr(m.math, name)
    return lambda x: fn(x, m.constant(ids)) * m.constant(WEIGHTS, dtype=x.dtype)


def case_segment_max(m):
    return probe(m, _segments(m, "segment_max", [0, 0, 1, 2, 2]), DATA)


def case_segment_min(m):
    return probe(m, _segments(m, "segment_min", [0, 0, 1, 1, 2]), DATA)


def case_segment_mean(m):
    return probe(m, _segments(m, "segment_mean", [0, 1, 2, 2, 2]), DATA)


def case_segment_ops_where_a_segment_has_no_row(m):
    # the same, with no row for segment 1: value 0 there, gradient and Jacobian
    # agree; the JVP is NaN there in TensorFlow (cases_differences.py)
    return [probe(m, _segments(m, name, [0, 0, 2, 2, 2]), DATA,
                  parts=("value", "grad", "grad2", "jacobian"))
            for name in ("segment_max", "segment_min", "segment_mean", "segment_sum")]


def case_segment_sum(m):
    return probe(m, _segments(m, "segment_sum", [0, 0, 2, 2, 2]), DATA)


def case_segment_max_min_ties_share_the_gradient(m):
    return (probe(m, lambda x: m.math.segment_max(x, m.constant([0, 0, 0, 1])),
                  [1.0, 3.0, 3.0, 2.0]),
            probe(m, lambda x: m.math.segment_min(x, m.constant([0, 1, 1, 1])),
                  [1.0, -3.0, 2.0, -3.0]))


def case_segment_values_and_dtypes(m):
    ids64 = m.constant([0, 0, 1, 1], m.int64)
    d = m.constant([[1.0, 2.0], [3.0, 1.0], [5.0, 6.0], [2.0, 2.0]])
    ints = m.constant([3, 1, 2])
    return (m.math.segment_max(d, ids64), m.math.segment_min(d, ids64),
            m.math.segment_mean(d, ids64), m.math.segment_max(ints, m.constant([0, 0, 1])),
            m.math.segment_min(ints, m.constant([0, 0, 1])),
            m.math.segment_mean(m.constant([1 + 1j, 2 + 0j]), m.constant([0, 0])),
            m.math.segment_max(m.zeros((0, 2)), m.zeros((0,), m.int32)),
            m.math.segment_mean(m.zeros((0, 2)), m.zeros((0,), m.int32)),
            m.math.segment_max(m.constant([-np.inf, 1.0]), m.constant([0, 2])))


def case_segment_max_unsorted_ids(m):
    return m.math.segment_max(m.constant([1.0, 2.0]), m.constant([1, 0]))


case_segment_max_unsorted_ids.error_only = True


def case_segment_mean_negative_id(m):
    return m.math.segment_mean(m.constant([1.0, 2.0]), m.constant([-1, 0]))


case_segment_mean_negative_id.error_only = True


def case_segment_min_ids_too_short(m):
    return m.math.segment_min(m.constant([1.0, 2.0, 3.0]), m.constant([0, 0]))


case_segment_min_ids_too_short.error_only = True


def case_segment_max_float_ids(m):
    return m.math.segment_max(m.constant([1.0, 2.0]), m.constant([0.0, 0.0]))


case_segment_max_float_ids.error_only = True


def case_segment_max_of_bools(m):
    return m.math.segment_max(m.constant([True, False]), m.constant([0, 0]))


case_segment_max_of_bools.error_only = True


# --- unsorted_segment_sum -------------------------------------------------------------------

def case_unsorted_segment_sum(m):
    # ids in any order, one dropped (negative), a segment no row has
    def f(x):
        return m.math.unsorted_segment_sum(x, m.constant([2, -1, 0, 2, 0]), 4)
    return probe(m, f, DATA)


def case_unsorted_segment_sum_ids_of_rank_two(m):
    def f(x):
        return m.math.unsorted_segment_sum(x, m.constant([[0, 1], [1, 2], [0, 0]]), 3)
    return probe(m, f, [[1.0, 2.0], [3.0, 1.0], [5.0, 6.0]])


def case_unsorted_segment_sum_values(m):
    d = m.constant([[1.0, 2.0], [3.0, 1.0], [5.0, 6.0], [2.0, 2.0]])
    return (m.math.unsorted_segment_sum(d, m.constant([0, 1, 1, 0]), m.constant(2)),
            m.math.unsorted_segment_sum(d, m.constant([-1, -1, -1, -1]), 0),
            m.math.unsorted_segment_sum(d, m.constant(1), 3),
            m.math.unsorted_segment_sum(m.constant([1, 2]), m.constant([0, 0]), 1),
            m.math.unsorted_segment_sum(d, m.constant([0, 1, 1, 0], m.int64), 3))


def case_unsorted_segment_sum_id_too_large(m):
    return m.math.unsorted_segment_sum(m.constant([1.0, 2.0]), m.constant([0, 5]), 4)


case_unsorted_segment_sum_id_too_large.error_only = True


def case_unsorted_segment_sum_shapes_do_not_start_alike(m):
    return m.math.unsorted_segment_sum(m.ones((4, 2)), m.constant([0, 1]), 3)


case_unsorted_segment_sum_shapes_do_not_start_alike.error_only = True


def case_unsorted_segment_sum_negative_count(m):
    return m.math.unsorted_segment_sum(m.ones((2,)), m.constant([0, 0]), -1)


case_unsorted_segment_sum_negative_count.error_only = True


def case_unsorted_segment_sum_count_not_a_scalar(m):
    return m.math.unsorted_segment_sum(m.ones((2,)), m.constant([0, 0]), [2])


case_unsorted_segment_sum_count_not_a_scalar.error_only = True


# --- tensor_scatter_nd_update and tensor_scatter_nd_add -------------------------------------

def _scatter(m, name, indices):
    fn = getattr(m, name)
    return lambda t, u: fn(t, m.constant(indices), u) * m.constant(WEIGHTS, dtype=t.dtype)


TENSOR = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]


def case_tensor_scatter_nd_update_rows(m):
    return probe(m, _scatter(m, "tensor_scatter_nd_update", [[0], [2]]), TENSOR,
                 [[10.0, 20.0], [30.0, 40.0]])


def case_tensor_scatter_nd_update_entries(m):
    return probe(m, _scatter(m, "tensor_scatter_nd_update", [[0, 1], [2, 0]]), TENSOR,
                 [10.0, 30.0])


def case_tensor_scatter_nd_add_rows(m):
    return probe(m, _scatter(m, "tensor_scatter_nd_add", [[0], [2], [0]]), TENSOR,
                 [[10.0, 20.0], [30.0, 40.0], [1.0, 1.0]])


def case_tensor_scatter_nd_add_entries(m):
    return probe(m, _scatter(m, "tensor_scatter_nd_add", [[0, 1], [0, 1], [1, 0]]), TENSOR,
                 [10.0, 30.0, 7.0])


def case_tensor_scatter_values(m):
    t = m.constant(TENSOR)
    return (m.tensor_scatter_nd_update(t, [[0, 1], [0, 1]], [10.0, 30.0]),
            m.tensor_scatter_nd_update(m.constant([1, 2, 3]), [[1]], [9]),
            m.tensor_scatter_nd_add(m.constant([1, 2, 3]), [[1]], [9]),
            m.tensor_scatter_nd_update(t, [[[0]], [[1]]], [[[1.0, 1.0]], [[2.0, 2.0]]]),
            m.tensor_scatter_nd_add(t, m.zeros((0, 1), m.int32), m.zeros((0, 2))),
            m.tensor_scatter_nd_add(t, m.constant([[2]], m.int64), [[1.0, 1.0]]))


def case_tensor_scatter_nd_update_index_out_of_range(m):
    return m.tensor_scatter_nd_update(m.constant(TENSOR), [[3]], [[1.0, 2.0]])


case_tensor_scatter_nd_update_index_out_of_range.error_only = True


def case_tensor_scatter_nd_add_negative_index(m):
    return m.tensor_scatter_nd_add(m.constant(TENSOR), [[-1]], [[1.0, 2.0]])


case_tensor_scatter_nd_add_negative_index.error_only = True


def case_tensor_scatter_nd_add_updates_of_another_shape(m):
    return m.tensor_scatter_nd_add(m.constant(TENSOR), [[0]], [[1.0, 2.0, 3.0]])


case_tensor_scatter_nd_add_updates_of_another_shape.error_only = True


def case_tensor_scatter_nd_update_updates_of_another_dtype(m):
    return m.tensor_scatter_nd_update(m.constant(TENSOR), [[0]], m.constant([[1, 2]]))


case_tensor_scatter_nd_update_updates_of_another_dtype.error_only = True


def case_tensor_scatter_nd_update_scalar_indices(m):
    return m.tensor_scatter_nd_update(m.constant(TENSOR), 0, [1.0, 2.0])


case_tensor_scatter_nd_update_scalar_indices.error_only = True


def case_tensor_scatter_nd_add_float_indices(m):
    return m.tensor_scatter_nd_add(m.constant(TENSOR), m.constant([[0.0]]), [[1.0, 2.0]])


case_tensor_scatter_nd_add_float_indices.error_only = True
