"""Saved models: `mt.saved_model.save`, `load`, `SaveOptions` and `LoadError`.

A saved model is a directory with two files (docs/saved_model_format.md
describes every field):

- `saved_model.json`: the format version, the object tree (attributes that
  hold variables, modules and functions), the functions (their parameters,
  input signatures and traces), every graph (input specs, op nodes with their
  attributes and output specs, the output structure), the traced gradient
  graphs of custom gradients, and the names, shapes and dtypes of variables and
  constants.
- `variables.npz`: the values: array `v<i>` for variable i, `c<i>` for constant i.

Loading never runs code from the files: no pickle, no eval, no imports. Ops are
looked up by name in minitape's own table, and everything is checked before
use (see `_Loader`); whatever is wrong raises `LoadError`, saying what and where.
Saving writes into a temporary directory and renames it into place, so a failed
save leaves the previous model untouched.
"""
import math
import os

import numpy as np

from . import function as _fn
from .context import state
from .layers import Module
from .tensor import TensorSpec, Variable

__all__ = ["save", "load", "SaveOptions", "LoadError"]

FORMAT = "minitape-saved-model"
FORMAT_VERSION = 1
JSON_NAME = "saved_model.json"
NPZ_NAME = "variables.npz"
MAX_ELEMENTS = 1 << 26   # per tensor, so a damaged file cannot ask for huge arrays
MAX_RANK = 32
MAX_DEPTH = 32           # nesting of argument and output structures
INLINE_ELEMENTS = 16     # constants this small are stored in the JSON
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
          "uint64", "float16", "float32", "float64", "complex64", "complex128")
_PARAMETER_KINDS = ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD", "VAR_POSITIONAL",
                    "KEYWORD_ONLY", "VAR_KEYWORD")
_UNEXPECTED = "unexpected error while loading"


class LoadError(Exception):
    """`mt.saved_model.load` found something wrong in a saved model. The message
    names the file and the place in it (a path like `graphs.f_1.nodes[3].attrs`)."""


class SaveOptions:
    """Options for `save`. With `experimental_custom_gradients=True` (the
    default, as in TensorFlow) the traced gradient graphs of custom gradients are
    saved and used after loading; with False only the forward graphs are."""

    def __init__(self, experimental_custom_gradients=True, namespace_whitelist=None,
                 save_debug_info=False, function_aliases=None, experimental_io_device=None,
                 experimental_variable_policy=None):
        self.experimental_custom_gradients = bool(experimental_custom_gradients)
        self.namespace_whitelist = namespace_whitelist
        self.save_debug_info = save_debug_info
        self.function_aliases = function_aliases

    def __repr__(self):
        return (f"SaveOptions(experimental_custom_gradients="
                f"{self.experimental_custom_gradients})")


# =================================================================================
# Saving
# =================================================================================

def save(obj, export_dir, signatures=None, options=None):
    """Write `obj` (an `mt.Module`, any object with attributes, or an
    `mt.function`) to the directory `export_dir`: its variables, and every
    `mt.function` found on it (methods included) with all its traces. A
    function with an input_signature is traced for it if it was not yet."""
    if options is None:
        options = SaveOptions()
    elif not isinstance(options, SaveOptions):
        raise TypeError(f"save: options must be mt.saved_model.SaveOptions, got {options!r}")
    document, arrays = _Writer(options).write(obj)
    _write_directory(os.fspath(export_dir), document, arrays)


