"""Trigonometric and hyperbolic functions and their inverses, TensorFlow's
tan, asin, acos, atan, atan2, sinh, cosh, asinh, acosh, atanh (sin, cos and
tanh are in elementwise.py).

Each `unary` row gives the op's forward (NumPy) and its derivative f'(x) in
minitape ops, from which partials.py makes the gradient and JVP rules. The
derivatives are the formulas of TensorFlow's math_grad.py, so where they blow
up the answers match: asin' and acos' are +-inf at x = +-1 and NaN beyond,
atanh' is inf at +-1, acosh' = 1 / sinh(acosh x) is inf at 1 and NaN below (the
upstream gradient times them, so 0 * inf is NaN, as in TensorFlow).
All accept complex inputs (TensorFlow's convention, see complex.py) but atan2.
"""
import numpy as np

from .elementwise import cos, sqrt, square
from .partials import binary, unary

# name, op type, forward, derivative f'(x) (y = f(x)), doc
tan = unary("tan", "Tan", np.tan,
            lambda x, y: 1 / square(cos(x)),          # sec^2 x; inf where cos x = 0
            doc="Tangent.")
asin = unary("asin", "Asin", np.arcsin,
             lambda x, y: 1 / sqrt(1 - square(x)),     # inf at +-1, NaN beyond
             "Inverse sine, in [-pi/2, pi/2].")
acos = unary("acos", "Acos", np.arccos,
             lambda x, y: -1 / sqrt(1 - square(x)),    # -inf at +-1, NaN beyond
             "Inverse cosine, in [0, pi].")
atan = unary("atan", "Atan", np.arctan,
             lambda x, y: 1 / (1 + square(x)),
             "Inverse tangent, in (-pi/2, pi/2).", smooth=True)
sinh = unary("sinh", "Sinh", np.sinh,
             lambda x, y: cosh(x),
             "Hyperbolic sine.", smooth=True)
cosh = unary("cosh", "Cosh", np.cosh,
             lambda x, y: sinh(x),
             "Hyperbolic cosine.", smooth=True)
asinh = unary("asinh", "Asinh", np.arcsinh,
              lambda x, y: 1 / cosh(y),                # = 1 / sqrt(1 + x^2)
              "Inverse hyperbolic sine.", smooth=True)
acosh = unary("acosh", "Acosh", np.arccosh,
              lambda x, y: 1 / sinh(y),                # = 1 / sqrt(x^2 - 1): inf at 1
              "Inverse hyperbolic cosine (NaN below 1).")
atanh = unary("atanh", "Atanh", np.arctanh,
              lambda x, y: 1 / (1 - square(x)),        # inf at +-1
              "Inverse hyperbolic tangent (+-inf at +-1, NaN beyond).")


def _over_r_squared(a, y, x):
    """a / (x^2 + y^2), written (a / r) / r with r = sqrt(x^2 + y^2): at the
    origin it is NaN (0 / 0), and so are its derivatives in both modes (r's
    tangent there is sqrt's at 0, NaN as in TensorFlow; that of x^2 + y^2
    would be 0, and a zero tangent adds nothing)."""
    r = sqrt(square(y) + square(x))
    return a / r / r


# d atan2(y, x) = (x dy - y dx) / (x^2 + y^2): NaN at the origin (0 / 0)
_atan2 = binary("atan2", "Atan2", np.arctan2, kinds="f",
                partials=(lambda y, x, z: _over_r_squared(x, y, x),
                          lambda y, x, z: _over_r_squared(-y, y, x)))


def atan2(y, x, name=None):
    """The angle of the point (x, y), in (-pi, pi]: y first, as in TensorFlow."""
    return _atan2(y, x, name=name)
