"""Op table rows for the elementwise families of issue 16 (trigonometric.py,
exp_log.py, special.py, elementwise.py's division ops, complex.py): each row gets finite
differences to third order, pfor vs loop Jacobians and Hessians, forward vs
reverse and compiled vs eager (see op_table.py). Inputs stay inside each
op's domain and away from its kinks and poles."""
import numpy as np

import minitape as mt
from op_table import P, R, S, case

_rng = np.random.default_rng(16)


def U(lo, hi, *shape):
    """Uniform in [lo, hi)."""
    return _rng.uniform(lo, hi, shape)


CASES = [
    # trigonometric and hyperbolic
    case("elementwise.tan", mt.tan, U(-1.2, 1.2, 2, 3)),
    case("elementwise.math.tan", mt.math.tan, R(3)),
    case("elementwise.asin", mt.asin, U(-0.8, 0.8, 2, 3)),
    case("elementwise.acos", mt.math.acos, U(-0.8, 0.8, 2, 3)),
    case("elementwise.atan", mt.atan, U(-3, 3, 2, 3)),
    case("elementwise.sinh", mt.sinh, R(2, 3)),
    case("elementwise.cosh", mt.math.cosh, R(2, 3)),
    case("elementwise.asinh", mt.asinh, U(-3, 3, 2, 3)),
    case("elementwise.acosh", mt.acosh, U(1.2, 3, 2, 3)),
    case("elementwise.atanh", mt.math.atanh, U(-0.8, 0.8, 2, 3)),
    case("elementwise.atan2", mt.atan2, S(2, 3), S(2, 3)),
    case("elementwise.atan2-broadcast", mt.math.atan2, S(3, 1), S(4)),
    # exponentials, logarithms, reciprocals
    case("elementwise.expm1", mt.math.expm1, R(2, 3)),
    case("elementwise.log1p", mt.math.log1p, U(-0.7, 2, 2, 3)),
    case("elementwise.rsqrt", mt.math.rsqrt, P(2, 3)),
    case("elementwise.reciprocal", mt.math.reciprocal, S(2, 3)),
    case("elementwise.softsign", mt.math.softsign, S(2, 3)),
    case("elementwise.nn.softsign", mt.nn.softsign, S(4)),
    case("elementwise.log_sigmoid", mt.math.log_sigmoid, U(-4, 4, 2, 3)),
    case("elementwise.xlogy", mt.math.xlogy, S(2, 3), P(2, 3)),
    case("elementwise.xlogy-broadcast", mt.math.xlogy, S(3, 1), P(4)),
    case("elementwise.xlog1py", mt.math.xlog1py, S(2, 3), P(2, 3) - 0.4),
    case("elementwise.xlog1py-broadcast", mt.math.xlog1py, S(3, 1), P(4)),
    case("elementwise.xdivy", mt.math.xdivy, S(2, 3), S(2, 3)),
    # special functions
    case("elementwise.erf", mt.math.erf, R(2, 3)),
    case("elementwise.erfc", mt.math.erfc, R(2, 3)),
    case("elementwise.lgamma", mt.math.lgamma, P(2, 3)),
    case("elementwise.lgamma-negative", mt.math.lgamma, U(-0.9, -0.1, 4)),
    case("elementwise.digamma", mt.math.digamma, P(2, 3)),
    case("elementwise.digamma-negative", mt.math.digamma, U(-2.8, -2.2, 4)),
    case("elementwise.polygamma", lambda x: mt.math.polygamma(mt.constant(1.0, x.dtype), x),
         P(2, 3)),
    case("elementwise.polygamma-broadcast",
         lambda x: mt.math.polygamma(mt.constant([[0.0], [2.0]], x.dtype), x), P(3)),
    # division, rounding, sums
    case("elementwise.truediv", mt.truediv, R(2, 3), S(2, 3)),
    case("elementwise.floormod", mt.math.floormod, U(0.1, 0.9, 2, 3) + 2.0, U(0.95, 1.05, 2, 3)),
    case("elementwise.floormod-negative", mt.math.floormod, U(-2.9, -2.1, 3), U(1.0, 1.05, 3)),
    case("elementwise.x%y", lambda x, y: x % y, U(3.1, 3.9, 2, 2), U(0.95, 1.05, 2)),
    case("elementwise.divide_no_nan", mt.math.divide_no_nan, R(2, 3), S(2, 3)),
    case("elementwise.multiply_no_nan", mt.math.multiply_no_nan, R(2, 3), S(2, 3)),
    case("elementwise.multiply_no_nan-broadcast", mt.math.multiply_no_nan, R(3, 1), S(4)),
    case("elementwise.squared_difference", mt.math.squared_difference, R(2, 3), R(2, 3)),
    case("elementwise.squared_difference-broadcast", mt.math.squared_difference, R(2, 1),
         R(3)),
    case("elementwise.add_n", lambda x, y: mt.add_n([x, y, x]), R(2, 3), R(2, 3)),
    case("elementwise.add_n-one", lambda x: mt.math.add_n([x]), R(3)),
    # complex numbers, differentiated by TensorFlow's convention (real in, real out)
    case("elementwise.complex-real-imag",
         lambda x, y: mt.math.real(mt.complex(x, y)) * mt.math.imag(mt.complex(y, x)),
         R(2, 3), R(2, 3)),
    case("elementwise.complex-broadcast", lambda x, y: mt.math.imag(mt.tan(mt.complex(x, y))),
         R(2, 1), R(3)),
    case("elementwise.complex-angle", lambda x, y: mt.math.angle(mt.complex(x, y)), S(2, 3),
         S(2, 3)),
    case("elementwise.complex-conj",
         lambda x, y: mt.math.imag(mt.math.log1p(mt.math.conj(mt.complex(x, y)))), P(4), R(4)),
    case("elementwise.complex-tan", lambda x, y: mt.math.real(mt.tan(mt.complex(x, y))),
         R(4), R(4)),
    case("elementwise.complex-sinh-cosh",
         lambda x, y: mt.math.imag(mt.sinh(mt.cosh(mt.complex(x, y)))), R(4), R(4)),
    case("elementwise.complex-inverse-trig",
         lambda x, y: mt.math.real(mt.asin(mt.complex(x, y)))
         + mt.math.imag(mt.acos(mt.complex(y, x))) + mt.math.real(mt.atan(mt.complex(x, y))),
         R(4) * 0.5, R(4) * 0.5),
    case("elementwise.complex-inverse-hyperbolic",
         lambda x, y: mt.math.real(mt.asinh(mt.complex(x, y)))
         + mt.math.imag(mt.acosh(mt.complex(x + 2.0, y)))
         + mt.math.imag(mt.atanh(mt.complex(x * 0.5, y))), R(4), R(4)),
    case("elementwise.complex-exp-log",
         lambda x, y: mt.math.real(mt.math.expm1(mt.complex(x, y)))
         + mt.math.imag(mt.math.rsqrt(mt.complex(x + 2.0, y)))
         + mt.math.real(mt.math.reciprocal(mt.complex(x + 2.0, y))), R(4), R(4)),
    case("elementwise.complex-divide_no_nan",
         lambda x, y: mt.math.imag(mt.math.divide_no_nan(mt.complex(x, y), mt.complex(y, x + 2.0))),
         R(4), R(4)),
]
