"""Indexing with tensors of indices: gather, gather_nd, scatter_nd,
tensor_scatter_nd_update and tensor_scatter_nd_add, boolean_mask, one_hot and
where(condition).

Two primitives carry all the calculus. GatherNd reads `params` at index
tuples; ScatterNd adds `updates` into zeros at index tuples. Each is the
other's gradient: an entry read twice sends two gradients back, and they add
up, exactly what a scatter-add does; and both are linear in their float input,
so each JVP is the op itself applied to the tangent. gather and boolean_mask
only build index tuples and call gather_nd.

The indices are op inputs, never attributes: a function traced by
`mt.function` gathers at the indices of each call (argmax, top_k and
where(condition) compute them). They have no gradient, as in TensorFlow.
Out-of-range indices are an error naming the op and the index (TensorFlow on a
CPU does the same; NumPy would quietly wrap a negative one).
"""
import math

import numpy as np

from .. import arguments
from ..core import tensor as _values
from ..core.registry import batch_ndim
from .broadcasting import reshape
from .operands import (attr_int, attr_ints, constant_like, emit, index_dtypes, tangent_batch,
                   tensor_input)
from .declaration import declare
from .elementwise import select
from .shapes import concat, transpose


def _index_input(op_name, what, indices):
    t = tensor_input(op_name, indices)
    if t.dtype.kind not in "iu":
        raise TypeError(f"{op_name}: {what} must be integers, got dtype {t.dtype}")
    return t


def _check_bounds(op_name, idx, dims, shape=None):
    """Every row of `idx` (last axis: one coordinate per dim) inside `dims`
    (the first dims of `shape`, which the message names if given)."""
    bad = ((idx < 0) | (idx >= np.asarray(dims, dtype=np.int64))).any(axis=-1)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{op_name}: indices{list(where)} = {idx[where].tolist()} does "
                         f"not index into shape {list(dims if shape is None else shape)}")


def _gather_nd_value(x, idx, nb):
    """x[b..., idx[i..., 0], ..., idx[i..., k-1], rest...] for each batch index b
    (the first `nb` axes of x) and index tuple i."""
    k = idx.shape[-1]
    lead, batch, rest = idx.shape[:-1], x.shape[:nb], x.shape[nb + k:]
    if k == 0:  # an empty index tuple reads all of x, for each i
        x = x.reshape(batch + (1,) * len(lead) + rest)
        return np.broadcast_to(x, batch + lead + rest).copy()
    return x[(slice(None),) * nb + tuple(np.moveaxis(idx, -1, 0))]


def _gather_nd(params, indices, nb, name=None, op_name="gather_nd"):
    """GatherNd below the first `nb` (batch) axes of params: the rules' form."""
    idx = indices._value
    k = idx.shape[-1] if idx.ndim else None
    if k is None or k > params.ndim - nb:
        raise ValueError(f"{op_name}: indices of shape {indices.shape} need a last axis "
                         f"of length <= {params.ndim - nb}, the rank of params of shape "
                         f"{params.shape[nb:]}")
    _check_bounds(op_name, idx, params.shape[nb:nb + k])
    return emit("GatherNd", _gather_nd_value(params._value, idx, nb), (params, indices),
                {"batch_ndim": nb}, name)


def _gather_nd_grad(op, grad):
    """Each read entry gets back the gradient of each place it was read into."""
    params, indices = op.inputs
    nb = op.attrs["batch_ndim"]
    return (_scatter_nd(indices, grad, params.shape[nb:], batch_ndim(op, grad) + nb),
            None)


def _gather_nd_jvp(op, t, t_indices):
    if t is None:
        return None
    nb = len(tangent_batch(op, (t, None))) + op.attrs["batch_ndim"]
    return _gather_nd(t, op.inputs[1], nb)


def _gather_nd_shape(shapes, attrs, declared):
    params, indices = shapes
    nb = attr_int(attrs, "batch_ndim", 0, len(params))
    if not indices or indices[-1] > len(params) - nb:
        raise ValueError(f"indices of shape {indices} need a last axis of length <= "
                         f"{len(params) - nb}")
    return (params[:nb] + indices[:-1] + params[nb + indices[-1]:],), 0


