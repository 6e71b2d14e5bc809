"""The pieces of a layer in `tf.nn`: bias_add, embedding_lookup and its adjoint,
unsorted_segment_sum.

bias_add is an op type of its own (BiasAdd), as in TensorFlow: value + bias
along the channel axis, whose gradient for the bias sums over every other axis
(TensorFlow's BiasAddGrad). embedding_lookup picks rows of a table: op type
GatherV2 along axis 0, whose gradient adds the upstream rows back into a table
of zeros (op type UnsortedSegmentSum: ids that repeat add up; TensorFlow's
`tf.math.unsorted_segment_sum` is that op, so it is here too). The two are each
other's gradient, so derivatives of any order stay in these two ops.
(TensorFlow hands back that gradient as IndexedSlices; minitape's is dense.)
"""
import numpy as np

from ..core.registry import batch_ndim
from .broadcasting import full_tangent, reduce_sum, reshape
from .clip import clip_by_norm
from .operands import attr_int, constant_like, emit, index_dtypes, one_axis, tangent_batch, tensor_input
from .declaration import declare
from .shapes import concat


# --- bias_add ----------------------------------------------------------------------

def _channel_axis(data_format):
    """-1 for TensorFlow's N...C formats (the default), 1 for NC... ones."""
    if data_format is None:
        return -1
    if not isinstance(data_format, str):
        raise TypeError(f"bias_add: data_format must be a string, got {data_format!r}")
    if data_format.startswith("NC"):
        return 1
    if data_format.startswith("N") and data_format.endswith("C"):
        return -1
    raise ValueError("bias_add: data_format must be of the form 'N...C' or 'NC...', "
                     f"got {data_format!r}")


def bias_add(value, bias, data_format=None, name=None):
    """value + bias, the 1-D bias added along the channel axis (the last one,
    or axis 1 for data_format 'NC...')."""
    channel = _channel_axis(data_format)
    x = tensor_input("bias_add", value)
    b = tensor_input("bias_add", bias)
    if x.dtype != b.dtype:
        raise TypeError(f"bias_add: value and bias have different dtypes, {x.dtype} and "
                        f"{b.dtype}")
    if b.ndim != 1:
        raise ValueError(f"bias_add: bias must be 1-D, got shape {b.shape}")
    if x.ndim < 2:
        raise ValueError(f"bias_add: value must be at least 2-D, got shape {x.shape}")
    axis = channel % x.ndim
    if x.shape[axis] != b.shape[0]:
        raise ValueError(f"bias_add: bias of shape {b.shape} does not match axis {axis} "
                         f"of value of shape {x.shape}")
    lined_up = b._value.reshape((-1,) + (1,) * (x.ndim - 1 - axis))
    return emit("BiasAdd", x._value + lined_up, (x, b), {"axis": axis}, name)


def _bias_lined_up(op, t):
    """A bias (or its tangent, with leading batch dims) reshaped to broadcast
    along the channel axis of the output."""
    axis, out = op.attrs["axis"], op.outputs[0]
    nb = t.ndim - 1
    return reshape(t, t.shape[:nb] + (1,) * axis + (t.shape[-1],) + (1,) * (out.ndim - 1 - axis))


def _bias_add_grad(op, grad):
    # d/dvalue = 1; d/dbias sums the upstream gradient over every axis but the
    # channel axis (kept: leading batch dims of a vectorised jacobian)
    nb = batch_ndim(op, grad)
    axis = op.attrs["axis"]
    others = [nb + i for i in range(op.outputs[0].ndim) if i != axis]
    return grad, reduce_sum(grad, others) if op.needs[1] else None


def _bias_add_jvp(op, t_value, t_bias):
    # the value's tangent plus the bias's, lined up along the channel axis
    batch = tangent_batch(op, (t_value, t_bias))
    if t_bias is None:
        return t_value
    lined = _bias_lined_up(op, t_bias)
    return full_tangent(lined if t_value is None else t_value + lined,
                        batch + op.outputs[0].shape)


def _bias_add_shape(shapes, attrs, declared):
    value, bias = shapes
    axis = one_axis(attrs, value)
    if len(value) < 2 or bias != (value[axis],):
        raise ValueError(f"bias of shape {bias} does not match axis {axis} of {value}")
    return (value,), 0


