"""All built-in ops, and the Python operators (`+`, `*`, `@`, `[]`, ...) that
Tensor and Variable get from them."""
from types import ModuleType as _ModuleType

from ..core.tensor import Tensor, Variable  # noqa: F401
from .operands import convert_to_tensor  # noqa: F401  (packs lists of tensors, recorded)
from .clip import clip_by_norm, clip_by_value  # noqa: F401
from .control import stop_gradient  # noqa: F401
from .creation import eye, fill, ones, ones_like, range, zeros, zeros_like  # noqa: F401
from .elementwise import (abs, add, cast, cos, divide, equal, exp, floor,  # noqa: F401
                          greater, greater_equal, less, less_equal, log, maximum,
                          minimum, multiply, negative, not_equal, pow, round, sign, sin,
                          sqrt, square, subtract, tanh)
from .matmul_and_solve import einsum, inv, matmul, solve  # noqa: F401
from .matrices import (adjoint, band_part, cross, diag, diag_part, matvec,  # noqa: F401
                       set_diag, trace)
from .solvers import cholesky_solve, det, slogdet, triangular_solve  # noqa: F401
from .decompositions import cholesky, eig, eigh, eigvals, eigvalsh, qr, svd  # noqa: F401
from .matrix_functions import expm, logdet, lstsq, pinv  # noqa: F401
from .activations import elu, log_softmax, relu, sigmoid, softmax, softplus  # noqa: F401
from .activations import gelu, leaky_relu, relu6, selu, silu, swish  # noqa: F401
from .normalization import batch_normalization, l2_normalize, moments  # noqa: F401
from .nn_layers import bias_add, embedding_lookup  # noqa: F401
from .losses import (l2_loss, sigmoid_cross_entropy_with_logits,  # noqa: F401
                     softmax_cross_entropy_with_logits,
                     sparse_softmax_cross_entropy_with_logits,
                     weighted_cross_entropy_with_logits)
from .norms import norm  # noqa: F401
from .reductions import (reduce_max, reduce_mean, reduce_min,  # noqa: F401
                         reduce_prod, reduce_sum)
from .shapes import (broadcast_to, concat, expand_dims, getitem, identity,  # noqa: F401
                     matrix_transpose, pad, reshape, shape, size, squeeze, stack,
                     transpose, unstack)
from .indexing import (boolean_mask, gather, gather_nd, one_hot,  # noqa: F401
                       scatter_nd, tensor_scatter_nd_add, tensor_scatter_nd_update)
from .reductions import (argmax, argmin, reduce_all, reduce_any,  # noqa: F401
                         reduce_logsumexp)
from .scans import cumsum  # noqa: F401
from .sorting import argsort, sort  # noqa: F401
from .arrangement import meshgrid, rank, repeat, reverse, roll, split, tile  # noqa: F401
from .tensordot import tensordot  # noqa: F401
from .evenly_spaced import linspace  # noqa: F401
from .indexing import where  # noqa: F401  (where(condition) as well as where(c, x, y))
from .complex import angle, complex, conj, imag, real  # noqa: F401
from .trigonometric import acos, acosh, asin, asinh, atan, atan2, atanh, cosh, sinh, tan  # noqa: F401,E501
from .exp_log import (expm1, log1p, log_sigmoid, reciprocal, rsqrt, softsign,  # noqa: F401
                      xdivy, xlog1py, xlogy)
from .special import digamma, erf, erfc, lgamma, polygamma  # noqa: F401
from .elementwise import (add_n, ceil, divide_no_nan, floordiv, floormod, mod,  # noqa: F401
                         multiply_no_nan, squared_difference, truediv)
from .logical import (and_, invert_, is_finite, is_inf, is_nan, logical_and,  # noqa: F401
                      logical_not, logical_or, logical_xor, or_, xor)


def _swap(fn):
    return lambda self, other: fn(other, self)


_OPERATORS = {
    "__add__": add, "__radd__": _swap(add),
    "__sub__": subtract, "__rsub__": _swap(subtract),
    "__mul__": multiply, "__rmul__": _swap(multiply),
    "__truediv__": divide, "__rtruediv__": _swap(divide),
    "__pow__": pow, "__rpow__": _swap(pow),
    "__matmul__": matmul, "__rmatmul__": _swap(matmul),
    "__neg__": negative, "__abs__": abs,
    "__getitem__": getitem,
    "__lt__": less, "__le__": less_equal, "__gt__": greater, "__ge__": greater_equal,
    "__eq__": equal, "__ne__": not_equal,
}



def _none_aware(compare, result):
    """`t == None` is False and `t != None` True, as in TensorFlow, so `None in
    [t1, t2]` and `if g == None` work; anything else compares elementwise."""
    def fn(self, other):
        return result if other is None else compare(self, other)
    fn.__name__ = compare.__name__
    return fn


_OPERATORS["__eq__"] = _none_aware(equal, False)
_OPERATORS["__ne__"] = _none_aware(not_equal, True)

_OPERATORS.update({  # issue 16: // and % as TensorFlow's floordiv and floormod; & | ^ ~
    "__floordiv__": floordiv, "__rfloordiv__": _swap(floordiv),
    "__mod__": floormod, "__rmod__": _swap(floormod),
    "__and__": and_, "__rand__": _swap(and_), "__or__": or_, "__ror__": _swap(or_),
    "__xor__": xor, "__rxor__": _swap(xor), "__invert__": invert_,
})
for _name, _fn in _OPERATORS.items():
    setattr(Tensor, _name, _fn)
    setattr(Variable, _name, _fn)
Tensor.__pos__ = Variable.__pos__ = lambda self: self

# `from minitape.ops import *` exports the ops, not the family modules.
# Names TensorFlow has in tf.linalg only (tf.eig, tf.eigvals are also top level):
# mt.linalg.det and mt.ops.det, but no mt.det.
_LINALG_ONLY = {"adjoint", "band_part", "cholesky", "cholesky_solve", "cross", "det", "diag",
                "diag_part", "eigh", "eigvalsh", "expm", "logdet", "lstsq", "matvec", "pinv",
                "qr", "set_diag", "slogdet", "svd", "trace", "triangular_solve"}
# Names TensorFlow has in tf.math (or tf.nn) but not at the top level: mt.math.expm1
# and mt.ops.expm1, but no mt.expm1.
_MATH_ONLY = {"angle", "conj", "expm1", "imag", "log1p", "log_sigmoid", "real", "reciprocal",
              "rsqrt", "softsign", "xdivy", "xlog1py", "xlogy"}
_MATH_ONLY |= {"digamma", "erf", "erfc", "lgamma", "polygamma", "ceil", "divide_no_nan",
               "floordiv", "floormod", "mod", "multiply_no_nan", "squared_difference",
               "is_finite", "is_inf", "is_nan", "logical_xor", "and_", "or_", "xor",
               "invert_"}
__all__ = sorted(name for name, value in globals().items()
                 if name[0] != "_" and name not in _LINALG_ONLY and name not in _MATH_ONLY
                 and not isinstance(value, _ModuleType))