declare("GatherNd", _gather_nd_grad, _gather_nd_jvp,
        replay=lambda xs, a, o: _gather_nd(xs[0], xs[1], a["batch_ndim"]), arity=2,
        attrs_of=lambda op: {"batch_ndim": int(op.attrs["batch_ndim"])}, shape=_gather_nd_shape,
        dtype=index_dtypes(1), smooth=True)


def _scatter_nd(indices, updates, shape, nb, name=None, op_name="scatter_nd"):
    """Zeros of batch + `shape` with `updates` added at the index tuples
    (repeated indices add up); the first `nb` axes of updates are a batch."""
    idx, u = indices._value, updates._value
    k = idx.shape[-1] if idx.ndim else None
    if k is None or k > len(shape):
        raise ValueError(f"{op_name}: indices of shape {indices.shape} need a last axis "
                         f"of length <= {len(shape)}, the rank of shape {list(shape)}")
    batch = u.shape[:nb]
    expected = batch + idx.shape[:-1] + tuple(shape[k:])
    if u.shape != expected:
        raise ValueError(f"{op_name}: updates must have shape {list(expected[nb:])} "
                         f"(indices.shape[:-1] + shape[{k}:]) for indices of shape "
                         f"{indices.shape} and shape {list(shape)}, got {updates.shape[nb:]}")
    _check_bounds(op_name, idx, shape[:k])
    out = np.zeros(batch + tuple(shape), dtype=u.dtype)
    if k == 0:
        out += u.sum(axis=tuple(range(nb, nb + idx.ndim - 1)))
    else:
        np.add.at(out, (slice(None),) * nb + tuple(np.moveaxis(idx, -1, 0)), u)
    return emit("ScatterNd", out, (indices, updates),
                {"shape": tuple(shape), "batch_ndim": nb}, name)


def _scatter_nd_grad(op, grad):
    """Each update went to one place: its gradient is read back from there."""
    indices = op.inputs[0]
    return None, _gather_nd(grad, indices, batch_ndim(op, grad) + op.attrs["batch_ndim"])


def _scatter_nd_jvp(op, t_indices, t):
    if t is None:
        return None
    nb = len(tangent_batch(op, (None, t))) + op.attrs["batch_ndim"]
    return _scatter_nd(op.inputs[0], t, op.attrs["shape"], nb)


def _scatter_nd_shape(shapes, attrs, declared):
    indices, updates = shapes
    shape = attr_ints(attrs, "shape", 0, 1 << 40)
    nb = attr_int(attrs, "batch_ndim", 0, len(updates))
    if len(shape) > 32 or not indices or indices[-1] > len(shape) \
            or updates[nb:] != indices[:-1] + shape[indices[-1]:]:
        raise ValueError(f"indices {indices} and updates {updates} do not fit shape "
                         f"{list(shape)}")
    return (updates[:nb] + shape,), 0


declare("ScatterNd", _scatter_nd_grad, _scatter_nd_jvp,
        replay=lambda xs, a, o: _scatter_nd(xs[0], xs[1], a["shape"], a["batch_ndim"]), arity=2,
        attrs_of=lambda op: {"shape": tuple(int(n) for n in op.attrs["shape"]),
                      "batch_ndim": int(op.attrs["batch_ndim"])},
        shape=_scatter_nd_shape, dtype=index_dtypes(0), smooth=True)


def gather_nd(params, indices, batch_dims=0, name=None):
    """Slices of `params` at the index tuples in the last axis of `indices`;
    the first `batch_dims` axes of both are matched pairwise."""
    x = tensor_input("gather_nd", params)
    i = _index_input("gather_nd", "indices", indices)
    b = arguments.size("gather_nd", "batch_dims", batch_dims)
    if b and (i.ndim < b + 1 or x.shape[:b] != i.shape[:b]):
        raise ValueError(f"gather_nd: with batch_dims={b}, params {x.shape} and indices "
                         f"{i.shape} must share their first {b} dims (and indices "
                         f"needs one more)")
    k = i.shape[-1] if i.ndim else None
    if k is None or k > x.ndim - b:
        raise ValueError(f"gather_nd: indices of shape {i.shape} need a last axis of length "
                         f"<= {x.ndim - b}, the rank of params of shape {x.shape[b:]}")
    _check_bounds("gather_nd", i._value, x.shape[b:b + k])  # before any op is recorded
    return _gather_nd(x, _with_batch_coordinates(i, b, i.ndim - 1), 0, name)


