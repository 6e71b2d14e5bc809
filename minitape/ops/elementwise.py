"""Elementwise math: each op's forward, and right under it, its gradient rule.

Rules see `grad` with the output's shape, possibly with extra leading batch dims
(vectorised jacobians). Elementwise products broadcast over those dims by
themselves; `unbroadcast` sums each gradient back to its input's shape.

Under each gradient rule sits the op's JVP rule (forward mode): it gets one
tangent per input, shaped like that input (None means zero), possibly with
leading batch dims too, and returns the output's tangent. For a binary op the
tangents are first `lift`ed so they broadcast against the output.
"""
import operator

import numpy as np

from .. import arguments
from ..registry import NotDifferentiable, RegisterGradient, RegisterJVP, batch_ndim
from ..tensor import Tensor
from .core import (broadcast_error, emit, float_input, full_tangent, lift,
                   operands, tangent_batch, tensor_input, unbroadcast)


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
    op.numpy_fn = numpy_fn  # what compiled programs call (compiler.py)
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
    op.numpy_fn = numpy_fn  # what compiled programs call (compiler.py)
    return op


def _both(op, grad, gx, gy):
    """Sum each input's gradient back to that input's shape (None stays None)."""
    x, y = op.inputs
    nb = grad._value.ndim - op.outputs[0]._value.ndim  # leading batch dims
    return (None if gx is None else unbroadcast(gx, x._value.shape, nb),
            None if gy is None else unbroadcast(gy, y._value.shape, nb))


def _lifted(op, tx, ty):
    """The tangents of x and y, shaped to broadcast against the output."""
    x, y = op.inputs
    ndim = op.outputs[0]._value.ndim
    return lift(tx, x, ndim), lift(ty, y, ndim)


def _moved(t, term, factor=None):
    """`term`, t times a partial derivative, made exactly 0 where `t` is 0; t is
    a tangent (forward mode) or an upstream gradient (reverse mode). An input
    that does not move, or an output nobody asked about (a zero row of a
    Jacobian's one-hot seed), adds nothing even where the partial derivative is
    inf or NaN (0 * inf is NaN in floating point): so both directions give
    d(x0 * 1 + x1 * inf)/dx0 = 1 and d(y0)/dx1 = 0 for y = x * [1, inf].
    For a product, the partial derivative is the other `factor`, and a zero
    factor also wins (an inf tangent times a constant 0 is 0 in forward mode,
    as the zero gradient it sends back is in reverse mode). The masks are
    comparisons, not differentiable, so tapes differentiating a rule see
    `term` wherever it is not masked.

    Only a NaN in `term` can come from 0 * inf, so without one the masks would
    change nothing and are skipped (they would double the cost of these rules;
    the sum may also be NaN from inf - inf, which only masks needlessly).
    A trace (mt.function) keeps the choice made while tracing."""
    v = term._value
    total = v.sum() if v.ndim else v[()]  # NaN if any entry is (one cheap check)
    if t is None or total == total:
        return term
    zero = np.zeros((), term.dtype)
    if factor is not None:
        term = where(equal(factor, 0), zero, term)
    return where(equal(t, 0), zero, term)


def _sum_jvp(op, batch, a, b):
    """The output tangent a + b from two terms (None is zero), at full shape."""
    t = a if b is None else b if a is None else a + b
    return full_tangent(t, batch + op.outputs[0]._value.shape)


# op.needs[i] is False when input i leads to no source (set by the backward
# walk), so rules skip gradients nobody asked for.

add = _binary("AddV2", "add", operator.add, "x + y, elementwise with broadcasting.")


@RegisterGradient("AddV2", batch_safe=True)
def _add_grad(op, grad):
    return _both(op, grad, grad if op.needs[0] else None, grad if op.needs[1] else None)


@RegisterJVP("AddV2", batch_safe=True)
def _add_jvp(op, tx, ty):
    return _sum_jvp(op, tangent_batch(op, (tx, ty)), *_lifted(op, tx, ty))


