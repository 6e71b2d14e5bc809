"""Conformance cases for ops/complex.py (issue 16): complex, real, imag, conj,
angle, with TensorFlow's convention for gradients through complex numbers
(the gradient of a real loss is dL/dx + i dL/dy) and JVPs; dtypes; real inputs."""
import numpy as np

from .cases_trigonometric import complex_probe

Z = [1 + 2j, -3 - 0.5j, 0.25 + 0j]
T = [1 + 2j, 0.5 - 1j, -1 + 0.5j]


def _grad_and_jvp(m, f, z, t):
    x = m.constant(np.asarray(z))
    with m.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    grad = tape.gradient(y, x)
    with m.autodiff.ForwardAccumulator(x, m.constant(np.asarray(t, np.asarray(z).dtype))) \
            as acc:
        y2 = f(x)
    return {"value": y, "grad": grad, "jvp": acc.jvp(y2)}


def case_parts(m):
    return {name: _grad_and_jvp(m, getattr(m.math, name), Z, T)
            for name in ("real", "imag", "conj", "angle")}


def case_parts_of_real_inputs(m):
    return {name: _grad_and_jvp(m, getattr(m.math, name), [1.0, -2.0, -0.0], [1.0, 2.0, 3.0])
            for name in ("real", "imag", "conj", "angle")}


def case_part_dtypes(m):
    z64 = m.constant(np.asarray(Z, np.complex64))
    i = m.constant([7, -7, 0])
    return [m.math.real(z64), m.math.imag(z64), m.math.conj(z64), m.math.angle(z64),
            m.math.real(i), m.math.imag(i), m.math.conj(i)]


def case_complex(m):
    x, y = m.constant([1.0, 2.0], dtype=m.float64), m.constant([3.0, -1.0], dtype=m.float64)
    with m.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        z = m.complex(x, y)
        loss = m.math.real(z * m.math.conj(z))  # |z|^2
    with m.autodiff.ForwardAccumulator([x, y], [m.constant([0.5, 1.0], dtype=m.float64),
                                                m.constant([2.0, 3.0], dtype=m.float64)]) as acc:
        z2 = m.complex(x, y)
    return [z, tape.gradient(z, [x, y]), tape.gradient(loss, [x, y]), acc.jvp(z2)]


def case_complex_dtypes_and_broadcasting(m):
    return [m.complex(m.constant([1.0, 2.0]), 1.0), m.complex(1.0, 2.0),
            m.complex(m.ones((2, 1)), m.ones(3))]


def case_complex_of_mixed_dtypes_is_an_error(m):
    return m.complex(m.constant([1.0]), m.constant([1.0], dtype=m.float64))


case_complex_of_mixed_dtypes_is_an_error.error_only = True


def case_complex_of_integers_is_an_error(m):
    return m.complex(m.constant([1]), m.constant([2]))


case_complex_of_integers_is_an_error.error_only = True


def case_angle_of_integers_is_an_error(m):
    return m.math.angle(m.constant([1, -2]))


case_angle_of_integers_is_an_error.error_only = True


def case_chain_rule_through_complex(m):
    """A real loss of real inputs through complex ops: the same gradient in both."""
    x = m.constant([0.3, -0.7], dtype=m.float64)
    with m.GradientTape() as outer:
        outer.watch(x)
        with m.GradientTape() as tape:
            tape.watch(x)
            z = m.complex(x, 2.0 * x)
            loss = m.reduce_sum(m.math.imag(m.tan(z)) + m.math.angle(m.math.expm1(z)))
        g = tape.gradient(loss, x)
    return loss, g, outer.gradient(g, x)


def _binary_grad_and_jvp(m, f, parts=("value", "grad", "jvp")):
    x = m.constant(np.array([1 + 2j, -0.5 + 0.25j]))
    y = m.constant(np.array([0.5 - 1j, 2.0 + 1j]))
    with m.GradientTape() as tape:
        tape.watch([x, y])
        z = f(x, y)
    grads = tape.gradient(z, [x, y])
    with m.autodiff.ForwardAccumulator([x, y], [m.constant(np.array([1 + 0.5j, -1j])),
                                                m.constant(np.array([0.25 + 1j, 2.0]))]) as acc:
        z2 = f(x, y)
    out = {"value": z, "grad": grads, "jvp": acc.jvp(z2)}
    return {k: v for k, v in out.items() if k in parts}


def case_complex_binary_ops(m):
    out = {name: _binary_grad_and_jvp(m, getattr(m.math, name))
           for name in ("divide_no_nan", "multiply_no_nan", "truediv", "multiply", "divide")}
    # TensorFlow's Xlogy, Xdivy and SquaredDifference gradients take no conjugate
    # (math_grad.py); minitape gives the same numbers
    out.update({name: _binary_grad_and_jvp(m, getattr(m.math, name), ("value", "grad"))
                for name in ("xlogy", "xdivy", "squared_difference")})
    return out


case_complex_binary_ops.ulps = 64


def case_complex_jvp_of_rules_without_conjugate(m):
    return {name: _binary_grad_and_jvp(m, getattr(m.math, name), ("jvp",))
            for name in ("xlogy", "xdivy", "squared_difference")}


case_complex_jvp_of_rules_without_conjugate.xfail = (
    "TensorFlow's forward mode transposes these gradients, which take no conjugate, so "
    "its JVPs multiply the tangents by the conjugated partials; minitape's by the partials "
    "themselves (xlogy: log(y) tx + x/y ty)")


def case_complex_pow(m):
    return _binary_grad_and_jvp(m, m.pow)


case_complex_pow.ulps = 64


def case_complex_elementwise_ops(m):
    """The older elementwise ops with TensorFlow's conjugate (elementwise.py)."""
    return {name: complex_probe(m, getattr(m.math, name))
            for name in ("sin", "cos", "exp", "log", "sqrt", "square", "tanh")}


case_complex_elementwise_ops.ulps = 64