def _with_batch_coordinates(indices, b, lead_ndim):
    """`indices` (shape B + I + (k,), B the first `b` dims) with the batch
    coordinates put in front of each index tuple: shape B + I + (b + k,)."""
    if b == 0:
        return indices
    shape = indices.shape[:lead_ndim] + (1,)
    coords = []
    for j in range(b):
        iota = np.arange(indices.shape[j], dtype=indices.dtype)
        iota = iota.reshape((1,) * j + (-1,) + (1,) * (lead_ndim - j))
        coords.append(constant_like(np.broadcast_to(iota, shape)))
    return concat(coords + [indices], axis=-1)


def scatter_nd(indices, updates, shape, name=None):
    """Zeros of `shape` with `updates` added at the index tuples of `indices`
    (repeated indices add up). Only `updates` gets a gradient."""
    i = _index_input("scatter_nd", "indices", indices)
    u = tensor_input("scatter_nd", updates)
    shape = arguments.shape("scatter_nd", shape)
    return _scatter_nd(i, u, shape, 0, name)


# --- tensor_scatter_nd_update and tensor_scatter_nd_add ----------------------------------
# A copy of `tensor` with the slices at the index tuples replaced (update) or
# added to (add). TensorFlow's rules (array_grad.py): add passes the upstream
# gradient to `tensor` as it is and gathers it at the indices for `updates`;
# update passes it to `tensor` with zeros where the updates went, and gathers
# it for `updates`. Where an index repeats, update keeps the last slice
# (TensorFlow's CPU kernel does too) and only that slice gets a gradient
# (TensorFlow gives one to each: docs/differences.md). Both are linear in
# (tensor, updates), so each JVP is the op itself applied to the tangents.

def _tensor_scatter(op_type, tensor, indices, updates, nb, name=None, op_name=None):
    """The op below the first `nb` (batch) axes of tensor and updates."""
    op_name = op_name or {"TensorScatterUpdate": "tensor_scatter_nd_update",
                          "TensorScatterAdd": "tensor_scatter_nd_add"}[op_type]
    idx, shape = indices._value, tensor.shape[nb:]
    k = idx.shape[-1] if idx.ndim else None
    if k is None or not 1 <= k <= len(shape):
        raise ValueError(f"{op_name}: indices of shape {indices.shape} need a last axis of "
                         f"length 1 to {len(shape)}, the rank of tensor of shape "
                         f"{tuple(shape)}")
    expected = tensor.shape[:nb] + idx.shape[:-1] + tuple(shape[k:])
    if updates.shape != expected:
        raise ValueError(f"{op_name}: updates must have shape {list(expected[nb:])} "
                         f"(indices.shape[:-1] + tensor.shape[{k}:]) for indices of shape "
                         f"{indices.shape} and tensor of shape {tuple(shape)}, got "
                         f"{updates.shape[nb:]}")
    _check_bounds(op_name, idx, shape[:k], shape)
    out = tensor._value.copy()
    where = (slice(None),) * nb + tuple(np.moveaxis(idx, -1, 0))
    if op_type == "TensorScatterAdd":
        np.add.at(out, where, updates._value)
    else:
        last = _last_of_each(idx, shape[:k])
        flat = updates._value.reshape(tensor.shape[:nb] + (-1,) + tuple(shape[k:]))
        u = flat[(slice(None),) * nb + (last,)]
        out[(slice(None),) * nb + tuple(np.moveaxis(idx.reshape(-1, k)[last], -1, 0))] = u
    return emit(op_type, out, (tensor, indices, updates), {"batch_ndim": nb}, name)


def _last_of_each(idx, dims):
    """The positions (in idx's index tuples, flattened) of the last occurrence
    of each distinct tuple: the slices an update keeps."""
    flat = np.ravel_multi_index(tuple(idx.reshape(-1, idx.shape[-1]).T), dims)
    _, first_from_end = np.unique(flat[::-1], return_index=True)
    return np.sort(flat.size - 1 - first_from_end)


