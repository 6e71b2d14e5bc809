"""Sorting: argsort, sort and top_k.

One op finds the order (ArgSort, not differentiable: its output is indices);
the sorted values are then gathered at those indices. So the gradient of a
sorted value goes back to the entry it came from, through gather's rule, and
every entry gets exactly the gradient of the place it was sorted to.

Ties are broken as TensorFlow does: the entry with the lower index comes
first, ascending or descending (a stable sort). So the gradient of tied
values is not split between them (as reduce_max's is): with x = [3, 1, 3],
sort(x)[1] moves with x[0] and sort(x)[2] with x[2]. NaNs sort last when
ascending; TensorFlow's order of NaNs is not specified, and can differ.
"""
import collections
import math

import numpy as np

from .. import arguments
from .operands import attr_bool, emit, one_axis, tensor_input
from .declaration import declare
from .elementwise import cast
from .indexing import gather
from .shapes import transpose

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def _order(value, axis, descending):
    """Indices that sort `value` along `axis`, lower index first among ties."""
    if not descending:
        return np.argsort(value, axis=axis, kind="stable")
    # a stable ascending sort of the flipped array, flipped back: ties keep
    # their order, and nothing is negated (no overflow for the lowest int)
    backwards = np.argsort(np.flip(value, axis), axis=axis, kind="stable")
    return np.flip(value.shape[axis] - 1 - backwards, axis)


def _sortable(op_name, values, axis):
    x = tensor_input(op_name, values)
    if x.ndim == 0:
        raise ValueError(f"{op_name}: needs a tensor of rank >= 1, got a scalar")
    if x.dtype.kind not in "iuf":
        raise TypeError(f"{op_name}: cannot sort dtype {x.dtype}")
    return x, arguments.one_axis(op_name, axis, x.ndim)


def _direction(op_name, direction):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"{op_name}: direction must be 'ASCENDING' or 'DESCENDING', got "
                         f"{direction!r}")
    return direction == "DESCENDING"


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The indices that sort `values` along `axis` (int32); always stable."""
    x, a = _sortable("argsort", values, axis)
    descending = _direction("argsort", direction)
    return emit("ArgSort", _order(x._value, a, descending).astype(np.int32), (x,),
                {"axis": a, "descending": descending}, name)


declare("ArgSort", differentiable=False,
        replay=lambda xs, a, o: argsort(
    xs[0], a["axis"], "DESCENDING" if a["descending"] else "ASCENDING"),
        arity=1,
        attrs_of=lambda op: {"axis": int(op.attrs["axis"]),
                             "descending": bool(op.attrs["descending"])},
        shape=lambda shapes, a, declared: _sort_shape(shapes[0], one_axis(a, shapes[0]),
                                                  attr_bool(a, "descending")))


def _sort_shape(shape, axis, descending):
    """The input's shape; a stable sort does about n log2 n comparisons per line."""
    n = shape[axis]
    return (tuple(shape),), math.prod(shape) * max(1, n.bit_length())


def _take_along(x, indices, axis):
    """x's entries at `indices` along `axis` (NumPy's take_along_axis), with
    gather over the other axes as batch dims: axis moved last and back."""
    last = x.ndim - 1
    perm = [d for d in range(x.ndim) if d != axis] + [axis]
    if axis != last:
        x, indices = transpose(x, perm), transpose(indices, perm)
    out = gather(x, indices, axis=last, batch_dims=last)
    return transpose(out, np.argsort(perm)) if axis != last else out


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """`values` sorted along `axis`; each sorted entry has the gradient of
    the entry it came from."""
    x, a = _sortable("sort", values, axis)
    order = argsort(x, a, direction)
    return _take_along(x, order, a)


def top_k(input, k=1, sorted=True, index_type=np.int32, name=None):
    """The k largest entries along the last axis, largest first, and their
    indices (the lower index first among ties), as a namedtuple
    (values, indices). The values are always sorted."""
    x, a = _sortable("top_k", input, -1)
    k = arguments.integer("top_k", "k", k)
    index_type = arguments.dtype("top_k", index_type, kinds="iu")
    if not 0 <= k <= x.shape[-1]:
        raise ValueError(f"top_k: k={k} must be in [0, {x.shape[-1]}], the length of the "
                         f"last axis of shape {x.shape}")
    order = argsort(x, a, "DESCENDING")
    indices = order[..., :k]
    values = _take_along(x, indices, a)
    return TopKV2(values, cast(indices, index_type))
