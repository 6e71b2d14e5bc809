"""What every op shares: checking inputs, emitting results, Python numbers as
constants, and the batch shape of forward-mode tangents. It imports no op, so
every op module can import it (`broadcasting.py` holds the helpers that need ops)."""
import math
import numbers

import numpy as np

from .. import arguments, nest
from .. import tensor as _values
from ..context import state
from ..recording import record
from ..tensor import Tensor, TensorLike, Variable, holds_tensors, new_id
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


def pack(op_name, values, dtype=None, cast=False):
    """A (nested) list or tuple holding tensors, variables and numbers as one
    tensor, the way TensorFlow's `convert_to_tensor` auto-packs it: a recorded
    `Pack` (the op of `mt.stack`, whose rules live in `shapes.py`) of its
    entries, so the tensors keep their gradients. The dtype is the first
    tensor's and numbers take it; a tensor of another dtype is an error, unless
    the caller asked for `dtype` (`cast=True`): then tensors are cast to it, as
    TensorFlow does."""
    if dtype is None:
        dtype = first_dtype(values)
    parts = []
    for v in values:
        if isinstance(v, TensorLike):
            t = _values.convert_to_tensor(v)
            if t._value.dtype != dtype:
                if not cast:
                    raise TypeError(f"{op_name}: cannot pack a {t.dtype} tensor into a list "
                                    f"of {dtype} (the first tensor's dtype); cast with mt.cast")
                t = emit("Cast", t._value.astype(dtype), (t,), {"DstT": dtype})
        elif holds_tensors(v):
            t = pack(op_name, v, dtype, cast)
        else:
            t = Tensor(np.array(_values._to_numpy(v, dtype, op_name)))
        parts.append(t)
    if len({t._value.shape for t in parts}) > 1:
        raise ValueError(f"{op_name}: cannot pack a list of tensors of different shapes "
                         f"{[t.shape for t in parts]}")
    return emit("Pack", np.stack([t._value for t in parts]), tuple(parts), {"axis": 0})


def convert_to_tensor(value, dtype=None, name=None):
    """`value` as a Tensor (TensorFlow's `convert_to_tensor`): tensors pass
    through, variables are read, a list holding tensors is packed (`pack`,
    recorded), anything else is copied into a new constant."""
    if holds_tensors(value):
        return pack("convert_to_tensor", value,
                    _values.as_dtype(dtype, "convert_to_tensor"), cast=dtype is not None)
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


def replay(op_type, run, arity=1, attrs_of=None, shape=None, dtype=None):
    """Declare how a traced graph runs `op_type` again on new inputs (and,
    with `shape`, how a saved model checks it without running it), for the
    families whose rules are still registered on their own (`declaration.py`
    says what each trait means)."""
    declare(op_type, replay=run, arity=arity, attrs_of=attrs_of, shape=shape, dtype=dtype)


# --- shape rules the families share (see `replay`) ---------------------------------

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
    """A reduction over attrs["axis"] (a tuple of axes) with attrs["keepdims"]."""
    shape = shapes[0]
    rank = max(len(shape), 1)  # a scalar takes axis 0 (or -1)
    axes = {a % rank for a in attr_ints(attrs, "axis", -rank, rank - 1)}
    keep = attr_bool(attrs, "keepdims")
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