def _tensor_scatter_grad(op, grad):
    tensor, indices, updates = op.inputs
    nb = batch_ndim(op, grad) + op.attrs["batch_ndim"]
    g_updates = _gather_nd(grad, indices, nb)
    if op.type == "TensorScatterAdd":
        return grad, None, g_updates
    idx = indices._value
    kept = np.ones(tensor.shape[op.attrs["batch_ndim"]:], grad.dtype)
    kept[tuple(np.moveaxis(idx, -1, 0))] = 0
    won = np.zeros(idx.shape[:-1], grad.dtype).reshape(-1)
    won[_last_of_each(idx, kept.shape[:idx.shape[-1]])] = 1
    won = won.reshape(idx.shape[:-1] + (1,) * (kept.ndim - idx.shape[-1]))
    return grad * constant_like(kept), None, g_updates * constant_like(won)


def _tensor_scatter_jvp(op, t_tensor, t_indices, t_updates):
    if t_tensor is None and t_updates is None:
        return None
    tensor, indices, updates = op.inputs
    batch = tangent_batch(op, (t_tensor, None, t_updates))
    if t_tensor is None:
        t_tensor = constant_like(np.zeros(batch + tensor.shape, tensor.dtype))
    if t_updates is None:
        t_updates = constant_like(np.zeros(batch + updates.shape, updates.dtype))
    return _tensor_scatter(op.type, t_tensor, indices, t_updates,
                           len(batch) + op.attrs["batch_ndim"])


def _tensor_scatter_shape(shapes, attrs, declared):
    tensor, indices, updates = shapes
    nb = attr_int(attrs, "batch_ndim", 0, len(tensor))
    shape = tensor[nb:]
    if not indices or not 1 <= indices[-1] <= len(shape) \
            or updates != tensor[:nb] + indices[:-1] + shape[indices[-1]:]:
        raise ValueError(f"indices {indices} and updates {updates} do not fit tensor "
                         f"{tensor}")
    return (tensor,), 0


def _tensor_scatter_dtype(dtypes, attrs):
    tensor, indices, updates = dtypes
    if indices.kind not in "iu" or tensor != updates:
        raise ValueError(f"needs integer indices and updates of the tensor's dtype, got "
                         f"{[str(d) for d in dtypes]}")
    return (tensor,)


def _tensor_scatter_op(op_type, op_name, doc):
    """The op `op_name(tensor, indices, updates)`, declared once."""
    def op(tensor, indices, updates, name=None):
        t = tensor_input(op_name, tensor)
        i = _index_input(op_name, "indices", indices)
        u = tensor_input(op_name, updates)
        if u.dtype != t.dtype:
            raise TypeError(f"{op_name}: updates of dtype {u.dtype} for a tensor of dtype "
                            f"{t.dtype}; cast one with mt.cast")
        return _tensor_scatter(op_type, t, i, u, 0, name)
    op.__name__ = op.__qualname__ = op_name
    op.__doc__ = doc
    declare(op_type, _tensor_scatter_grad, _tensor_scatter_jvp,
            replay=lambda xs, a, o: _tensor_scatter(op_type, xs[0], xs[1], xs[2],
                                                    a["batch_ndim"]),
            arity=3, attrs_of=lambda op: {"batch_ndim": int(op.attrs["batch_ndim"])},
            shape=_tensor_scatter_shape, dtype=_tensor_scatter_dtype, smooth=True)
    return op


tensor_scatter_nd_update = _tensor_scatter_op(
    "TensorScatterUpdate", "tensor_scatter_nd_update",
    "A copy of `tensor` with the slices at the index tuples in the last axis of `indices` "
    "replaced by `updates` (of shape indices.shape[:-1] + tensor.shape[k:]); where a tuple "
    "repeats, the last of its slices is kept.")
