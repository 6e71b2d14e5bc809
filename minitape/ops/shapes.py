"""Shape ops: reshape, transpose, broadcast, pad, concat, stack, slicing.

They move numbers around without changing them, so each gradient moves the
upstream gradient back: reshape it back, transpose it back, slice out the
padding, split the concatenation, scatter a slice into zeros. Leading batch
dims of `grad` (vectorised jacobians) are carried along untouched.

They are linear, so each JVP rule is the op itself applied to the tangent
(past the tangent's leading batch dims, if it has any).
"""
import numpy as np

from .. import arguments
from ..registry import RegisterGradient, RegisterJVP, batch_ndim
from ..tensor import Tensor, convert_to_tensor
from .broadcasting import broadcast_to, lift, reshape, unbroadcast  # noqa: F401 (re-exported)
from .complex import conj
from .core import (constant_like, emit, normalize_axes, tangent_batch, tensor_input,
                   tensor_inputs)


def transpose(a, perm=None, conjugate=False, name=None):
    """The axes permuted (reversed by default); `conjugate=True` conjugates a
    complex tensor too (TensorFlow's argument order: a, perm, conjugate, name)."""
    x = tensor_input("transpose", a)
    if conjugate:
        x = conj(x)
    perm = tuple(range(x.ndim))[::-1] if perm is None else \
        arguments.integers("transpose", "perm", perm)
    if sorted(perm) != list(range(x.ndim)):
        raise ValueError(f"transpose: perm {list(perm)} is not a permutation of the "
                         f"{x.ndim} axes of a tensor of shape {x.shape}")
    return emit("Transpose", np.transpose(x._value, perm), (x,), {"perm": perm}, name)


@RegisterGradient("Transpose", batch_safe=True)
def _transpose_grad(op, grad):
    nb = batch_ndim(op, grad)
    inverse = np.argsort(op.attrs["perm"])
    return transpose(grad, tuple(range(nb)) + tuple(nb + int(i) for i in inverse))


@RegisterJVP("Transpose", batch_safe=True)
def _transpose_jvp(op, t):
    nb = len(tangent_batch(op, (t,)))
    return transpose(t, tuple(range(nb)) + tuple(nb + i for i in op.attrs["perm"]))


def matrix_transpose(a, name=None, conjugate=False):
    """Swap the last two axes (and conjugate, with `conjugate=True`)."""
    x = tensor_input("matrix_transpose", a)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: needs rank >= 2, got shape {x.shape}")
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return transpose(x, perm, conjugate=conjugate, name=name)


def expand_dims(input, axis, name=None):
    x = tensor_input("expand_dims", input)
    axis = arguments.integer("expand_dims", "axis", axis)
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise ValueError(f"expand_dims: axis {axis} is out of range for shape {x.shape}")
    axis = axis % (x.ndim + 1)
    return reshape(x, x.shape[:axis] + (1,) + x.shape[axis:], name)


def squeeze(input, axis=None, name=None):
    x = tensor_input("squeeze", input)
    if axis is None:
        axes = [i for i, n in enumerate(x.shape) if n == 1]
    else:
        axes = normalize_axes("squeeze", axis, x.ndim)
        bad = [a for a in axes if x.shape[a] != 1]
        if bad:
            raise ValueError(f"squeeze: axis {bad[0]} of shape {x.shape} is not 1")
    return reshape(x, tuple(n for i, n in enumerate(x.shape) if i not in axes), name)


def identity(input, name=None):
    x = tensor_input("identity", input)
    return emit("Identity", x._value, (x,), None, name)


@RegisterGradient("Identity", batch_safe=True)
def _identity_grad(op, grad):
    return grad


