"""linspace with tensor endpoints (TensorFlow's `linspace_nd`).

`mt.linspace([0., 1.], [1., 3.], 3)` gives one evenly spaced column per pair
of endpoints, the new axis at `axis` (0 by default). Scalar endpoints go to
`creation.linspace`. As TensorFlow does, the values are written with other
ops: start, start + i * delta for 0 < i < num - 1, and stop, concatenated
along a new last axis and moved to `axis`. So they are differentiable in the
endpoints (each value is (1 - i / (num - 1)) * start + i / (num - 1) * stop),
traced and compiled like any composition.
"""
import numpy as np

from .. import arguments
from ..tensor import Tensor, Variable, convert_to_tensor, holds_tensors
from .broadcasting import broadcast_to, reshape
from .core import constant_like, tensor_input
from .creation import linspace as _scalar_linspace
from .elementwise import cast
from .shapes import concat, transpose


def _typed(given):
    """Whether an endpoint brings its own dtype: a tensor, an array, or a list
    holding tensors (packed to the first one's dtype, as TensorFlow does)."""
    return isinstance(given, (Tensor, Variable, np.ndarray)) or (
        isinstance(given, (list, tuple)) and holds_tensors(given))


def _endpoint_dtype(start, stop):
    """TensorFlow's: the float dtype of a tensor endpoint (both must agree),
    float32 for Python floats, float64 for integers."""
    typed = [x.dtype for x, given in start + stop if _typed(given)]
    floats = sorted({str(d) for d in typed if d.kind == "f"})
    if len(floats) > 1:
        raise TypeError(f"linspace: start and stop have different dtypes {floats}; cast one "
                        "with mt.cast")
    if floats:
        return np.dtype(floats[0])
    kinds = {x.dtype.kind for x, _ in start + stop}
    return np.dtype(np.float32) if "f" in kinds else np.dtype(np.float64)


def linspace(start, stop, num, name=None, axis=0):
    """`num` evenly spaced values from start to stop, inclusive; start and
    stop may be tensors (they broadcast), the values then run along `axis`."""
    if np.ndim(start) == 0 and np.ndim(stop) == 0 and arguments.integer(
            "linspace", "axis", axis) in (0, -1):
        return _scalar_linspace(start, stop, num, name=name)
    num = arguments.size("linspace", "num", num)
    s, e = tensor_input("linspace", start), tensor_input("linspace", stop)
    if s.dtype.kind not in "iuf" or e.dtype.kind not in "iuf":
        raise TypeError(f"linspace: start and stop must be real numbers, got dtypes "
                        f"{s.dtype} and {e.dtype}")
    dtype = _endpoint_dtype([(s, start)], [(e, stop)])
    # Python numbers are read in the result's dtype, not through float32 (0.1
    # beside a float64 tensor is float64's 0.1, as in TensorFlow)
    s = s if _typed(start) else convert_to_tensor(start, dtype=dtype)
    e = e if _typed(stop) else convert_to_tensor(stop, dtype=dtype)
    try:
        shape = np.broadcast_shapes(s.shape, e.shape)
    except ValueError:
        raise ValueError(f"linspace: start {s.shape} and stop {e.shape} cannot be broadcast "
                         "together") from None
    a = arguments.integer("linspace", "axis", axis)
    if not -len(shape) - 1 <= a <= len(shape):
        raise ValueError(f"linspace: axis {a} is out of range for endpoints of shape {shape} "
                         f"(the result has rank {len(shape) + 1})")
    a %= len(shape) + 1
    s = reshape(broadcast_to(cast(s, dtype), shape), shape + (1,))
    e = reshape(broadcast_to(cast(e, dtype), shape), shape + (1,))
    if num == 0:
        columns = [s[..., :0]]
    elif num == 1:
        columns = [s]
    else:
        steps = constant_like(np.arange(1, num - 1, dtype=dtype))
        delta = (e - s) / np.array(num - 1, dtype)
        columns = [s, s + steps * delta, e]
    values = concat(columns, axis=-1) if len(columns) > 1 else columns[0]
    last = len(shape)
    if a == last:
        return values
    return transpose(values, list(range(a)) + [last] + list(range(a, last)), name=name)
