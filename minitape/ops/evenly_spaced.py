"""linspace: `num` evenly spaced values from start to stop, inclusive.

Scalar endpoints make one op, `LinSpace` (differentiable in start and stop
when they are tensors). Tensor endpoints, as `mt.linspace([0., 1.], [1., 3.],
3)`, give one evenly spaced column per pair of endpoints, the new axis at
`axis` (0 by default), written as TensorFlow's `linspace_nd` writes them with
other ops: start, start + i * delta for 0 < i < num - 1, and stop,
concatenated along a new last axis and moved to `axis`. So they are
differentiable in the endpoints (each value is (1 - i / (num - 1)) * start +
i / (num - 1) * stop), traced and compiled like any composition.
"""
import numpy as np

from .. import arguments
from ..core.tensor import Tensor, TensorLike, Variable, convert_to_tensor, float32, holds_tensors
from .broadcasting import broadcast_to, reduce_sum, reshape
from .operands import attr_int, constant_like, emit, first_input_dtype, tensor_input
from .creation import number_argument
from .declaration import declare
from .elementwise import cast
from .shapes import concat, transpose


# --- scalar endpoints: the op LinSpace -------------------------------------------------

def _linspace_op(start, stop, num, name=None):
    """`num` evenly spaced values from start to stop, inclusive (float32 for
    Python floats, float64 for integers, like TensorFlow). Differentiable in
    start and stop when they are tensors (an op, `LinSpace`)."""
    num = arguments.size("linspace", "num", num)
    start_ = number_argument("linspace", "start", start, recorded=True)
    stop_ = number_argument("linspace", "stop", stop, recorded=True)
    # Python numbers take the dtype of a tensor or array beside them
    typed = [a.dtype for e, a in ((start, start_), (stop, stop_))
             if isinstance(e, (TensorLike, np.ndarray, np.generic))]
    floats = [d for d in typed if d.kind == "f"]
    if len(set(floats)) > 1:
        raise TypeError(f"linspace: start and stop have different dtypes {floats[0]} and "
                        f"{floats[1]}; cast one with mt.cast")
    dtype = floats[0] if floats else np.result_type(start_.dtype, stop_.dtype)
    if dtype.kind in "iu":
        dtype = np.dtype(np.float64)  # TensorFlow: linspace(0, 1, 3) is float64 [0, .5, 1]
    elif not typed and dtype == np.float64:
        dtype = float32               # Python floats: float32
    start_, stop_ = start_.astype(dtype), stop_.astype(dtype)
    value = np.linspace(start_, stop_, num, dtype=dtype)
    if not isinstance(start, TensorLike) and not isinstance(stop, TensorLike):
        return Tensor(value)  # nothing a tape could track: a constant
    ends = [convert_to_tensor(e) if isinstance(e, TensorLike) and e.dtype == dtype
            else Tensor(a) for e, a in ((start, start_), (stop, stop_))]
    return emit("LinSpace", value, tuple(ends), {"num": num}, name)


def _linspace_weights(op):
    """w_i = i / (num - 1): value_i = start * (1 - w_i) + stop * w_i (w = [0] for
    num = 1, whose one value is start)."""
    num = op.attrs["num"]
    w = np.arange(num, dtype=op.outputs[0].dtype) / max(num - 1, 1)
    return constant_like(1 - w), constant_like(w)


def _linspace_grad(op, grad):
    """d/dstart = sum_i grad_i (1 - w_i), d/dstop = sum_i grad_i w_i (over the
    last axis; leading batch dims of grad are kept)."""
    w_start, w_stop = _linspace_weights(op)
    return (reduce_sum(grad * w_start, -1) if op.needs[0] else None,
            reduce_sum(grad * w_stop, -1) if op.needs[1] else None)


def _linspace_jvp(op, t_start, t_stop):
    """t_start (1 - w) + t_stop w, each tangent (maybe a batch) against w."""
    w_start, w_stop = _linspace_weights(op)
    terms = [reshape(t, t.shape + (1,)) * w for t, w in ((t_start, w_start), (t_stop, w_stop))
             if t is not None]
    return terms[0] if len(terms) == 1 else terms[0] + terms[1]


def _linspace_shape(shapes, attrs, declared):
    num = attr_int(attrs, "num", 0, 1 << 40)
    if shapes[0] or shapes[1]:
        raise ValueError(f"start and stop must be scalars, got shapes {shapes}")
    return ((num,),), 0


declare("LinSpace", _linspace_grad, _linspace_jvp,
        replay=lambda xs, attrs, out_shapes: _linspace_op(xs[0], xs[1], attrs["num"]), arity=2,
        attrs_of=lambda op: {"num": op.attrs["num"]}, shape=_linspace_shape,
        dtype=first_input_dtype)



# --- tensor endpoints: a composition -------------------------------------------------

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
        return _linspace_op(start, stop, num, name=name)
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
