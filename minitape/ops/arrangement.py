"""Rearranging entries: split, tile, repeat, roll, reverse, meshgrid, rank.

None of them computes a new number, so most are written as indexing with a
constant index (x[..., idx, ...], recorded as StridedSlice), whose gradient
already adds each upstream gradient back to the entry it was read from:
repeat reads an entry several times, roll reads each once in a new order,
reverse reads backwards, split reads consecutive slices. The index depends
only on shapes and arguments, never on values, so traces replay it as is.
tile has its own op: its gradient sums the copies, reshaping them onto axes
of their own.
"""
import numpy as np

from .. import arguments
from ..core.registry import batch_ndim
from .broadcasting import broadcast_to, reduce_sum, reshape
from .operands import (attr_ints, constant_like, emit, first_input_dtype, tangent_batch,
                   tensor_input)
from .declaration import declare
from .shapes import getitem


def _along(x, axis, index):
    """x indexed along one axis: x[:, ..., index, ...]."""
    return getitem(x, (slice(None),) * axis + (index,))


def split(value, num_or_size_splits, axis=0, num=None, name=None):
    """A list of consecutive slices along `axis`: `num_or_size_splits` equal
    ones, or ones of the given sizes (one size may be -1: the rest)."""
    x = tensor_input("split", value)
    if x.ndim == 0:
        raise ValueError("split: cannot split a scalar (shape ())")
    a = arguments.one_axis("split", axis, x.ndim)
    n = x.shape[a]
    if isinstance(num_or_size_splits, (list, tuple)) or np.ndim(num_or_size_splits) == 1:
        sizes = list(arguments.integers("split", "size_splits", num_or_size_splits))
        if any(s < -1 for s in sizes) or sizes.count(-1) > 1:
            raise ValueError(f"split: size_splits {sizes} must be sizes >= 0, with at most "
                             "one -1")
        if -1 in sizes:
            rest = n - sum(s for s in sizes if s != -1)
            if rest < 0:
                raise ValueError(f"split: size_splits {sizes} add up to more than the "
                                 f"{n} entries of axis {a} of shape {x.shape}")
            sizes[sizes.index(-1)] = rest
        if sum(sizes) != n:
            raise ValueError(f"split: size_splits {sizes} must add up to {n}, the size of "
                             f"axis {a} of shape {x.shape}")
    else:
        count = arguments.integer("split", "num_or_size_splits", num_or_size_splits)
        if count < 1 or n % count:
            raise ValueError(f"split: {count} parts must be >= 1 and evenly divide axis "
                             f"{a} of shape {x.shape} (size {n})")
        sizes = [n // count] * count
    if num is not None and arguments.integer("split", "num", num) != len(sizes):
        raise ValueError(f"split: num={num} but there are {len(sizes)} parts")
    starts = np.cumsum([0] + sizes)
    return [_along(x, a, slice(int(s), int(s) + k)) for s, k in zip(starts, sizes)]


def tile(input, multiples, name=None):
    """`input` repeated `multiples[i]` times along each axis i (whole copies)."""
    x = tensor_input("tile", input)
    multiples = arguments.integers("tile", "multiples", multiples)
    if len(multiples) != x.ndim or any(m < 0 for m in multiples):
        raise ValueError(f"tile: multiples must be {x.ndim} counts >= 0 for a tensor of "
                         f"shape {x.shape}, got {list(multiples)}")
    return emit("Tile", np.tile(x._value, multiples) if x.ndim else x._value.copy(), (x,),
                {"multiples": tuple(multiples)}, name)


def _tile_grad(op, grad):
    """Give each copy its own axis: (m0 * d0, m1 * d1) -> (m0, d0, m1, d1);
    then sum over the copies' axes."""
    nb = batch_ndim(op, grad)
    pairs = tuple(v for m, d in zip(op.attrs["multiples"], op.inputs[0].shape)
                  for v in (m, d))
    g = reshape(grad, grad.shape[:nb] + pairs)
    return reduce_sum(g, [nb + 2 * i for i in range(op.inputs[0].ndim)])


def _tile_jvp(op, t):
    return tile(t, (1,) * len(tangent_batch(op, (t,))) + op.attrs["multiples"])


def _tile_shape(shapes, attrs, declared):
    multiples = attr_ints(attrs, "multiples", 0, 1 << 40, len(shapes[0]))
    return (tuple(n * m for n, m in zip(shapes[0], multiples)),), 0


declare("Tile", _tile_grad, _tile_jvp, replay=lambda xs, a, o: tile(xs[0], a["multiples"]),
        arity=1, attrs_of=lambda op: {"multiples": tuple(int(m) for m in op.attrs["multiples"])},
        shape=_tile_shape, dtype=first_input_dtype, smooth=True)


def repeat(input, repeats, axis=None, name=None):
    """Each entry (or slice along `axis`) `repeats` times in place; without
    an axis, the flattened input. `repeats` is one count or one per entry."""
    x = tensor_input("repeat", input)
    if axis is None:
        a, n = 0, x.size
    else:
        if x.ndim == 0:
            raise ValueError("repeat: a scalar has no axis; leave axis=None")
        a = arguments.one_axis("repeat", axis, x.ndim)
        n = x.shape[a]
    counts = [arguments.size("repeat", "repeats", c)
              for c in arguments.integers("repeat", "repeats", repeats)]
    if len(counts) not in (1, n):
        raise ValueError(f"repeat: repeats must be one count >= 0 or {n} of them for "
                         f"axis {axis} of shape {x.shape}, got {list(counts)}")
    if axis is None:
        x = reshape(x, (-1,))
    return _along(x, a, np.repeat(np.arange(n), counts))


def roll(input, shift, axis, name=None):
    """Entries moved `shift` places along `axis` (both may be lists of one
    length), those pushed off one end coming back at the other."""
    x = tensor_input("roll", input)
    shifts = arguments.integers("roll", "shift", shift)
    axes = arguments.integers("roll", "axis", axis)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift {list(shifts)} and axis {list(axes)} must have the "
                         "same length")
    total = {}
    for s, a in zip(shifts, axes):
        a = arguments.one_axis("roll", a, x.ndim)
        total[a] = total.get(a, 0) + s  # an axis named twice rolls by the sum
    for a, s in total.items():
        n = x.shape[a]
        if n and s % n:
            x = _along(x, a, (np.arange(n) - s) % n)
    return x


