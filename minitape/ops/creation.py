"""Tensors made from nothing: zeros, ones, eye, linspace, range (constants).

Their arguments are checked first (`arguments`): a negative size, a float
where a count goes, a dtype that is not one of numbers all raise an error
naming the op."""
import numpy as np

from .. import arguments
from ..tensor import Tensor, convert_to_tensor, float32, int32


def zeros(shape, dtype=float32, name=None):
    return Tensor(np.zeros(arguments.shape("zeros", shape), arguments.dtype("zeros", dtype)))


def ones(shape, dtype=float32, name=None):
    return Tensor(np.ones(arguments.shape("ones", shape), arguments.dtype("ones", dtype)))


def fill(dims, value, name=None):
    dims = arguments.shape("fill", dims, what="dims")
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


def _number(op_name, what, value):
    """A real number argument (start, stop, delta) as a NumPy 0-d array."""
    array = np.asarray(value)
    if array.ndim != 0 or array.dtype.kind not in "iuf":
        raise TypeError(f"{op_name}: {what} must be a real number, got "
                        f"{type(value).__name__} {value!r}")
    return array


def linspace(start, stop, num, name=None):
    """`num` evenly spaced values from start to stop, inclusive (float32 for
    Python floats, like TensorFlow)."""
    num = arguments.size("linspace", "num", num)
    start_, stop_ = _number("linspace", "start", start), _number("linspace", "stop", stop)
    dtype = np.result_type(start_.dtype, stop_.dtype)
    if not isinstance(start, (np.ndarray, np.generic, Tensor)) and dtype == np.float64:
        dtype = float32
    start_, stop_ = start_.astype(dtype), stop_.astype(dtype)
    return Tensor(np.linspace(start_, stop_, num, dtype=dtype))


def range(start, limit=None, delta=1, dtype=None, name="range"):
    """Like Python's range, as a tensor: int32 for ints, float32 for floats.
    As in TensorFlow, delta must not be 0 and must point from start to limit."""
    if limit is None:
        start, limit = 0, start
    values = [_number("range", what, v)
              for what, v in (("start", start), ("limit", limit), ("delta", delta))]
    if dtype is None:
        dtype = int32 if all(v.dtype.kind in "iu" for v in values) else float32
    dtype = arguments.dtype("range", dtype, kinds="iuf")
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