def _write_directory(path, document, arrays):
    """Write into a fresh temporary directory beside `path`, then rename it into
    place: a failure at any point leaves an existing model as it was."""
    import shutil
    import tempfile

    path = os.path.abspath(path)
    parent, base = os.path.split(path)
    if os.path.lexists(path):
        if not os.path.isdir(path) or os.path.islink(path):
            raise FileExistsError(f"save: {path} exists and is not a directory")
        if os.listdir(path) and not os.path.isfile(os.path.join(path, JSON_NAME)):
            raise FileExistsError(f"save: {path} is a non-empty directory that holds no "
                                  "minitape saved model; refusing to replace it")
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{base}.", suffix=".tmp", dir=parent)
    old = None
    try:
        text = _dumps(document) + "\n"
        _write_file(os.path.join(tmp, JSON_NAME), text.encode("utf-8"))
        with open(os.path.join(tmp, NPZ_NAME), "wb") as f:
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        if os.path.lexists(path):
            old = tempfile.mkdtemp(prefix=f".{base}.", suffix=".old", dir=parent)
            os.rmdir(old)
            os.rename(path, old)
        try:
            os.rename(tmp, path)
        except BaseException:
            if old is not None:
                os.rename(old, path)
                old = None
            raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _dumps(value, indent=""):
    """JSON, one short value per line: whatever fits in 140 characters stays on
    one line (a node's spec, a list of refs), the rest is indented."""
    import json
    flat = json.dumps(value, allow_nan=True)
    if len(flat) + len(indent) <= 140 or not isinstance(value, (dict, list)) or not value:
        return flat
    inner = indent + " "
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k)}: {_dumps(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    items = [inner + _dumps(v, inner) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + indent + "]"


def _write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _is_function(value):
    return isinstance(value, (_fn.Function, _LoadedFunction))


class _Writer:
    """Turns an object, its functions and their graphs into the JSON document
    and the arrays of the `.npz` file."""

    def __init__(self, options):
        self.options = options
        self.variables, self._variable_index = [], {}
        self.constants, self._constant_index = [], {}
        self.objects, self._object_index = [], {}
        self.functions, self._function_index = [], {}
        self.graphs, self._graph_name = {}, {}
        self.gradients = {}
        self._pending_objects, self._pending_graphs = [], []
        self._keep = []  # keeps what is indexed by id() alive while writing

    def write(self, obj):
        if isinstance(obj, Module):
            for v in obj.variables:  # in the order `obj.variables` lists them
                self.variable_index(v)
        self.object_index(obj)
        while self._pending_objects or self._pending_graphs:
            while self._pending_objects:
                index, o = self._pending_objects.pop(0)
                self.objects[index] = {"attributes": self.attributes(o)}
            while self._pending_graphs:
                name, graph = self._pending_graphs.pop(0)
                self.graphs[name] = self.encode_graph(graph)
        document = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "variables": [{"name": v._name, "shape": list(v.shape), "dtype": _dtype_name(
                v.dtype, f"variable {v.name}"), "trainable": bool(v.trainable)}
                for v in self.variables],
            "constants": [_encode_constant(c) for c in self.constants],
            "objects": self.objects,
            "functions": self.functions,
            "graphs": self.graphs,
            "gradients": self.gradients,
        }
        arrays = {f"v{i}": np.asarray(v._value) for i, v in enumerate(self.variables)}
        arrays.update({f"c{i}": np.asarray(c) for i, c in enumerate(self.constants)
                       if not _inline(c)})
        return document, arrays

    # --- the object tree ----------------------------------------------------------
    def object_index(self, obj):
        index = self._object_index.get(id(obj))
        if index is None:
            index = self._object_index[id(obj)] = len(self.objects)
            self.objects.append(None)
            self._keep.append(obj)
            self._pending_objects.append((index, obj))
        return index

    def attributes(self, obj):
        if _is_function(obj):
            found = {"__call__": obj}
        else:
            found = {name: value for name, value in getattr(obj, "__dict__", {}).items()
                     if isinstance(name, str) and (not name.startswith("__")
                                                   or name == "__call__")}
            for cls in type(obj).__mro__:
                for name, value in vars(cls).items():
                    if isinstance(value, _fn.Function) and name not in found:
                        found[name] = getattr(obj, name)
        attributes = {}
        for name, value in found.items():
            encoded = self.value(value, 0, f"{type(obj).__name__}.{name}")
            if encoded is not None:
                attributes[name] = encoded
        return attributes

    def value(self, value, depth, where):
        """A trackable value (variable, module, function, or a list, tuple or dict
        holding some) as JSON, or None for anything else."""
        if isinstance(value, Variable):
            return {"variable": self.variable_index(value)}
        if _is_function(value):
            index = self.function_index(value, where)
            return None if index is None else {"function": index}
        if isinstance(value, Module):
            return {"object": self.object_index(value)}
        if depth >= MAX_DEPTH:
            return None
        if isinstance(value, (list, tuple)):
            items = [self.value(v, depth + 1, f"{where}[{i}]") for i, v in enumerate(value)]
            if all(item is None for item in items):
                return None
            return {"list" if isinstance(value, list) else "tuple": items}
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            items = {k: self.value(v, depth + 1, f"{where}[{k!r}]") for k, v in value.items()}
            if all(item is None for item in items.values()):
                return None
            return {"dict": items}
        return None

    def variable_index(self, variable):
        index = self._variable_index.get(id(variable))
        if index is None:
            index = self._variable_index[id(variable)] = len(self.variables)
            self.variables.append(variable)
        return index

    def constant_index(self, array):
        """Constants are shared by content (small ones) or by identity."""
        key = (array.dtype.str, array.shape, array.tobytes()) if array.size <= 4096 \
            else id(array)
        index = self._constant_index.get(key)
        if index is None:
            index = self._constant_index[key] = len(self.constants)
            self.constants.append(array)
            self._keep.append(array)
        return index

    # --- functions and graphs -----------------------------------------------------
    def function_index(self, fn, where):
        index = self._function_index.get(id(fn))
        if index is not None:
            return index
        # Traces for inputs of unknown rank (TensorSpec(None)) are not in the format yet.
        traces = [c for c in fn.concrete_functions()
                  if None not in (c.graph.symbolic_inputs or ())]
        if isinstance(fn, _fn.Function) and fn.input_signature is not None:
            signature_trace = fn.signature_concrete_function()
            if not any(c is signature_trace for c in traces):
                traces.append(signature_trace)
        if not traces:
            import warnings
            warnings.warn(f"save: {where} is an mt.function that was never called and has "
                          "no input_signature, so it has no trace to save; it is left out",
                          stacklevel=4)
            return None
        self._keep.append(fn)
        index = self._function_index[id(fn)] = len(self.functions)
        self.functions.append(None)
        signature = None
        if fn.input_signature is not None:
            signature = [_encode_structure(s, _encode_spec) for s in fn.input_signature]
        self.functions[index] = {
            "name": fn.name,
            "parameters": [_encode_parameter(p, fn.name) for p in
                           fn._signature.parameters.values()],
            "input_signature": signature,
            "traces": [self.graph_name(c.graph) for c in traces],
        }
        return index

    def graph_name(self, graph):
        name = self._graph_name.get(id(graph))
        if name is None:
            name, n = graph.name, 1
            while name in self.graphs or name in self._graph_name.values():
                n += 1
                name = f"{graph.name}_{n}"
            self._graph_name[id(graph)] = name
            self.graphs[name] = None
            self._keep.append(graph)
            self._pending_graphs.append((name, graph))
        return name

    def ref(self, r):
        if r.kind == "t":
            return f"t{r.x}"
        if r.kind == "v":
            return f"v{self.variable_index(r.x)}"
        return f"c{self.constant_index(r.x)}"

    def encode_graph(self, graph):
        nodes = []
        for node in graph.nodes:
            symbolic = node.symbolic or [None] * len(node.outputs)
            encoded = {"op": node.op, "name": str(node.name),
                       "inputs": [self.ref(r) for r in node.inputs],
                       "attrs": self.encode_attrs(node),
                       "outputs": [_encode_spec(s, sym) for s, sym in
                                   zip(node.outputs, symbolic)]}
            nodes.append(encoded)
        arguments = None
        if graph.args is not None:
            arguments = [_encode_structure(a, lambda x: _encode_argument(x, graph.name))
                         for a in graph.args]
        symbolic = graph.symbolic_inputs or [None] * len(graph.inputs)
        return {"arguments": arguments,
                "dims": dict(graph.dims),
                "inputs": [_encode_spec(s, sym) for s, sym in zip(graph.inputs, symbolic)],
                "captures": graph.num_captures,
                "nodes": nodes,
                "outputs": _encode_structure(graph.outputs,
                                             lambda r: None if r is None else self.ref(r))}

    def encode_attrs(self, node):
        if node.op == "IdentityN":
            key = node.attrs["gradient"]
            if self.options.experimental_custom_gradients and key in _fn.GRADIENT_GRAPHS:
                self.gradients[key] = self.graph_name(_fn.GRADIENT_GRAPHS[key])
            return {"num_inputs": node.attrs["num_inputs"], "gradient": key,
                    "forward": [self.ref(r) for r in node.attrs["forward"]],
                    "captures": [self.ref(r) for r in node.attrs["captures"]]}
        if node.op == "AssignVariableOp":
            return {"variable": self.ref(_fn.Ref("v", node.attrs["variable"])),
                    "mode": node.attrs["mode"]}
        return _ATTR_CODECS.get(node.op, _NO_ATTRS)[0](node.attrs)


def _dtype_name(dtype, what):
    name = np.dtype(dtype).name
    if name not in DTYPES:
        raise TypeError(f"save: {what} has dtype {dtype}, which a saved model cannot hold "
                        f"(allowed: {', '.join(DTYPES)})")
    return name


def _inline(array):
    """Small finite real constants are written in the JSON itself, as values."""
    return array.size <= INLINE_ELEMENTS and array.dtype.kind in "biuf" and \
        (array.dtype.kind != "f" or bool(np.isfinite(array).all()))


def _encode_constant(array):
    encoded = {"shape": list(array.shape), "dtype": _dtype_name(array.dtype, "a constant")}
    if _inline(array):
        encoded["value"] = array.tolist()
    return encoded


def _encode_spec(spec, symbolic=None):
    shape = list(symbolic) if symbolic is not None else \
        None if spec.shape is None else list(spec.shape)
    return {"shape": shape, "dtype": _dtype_name(spec.dtype, f"{spec}")}


def _encode_structure(s, leaf):
    if isinstance(s, dict):
        if not all(isinstance(k, str) for k in s):
            raise TypeError(f"save: only dicts with string keys can be saved, got {s!r}")
        return {"dict": {k: _encode_structure(v, leaf) for k, v in s.items()}}
    if isinstance(s, list):
        return {"list": [_encode_structure(v, leaf) for v in s]}
    if isinstance(s, tuple):
        return {"tuple": [_encode_structure(v, leaf) for v in s]}
    return leaf(s)


def _is_literal(value):
    return value is None or type(value) in (bool, int, float, str)


def _encode_argument(x, graph_name):
    if isinstance(x, _fn._Input):
        return {"input": x.index}
    if not _is_literal(x):
        raise TypeError(f"save: trace {graph_name} was made for the Python argument {x!r}; "
                        "only tensors and None, bool, int, float and str arguments can be "
                        "saved")
    return {"value": x}


def _encode_parameter(p, fn_name):
    encoded = {"name": p.name, "kind": p.kind.name}
    if p.default is not p.empty and _is_literal(p.default):
        encoded["default"] = p.default
    return encoded


# --- attributes of each op type, to and from JSON ------------------------------------

def _dec_fail(where, message):
    raise LoadError(f"{where}: {message}")


def _check_keys(j, where, required, optional=()):
    if not isinstance(j, dict):
        _dec_fail(where, f"expected an object, got {_kind(j)}")
    missing = [k for k in required if k not in j]
    if missing:
        _dec_fail(where, f"missing field {missing[0]!r}")
    extra = [k for k in j if k not in required and k not in optional]
    if extra:
        _dec_fail(where, f"unexpected field {extra[0]!r}")
    return j


def _kind(x):
    if x is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(x), type(x).__name__)


def _int(x, where, lo=-(1 << 62), hi=1 << 62):
    if type(x) is not int:
        _dec_fail(where, f"expected an integer, got {_kind(x)}")
    if not lo <= x <= hi:
        _dec_fail(where, f"integer {x} is out of range [{lo}, {hi}]")
    return x


def _bool(x, where):
    if type(x) is not bool:
        _dec_fail(where, f"expected true or false, got {_kind(x)}")
    return x


def _str(x, where, max_len=1 << 16):
    if type(x) is not str:
        _dec_fail(where, f"expected a string, got {_kind(x)}")
    if len(x) > max_len:
        _dec_fail(where, f"string is longer than {max_len} characters")
    return x


def _list(x, where, max_len=None):
    if type(x) is not list:
        _dec_fail(where, f"expected a list, got {_kind(x)}")
    if max_len is not None and len(x) > max_len:
        _dec_fail(where, f"list is longer than {max_len}")
    return x


def _gradient_key(x, where):
    """A gradient key as `register_gradient_graph` makes them; never another
    registry entry (a built-in op type's rule would run on the wrong op)."""
    _str(x, where, 100)
    prefix, _, rest = x.partition("-")
    token, _, number = rest.partition("-")
    if prefix != "CustomGradient" or not token or not number or not number.isdigit() \
            or not number.isascii() or any(c not in "0123456789abcdef" for c in token):
        _dec_fail(where, f"{x!r:.60} is not a custom gradient key "
                  "('CustomGradient-<hex>-<number>')")
    return x


def _dtype(x, where):
    if x not in DTYPES:
        _dec_fail(where, f"unknown dtype {x!r} (allowed: {', '.join(DTYPES)})")
    return np.dtype(x)


def _shape(x, where):
    _list(x, where, MAX_RANK)
    shape = tuple(_int(d, f"{where}[{i}]", 0, MAX_ELEMENTS) for i, d in enumerate(x))
    if math.prod(shape) > MAX_ELEMENTS:
        _dec_fail(where, f"shape {list(shape)} has more than {MAX_ELEMENTS} elements")
    return shape


def _axes(x, where):
    return tuple(_int(a, f"{where}[{i}]", -MAX_RANK, MAX_RANK)
                 for i, a in enumerate(_list(x, where, MAX_RANK)))


def _encode_index(index):
    items = []
    for item in index:
        if item is None:
            items.append(None)
        elif item is Ellipsis:
            items.append("...")
        elif isinstance(item, (bool, np.bool_)):
            items.append({"bool": bool(item)})
        elif isinstance(item, (int, np.integer)):
            items.append(int(item))
        elif isinstance(item, slice):
            parts = [item.start, item.stop, item.step]
            if not all(p is None or isinstance(p, (int, np.integer)) for p in parts):
                raise TypeError(f"save: cannot save the slice {item!r}")
            items.append({"slice": [None if p is None else int(p) for p in parts]})
        elif isinstance(item, np.ndarray) and item.dtype.kind in "biu":
            items.append({"array": item.tolist(), "dtype": _dtype_name(item.dtype, "an index"),
                          "shape": list(item.shape)})
        else:
            raise TypeError(f"save: cannot save the index item {item!r}")
    return items


def _decode_index(j, where):
    items = []
    for i, item in enumerate(_list(j, where, MAX_RANK)):
        w = f"{where}[{i}]"
        if item is None:
            items.append(None)
        elif item == "...":
            items.append(Ellipsis)
        elif type(item) is int:
            items.append(_int(item, w))
        elif isinstance(item, dict) and "slice" in item:
            _check_keys(item, w, ("slice",))
            parts = _list(item["slice"], f"{w}.slice")
            if len(parts) != 3:
                _dec_fail(f"{w}.slice", "expected [start, stop, step]")
            parts = [None if p is None else _int(p, f"{w}.slice[{k}]")
                     for k, p in enumerate(parts)]
            if parts[2] == 0:
                _dec_fail(f"{w}.slice", "slice step cannot be zero")
            items.append(slice(*parts))
        elif isinstance(item, dict) and "bool" in item:
            _check_keys(item, w, ("bool",))
            items.append(_bool(item["bool"], f"{w}.bool"))
        elif isinstance(item, dict) and "array" in item:
            _check_keys(item, w, ("array", "dtype", "shape"))
            dtype = _dtype(item["dtype"], f"{w}.dtype")
            if dtype.kind not in "biu":
                _dec_fail(f"{w}.dtype", f"an index array must hold integers or booleans, "
                          f"not {dtype}")
            shape = _shape(item["shape"], f"{w}.shape")
            flat = _flat_numbers(item["array"], shape, f"{w}.array")
            if dtype.kind == "b":
                if not all(type(v) is bool for v in flat):
                    _dec_fail(f"{w}.array", "a bool index array must hold true/false")
            elif not all(type(v) is int and -(1 << 62) <= v <= (1 << 62) for v in flat):
                _dec_fail(f"{w}.array", "an integer index array must hold integers")
            items.append(np.array(flat, dtype=dtype).reshape(shape))
        else:
            _dec_fail(w, f"not an index item: {item!r:.80}")
    return tuple(items)


def _flat_numbers(j, shape, where):
    """The leaves of nested lists `j`, which must have exactly `shape`."""
    level = [j]
    for depth, n in enumerate(shape):
        nxt = []
        for x in level:
            if type(x) is not list or len(x) != n:
                _dec_fail(where, f"does not have shape {list(shape)}")
            nxt.extend(x)
        level = nxt
    if any(type(x) is list for x in level):
        _dec_fail(where, f"does not have shape {list(shape)}")
    return level


def _attrs_codec(fields):
    """A codec for attributes given as {name: (encode, decode)}."""
    def encode(attrs):
        return {k: enc(attrs[k]) for k, (enc, _) in fields.items()}

    def decode(j, where):
        _check_keys(j, where, tuple(fields))
        return {k: dec(j[k], f"{where}.{k}") for k, (_, dec) in fields.items()}
    return encode, decode


def _same(x):
    return x


def _scalar(x, where):
    if type(x) not in (int, float, bool):
        _dec_fail(where, f"expected a number, got {_kind(x)}")
    return x


def _no_attrs(j, where):
    _check_keys(j, where, ())
    return {}


_NO_ATTRS = (lambda attrs: {}, _no_attrs)
_AXIS = (int, lambda x, w: _int(x, w, -MAX_RANK, MAX_RANK))
_FLAG = (bool, _bool)
_REDUCTION = _attrs_codec({"axis": (list, _axes), "keepdims": _FLAG})
_ATTR_CODECS = {
    "Cast": _attrs_codec({"DstT": (lambda d: _dtype_name(d, "Cast"), _dtype)}),
    "Transpose": _attrs_codec({"perm": (list, _axes)}),
    "PadV2": _attrs_codec({
        "paddings": (lambda p: [list(x) for x in p],
                     lambda x, w: tuple((_int(a[0], w, 0, MAX_ELEMENTS),
                                         _int(a[1], w, 0, MAX_ELEMENTS))
                                        if type(a) is list and len(a) == 2
                                        else _dec_fail(w, "expected [before, after] pairs")
                                        for a in _list(x, w, MAX_RANK))),
        "constant_values": (_same, _scalar)}),
    "ConcatV2": _attrs_codec({"axis": _AXIS}),
    "Pack": _attrs_codec({"axis": _AXIS}),
    "StridedSlice": _attrs_codec({"index": (_encode_index, _decode_index)}),
    "StridedSliceGrad": _attrs_codec({"index": (_encode_index, _decode_index),
                                      "batch_ndim": (int, lambda x, w: _int(x, w, 0, MAX_RANK))}),
    "Sum": _REDUCTION, "Mean": _REDUCTION, "Max": _REDUCTION, "Min": _REDUCTION,
    "Prod": _REDUCTION,
    "MatMul": _attrs_codec({"transpose_a": _FLAG, "transpose_b": _FLAG}),
    "MatrixSolve": _attrs_codec({"adjoint": _FLAG}),
    "Einsum": _attrs_codec({"equation": (str, lambda x, w: _str(x, w, 1000))}),
    "Softmax": _attrs_codec({"axis": _AXIS}),
}


# =================================================================================
# Loading
# =================================================================================

def load(export_dir, tags=None, options=None):
    """Load a model written by `save`: an object with the saved attributes,
    variables (restored) and functions (`loaded.call_custom_grad(x)`).

    Raises `LoadError` for anything missing, damaged or inconsistent.
    """
    path = os.fspath(export_dir)
    try:
        return _Loader(path).load()
    except LoadError:
        raise
    except RecursionError:
        raise LoadError(f"{path}: the saved model is nested too deeply") from None
    except Exception as e:  # a gap in the checks: still one documented exception
        raise LoadError(f"{path}: {_UNEXPECTED}: {type(e).__name__}: {e}") from e


class _Loader:
    """Reads and checks a saved model, in this order: JSON syntax and every
    field's type; the `.npz` arrays against the declared shapes and dtypes;
    references (every `t`/`v`/`c` name points at a value defined earlier in the
    same graph, or at a saved variable or constant); op types (built-in ones, or
    IdentityN naming a gradient); shapes and dtypes, statically for ops whose
    output size depends on attributes, then by a dry run of every graph on
    synthetic inputs that compares each node's outputs with its declared specs.
    Only then are gradients registered and objects built."""

    def __init__(self, path):
        self.path = path

    def fail(self, where, message):
        raise LoadError(f"{self.path}: {JSON_NAME}: {where}: {message}")

    # --- files --------------------------------------------------------------------
    def read_json(self):
        import json
        file = os.path.join(self.path, JSON_NAME)
        if not os.path.isdir(self.path):
            raise LoadError(f"{self.path}: no saved model here (not a directory)")
        try:
            with open(file, "rb") as f:
                data = f.read()
        except OSError as e:
            raise LoadError(f"{self.path}: cannot read {JSON_NAME}: {e.strerror or e}") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise LoadError(f"{file}: not UTF-8 text (byte {e.start})") from None
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise LoadError(f"{file}: not valid JSON: {e.msg} at line {e.lineno} "
                            f"column {e.colno}") from None

    def read_arrays(self, expected):
        """The arrays of the `.npz` file, each checked against `expected`
        (name -> (shape, dtype)) before its data is read. No pickle."""
        import zipfile
        file = os.path.join(self.path, NPZ_NAME)
        arrays = {}
        try:
            with zipfile.ZipFile(file) as z:
                names = z.namelist()
                if len(names) != len(set(names)):
                    raise LoadError(f"{file}: duplicate arrays")
                found = {n[:-4] for n in names if n.endswith(".npy")}
                if len(found) != len(names) or found != set(expected):
                    missing = sorted(set(expected) - found)
                    extra = sorted(set(names) - {f"{n}.npy" for n in expected})
                    detail = f"missing array {missing[0]!r}" if missing else \
                        f"unexpected entry {extra[0]!r}"
                    raise LoadError(f"{file}: {detail} (saved_model.json declares "
                                    f"{len(expected)} arrays)")
                for name in sorted(expected):
                    with z.open(f"{name}.npy") as f:
                        arrays[name] = _read_npy(f, *expected[name], f"{file}: array {name}")
        except LoadError:
            raise
        except Exception as e:  # zipfile and zlib raise many kinds
            raise LoadError(f"{file}: cannot read: {type(e).__name__}: {e}") from None
        return arrays

    # --- the document -------------------------------------------------------------
    def load(self):
        doc = self.read_json()
        _check_keys(doc, f"{self.path}: {JSON_NAME}",
                    ("format", "format_version", "variables", "constants", "objects",
                     "functions", "graphs", "gradients"))
        if doc["format"] != FORMAT:
            self.fail("format", f"expected {FORMAT!r}, got {doc['format']!r:.80}")
        version = doc["format_version"]
        if version != FORMAT_VERSION or type(version) is not int:
            self.fail("format_version", f"version {version!r:.40} is not supported (this "
                      f"minitape reads version {FORMAT_VERSION})")
        where = f"{self.path}: {JSON_NAME}"
        try:
            return self._load(doc)
        except LoadError as e:
            if str(e).startswith(self.path):
                raise
            raise LoadError(f"{where}: {e}") from None

    def _load(self, doc):
        var_specs = [self.variable_spec(v, f"variables[{i}]")
                     for i, v in enumerate(_list(doc["variables"], "variables"))]
        constants_json = _list(doc["constants"], "constants")
        const_specs, inline = [], {}
        for i, c in enumerate(constants_json):
            w = f"constants[{i}]"
            _check_keys(c, w, ("shape", "dtype"), ("value",))
            spec = self.tensor_spec({"shape": c["shape"], "dtype": c["dtype"]}, w)
            const_specs.append(spec)
            if "value" in c:
                inline[i] = _inline_value(c["value"], spec, f"{w}.value")
        expected = {f"v{i}": (s[0], s[1]) for i, s in enumerate(var_specs)}
        expected.update({f"c{i}": (s.shape, s.dtype) for i, s in enumerate(const_specs)
                         if i not in inline})
        graphs_json = doc["graphs"]
        if not isinstance(graphs_json, dict):
            self.fail("graphs", f"expected an object, got {_kind(graphs_json)}")
        functions_json = _list(doc["functions"], "functions")
        objects_json = _list(doc["objects"], "objects")
        gradients_json = doc["gradients"]
        if not isinstance(gradients_json, dict):
            self.fail("gradients", f"expected an object, got {_kind(gradients_json)}")
        if not objects_json:
            self.fail("objects", "there must be at least the root object")

        arrays = self.read_arrays(expected)
        self.variables = [Variable(arrays[f"v{i}"], trainable=s[3], name=s[2])
                          for i, s in enumerate(var_specs)]
        self.constants = [_fn._frozen(inline[i] if i in inline else arrays[f"c{i}"])
                          for i in range(len(const_specs))]
        self.const_specs = const_specs

        self.graphs = {}
        for name, g in graphs_json.items():
            self.graphs[name] = self.graph(g, f"graphs.{name}", name)
        self.gradients = {}
        for key, name in gradients_json.items():
            w = f"gradients.{key}"
            _gradient_key(key, w)
            if not isinstance(name, str) or name not in self.graphs:
                self.fail(w, f"names no saved graph ({name!r:.80})")
            graph = self.graphs[name]
            if graph.args is not None:
                self.fail(w, f"graph {name} is a function trace, not a gradient graph")
            self.gradients[key] = graph
        for name, graph in self.graphs.items():
            self.check_custom_gradients(graph, f"graphs.{name}")
        functions = [self.function(f, f"functions[{i}]") for i, f in enumerate(functions_json)]
        for name, graph in self.graphs.items():
            self.dry_run(graph, f"graphs.{name}")

        # Everything checked: register the saved gradients under fresh keys.
        fresh = {key: _fn.register_gradient_graph(graph)
                 for key, graph in self.gradients.items()}
        for graph in self.graphs.values():
            for node in graph.nodes:
                if node.op == "IdentityN" and node.attrs["gradient"] in fresh:
                    node.attrs["gradient"] = fresh[node.attrs["gradient"]]
        return self.build_objects(objects_json, functions)

    def variable_spec(self, j, where):
        _check_keys(j, where, ("name", "shape", "dtype", "trainable"))
        return (_shape(j["shape"], f"{where}.shape"), _dtype(j["dtype"], f"{where}.dtype"),
                _str(j["name"], f"{where}.name", 1000), _bool(j["trainable"],
                                                             f"{where}.trainable"))

    def graph_spec(self, j, where, dims):
        """A spec in a graph: (TensorSpec with the traced sizes, the shape with
        symbol names where the graph is polymorphic, or None)."""
        _check_keys(j, where, ("shape", "dtype"))
        dtype = _dtype(j["dtype"], f"{where}.dtype")
        dims_list = _list(j["shape"], f"{where}.shape", MAX_RANK)
        if not any(isinstance(d, str) for d in dims_list):
            return TensorSpec(_shape(dims_list, f"{where}.shape"), dtype), None
        for i, d in enumerate(dims_list):
            if isinstance(d, str) and d not in dims:
                self.fail(f"{where}.shape[{i}]", f"unknown dimension {d!r:.40} (the graph's "
                          f"dims are {sorted(dims)})")
        sample = [dims[d] if isinstance(d, str) else d for d in dims_list]
        return TensorSpec(_shape(sample, f"{where}.shape"), dtype), tuple(dims_list)

    def tensor_spec(self, j, where, known_shape=True):
        _check_keys(j, where, ("shape", "dtype"))
        dtype = _dtype(j["dtype"], f"{where}.dtype")
        if not known_shape and j["shape"] is None:
            return TensorSpec(None, dtype)
        if not known_shape:
            dims = _list(j["shape"], f"{where}.shape", MAX_RANK)
            return TensorSpec([None if d is None else _int(d, f"{where}.shape[{i}]", 0,
                                                            MAX_ELEMENTS)
                               for i, d in enumerate(dims)], dtype)
        return TensorSpec(_shape(j["shape"], f"{where}.shape"), dtype)

    def structure(self, j, leaf, where, depth=0):
        if depth > MAX_DEPTH:
            self.fail(where, f"nested more than {MAX_DEPTH} levels deep")
        if isinstance(j, dict) and len(j) == 1:
            (kind, items), = j.items()
            if kind in ("list", "tuple"):
                items = _list(items, f"{where}.{kind}")
                built = [self.structure(x, leaf, f"{where}.{kind}[{i}]", depth + 1)
                         for i, x in enumerate(items)]
                return built if kind == "list" else tuple(built)
            if kind == "dict":
                if not isinstance(items, dict):
                    self.fail(f"{where}.dict", f"expected an object, got {_kind(items)}")
                return {k: self.structure(x, leaf, f"{where}.dict.{k}", depth + 1)
                        for k, x in items.items()}
        return leaf(j, where)

    # --- graphs -------------------------------------------------------------------
    def graph(self, j, where, name):
        _check_keys(j, where, ("arguments", "dims", "inputs", "captures", "nodes", "outputs"))
        dims = j["dims"]
        if not isinstance(dims, dict):
            self.fail(f"{where}.dims", f"expected an object, got {_kind(dims)}")
        for d, n in dims.items():
            if not d.isidentifier():
                self.fail(f"{where}.dims", f"{d!r:.40} is not a dimension name")
            _int(n, f"{where}.dims.{d}", 0, MAX_ELEMENTS)
        pairs = [self.graph_spec(s, f"{where}.inputs[{i}]", dims)
                 for i, s in enumerate(_list(j["inputs"], f"{where}.inputs"))]
        inputs = [p[0] for p in pairs]
        bound = {d for _, sym in pairs if sym for d in sym if isinstance(d, str)}
        if set(dims) - bound:
            self.fail(f"{where}.dims", f"dimension {sorted(set(dims) - bound)[0]!r} "
                      "appears in no input shape")
        symbolic_inputs = [sym or p.shape for p, sym in pairs] if dims else None
        captures = _int(j["captures"], f"{where}.captures", 0, len(inputs))
        specs = list(inputs)  # the spec of every value t<k>, as they get defined
        nodes = []
        for i, n in enumerate(_list(j["nodes"], f"{where}.nodes")):
            node = self.node(n, f"{where}.nodes[{i}]", specs, dims)
            nodes.append(node)
            specs.extend(node.outputs)

        def output(x, w):
            return None if x is None else self.ref(x, w, specs)
        outputs = self.structure(j["outputs"], output, f"{where}.outputs")
        args = None
        if j["arguments"] is not None:
            if captures:
                self.fail(f"{where}.captures", "a function trace captures nothing")
            seen = []

            def argument(x, w):
                if isinstance(x, dict) and "input" in x:
                    _check_keys(x, w, ("input",))
                    k = _int(x["input"], f"{w}.input", 0, len(inputs) - 1)
                    seen.append(k)
                    return _fn._Input(k)
                if isinstance(x, dict) and "value" in x:
                    _check_keys(x, w, ("value",))
                    if not _is_literal(x["value"]):
                        self.fail(f"{w}.value", "expected null, a boolean, a number or "
                                  "a string")
                    return x["value"]
                self.fail(w, f"expected {{\"input\": k}} or {{\"value\": v}}, got {x!r:.80}")
            args = [self.structure(a, argument, f"{where}.arguments[{i}]")
                    for i, a in enumerate(_list(j["arguments"], f"{where}.arguments"))]
            if sorted(seen) != list(range(len(inputs))):
                self.fail(f"{where}.arguments", f"must use each of the {len(inputs)} "
                          "inputs exactly once")
        graph = _fn.Graph(name, inputs, nodes, outputs, num_captures=captures, args=args,
                          dims=dims, symbolic_inputs=symbolic_inputs)
        graph.value_specs = specs
        return graph

    def ref(self, x, where, specs):
        """A value name: t<k> (defined earlier in this graph), v<k>, c<k>."""
        if type(x) is not str or len(x) < 2 or len(x) > 12 or x[0] not in "tvc" \
                or not x[1:].isdigit() or not x[1:].isascii():
            self.fail(where, f"expected a value name like 't3', 'v0' or 'c1', got {x!r:.80}")
        k = int(x[1:])
        if x[0] == "t":
            if k >= len(specs):
                self.fail(where, f"{x} is not defined before this point of the graph "
                          f"(t0..t{len(specs) - 1} are)")
            return _fn.Ref("t", k)
        if x[0] == "v":
            if k >= len(self.variables):
                self.fail(where, f"{x}: there are only {len(self.variables)} variables")
            return _fn.Ref("v", self.variables[k])
        if k >= len(self.constants):
            self.fail(where, f"{x}: there are only {len(self.constants)} constants")
        return _fn.Ref("c", self.constants[k])

    def spec_of(self, ref, specs):
        if ref.kind == "t":
            return specs[ref.x]
        value = ref.x._value if ref.kind == "v" else ref.x
        return TensorSpec(value.shape, value.dtype)

    def node(self, j, where, specs, dims):
        _check_keys(j, where, ("op", "name", "inputs", "attrs", "outputs"))
        op = _str(j["op"], f"{where}.op", 100)
        if op not in ("IdentityN", "AssignVariableOp") and op not in _fn.OPS:
            self.fail(f"{where}.op", f"unknown op type {op!r}: not a minitape built-in op")
        name = _str(j["name"], f"{where}.name", 1000)
        inputs = [self.ref(x, f"{where}.inputs[{i}]", specs)
                  for i, x in enumerate(_list(j["inputs"], f"{where}.inputs"))]
        pairs = [self.graph_spec(s, f"{where}.outputs[{i}]", dims)
                 for i, s in enumerate(_list(j["outputs"], f"{where}.outputs"))]
        outputs = [p[0] for p in pairs]
        symbolic = [sym or p.shape for p, sym in pairs] if any(sym for _, sym in pairs) \
            else None
        w = f"{where}.attrs"
        if op == "IdentityN":
            a = _check_keys(j["attrs"], w, ("num_inputs", "gradient", "forward", "captures"))
            attrs = {"num_inputs": _int(a["num_inputs"], f"{w}.num_inputs", 0, len(inputs)),
                     "gradient": _gradient_key(a["gradient"], f"{w}.gradient"),
                     "forward": [self.ref(x, f"{w}.forward[{i}]", specs)
                                 for i, x in enumerate(_list(a["forward"], f"{w}.forward"))],
                     "captures": [self.ref(x, f"{w}.captures[{i}]", specs) for i, x in
                                  enumerate(_list(a["captures"], f"{w}.captures"))]}
            if len(attrs["forward"]) != len(outputs):
                self.fail(f"{w}.forward", f"{len(attrs['forward'])} forward values for "
                          f"{len(outputs)} outputs")
            for k, (r, s) in enumerate(zip(attrs["forward"], outputs)):
                if self.spec_of(r, specs) != s:
                    self.fail(f"{where}.outputs[{k}]", f"declared {_spec_text(s)} but its "
                              f"forward value is {_spec_text(self.spec_of(r, specs))}")
        elif op == "AssignVariableOp":
            a = _check_keys(j["attrs"], w, ("variable", "mode"))
            ref = self.ref(a["variable"], f"{w}.variable", specs)
            if ref.kind != "v":
                self.fail(f"{w}.variable", "expected a variable name like 'v0'")
            if a["mode"] not in ("assign", "assign_add", "assign_sub"):
                self.fail(f"{w}.mode", f"expected assign, assign_add or assign_sub, got "
                          f"{a['mode']!r:.40}")
            attrs = {"variable": ref.x, "mode": a["mode"]}
            if len(inputs) != 1 or outputs:
                self.fail(where, "AssignVariableOp takes one input and has no outputs")
        else:
            attrs = _ATTR_CODECS.get(op, _NO_ATTRS)[1](j["attrs"], w)
            arity = _fn.OPS[op].arity
            if (arity is None and not inputs) or (arity is not None and len(inputs) != arity):
                self.fail(f"{where}.inputs", f"op {op} takes "
                          f"{'one or more' if arity is None else arity} inputs, got "
                          f"{len(inputs)}")
            if len(outputs) != 1:
                self.fail(f"{where}.outputs", f"op {op} has one output, got {len(outputs)}")
            self.check_shapes(op, attrs, [self.spec_of(r, specs) for r in inputs],
                              outputs[0], where)
        return _fn.Node(op, name, inputs, attrs, outputs, symbolic=symbolic)

    def check_shapes(self, op, attrs, ins, out, where):
        """Shape rules for the ops whose output size is not bounded by their
        inputs' (broadcasting, matmul, padding, scatter, einsum), checked before
        the dry run allocates anything."""
        shapes = [s.shape for s in ins]
        try:
            if op in _BROADCASTING:
                expected = np.broadcast_shapes(*shapes)
            elif op == "MatMul":
                a, b = shapes
                if len(a) < 2 or len(b) < 2:
                    raise ValueError("needs rank >= 2")
                m = a[-1] if attrs["transpose_a"] else a[-2]
                n = b[-2] if attrs["transpose_b"] else b[-1]
                expected = np.broadcast_shapes(a[:-2], b[:-2]) + (m, n)
            elif op == "MatrixSolve":
                a, b = shapes
                if len(a) < 2 or len(b) < 2:
                    raise ValueError("needs rank >= 2")
                expected = np.broadcast_shapes(a[:-2], b[:-2]) + b[-2:]
            elif op == "PadV2":
                pads = attrs["paddings"]
                if len(pads) != len(shapes[0]):
                    raise ValueError(f"{len(pads)} paddings for rank {len(shapes[0])}")
                expected = tuple(n + a + b for n, (a, b) in zip(shapes[0], pads))
            elif op == "StridedSliceGrad":
                nb = attrs["batch_ndim"]
                if nb > len(shapes[0]) or nb > len(out.shape) or \
                        shapes[0][:nb] != out.shape[:nb]:
                    raise ValueError(f"batch_ndim {nb} does not fit")
                return
            elif op == "StridedSlice":
                arrays = [a.shape for a in attrs["index"] if isinstance(a, np.ndarray)]
                if arrays and math.prod(np.broadcast_shapes(*arrays)) \
                        * max(1, math.prod(shapes[0])) > MAX_ELEMENTS:
                    raise ValueError("the index selects too many elements")
                return
            elif op == "Einsum":
                expected = _einsum_shape(attrs["equation"], shapes)
            else:
                return
        except ValueError as e:
            self.fail(where, f"op {op} on inputs of shapes {shapes}: {e}")
        if tuple(expected) != out.shape:
            self.fail(f"{where}.outputs[0]", f"op {op} on inputs of shapes {shapes} gives "
                      f"shape {tuple(expected)}, but the node declares {out.shape}")

    def check_custom_gradients(self, graph, where):
        """Each IdentityN whose gradient graph is known (saved, or live in this
        process) must fit it: upstream specs = the node's outputs, captures =
        the node's captures, one gradient per node input with its spec."""
        for i, node in enumerate(graph.nodes):
            if node.op != "IdentityN":
                continue
            w = f"{where}.nodes[{i}]"
            key = node.attrs["gradient"]
            grad = self.gradients.get(key) or _fn.GRADIENT_GRAPHS.get(key)
            if grad is None:
                continue  # unknown here: differentiating it raises LookupError
            wanted = list(node.outputs) + [self.spec_of(r, graph.value_specs)
                                           for r in node.attrs["captures"]]
            if grad.inputs != wanted or grad.num_captures != len(node.attrs["captures"]):
                self.fail(w, f"the gradient graph of {key} takes "
                          f"{[_spec_text(s) for s in grad.inputs]}, but the node gives it "
                          f"{[_spec_text(s) for s in wanted]}")
            outs = grad.outputs
            if not isinstance(outs, list) or len(outs) != len(node.inputs) or \
                    any(o is not None and not isinstance(o, _fn.Ref) for o in outs):
                self.fail(w, f"the gradient graph of {key} must return a list of one "
                          f"gradient (or null) per input of the node ({len(node.inputs)})")
            specs = getattr(grad, "value_specs", None)
            for k, (o, r) in enumerate(zip(outs, node.inputs)):
                if o is None:
                    continue
                got = self.spec_of(o, specs) if specs is not None else grad.spec_of(o)
                need = self.spec_of(r, graph.value_specs)
                if got != need:
                    self.fail(w, f"the gradient graph of {key} returns "
                              f"{_spec_text(got)} for input {k}, which is "
                              f"{_spec_text(need)}")

    def function(self, j, where):
        import inspect
        _check_keys(j, where, ("name", "parameters", "input_signature", "traces"))
        name = _str(j["name"], f"{where}.name", 200)
        params = []
        for i, p in enumerate(_list(j["parameters"], f"{where}.parameters")):
            w = f"{where}.parameters[{i}]"
            _check_keys(p, w, ("name", "kind"), ("default",))
            pname = _str(p["name"], f"{w}.name", 200)
            if not pname.isidentifier():
                self.fail(f"{w}.name", f"{pname!r:.80} is not a Python identifier")
            kind = p["kind"]
            if kind not in _PARAMETER_KINDS:
                self.fail(f"{w}.kind", f"expected one of {_PARAMETER_KINDS}, got {kind!r:.80}")
            default = inspect.Parameter.empty
            if "default" in p:
                if not _is_literal(p["default"]) or kind.startswith("VAR_"):
                    self.fail(f"{w}.default", "expected null, a boolean, a number or a "
                              "string (and no default for *args or **kwargs)")
                default = p["default"]
            params.append(inspect.Parameter(pname, getattr(inspect.Parameter, kind),
                                            default=default))
        try:
            signature = inspect.Signature(params)
        except ValueError as e:
            self.fail(f"{where}.parameters", str(e))
        input_signature = None
        if j["input_signature"] is not None:
            input_signature = tuple(
                self.structure(s, lambda x, w: self.tensor_spec(x, w, known_shape=False),
                               f"{where}.input_signature[{i}]")
                for i, s in enumerate(_list(j["input_signature"],
                                            f"{where}.input_signature")))
        traces = {}
        fn = _LoadedFunction(name, signature, input_signature, traces)
        for i, g in enumerate(_list(j["traces"], f"{where}.traces")):
            w = f"{where}.traces[{i}]"
            if not isinstance(g, str) or g not in self.graphs:
                self.fail(w, f"names no saved graph ({g!r:.80})")
            graph = self.graphs[g]
            if graph.args is None:
                self.fail(w, f"graph {g} is a gradient graph, not a function trace")
            if len(graph.args) != len(signature.parameters):
                self.fail(w, f"graph {g} was traced with {len(graph.args)} arguments, the "
                          f"function has {len(signature.parameters)} parameters")
            examples = [_fn.Tensor(np.zeros(s.shape, s.dtype)) for s in graph.inputs]
            try:
                args, kwargs = call_arguments(signature, graph.args, examples)
                _, _, key = _fn.bind_arguments(signature, input_signature, args, kwargs,
                                               f"function {name}")
                values = _fn.fill_arguments(graph.args, examples)
                _, _, same = _fn.split_arguments(values, input_signature, "")
                if key != same:
                    raise ValueError("its arguments bind to the parameters differently")
            except (TypeError, ValueError) as e:
                self.fail(w, f"graph {g} does not fit the function's signature: {e}")
            if graph.dims:
                key = _fn.symbolic_key(key, graph)
            if key in traces:
                self.fail(w, f"graph {g} repeats the arguments of another trace")
            traces[key] = _fn.ConcreteFunction(fn, graph, key)
            traces[key].polymorphic = bool(graph.dims)
        return fn

    def dry_run(self, graph, where):
        """Run the graph once on synthetic inputs, tapes off, checking every
        node's outputs against its declared specs."""
        rng = np.random.RandomState(0)
        inputs = [_fn.Tensor(_example(s, rng)) for s in graph.inputs]
        saved = state.tapes, state.variable_watchers
        state.tapes, state.variable_watchers = [], []
        try:
            with np.errstate(all="ignore"):
                _fn.run_graph(graph, inputs, check=True)
        except _fn.NodeError as e:
            self.fail(f"{where}.nodes[{e.index}]", f"does not run as declared: op "
                      f"{e.node.op}: {type(e.error).__name__}: {e.error}")
        finally:
            state.tapes, state.variable_watchers = saved

    # --- objects ------------------------------------------------------------------
    def build_objects(self, objects_json, functions):
        objects = [_LoadedObject() for _ in objects_json]

        def value(x, w, depth=0):
            if depth > MAX_DEPTH:
                self.fail(w, f"nested more than {MAX_DEPTH} levels deep")
            if not isinstance(x, dict) or len(x) != 1:
                self.fail(w, f"expected one of {{object|variable|function|list|tuple|dict: "
                          f"...}}, got {x!r:.80}")
            (kind, v), = x.items()
            if kind in ("object", "variable", "function"):
                table = {"object": objects, "variable": self.variables,
                         "function": functions}[kind]
                if not table:
                    self.fail(f"{w}.{kind}", f"there are no saved {kind}s")
                return table[_int(v, f"{w}.{kind}", 0, len(table) - 1)]
            if kind in ("list", "tuple"):
                items = [None if item is None else value(item, f"{w}.{kind}[{i}]", depth + 1)
                         for i, item in enumerate(_list(v, f"{w}.{kind}"))]
                return items if kind == "list" else tuple(items)
            if kind == "dict":
                if not isinstance(v, dict):
                    self.fail(f"{w}.dict", f"expected an object, got {_kind(v)}")
                return {k: None if item is None else value(item, f"{w}.dict.{k}", depth + 1)
                        for k, item in v.items()}
            self.fail(w, f"unknown kind {kind!r:.80}")

        for i, o in enumerate(objects_json):
            w = f"objects[{i}]"
            _check_keys(o, w, ("attributes",))
            attributes = o["attributes"]
            if not isinstance(attributes, dict):
                self.fail(f"{w}.attributes", f"expected an object, got {_kind(attributes)}")
            for name, x in attributes.items():
                if not name.isidentifier() or name.startswith("__") and name != "__call__" \
                        or name in _RESERVED:
                    self.fail(f"{w}.attributes", f"{name!r:.80} cannot be an attribute name")
                setattr(objects[i], name, value(x, f"{w}.attributes.{name}"))
        root = objects[0]
        tracked = {id(v) for v in root.variables}
        untracked = [v for v in self.variables if id(v) not in tracked]
        if untracked:
            root._captured_variables = untracked
        return root


_BROADCASTING = ("AddV2", "Sub", "Mul", "RealDiv", "Pow", "Maximum", "Minimum", "SelectV2",
                 "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual")
_RESERVED = ("variables", "trainable_variables", "non_trainable_variables", "submodules",
             "name", "_collect")


def call_arguments(signature, template, tensors):
    """(args, kwargs) that call a function with a trace's own arguments."""
    import inspect
    values = _fn.fill_arguments(template, tensors)
    params = list(signature.parameters.values())
    for p, v in zip(params, values):
        if p.kind is p.VAR_POSITIONAL and not isinstance(v, tuple) or \
                p.kind is p.VAR_KEYWORD and not isinstance(v, dict):
            raise TypeError(f"parameter {p.name} cannot take {v!r:.60}")
    bound = inspect.BoundArguments(signature, dict(zip([p.name for p in params], values)))
    return bound.args, bound.kwargs


def _spec_text(s, symbolic=None):
    return f"{s.dtype}{list(symbolic or s.shape)}"


def _example(spec, rng):
    if spec.dtype.kind in "fc":
        return rng.standard_normal(spec.shape).astype(spec.dtype)
    return np.zeros(spec.shape, spec.dtype)


def _einsum_shape(equation, shapes):
    lhs, arrow, out = equation.partition("->")
    if not arrow:
        raise ValueError(f"equation {equation!r} is not explicit")
    subs = lhs.split(",")
    if len(subs) != len(shapes):
        raise ValueError(f"equation {equation!r} names {len(subs)} operands")
    sizes = {}
    for sub, shape in zip(subs, shapes):
        if len(sub) != len(shape) or not all(c.isascii() and c.isalpha() for c in sub):
            raise ValueError(f"subscripts {sub!r} do not fit shape {shape}")
        for c, n in zip(sub, shape):
            if sizes.setdefault(c, n) != n:
                raise ValueError(f"index {c!r} has sizes {sizes[c]} and {n}")
    if len(set(out)) != len(out) or any(c not in sizes for c in out):
        raise ValueError(f"output subscripts {out!r} are not distinct input indices")
    return tuple(sizes[c] for c in out)


def _inline_value(j, spec, where):
    if spec.dtype.kind not in "biuf" or math.prod(spec.shape) > INLINE_ELEMENTS:
        _dec_fail(where, f"only real constants of at most {INLINE_ELEMENTS} elements are "
                  "written inline")
    flat = _flat_numbers(j, spec.shape, where)
    kinds = {"b": (bool,), "i": (int,), "u": (int,), "f": (int, float)}[spec.dtype.kind]
    if not all(type(v) in kinds for v in flat):
        _dec_fail(where, f"expected {spec.dtype} values")
    try:
        with np.errstate(all="ignore"):
            return np.array(flat, dtype=spec.dtype).reshape(spec.shape)
    except OverflowError:
        _dec_fail(where, f"a value does not fit {spec.dtype}")


def _read_npy(f, shape, dtype, where):
    """One `.npy` entry: header checked against the declared shape and dtype,
    then exactly that many bytes of data (never pickle)."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(f)
        if version == (1, 0):
            got_shape, fortran, got_dtype = fmt.read_array_header_1_0(f)
        elif version == (2, 0):
            got_shape, fortran, got_dtype = fmt.read_array_header_2_0(f)
        else:
            raise LoadError(f"{where}: unsupported .npy version {version}")
    except LoadError:
        raise
    except Exception as e:
        raise LoadError(f"{where}: bad .npy header: {e}") from None
    if got_dtype.hasobject or got_dtype.newbyteorder("=") != dtype.newbyteorder("="):
        raise LoadError(f"{where}: holds dtype {got_dtype}, saved_model.json declares {dtype}")
    if tuple(got_shape) != tuple(shape):
        raise LoadError(f"{where}: has shape {tuple(got_shape)}, saved_model.json "
                        f"declares {tuple(shape)}")
    n = int(np.prod(shape, dtype=np.int64)) * got_dtype.itemsize
    data = f.read(n)
    if len(data) != n:
        raise LoadError(f"{where}: truncated ({len(data)} of {n} bytes)")
    if f.read(1):
        raise LoadError(f"{where}: has data after the array")
    array = np.frombuffer(data, dtype=got_dtype).reshape(shape, order="F" if fortran else "C")
    return np.array(array, dtype=dtype)


# --- loaded objects and functions -----------------------------------------------------

class _LoadedObject(Module):
    """What `load` returns: the saved attributes (variables, modules, functions)."""

    def __init__(self):
        super().__init__("loaded")

    def __call__(self, *args, **kwargs):
        fn = self.__dict__.get("__call__")
        if fn is None:
            raise TypeError("this loaded object has no saved __call__ function")
        return fn(*args, **kwargs)

    def __repr__(self):
        names = [k for k in vars(self) if not k.startswith("_")]
        return f"<mt.saved_model loaded object with {names}>"


class _LoadedFunction:
    """A saved function: its traces, dispatched on the arguments' shapes, dtypes
    and Python values. It cannot trace anything new: the Python code is not saved."""

    def __init__(self, name, signature, input_signature, traces):
        self.name = name
        self._signature = signature
        self.input_signature = input_signature
        self._traces = traces

    def _split(self, args, kwargs):
        return _fn.bind_arguments(self._signature, self.input_signature, args, kwargs,
                                  f"loaded function {self.name}")

    def __call__(self, *args, **kwargs):
        template, tensors, key = self._split(args, kwargs)
        concrete = self._traces.get(key)
        if concrete is None:
            concrete = next((c for k, c in self._traces.items()
                             if c.polymorphic and _fn.key_matches(k, key)), None)
        if concrete is None:
            given = ", ".join(f"{t.dtype}{list(t.shape)}" for t in tensors)
            saved = "; ".join(", ".join(_spec_text(s, sym) for s, sym in zip(
                c.graph.inputs, c.graph.symbolic_inputs or [None] * len(c.graph.inputs)))
                or "()" for c in self._traces.values())
            raise ValueError(
                f"loaded function {self.name} has no trace for these arguments (tensors "
                f"{given or '()'}); it was saved with traces for: {saved or 'nothing'}. "
                "A saved function runs only on the input shapes, dtypes and Python "
                "values it was traced for: call the original with them before saving.")
        return _fn.run_graph(concrete.graph, tensors)

    def concrete_functions(self):
        return list(self._traces.values())

    def __repr__(self):
        return f"<loaded function {self.name}, {len(self._traces)} trace(s)>"