RegisterJVP("Identity", batch_safe=True)(_identity_grad)  # the identity is its own JVP


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """Pad with `constant_values` (which may be a scalar tensor), or with a
    mirror image of the edge: mode 'REFLECT' leaves the edge entry out,
    'SYMMETRIC' repeats it. Only the input gets a gradient."""
    x = tensor_input("pad", tensor)
    mode = str(mode).upper()
    if mode not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
        raise ValueError(f"pad: mode must be 'CONSTANT', 'REFLECT' or 'SYMMETRIC', got "
                         f"{mode!r}")
    try:
        widths = np.asarray(paddings)
    except ValueError:  # ragged: [[1, 1], [1]]
        raise ValueError(f"pad: paddings must be {x.ndim} pairs of non-negative integers "
                         f"for a tensor of shape {x.shape}, got {paddings!r:.80}") from None
    if widths.size and widths.dtype.kind not in "iu":
        raise TypeError(f"pad: paddings must hold integers, got dtype {widths.dtype}: "
                        f"{widths.tolist()}")
    if widths.shape != (x.ndim, 2) or (widths < 0).any():
        raise ValueError(f"pad: paddings must be {x.ndim} pairs of non-negative "
                         f"integers for a tensor of shape {x.shape}, got "
                         f"{widths.tolist()}")
    widths = tuple((int(a), int(b)) for a, b in widths)
    if mode != "CONSTANT":
        return _mirror_pad(x, widths, mode)
    try:  # a scalar tensor of another float dtype is fine; a lossy value is not
        fill = convert_to_tensor(np.asarray(constant_values), dtype=x.dtype)
    except (TypeError, ValueError) as e:
        raise type(e)(f"pad: constant_values {constant_values!r}: {e}") from None
    if fill.size != 1:
        raise ValueError(f"pad: constant_values must be a scalar, got shape {fill.shape}")
    fill = fill._value.reshape(())
    # np.pad refuses a scalar's empty paddings; TensorFlow returns the scalar
    value = np.pad(x._value, widths, constant_values=fill) if x.ndim else x._value.copy()
    return emit("PadV2", value, (x,), {"paddings": widths}, name)


@RegisterGradient("PadV2", batch_safe=True)
def _pad_grad(op, grad):
    nb = batch_ndim(op, grad)
    inner = tuple(slice(a, a + n) for (a, _), n in zip(op.attrs["paddings"],
                                                        op.inputs[0].shape))
    return grad[(slice(None),) * nb + inner]


@RegisterJVP("PadV2", batch_safe=True)
def _pad_jvp(op, t):
    nb = len(tangent_batch(op, (t,)))
    return pad(t, ((0, 0),) * nb + op.attrs["paddings"])  # pads with 0: a constant


def _mirror_pad(x, widths, mode):
    """Mirror padding as indexing with a constant index along each padded
    axis (np.pad of 0..n-1 gives it), so its gradient adds the gradients of
    each entry's mirror images to it. As in TensorFlow, REFLECT needs
    paddings < the axis's size (even 0 on an empty axis), SYMMETRIC <= it."""
    for axis, ((before, after), n) in enumerate(zip(widths, x.shape)):
        if (mode == "REFLECT" and max(before, after) >= n) or max(before, after) > n:
            raise ValueError(f"pad: in mode {mode} the paddings of axis {axis} must be "
                             f"{'<' if mode == 'REFLECT' else '<='} its size {n} (shape "
                             f"{x.shape}), got {[before, after]}")
    for axis, ((before, after), n) in enumerate(zip(widths, x.shape)):
        if before or after:
            index = np.pad(np.arange(n), (before, after), mode=mode.lower())
            x = getitem(x, (slice(None),) * axis + (index,))
    return x


def _tensor_list(op_name, values):
    if isinstance(values, (list, tuple)):
        return values
    if isinstance(values, Tensor) and values.ndim > 0:
        return list(values)  # the rows of a tensor
    raise TypeError(f"{op_name}: values must be a list of tensors, got "
                    f"{type(values).__name__} {values!r:.80}")


