"""Tensors made from nothing: zeros, ones, eye, range (constants; linspace,
whose ends may be tensors, is in `evenly_spaced.py`).

Their arguments are checked first (`arguments`): a negative size, a float
where a count goes, a dtype that is not one of numbers all raise an error
naming the op."""
import numpy as np

from .. import arguments
from ..core.tensor import Tensor, TensorLike, convert_to_tensor, float32, int32
from .broadcasting import broadcast_to
from .operands import (tensor_input)


def zeros(shape, dtype=float32, name=None):
    return Tensor(np.zeros(arguments.shape("zeros", shape), arguments.dtype("zeros", dtype)))


def ones(shape, dtype=float32, name=None):
    return Tensor(np.ones(arguments.shape("ones", shape), arguments.dtype("ones", dtype)))


def fill(dims, value, name=None):
    """`value` repeated to shape `dims`. A tensor or variable value stays on
    the tape (a `BroadcastTo`: its gradient is the sum of the upstream one, as
    TensorFlow's); numbers give a constant."""
    dims = arguments.shape("fill", dims, what="dims")
    if isinstance(value, TensorLike):
        value = tensor_input("fill", value)
        if value.ndim != 0:
            raise ValueError(f"fill: value must be a scalar, got shape {value.shape}")
        return broadcast_to(value, dims, name=name)
    try:
        value = np.asarray(convert_to_tensor(value))  # Python floats become float32
    except (TypeError, ValueError) as e:
        raise type(e)(f"fill: value {value!r}: {e}") from None
    if value.ndim != 0:
        raise ValueError(f"fill: value must be a scalar, got shape {value.shape}")
    return Tensor(np.full(dims, value, dtype=value.dtype))


def zeros_like(input, dtype=None, name=None):
    x = convert_to_tensor(input)
    dtype = x.dtype if dtype is None else arguments.dtype("zeros_like", dtype)
    return Tensor(np.zeros(x.shape, dtype=dtype))


def ones_like(input, dtype=None, name=None):
    x = convert_to_tensor(input)
    dtype = x.dtype if dtype is None else arguments.dtype("ones_like", dtype)
    return Tensor(np.ones(x.shape, dtype=dtype))


def eye(num_rows, num_columns=None, batch_shape=None, dtype=float32, name=None):
    rows = arguments.size("eye", "num_rows", num_rows)
    columns = None if num_columns is None else arguments.size("eye", "num_columns",
                                                              num_columns)
    batch = () if batch_shape is None else arguments.shape("eye", batch_shape,
                                                           what="batch_shape")
    m = np.eye(rows, columns, dtype=arguments.dtype("eye", dtype))
    if batch:
        m = np.broadcast_to(m, batch + m.shape).copy()
    return Tensor(m)


def number_argument(op_name, what, value, recorded=False):
    """A real number argument (start, stop, delta) as a NumPy 0-d array. A
    `recorded` argument is an input of the op that uses it (linspace's ends), so
    its value here is no Python value a trace depends on (`value_read`)."""
    array = np.asarray(value._value if recorded and isinstance(value, TensorLike) else value)
    if array.ndim != 0 or array.dtype.kind not in "iuf":
        raise TypeError(f"{op_name}: {what} must be a real number, got "
                        f"{type(value).__name__} {value!r}")
    return array


# TensorFlow's order for range's dtype: the widest of its arguments' wins
_RANGE_DTYPES = ("int32", "int64", "float16", "float32", "float64")


def _range_dtype(what, given, array):
    """One argument's dtype, as TensorFlow converts it: a tensor's or NumPy
    value's own, int32 for a Python int (int64 if it does not fit), float32
    for a Python float."""
    if isinstance(given, (TensorLike, np.ndarray, np.generic)):
        if array.dtype.name not in _RANGE_DTYPES:
            raise TypeError(f"range: {what} {given!r} has dtype {array.dtype}; range "
                            f"takes {', '.join(_RANGE_DTYPES)} (use mt.cast or dtype=)")
        return array.dtype
    if array.dtype.kind == "f":
        return np.dtype(float32)
    return np.dtype(int32 if -2**31 <= given < 2**31 else np.int64)


def range(start, limit=None, delta=1, dtype=None, name="range"):
    """Like Python's range, as a tensor. Its dtype is TensorFlow's: the widest
    of the arguments' (int32 < int64 < float16 < float32 < float64; a Python
    int is int32, a float float32), or `dtype`, to which tensors are cast and
    Python numbers converted. As in TensorFlow, delta must not be 0 and must
    point from start to limit."""
    if dtype is not None:
        dtype = arguments.dtype("range", dtype, kinds="iuf")
    if limit is None:
        start, limit = 0, start
    given = (("start", start), ("limit", limit), ("delta", delta))
    values = [number_argument("range", what, v) for what, v in given]
    if dtype is None:
        # each argument converted on its own (a Python float to float32), then cast
        # to the widest, as TensorFlow does
        own = [_range_dtype(what, v, a) for (what, v), a in zip(given, values)]
        dtype = max(own, key=lambda d: _RANGE_DTYPES.index(d.name))
        values = [a.astype(d).astype(dtype) for a, d in zip(values, own)]
    else:
        for i, ((what, v), a) in enumerate(zip(given, values)):
            if isinstance(v, (TensorLike, np.ndarray, np.generic)):
                values[i] = a.astype(dtype)  # a cast, as TensorFlow's
            else:
                try:
                    values[i] = np.asarray(convert_to_tensor(v, dtype))
                except (TypeError, ValueError) as e:
                    raise type(e)(f"range: {what}: {e}") from None
    if dtype.kind == "f":
        return Tensor(_float_range(*(v.astype(dtype)[()] for v in values)))
    start, limit, delta = (v.item() for v in values)
    if delta == 0:
        raise ValueError(f"range: delta must not be 0 (start={start}, limit={limit})")
    if (delta > 0 and start > limit) or (delta < 0 and start < limit):
        raise ValueError(f"range: start={start} never reaches limit={limit} with "
                         f"delta={delta}")
    if abs((limit - start) / delta) >= 2**63:
        raise ValueError(f"range: start={start}, limit={limit}, delta={delta} make more "
                         "numbers than any array can hold")
    return Tensor(np.arange(start, limit, delta, dtype=dtype))


def _float_range(start, limit, delta):
    """TensorFlow's kernel, in the dtype's own arithmetic: ceil(|(limit - start) /
    delta|) numbers start + i * delta (NumPy's arange counts in float64 and adds
    delta up: range(1., 2.2, 0.2) would get a seventh number, 2.2000003)."""
    if delta == 0:
        raise ValueError(f"range: delta must not be 0 (start={start!s}, limit={limit!s})")
    if (delta > 0 and start > limit) or (delta < 0 and start < limit):
        raise ValueError(f"range: start={start!s} never reaches limit={limit!s} with "
                         f"delta={delta!s}")
    with np.errstate(over="ignore", invalid="ignore"):
        size = float(np.ceil(np.abs((limit - start) / delta)))
    if not size < 2**63:
        raise ValueError(f"range: start={start!s}, limit={limit!s}, delta={delta!s} make more "
                         "numbers than any array can hold")
    return start + np.arange(int(size), dtype=start.dtype) * delta