tensor_scatter_nd_add = _tensor_scatter_op(
    "TensorScatterAdd", "tensor_scatter_nd_add",
    "A copy of `tensor` with `updates` added at the index tuples in the last axis of "
    "`indices` (repeated tuples add up).")


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Slices of `params` along `axis` at `indices`: the result's shape is
    params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:].

    It moves `axis` next to the batch axes and reads with gather_nd."""
    x = tensor_input("gather", params)
    i = _index_input("gather", "indices", indices)
    b = arguments.integer("gather", "batch_dims", batch_dims)
    if b < 0:
        b += i.ndim
    if not 0 <= b <= i.ndim:
        raise ValueError(f"gather: batch_dims={batch_dims} is out of range for indices of "
                         f"rank {i.ndim}")
    a = b if axis is None else arguments.one_axis("gather", axis, x.ndim)
    if a < b:
        raise ValueError(f"gather: axis {a} must not be less than batch_dims {b}")
    if x.shape[:b] != i.shape[:b]:
        raise ValueError(f"gather: with batch_dims={b}, params {x.shape} and indices "
                         f"{i.shape} must share their first {b} dims")
    _check_bounds("gather", i._value[..., None], x.shape[a:a + 1])  # before any op runs
    perm = list(range(b)) + [a] + [d for d in range(b, x.ndim) if d != a]
    moved = transpose(x, perm) if perm != sorted(perm) else x
    # i[..., None], not a reshape: a trace replays a reshape to the traced
    # shape, and the number of indices may change between calls (where(x > 0))
    coords = _with_batch_coordinates(i[..., None], b, i.ndim)
    g = _gather_nd(moved, coords, 0, op_name="gather")  # B + I + params between + after
    n_i, n_mid = i.ndim - b, a - b
    back = (list(range(b)) + [b + n_i + m for m in range(n_mid)]
            + [b + m for m in range(n_i)] + list(range(b + n_i + n_mid, g.ndim)))
    return transpose(g, back, name=name) if back != sorted(back) else g


def boolean_mask(tensor, mask, axis=None, name=None):
    """The entries (or slices along the axes after the mask's) of `tensor`
    where `mask` is true: the mask's axes become one axis of their count."""
    x = tensor_input("boolean_mask", tensor)
    m = tensor_input("boolean_mask", mask)
    if m.ndim == 0:
        raise ValueError("boolean_mask: mask cannot be a scalar")
    a = 0 if axis is None else arguments.integer("boolean_mask", "axis", axis)
    if a < 0:
        a += x.ndim
    if not 0 <= a <= x.ndim - m.ndim or x.shape[a:a + m.ndim] != m.shape:
        raise ValueError(f"boolean_mask: mask of shape {m.shape} does not match the dims "
                         f"of tensor of shape {x.shape} from axis {axis or 0}")
    flat = reshape(x, x.shape[:a] + (m.size,) + x.shape[a + m.ndim:])
    picked = where(reshape(m, (-1,)))  # (n, 1) positions in the flattened mask axes
    return gather(flat, picked[:, 0], axis=a, name=name)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None,
            name=None):
    """`on_value` where the new axis's position equals the index, else
    `off_value` (an index outside [0, depth) gives a row of off_value).
    float32 unless `dtype` or the values say otherwise. Not differentiable."""
    i = _index_input("one_hot", "indices", indices)
    depth = arguments.size("one_hot", "depth", depth)
    if dtype is not None:
        dtype = arguments.dtype("one_hot", dtype)
    on_value, off_value = (_hinted(v, dtype) for v in (on_value, off_value))
    given = [tensor_input("one_hot", v) for v in (on_value, off_value) if v is not None]
    for v in given:
        if dtype is not None and v.dtype != dtype:
            raise TypeError(f"one_hot: dtype {v.dtype} of on_value/off_value does not "
                            f"match dtype {dtype}")
        dtype = v.dtype
    dtype = np.dtype(np.float32) if dtype is None else dtype
    on = tensor_input("one_hot", np.ones((), dtype) if on_value is None else on_value)
    off = tensor_input("one_hot", np.zeros((), dtype) if off_value is None else off_value)
    if on.ndim or off.ndim:
        raise ValueError(f"one_hot: on_value and off_value must be scalars, got shapes "
                         f"{on.shape} and {off.shape}")
    a = -1 if axis is None else arguments.integer("one_hot", "axis", axis)
    if not -1 <= a <= i.ndim:
        raise ValueError(f"one_hot: axis {a} must be -1 or in [0, {i.ndim}] for indices "
                         f"of shape {i.shape}")
    return emit("OneHot", _one_hot_value(i._value, depth, on._value, off._value, a),
                (i, on, off), {"depth": depth, "axis": a}, name)


