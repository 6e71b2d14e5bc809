"""What every op shares about its operands and result: checking and converting
its inputs, emitting its result, Python numbers as
constants, and the batch shape of forward-mode tangents. It imports no op, so
every op module can import it (`broadcasting.py` holds the helpers that need ops)."""
import math
import numbers

import numpy as np

from .. import arguments, nest
from ..core import tensor as _values
from ..core.context import state
from ..core.tape_entries import record
from ..core.registry import batch_ndim
from ..core.tensor import Tensor, TensorLike, Variable, holds_tensors, new_id
from .declaration import declare

_new_tensor = Tensor.__new__

# NumPy's scalar types of numbers (np.float32, np.int64, ...). The value of
# most tensors made by ops on scalars is one of them, and its type tells its
# dtype: `type(v) is type(w)` says two of them have one dtype, faster than
# comparing `v.dtype` (which NumPy makes for each scalar it is asked about).
FLOAT_SCALARS = frozenset(np.dtype(c).type for c in "efdgFDG")
NUMBER_SCALARS = FLOAT_SCALARS | frozenset(np.dtype(c).type for c in "bhilqBHILQ")
REAL_SCALARS = NUMBER_SCALARS - frozenset(np.dtype(c).type for c in "FDG")


def emit(op_type, value, inputs, attrs=None, name=None):
    """Wrap an op's NumPy result in a Tensor and let the active tapes record it.
    (The elementwise ops in `elementwise.py` write these lines out themselves:
    the arithmetic operators pass there, and a call costs about as much.)"""
    out = _new_tensor(Tensor)  # Tensor(value) without the __init__ call: every op
    out._value = value         # passes here, so these ~50 ns add up
    out._id = new_id()
    tapes = state.tapes  # (one read of the thread's state: record is handed it)
    if tapes:
        record(op_type, inputs, (out,), attrs, name, tapes)
    return out


def constant_like(value):
    """A tensor that no tape will ever track: for masks and other values whose
    derivative is zero (almost everywhere) inside gradient rules."""
    return Tensor(value)


def first_dtype(values):
    """The dtype of the first tensor or variable in a nested list (TensorFlow
    packs a list holding tensors to that dtype; its numbers take it)."""
    first = nest.first(values, TensorLike)
    return None if first is None else first.dtype


def operand(value, like, op_name):
    """Convert `value` for an op whose other operand is the tensor `like`:
    Python numbers and arrays take `like`'s dtype; two tensors must agree."""
    kind = type(value)
    if kind is Tensor:
        t = value
    elif kind is Variable:
        t = value.read_value()
    elif kind is float or kind is int or (isinstance(value, numbers.Number)
                                          and not isinstance(value, np.generic)):
        dtype = like._value.dtype
        if isinstance(value, complex) and dtype.kind != "c":
            raise TypeError(f"{op_name}: cannot combine the {dtype} tensor with the "
                            f"complex number {value!r}")
        if dtype.kind in "iub" and not float(value).is_integer():
            raise TypeError(f"{op_name}: cannot combine the {dtype} tensor with "
                            f"the non-integer number {value!r}")
        if dtype.kind in "iub":  # 300 does not fit an int8 tensor (NumPy: OverflowError)
            arguments.in_range(op_name, value, dtype)
        return Tensor(dtype.type(value))
    else:
        return Tensor(np.array(_values._to_numpy(value, like._value.dtype, op_name)))
    if t._value.dtype != like._value.dtype:
        raise TypeError(f"{op_name}: the operands have different dtypes, "
                        f"{like.dtype} and {t.dtype}; cast one with mt.cast")
    return t


