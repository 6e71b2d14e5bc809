"""The API summary's "reductions" row (docs/api.md): reduce_* with axis and keepdims, and norm."""
from .probes import probe

A = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]]
PARTS = ("value", "grad", "grad2", "jvp")


def _all_axes(m, reduce):
    def f(x):
        return [reduce(x), reduce(x, axis=0), reduce(x, axis=1), reduce(x, axis=-1),
                reduce(x, axis=[0, 1]), reduce(x, axis=0, keepdims=True),
                reduce(x, axis=1, keepdims=True), reduce(x, keepdims=True)]
    return f


def case_reduce_sum(m):
    return probe(m, _all_axes(m, m.reduce_sum), A, parts=PARTS)


def case_reduce_mean(m):
    return probe(m, _all_axes(m, m.reduce_mean), A, parts=PARTS)


def case_reduce_max(m):
    return probe(m, _all_axes(m, m.reduce_max), A, parts=PARTS)


def case_reduce_min(m):
    return probe(m, _all_axes(m, m.reduce_min), A, parts=PARTS)


def case_reduce_prod(m):
    return probe(m, _all_axes(m, m.reduce_prod), A, parts=PARTS)


def case_reduce_jacobians(m):
    return probe(m, lambda x: m.reduce_sum(x, axis=1) + m.reduce_max(x, axis=1) * 2.0
                 + m.reduce_prod(x, axis=1), A)


def case_reduce_math_namespace(m):
    fs = [m.math.reduce_sum, m.math.reduce_mean, m.math.reduce_max, m.math.reduce_min,
          m.math.reduce_prod]
    return probe(m, lambda x: [f(x, axis=1) for f in fs], A, parts=PARTS)


def case_reduce_max_ties(m):
    """TensorFlow splits the gradient equally between tied maxima."""
    return probe(m, lambda x: m.reduce_max(x, axis=1), [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])


def case_reduce_min_ties(m):
    return probe(m, lambda x: m.reduce_min(x), [[1.0, 1.0, 3.0]])


def case_reduce_prod_with_zeros(m):
    return probe(m, lambda x: m.reduce_prod(x, axis=1), [[0.0, 2.0, 3.0], [0.0, 0.0, 3.0]],
                 parts=("value", "grad", "jacobian", "jvp"))


def case_reduce_prod_hessian_at_zero(m):
    x = m.constant([0.0, 2.0, 3.0], dtype=m.float64)
    with m.GradientTape() as outer:
        outer.watch(x)
        with m.GradientTape() as inner:
            inner.watch(x)
            y = m.reduce_prod(x)
        g = inner.gradient(y, x)
    return outer.jacobian(g, x)


case_reduce_prod_hessian_at_zero.differs = "the second derivative of `reduce_prod` at a zero entry"


def case_reduce_prod_hessian_nonzero(m):
    return probe(m, lambda x: m.reduce_prod(x, axis=1), [[1.5, 2.0, -3.0], [0.5, 4.0, 1.0]],
                 parts=("grad2",))


def case_reduce_empty(m):
    x = m.zeros([0, 3])
    return [m.reduce_sum(x), m.reduce_sum(x, axis=0), m.reduce_prod(x, axis=0),
            m.reduce_mean(x, axis=0)]


def case_reduce_max_empty(m):
    return m.reduce_max(m.zeros([0, 3]), axis=0)


def case_reduce_negative_axis(m):
    x = m.reshape(m.range(24.0), [2, 3, 4])
    return [m.reduce_sum(x, axis=-2), m.reduce_mean(x, axis=[-1, 0]),
            m.reduce_max(x, axis=(0, 2), keepdims=True)]


def case_reduce_axis_out_of_range(m):
    return m.reduce_sum(m.constant([[1.0, 2.0]]), axis=2)


case_reduce_axis_out_of_range.error_only = True


def case_reduce_sum_int32_dtype(m):
    x = m.constant([[1, 2], [3, 4]])
    return [m.reduce_sum(x), m.reduce_sum(x, axis=0), m.reduce_prod(x), m.reduce_max(x)]


def case_reduce_sum_bool_error(m):
    return m.reduce_sum(m.constant([True, False]))


case_reduce_sum_bool_error.error_only = True
case_reduce_sum_bool_error.xfail = ("not in issue 16: reduce_sum of bools counts them (NumPy); "
                                    "TensorFlow raises InvalidArgumentError")


def case_norm_default(m):
    return probe(m, lambda x: [m.norm(x), m.norm(x, axis=1), m.norm(x, axis=0, keepdims=True),
                               m.linalg.norm(x, axis=-1)], A)


def case_norm_orders_vector(m):
    return probe(m, lambda x: [m.norm(x, ord=1), m.norm(x, ord=2), m.norm(x, ord=m_inf(m))],
                 [3.0, -4.0, 1.0], parts=PARTS)


def m_inf(m):
    return float("inf")


def case_norm_euclidean_fro(m):
    return probe(m, lambda x: [m.norm(x, ord="euclidean"), m.norm(x, ord="fro", axis=[0, 1])],
                 A, parts=PARTS)


def case_norm_int_error(m):
    return m.norm(m.constant([3, 4]))


case_norm_int_error.error_only = True
