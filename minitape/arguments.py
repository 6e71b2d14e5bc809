"""Checking arguments before anything changes: sizes, shapes, axes and dtypes,
and numbers that must convert to a dtype without losing their value.

Every op checks these before it computes or records anything, so a wrong kind
of argument (a float where a size goes, a repeated axis, `None` for a dtype)
raises a TypeError or ValueError that names the op and the value, and no tape
ever holds half of a failed op. An integer may be given as a Python int, a
NumPy integer or a 0-d integer tensor (`mt.zeros([n, 3])` with `n` a tensor
works, as in TensorFlow); bools, floats and strings are refused even when
NumPy would quietly accept or truncate them.

This module sits at the bottom (it imports nothing from minitape): tensors are
read through `np.asarray`, which they support.
"""
import math
import numbers
import warnings

import numpy as np


def _show(value):
    text = np.array2string(value, threshold=8) if isinstance(value, np.ndarray) \
        else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class Text:
    """Text made only when it is shown: `what` an error message names, written
    by `make()` when an f-string shows it. A check that passes (an assignment,
    every step of a training loop) never formats a dtype or a shape."""

    __slots__ = ("make",)

    def __init__(self, make):
        self.make = make

    def __str__(self):
        return self.make()


def integer(op_name, what, value):
    """`value` as a Python int, or a TypeError naming the op and the argument."""
    if type(value) is int:  # the common case first: ops check their arguments on every call
        return value
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{op_name}: {what} must be an integer, got the bool {value!r}")
    if isinstance(value, numbers.Integral):
        return int(value)
    if hasattr(value, "__array__") and not isinstance(value, (str, bytes)):
        array = np.asarray(value)
        if array.ndim == 0 and array.dtype.kind in "iu":
            return int(array)
    raise TypeError(f"{op_name}: {what} must be an integer, got "
                    f"{type(value).__name__} {_show(value)}")


def size(op_name, what, value):
    """A non-negative integer (a count or a dimension)."""
    n = integer(op_name, what, value)
    if n < 0:
        raise ValueError(f"{op_name}: {what} must be >= 0, got {n}")
    if n >= 2**63:
        raise ValueError(f"{op_name}: {what} {n} is larger than any array can hold")
    return n


def integers(op_name, what, value):
    """A list-like argument (perm, a shape) as a tuple of ints, any sign."""
    if type(value) in (tuple, list) and all(type(d) is int for d in value):
        return tuple(value)  # the common case, without building messages
    return tuple(integer(op_name, f"{what} entry {i}", d)
                 for i, d in enumerate(_entries(op_name, what, value)))


def _entries(op_name, what, value):
    """The entries of a list-like argument (a list, tuple, 1-d array or tensor,
    or a single integer, which means a list of one)."""
    if value is None or isinstance(value, (str, bytes, dict, set)):
        raise TypeError(f"{op_name}: {what} must be a list of integers, got "
                        f"{type(value).__name__} {_show(value)}")
    if isinstance(value, (list, tuple)):
        return list(value)
    if hasattr(value, "__array__"):
        array = np.asarray(value)
        if array.ndim > 1:
            raise ValueError(f"{op_name}: {what} must be a list (rank 1), got shape "
                             f"{array.shape}")
        if array.dtype.kind not in "iu":
            raise TypeError(f"{op_name}: {what} must hold integers, got dtype "
                            f"{array.dtype}: {_show(array.tolist())}")
        return array.reshape(-1).tolist()
    return [value]


def shape(op_name, value, what="shape", allow_unknown=False):
    """A shape as a tuple of ints. With `allow_unknown` (reshape) one entry may
    be -1, "whatever makes the sizes match"; otherwise entries are >= 0."""
    dims = integers(op_name, what, value)
    lowest = -1 if allow_unknown else 0
    if not dims or (min(dims) >= 0 and max(dims) < 2**21 and len(dims) <= 3):
        return dims  # non-negative, and fewer than 2**63 elements: nothing to check
    if len(dims) > 64:  # NumPy's limit (TensorFlow's arrays convert to NumPy's)
        raise ValueError(f"{op_name}: {what} has {len(dims)} dimensions; NumPy arrays "
                         "can have at most 64 dimensions")
    for d in dims:
        if d < lowest:
            raise ValueError(f"{op_name}: {what} {list(dims)} has the negative "
                             f"dimension {d}" + (" (only -1 may stand for an unknown "
                                                  "dimension)" if allow_unknown else ""))
    if math.prod(d for d in dims if d > 0) >= 2**63:
        raise ValueError(f"{op_name}: {what} {list(dims)} has more elements than "
                         "any array can hold")
    if allow_unknown and dims.count(-1) > 1:
        raise ValueError(f"{op_name}: {what} {list(dims)} has more than one unknown "
                         "dimension (-1)")
    return dims


