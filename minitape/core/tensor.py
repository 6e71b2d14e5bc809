"""Values: the immutable Tensor, the mutable Variable, dtypes and conversions.

A Tensor is a NumPy value plus an id. Tapes know tensors only by their ids, so a
Tensor never points at the op that made it: the tape keeps that link. A Variable
is a named, mutable slot; every read of it gives a Tensor snapshot that carries
the variable's id, so a gradient taken "with respect to the variable" collects
the gradients of all its reads, and a later `assign` never changes what an
earlier computation saw.

The arithmetic operators (`+`, `*`, `@`, ...) are attached in `ops/__init__.py`,
once all ops exist.
"""
import itertools
from _thread import RLock  # threading.RLock, without `import threading` (see context.py)

import numpy as np

from .. import arguments, nest
from .context import state, value_read, variable_accessed, variable_assigned

float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
bool_ = np.dtype("bool")
string = np.dtype("str")

new_id = itertools.count(1).__next__  # every Tensor and Variable gets a fresh id

# How Jupyter shows a Tensor or a GradientTape. display.py, several layers above,
# puts its views here when it is imported, so the values layer never imports it.
html_views = {}  # class -> function(obj) returning HTML
text_views = {}  # class -> function(obj) returning plain text (IPython's pretty printer)


def as_dtype(dtype, op_name="as_dtype"):
    """Accept `mt.float32`, `np.float32`, `'float32'` or None (a TypeError naming
    `op_name` for anything else, or for a dtype a tensor cannot hold)."""
    return None if dtype is None else arguments.dtype(op_name, dtype, kinds="biufcUS")


def is_floating(dtype):
    return dtype.kind in "fc"


class TensorLike:
    """What a Tensor and a Variable share: properties, printing, conversions."""

    __slots__ = ()
    __array_priority__ = 100  # `ndarray * tensor` defers to Tensor.__rmul__

    @property
    def shape(self):
        return self._value.shape

    @property
    def dtype(self):
        return self._value.dtype

    @property
    def ndim(self):
        return self._value.ndim

    @property
    def size(self):
        return self._value.size

    def numpy(self):
        """A NumPy copy of the value (a NumPy scalar for a 0-d tensor)."""
        value_read(self)  # (a trace holds for this value only)
        v = self._value
        return v[()] if v.ndim == 0 else v.copy()

    def __array__(self, dtype=None, copy=None):
        value_read(self)  # (a trace holds for this value only)
        return np.array(self._value, dtype=dtype, copy=True)

    def __len__(self):
        if self._value.ndim == 0:
            raise TypeError("len() of a 0-d tensor (a scalar) is not defined")
        return self._value.shape[0]

    def __iter__(self):
        n = len(self)
        return (self[i] for i in range(n))

    def _scalar(self, what):
        value_read(self)  # (a trace holds for this value only)
        if self._value.size != 1:
            raise ValueError(
                f"{what} needs a tensor with one element, got shape {self.shape}")
        return self._value.reshape(())[()]

    def __float__(self):
        return float(self._scalar("float()"))

    def __int__(self):
        return int(self._scalar("int()"))

    def __index__(self):
        if self.dtype.kind not in "iub":
            raise TypeError(f"only integer tensors can be used as an index, got {self.dtype}")
        return int(self._scalar("an index"))

    def __bool__(self):
        if self._value.size != 1:
            raise ValueError(
                f"the truth value of a tensor of shape {self.shape} is ambiguous; "
                "use mt.reduce_any/all or compare a scalar")
        value_read(self)  # (a trace holds for this value only)
        return bool(self._value.reshape(())[()])

    def __format__(self, spec):
        if self._value.ndim == 0:
            return format(self._value[()], spec)
        return format(str(self), spec)

    __hash__ = None  # `==` is elementwise, as in TensorFlow; use id() or .ref()

    def ref(self):
        """A hashable reference (TensorFlow's `Tensor.ref()`)."""
        return nest.Ref(self)


def _numpy_text(value):
    return str(value[()]) if value.ndim == 0 else np.array2string(value, separator=" ")