subtract = _binary("Sub", "subtract", operator.sub, "x - y, elementwise.")


@RegisterGradient("Sub", batch_safe=True)
def _sub_grad(op, grad):
    return _both(op, grad, grad if op.needs[0] else None, -grad if op.needs[1] else None)


@RegisterJVP("Sub", batch_safe=True)
def _sub_jvp(op, tx, ty):
    batch = tangent_batch(op, (tx, ty))
    tx, ty = _lifted(op, tx, ty)
    return _sum_jvp(op, batch, tx, None if ty is None else -ty)


multiply = _binary("Mul", "multiply", operator.mul, "x * y, elementwise.")


@RegisterGradient("Mul", batch_safe=True)
def _mul_grad(op, grad):
    x, y = op.inputs
    return _both(op, grad, _moved(grad, grad * y, y) if op.needs[0] else None,
                 _moved(grad, grad * x, x) if op.needs[1] else None)


@RegisterJVP("Mul", batch_safe=True)
def _mul_jvp(op, tx, ty):
    x, y = op.inputs
    batch = tangent_batch(op, (tx, ty))
    tx, ty = _lifted(op, tx, ty)
    return _sum_jvp(op, batch, None if tx is None else _moved(tx, tx * y, y),
                    None if ty is None else _moved(ty, x * ty, x))


divide = _binary("RealDiv", "divide", operator.truediv, "x / y, elementwise.")


@RegisterGradient("RealDiv", batch_safe=True)
def _div_grad(op, grad):
    y, z = op.inputs[1], op.outputs[0]   # z = x / y
    gx = _moved(grad, grad / y)
    gy = _moved(grad, -gx * z) if op.needs[1] else None  # d(x/y)/dy = -(1/y) z
    return _both(op, grad, gx if op.needs[0] else None, gy)


@RegisterJVP("RealDiv", batch_safe=True)
def _div_jvp(op, tx, ty):
    y, z = op.inputs[1], op.outputs[0]
    batch = tangent_batch(op, (tx, ty))
    tx, ty = _lifted(op, tx, ty)
    return _sum_jvp(op, batch, None if tx is None else _moved(tx, tx / y),
                    None if ty is None else _moved(ty, -ty * (z / y)))


pow = _binary("Pow", "pow", operator.pow, "x ** y, elementwise.")


@RegisterGradient("Pow", batch_safe=True)
def _pow_grad(op, grad):
    x, y = op.inputs
    gx = _moved(grad, grad * y * pow(x, y - 1)) if op.needs[0] else None
    gy = _moved(grad, grad * op.outputs[0] * _log_base(x)) if op.needs[1] else None
    return _both(op, grad, gx, gy)


def _log_base(x):
    """log(x) for d(x**y)/dy = x**y * log(x), taken as 0 where x <= 0 (as
    TensorFlow does)."""
    positive = greater(x, 0)
    return where(positive, log(where(positive, x, 1)), 0)


@RegisterJVP("Pow", batch_safe=True)
def _pow_jvp(op, tx, ty):
    x, y = op.inputs
    batch = tangent_batch(op, (tx, ty))
    tx, ty = _lifted(op, tx, ty)
    return _sum_jvp(
        op, batch, None if tx is None else _moved(tx, tx * (y * pow(x, y - 1))),
        None if ty is None else _moved(ty, ty * (op.outputs[0] * _log_base(x))))


negative = _unary("Neg", "negative", operator.neg, "-x.", kinds="biufc")


@RegisterGradient("Neg", batch_safe=True)
def _neg_grad(op, grad):
    return -grad


@RegisterJVP("Neg", batch_safe=True)
def _neg_jvp(op, t):
    return -t


square = _unary("Square", "square", np.square, "x * x.", kinds="biufc")


@RegisterGradient("Square", batch_safe=True)
def _square_grad(op, grad):
    return grad * (2 * op.inputs[0])


