"""What the binary elementwise ops of the families share: the forward (two
operands of one dtype, broadcast) and the two steps every rule ends with.

`input_gradients` sums each input's gradient back to that input's shape (the
upstream gradient may carry leading batch dims: vectorised jacobians);
`lifted` shapes the two tangents to broadcast against the output, and
`tangent_sum` adds the terms of the output's tangent (None is zero).
"""
import numpy as np

from .broadcasting import full_tangent, lift, unbroadcast
from .core import broadcast_error, emit, operands, tangent_batch

_KIND_NAMES = {"f": "floating-point", "c": "complex", "i": "integer", "u": "unsigned integer",
               "b": "bool"}


def binary(name, op_type, forward, doc, kinds="fc"):
    """Define the op `name(x, y)`: both operands converted to one dtype (Python
    numbers take the tensor's), of a kind in `kinds`, broadcast together;
    `forward` runs on the NumPy values with inf/NaN warnings silenced."""
    def op(x, y, name=None):
        x, y = operands(op.__name__, x, y)
        check_kind(op.__name__, x, kinds)
        with np.errstate(all="ignore"):
            try:
                value = np.asarray(forward(x._value, y._value))
            except ValueError:
                raise broadcast_error(op.__name__, x, y) from None
        return emit(op_type, value, (x, y), None, name)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


def check_kind(op_name, x, kinds):
    """A TypeError naming the op when x's dtype is not of one of `kinds`."""
    if x.dtype.kind not in kinds:
        wanted = " or ".join(_KIND_NAMES[k] for k in kinds)
        raise TypeError(f"{op_name}: expected {wanted} tensors, got dtype {x.dtype}")


def input_gradients(op, grad, gx, gy):
    """Each input's gradient summed back to that input's shape (None stays None)."""
    x, y = op.inputs
    nb = grad._value.ndim - op.outputs[0]._value.ndim  # leading batch dims
    return (None if gx is None or not op.needs[0] else unbroadcast(gx, x._value.shape, nb),
            None if gy is None or not op.needs[1] else unbroadcast(gy, y._value.shape, nb))


def lifted(op, tx, ty):
    """The tangents of x and y, shaped to broadcast against the output."""
    x, y = op.inputs
    ndim = op.outputs[0]._value.ndim
    return lift(tx, x, ndim), lift(ty, y, ndim)


def tangent_sum(op, tangents, a, b):
    """The output's tangent a + b (None is zero), at the output's full shape
    plus the batch dims of the op's input `tangents` (as given, not lifted)."""
    t = a if b is None else b if a is None else a + b
    return full_tangent(t, tangent_batch(op, tangents) + op.outputs[0]._value.shape)