def packed_operand(op_name, value, like, lists=True):
    """`operand` (a number, array or tensor converted for an op beside the
    tensor `like`), where a list holding tensors is first packed into one
    tensor (`pack`), so its tensors keep their gradients, as in TensorFlow;
    with `lists=False` (where TensorFlow refuses one) it is a TypeError. Never
    a constant made of it: that would cut its tensors' gradients silently."""
    if isinstance(value, (list, tuple)) and holds_tensors(value):
        if not lists:
            raise TypeError(f"{op_name}: a list holding tensors is not accepted here; "
                            "stack it into one tensor first (mt.stack)")
        value = pack(op_name, value)
    return operand(value, like, op_name)


def pack(op_name, values, dtype=None, casting=False):
    """A (nested) list or tuple holding tensors, variables and numbers as one
    tensor, the way TensorFlow's `convert_to_tensor` auto-packs it: a recorded
    `Pack` (the op of `mt.stack`, declared below) of its
    entries, so the tensors keep their gradients. The dtype is the first
    tensor's and numbers take it; a tensor of another dtype is an error, unless
    the caller asked for `dtype` (`casting=True`): then tensors are cast to it, as
    TensorFlow does."""
    if dtype is None:
        dtype = first_dtype(values)
    parts = []
    for v in values:
        if isinstance(v, TensorLike):
            t = _values.convert_to_tensor(v)
            if t._value.dtype != dtype:
                if not casting:
                    raise TypeError(f"{op_name}: cannot pack a {t.dtype} tensor into a list "
                                    f"of {dtype} (the first tensor's dtype); cast with mt.cast")
                t = cast(t, dtype)
        elif holds_tensors(v):
            t = pack(op_name, v, dtype, casting)
        else:
            t = Tensor(np.array(_values._to_numpy(v, dtype, op_name)))
        parts.append(t)
    if len({t._value.shape for t in parts}) > 1:
        raise ValueError(f"{op_name}: cannot pack a list of tensors of different shapes "
                         f"{[t.shape for t in parts]}")
    return stack_tensors(parts, 0)


# --- the two ops every op may record while converting its arguments ------------------
# A list holding tensors is packed (`Pack`, the op of `mt.stack`) and a tensor
# of another dtype cast (`Cast`, the op of `mt.cast`); `shapes.stack` and
# `elementwise.cast` are the public names.

def stack_tensors(xs, axis, name=None):
    """Record the stack of tensors `xs` (one shape and dtype, checked by the
    caller) along a new `axis` in [0, rank]."""
    return emit("Pack", np.stack([x._value for x in xs], axis=axis), tuple(xs), {"axis": axis},
                name)


def zeros_for_missing(op, tangents):
    """The tangents of every input, with zeros where one is None."""
    batch = tangent_batch(op, tangents)
    return [constant_like(np.zeros(batch + x.shape, x.dtype)) if t is None else t
            for t, x in zip(tangents, op.inputs)]


def _stack_grad(op, grad):
    lead = (slice(None),) * (batch_ndim(op, grad) + op.attrs["axis"])
    return [grad[lead + (i,)] for i in range(len(op.inputs))]


def _stack_jvp(op, *tangents):
    nb = len(tangent_batch(op, tangents))
    return stack_tensors(zeros_for_missing(op, tangents), nb + op.attrs["axis"])


def _stack_shape(shapes, attrs, declared):
    a = shapes[0]
    axis = attrs["axis"]
    if not -len(a) - 1 <= axis < len(a) + 1:
        raise ValueError(f"axis {axis} is out of range for rank {len(a) + 1}")
    axis %= len(a) + 1
    if any(s != a for s in shapes):
        raise ValueError("stacks tensors of different shapes")
    return (a[:axis] + (len(shapes),) + a[axis:],), 0


def _stack_dtype(dtypes, attrs):
    if len(set(dtypes)) > 1:
        raise ValueError(f"stacks tensors of different dtypes {[str(d) for d in dtypes]}")
    return (dtypes[0],)


def convert_to_tensor(value, dtype=None, name=None):
    """`value` as a Tensor (TensorFlow's `convert_to_tensor`): tensors pass
    through, variables are read, a list holding tensors is packed (`pack`,
    recorded), anything else is copied into a new constant."""
    if holds_tensors(value):
        return pack("convert_to_tensor", value,
                    _values.as_dtype(dtype, "convert_to_tensor"), casting=dtype is not None)
    return _values.convert_to_tensor(value, dtype, name)