# An elementwise f(x) has a diagonal Jacobian, f'(x): the gradient multiplies the
# upstream gradient by f'(x) and the JVP multiplies the tangent by the same
# f'(x). So for these ops the JVP rule *is* the gradient rule, with the tangent
# in the place of the upstream gradient.
RegisterJVP("Square", batch_safe=True)(_square_grad)


sqrt = _unary("Sqrt", "sqrt", np.sqrt, "Square root.")


@RegisterGradient("Sqrt", batch_safe=True)
def _sqrt_grad(op, grad):
    return grad / (2 * op.outputs[0])


RegisterJVP("Sqrt", batch_safe=True)(_sqrt_grad)  # diagonal Jacobian (see Square)


exp = _unary("Exp", "exp", np.exp, "e ** x.")


@RegisterGradient("Exp", batch_safe=True)
def _exp_grad(op, grad):
    return grad * op.outputs[0]


RegisterJVP("Exp", batch_safe=True)(_exp_grad)  # diagonal Jacobian (see Square)


log = _unary("Log", "log", np.log, "Natural logarithm.")


@RegisterGradient("Log", batch_safe=True)
def _log_grad(op, grad):
    return grad / op.inputs[0]


RegisterJVP("Log", batch_safe=True)(_log_grad)  # diagonal Jacobian (see Square)


sin = _unary("Sin", "sin", np.sin, "Sine.")


@RegisterGradient("Sin", batch_safe=True)
def _sin_grad(op, grad):
    return grad * cos(op.inputs[0])


RegisterJVP("Sin", batch_safe=True)(_sin_grad)  # diagonal Jacobian (see Square)


cos = _unary("Cos", "cos", np.cos, "Cosine.")


@RegisterGradient("Cos", batch_safe=True)
def _cos_grad(op, grad):
    return -grad * sin(op.inputs[0])


RegisterJVP("Cos", batch_safe=True)(_cos_grad)  # diagonal Jacobian (see Square)


tanh = _unary("Tanh", "tanh", np.tanh, "Hyperbolic tangent.")


@RegisterGradient("Tanh", batch_safe=True)
def _tanh_grad(op, grad):
    y = op.outputs[0]
    return grad * (1 - y * y)


RegisterJVP("Tanh", batch_safe=True)(_tanh_grad)  # diagonal Jacobian (see Square)


abs = _unary("Abs", "abs", np.abs, "|x|.", kinds="biufc")


@RegisterGradient("Abs", batch_safe=True)
def _abs_grad(op, grad):
    return grad * sign(op.inputs[0])


RegisterJVP("Abs", batch_safe=True)(_abs_grad)  # diagonal Jacobian (see Square)


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
    zero = np.zeros((), grad.dtype)
    return _both(op, grad, where(x_wins, grad, zero) if op.needs[0] else None,
                 where(x_wins, zero, grad) if op.needs[1] else None)


# Masks like `x >= y` are made with (recorded, not differentiable) comparison
# ops rather than NumPy, so a gradient traced into an mt.function recomputes
# them on every call instead of freezing the values seen while tracing.

@RegisterGradient("Maximum", batch_safe=True)
def _maximum_grad(op, grad):
    x, y = op.inputs
    return _select_grad(op, grad, greater_equal(x, y))


@RegisterGradient("Minimum", batch_safe=True)
def _minimum_grad(op, grad):
    x, y = op.inputs
    return _select_grad(op, grad, less_equal(x, y))


def _select_jvp(op, tx, ty, x_wins):
    """The output's tangent is the tangent of whichever input was picked."""
    batch = tangent_batch(op, (tx, ty))
    tx, ty = _lifted(op, tx, ty)
    zero = np.zeros((), op.outputs[0].dtype)
    t = where(x_wins, zero if tx is None else tx, zero if ty is None else ty)
    return full_tangent(t, batch + op.outputs[0].shape)


@RegisterJVP("Maximum", batch_safe=True)
def _maximum_jvp(op, tx, ty):
    x, y = op.inputs
    return _select_jvp(op, tx, ty, greater_equal(x, y))