def reverse(tensor, axis, name=None):
    """The entries in reverse order along each axis in the list `axis`."""
    x = tensor_input("reverse", tensor)
    if np.ndim(axis) != 1:
        raise ValueError(f"reverse: axis must be a list of axes, got {axis!r}")
    axes = [arguments.one_axis("reverse", a, x.ndim)
            for a in arguments.integers("reverse", "axis", axis)]
    if len(set(axes)) != len(axes):
        raise ValueError(f"reverse: axis {list(axis)} names an axis twice")
    if not axes:
        return x
    backwards = slice(None, None, -1)
    return getitem(x, tuple(backwards if d in axes else slice(None) for d in range(x.ndim)))


def meshgrid(*args, **kwargs):
    """Coordinate grids from 1-D tensors: with indexing='xy' (the default)
    the first two output axes are swapped (rows follow the second argument)."""
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"meshgrid: unexpected keyword arguments {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [tensor_input("meshgrid", v) for v in args]
    if len({x.dtype for x in xs}) > 1:
        raise TypeError(f"meshgrid: all inputs must have one dtype, got "
                        f"{[str(x.dtype) for x in xs]}")
    xs = [reshape(x, (-1,)) for x in xs]
    shape = [x.shape[0] for x in xs]
    where = list(range(len(xs)))
    if indexing == "xy" and len(xs) > 1:
        shape[0], shape[1] = shape[1], shape[0]
        where[0], where[1] = 1, 0
    out = []
    for x, p in zip(xs, where):
        column = reshape(x, tuple(-1 if d == p else 1 for d in range(len(xs))))
        out.append(broadcast_to(column, shape))
    return out


def rank(input, name=None):
    """The number of axes, as an int32 scalar (a constant: it is known
    without looking at the values)."""
    return constant_like(np.array(tensor_input("rank", input).ndim, np.int32))
