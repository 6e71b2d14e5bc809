"""Tensors made from nothing: zeros, ones, eye, linspace, range (constants).

Their arguments are checked first (`arguments`): a negative size, a float
where a count goes, a dtype that is not one of numbers all raise an error
naming the op."""
import numpy as np

from .. import arguments
from ..registry import RegisterGradient, RegisterJVP
from ..tensor import Tensor, TensorLike, convert_to_tensor, float32, int32
from .broadcasting import broadcast_to, reduce_sum, reshape
from .core import (attr_int, constant_like, emit, first_input_dtype, replay,
                   tensor_input)


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


def _number(op_name, what, value, recorded=False):
    """A real number argument (start, stop, delta) as a NumPy 0-d array. A
    `recorded` argument is an input of the op that uses it (linspace's ends), so
    its value here is no Python value a trace depends on (`value_read`)."""
    array = np.asarray(value._value if recorded and isinstance(value, TensorLike) else value)
    if array.ndim != 0 or array.dtype.kind not in "iuf":
        raise TypeError(f"{op_name}: {what} must be a real number, got "
                        f"{type(value).__name__} {value!r}")
    return array


def linspace(start, stop, num, name=None):
    """`num` evenly spaced values from start to stop, inclusive (float32 for
    Python floats, float64 for integers, like TensorFlow). Differentiable in
    start and stop when they are tensors (an op, `LinSpace`)."""
    num = arguments.size("linspace", "num", num)
    start_ = _number("linspace", "start", start, recorded=True)
    stop_ = _number("linspace", "stop", stop, recorded=True)
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


@RegisterGradient("LinSpace", batch_safe=True)
def _linspace_grad(op, grad):
    """d/dstart = sum_i grad_i (1 - w_i), d/dstop = sum_i grad_i w_i (over the
    last axis; leading batch dims of grad are kept)."""
    w_start, w_stop = _linspace_weights(op)
    return (reduce_sum(grad * w_start, -1) if op.needs[0] else None,
            reduce_sum(grad * w_stop, -1) if op.needs[1] else None)


@RegisterJVP("LinSpace", batch_safe=True)
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


replay("LinSpace", lambda xs, attrs, out_shapes: linspace(xs[0], xs[1], attrs["num"]),
       arity=2, attrs_of=lambda op: {"num": op.attrs["num"]}, shape=_linspace_shape,
       dtype=first_input_dtype)


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
    values = [_number("range", what, v) for what, v in given]
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
