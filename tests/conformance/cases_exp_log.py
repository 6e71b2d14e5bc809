"""Conformance cases for ops/exp_log.py (issue 16): expm1, log1p, rsqrt,
reciprocal, softsign, log_sigmoid, xlogy, xdivy; the where-trap (TensorFlow's
RsqrtGrad and ReciprocalGrad kernels give 0 where the upstream gradient is 0),
zeros where xlogy/xdivy's x is 0, complex inputs, and errors."""
import numpy as np

from .cases_trigonometric import complex_probe
from .probes import probe

X = [0.5, -0.75, 0.3]
POS = [0.5, 1.25, 3.0]


def case_expm1(m):
    return probe(m, m.math.expm1, X)


def case_expm1_tiny(m):
    return m.math.expm1(m.constant([1e-10, -1e-12, -np.inf], dtype=m.float64))


def case_log1p(m):
    return probe(m, m.math.log1p, X)


def case_log1p_edges(m):
    return probe(m, m.math.log1p, [-1.0, -2.0, 1e-20], parts=("value", "grad", "jvp"))


def case_rsqrt(m):
    return probe(m, m.math.rsqrt, POS)


def case_reciprocal(m):
    return probe(m, m.math.reciprocal, [0.5, -1.25, 3.0])


def case_rsqrt_where_trap(m):
    """tf.where(x > 0, rsqrt(x), 0) at x <= 0: the gradient 0, not NaN. (Its
    second derivative there is a README difference: cases_differences.py.)"""
    return probe(m, lambda x: m.where(x > 0, m.math.rsqrt(x), 0.0), [-1.0, 0.0, 4.0],
                 parts=("value", "grad", "jacobian", "jvp"))


def case_reciprocal_where_trap(m):
    return probe(m, lambda x: m.where(x > 0, m.math.reciprocal(x), 0.0), [0.0, -1.0, 4.0],
                 parts=("value", "grad", "jacobian", "jvp"))


def case_log1p_where_trap_is_nan(m):
    """Log1p's rule is a plain product in TensorFlow: 0 * inf is NaN."""
    return probe(m, lambda x: m.where(x > 0, m.math.log1p(x), 0.0), [-1.0, 4.0],
                 parts=("value", "grad"))


def case_softsign(m):
    return probe(m, m.nn.softsign, [0.5, -2.0, 0.0], parts=("value", "grad"))


def case_softsign_higher_derivatives(m):
    """TensorFlow has no gradient for SoftsignGrad, so its second derivative,
    Jacobian (pfor differentiates the gradient) and JVP raise LookupError."""
    return probe(m, m.nn.softsign, [0.5, -2.0, 0.0], parts=("grad2", "jacobian", "jvp"))


case_softsign_higher_derivatives.differs = \
    "`softsign`'s second derivative, Jacobian and JVP"


def case_math_softsign(m):
    return m.math.softsign(m.constant([-np.inf, -1.0, 0.0, 1000.0]))


def case_log_sigmoid(m):
    return probe(m, m.math.log_sigmoid, [-2.0, 0.0, 3.0])


def case_log_sigmoid_extremes(m):
    return [m.math.log_sigmoid(m.constant([-1000.0, -40.0, 0.0, 40.0, 1000.0], dtype=dtype))
            for dtype in (m.float32, m.float64)]


def case_xlogy(m):
    return probe(m, m.math.xlogy, [0.5, -1.5, 2.0], POS)


def case_xlogy_where_x_is_zero(m):
    return probe(m, m.math.xlogy, [0.0, 0.0, 2.0, 1.0], [0.0, 1.0, 3.0, -1.0],
                 parts=("value", "grad", "jvp"))


def case_xdivy(m):
    return probe(m, m.math.xdivy, [0.5, -1.5, 2.0], [1.5, 0.75, -2.0])


def case_xdivy_where_x_is_zero(m):
    return probe(m, m.math.xdivy, [0.0, 0.0, 2.0], [0.0, 1.0, 3.0],
                 parts=("value", "grad", "jvp"))


def case_xlogy_broadcast(m):
    return probe(m, m.math.xlogy, [[0.5], [0.0]], POS)


def case_complex(m):
    return {name: complex_probe(m, getattr(m.math, name))
            for name in ("expm1", "log1p", "rsqrt", "reciprocal")}


case_complex.ulps = 64


def case_complex_xlogy_xdivy_values(m):
    z = m.constant(np.array([1 + 2j, -3 - 0.5j]))
    return [m.math.xlogy(z, z), m.math.xdivy(z, z)]


def case_integer_input_is_an_error(m):
    return m.math.expm1(m.constant([1, 2]))


case_integer_input_is_an_error.error_only = True


def case_xlogy_of_integers_is_an_error(m):
    return m.math.xlogy(m.constant([1, 2]), m.constant([1, 2]))


case_xlogy_of_integers_is_an_error.error_only = True


def case_softsign_of_complex_is_an_error(m):
    return m.nn.softsign(m.constant(np.array([1 + 2j])))


case_softsign_of_complex_is_an_error.error_only = True
