"""Broadcasting and its adjoint: reshape, broadcast_to and reduce_sum.

These three are each other's gradients (broadcasting copies a value, so its
gradient sums the copies back; a sum's gradient broadcasts the upstream
gradient), so they live together, below every other op. On them rest the
helpers every rule uses: `unbroadcast`, the one place broadcasting is undone in
reverse mode, and `lift`/`full_tangent`, which shape tangents in forward mode;
`reduction`, `spread` and `reduced_axes` make every reduction.
"""
import numpy as np

from .. import arguments
from ..registry import RegisterGradient, RegisterJVP, batch_ndim
from .core import emit, float_input, normalize_axes, tangent_batch, tensor_input


def reshape(tensor, shape, name=None):
    x = tensor_input("reshape", tensor)
    try:
        shape = arguments.shape("reshape", shape, allow_unknown=True)
    except ValueError as e:  # (too many dimensions, a negative one, ...)
        raise ValueError(f"{e}; the tensor to reshape has shape {x.shape}") from None
    if shape == x.shape:
        return x
    try:
        value = x._value.reshape(shape)
    except ValueError:
        raise ValueError(f"reshape: cannot reshape a tensor of shape {x.shape} "
                         f"({x.size} elements) into shape {list(shape)}") from None
    return emit("Reshape", value, (x,), None, name)


@RegisterGradient("Reshape", batch_safe=True)
def _reshape_grad(op, grad):
    nb = batch_ndim(op, grad)
    return reshape(grad, grad.shape[:nb] + op.inputs[0].shape)


@RegisterJVP("Reshape", batch_safe=True)
def _reshape_jvp(op, t):
    return reshape(t, tangent_batch(op, (t,)) + op.outputs[0].shape)


def broadcast_to(input, shape, name=None):
    x = tensor_input("broadcast_to", input)
    shape = arguments.shape("broadcast_to", shape)
    if shape == x.shape:
        return x
    try:
        value = np.broadcast_to(x._value, shape)
    except ValueError:
        raise ValueError(f"broadcast_to: cannot broadcast shape {x.shape} to "
                         f"{list(shape)}") from None
    return emit("BroadcastTo", value, (x,), None, name)


@RegisterGradient("BroadcastTo", batch_safe=True)
def _broadcast_to_grad(op, grad):
    return unbroadcast(grad, op.inputs[0].shape, batch_ndim(op, grad))


@RegisterJVP("BroadcastTo", batch_safe=True)
def _broadcast_to_jvp(op, t):
    y = op.outputs[0]
    return broadcast_to(lift(t, op.inputs[0], y.ndim), tangent_batch(op, (t,)) + y.shape)


def reduction(op_type, op_name, numpy_fn, x, axis, keepdims, name, need_float=False):
    x = (float_input if need_float else tensor_input)(op_name, x)
    axes = normalize_axes(op_name, axis, x.ndim)
    if op_type in ("Sum", "Prod") and x._value.dtype.kind in "iu":
        # NumPy sums small integers in the platform's int64; TensorFlow keeps
        # the dtype (and wraps around on overflow, as the int32 result does)
        value = numpy_fn(x._value, axis=axes, keepdims=bool(keepdims), dtype=x._value.dtype)
    elif x.size == 0 and op_type in EMPTY_IDENTITY:
        # NumPy refuses; TensorFlow fills in the reduction's identity
        value = numpy_fn(x._value, axis=axes, keepdims=bool(keepdims),
                         initial=EMPTY_IDENTITY[op_type](x.dtype))
    else:
        value = numpy_fn(x._value, axis=axes, keepdims=bool(keepdims))
    kept = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
    return emit(op_type, value, (x,), {"axis": axes, "keepdims": bool(keepdims),
                                       "kept_shape": kept}, name)


def _lowest(dtype):
    """-inf for floats, the smallest integer for integer dtypes (False for bool)."""
    if dtype.kind == "b":
        return False
    return -np.inf if dtype.kind in "fc" else np.iinfo(dtype).min


def _highest(dtype):
    if dtype.kind == "b":
        return True
    return np.inf if dtype.kind in "fc" else np.iinfo(dtype).max


# What reduce_max/reduce_min of nothing is, as in TensorFlow: the identity of
# max (-inf) and of min (+inf), so that max(concat(a, b)) == max(max(a), max(b))
# even when a is empty.
EMPTY_IDENTITY = {"Max": _lowest, "Min": _highest}


def spread(op, grad):
    """Copy the upstream gradient back over the reduced axes."""
    nb = batch_ndim(op, grad)
    batch = grad.shape[:nb]
    g = reshape(grad, batch + op.attrs["kept_shape"])
    return broadcast_to(g, batch + op.inputs[0].shape)


def reduced_axes(op, t):
    """The reduced axes of the op, as axes of its input's tangent `t`."""
    nb = t.ndim - op.inputs[0].ndim
    return [nb + a for a in op.attrs["axis"]]


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    return reduction("Sum", "reduce_sum", np.sum, input_tensor, axis, keepdims, name)


@RegisterGradient("Sum", batch_safe=True)
def _sum_grad(op, grad):
    return spread(op, grad)


@RegisterJVP("Sum", batch_safe=True)
def _sum_jvp(op, t):
    return reduce_sum(t, reduced_axes(op, t), keepdims=op.attrs["keepdims"])


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
