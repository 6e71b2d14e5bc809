"""Op table rows for the elementwise families of issue 16 (trigonometric.py,
exp_log.py, special.py, arithmetic.py, complex.py): each row gets finite
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
]
