"""Running sums and products along an axis (cumsum, cumprod, each with
`exclusive` and `reverse`), and sums, maxima, minima and means over segments
of rows (segment_sum, segment_max, segment_min, segment_mean).

cumsum is linear: y_j = sum of the x_i that come before j (in the scan's
direction), so x_i's gradient is the sum of the upstream gradients of the
y_j that come after i: a cumsum of the gradient in the other direction.

cumprod's derivative dy_j/dx_i is the product of the other entries in y_j.
TensorFlow computes it as cumsum(y * grad) / x, which is 0 wherever x_i == 0
(its rule uses div_no_nan): at x = [2, 0, 3] it gives [1, 0, 0] for the
gradient of sum(cumprod(x)), whose true value is [1, 8, 0]. minitape
computes the products of the others directly, as reduce_prod does, so it
returns the true derivative there too (see docs/differences.md).
The price: an n x n block per row (n the length of the scanned axis), fine
for the lengths a course uses (n = 1000: 8 MB per row in float64), too much
for very long axes, where the O(n) division would be needed.
"""
import numpy as np

from .. import arguments
from ..core.registry import batch_ndim
from .broadcasting import reduce_sum, reshape
from .operands import (attr_bool, constant_like, emit, first_input_dtype, one_axis, tangent_batch,
                   tensor_input, unchanged_shape)
from .declaration import declare
from .elementwise import select
from .indexing import _scatter_nd, gather, same_shape_as_traced
from .shapes import transpose


def _scan_value(numpy_fn, value, axis, exclusive, reverse, identity):
    if reverse:
        value = np.flip(value, axis)
    out = numpy_fn(value, axis=axis, dtype=value.dtype)
    if exclusive and out.shape[axis]:  # shift by one: each entry leaves itself out
        out = np.roll(out, 1, axis=axis)
        out[(slice(None),) * axis + (0,)] = identity
    return np.flip(out, axis) if reverse else out


def _scan(op_type, op_name, numpy_fn, identity, x, axis, exclusive, reverse, name):
    x = tensor_input(op_name, x)
    if x.dtype.kind == "b":
        raise TypeError(f"{op_name}: expected numbers, got dtype bool (cast it first)")
    if x.ndim == 0:
        raise ValueError(f"{op_name}: needs a tensor of rank >= 1, got a scalar")
    a = arguments.one_axis(op_name, axis, x.ndim)
    exclusive, reverse = bool(exclusive), bool(reverse)
    value = _scan_value(numpy_fn, x._value, a, exclusive, reverse, identity)
    return emit(op_type, value, (x,),
                {"axis": a, "exclusive": exclusive, "reverse": reverse}, name)


def _scan_traits(fn):
    """How a scan is replayed and its shape checked (its declaration's traits)."""
    return dict(replay=lambda xs, a, o: fn(xs[0], a["axis"], a["exclusive"], a["reverse"]),
                attrs_of=lambda op: {k: op.attrs[k] for k in ("axis", "exclusive", "reverse")},
                shape=_scan_shape)


def _scan_shape(shapes, attrs, declared):
    one_axis(attrs, shapes[0])
    attr_bool(attrs, "exclusive")
    attr_bool(attrs, "reverse")
    return unchanged_shape(shapes, attrs, declared)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running sums along `axis`; `exclusive` leaves each entry out of its own
    sum (starting from 0), `reverse` runs from the end."""
    return _scan("Cumsum", "cumsum", np.cumsum, 0, x, axis, exclusive, reverse, name)


def _cumsum_grad(op, grad):
    """A cumsum of the gradient in the other direction."""
    a = op.attrs
    return cumsum(grad, batch_ndim(op, grad) + a["axis"], a["exclusive"], not a["reverse"])


def _cumsum_jvp(op, t):
    a = op.attrs
    return cumsum(t, len(tangent_batch(op, (t,))) + a["axis"], a["exclusive"], a["reverse"])


declare("Cumsum", _cumsum_grad, _cumsum_jvp, **_scan_traits(cumsum), smooth=True)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running products along `axis` (`exclusive`: starting from 1)."""
    return _scan("Cumprod", "cumprod", np.cumprod, 1, x, axis, exclusive, reverse, name)


def _axis_last(ndim, axis, lead):
    """The perm that moves `axis` (counted after `lead` leading axes) last."""
    return (list(range(lead)) + [lead + d for d in range(ndim) if d != axis]
            + [lead + axis])