def concat(values, axis, name=None):
    xs = tensor_inputs("concat", _tensor_list("concat", values))
    if not xs:
        raise ValueError("concat: needs at least one tensor")
    if xs[0].ndim == 0:
        raise ValueError("concat: cannot concatenate scalars (shape ()); use mt.stack")
    if len({x.ndim for x in xs}) > 1:
        raise ValueError(f"concat: all tensors must have one rank, got shapes "
                         f"{[x.shape for x in xs]}")
    axis = arguments.one_axis("concat", axis, xs[0].ndim)
    dtypes = {x.dtype for x in xs}
    if len(dtypes) > 1:
        raise TypeError(f"concat: all tensors must have one dtype, got {sorted(map(str, dtypes))}")
    try:
        value = np.concatenate([x._value for x in xs], axis=axis)
    except ValueError:
        raise ValueError(f"concat: shapes {[x.shape for x in xs]} differ outside "
                         f"axis {axis}") from None
    return emit("ConcatV2", value, tuple(xs), {"axis": axis}, name)


@RegisterGradient("ConcatV2", batch_safe=True)
def _concat_grad(op, grad):
    nb = batch_ndim(op, grad)
    axis = op.attrs["axis"]
    grads, start = [], 0
    for x in op.inputs:
        n = x.shape[axis]
        grads.append(grad[(slice(None),) * (nb + axis) + (slice(start, start + n),)])
        start += n
    return grads


def _zeros_for_missing(op, tangents):
    """The tangents of every input, with zeros where one is None."""
    batch = tangent_batch(op, tangents)
    return [constant_like(np.zeros(batch + x.shape, x.dtype)) if t is None else t
            for t, x in zip(tangents, op.inputs)]


@RegisterJVP("ConcatV2", batch_safe=True)
def _concat_jvp(op, *tangents):
    nb = len(tangent_batch(op, tangents))
    return concat(_zeros_for_missing(op, tangents), axis=nb + op.attrs["axis"])


def stack(values, axis=0, name=None):
    xs = tensor_inputs("stack", _tensor_list("stack", values))
    if not xs:
        raise ValueError("stack: needs at least one tensor")
    if len({x.shape for x in xs}) > 1 or len({x.dtype for x in xs}) > 1:
        raise ValueError(f"stack: all tensors must have one shape and dtype, got "
                         f"{[(x.shape, str(x.dtype)) for x in xs]}")
    axis = arguments.integer("stack", "axis", axis)
    if not -xs[0].ndim - 1 <= axis <= xs[0].ndim:
        raise ValueError(f"stack: axis {axis} is out of range for shape {xs[0].shape}")
    axis %= xs[0].ndim + 1
    value = np.stack([x._value for x in xs], axis=axis)
    return emit("Pack", value, tuple(xs), {"axis": axis}, name)


@RegisterGradient("Pack", batch_safe=True)
def _stack_grad(op, grad):
    nb = batch_ndim(op, grad)
    lead = (slice(None),) * (nb + op.attrs["axis"])
    return [grad[lead + (i,)] for i in range(len(op.inputs))]


@RegisterJVP("Pack", batch_safe=True)
def _stack_jvp(op, *tangents):
    nb = len(tangent_batch(op, tangents))
    return stack(_zeros_for_missing(op, tangents), axis=nb + op.attrs["axis"])


def unstack(value, num=None, axis=0, name=None):
    x = tensor_input("unstack", value)
    if x.ndim == 0:
        raise ValueError("unstack: cannot unstack a scalar (shape ()); it has no axis")
    axis = arguments.one_axis("unstack", axis, x.ndim)
    if num is not None and arguments.integer("unstack", "num", num) != x.shape[axis]:
        raise ValueError(f"unstack: num={num} but axis {axis} of shape {x.shape} has "
                         f"{x.shape[axis]} entries")
    lead = (slice(None),) * axis
    return [x[lead + (i,)] for i in range(x.shape[axis])]


# --- indexing: x[index] ------------------------------------------------------

def _index_arg(index):
    """Normalise an index: a tuple whose tensors and lists became NumPy arrays."""
    if not isinstance(index, tuple):
        index = (index,)
    out = []
    for item in index:
        if isinstance(item, Tensor):
            item = np.asarray(item)  # (through __array__: a trace learns it needs the value)
        if isinstance(item, (list, np.ndarray)):
            item = np.asarray(item)
        elif isinstance(item, np.generic) and item.dtype.kind in "iu":
            item = int(item)
        out.append(item)
    return tuple(out)


