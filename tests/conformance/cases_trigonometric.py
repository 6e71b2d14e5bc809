"""Conformance cases for ops/trigonometric.py (issue 16): values, gradients to
second order, Jacobians and JVPs in float32 and float64 (probes.py), complex
inputs by TensorFlow's convention, the points where a derivative blows up,
and errors."""
import numpy as np

from .probes import probe

X = [0.5, -1.25, 0.3]
SMALL = [0.5, -0.75, 0.1]      # inside (-1, 1)
ABOVE_ONE = [1.5, 2.25, 4.0]
Z = [0.5 + 0.3j, -1.25 + 0.5j, 0.3 - 0.8j]


def complex_probe(m, f, z=Z):
    """Value, gradient (TensorFlow's conj convention) and JVP of f at complex128 z."""
    x = m.constant(np.asarray(z, np.complex128))
    with m.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    grad = tape.gradient(y, x)
    tangent = m.constant(np.asarray([1.0 + 0.5j, -0.25 + 1j, 2.0 - 1j]))
    with m.autodiff.ForwardAccumulator(x, tangent) as acc:
        y2 = f(x)
    return {"value": y, "grad": grad, "jvp": acc.jvp(y2)}


def case_tan(m):
    return probe(m, m.tan, X)


def case_math_tan(m):
    return probe(m, m.math.tan, X)


def case_asin(m):
    return probe(m, m.asin, SMALL)


def case_acos(m):
    return probe(m, m.math.acos, SMALL)


def case_atan(m):
    return probe(m, m.atan, X)


def case_sinh(m):
    return probe(m, m.sinh, X)


def case_cosh(m):
    return probe(m, m.math.cosh, X)


def case_asinh(m):
    return probe(m, m.asinh, X)


def case_acosh(m):
    return probe(m, m.acosh, ABOVE_ONE)


def case_atanh(m):
    return probe(m, m.math.atanh, SMALL)


def case_atan2(m):
    return probe(m, m.atan2, X, [1.5, -0.5, -2.0])


def case_atan2_broadcast(m):
    return probe(m, m.math.atan2, [[0.5], [-1.0]], [1.5, -0.5, 2.0])


def case_atan2_origin_gradient_is_nan(m):
    return probe(m, m.atan2, [0.0, 1.0], [0.0, 2.0], parts=("value", "grad", "jvp"))


def case_domain_edges(m):
    """asin and acos at +-1 (inf derivative), outside [-1, 1] (NaN), acosh below 1."""
    edge = [1.0, -1.0, 2.0]
    return [probe(m, f, edge, parts=("value", "grad", "jvp"))
            for f in (m.asin, m.acos, m.acosh, m.atanh)]


def case_complex(m):
    return {name: complex_probe(m, getattr(m.math, name))
            for name in ("tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh",
                         "atanh")}


case_complex.ulps = 64


def case_complex64_dtypes(m):
    z = m.constant(np.asarray(Z, np.complex64))
    return [m.math.tan(z), m.math.asinh(z)]


def case_integer_input_is_an_error(m):
    return m.math.tan(m.constant([1, 2]))


case_integer_input_is_an_error.error_only = True


def case_atan2_of_complex_is_an_error(m):
    z = m.constant(np.asarray(Z, np.complex128))
    return m.math.atan2(z, z)


case_atan2_of_complex_is_an_error.error_only = True


def case_atan2_mixed_dtypes_is_an_error(m):
    return m.math.atan2(m.constant([1.0]), m.constant([1.0], dtype=m.float64))


case_atan2_mixed_dtypes_is_an_error.error_only = True