def _numpy_repr(value):
    """TensorFlow's `numpy=` part: a scalar as text, an array as its repr, on a
    new line when it spans several."""
    text = str(value[()]) if value.ndim == 0 else repr(value)
    return "\n" + text if "\n" in text else text


def _dtype_name(dtype):
    return "string" if dtype.kind in "US" else str(dtype)


class Tensor(TensorLike):
    """An immutable value that tapes can record. Make one with `mt.constant`."""

    __slots__ = ("_value", "_id")

    def __init__(self, value):
        # Internal: `value` is already a NumPy array or scalar owned by this tensor.
        self._value = value
        self._id = new_id()

    def _repr_html_(self):
        view = html_views.get(Tensor)
        return None if view is None else view(self)

    def __repr__(self):
        return f"<mt.Tensor: shape={self.shape}, dtype={_dtype_name(self.dtype)}, " \
               f"numpy={_numpy_repr(self._value)}>"

    def __str__(self):
        text = _numpy_text(self._value)
        if "\n" in text:
            text = "\n" + text
        return f"mt.Tensor({text}, shape={self.shape}, dtype={_dtype_name(self.dtype)})"


assigning = RLock()  # held to read and write a variable as one step: no thread loses one


class Variable(TensorLike):
    """A mutable value (model weights). Ops read it as a Tensor snapshot."""

    __slots__ = ("_stored", "_id", "trainable", "_name", "__weakref__")

    def __init__(self, initial_value, trainable=True, name=None, dtype=None):
        if callable(initial_value):
            initial_value = initial_value()
        self._stored = frozen(_to_numpy(initial_value, as_dtype(dtype, "Variable"), "Variable"))
        self._id = new_id()
        self.trainable = bool(trainable)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"Variable: name must be a string, got "
                            f"{type(name).__name__} {name!r}")
        # 'Variable:0' when unnamed, as in eager TensorFlow (tapes know ids, not names)
        self._name = "Variable" if name is None else name

    @property
    def _value(self):
        """The value; while this thread traces a function assigning the variable,
        the trace's own (tracing never changes a variable other threads use)."""
        traced = state.traced_values
        return traced.get(self._id, self._stored) if traced else self._stored

    @_value.setter
    def _value(self, array):
        if state.traced_values is None:
            self._stored = array
        else:
            state.traced_values[self._id] = array

    @property
    def name(self):
        return self._name if self._name.endswith(":0") else self._name + ":0"

    def read_value(self):
        """A Tensor snapshot of the current value (tapes may watch this read)."""
        variable_accessed(self)
        return snapshot(self)

    def value(self):
        return self.read_value()

    def _what(self, op):  # (written out only if an error message shows it)
        return arguments.Text(lambda: f"Variable.{op} of '{self.name}' "
                                      f"(dtype {self.dtype}, shape {self.shape})")

    def _new_value(self, value, op):
        """Check a new value fully before anything changes (a failed assign changes
        nothing): same dtype, same shape, and every number representable."""
        what = self._what(op)
        if isinstance(value, TensorLike) and value.dtype != self.dtype:
            raise TypeError(f"{what}: dtype {value.dtype} does not match the "
                            f"variable's dtype {self.dtype}")
        new = _to_numpy(value, self.dtype, what)
        if new.shape != self.shape:
            raise ValueError(f"{what}: shape {new.shape} does not match the "
                             f"variable's shape {self.shape}")
        return new

    def assign(self, value, read_value=True):
        return self._set(value, 0, "assign", read_value)

    def assign_add(self, delta, read_value=True):
        return self._set(delta, 1, "assign_add", read_value)

    def assign_sub(self, delta, read_value=True):
        return self._set(delta, -1, "assign_sub", read_value)

    def _set(self, value, sign, op, read_value):
        new = self._new_value(value, op)
        with assigning:  # read and write as one step
            if sign:
                new = arguments.exact_sum(self._what(op), self._value, new, sign)
            if state.tapes:
                variable_assigned(self, value, op)
            self._value = frozen(new)
        return self if read_value else None

    def __repr__(self):
        return (f"<mt.Variable '{self.name}' shape={self.shape} "
                f"dtype={_dtype_name(self.dtype)}, numpy={_numpy_repr(self._value)}>")

    __str__ = __repr__