declare("BiasAdd", _bias_add_grad, _bias_add_jvp,
        replay=lambda xs, attrs, out_shapes: bias_add(
    xs[0], xs[1], data_format="NCHW" if attrs["axis"] == 1 and xs[0].ndim > 2 else None),
        arity=2, attrs_of=lambda op: {"axis": int(op.attrs["axis"])}, shape=_bias_add_shape,
        smooth=True)


# --- gathering rows and adding them back -------------------------------------------

def _ids_input(op_name, ids, rows):
    ids = tensor_input(op_name, ids)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{op_name}: ids must be int32 or int64, got dtype {ids.dtype}")
    bad = (ids._value < 0) | (ids._value >= rows)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{op_name}: ids{list(where)} = {ids._value[where]} is not in "
                         f"[0, {rows})")
    return ids


def _gather(params, ids, axis, name=None):
    """params' entries at `ids` along `axis` (TensorFlow's GatherV2)."""
    value = np.take(params._value, ids._value, axis=axis)
    return emit("GatherV2", value, (params, ids), {"axis": axis}, name)


def _gather_grad(op, grad):
    # d/dparams adds each upstream row back at its id (repeated ids add up);
    # the ids are integers: no gradient
    params, ids = op.inputs
    nb = batch_ndim(op, grad)
    axis = op.attrs["axis"]
    return _scatter_add(grad, ids, nb + axis, params.shape[axis]), None


def _gather_jvp(op, t_params, t_ids):
    if t_params is None:  # the ids are integers: only the table moves
        return None
    nb = t_params.ndim - op.inputs[0].ndim
    return _gather(t_params, op.inputs[1], nb + op.attrs["axis"])


def _gather_shape(shapes, attrs, declared):
    params, ids = shapes
    axis = one_axis(attrs, params)
    return (params[:axis] + ids + params[axis + 1:],), 0


declare("GatherV2", _gather_grad, _gather_jvp,
        replay=lambda xs, attrs, out_shapes: _gather(xs[0], xs[1], attrs["axis"]), arity=2,
        attrs_of=lambda op: {"axis": int(op.attrs["axis"])}, shape=_gather_shape,
        dtype=index_dtypes(1), smooth=True)


def _scatter_add(updates, ids, axis, rows, name=None):
    """Zeros with `rows` entries along `axis`, plus each slice of `updates` at
    its id, where the ids' shape is that of `updates` from `axis` on; slices
    whose id is negative are dropped (TensorFlow's UnsortedSegmentSum)."""
    u, k = updates._value, ids._value
    lead, trail = u.shape[:axis], u.shape[axis + k.ndim:]
    flat = u.reshape((int(np.prod(lead, dtype=np.int64)), k.size, -1))
    kept = k.reshape(-1) >= 0
    out = np.zeros((flat.shape[0], rows, flat.shape[2]), u.dtype)
    np.add.at(out, (slice(None), k.reshape(-1)[kept]), flat[:, kept])
    return emit("UnsortedSegmentSum", out.reshape(lead + (rows,) + trail), (updates, ids),
                {"axis": axis, "num_segments": rows}, name)


def _scatter_add_grad(op, grad):
    # d/dupdates picks the upstream gradient's row at each id (a gather), and
    # 0 for a dropped (negative) id, as TensorFlow's _GatherDropNegatives
    updates, ids = op.inputs
    axis = batch_ndim(op, grad) + op.attrs["axis"]
    k = ids._value
    if not (k < 0).any():
        return _gather(grad, ids, axis), None
    kept = (k >= 0).reshape(k.shape + (1,) * (updates.ndim - op.attrs["axis"] - k.ndim))
    return (_gather(grad, constant_like(np.maximum(k, 0)), axis)
            * constant_like(kept.astype(grad.dtype)), None)


def _scatter_add_jvp(op, t_updates, t_ids):
    if t_updates is None:
        return None
    nb = t_updates.ndim - op.inputs[0].ndim
    return _scatter_add(t_updates, op.inputs[1], nb + op.attrs["axis"],
                        op.attrs["num_segments"])


