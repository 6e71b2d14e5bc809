"""Elementwise math: each op's forward, and right under it, its gradient rule.

Rules see `grad` with the output's shape, possibly with extra leading batch dims
(vectorised jacobians). Elementwise products broadcast over those dims by
themselves; `unbroadcast` sums each gradient back to its input's shape.
"""
import operator

import numpy as np

from ..registry import RegisterGradient, batch_ndim
from ..tensor import Tensor
from .core import (broadcast_error, constant_like, emit, float_input, operands,
                   tensor_input, unbroadcast)


def _binary(op_type, op_name, numpy_fn, doc):
    """Make the elementwise op `op_name(x, y)` that runs `numpy_fn` on the values.

    Every op call passes through here, so the common case (two tensors of one
    dtype) is checked first and costs only a few comparisons.
    """
    def op(x, y, name=None):
        if type(x) is not Tensor or type(y) is not Tensor \
                or x._value.dtype is not y._value.dtype or x._value.dtype.kind not in "fiuc":
            x, y = operands(op_name, x, y)
        try:
            value = numpy_fn(x._value, y._value)
        except ValueError:
            raise broadcast_error(op_name, x, y) from None
        except TypeError:
            raise TypeError(f"{op_name}: not defined for dtype {x.dtype}") from None
        return emit(op_type, value, (x, y), None, name)
    op.__name__ = op.__qualname__ = op_name
    op.__doc__ = doc
    return op


def _unary(op_type, op_name, numpy_fn, doc, kinds="fc"):
    """Make the elementwise op `op_name(x)`; `kinds` are the dtype kinds it
    accepts (floating point by default)."""
    check = float_input if kinds == "fc" else tensor_input

    def op(x, name=None):
        if type(x) is not Tensor or x._value.dtype.kind not in kinds:
            x = check(op_name, x)
        return emit(op_type, numpy_fn(x._value), (x,), None, name)
    op.__name__ = op.__qualname__ = op_name
    op.__doc__ = doc
    return op


def _both(op, grad, gx, gy):
    """Sum each input's gradient back to that input's shape (None stays None)."""
    x, y = op.inputs
    nb = grad._value.ndim - op.outputs[0]._value.ndim  # leading batch dims
    return (None if gx is None else unbroadcast(gx, x._value.shape, nb),
            None if gy is None else unbroadcast(gy, y._value.shape, nb))


# op.needs[i] is False when input i leads to no source (set by the backward
# walk), so rules skip gradients nobody asked for.

add = _binary("AddV2", "add", operator.add, "x + y, elementwise with broadcasting.")


@RegisterGradient("AddV2", batch_safe=True)
def _add_grad(op, grad):
    return _both(op, grad, grad, grad)


subtract = _binary("Sub", "subtract", operator.sub, "x - y, elementwise.")


@RegisterGradient("Sub", batch_safe=True)
def _sub_grad(op, grad):
    return _both(op, grad, grad, -grad if op.needs[1] else None)


multiply = _binary("Mul", "multiply", operator.mul, "x * y, elementwise.")


@RegisterGradient("Mul", batch_safe=True)
def _mul_grad(op, grad):
    x, y = op.inputs
    return _both(op, grad, grad * y if op.needs[0] else None,
                 grad * x if op.needs[1] else None)


divide = _binary("RealDiv", "divide", operator.truediv, "x / y, elementwise.")


@RegisterGradient("RealDiv", batch_safe=True)
def _div_grad(op, grad):
    y, z = op.inputs[1], op.outputs[0]   # z = x / y
    gx = grad / y
    gy = -gx * z if op.needs[1] else None  # d(x/y)/dy = -x/y**2 = -(1/y) z
    return _both(op, grad, gx, gy)


pow = _binary("Pow", "pow", operator.pow, "x ** y, elementwise.")


@RegisterGradient("Pow", batch_safe=True)
def _pow_grad(op, grad):
    x, y = op.inputs
    gx = grad * y * pow(x, y - 1) if op.needs[0] else None
    gy = None
    if op.needs[1]:
        # d(x**y)/dy = x**y * log(x), taken as 0 where x <= 0 (as TensorFlow does).
        positive = constant_like(x._value > 0)
        log_x = where(positive, log(where(positive, x, 1)), 0)
        gy = grad * op.outputs[0] * log_x
    return _both(op, grad, gx, gy)


negative = _unary("Neg", "negative", operator.neg, "-x.", kinds="biufc")


@RegisterGradient("Neg", batch_safe=True)
def _neg_grad(op, grad):
    return -grad


square = _unary("Square", "square", np.square, "x * x.", kinds="biufc")


@RegisterGradient("Square", batch_safe=True)
def _square_grad(op, grad):
    return grad * (2 * op.inputs[0])


sqrt = _unary("Sqrt", "sqrt", np.sqrt, "Square root.")


@RegisterGradient("Sqrt", batch_safe=True)
def _sqrt_grad(op, grad):
    return grad / (2 * op.outputs[0])


