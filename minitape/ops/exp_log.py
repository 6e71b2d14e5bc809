"""Exponentials, logarithms and reciprocals: TensorFlow's expm1, log1p, rsqrt,
reciprocal, softsign, log_sigmoid, xlogy, xlog1py and xdivy (exp, log, sqrt are in
elementwise.py).

expm1 and log1p keep their precision near 0 (e^x - 1 for x = 1e-10 is not
0); xlogy, xlog1py and xdivy are x * log(y), x * log1p(y) and x / y made 0
where x is 0, so that
0 * log(0) terms of entropies vanish. The unary rows work as in
trigonometric.py (unary.py makes the rules from the derivative).
"""
import numpy as np

from .operands import float_input
from .elementwise import abs, cast, exp, negative, not_equal, square
from .activations import softplus
from .partials import binary, unary

# name, op type, forward, derivative f'(x) (y = f(x)), doc
expm1 = unary("expm1", "Expm1", np.expm1,
              lambda x, y: exp(x),
              "e**x - 1, accurate near 0.", smooth=True)
log1p = unary("log1p", "Log1p", np.log1p,
              lambda x, y: 1 / (1 + x),                # inf at -1 (0 * inf is NaN there)
              "log(1 + x), accurate near 0.")
rsqrt = unary("rsqrt", "Rsqrt", lambda v: 1 / np.sqrt(v),
              lambda x, y: -0.5 * y * (y * y),         # -x**-1.5 / 2, in y = x**-0.5
              "1 / sqrt(x). Its rules give 0 where the upstream gradient is 0 (TensorFlow's "
              "RsqrtGrad kernel does), so mt.where(x > 0, mt.math.rsqrt(x), 0.) has the "
              "gradient 0 at x <= 0.", masked="both")
reciprocal = unary("reciprocal", "Reciprocal", lambda v: 1 / v,
                   lambda x, y: -(y * y),              # -1 / x**2; -inf at 0
                   "1 / x. Its rules give 0 where the upstream gradient is 0, as "
                   "TensorFlow's ReciprocalGrad kernel does.", masked="both")
_softsign = unary("softsign", "Softsign", lambda v: v / (1 + np.abs(v)),
                  lambda x, y: 1 / square(1 + abs(x)),
                  kinds="f")


def softsign(features, name=None):
    """x / (1 + |x|): a smooth step from -1 to 1 (TensorFlow's argument name)."""
    return _softsign(features, name=name)


def log_sigmoid(x, name=None):
    """log(sigmoid(x)) = -softplus(-x), without overflow (TensorFlow computes it
    so too: its gradient is sigmoid(-x), through softplus's rule)."""
    x = float_input("log_sigmoid", x)
    if x.dtype.kind == "c":
        raise TypeError(f"log_sigmoid: expected a real floating-point tensor, got dtype "
                        f"{x.dtype}")
    return negative(softplus(negative(x)), name=name)


def _where_x(forward):
    """forward(x, y), taken as 0 where x is 0 (whatever y is)."""
    def run(x, y):
        return np.where(x == 0, np.zeros((), np.result_type(x, y)), forward(x, y))
    return run


def _nonzero(x):
    """1 where x is not 0, else 0, in x's dtype (a constant for the tapes)."""
    return cast(not_equal(x, 0), x.dtype)


# The partial derivatives are TensorFlow's (math_grad.py), including its
# choice to make them 0 where x is 0: d xlogy/dx = xlogy(x != 0, y) is log(y)
# but 0 at x = 0, and d xlogy/dy = xdivy(x, y) is x / y but 0 at x = 0. As in
# TensorFlow, no conjugate is taken for complex inputs here.
xlogy = binary("xlogy", "Xlogy", _where_x(lambda x, y: x * np.log(y)),
               partials=(lambda x, y, z: xlogy(_nonzero(x), y),
                         lambda x, y, z: xdivy(x, y)),
               doc="x * log(y), and 0 where x is 0 (even where y is 0).", kinds="fc",
               conjugate=False)
xlog1py = binary("xlog1py", "Xlog1py", _where_x(lambda x, y: x * np.log1p(y)),
                 partials=(lambda x, y, z: xlog1py(_nonzero(x), y),   # log1p(y), 0 where x is 0
                           lambda x, y, z: xdivy(x, y + 1)),         # x / (1 + y), the same
                 doc="x * log1p(y) = x * log(1 + y), and 0 where x is 0 (even where y is "
                     "-1).", kinds="fc", conjugate=False)
xdivy = binary("xdivy", "Xdivy", _where_x(lambda x, y: x / y),
               partials=(lambda x, y, z: xdivy(_nonzero(x), y),      # 1 / y, 0 where x is 0
                         lambda x, y, z: xdivy(-x, square(y))),      # -x / y**2, the same
               doc="x / y, and 0 where x is 0 (even where y is 0).", kinds="fc",
               conjugate=False)