def _converted(op_name, x):
    try:
        if holds_tensors(x):
            return pack(op_name, x)
        return _values.convert_to_tensor(x)
    except (TypeError, ValueError) as e:
        if str(e).startswith(op_name + ":"):
            raise
        raise type(e)(f"{op_name}: {e}") from None


def complex_error(op_name, x):
    return TypeError(f"{op_name}: complex input (dtype {x.dtype}) is not supported, "
                     "as in TensorFlow")


def real_input(op_name, x, floating=False):
    """`x` as a tensor (a floating-point one if `floating`), not complex: for the
    ops TensorFlow has no complex kernel for, mostly those that order numbers
    (max, comparisons, relu, softmax), where NumPy would order complex numbers
    lexicographically and give meaningless results."""
    x = (float_input if floating else tensor_input)(op_name, x)
    if x._value.dtype.kind == "c":
        raise complex_error(op_name, x)
    return x


def tensor_input(op_name, x):
    """`x` as a numeric Tensor, or a TypeError that names the op."""
    if type(x) is not Tensor:
        x = _converted(op_name, x)
    if x._value.dtype.kind not in "biufc":
        raise TypeError(f"{op_name}: expected a numeric tensor, got dtype {x.dtype}")
    return x


def float_input(op_name, x):
    """`x` as a floating-point Tensor, or a TypeError that names the op."""
    if type(x) is not Tensor:
        x = _converted(op_name, x)
    if x._value.dtype.kind not in "fc":
        raise TypeError(f"{op_name}: expected a floating-point tensor, got dtype "
                        f"{x.dtype} (use mt.cast)")
    return x


_numbers = {}  # (dtype, Python number) -> a constant Tensor holding it


def number(dtype, value):
    """The Python number `value` as a constant tensor of `dtype`.

    `y * 2.0` in a loop, or `1 - y * y` in a gradient rule, would make the same
    constant again on every call, and converting a Python float to a NumPy
    scalar costs about as much as the multiplication itself. Tensors never
    change, so one constant per (dtype, value) can be shared by every op that
    uses it. The cache is small and starts over when full. Zero is not cached:
    0.0 == -0.0, but they are different constants (1 / -0.0 is -inf).
    """
    key = (dtype, value)
    t = _numbers.get(key)
    if t is None:
        t = Tensor(dtype.type(value))
        if value:
            if len(_numbers) >= 256:
                _numbers.clear()
            _numbers[key] = t
    return t


def operands(op_name, x, y):
    """Two operands as tensors of one dtype: Python numbers and arrays take the
    dtype of the tensor beside them; two tensors of different dtypes are an error."""
    tx, ty = type(x), type(y)
    if tx is Tensor and (ty is float or ty is int):
        dtype = x._value.dtype
        if dtype.kind == "f":
            return x, number(dtype, y)   # the common `y * 2.0`
    elif ty is Tensor and (tx is float or tx is int):
        dtype = y._value.dtype
        if dtype.kind == "f":
            return number(dtype, x), y   # and `1 - y`
    if tx is list or tx is tuple:
        x = _converted(op_name, x) if holds_tensors(x) else x
    if ty is list or ty is tuple:
        y = _converted(op_name, y) if holds_tensors(y) else y
    tx, ty = type(x), type(y)
    if tx is Tensor and ty is Tensor:
        if x._value.dtype != y._value.dtype:
            raise TypeError(f"{op_name}: the operands have different dtypes, "
                            f"{x.dtype} and {y.dtype}; cast one with mt.cast")
    elif isinstance(x, (Tensor, Variable)):
        x = _values.convert_to_tensor(x)
        y = operand(y, x, op_name)
    elif isinstance(y, (Tensor, Variable)):
        y = _values.convert_to_tensor(y)
        x = operand(x, y, op_name)
    else:
        x = _values.convert_to_tensor(x)
        y = operand(y, x, op_name)
    if x._value.dtype.kind not in "biufc":
        raise TypeError(f"{op_name}: expected numeric tensors, got dtype {x.dtype}")
    return x, y


