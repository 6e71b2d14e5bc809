"""Conformance cases for ops/special.py (issue 16): erf, erfc, lgamma, digamma,
polygamma: values (also at poles and infinities), derivatives to second order
(each is the next polygamma), dtypes and errors."""
import numpy as np

from .probes import probe

X = [0.5, -1.25, 2.0]
POS = [0.5, 1.25, 3.0]


def case_erf(m):
    return probe(m, m.math.erf, X)


def case_erfc(m):
    return probe(m, m.math.erfc, X)


def case_erf_erfc_values(m):
    x = [-1.0, 0.0, 0.5, 3.0, 10.0, np.nan]
    return [[m.math.erf(m.constant(x, dtype=d)), m.math.erfc(m.constant(x, dtype=d))]
            for d in (m.float32, m.float64)]


def case_erf_erfc_of_infinities_float32(m):
    # (TensorFlow 2.21's float64 erf gives NaN at +-inf, a rough edge of its own:
    # minitape gives the limits -1 and 1 in both dtypes, tests/test_ops_elementwise.py)
    x = m.constant([-np.inf, np.inf])
    return [m.math.erf(x), m.math.erfc(x)]


def case_lgamma(m):
    return probe(m, m.math.lgamma, [0.5, 1.25, 7.5, -0.5, -2.5])


def case_lgamma_poles(m):
    """inf at 0, -1, -2; its gradient there is digamma's NaN."""
    return probe(m, m.math.lgamma, [0.0, -1.0, -2.0, np.inf], parts=("value", "grad"))


def case_digamma(m):
    return probe(m, m.math.digamma, [0.5, 1.25, 7.5, -0.5, -2.5])


case_digamma.ulps = 64


def case_digamma_values(m):
    x = [1.0, 0.5, 1e-3, 100.0, 1e6, -0.001, -100.5, 0.0, -1.0, -np.inf, np.inf, np.nan]
    return m.math.digamma(m.constant(x, dtype=m.float64))


case_digamma_values.ulps = 64


def case_polygamma(m):
    return probe(m, lambda a, x: m.math.polygamma(a, x), [1.0, 2.0, 3.0], POS)


case_polygamma.ulps = 64


def case_polygamma_values(m):
    n = m.constant([[0.0], [1.0], [2.0], [3.0], [1.5], [-1.0]], dtype=m.float64)
    x = m.constant([0.5, 1.0, 2.5, 20.0, -0.5, -1.5, -2.5, 0.0, -1.0, np.inf], dtype=m.float64)
    return m.math.polygamma(n, x)


case_polygamma_values.ulps = 64


def case_polygamma_float32(m):
    return m.math.polygamma(m.constant(1.0), m.constant([0.25, 1.0, 4.0]))


def case_complex_is_an_error(m):
    return m.math.erf(m.constant(np.array([1 + 2j])))


case_complex_is_an_error.error_only = True


def case_integer_is_an_error(m):
    return m.math.lgamma(m.constant([1, 2]))


case_integer_is_an_error.error_only = True