def snapshot(variable):
    """The variable's value as a Tensor with the variable's id, without counting
    as an access (asking for a gradient, or recording a custom gradient's reads,
    is not a read that tapes should watch)."""
    t = Tensor.__new__(Tensor)
    t._value, t._id = variable._value, variable._id
    return t


def frozen(value, dtype=None):
    array = np.array(value, dtype)  # a private, read-only copy: a variable's value, a constant
    array.flags.writeable = False
    return array


def holds_tensors(value):
    """Whether the list or tuple `value` holds a tensor or variable, at any depth."""
    return nest.holds(value, TensorLike)


def _to_numpy(value, dtype, what):
    """NumPy value for `value`, with TensorFlow's defaults for Python numbers:
    floats become float32 and ints int32; NumPy arrays keep their dtype. A
    conversion that would change a number raises (`arguments.fits`). A list
    holding tensors takes the first one's dtype (ops record a Pack: ops/operands.py)."""
    if holds_tensors(value):
        if dtype is None:
            dtype = nest.first(value, TensorLike).dtype
        value = nest.map_leaves(value, TensorLike, lambda v: _to_numpy(v, None, what))
    if isinstance(value, TensorLike):
        array = value._value
        if isinstance(value, Variable):
            value.read_value()  # reading a variable is an access a tape may watch
    elif isinstance(value, (np.ndarray, np.generic)):
        array = value
    else:
        try:
            array = np.asarray(value)
        except ValueError:  # NumPy's "inhomogeneous shape" message
            raise ValueError(f"{what}: cannot convert a non-rectangular Python sequence "
                             f"to a tensor: {value!r:.80}") from None
        if array.dtype == np.float64 and dtype is None:
            array = array.astype(float32)  # (with a dtype: convert once, below)
        elif array.dtype.kind == "i" and not isinstance(value, np.integer):
            if array.size == 0 or (np.abs(array).max() < 2**31):
                array = array.astype(int32)
    if array.dtype.kind not in "biufcUS":
        raise TypeError(f"{what}: cannot convert {type(value).__name__} "
                        f"{value!r:.80} (NumPy dtype {array.dtype}) to a tensor; "
                        "tensors hold numbers, bools or strings")
    if dtype is not None and dtype.kind in "US" and dtype.itemsize == 0 \
            and array.dtype.kind == dtype.kind:
        dtype = None  # mt.string: strings of any length
    if dtype is not None and array.dtype != dtype:
        arguments.fits(what, array, dtype)
        array = array.astype(dtype)
    return array


def constant(value, dtype=None, shape=None, name=None):
    """A new Tensor holding a copy of `value` (Python floats become float32); a
    list holding tensors is refused, as in TensorFlow (it would be detached)."""
    if holds_tensors(value):
        raise ValueError("constant: the list holds tensors or variables, which a constant "
                         "would detach from every tape; use mt.stack or mt.convert_to_tensor")
    array = np.array(_to_numpy(value, as_dtype(dtype, "constant"), "constant"))
    if shape is not None:
        shape = arguments.shape("constant", shape)
        if array.size == 1:
            array = np.full(shape, array.reshape(()), dtype=array.dtype)
        elif array.size == int(np.prod(shape)):
            array = array.reshape(shape)
        else:
            raise ValueError(f"constant: cannot give a value of shape {array.shape} "
                             f"({array.size} elements) the shape {list(shape)}")
    return Tensor(array)


def convert_to_tensor(value, dtype=None, name=None):
    """`value` as a Tensor: tensors pass through, variables are read, the rest copied."""
    dtype = as_dtype(dtype, "convert_to_tensor")
    if type(value) is Tensor and (dtype is None or value._value.dtype == dtype):
        return value
    if isinstance(value, Variable):
        t = value.read_value()
        if dtype is not None and t.dtype != dtype:
            raise TypeError(f"convert_to_tensor: variable {value.name} has dtype "
                            f"{t.dtype}, not {dtype}")
        return t
    if isinstance(value, Tensor):
        raise TypeError(f"convert_to_tensor: tensor has dtype {value.dtype}, not {dtype}; "
                        "use mt.cast")
    return Tensor(np.array(_to_numpy(value, dtype, "convert_to_tensor")))

