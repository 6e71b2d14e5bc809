"""What every op shares: checking inputs, emitting results, undoing broadcasting,
and shaping tangents for forward-mode rules."""
from .. import arguments
from ..context import state
from ..recording import record
from ..tensor import Tensor, Variable, convert_to_tensor, new_id, operand

_new_tensor = Tensor.__new__


def emit(op_type, value, inputs, attrs=None, name=None):
    """Wrap an op's NumPy result in a Tensor and let the active tapes record it."""
    out = _new_tensor(Tensor)  # Tensor(value) without the __init__ call: every op
    out._value = value         # passes here, so these ~50 ns add up
    out._id = new_id()
    if state.tapes:
        record(op_type, inputs, (out,), attrs, name)
    return out


def constant_like(value):
    """A tensor that no tape will ever track: for masks and other values whose
    derivative is zero (almost everywhere) inside gradient rules."""
    return Tensor(value)


def _converted(op_name, x):
    try:
        return convert_to_tensor(x)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{op_name}: {e}") from None


def tensor_input(op_name, x):
    """`x` as a numeric Tensor, or a TypeError that names the op."""
    if type(x) is not Tensor:
        x = _converted(op_name, x)
    if x._value.dtype.kind not in "biufc":
        raise TypeError(f"{op_name}: expected a numeric tensor, got dtype {x.dtype}")
    return x


def float_input(op_name, x):
    """`x` as a floating-point Tensor, or a TypeError that names the op."""
    if type(x) is not Tensor:
        x = _converted(op_name, x)
    if x._value.dtype.kind not in "fc":
        raise TypeError(f"{op_name}: expected a floating-point tensor, got dtype "
                        f"{x.dtype} (use mt.cast)")
    return x


_numbers = {}  # (dtype, Python number) -> a constant Tensor holding it


def number(dtype, value):
    """The Python number `value` as a constant tensor of `dtype`.

    `y * 2.0` in a loop, or `1 - y * y` in a gradient rule, would make the same
    constant again on every call, and converting a Python float to a NumPy
    scalar costs about as much as the multiplication itself. Tensors never
    change, so one constant per (dtype, value) can be shared by every op that
    uses it. The cache is small and starts over when full. Zero is not cached:
    0.0 == -0.0, but they are different constants (1 / -0.0 is -inf).
    """
    key = (dtype, value)
    t = _numbers.get(key)
    if t is None:
        t = Tensor(dtype.type(value))
        if value:
            if len(_numbers) >= 256:
                _numbers.clear()
            _numbers[key] = t
    return t


def operands(op_name, x, y):
    """Two operands as tensors of one dtype: Python numbers and arrays take the
    dtype of the tensor beside them; two tensors of different dtypes are an error."""
    tx, ty = type(x), type(y)
    if tx is Tensor and (ty is float or ty is int) and x._value.dtype.kind == "f":
        return x, number(x._value.dtype, y)   # the common `y * 2.0`
    if ty is Tensor and (tx is float or tx is int) and y._value.dtype.kind == "f":
        return number(y._value.dtype, x), y   # and `1 - y`
    if tx is Tensor and ty is Tensor:
        if x._value.dtype != y._value.dtype:
            raise TypeError(f"{op_name}: the operands have different dtypes, "
                            f"{x.dtype} and {y.dtype}; cast one with mt.cast")
    elif isinstance(x, (Tensor, Variable)):
        x = convert_to_tensor(x)
        y = operand(y, x, op_name)
    elif isinstance(y, (Tensor, Variable)):
        y = convert_to_tensor(y)
        x = operand(x, y, op_name)
    else:
        x = convert_to_tensor(x)
        y = operand(y, x, op_name)
    if x._value.dtype.kind not in "biufc":
        raise TypeError(f"{op_name}: expected numeric tensors, got dtype {x.dtype}")
    return x, y


def broadcast_error(op_name, x, y):
    return ValueError(f"{op_name}: shapes {x.shape} and {y.shape} cannot be "
                      "broadcast together")


def normalize_axes(op_name, axis, ndim):
    """`axis` (None, an int or a list, maybe negative) as a sorted tuple of
    distinct axes; anything else is an error naming the op (`arguments.axes`)."""
    return arguments.axes(op_name, axis, ndim)


def unbroadcast(grad, shape, batch_ndim):
    """Sum `grad` down to `shape`, undoing NumPy broadcasting.

    The one place broadcasting is undone: if x of shape (3, 1) was broadcast to
    (2, 3, 4), each element of x was used 2 * 4 times, so its gradient is the
    sum of those uses. The first `batch_ndim` axes of `grad` are a batch of
    upstream gradients (vectorised jacobians) and are kept.
    """
    gshape = grad._value.shape
    if gshape == shape and not batch_ndim:  # nothing was broadcast: the usual case
        return grad
    target = gshape[:batch_ndim] + shape
    if gshape == target:
        return grad
    extra = len(gshape) - len(target)
    axes = list(range(batch_ndim, batch_ndim + extra))
    axes += [batch_ndim + extra + i for i, n in enumerate(shape)
             if n == 1 and gshape[batch_ndim + extra + i] != 1]
    return reshape(reduce_sum(grad, axes), target)


def tangent_batch(op, tangents):
    """The leading batch shape that an op's input tangents carry: () for one
    direction, (n,) for a batch of n directions (forward-mode jacobians)."""
    for t, x in zip(tangents, op.inputs):
        if t is not None:
            return t._value.shape[:t._value.ndim - x._value.ndim]
    return ()


def lift(tangent, x, ndim):
    """The tangent of input `x`, reshaped to broadcast against a result of rank
    `ndim`. NumPy lines shapes up from the right, so a batch of tangents of an
    x with fewer dims than the result needs ones between its batch dims and
    x's own dims: a batch (n,) + (3,) against a result (2, 3) -> (n, 1, 3)."""
    if tangent is None:
        return None
    nb = tangent._value.ndim - x._value.ndim
    if nb == 0 or ndim <= x._value.ndim:
        return tangent
    return reshape(tangent, tangent.shape[:nb] + (1,) * (ndim - x.ndim) + x.shape)


def full_tangent(tangent, shape):
    """`tangent` broadcast to `shape` (an output tangent must have the output's
    full shape, plus batch dims, even where it does not vary)."""
    if tangent._value.shape == shape:
        return tangent
    return broadcast_to(tangent, shape)


# The shape ops and reductions import this module, so they come last; the
# functions above only use them when called.
from .reductions import reduce_sum  # noqa: E402
from .shapes import broadcast_to, reshape  # noqa: E402
