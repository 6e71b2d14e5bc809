"""Shape ops: reshape, transpose, broadcast, pad, concat, stack, slicing.

They move numbers around without changing them, so each gradient moves the
upstream gradient back: reshape it back, transpose it back, slice out the
padding, split the concatenation, scatter a slice into zeros. Leading batch
dims of `grad` (vectorised jacobians) are carried along untouched.

They are linear, so each JVP rule is the op itself applied to the tangent
(past the tangent's leading batch dims, if it has any).
"""
import math

import numpy as np

from .. import arguments
from ..core.registry import batch_ndim
from ..core.tensor import Tensor, convert_to_tensor
from .broadcasting import (broadcast_to, declared_shape, lift, reshape,  # noqa: F401
                           unbroadcast)
from .complex import conj
from .operands import (constant_like, elementwise_shape, emit, first_input_dtype, normalize_axes,
                   stack_tensors, tangent_batch, tensor_input, tensor_inputs,
                   zeros_for_missing)
from .declaration import attributes, declare, gives_its_input


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


def _transpose_grad(op, grad):
    nb = batch_ndim(op, grad)
    inverse = np.argsort(op.attrs["perm"])
    return transpose(grad, tuple(range(nb)) + tuple(nb + int(i) for i in inverse))


def _transpose_jvp(op, t):
    nb = len(tangent_batch(op, (t,)))
    return transpose(t, tuple(range(nb)) + tuple(nb + i for i in op.attrs["perm"]))


def _transpose_shape(shapes, attrs, declared):
    a, perm = shapes[0], attrs["perm"]
    if sorted(perm) != list(range(len(a))):
        raise ValueError(f"perm {list(perm)} is not a permutation of {len(a)} axes")
    return (tuple(a[p] for p in perm),), 0


declare("Transpose", _transpose_grad, _transpose_jvp,
        replay=lambda xs, attrs, out_shapes: transpose(xs[0], attrs["perm"]),
        attrs_of=lambda op: {"perm": tuple(int(p) for p in op.attrs["perm"])},
        shape=_transpose_shape, dtype=first_input_dtype, line="{0}.transpose({perm})",
        line_attrs=lambda attrs, out_shapes, in_dtypes: {"perm": attrs["perm"]},
        smooth=True, attr_kinds={"perm": "axes"})


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


def _identity_grad(op, grad):
    return grad


# (a traced function's read of a variable is an Identity node: functions/trace_graph.py)
IDENTITY = declare("Identity", _identity_grad, _identity_grad,  # the identity is its own JVP
        replay=lambda xs, attrs, out_shapes: identity(xs[0]), shape=elementwise_shape,
        dtype=first_input_dtype, simplify={"unchanged": gives_its_input}, rank_free=True,
        smooth=True)


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


def _pad_grad(op, grad):
    nb = batch_ndim(op, grad)
    inner = tuple(slice(a, a + n) for (a, _), n in zip(op.attrs["paddings"],
                                                        op.inputs[0].shape))
    return grad[(slice(None),) * nb + inner]


def _pad_jvp(op, t):
    nb = len(tangent_batch(op, (t,)))
    return pad(t, ((0, 0),) * nb + op.attrs["paddings"])  # pads with 0: a constant


def _pad_attrs(op):
    """A traced pad keeps only the paddings; the fill value is read off the output."""
    paddings = tuple((int(a), int(b)) for a, b in op.attrs["paddings"])
    out = op.outputs[0]._value
    inner = np.ones(out.shape, dtype=bool)
    inner[tuple(slice(a, a + n) for (a, _), n in zip(paddings, op.inputs[0].shape))] = False
    fill = out[inner][0].item() if inner.any() else 0
    return {"paddings": paddings, "constant_values": fill}


def _pad_replay(xs, attrs, out_shapes):
    # paddings as an (n, 2) array: a scalar's empty paddings keep their 2 columns
    paddings = np.array(attrs["paddings"], dtype=np.int64).reshape(-1, 2)
    return pad(xs[0], paddings, constant_values=attrs["constant_values"])


def _pad_shape(shapes, attrs, declared):
    a, pads = shapes[0], attrs["paddings"]
    attrs["constant_values"]  # (a number: the format checked it)
    if len(pads) != len(a):
        raise ValueError(f"{len(pads)} paddings for rank {len(a)}")
    return (tuple(n + before + after for n, (before, after) in zip(a, pads)),), 0


declare("PadV2", _pad_grad, _pad_jvp, replay=_pad_replay, attrs_of=_pad_attrs,
        shape=_pad_shape, dtype=first_input_dtype,
        line="np.pad({0}, {paddings}, constant_values={fill})", word="pad",
        line_attrs=lambda attrs, out_shapes, in_dtypes: {
            "paddings": attrs["paddings"],
            "fill": np.asarray(attrs["constant_values"], dtype=in_dtypes[0])},
        simplify={"unchanged": lambda attrs, in_shape, out_shape: not attrs["paddings"]},
        smooth=True, attr_kinds={"paddings": "paddings", "constant_values": "number"})


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