def _scatter_add_shape(shapes, attrs, declared):
    updates, ids = shapes
    axis = attr_int(attrs, "axis", 0, len(updates) - len(ids))
    rows = attr_int(attrs, "num_segments", 0, 1 << 40)
    if updates[axis:axis + len(ids)] != ids:
        raise ValueError(f"ids of shape {ids} do not match updates of shape {updates} "
                         f"from axis {axis}")
    return (updates[:axis] + (rows,) + updates[axis + len(ids):],), 0


declare("UnsortedSegmentSum", _scatter_add_grad, _scatter_add_jvp,
        replay=lambda xs, attrs, out_shapes: _scatter_add(
            xs[0], xs[1], attrs["axis"], attrs["num_segments"]), arity=2,
        attrs_of=lambda op: {"axis": int(op.attrs["axis"]),
                             "num_segments": int(op.attrs["num_segments"])},
        shape=_scatter_add_shape, dtype=index_dtypes(1), smooth=True)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Row k of the result is the sum of the slices of `data` whose id in
    `segment_ids` is k (a shape `data` starts with; any order; a negative id
    drops its slice): shape (num_segments,) + data.shape[segment_ids.ndim:].
    The gradient of each slice is the upstream gradient of its segment (0 if
    dropped); the ids get none."""
    op_name = "unsorted_segment_sum"
    x = tensor_input(op_name, data)
    ids = tensor_input(op_name, segment_ids)
    if x.dtype.kind == "b":
        raise TypeError(f"{op_name}: expected numbers, got dtype bool (cast it first)")
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{op_name}: segment_ids must be integers, got dtype {ids.dtype}")
    if x.shape[:ids.ndim] != ids.shape:
        raise ValueError(f"{op_name}: data.shape = {x.shape} does not start with "
                         f"segment_ids.shape = {ids.shape}")
    n = tensor_input(op_name, num_segments)
    if n.ndim != 0 or n.dtype.kind not in "iu":
        raise ValueError(f"{op_name}: num_segments must be one integer, got shape {n.shape} "
                         f"and dtype {n.dtype}")
    rows = int(n)
    if rows < 0:
        raise ValueError(f"{op_name}: num_segments = {rows} must not be negative")
    too_big = ids._value >= rows
    if too_big.any():
        where = tuple(int(i) for i in np.argwhere(too_big)[0])
        raise ValueError(f"{op_name}: segment_ids{list(where)} = {ids._value[where]} is not "
                         f"in [0, {rows}) (num_segments = {rows})")
    return _scatter_add(x, ids, 0, rows, name)


# --- embedding_lookup ------------------------------------------------------------------

def embedding_lookup(params, ids, max_norm=None, name=None):
    """The rows `params[ids]`: result shape ids.shape + params.shape[1:].

    `params` may be a list of shards, split as TensorFlow's "div" strategy
    splits a table (the first N % p shards hold one row more): they are
    concatenated. With `max_norm`, each looked-up embedding is clipped to that
    L2 norm (clip_by_norm over its own axes)."""
    if max_norm is not None and np.ndim(max_norm) != 0:
        raise ValueError(f"embedding_lookup: max_norm must be a scalar, got shape "
                         f"{np.shape(max_norm)}")
    if isinstance(params, (list, tuple)):
        if not params:
            raise ValueError("embedding_lookup: params is an empty list")
        shards = [tensor_input("embedding_lookup", p) for p in params]
        if any(s.ndim == 0 for s in shards):
            raise ValueError("embedding_lookup: params must be at least 1-D, got a scalar")
        sizes = [s.shape[0] for s in shards]
        total, p = sum(sizes), len(shards)
        expected = [total // p + (1 if i < total % p else 0) for i in range(p)]
        if sizes != expected:
            raise ValueError(f"embedding_lookup: shards with {sizes} rows are not a 'div' "
                             f"split of {total} rows (expected {expected})")
        ids = _ids_input("embedding_lookup", ids, total)  # checked before concat runs
        table = shards[0] if p == 1 else concat(shards, axis=0)
    else:
        table = tensor_input("embedding_lookup", params)
        if table.ndim == 0:
            raise ValueError("embedding_lookup: params must be at least 1-D, got a scalar")
        ids = _ids_input("embedding_lookup", ids, table.shape[0])
    out = _gather(table, ids, 0, name=None if max_norm is not None else name)
    if max_norm is None:
        return out
    return clip_by_norm(out, max_norm, axes=list(range(ids.ndim, out.ndim)), name=name)