@RegisterJVP("Minimum", batch_safe=True)
def _minimum_jvp(op, tx, ty):
    x, y = op.inputs
    return _select_jvp(op, tx, ty, less_equal(x, y))


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
            unbroadcast(where(condition, grad, zero), x.shape, nb) if op.needs[1] else None,
            unbroadcast(where(condition, zero, grad), y.shape, nb) if op.needs[2] else None)


@RegisterJVP("SelectV2", batch_safe=True)
def _where_jvp(op, tc, tx, ty):
    condition, x, y = op.inputs
    batch = tangent_batch(op, (tc, tx, ty))
    ndim = op.outputs[0].ndim
    zero = np.zeros((), op.outputs[0].dtype)
    tx = zero if tx is None else lift(tx, x, ndim)
    ty = zero if ty is None else lift(ty, y, ndim)
    return full_tangent(where(condition, tx, ty), batch + op.outputs[0].shape)


def cast(x, dtype, name=None):
    """`x` converted to `dtype`; differentiable between floating dtypes."""
    x = tensor_input("cast", x) if not isinstance(x, Tensor) else x
    dtype = arguments.dtype("cast", dtype)
    if x.dtype.kind not in "biufc":
        raise TypeError(f"cast: cannot cast a {x.dtype} tensor to {dtype}")
    if x.dtype == dtype:
        return x
    return emit("Cast", x._value.astype(dtype), (x,), {"DstT": dtype}, name)


@RegisterGradient("Cast", batch_safe=True)
def _cast_grad(op, grad):
    x = op.inputs[0]
    if x.dtype.kind in "fc" and grad.dtype.kind in "fc":
        return cast(grad, x.dtype)
    return None


@RegisterJVP("Cast", batch_safe=True)
def _cast_jvp(op, t):
    dtype = op.attrs["DstT"]
    return cast(t, dtype) if dtype.kind in "fc" else None


sign = _unary("Sign", "sign", np.sign, "-1, 0 or 1; its gradient is zero.", kinds="biufc")


@RegisterGradient("Sign", batch_safe=True)
def _sign_grad(op, grad):
    """Zeros, not None, as in TensorFlow: sign is flat wherever it has a slope,
    so |x|'' = d(grad * sign(x))/dx comes out as 0 rather than unconnected.
    The zeros are a constant (TensorFlow's ZerosLike is not differentiable)."""
    return Tensor(np.zeros(grad.shape, grad.dtype))


RegisterJVP("Sign", batch_safe=True)(_sign_grad)

# Not differentiable: recorded like any op (so traces replay them), but their
# inputs get no gradient (NotDifferentiable) and no tangent.
round = _unary("Round", "round", np.round, "Round half to even (not differentiable).")
floor = _unary("Floor", "floor", np.floor, "Round down (not differentiable).")


def _comparison(op_type, op_name, numpy_fn):
    def compare(x, y, name=None):
        x, y = operands(op_name, x, y)
        try:
            value = np.asarray(numpy_fn(x._value, y._value))
        except ValueError:
            raise broadcast_error(op_name, x, y) from None
        return emit(op_type, value, (x, y), None, name)
    compare.__name__ = compare.__qualname__ = op_name
    compare.__doc__ = f"Elementwise `{op_name}` (a bool tensor, not differentiable)."
    return compare


equal = _comparison("Equal", "equal", np.equal)
not_equal = _comparison("NotEqual", "not_equal", np.not_equal)
less = _comparison("Less", "less", np.less)
less_equal = _comparison("LessEqual", "less_equal", np.less_equal)
greater = _comparison("Greater", "greater", np.greater)
greater_equal = _comparison("GreaterEqual", "greater_equal", np.greater_equal)

for _op_type in ("Round", "Floor", "Equal", "NotEqual", "Less", "LessEqual",
                 "Greater", "GreaterEqual"):
    NotDifferentiable(_op_type)