def _concat_grad(op, grad):
    nb = batch_ndim(op, grad)
    axis = op.attrs["axis"]
    grads, start = [], 0
    for x in op.inputs:
        n = x.shape[axis]
        grads.append(grad[(slice(None),) * (nb + axis) + (slice(start, start + n),)])
        start += n
    return grads


def _concat_jvp(op, *tangents):
    nb = len(tangent_batch(op, tangents))
    return concat(zeros_for_missing(op, tangents), axis=nb + op.attrs["axis"])


def _concat_shape(shapes, attrs, declared):
    a, axis = shapes[0], attrs["axis"]
    if not -len(a) <= axis < len(a) or not a:
        raise ValueError(f"axis {axis} is out of range for rank {len(a)}")
    axis %= len(a)
    if any(len(s) != len(a) or s[:axis] + s[axis + 1:] != a[:axis] + a[axis + 1:]
           for s in shapes):
        raise ValueError("concatenates tensors whose other sizes differ")
    return (a[:axis] + (sum(s[axis] for s in shapes),) + a[axis + 1:],), 0


declare("ConcatV2", _concat_grad, _concat_jvp,
        replay=lambda xs, attrs, out_shapes: concat(xs, attrs["axis"]), arity=None,
        attrs_of=attributes("axis"), shape=_concat_shape,
        line="np.concatenate(({inputs},), {axis})", word="concat",
        line_attrs=lambda attrs, out_shapes, in_dtypes: {"axis": attrs["axis"]},
        smooth=True, attr_kinds={"axis": "axis"})


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
    return stack_tensors(xs, axis, name)


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


def _getitem_grad(op, grad):
    return scatter(grad, op.attrs["index"], op.inputs[0].shape, batch_ndim(op, grad))


def _getitem_jvp(op, t):
    return _take(t, op.attrs["index"], len(tangent_batch(op, (t,))))


# The most elements a shape rule lets an index select from a view of zeros
# (the saved-model loader's limit on one tensor, in elements of one byte).
_MOST_SELECTED = 1 << 28


def index_shape(shape, index):
    """The shape `x[index]` has, for an x of `shape`, without allocating x: the
    index is applied to a read-only view with zero strides."""
    arrays = [item.shape for item in index if isinstance(item, np.ndarray)]
    if arrays and math.prod(np.broadcast_shapes(*arrays)) * max(1, math.prod(shape)) \
            > _MOST_SELECTED:
        raise ValueError("the index selects too many elements")
    return np.broadcast_to(np.zeros((), bool), shape)[index].shape


declare("StridedSlice", _getitem_grad, _getitem_jvp,
        replay=lambda xs, attrs, out_shapes: getitem(xs[0], attrs["index"]),
        attrs_of=attributes("index"),
        shape=lambda shapes, attrs, declared: ((index_shape(shapes[0], attrs["index"]),), 0),
        dtype=first_input_dtype, line="{0}[{index}]", word="slice",
        line_attrs=lambda attrs, out_shapes, in_dtypes: {"index": attrs["index"]},
        smooth=True, attr_kinds={"index": "index"})


def scatter(grad, index, shape, nb):
    """Zeros of `shape` (plus batch dims) with `grad` added at `index`."""
    g = tensor_input("scatter", grad)
    return emit("StridedSliceGrad", _scatter_value(g._value, index, shape, nb), (g,),
                {"index": index, "shape": shape, "batch_ndim": nb}, None)


def _scatter_value(g, index, shape, nb):
    """Zeros of the batch dims + `shape`, with `g` added at `index` (the
    gradient of indexing; repeated indices add up); compiled programs call it."""
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


def _scatter_grad(op, grad):
    lead = batch_ndim(op, grad) + op.attrs["batch_ndim"]
    return _take(grad, op.attrs["index"], lead)


def _scatter_jvp(op, t):
    nb = len(tangent_batch(op, (t,))) + op.attrs["batch_ndim"]
    return scatter(t, op.attrs["index"], op.attrs["shape"], nb)


def _scatter_shape(shapes, attrs, declared):
    a, out, nb = shapes[0], declared_shape(declared), attrs["batch_ndim"]
    if nb > len(a) or nb > len(out) or a[:nb] != out[:nb]:
        raise ValueError(f"batch_ndim {nb} does not fit")
    index_shape(out[nb:], attrs["index"])
    return (out,), 0


declare("StridedSliceGrad", _scatter_grad, _scatter_jvp,
        replay=lambda xs, a, out_shapes: scatter(  # into zeros of the output's shape
            xs[0], a["index"], out_shapes[0][a["batch_ndim"]:], a["batch_ndim"]),
        attrs_of=lambda op: {"index": op.attrs["index"],
                             "batch_ndim": int(op.attrs["batch_ndim"])},
        shape=_scatter_shape, dtype=first_input_dtype,
        line="scatter({0}, {index}, {shape}, {batch_ndim})", word="scatter",
        line_attrs=lambda a, out_shapes, in_dtypes: {
            "index": a["index"], "shape": tuple(out_shapes[0][int(a["batch_ndim"]):]),
            "batch_ndim": int(a["batch_ndim"])},
        helpers={"scatter": _scatter_value}, smooth=True,
        attr_kinds={"index": "index", "batch_ndim": "rank"})


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