def tensor_inputs(op_name, values):
    """The entries of a list argument (stack's, concat's) as numeric tensors:
    as TensorFlow converts them, entries that hold no tensor (numbers, lists
    of numbers) take the dtype of the first tensor in the list."""
    dtype = first_dtype(values)
    out = []
    for v in values:
        if dtype is not None and not isinstance(v, TensorLike) and not holds_tensors(v):
            v = Tensor(np.array(_values._to_numpy(v, dtype, op_name)))
        out.append(tensor_input(op_name, v))
    return out


def broadcast_error(op_name, x, y):
    return ValueError(f"{op_name}: shapes {x.shape} and {y.shape} cannot be "
                      "broadcast together")


def normalize_axes(op_name, axis, ndim):
    """`axis` (None, an int or a list, maybe negative) as a sorted tuple of
    distinct axes; anything else is an error naming the op (`arguments.axes`)."""
    return arguments.axes(op_name, axis, ndim)


def tangent_batch(op, tangents):
    """The leading batch shape that an op's input tangents carry: () for one
    direction, (n,) for a batch of n directions (forward-mode jacobians)."""
    for t, x in zip(tangents, op.inputs):
        if t is not None:
            return t._value.shape[:t._value.ndim - x._value.ndim]
    return ()


# --- shape rules the families share (`Declaration.shape`) ---------------------------------

def elementwise_shape(shapes, attrs, declared):
    """Inputs broadcast together (the loader counts reading and writing them)."""
    return (np.broadcast_shapes(*shapes),), 0


def unchanged_shape(shapes, attrs, declared):
    """The first input's shape (a scan, an activation along an axis)."""
    return (tuple(shapes[0]),), math.prod(shapes[0])


def first_input_dtype(dtypes, attrs):
    return (dtypes[0],)


def matrix_shape(shape, square=False):
    """(batch shape, rows, cols) of a stack of matrices, or ValueError."""
    if len(shape) < 2:
        raise ValueError(f"needs matrices (rank >= 2), got shape {tuple(shape)}")
    if square and shape[-1] != shape[-2]:
        raise ValueError(f"needs square matrices, got shape {tuple(shape)}")
    return tuple(shape[:-2]), shape[-2], shape[-1]


def attr_int(attrs, name, lo, hi):
    """attrs[name] as an int in [lo, hi], or ValueError naming the attribute."""
    value = attrs[name]
    if type(value) is not int or not lo <= value <= hi:
        raise ValueError(f"attribute {name} = {value!r:.60} is not an integer in "
                         f"[{lo}, {hi}]")
    return value


def attr_bool(attrs, name):
    if type(attrs[name]) is not bool:
        raise ValueError(f"attribute {name} = {attrs[name]!r:.60} is not a boolean")
    return attrs[name]


def attr_number(attrs, name):
    if type(attrs[name]) not in (bool, int, float, complex):
        raise ValueError(f"attribute {name} = {attrs[name]!r:.60} is not a number")
    return attrs[name]


def attr_ints(attrs, name, lo, hi, length=None):
    """attrs[name] as a tuple of ints in [lo, hi] (of `length`, if given)."""
    value = attrs[name]
    if type(value) not in (tuple, list) or (length is not None and len(value) != length) \
            or any(type(v) is not int or not lo <= v <= hi for v in value):
        count = "" if length is None else f"{length} "
        raise ValueError(f"attribute {name} = {value!r:.60} is not a list of {count}integers "
                         f"in [{lo}, {hi}]")
    return tuple(value)


def with_numbers(rule, *names):
    """`rule`, once each attribute in `names` is checked to be a number."""
    def checked(shapes, attrs, declared):
        for name in names:
            attr_number(attrs, name)
        return rule(shapes, attrs, declared)
    return checked