def _cumprod_partials(op):
    """P[..., i, j] = dy_j / dx_i along the scanned axis (moved last): the
    product of the entries of y_j other than x_i, 0 where x_i is not in y_j.

    Row i is the cumprod of a copy of x whose entry i is replaced by 1 (an
    n x n block, as reduce_prod's rule builds it), masked where x_i enters
    y_j: i <= j (i < j exclusive), or i >= j (i > j) for a reverse scan."""
    x, a = op.inputs[0], op.attrs
    xt = transpose(x, _axis_last(x.ndim, a["axis"], 0))
    n = xt.shape[-1]
    rows = reshape(xt, xt.shape[:-1] + (1, n))
    eye = constant_like(np.eye(n, dtype=bool))
    copies = select(eye, np.ones((), x.dtype), rows)
    products = cumprod(copies, -1, a["exclusive"], a["reverse"])
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    enters = {(False, False): i <= j, (True, False): i < j,
              (False, True): i >= j, (True, True): i > j}[a["exclusive"], a["reverse"]]
    return select(constant_like(enters), products, np.zeros((), x.dtype))


def _cumprod_grad(op, grad):
    """dx_i = sum_j P[i, j] grad_j (exact where x has zeros; see the top)."""
    nb, x, a = batch_ndim(op, grad), op.inputs[0], op.attrs["axis"]
    perm = _axis_last(x.ndim, a, nb)
    g = transpose(grad, perm)
    out = reduce_sum(_cumprod_partials(op) * reshape(g, g.shape[:-1] + (1, g.shape[-1])),
                     axis=-1)
    return transpose(out, np.argsort(perm))


def _cumprod_jvp(op, t):
    """dy_j = sum_i P[i, j] t_i."""
    nb, x, a = len(tangent_batch(op, (t,))), op.inputs[0], op.attrs["axis"]
    perm = _axis_last(x.ndim, a, nb)
    tt = transpose(t, perm)
    out = reduce_sum(_cumprod_partials(op) * reshape(tt, tt.shape + (1,)), axis=-2)
    return transpose(out, np.argsort(perm))


declare("Cumprod", _cumprod_grad, _cumprod_jvp, **_scan_traits(cumprod))


def segment_sum(data, segment_ids, name=None):
    """Row k of the result is the sum of the rows of `data` whose segment id
    is k; the ids are sorted and non-negative, and ids that no row has give
    rows of zeros. Only `data` gets a gradient: row i's is the upstream
    gradient of its segment."""
    x = tensor_input("segment_sum", data)
    if x.dtype.kind == "b":
        raise TypeError("segment_sum: expected numbers, got dtype bool (cast it first)")
    x, ids, rows = _segment_inputs("segment_sum", x, segment_ids, "iufc")
    out = np.zeros((rows,) + x.shape[1:], x.dtype)
    np.add.at(out, ids._value, x._value)
    return emit("SegmentSum", out, (x, ids), None, name)


def _segment_sum_grad(op, grad):
    return gather(grad, op.inputs[1], axis=batch_ndim(op, grad)), None


def _segment_sum_jvp(op, t, t_ids):
    if t is None:
        return None
    ids = op.inputs[1]
    return _scatter_nd(reshape(ids, ids.shape + (1,)), t, op.outputs[0].shape,
                       len(tangent_batch(op, (t, None))))


def _segment_sum_shape(shapes, attrs, declared):
    # the number of segments is a value (the last id + 1): a saved graph keeps
    # the traced one, and the replay refuses ids that would give another
    data, ids = shapes
    out = declared[0] if declared else None
    if out is None or len(ids) != 1 or not data or ids[0] != data[0] \
            or tuple(out[1:]) != tuple(data[1:]):
        raise ValueError(f"needs data (n, ...), ids (n,) and a declared output shape "
                         f"(segments, ...), got {shapes} and {out}")
    return (tuple(out),), 0


def _segment_replay(op_name, op):
    """How a traced graph runs a segment op again: the number of segments (the
    last id + 1) must be the traced one, checked before anything is allocated
    (a saved model's edited id cannot ask for a huge result)."""
    def run(xs, a, o):
        ids = xs[1]._value
        rows = o[0][0] if o and o[0] is not None and isinstance(o[0][0], int) else None
        if rows is not None and ids.size and ids.dtype.kind in "iu" and ids[-1] + 1 != rows:
            raise ValueError(f"{op_name}: in this traced function there were {rows} "
                             f"segments, now the last id is {ids[-1]}: a traced function "
                             "keeps the shapes its values gave when traced")
        return same_shape_as_traced(op_name, op(xs[0], xs[1]), o)
    return run


declare("SegmentSum", _segment_sum_grad, _segment_sum_jvp,
        replay=_segment_replay("segment_sum", segment_sum), arity=2, shape=_segment_sum_shape,
        dtype=first_input_dtype, smooth=True)