def _hinted(value, dtype):
    """TensorFlow's `dtype_hint`: a Python number (not a bool) takes `dtype`
    where it is exact there (`on_value=1.0` with `dtype=float64`); otherwise
    it keeps its own dtype (1.5 for an int32 one_hot: float32, then a TypeError)."""
    if dtype is None or type(value) not in (int, float, complex):
        return value
    try:
        return _values.convert_to_tensor(value, dtype)
    except (TypeError, ValueError):
        return value


def _one_hot_value(idx, depth, on, off, axis):
    hot = idx[..., None] == np.arange(depth)
    value = np.where(hot, on, off).astype(np.result_type(on, off))
    return value if axis == -1 else np.moveaxis(value, -1, axis)


def _one_hot_shape(shapes, attrs, declared):
    indices = shapes[0]
    depth = attr_int(attrs, "depth", 0, 1 << 40)
    axis = attr_int(attrs, "axis", -1, len(indices))
    if shapes[1] or shapes[2]:
        raise ValueError("on_value and off_value must be scalars")
    axis = len(indices) if axis == -1 else axis
    return (indices[:axis] + (depth,) + indices[axis:],), 0


def _one_hot_dtype(dtypes, attrs):
    if dtypes[0].kind not in "iu" or dtypes[1] != dtypes[2]:
        raise ValueError(f"needs integer indices and on/off values of one dtype, got "
                         f"{[str(d) for d in dtypes]}")
    return (dtypes[1],)


declare("OneHot", differentiable=False,
        replay=lambda xs, a, o: one_hot(xs[0], a["depth"], xs[1], xs[2], a["axis"]), arity=3,
        attrs_of=lambda op: {"depth": int(op.attrs["depth"]), "axis": int(op.attrs["axis"])},
        shape=_one_hot_shape, dtype=_one_hot_dtype)


def where(condition, x=None, y=None, name=None):
    """With x and y: elementwise x where condition, else y. With the condition
    alone: the coordinates of its true (non-zero) entries, one row each, in
    row-major order, as int64 (not differentiable)."""
    if x is not None or y is not None:
        if x is None or y is None:
            raise ValueError("where: x and y must both be given or both be None")
        return select(condition, x, y, name)
    c = tensor_input("where", condition)
    if c.ndim == 0:
        raise ValueError("where: the condition must have at least one dimension to "
                         "return coordinates (got a scalar)")
    return emit("Where", np.argwhere(c._value).astype(np.int64), (c,), None, name)


def same_shape_as_traced(op_name, out, output_shapes):
    """A replayed op whose output's shape depends on values (where, segment_sum)
    must give the shape it gave when traced: the ops after it in the trace were
    recorded for that shape (a reshape or broadcast replays to it), so another
    one would be wrong or fail far away. Say so here."""
    traced = output_shapes[0] if output_shapes else None
    if traced is not None and all(isinstance(n, int) for n in traced) \
            and tuple(out.shape) != tuple(traced):
        raise ValueError(f"{op_name}: in this traced function the result had shape "
                         f"{tuple(traced)}, now {out.shape}: a traced function keeps the "
                         "shapes its values gave when traced; call it without mt.function "
                         "or keep the number of selected entries fixed")
    return out


def _where_shape(shapes, attrs, declared):
    # (count, rank): the count of true entries is a value, so a saved graph
    # keeps the traced one (at most the condition's size), and the replay
    # refuses a condition with another count (same_shape_as_traced)
    condition, out = shapes[0], declared[0] if declared else None
    if not condition or out is None or len(out) != 2 or out[1] != len(condition) \
            or out[0] > math.prod(condition):
        raise ValueError(f"needs a declared output shape (count <= size, rank "
                         f"{len(condition)}) for a condition of shape {condition}, got {out}")
    return (tuple(out),), 0


declare("Where", differentiable=False,
        replay=lambda xs, a, o: same_shape_as_traced("where", where(xs[0]), o), arity=1,
        shape=_where_shape, dtype=lambda dtypes, attrs: (np.dtype(np.int64),))
