"""`mt.math`: TensorFlow's math namespace."""
from .ops import (abs, add, cos, divide, equal, exp, floor, greater,  # noqa: F401
                  greater_equal, less, less_equal, log, maximum, minimum, multiply,
                  negative, not_equal, pow, reduce_max, reduce_mean, reduce_min,
                  reduce_prod, reduce_sum, round, sigmoid, sign, sin, softplus, sqrt,
                  square, subtract, tanh)
from .ops import l2_normalize  # noqa: F401
from .ops import argmax, argmin, reduce_all, reduce_any, reduce_logsumexp  # noqa: F401
from .ops.reductions import (count_nonzero, reduce_euclidean_norm,  # noqa: F401
                             reduce_std, reduce_variance)
from .ops import cumsum  # noqa: F401
from .ops.scans import (cumprod, segment_max, segment_mean, segment_min,  # noqa: F401
                        segment_sum)
from .ops.nn_layers import unsorted_segment_sum  # noqa: F401
from .ops.sorting import top_k  # noqa: F401
from .ops import (acos, acosh, angle, asin, asinh, atan, atan2, atanh, conj,  # noqa: F401
                  cosh, expm1, imag, log1p, log_sigmoid, real, reciprocal, rsqrt,
                  sinh, softsign, tan, xdivy, xlog1py, xlogy)
from .ops import digamma, erf, erfc, lgamma, polygamma  # noqa: F401
from .ops import (add_n, ceil, divide_no_nan, floordiv, floormod, is_finite,  # noqa: F401
                  is_inf, is_nan, logical_and, logical_not, logical_or, logical_xor, mod,
                  multiply_no_nan, squared_difference, truediv)