# --- segment_max, segment_min, segment_mean ----------------------------------------------
# TensorFlow's rules (math_grad.py): a segment's max or min sends its upstream
# gradient to the rows that reach it, shared evenly among ties; its mean sends
# 1 / (its number of rows) of it to each of them. Both are the upstream
# gradient gathered at each row's id times a constant weight per entry, so
# each JVP is the tangent times the weight, summed over each segment, and
# derivatives of any order stay linear in those two steps. A segment no row
# has gives 0, as in TensorFlow.

def _segment_inputs(op_name, data, segment_ids, kinds):
    x = tensor_input(op_name, data)
    ids = tensor_input(op_name, segment_ids)
    if x.dtype.kind not in kinds:
        if x.dtype.kind in "iu" and "f" in kinds:
            raise TypeError(f"{op_name}: expected floating-point data, got dtype {x.dtype}; "
                            "cast it with mt.cast (an integer mean would be truncated)")
        raise TypeError(f"{op_name}: not defined for data of dtype {x.dtype}")
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{op_name}: segment_ids must be integers, got dtype {ids.dtype}")
    if ids.ndim != 1 or x.ndim == 0 or ids.shape[0] != x.shape[0]:
        raise ValueError(f"{op_name}: segment_ids must be a vector as long as the first "
                         f"dim of data; got shapes {ids.shape} and {x.shape}")
    v = ids._value
    if v.size and (v[0] < 0 or (np.diff(v) < 0).any()):
        raise ValueError(f"{op_name}: segment_ids must be sorted and non-negative, got "
                         f"{arguments._show(v)}")
    return x, ids, int(v[-1]) + 1 if v.size else 0


def _segment_weights(op):
    """Each row's constant share of its segment's upstream gradient, shaped to
    broadcast against the rows (data's shape for max and min, (n, 1, ...) for
    the mean)."""
    x, ids = op.inputs
    v, y, k = x._value, op.outputs[0]._value, ids._value
    if op.type == "SegmentMean":
        count = np.bincount(k, minlength=y.shape[0])[k] if k.size else np.ones(0)
        share = (1 / count).reshape((-1,) + (1,) * (v.ndim - 1))
    else:
        picked = v == y[k]
        ties = np.zeros(y.shape)
        np.add.at(ties, k, picked)
        share = picked / np.maximum(ties[k], 1)
    return constant_like(share.astype(v.dtype))


def _segment_gradient(op, grad):
    nb = batch_ndim(op, grad)
    return gather(grad, op.inputs[1], axis=nb) * _segment_weights(op), None


def _segment_jvp(op, t, t_ids):
    if t is None:
        return None
    ids = op.inputs[1]
    return _scatter_nd(reshape(ids, ids.shape + (1,)), t * _segment_weights(op),
                       op.outputs[0].shape, len(tangent_batch(op, (t, None))))


def _segment_op(op_type, op_name, reduce, kinds, doc):
    """The op `op_name(data, segment_ids)`, declared with TensorFlow's rules."""
    def op(data, segment_ids, name=None):
        x, ids, rows = _segment_inputs(op_name, data, segment_ids, kinds)
        v, k = x._value, ids._value
        out = np.zeros((rows,) + v.shape[1:], v.dtype)
        if v.size:
            starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
            with np.errstate(all="ignore"):
                out[k[starts]] = reduce(v, starts)
        return emit(op_type, out, (x, ids), None, name)
    op.__name__ = op.__qualname__ = op_name
    op.__doc__ = doc

    declare(op_type, _segment_gradient, _segment_jvp, replay=_segment_replay(op_name, op), arity=2,
            shape=_segment_sum_shape, dtype=first_input_dtype, smooth=True)
    return op


def _mean(v, starts):
    counts = np.diff(np.r_[starts, len(v)]).reshape((-1,) + (1,) * (v.ndim - 1))
    return np.add.reduceat(v, starts, axis=0) / counts


segment_max = _segment_op(
    "SegmentMax", "segment_max", lambda v, starts: np.maximum.reduceat(v, starts, axis=0),
    "iuf", "Row k is the largest of the rows of `data` whose (sorted, non-negative) "
    "segment id is k; 0 where no row has id k. Tied rows share the gradient evenly.")
segment_min = _segment_op(
    "SegmentMin", "segment_min", lambda v, starts: np.minimum.reduceat(v, starts, axis=0),
    "iuf", "Row k is the smallest of the rows of `data` whose (sorted, non-negative) "
    "segment id is k; 0 where no row has id k. Tied rows share the gradient evenly.")
segment_mean = _segment_op(
    "SegmentMean", "segment_mean", _mean, "fc",
    "Row k is the mean of the rows of `data` whose (sorted, non-negative) segment id is "
    "k; 0 where no row has id k.")