exp = _unary("Exp", "exp", np.exp, "e ** x.")


@RegisterGradient("Exp", batch_safe=True)
def _exp_grad(op, grad):
    return grad * op.outputs[0]


log = _unary("Log", "log", np.log, "Natural logarithm.")


@RegisterGradient("Log", batch_safe=True)
def _log_grad(op, grad):
    return grad / op.inputs[0]


sin = _unary("Sin", "sin", np.sin, "Sine.")


@RegisterGradient("Sin", batch_safe=True)
def _sin_grad(op, grad):
    return grad * cos(op.inputs[0])


cos = _unary("Cos", "cos", np.cos, "Cosine.")


@RegisterGradient("Cos", batch_safe=True)
def _cos_grad(op, grad):
    return -grad * sin(op.inputs[0])


tanh = _unary("Tanh", "tanh", np.tanh, "Hyperbolic tangent.")


@RegisterGradient("Tanh", batch_safe=True)
def _tanh_grad(op, grad):
    y = op.outputs[0]
    return grad * (1 - y * y)


abs = _unary("Abs", "abs", np.abs, "|x|.", kinds="biufc")


@RegisterGradient("Abs", batch_safe=True)
def _abs_grad(op, grad):
    return grad * sign(op.inputs[0])


def _select(op_type, op_name, pick_x, x, y, name):
    x, y = operands(op_name, x, y)
    try:
        value = pick_x(x._value, y._value)
    except ValueError:
        raise broadcast_error(op_name, x, y) from None
    return emit(op_type, value, (x, y), None, name)


def maximum(x, y, name=None):
    return _select("Maximum", "maximum", np.maximum, x, y, name)


def minimum(x, y, name=None):
    return _select("Minimum", "minimum", np.minimum, x, y, name)


def _select_grad(op, grad, x_wins):
    """The gradient goes to whichever input was picked (x on ties)."""
    mask = constant_like(x_wins.astype(grad.dtype))
    return _both(op, grad, grad * mask, grad * (1 - mask))


@RegisterGradient("Maximum", batch_safe=True)
def _maximum_grad(op, grad):
    x, y = op.inputs
    return _select_grad(op, grad, np.asarray(x._value >= y._value))


@RegisterGradient("Minimum", batch_safe=True)
def _minimum_grad(op, grad):
    x, y = op.inputs
    return _select_grad(op, grad, np.asarray(x._value <= y._value))


def where(condition, x, y, name=None):
    """Elementwise `x` where `condition` is true, else `y` (TensorFlow's where_v2)."""
    condition = tensor_input("where", condition)
    if condition.dtype != np.bool_:
        raise TypeError(f"where: condition must be a bool tensor, got {condition.dtype}")
    x, y = operands("where", x, y)
    try:
        value = np.where(condition._value, x._value, y._value)
    except ValueError:
        raise ValueError(f"where: shapes {condition.shape}, {x.shape} and {y.shape} "
                         "cannot be broadcast together") from None
    return emit("SelectV2", value, (condition, x, y), None, name)


@RegisterGradient("SelectV2", batch_safe=True)
def _where_grad(op, grad):
    condition, x, y = op.inputs
    nb = batch_ndim(op, grad)
    zero = np.zeros((), grad.dtype)
    return (None,
            unbroadcast(where(condition, grad, zero), x.shape, nb),
            unbroadcast(where(condition, zero, grad), y.shape, nb))


def cast(x, dtype, name=None):
    """`x` converted to `dtype`; differentiable between floating dtypes."""
    x = tensor_input("cast", x) if not isinstance(x, Tensor) else x
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    return emit("Cast", x._value.astype(dtype), (x,), {"DstT": dtype}, name)


@RegisterGradient("Cast", batch_safe=True)
def _cast_grad(op, grad):
    x = op.inputs[0]
    if x.dtype.kind in "fc" and grad.dtype.kind in "fc":
        return cast(grad, x.dtype)
    return None


# Not differentiable: their outputs are constants, so no tape records them.
def sign(x, name=None):
    return constant_like(np.sign(tensor_input("sign", x)._value))


def round(x, name=None):
    return constant_like(np.round(tensor_input("round", x)._value))


def floor(x, name=None):
    return constant_like(np.floor(tensor_input("floor", x)._value))


def _comparison(op_name, numpy_fn):
    def compare(x, y, name=None):
        x, y = operands(op_name, x, y)
        try:
            return constant_like(np.asarray(numpy_fn(x._value, y._value)))
        except ValueError:
            raise broadcast_error(op_name, x, y) from None
    compare.__name__ = op_name
    compare.__doc__ = f"Elementwise `{op_name}` (a bool tensor, not differentiable)."
    return compare


equal = _comparison("equal", np.equal)
not_equal = _comparison("not_equal", np.not_equal)
less = _comparison("less", np.less)
less_equal = _comparison("less_equal", np.less_equal)
greater = _comparison("greater", np.greater)
greater_equal = _comparison("greater_equal", np.greater_equal)