def _separated_arrays(index):
    """NumPy moves array-indexed axes to the front when arrays are separated by
    slices; batch dims in front would then move too, so such indices are
    scattered one batch row at a time."""
    where = [i for i, item in enumerate(index) if isinstance(item, np.ndarray)]
    return len(where) > 1 and where[-1] - where[0] != len(where) - 1


def getitem(tensor, index):
    """`tensor[index]`: basic and advanced NumPy indexing, differentiable."""
    x = tensor_input("getitem", tensor)
    index = _index_arg(index)
    for item in index:  # a wrong kind of index is a TypeError, as for Python's lists
        if not (item is None or item is Ellipsis
                or isinstance(item, (int, np.integer, np.bool_, slice))
                or (isinstance(item, np.ndarray) and item.dtype.kind in "iub")):
            raise TypeError(f"getitem: cannot index a tensor of shape {x.shape} with "
                            f"{type(item).__name__} {item!r:.80}; indices are integers, "
                            "slices, ..., None or integer/bool arrays")
    try:
        value = x._value[index]
    except (IndexError, TypeError, ValueError) as e:
        raise type(e)(f"getitem: cannot index a tensor of shape {x.shape} with "
                      f"{index!r}: {e}") from None
    return emit("StridedSlice", value, (x,), {"index": index}, None)


@RegisterGradient("StridedSlice", batch_safe=True)
def _getitem_grad(op, grad):
    return scatter(grad, op.attrs["index"], op.inputs[0].shape, batch_ndim(op, grad))


@RegisterJVP("StridedSlice", batch_safe=True)
def _getitem_jvp(op, t):
    return _take(t, op.attrs["index"], len(tangent_batch(op, (t,))))


def scatter(grad, index, shape, nb):
    """Zeros of `shape` (plus batch dims) with `grad` added at `index`."""
    g = tensor_input("scatter", grad)
    return emit("StridedSliceGrad", _scatter_value(g._value, index, shape, nb), (g,),
                {"index": index, "shape": shape, "batch_ndim": nb}, None)


def _scatter_value(g, index, shape, nb):
    batch = g.shape[:nb]
    out = np.zeros(batch + shape, dtype=g.dtype)
    if not any(isinstance(item, np.ndarray) for item in index):
        out[(slice(None),) * nb + index] = g  # basic indexing: no repeats
    elif nb and _separated_arrays(index):
        for b in np.ndindex(*batch):
            np.add.at(out[b], index, g[b])
    else:
        np.add.at(out, (slice(None),) * nb + index, g)  # repeated indices add up
    return out


@RegisterGradient("StridedSliceGrad", batch_safe=True)
def _scatter_grad(op, grad):
    lead = batch_ndim(op, grad) + op.attrs["batch_ndim"]
    return _take(grad, op.attrs["index"], lead)


@RegisterJVP("StridedSliceGrad", batch_safe=True)
def _scatter_jvp(op, t):
    nb = len(tangent_batch(op, (t,))) + op.attrs["batch_ndim"]
    return scatter(t, op.attrs["index"], op.attrs["shape"], nb)


def _take(t, index, lead):
    """`t[index]` applied below the first `lead` axes."""
    if lead == 0 or not _separated_arrays(index):
        return t[(slice(None),) * lead + index]
    batch = t.shape[:lead]
    flat = reshape(t, (-1,) + t.shape[lead:])
    rows = stack([flat[i][index] for i in range(flat.shape[0])])
    return reshape(rows, batch + rows.shape[1:])


def shape(input, out_type=np.int32, name=None):
    """The shape as an int32 tensor (not differentiable)."""
    out_type = arguments.dtype("shape", out_type, kinds="iu")
    return constant_like(np.array(tensor_input("shape", input).shape, dtype=out_type))


def size(input, out_type=np.int32, name=None):
    out_type = arguments.dtype("size", out_type, kinds="iu")
    return constant_like(np.array(tensor_input("size", input).size, dtype=out_type))
