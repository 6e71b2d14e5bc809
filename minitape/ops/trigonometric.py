"""Trigonometric and hyperbolic functions and their inverses, TensorFlow's
tan, asin, acos, atan, atan2, sinh, cosh, asinh, acosh, atanh (sin, cos and
tanh are in elementwise.py).

Each `unary` row gives the op's forward (NumPy) and its derivative f'(x) in
minitape ops, from which unary.py makes the gradient and JVP rules. The
derivatives are the formulas of TensorFlow's math_grad.py, so where they blow
up the answers match: asin' and acos' are +-inf at x = +-1 and NaN beyond,
atanh' is inf at +-1, acosh' = 1 / sinh(acosh x) is inf at 1 and NaN below (the
upstream gradient times them, so 0 * inf is NaN, as in TensorFlow).
All accept complex inputs (TensorFlow's convention, see complex.py) but atan2.
"""
import numpy as np

from ..registry import RegisterGradient, RegisterJVP
from .binary import binary, input_gradients, lifted, tangent_sum
from .core import elementwise_shape, replay
from .elementwise import cos, sqrt, square
from .unary import unary

# name, op type, forward, derivative f'(x) (y = f(x)), doc
tan = unary("tan", "Tan", np.tan,
            lambda x, y: 1 / square(cos(x)),          # sec^2 x; inf where cos x = 0
            "Tangent.")
asin = unary("asin", "Asin", np.arcsin,
             lambda x, y: 1 / sqrt(1 - square(x)),     # inf at +-1, NaN beyond
             "Inverse sine, in [-pi/2, pi/2].")
acos = unary("acos", "Acos", np.arccos,
             lambda x, y: -1 / sqrt(1 - square(x)),    # -inf at +-1, NaN beyond
             "Inverse cosine, in [0, pi].")
atan = unary("atan", "Atan", np.arctan,
             lambda x, y: 1 / (1 + square(x)),
             "Inverse tangent, in (-pi/2, pi/2).")
sinh = unary("sinh", "Sinh", np.sinh,
             lambda x, y: cosh(x),
             "Hyperbolic sine.")
cosh = unary("cosh", "Cosh", np.cosh,
             lambda x, y: sinh(x),
             "Hyperbolic cosine.")
asinh = unary("asinh", "Asinh", np.arcsinh,
              lambda x, y: 1 / cosh(y),                # = 1 / sqrt(1 + x^2)
              "Inverse hyperbolic sine.")
acosh = unary("acosh", "Acosh", np.arccosh,
              lambda x, y: 1 / sinh(y),                # = 1 / sqrt(x^2 - 1): inf at 1
              "Inverse hyperbolic cosine (NaN below 1).")
atanh = unary("atanh", "Atanh", np.arctanh,
              lambda x, y: 1 / (1 - square(x)),        # inf at +-1
              "Inverse hyperbolic tangent (+-inf at +-1, NaN beyond).")


_atan2 = binary("atan2", "Atan2", np.arctan2, "", kinds="f")


def atan2(y, x, name=None):
    """The angle of the point (x, y), in (-pi, pi]: y first, as in TensorFlow."""
    return _atan2(y, x, name=name)


@RegisterGradient("Atan2", batch_safe=True)
def _atan2_grad(op, grad):
    # d atan2(y, x) = (x dy - y dx) / (x^2 + y^2); NaN at the origin (0 / 0).
    # Written grad * (x / r2), not (grad / r2) * x: the NaN partial itself is
    # differentiated, so the second derivative at the origin is NaN too (with
    # (grad / r2) * x, the path through grad / r2 is multiplied by x = 0 and
    # masked, and what is left, grad / r2 alone, is +-inf)
    y, x = op.inputs
    r2 = square(y) + square(x)
    return input_gradients(op, grad, grad * (x / r2) if op.needs[0] else None,
                           grad * (-y / r2) if op.needs[1] else None)


@RegisterJVP("Atan2", batch_safe=True)
def _atan2_jvp(op, ty, tx):
    y, x = op.inputs
    r2 = square(y) + square(x)
    tangents = (ty, tx)
    ty, tx = lifted(op, ty, tx)
    return tangent_sum(op, tangents, None if ty is None else ty * (x / r2),
                       None if tx is None else tx * (-y / r2))


replay("Atan2", lambda xs, attrs, out_shapes: atan2(xs[0], xs[1]), arity=2,
       shape=elementwise_shape)
