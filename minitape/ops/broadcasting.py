"""Broadcasting and its adjoint: reshape, broadcast_to and reduce_sum.

These three are each other's gradients (broadcasting copies a value, so its
gradient sums the copies back; a sum's gradient broadcasts the upstream
gradient), so they live together, below every other op. On them rest the
helpers every rule uses: `unbroadcast`, the one place broadcasting is undone in
reverse mode, and `lift`/`full_tangent`, which shape tangents in forward mode;
`reduction`, `spread` and `reduced_axes` make every reduction.
"""
import math

import numpy as np

from .. import arguments
from ..core.registry import batch_ndim
from .operands import (emit, first_input_dtype, float_input, normalize_axes, reduction_shape,
                   tangent_batch, tensor_input)
from .declaration import declare


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


def _reshape_grad(op, grad):
    nb = batch_ndim(op, grad)
    return reshape(grad, grad.shape[:nb] + op.inputs[0].shape)


def _reshape_jvp(op, t):
    return reshape(t, tangent_batch(op, (t,)) + op.outputs[0].shape)


def declared_shape(declared):
    """The output shape a graph declares, for an op whose shape is an argument."""
    if declared[0] is None:
        raise ValueError("needs a declared output shape")
    return tuple(declared[0])


def _reshape_shape(shapes, attrs, declared):
    out = declared_shape(declared)
    if math.prod(shapes[0]) != math.prod(out):
        raise ValueError(f"cannot reshape {math.prod(shapes[0])} elements to {out}")
    return (out,), 0


def _output_shape_attr(attrs, out_shapes, in_dtypes):
    return {"shape": out_shapes[0]}


def _same_shape(attrs, in_shape, out_shape):
    """The compiler's "unchanged": a reshape or broadcast to the shape it has."""
    return out_shape is not None and tuple(in_shape) == tuple(out_shape)


declare("Reshape", _reshape_grad, _reshape_jvp,
        replay=lambda xs, attrs, out_shapes: reshape(xs[0], out_shapes[0]),
        shape=_reshape_shape, dtype=first_input_dtype, line="{0}.reshape({shape})",
        line_attrs=_output_shape_attr, simplify={"unchanged": _same_shape}, smooth=True)


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


def _broadcast_to_grad(op, grad):
    return unbroadcast(grad, op.inputs[0].shape, batch_ndim(op, grad))


def _broadcast_to_jvp(op, t):
    y = op.outputs[0]
    return broadcast_to(lift(t, op.inputs[0], y.ndim), tangent_batch(op, (t,)) + y.shape)


declare("BroadcastTo", _broadcast_to_grad, _broadcast_to_jvp,
        replay=lambda xs, attrs, out_shapes: broadcast_to(xs[0], out_shapes[0]),
        shape=lambda shapes, attrs, declared: (
            (np.broadcast_shapes(shapes[0], declared_shape(declared)),), 0),
        dtype=first_input_dtype, line="np.broadcast_to({0}, {shape})", word="broadcast",
        line_attrs=_output_shape_attr, simplify={"unchanged": _same_shape}, smooth=True)


def reduction(op_type, op_name, numpy_fn, x, axis, keepdims, name, need_float=False,
              keep_integers=False, empty=None):
    """Record the reduction `op_type` of `x` over `axis`. `keep_integers`: an
    integer input keeps its dtype (NumPy sums small integers in the platform's
    int64; TensorFlow keeps the dtype and wraps around on overflow, as the
    int32 result does). `empty(dtype)`: the reduction's identity, the result
    over nothing (NumPy refuses where TensorFlow fills it in)."""
    x = (float_input if need_float else tensor_input)(op_name, x)
    axes = normalize_axes(op_name, axis, x.ndim)
    if keep_integers and x._value.dtype.kind in "iu":
        value = numpy_fn(x._value, axis=axes, keepdims=bool(keepdims), dtype=x._value.dtype)
    elif x.size == 0 and empty is not None:
        value = numpy_fn(x._value, axis=axes, keepdims=bool(keepdims), initial=empty(x.dtype))
    else:
        value = numpy_fn(x._value, axis=axes, keepdims=bool(keepdims))
    kept = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
    return emit(op_type, value, (x,), {"axis": axes, "keepdims": bool(keepdims),
                                       "kept_shape": kept}, name)


def lowest(dtype):
    """-inf for floats, the smallest integer for integer dtypes (False for bool)."""
    if dtype.kind == "b":
        return False
    return -np.inf if dtype.kind in "fc" else np.iinfo(dtype).min


def highest(dtype):
    if dtype.kind == "b":
        return True
    return np.inf if dtype.kind in "fc" else np.iinfo(dtype).max


def declare_reduction(op_type, public, gradient=None, jvp=None, line=None, word=None,
                      helpers=None, keep_integers=False, differentiable=True, smooth=True,
                      any_rank=True):
    """Declare a reduction recorded by `reduction`: its attributes (`axis`,
    `keepdims`; an axis None, all axes, only in graphs for inputs of unknown
    rank, when `any_rank`), how it is replayed, its shape rule and its
    compiled line."""
    declare(op_type, gradient, jvp, differentiable,
            replay=lambda xs, a, out_shapes: public(
                xs[0], axis=None if a["axis"] is None else list(a["axis"]),
                keepdims=a["keepdims"]),
            attrs_of=lambda op: {"axis": tuple(op.attrs["axis"]),
                                 "keepdims": bool(op.attrs["keepdims"])},
            shape=reduction_shape, line=line, word=word, helpers=helpers,
            line_attrs=lambda a, out_shapes, in_dtypes: {
                "axis": None if a["axis"] is None else tuple(a["axis"]),
                "keepdims": bool(a["keepdims"])},
            simplify={"integer_dtype": True} if keep_integers else None,
            rank_free=any_rank, reduces=any_rank, smooth=smooth,
            # (the file's form: axes as a list; reductions over any rank
            # only, the others kept the generic tagged form they had)
            attr_kinds={"axis": "axes_or_all", "keepdims": "flag"} if any_rank else None)


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
    return reduction("Sum", "reduce_sum", np.sum, input_tensor, axis, keepdims, name,
                     keep_integers=True)


def _sum_grad(op, grad):
    return spread(op, grad)


def _sum_jvp(op, t):
    return reduce_sum(t, reduced_axes(op, t), keepdims=op.attrs["keepdims"])


declare_reduction("Sum", reduce_sum, _sum_grad, _sum_jvp,
                  "{0}.sum({axis}, keepdims={keepdims})", keep_integers=True)


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