def axes(op_name, axis, ndim):
    """`axis` (None for all, an int or a list of ints, maybe negative) as a sorted
    tuple of distinct axes in range(ndim). A scalar accepts axis 0 and -1."""
    if axis is None:
        return tuple(range(ndim))
    if type(axis) is int and -ndim <= axis < ndim:
        return (axis % ndim,)  # the common case
    found = []
    for i, a in enumerate(_entries(op_name, "axis", axis)):
        a = integer(op_name, "axis", a)
        if not -ndim <= a < ndim and not (ndim == 0 and a in (0, -1)):
            raise ValueError(f"{op_name}: axis {a} is out of range for a tensor of "
                             f"rank {ndim}")
        a = a % ndim if ndim else 0
        if a in found:
            raise ValueError(f"{op_name}: axis {_show(axis)} names axis {a} twice")
        found.append(a)
    return tuple(sorted(found)) if ndim else ()


def one_axis(op_name, axis, ndim, what="axis"):
    """A single axis in range(ndim) (negative counts from the end)."""
    a = integer(op_name, what, axis)
    if not -ndim <= a < ndim:
        raise ValueError(f"{op_name}: {what} {a} is out of range for a tensor of rank "
                         f"{ndim}")
    return a % ndim


def dtype(op_name, value, kinds="biufc"):
    """A NumPy dtype of one of `kinds` ('b' bool, 'i'/'u' integers, 'f' floats,
    'c' complex; numbers and bools by default), or a TypeError."""
    if value is None or (hasattr(value, "__array__") and not isinstance(value, type)):
        # (an array or tensor: np.dtype(t) would quietly take t.dtype)
        raise TypeError(f"{op_name}: dtype must be a dtype such as mt.float32, got "
                        f"{type(value).__name__} {_show(value)}")
    if isinstance(value, np.dtype):
        result = value  # mt.float32 and every tensor's .dtype: the common case
    elif isinstance(value, type) and issubclass(value, np.generic):
        result = np.dtype(value)  # np.float32
    else:
        try:
            with warnings.catch_warnings():  # old aliases ('a') work but warn
                warnings.simplefilter("ignore", DeprecationWarning)
                result = np.dtype(value)
        except TypeError:
            raise TypeError(f"{op_name}: {_show(value)} is not a dtype") from None
    if result.kind not in kinds:
        names = {"b": "bool", "i": "integer", "u": "unsigned", "f": "floating-point",
                 "c": "complex", "U": "string", "S": "bytes"}
        raise TypeError(f"{op_name}: dtype {_show(value)} ({result}) is not allowed; "
                        f"expected a {'/'.join(names[k] for k in kinds)} dtype")
    return result


def _limits(dtype):
    return (0, 1) if dtype.kind == "b" else (int(np.iinfo(dtype).min),
                                             int(np.iinfo(dtype).max))


def in_range(what, number, dtype):
    """A ValueError unless the integer `number` fits `dtype` (an integer or bool
    dtype): 2**40 into int32 would wrap around to 0."""
    lo, hi = _limits(dtype)
    if not lo <= number <= hi:
        raise ValueError(f"{what}: the value {number!r} is out of range for {dtype} "
                         f"[{lo}, {hi}]")


def fits(what, array, dtype):
    """Raise unless every number of the NumPy `array` converts to `dtype`
    unchanged. As in TensorFlow: a float (even 2.0) or complex number does not
    convert to an integer dtype, nor a complex number to a real one (use
    mt.cast), and an integer must be in the dtype's range."""
    src = array.dtype
    if src.kind in "US" or dtype.kind in "USO":
        raise TypeError(f"{what}: cannot convert the {src} value {_show(array)} to {dtype}")
    if src.kind in "fc" and dtype.kind in "iub":
        lost = "the fractional part" if np.isfinite(array).all() else "inf or NaN"
        raise TypeError(f"{what}: cannot convert the {src} value {_show(array)} to "
                        f"{dtype} without losing {lost}; use mt.cast")
    if src.kind == "c" and dtype.kind != "c":
        raise TypeError(f"{what}: cannot convert the {src} value {_show(array)} to "
                        f"{dtype} without losing the imaginary part; use mt.cast")
    if src.kind in "iub" and dtype.kind in "iub" and array.size:
        in_range(what, int(array.min()), dtype)
        in_range(what, int(array.max()), dtype)


def exact_sum(what, a, b, sign):
    """a + b (sign 1) or a - b (sign -1) for NumPy arrays of one dtype; for an
    integer dtype, a ValueError where NumPy would wrap around."""
    with np.errstate(over="ignore"):
        result = a + b if sign > 0 else a - b
    if a.dtype.kind in "iu":
        # (np.array: for 0-d arrays object arithmetic gives a bare Python int)
        exact = np.array(a.astype(object) + b.astype(object) * sign, dtype=object)
        wrapped = np.array(result.astype(object) != exact, dtype=bool)
        if np.any(wrapped):
            raise ValueError(f"{what}: the result {exact[wrapped].reshape(-1)[0]} is out "
                             f"of range for {a.dtype} and would wrap around")
    return result
