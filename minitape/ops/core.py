"""What every op shares: checking inputs, emitting results, undoing broadcasting."""
import numpy as np

from ..context import state
from ..tape import record
from ..tensor import Tensor, Variable, _new_id, convert_to_tensor, operand

_new_tensor = Tensor.__new__


def emit(op_type, value, inputs, attrs=None, name=None):
    """Wrap an op's NumPy result in a Tensor and let the active tapes record it."""
    out = _new_tensor(Tensor)  # Tensor(value) without the __init__ call: every op
    out._value = value         # passes here, so these ~50 ns add up
    out._id = _new_id()
    if state.tapes:
        record(op_type, inputs, (out,), attrs, name)
    return out


def constant_like(value):
    """A tensor that no tape will ever track: for masks and other values whose
    derivative is zero (almost everywhere) inside gradient rules."""
    return Tensor(value)


def tensor_input(op_name, x):
    """`x` as a numeric Tensor, or a TypeError that names the op."""
    if type(x) is not Tensor:
        x = convert_to_tensor(x)
    if x._value.dtype.kind not in "biufc":
        raise TypeError(f"{op_name}: expected a numeric tensor, got dtype {x.dtype}")
    return x


def float_input(op_name, x):
    """`x` as a floating-point Tensor, or a TypeError that names the op."""
    if type(x) is not Tensor:
        x = convert_to_tensor(x)
    if x._value.dtype.kind not in "fc":
        raise TypeError(f"{op_name}: expected a floating-point tensor, got dtype "
                        f"{x.dtype} (use mt.cast)")
    return x


def operands(op_name, x, y):
    """Two operands as tensors of one dtype: Python numbers and arrays take the
    dtype of the tensor beside them; two tensors of different dtypes are an error."""
    tx, ty = type(x), type(y)
    if tx is Tensor and (ty is float or ty is int) and x._value.dtype.kind == "f":
        return x, Tensor(x._value.dtype.type(y))   # the common `y * 2.0`
    if ty is Tensor and (tx is float or tx is int) and y._value.dtype.kind == "f":
        return Tensor(y._value.dtype.type(x)), y   # and `1 - y`
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
    """`axis` (None, an int or a list, maybe negative) as a sorted tuple."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (Tensor, np.ndarray)):
        axis = np.asarray(axis).tolist()
    if not isinstance(axis, (list, tuple)):
        axis = [axis]
    axes = set()
    for a in axis:
        a = int(a)
        if not -ndim <= a < ndim and not (ndim == 0 and a in (0, -1)):
            raise ValueError(f"{op_name}: axis {a} is out of range for a tensor of "
                             f"rank {ndim}")
        axes.add(a % ndim if ndim else 0)
    return tuple(sorted(axes)) if ndim else ()


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
    from .reductions import reduce_sum
    from .shapes import reshape
    extra = len(gshape) - len(target)
    axes = list(range(batch_ndim, batch_ndim + extra))
    axes += [batch_ndim + extra + i for i, n in enumerate(shape)
             if n == 1 and gshape[batch_ndim + extra + i] != 1]
    return reshape(reduce_sum(grad, axes), target)