def reduction_shape(shapes, attrs, declared):
    """A reduction over attrs["axis"] (a tuple of axes; None: all axes, in
    graphs for inputs of any rank) with attrs["keepdims"]."""
    shape = shapes[0]
    keep = attr_bool(attrs, "keepdims")
    if attrs["axis"] is None:
        return ((1,) * len(shape) if keep else (),), 0
    rank = max(len(shape), 1)  # a scalar takes axis 0 (or -1)
    axes = {a % rank for a in attr_ints(attrs, "axis", -rank, rank - 1)}
    return (tuple(1 if k in axes else n for k, n in enumerate(shape)
                  if keep or k not in axes),), 0


def one_axis(attrs, shape, name="axis"):
    """attrs[name], an axis of `shape` in [0, rank)."""
    return attr_int(attrs, name, 0, len(shape) - 1)


def index_dtypes(*positions):
    """A dtype rule: the inputs at `positions` are indices (integers); the
    output has the dtype of the first other input."""
    def rule(dtypes, attrs):
        if any(dtypes[i].kind not in "iu" for i in positions):
            raise ValueError(f"indices must be integers, got {[str(d) for d in dtypes]}")
        return ([d for i, d in enumerate(dtypes) if i not in positions][0],)
    return rule


# --- cast: to another dtype, differentiable between floating dtypes ------------------


def cast(x, dtype, name=None):
    """`x` converted to `dtype`; differentiable between floating dtypes."""
    x = tensor_input("cast", x) if not isinstance(x, Tensor) else x
    dtype = arguments.dtype("cast", dtype)
    if x.dtype.kind not in "biufc":
        raise TypeError(f"cast: cannot cast a {x.dtype} tensor to {dtype}")
    if x.dtype == dtype:
        return x
    v = x._value
    if v.dtype.kind == "c" and dtype.kind != "c":
        v = v.real  # the real part, as TensorFlow's cast (NumPy would warn)
    return emit("Cast", v.astype(dtype), (x,), {"DstT": dtype}, name)


def _cast_gradient(op, grad):
    x = op.inputs[0]
    if x.dtype.kind in "fc" and grad.dtype.kind in "fc":
        return cast(grad, x.dtype)
    return None


def _cast_jvp(op, t):
    dtype = op.attrs["DstT"]
    return cast(t, dtype) if dtype.kind in "fc" else None


def _cast_shape(shapes, attrs, declared):
    dtype = attrs["DstT"]
    if not isinstance(dtype, np.dtype) or dtype.kind not in "biufc":
        raise ValueError(f"attribute DstT = {dtype!r:.60} is not a numeric dtype")
    return (tuple(shapes[0]),), 0


declare("Cast", _cast_gradient, _cast_jvp,
        replay=lambda xs, attrs, out_shapes: cast(xs[0], attrs["DstT"]),
        attrs_of=lambda op: {"DstT": np.dtype(op.attrs["DstT"])},
        shape=_cast_shape, dtype=lambda dtypes, attrs: (attrs["DstT"],),
        line="{0}.astype({dtype})", line_attrs=lambda attrs, out_shapes, in_dtypes: {
            "dtype": np.dtype(attrs["DstT"])},
        smooth=True, rank_free=True, attr_kinds={"DstT": "dtype"})


declare("Pack", _stack_grad, _stack_jvp, arity=None,
        replay=lambda xs, attrs, out_shapes: stack_tensors(xs, attrs["axis"] % (xs[0].ndim + 1)),
        attrs_of=lambda op: {"axis": op.attrs["axis"]}, shape=_stack_shape, dtype=_stack_dtype,
        line="np.stack(({inputs},), {axis})", word="stack",
        line_attrs=lambda attrs, out_shapes, in_dtypes: {"axis": attrs["axis"]},
        smooth=True, attr_kinds={"axis": "axis"})
