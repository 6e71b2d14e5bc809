"""Logic and tests of values: logical_and, logical_or, logical_xor, logical_not,
is_finite, is_nan, is_inf, and the operators `&`, `|`, `^`, `~`.

None is differentiable: each gives a bool tensor (or, for `&`, `|`, `^`, `~`
on integers, the bitwise result, as TensorFlow's operators do). They are
recorded anyway, so traced functions replay them.
"""
import numpy as np

from .operands import elementwise_shape, emit, tensor_input
from .declaration import declare
from .partials import binary, check_kind
from ..core.tensor import Tensor, Variable


def _logical(name, op_type, forward, kinds="b"):
    return binary(name, op_type, forward, doc=f"Elementwise {name.split('_')[1].upper()} of "
                  "two bool tensors, with broadcasting.", kinds=kinds, differentiable=False,
                  rank_free=False)


logical_and = _logical("logical_and", "LogicalAnd", np.logical_and)
logical_or = _logical("logical_or", "LogicalOr", np.logical_or)


def logical_xor(x, y, name="LogicalXor"):
    """x XOR y, as TensorFlow builds it: (x OR y) AND NOT (x AND y)."""
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)))


def _test(name, op_type, forward, doc, kinds="f"):
    """A unary op that answers a question about each element (not differentiable)."""
    def op(x, name=None):
        x = tensor_input(op.__name__, x)
        check_kind(op.__name__, x, kinds)
        return emit(op_type, np.asarray(forward(x._value)), (x,), None, name)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    declare(op_type, differentiable=False, replay=lambda xs, attrs, out_shapes: op(xs[0]),
            shape=elementwise_shape)
    return op


logical_not = _test("logical_not", "LogicalNot", np.logical_not,
                    "Elementwise NOT of a bool tensor.", kinds="b")
is_finite = _test("is_finite", "IsFinite", np.isfinite,
                  "True where x is neither inf nor NaN (float tensors only).")
is_nan = _test("is_nan", "IsNan", np.isnan, "True where x is NaN (float tensors only).")
is_inf = _test("is_inf", "IsInf", np.isinf, "True where x is inf or -inf (float tensors only).")

# TensorFlow's tf.bitwise ops, which the operators use on integer tensors
bitwise_and = _logical("bitwise_and", "BitwiseAnd", np.bitwise_and, kinds="iu")
bitwise_or = _logical("bitwise_or", "BitwiseOr", np.bitwise_or, kinds="iu")
bitwise_xor = _logical("bitwise_xor", "BitwiseXor", np.bitwise_xor, kinds="iu")
invert = _test("invert", "Invert", np.invert, "Flips every bit of an integer tensor.",
               kinds="iu")
for _op in (bitwise_and, bitwise_or, bitwise_xor):
    _op.__doc__ = f"Elementwise {_op.__name__.split('_')[1].upper()} of the bits of two " \
                  "integer tensors."
del _op


def _on_bools_or_ints(logical, bitwise, symbol):
    """The operator `x <symbol> y`: logical on bools, bitwise on integers."""
    def operator(x, y):
        t = tensor_input(symbol, x if isinstance(x, (Tensor, Variable)) else y)
        if t.dtype.kind == "b":
            return logical(x, y)
        if t.dtype.kind in "iu":
            return bitwise(x, y)
        raise TypeError(f"{symbol}: expected bool or integer tensors, got dtype {t.dtype}")
    return operator


and_ = _on_bools_or_ints(logical_and, bitwise_and, "&")
or_ = _on_bools_or_ints(logical_or, bitwise_or, "|")
xor = _on_bools_or_ints(logical_xor, bitwise_xor, "^")


def invert_(x):
    """The operator `~x`: logical_not on bools, invert on integers."""
    x = tensor_input("~", x)
    if x.dtype.kind == "b":
        return logical_not(x)
    if x.dtype.kind in "iu":
        return invert(x)
    raise TypeError(f"~: expected a bool or integer tensor, got dtype {x.dtype}")
