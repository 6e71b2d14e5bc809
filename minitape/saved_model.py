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
import contextlib
import errno
import inspect
import io
import json
import math
import os
import re
import shutil
import stat
import struct
import tempfile
import warnings
import zipfile
import zlib

import numpy as np

from . import function as _fn
from .context import state
from .layers import Module
from .specs import TensorSpec
from .tensor import Tensor, Variable

__all__ = ["save", "load", "SaveOptions", "LoadError"]

FORMAT = "minitape-saved-model"
FORMAT_VERSION = 1
JSON_NAME = "saved_model.json"
NPZ_NAME = "variables.npz"
INLINE_ELEMENTS = 16     # constants this small are stored in the JSON
# Limits of what `load` accepts (docs/saved_model_format.md, "Limits"): a file
# of a few bytes must not make the loader, or a call of what it loaded, take
# minutes or gigabytes.
MAX_JSON_BYTES = 4 << 20       # saved_model.json
MAX_JSON_ITEMS = 100_000       # its list items and object fields (counted as commas)
MAX_INT_DIGITS = 20            # an integer in the JSON
MAX_NODES = 10_000             # nodes in all graphs together
MAX_RANK = 32
MAX_DEPTH = 32                 # nesting of argument and output structures
MAX_TENSOR_BYTES = 1 << 28     # any one tensor: variable, constant, input or node output
MAX_ARRAY_BYTES = 1 << 28      # all variables and constants together (variables.npz)
MAX_GRAPH_BYTES = 1 << 29      # all values one call of a graph holds
MAX_GRAPH_WORK = 1 << 30       # element operations (multiply-adds) of one call of a graph
_NPY_HEADER_BYTES = 1 << 16    # room for one .npy header in variables.npz
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
    saved and used after loading; with False only the forward graphs are.
    TensorFlow's other options are accepted and have no effect here."""

    def __init__(self, experimental_custom_gradients=True, namespace_whitelist=None,
                 save_debug_info=False, function_aliases=None, experimental_io_device=None,
                 experimental_variable_policy=None):
        self.experimental_custom_gradients = bool(experimental_custom_gradients)

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
        npz = io.BytesIO()
        np.savez(npz, **arrays)
        _write_file(os.path.join(tmp, JSON_NAME), (_dumps(document) + "\n").encode("utf-8"))
        _write_file(os.path.join(tmp, NPZ_NAME), npz.getvalue())
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
    """Write `data` and make sure it is on disk before the directory is renamed."""
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
        traces = fn.concrete_functions()
        if isinstance(fn, _fn.Function) and fn.input_signature is not None:
            signature_trace = fn.signature_concrete_function(any_rank=True)
            if not any(c is signature_trace for c in traces):
                traces.append(signature_trace)
        if not traces:
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
            "parameters": [_encode_parameter(p) for p in
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
        if getattr(graph, "value_inputs", None):
            raise ValueError(f"save: trace {graph.name} uses the value of its input(s) "
                             f"{sorted(graph.value_inputs)} as Python values (an index, a "
                             "shape, an op attribute), so it is right for those values "
                             "only; a saved model holds traces that work for any value")
        nodes = []
        for node in graph.nodes:
            shapes = node.symbolic or [s.shape for s in node.outputs]
            encoded = {"op": node.op, "name": str(node.name),
                       "inputs": [self.ref(r) for r in node.inputs],
                       "attrs": self.encode_attrs(node),
                       "outputs": [_encode_spec(s, shape) for s, shape in
                                   zip(node.outputs, shapes)]}
            nodes.append(encoded)
        arguments = None
        if graph.args is not None:
            arguments = [_encode_structure(a, lambda x: _encode_argument(x, graph.name))
                         for a in graph.args]
        shapes = graph.symbolic_inputs or [s.shape for s in graph.inputs]
        return {"arguments": arguments,
                "dims": dict(graph.dims),
                "inputs": [_encode_spec(s, shape) for s, shape in zip(graph.inputs, shapes)],
                "captures": graph.num_captures,
                "nodes": nodes,
                "outputs": _encode_structure(graph.outputs,
                                             lambda r: None if r is None else self.ref(r))}

    def encode_attrs(self, node):
        if node.op == "IdentityN":
            key = node.attrs["gradient"]
            graph = _fn.GRADIENT_GRAPHS.get(key)
            if self.options.experimental_custom_gradients and graph is not None:
                self.gradients[key] = self.graph_name(graph)
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


def _encode_spec(spec, shape=()):
    """{"shape", "dtype"}: `shape` (sizes, symbol names, or None for any shape)
    defaults to the spec's own."""
    shape = spec.shape if shape == () else shape
    return {"shape": None if shape is None else list(shape),
            "dtype": _dtype_name(spec.dtype, f"{spec}")}


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
    if isinstance(x, _fn.InputSlot):
        return {"input": x.index}
    if not _is_literal(x):
        raise TypeError(f"save: trace {graph_name} was made for the Python argument {x!r}; "
                        "only tensors and None, bool, int, float and str arguments can be "
                        "saved")
    return {"value": x}


def _encode_parameter(p):
    encoded = {"name": p.name, "kind": p.kind.name}
    if p.default is not p.empty and _is_literal(p.default):
        encoded["default"] = p.default
    return encoded


# --- small checkers: each raises LoadError("where: what") -------------------------------

def _fail(where, message):
    raise LoadError(f"{where}: {message}")


def _brief(x):
    """`x` in an error message: short, whatever it is."""
    if isinstance(x, (list, dict)):
        return f"{_kind(x)} of {len(x)} item(s)"
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind(x):
    if x is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(x), type(x).__name__)


def _check_keys(j, where, required, optional=()):
    _dict(j, where)
    missing = [k for k in required if k not in j]
    if missing:
        _fail(where, f"missing field {missing[0]!r}")
    extra = [k for k in j if k not in required and k not in optional]
    if extra:
        _fail(where, f"unexpected field {_brief(extra[0])}")
    return j


def _dict(x, where):
    if type(x) is not dict:
        _fail(where, f"expected an object, got {_kind(x)}")
    return x


def _list(x, where, max_len=None):
    if type(x) is not list:
        _fail(where, f"expected a list, got {_kind(x)}")
    if max_len is not None and len(x) > max_len:
        _fail(where, f"list is longer than {max_len}")
    return x


def _int(x, where, lo=-(1 << 62), hi=1 << 62):
    if type(x) is not int:
        _fail(where, f"expected an integer, got {_kind(x)}")
    if not lo <= x <= hi:
        _fail(where, f"integer {x} is out of range [{lo}, {hi}]")
    return x


def _bool(x, where):
    if type(x) is not bool:
        _fail(where, f"expected true or false, got {_kind(x)}")
    return x


def _str(x, where, max_len=1 << 16):
    if type(x) is not str:
        _fail(where, f"expected a string, got {_kind(x)}")
    if len(x) > max_len:
        _fail(where, f"string is longer than {max_len} characters")
    return x


def _dtype(x, where):
    if x not in DTYPES:
        _fail(where, f"unknown dtype {_brief(x)} (allowed: {', '.join(DTYPES)})")
    return np.dtype(x)


def _shape(x, where):
    _list(x, where, MAX_RANK)
    if all(type(d) is int and 0 <= d <= MAX_TENSOR_BYTES for d in x):
        shape = tuple(x)  # the usual case, without naming each place
    else:
        shape = tuple(_int(d, f"{where}[{i}]", 0, MAX_TENSOR_BYTES) for i, d in enumerate(x))
    if _size_of(shape) > MAX_TENSOR_BYTES:
        _fail(where, f"shape {list(shape)} has more than {MAX_TENSOR_BYTES} elements")
    return shape


def _tensor_spec(j, where):
    """A {"shape", "dtype"} spec with a known shape, within the one-tensor limit."""
    spec = TensorSpec(_shape(j["shape"], f"{where}.shape"), _dtype(j["dtype"], f"{where}.dtype"))
    if _nbytes(spec) > MAX_TENSOR_BYTES:
        _fail(where, f"{_spec_text(spec)} is more than the limit of {MAX_TENSOR_BYTES} bytes "
              "for one tensor")
    return spec


def _signature_spec(j, where):
    """A spec of an input signature: the shape may be null (any rank) or hold
    null sizes (any size)."""
    _check_keys(j, where, ("shape", "dtype"))
    dtype = _dtype(j["dtype"], f"{where}.dtype")
    if j["shape"] is None:
        return TensorSpec(None, dtype)
    return TensorSpec([None if d is None else _int(d, f"{where}.shape[{i}]", 0,
                                                    MAX_TENSOR_BYTES)
                       for i, d in enumerate(_list(j["shape"], f"{where}.shape", MAX_RANK))],
                      dtype)


def _gradient_key(x, where):
    """A gradient key as `register_gradient_graph` makes them; never another
    registry entry (a built-in op type's rule would run on the wrong op)."""
    if not re.fullmatch(r"CustomGradient-[0-9a-f]+-[0-9]+", _str(x, where, 100)):
        _fail(where, f"{_brief(x)} is not a custom gradient key "
              "('CustomGradient-<hex>-<number>')")
    return x


# --- attributes of each op type, to and from JSON ------------------------------------

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
                _fail(f"{w}.slice", "expected [start, stop, step]")
            parts = [None if p is None else _int(p, f"{w}.slice[{k}]")
                     for k, p in enumerate(parts)]
            if parts[2] == 0:
                _fail(f"{w}.slice", "slice step cannot be zero")
            items.append(slice(*parts))
        elif isinstance(item, dict) and "bool" in item:
            _check_keys(item, w, ("bool",))
            items.append(_bool(item["bool"], f"{w}.bool"))
        elif isinstance(item, dict) and "array" in item:
            _check_keys(item, w, ("array", "dtype", "shape"))
            dtype = _dtype(item["dtype"], f"{w}.dtype")
            if dtype.kind not in "biu":
                _fail(f"{w}.dtype", f"an index array must hold integers or booleans, "
                          f"not {dtype}")
            shape = _shape(item["shape"], f"{w}.shape")
            flat = _flat_numbers(item["array"], shape, f"{w}.array")
            if dtype.kind == "b":
                if not all(type(v) is bool for v in flat):
                    _fail(f"{w}.array", "a bool index array must hold true/false")
            elif not all(type(v) is int and -(1 << 62) <= v <= (1 << 62) for v in flat):
                _fail(f"{w}.array", "an integer index array must hold integers")
            items.append(np.array(flat, dtype=dtype).reshape(shape))
        else:
            _fail(w, f"not an index item: {item!r:.80}")
    return tuple(items)


def _flat_numbers(j, shape, where):
    """The leaves of nested lists `j`, which must have exactly `shape`."""
    level = [j]
    for depth, n in enumerate(shape):
        nxt = []
        for x in level:
            if type(x) is not list or len(x) != n:
                _fail(where, f"does not have shape {list(shape)}")
            nxt.extend(x)
        level = nxt
    if any(type(x) is list for x in level):
        _fail(where, f"does not have shape {list(shape)}")
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
        _fail(where, f"expected a number, got {_kind(x)}")
    return x


def _no_attrs(j, where):
    _check_keys(j, where, ())
    return {}


_NO_ATTRS = (lambda attrs: {}, _no_attrs)
_AXIS = (int, lambda x, w: _int(x, w, -MAX_RANK, MAX_RANK))
_FLAG = (bool, _bool)
_REDUCTION = _attrs_codec({  # axis null: all axes (in graphs for inputs of any rank)
    "axis": (lambda a: None if a is None else list(a),
             lambda x, w: None if x is None else _axes(x, w)),
    "keepdims": _FLAG})
_ATTR_CODECS = {
    "Cast": _attrs_codec({"DstT": (lambda d: _dtype_name(d, "Cast"), _dtype)}),
    "Transpose": _attrs_codec({"perm": (list, _axes)}),
    "PadV2": _attrs_codec({
        "paddings": (lambda p: [list(x) for x in p],
                     lambda x, w: tuple((_int(a[0], w, 0, MAX_TENSOR_BYTES),
                                         _int(a[1], w, 0, MAX_TENSOR_BYTES))
                                        if type(a) is list and len(a) == 2
                                        else _fail(w, "expected [before, after] pairs")
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

    Raises `LoadError` for anything missing, damaged, inconsistent or over the
    limits; the message names the file and the place in it.
    """
    return _Loader(os.fspath(export_dir)).load()


@contextlib.contextmanager
def _tapes_paused():
    """Loading runs small probe ops (see `_probe_dtype`): no tape may record them."""
    saved = state.tapes, state.variable_watchers
    state.tapes, state.variable_watchers = [], []
    try:
        with np.errstate(all="ignore"):
            yield
    finally:
        state.tapes, state.variable_watchers = saved


class _Loader:
    """Reads and checks a saved model, in this order: the two files (regular
    files in the directory, never links, within the size limits); JSON syntax;
    every field's type and the declared sizes (the limits at the top of this
    module); the `.npz` arrays against the declared shapes and dtypes (sizes
    checked before anything is decompressed); references; op types; and then,
    for every graph, each node's output shape, dtype and cost worked out from
    its inputs' specs and attributes, without computing anything
    (`check_graph`). Only then are gradients registered and objects built."""

    def __init__(self, path):
        self.path = path

    @contextlib.contextmanager
    def reading(self, file):
        """Turn any failure while checking `file` into a LoadError naming it."""
        prefix = f"{self.path}: {file}"
        try:
            yield
        except LoadError as e:
            raise LoadError(f"{prefix}: {e}") from None
        except RecursionError:
            raise LoadError(f"{prefix}: nested too deeply") from None
        except Exception as e:  # a gap in the checks: still one documented exception
            raise LoadError(f"{prefix}: {_UNEXPECTED}: {type(e).__name__}: {e}") from e

    def load(self):
        """Open the directory itself without following a link, and read the
        files relative to it (where the system allows: on Windows, by path)."""
        if os.path.islink(self.path):
            raise LoadError(f"{self.path}: no saved model here: it is a symbolic link "
                            "(pass the directory it points to)")
        if not _OPEN_IN_DIRECTORY:
            if not os.path.isdir(self.path):
                raise LoadError(f"{self.path}: no saved model here: not a directory")
            with _tapes_paused():
                return self.load_from(self.path)
        try:
            directory = os.open(self.path, _DIRECTORY_FLAGS)
        except OSError as e:
            raise LoadError(f"{self.path}: no saved model here: {e.strerror}") from None
        try:
            if not stat.S_ISDIR(os.fstat(directory).st_mode):
                raise LoadError(f"{self.path}: no saved model here: not a directory")
            with _tapes_paused():
                return self.load_from(directory)
        finally:
            os.close(directory)

    def load_from(self, directory):
        with self.reading(JSON_NAME):
            document = _parse_json(_read_file(directory, JSON_NAME, MAX_JSON_BYTES))
            expected = self.check_document(document)
        with self.reading(NPZ_NAME):
            arrays = _read_arrays(directory, expected)
        with self.reading(JSON_NAME):
            self.variables = [Variable(arrays[f"v{i}"], trainable=trainable, name=name)
                              for i, (_, name, trainable) in enumerate(self.variable_specs)]
            self.constants = [_read_only(self.inline[i] if i in self.inline else arrays[f"c{i}"])
                              for i in range(len(self.constant_specs))]
            root = self.build(document)
        return root

    # --- the document, up to the arrays ---------------------------------------------
    def check_document(self, doc):
        """Check the top level, the variables and the constants; return the arrays
        the `.npz` must hold: name -> TensorSpec."""
        _check_keys(doc, "the document", ("format", "format_version", "variables", "constants",
                                          "objects", "functions", "graphs", "gradients"))
        if doc["format"] != FORMAT:
            _fail("format", f"expected {FORMAT!r}, got {_brief(doc['format'])}")
        if type(doc["format_version"]) is not int or doc["format_version"] != FORMAT_VERSION:
            _fail("format_version", f"version {_brief(doc['format_version'])} is not "
                  f"supported (this minitape reads version {FORMAT_VERSION})")
        for key in ("graphs", "gradients"):
            _dict(doc[key], key)
        if not _list(doc["objects"], "objects"):
            _fail("objects", "there must be at least the root object")
        _list(doc["functions"], "functions")
        self.variable_specs = []
        expected = {}
        for i, v in enumerate(_list(doc["variables"], "variables")):
            w = f"variables[{i}]"
            _check_keys(v, w, ("name", "shape", "dtype", "trainable"))
            expected[f"v{i}"] = _tensor_spec(v, w)
            self.variable_specs.append((expected[f"v{i}"], _str(v["name"], f"{w}.name", 1000),
                                        _bool(v["trainable"], f"{w}.trainable")))
        self.constant_specs, self.inline = [], {}
        for i, c in enumerate(_list(doc["constants"], "constants")):
            w = f"constants[{i}]"
            _check_keys(c, w, ("shape", "dtype"), ("value",))
            spec = _tensor_spec(c, w)
            self.constant_specs.append(spec)
            if "value" in c:
                self.inline[i] = _inline_value(c["value"], spec, f"{w}.value")
            else:
                expected[f"c{i}"] = spec
        total = sum(_nbytes(s) for s in expected.values())
        if total > MAX_ARRAY_BYTES:
            _fail("variables", f"the variables and constants declare {total} bytes in all, "
                  f"more than the limit of {MAX_ARRAY_BYTES}")
        return expected

    # --- graphs, functions, objects -------------------------------------------------
    def build(self, doc):
        nodes = sum(len(g["nodes"]) for g in doc["graphs"].values()
                    if isinstance(g, dict) and isinstance(g.get("nodes"), list))
        if nodes > MAX_NODES:
            _fail("graphs", f"{nodes} nodes in all, more than the limit of {MAX_NODES}")
        probes = {}
        self.graphs = {name: self.graph(g, f"graphs.{name}", name)
                       for name, g in doc["graphs"].items()}
        self.gradients = {}
        for key, name in doc["gradients"].items():
            w = f"gradients.{key}"
            _gradient_key(key, w)
            if not isinstance(name, str) or name not in self.graphs:
                _fail(w, f"names no saved graph ({_brief(name)})")
            if self.graphs[name].args is not None:
                _fail(w, f"graph {name} is a function trace, not a gradient graph")
            self.gradients[key] = self.graphs[name]
        for name, graph in self.graphs.items():
            try:
                specs = check_graph(graph, graph.inputs, probes)
            except ValueError as e:
                raise LoadError(f"graphs.{name}.{e}") from None
            for node in graph.nodes:  # outputs of any shape: as traced (on scalars)
                node.outputs = specs[node.first:node.first + len(node.outputs)]
            self.check_custom_gradients(graph, f"graphs.{name}")
        functions = [self.function(f, f"functions[{i}]")
                     for i, f in enumerate(doc["functions"])]

        # Everything checked: register the saved gradients under fresh keys.
        # A key (a GradientKey) owns its registration: the graphs' IdentityN
        # nodes and the ops tapes record from them hold it, and when the last
        # holder is gone, so is the registry entry with its graph.
        fresh = {key: _fn.register_gradient_graph(graph)
                 for key, graph in self.gradients.items()}
        for graph in self.graphs.values():
            for node in graph.nodes:
                if node.op == "IdentityN" and node.attrs["gradient"] in fresh:
                    node.attrs["gradient"] = fresh[node.attrs["gradient"]]
        return self.build_objects(doc["objects"], functions)

    def graph(self, j, where, name):
        _check_keys(j, where, ("arguments", "dims", "inputs", "captures", "nodes", "outputs"))
        dims = _dict(j["dims"], f"{where}.dims")
        for d, n in dims.items():
            if not d.isidentifier():
                _fail(f"{where}.dims", f"{_brief(d)} is not a dimension name")
            _int(n, f"{where}.dims.{d}", 0, MAX_TENSOR_BYTES)
        pairs = [self.graph_spec(s, f"{where}.inputs[{i}]", dims)
                 for i, s in enumerate(_list(j["inputs"], f"{where}.inputs"))]
        inputs = [p[0] for p in pairs]
        bound = {d for _, shape in pairs if shape for d in shape if isinstance(d, str)}
        if set(dims) - bound:
            _fail(f"{where}.dims", f"dimension {sorted(set(dims) - bound)[0]!r} appears in "
                  "no input shape")
        captures = _int(j["captures"], f"{where}.captures", 0, len(inputs))
        specs = list(inputs)  # the spec of every value t<k>, as they get defined
        nodes = []
        for i, n in enumerate(_list(j["nodes"], f"{where}.nodes")):
            node = self.node(n, f"{where}.nodes[{i}]", specs, dims)
            nodes.append(node)
            specs.extend(node.outputs)
        outputs = self.structure(j["outputs"], lambda x, w: None if x is None
                                 else self.ref(x, w, specs), f"{where}.outputs")
        args = None
        if j["arguments"] is not None:
            if captures:
                _fail(f"{where}.captures", "a function trace captures nothing")
            args = [self.structure(a, self.argument, f"{where}.arguments[{i}]")
                    for i, a in enumerate(_list(j["arguments"], f"{where}.arguments"))]
            used = sorted(x.index for x in _leaves(args) if isinstance(x, _fn.InputSlot))
            if used != list(range(len(inputs))):
                _fail(f"{where}.arguments", f"must use each of the {len(inputs)} inputs "
                      "exactly once")
        symbolic_inputs = _symbolic(pairs)
        if None not in (symbolic_inputs or ()) and any(
                None in (node.symbolic or ()) for node in nodes):
            _fail(f"{where}.nodes", "a shape may be null only in a graph with an input "
                  "of any shape")
        return _fn.Graph(name, inputs, nodes, outputs, num_captures=captures, args=args,
                         dims=dims, symbolic_inputs=symbolic_inputs)

    def argument(self, x, where):
        if isinstance(x, dict) and "input" in x:
            _check_keys(x, where, ("input",))
            return _fn.InputSlot(_int(x["input"], f"{where}.input", 0, 1 << 20))
        if isinstance(x, dict) and "value" in x:
            _check_keys(x, where, ("value",))
            if not _is_literal(x["value"]):
                _fail(f"{where}.value", "expected null, a boolean, a number or a string")
            return x["value"]
        _fail(where, f'expected {{"input": k}} or {{"value": v}}, got {_brief(x)}')

    def graph_spec(self, j, where, dims):
        """A spec in a graph: (TensorSpec with the traced sizes, the declared
        shape: sizes and symbol names, or None for any shape, which a graph for
        inputs of unknown rank has and which traces as a scalar)."""
        _check_keys(j, where, ("shape", "dtype"))
        if j["shape"] is None:
            return TensorSpec((), _dtype(j["dtype"], f"{where}.dtype")), None
        dims_list = _list(j["shape"], f"{where}.shape", MAX_RANK)
        if not any(isinstance(d, str) for d in dims_list):
            spec = _tensor_spec(j, where)
            return spec, spec.shape
        for i, d in enumerate(dims_list):
            if isinstance(d, str) and d not in dims:
                _fail(f"{where}.shape[{i}]", f"unknown dimension {_brief(d)} (the graph's "
                      f"dims are {sorted(dims)})")
        sample = [dims[d] if isinstance(d, str) else d for d in dims_list]
        return _tensor_spec({"shape": sample, "dtype": j["dtype"]}, where), tuple(dims_list)

    def structure(self, j, leaf, where, depth=0):
        """A nest of {"list"|"tuple"|"dict": ...} whose leaves `leaf` decodes."""
        if depth > MAX_DEPTH:
            _fail(where, f"nested more than {MAX_DEPTH} levels deep")
        if isinstance(j, dict) and len(j) == 1:
            (kind, items), = j.items()
            if kind in ("list", "tuple"):
                built = [self.structure(x, leaf, f"{where}.{kind}[{i}]", depth + 1)
                         for i, x in enumerate(_list(items, f"{where}.{kind}"))]
                return built if kind == "list" else tuple(built)
            if kind == "dict":
                return {k: self.structure(x, leaf, f"{where}.dict.{k}", depth + 1)
                        for k, x in _dict(items, f"{where}.dict").items()}
        return leaf(j, where)

    def ref(self, x, where, specs):
        """A value name: t<k> (defined earlier in this graph), v<k>, c<k>."""
        if type(x) is not str or not 2 <= len(x) <= 12 or x[0] not in "tvc" \
                or not x[1:].isdigit() or not x[1:].isascii():
            _fail(where, f"expected a value name like 't3', 'v0' or 'c1', got {_brief(x)}")
        k = int(x[1:])
        if x[0] == "t":
            if k >= len(specs):
                _fail(where, f"{x} is not defined before this point of the graph "
                      f"(t0..t{len(specs) - 1} are)")
            return _fn.Ref("t", k)
        if x[0] == "v":
            if k >= len(self.variables):
                _fail(where, f"{x}: there are only {len(self.variables)} variables")
            return _fn.Ref("v", self.variables[k])
        if k >= len(self.constants):
            _fail(where, f"{x}: there are only {len(self.constants)} constants")
        return _fn.Ref("c", self.constants[k])

    def node(self, j, where, specs, dims):
        _check_keys(j, where, ("op", "name", "inputs", "attrs", "outputs"))
        op = _str(j["op"], f"{where}.op", 100)
        if op not in ("IdentityN", "AssignVariableOp") and op not in _fn.OPS:
            _fail(f"{where}.op", f"unknown op type {op!r}: not a minitape built-in op")
        name = _str(j["name"], f"{where}.name", 1000)
        inputs = [self.ref(x, f"{where}.inputs[{i}]", specs)
                  for i, x in enumerate(_list(j["inputs"], f"{where}.inputs"))]
        pairs = [self.graph_spec(s, f"{where}.outputs[{i}]", dims)
                 for i, s in enumerate(_list(j["outputs"], f"{where}.outputs"))]
        outputs = [p[0] for p in pairs]
        symbolic = _symbolic(pairs)
        w = f"{where}.attrs"
        if op == "IdentityN":
            a = _check_keys(j["attrs"], w, ("num_inputs", "gradient", "forward", "captures"))
            attrs = {"num_inputs": _int(a["num_inputs"], f"{w}.num_inputs", 0, len(inputs)),
                     "gradient": _gradient_key(a["gradient"], f"{w}.gradient"),
                     "forward": [self.ref(x, f"{w}.forward[{i}]", specs)
                                 for i, x in enumerate(_list(a["forward"], f"{w}.forward"))],
                     "captures": [self.ref(x, f"{w}.captures[{i}]", specs) for i, x in
                                  enumerate(_list(a["captures"], f"{w}.captures"))]}
        elif op == "AssignVariableOp":
            a = _check_keys(j["attrs"], w, ("variable", "mode"))
            ref = self.ref(a["variable"], f"{w}.variable", specs)
            if ref.kind != "v":
                _fail(f"{w}.variable", "expected a variable name like 'v0'")
            if a["mode"] not in ("assign", "assign_add", "assign_sub"):
                _fail(f"{w}.mode", f"expected assign, assign_add or assign_sub, got "
                      f"{_brief(a['mode'])}")
            attrs = {"variable": ref.x, "mode": a["mode"]}
        else:
            attrs = _ATTR_CODECS.get(op, _NO_ATTRS)[1](j["attrs"], w)
        return _fn.Node(op, name, inputs, attrs, outputs, symbolic=symbolic)

    def check_custom_gradients(self, graph, where):
        """Each IdentityN whose gradient graph is known (saved, or live in this
        process) must fit it: upstream specs = the node's outputs, captures =
        the node's captures, one gradient per node input with its spec. (Graphs
        for inputs of any rank are checked for dtypes here; their shapes are
        checked at each call.)"""
        for i, node in enumerate(graph.nodes):
            if node.op != "IdentityN":
                continue
            w = f"{where}.nodes[{i}]"
            key = node.attrs["gradient"]
            grad = self.gradients.get(key) or _fn.GRADIENT_GRAPHS.get(key)
            if grad is None:
                continue  # unknown here: differentiating it raises LookupError
            wanted = list(node.outputs) + [graph.spec_of(r) for r in node.attrs["captures"]]
            same = _same_dtypes if _any_rank(graph) or _any_rank(grad) else _same_specs
            if not same(grad.inputs, wanted) or grad.num_captures != len(node.attrs["captures"]):
                _fail(w, f"the gradient graph of {key} takes {_specs_text(grad.inputs)}, "
                      f"but the node gives it {_specs_text(wanted)}")
            outs = grad.outputs
            if not isinstance(outs, list) or len(outs) != len(node.inputs) or \
                    any(o is not None and not isinstance(o, _fn.Ref) for o in outs):
                _fail(w, f"the gradient graph of {key} must return a list of one gradient "
                      f"(or null) per input of the node ({len(node.inputs)})")
            for k, (o, r) in enumerate(zip(outs, node.inputs)):
                if o is not None and not same([grad.spec_of(o)], [graph.spec_of(r)]):
                    _fail(w, f"the gradient graph of {key} returns "
                          f"{_spec_text(grad.spec_of(o))} for input {k}, which is "
                          f"{_spec_text(graph.spec_of(r))}")

    def function(self, j, where):
        _check_keys(j, where, ("name", "parameters", "input_signature", "traces"))
        name = _str(j["name"], f"{where}.name", 200)
        params = []
        for i, p in enumerate(_list(j["parameters"], f"{where}.parameters")):
            w = f"{where}.parameters[{i}]"
            _check_keys(p, w, ("name", "kind"), ("default",))
            pname = _str(p["name"], f"{w}.name", 200)
            if not pname.isidentifier():
                _fail(f"{w}.name", f"{_brief(pname)} is not a Python identifier")
            kind = p["kind"]
            if kind not in _PARAMETER_KINDS:
                _fail(f"{w}.kind", f"expected one of {_PARAMETER_KINDS}, got {_brief(kind)}")
            default = inspect.Parameter.empty
            if "default" in p:
                if not _is_literal(p["default"]) or kind.startswith("VAR_"):
                    _fail(f"{w}.default", "expected null, a boolean, a number or a string "
                          "(and no default for *args or **kwargs)")
                default = p["default"]
            params.append(inspect.Parameter(pname, getattr(inspect.Parameter, kind),
                                            default=default))
        try:
            signature = inspect.Signature(params)
        except ValueError as e:
            _fail(f"{where}.parameters", str(e))
        input_signature = None
        if j["input_signature"] is not None:
            input_signature = tuple(
                self.structure(s, _signature_spec, f"{where}.input_signature[{i}]")
                for i, s in enumerate(_list(j["input_signature"],
                                            f"{where}.input_signature")))
        traces = {}
        fn = _LoadedFunction(name, signature, input_signature, traces)
        for i, g in enumerate(_list(j["traces"], f"{where}.traces")):
            w = f"{where}.traces[{i}]"
            if not isinstance(g, str) or g not in self.graphs:
                _fail(w, f"names no saved graph ({_brief(g)})")
            graph = self.graphs[g]
            if graph.args is None:
                _fail(w, f"graph {g} is a gradient graph, not a function trace")
            if len(graph.args) != len(signature.parameters):
                _fail(w, f"graph {g} was traced with {len(graph.args)} arguments, the "
                      f"function has {len(signature.parameters)} parameters")
            # Stand-ins of the declared shapes that allocate nothing (zero strides).
            examples = [Tensor(np.broadcast_to(np.zeros((), s.dtype), s.shape))
                        for s in graph.inputs]
            try:
                args, kwargs = call_arguments(signature, graph.args, examples)
                _, _, key = _fn.bind_arguments(signature, input_signature, args, kwargs,
                                               f"function {name}")
                _, _, same = _fn.split_arguments(_fn.fill_arguments(graph.args, examples),
                                                 input_signature, "")
                if key != same:
                    raise ValueError("its arguments bind to the parameters differently")
            except (TypeError, ValueError) as e:
                _fail(w, f"graph {g} does not fit the function's signature: {e}")
            if graph.symbolic_inputs is not None:
                key = _fn.symbolic_key(key, graph)
            if key in traces:
                _fail(w, f"graph {g} repeats the arguments of another trace")
            traces[key] = _fn.ConcreteFunction(fn, graph, key)
            traces[key].polymorphic = graph.symbolic_inputs is not None
        return fn

    def build_objects(self, objects_json, functions):
        objects = [_LoadedObject() for _ in objects_json]
        tables = {"object": objects, "variable": self.variables, "function": functions}

        def value(x, w):
            if not isinstance(x, dict) or len(x) != 1 or next(iter(x)) not in tables:
                _fail(w, "expected {object|variable|function: index}, or a list, tuple or "
                      f"dict of them, got {_brief(x)}")
            (kind, k), = x.items()
            if not tables[kind]:
                _fail(f"{w}.{kind}", f"there are no saved {kind}s")
            return tables[kind][_int(k, f"{w}.{kind}", 0, len(tables[kind]) - 1)]

        for i, o in enumerate(objects_json):
            w = f"objects[{i}]"
            _check_keys(o, w, ("attributes",))
            for name, x in _dict(o["attributes"], f"{w}.attributes").items():
                if not name.isidentifier() or name.startswith("__") and name != "__call__" \
                        or name in _RESERVED:
                    _fail(f"{w}.attributes", f"{_brief(name)} cannot be an attribute name")
                setattr(objects[i], name, self.structure(
                    x, lambda v, w: None if v is None else value(v, w),
                    f"{w}.attributes.{name}"))
        root = objects[0]
        tracked = {id(v) for v in root.variables}
        untracked = [v for v in self.variables if id(v) not in tracked]
        if untracked:
            root._captured_variables = untracked
        return root


def _any_rank(graph):
    return None in (graph.symbolic_inputs or ())


def _same_specs(a, b):
    return list(a) == list(b)


def _same_dtypes(a, b):
    return len(a) == len(b) and all(x.dtype == y.dtype for x, y in zip(a, b))


def _symbolic(pairs):
    """The declared shapes of (spec, shape) pairs when any of them names a
    symbol or is any shape (a polymorphic graph's `symbolic_inputs`, a node's
    `symbolic`), else None."""
    shapes = [shape for _, shape in pairs]
    if all(shape is not None and not any(isinstance(d, str) for d in shape)
           for shape in shapes):
        return None
    return shapes


_RESERVED = ("variables", "trainable_variables", "non_trainable_variables", "submodules",
             "name", "_collect")
_DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) \
    | getattr(os, "O_NONBLOCK", 0)
_OPEN_IN_DIRECTORY = os.open in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) \
    | getattr(os, "O_BINARY", 0)


# --- the two files -----------------------------------------------------------------

def _open_file(directory, name, max_bytes):
    """Open `name` inside the open directory `directory`: only a regular file,
    never through a symbolic link, never blocking (a FIFO is refused, not
    waited on), at most `max_bytes` long. Returns (file object, size)."""
    try:
        if isinstance(directory, int):
            fd = os.open(name, _FILE_FLAGS, dir_fd=directory)
        elif os.path.islink(os.path.join(directory, name)):
            raise OSError(errno.ELOOP, "is a symbolic link")
        else:
            fd = os.open(os.path.join(directory, name), _FILE_FLAGS)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise LoadError("is a symbolic link; a saved model's files must be regular "
                            "files in its directory") from None
        raise LoadError(f"cannot open: {e.strerror}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
        os.close(fd)
        raise LoadError("is not a regular file" if not stat.S_ISREG(info.st_mode) else
                        f"is {info.st_size} bytes, more than the limit of {max_bytes}")
    return os.fdopen(fd, "rb"), info.st_size


def _read_file(directory, name, max_bytes):
    f, _ = _open_file(directory, name, max_bytes)
    with f:
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise LoadError(f"is more than the limit of {max_bytes} bytes")
    return data


def _parse_json(data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LoadError(f"not UTF-8 text (byte {e.start})") from None
    if text.count(",") > MAX_JSON_ITEMS:  # each item costs the checks some microseconds
        raise LoadError(f"holds {text.count(',')} commas, more items than the limit of "
                        f"{MAX_JSON_ITEMS}")
    try:
        return json.loads(text, parse_int=_json_int)
    except json.JSONDecodeError as e:
        raise LoadError(f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") \
            from None
    except _LongInteger as e:
        line, column = _line_column(text, text.find(e.args[0]))
        raise LoadError(f"line {line} column {column}: an integer of {len(e.args[0])} "
                        f"digits (at most {MAX_INT_DIGITS})") from None
    except RecursionError:
        line, column = _line_column(text, _too_deep(text))
        raise LoadError(f"line {line} column {column}: JSON nested too deeply") from None


class _LongInteger(Exception):
    pass


def _json_int(digits):
    """Integers as `json` reads them, refusing absurdly long ones early (Python
    would otherwise stop at 4300 digits with a message that names no place)."""
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise _LongInteger(digits)
    return int(digits)


def _line_column(text, offset):
    offset = max(offset, 0)
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _too_deep(text):
    """Where the brackets of `text` (outside strings) nest deeper than 100."""
    depth = 0
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):
        if m.group() in "[{":
            depth += 1
            if depth > 100:
                return m.start()
        elif m.group() in "]}":
            depth -= 1
    return 0


def _read_arrays(directory, expected):
    """The arrays of the `.npz` file (a zip of `.npy` files), each checked
    against `expected` (name -> TensorSpec) before its data is read. Sizes come
    from the declared specs, and the zip's own directory is checked before
    `zipfile` reads it, so nothing is decompressed or allocated beyond the
    declared sizes. No pickle."""
    slack = _NPY_HEADER_BYTES * (len(expected) + 1)
    f, size = _open_file(directory, NPZ_NAME, MAX_ARRAY_BYTES + slack)
    with f:
        _check_zip_end(f, size, len(expected))
        try:
            z = zipfile.ZipFile(f)
        except _ZIP_ERRORS as e:
            raise LoadError(f"not a zip file: {e}") from None
        with z:
            infos = {i.filename: i for i in z.infolist()}
            names = {f"{n}.npy" for n in expected}
            if len(infos) != len(z.infolist()) or set(infos) != names:
                missing, extra = sorted(names - set(infos)), sorted(set(infos) - names)
                detail = f"missing array {missing[0][:-4]!r}" if missing else \
                    f"unexpected entry {extra[0]!r}" if extra else "duplicate entries"
                raise LoadError(f"{detail} (saved_model.json declares {len(expected)} "
                                "arrays)")
            arrays = {}
            for name in sorted(expected):
                info, spec = infos[f"{name}.npy"], expected[name]
                where = f"array {name}"
                if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) or \
                        info.flag_bits & 0x41 or \
                        not _nbytes(spec) <= info.file_size <= _nbytes(spec) + _NPY_HEADER_BYTES:
                    raise LoadError(f"{where}: its zip entry is not a stored or deflated, "
                                    f"unencrypted .npy of the declared {_spec_text(spec)}")
                try:
                    with z.open(info) as npy:
                        arrays[name] = _read_npy(npy, spec, where)
                except _ZIP_ERRORS as e:
                    raise LoadError(f"{where}: cannot read: {type(e).__name__}: {e}") \
                        from None
    return arrays


# What zipfile and zlib raise for damaged or unsupported archives (versions,
# compression methods, encryption); anything else is a gap in the checks.
_ZIP_ERRORS = (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError,
               RuntimeError, zlib.error, struct.error)


def _check_zip_end(f, size, count):
    """Read the zip's end record (its last 22 bytes, before any comment): it
    must list `count` entries in a small central directory, without zip64
    records, so that `zipfile` has little to parse."""
    f.seek(max(0, size - 22 - 65535))
    tail = f.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        raise LoadError("not a zip file (no end record)")
    entries, directory_size = struct.unpack("<HI", tail[at + 10:at + 16])
    if tail[max(0, at - 20):at - 16] == b"PK\x06\x07" or entries != count or \
            directory_size > (count + 1) * 1024:
        raise LoadError(f"its zip directory lists {entries} entries in {directory_size} "
                        f"bytes (saved_model.json declares {count} arrays)")


def _read_npy(f, spec, where):
    """One `.npy` entry: header checked against the declared spec, then exactly
    that many bytes of data (never pickle)."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(f)
        if version not in ((1, 0), (2, 0)):
            raise ValueError(f"unsupported .npy version {version}")
        read_header = fmt.read_array_header_1_0 if version == (1, 0) else \
            fmt.read_array_header_2_0
        shape, fortran, dtype = read_header(f)
    except Exception as e:
        raise LoadError(f"{where}: bad .npy header: {e}") from None
    if dtype.hasobject or dtype.newbyteorder("=") != spec.dtype.newbyteorder("="):
        raise LoadError(f"{where}: holds dtype {dtype}, saved_model.json declares "
                        f"{spec.dtype}")
    if tuple(shape) != spec.shape:
        raise LoadError(f"{where}: has shape {tuple(shape)}, saved_model.json declares "
                        f"{spec.shape}")
    n = _nbytes(spec)
    data = f.read(n)
    if len(data) != n:
        raise LoadError(f"{where}: truncated ({len(data)} of {n} bytes)")
    if f.read(1):
        raise LoadError(f"{where}: has data after the array")
    array = np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")
    return np.array(array, dtype=spec.dtype)


# --- checking a graph without running it ----------------------------------------------

def check_graph(graph, inputs, probes=None):
    """Work out every node's output shape (and, given a dict `probes` to keep
    the answers of `_probe_dtype` in, its dtype)
    from its inputs' specs and attributes, compare them with the declared
    specs, and add up what one call would cost: values held (bytes) and
    element operations. Nothing is computed. `inputs` are the specs of the
    graph's inputs: its own when loading, a call's when a loaded polymorphic
    function is called (symbols take the sizes they give; outputs of any shape
    get the shapes worked out). Raises ValueError("nodes[i]...: ...")."""
    polymorphic = graph.symbolic_inputs is not None
    dims = _fn.bind_dims(graph, inputs) if polymorphic else {}

    def sized(spec, shape):
        if not polymorphic or shape is None:
            return TensorSpec(shape, spec.dtype)  # None: any shape, worked out below
        return TensorSpec([dims[d] if isinstance(d, str) else d for d in shape], spec.dtype)

    specs = [TensorSpec(s.shape, s.dtype) for s in inputs]
    held = sum(_nbytes(s) for s in specs)
    work = 0
    for i, node in enumerate(graph.nodes):
        declared = [sized(s, shape) for s, shape in
                    zip(node.outputs, node.symbolic or [s.shape for s in node.outputs])]
        ins = [specs[r.x] if r.kind == "t" else graph.spec_of(r) for r in node.inputs]
        try:
            cost, outs = _check_node(node, ins, declared, specs, probes)
        except (ValueError, TypeError, IndexError, ArithmeticError) as e:
            raise ValueError(f"nodes[{i}]: op {node.op} on inputs "
                             f"{_specs_text(ins)}: {e}") from None
        for k, s in enumerate(outs):
            if _nbytes(s) > MAX_TENSOR_BYTES:
                raise ValueError(f"nodes[{i}].outputs[{k}]: {_spec_text(s)} is more than "
                                 f"the limit of {MAX_TENSOR_BYTES} bytes for one tensor")
        work += cost
        held += sum(_nbytes(s) for s in outs)
        specs.extend(outs)
        if held > MAX_GRAPH_BYTES:
            raise ValueError(f"nodes[{i}]: a call would hold {held} bytes of values by "
                             f"here, more than the limit of {MAX_GRAPH_BYTES}")
        if work > MAX_GRAPH_WORK:
            raise ValueError(f"nodes[{i}]: a call would do about {work} element "
                             f"operations by here, more than the limit of {MAX_GRAPH_WORK}")
    return specs


def _check_node(node, ins, outs, specs, probes):
    """Check one node's declared outputs (a shape None: any shape); return its
    cost in element operations and its output specs."""
    op, attrs, shapes = node.op, node.attrs, [s.shape for s in ins]
    if op == "IdentityN":
        forward = [specs[r.x] if r.kind == "t" else TensorSpec(*_shape_dtype(r))
                   for r in attrs["forward"]]
        if len(forward) != len(outs) or any(
                f.dtype != o.dtype or o.shape not in (None, f.shape)
                for f, o in zip(forward, outs)):
            raise ValueError(f"declares outputs {_specs_text(outs)} but its forward values "
                             f"are {_specs_text(forward)}")
        return sum(_size(s) for s in forward), forward
    if op == "AssignVariableOp":
        variable = attrs["variable"]
        target = TensorSpec(variable.shape, variable.dtype)
        if len(ins) != 1 or outs or ins[0] != target:
            raise ValueError(f"takes one value of the variable's {_spec_text(target)} "
                             "and has no outputs")
        return _size(ins[0]), []
    arity = _fn.OPS[op].arity
    if (arity is None and not ins) or (arity is not None and len(ins) != arity):
        raise ValueError(f"takes {'one or more' if arity is None else arity} inputs")
    if len(outs) != 1:
        raise ValueError(f"has one output, {len(outs)} declared")
    out = outs[0]
    shape, work = _output_shape(op, attrs, shapes, out.shape)
    if out.shape is not None and shape != out.shape:
        raise ValueError(f"gives shape {shape}, but the node declares {out.shape}")
    if op in _SAME_DTYPE:
        dtype = ins[0].dtype
    elif probes is None:
        dtype = out.dtype
    else:  # the probe's answer depends only on these (attrs here are hashable)
        key = (op, tuple(sorted(attrs.items())), len(shape),
               tuple((s.dtype, len(s.shape)) for s in ins))
        if key not in probes:
            probes[key] = _probe_dtype(op, attrs, ins, len(shape))
        dtype = probes[key]
    if dtype != out.dtype:
        raise ValueError(f"gives dtype {dtype}, but the node declares {out.dtype}")
    out = TensorSpec(shape, dtype)
    return work + sum(_size(s) for s in ins) + _size(out), [out]


def _output_shape(op, attrs, shapes, declared):
    """(output shape, element operations beyond reading inputs and writing the
    output) by NumPy's and minitape's shape rules. Raises ValueError."""
    if op in _ELEMENTWISE:
        return np.broadcast_shapes(*shapes), 0
    a = shapes[0]
    if declared is None and op in ("Reshape", "BroadcastTo", "StridedSliceGrad"):
        raise ValueError("needs a declared output shape")
    if op == "Reshape":
        if math.prod(a) != math.prod(declared):
            raise ValueError(f"cannot reshape {math.prod(a)} elements to {declared}")
        return declared, 0
    if op == "BroadcastTo":
        return np.broadcast_shapes(a, declared), 0
    if op == "Transpose":
        perm = attrs["perm"]
        if sorted(perm) != list(range(len(a))):
            raise ValueError(f"perm {list(perm)} is not a permutation of {len(a)} axes")
        return tuple(a[p] for p in perm), 0
    if op == "PadV2":
        pads = attrs["paddings"]
        if len(pads) != len(a):
            raise ValueError(f"{len(pads)} paddings for rank {len(a)}")
        return tuple(n + before + after for n, (before, after) in zip(a, pads)), 0
    if op in ("ConcatV2", "Pack"):
        rank = len(a) + (op == "Pack")
        axis = attrs["axis"]
        if not -rank <= axis < rank or (op == "ConcatV2" and not a):
            raise ValueError(f"axis {axis} is out of range for rank {rank}")
        axis %= rank
        if op == "Pack":
            if any(s != a for s in shapes):
                raise ValueError("stacks tensors of different shapes")
            return a[:axis] + (len(shapes),) + a[axis:], 0
        if any(len(s) != len(a) or s[:axis] + s[axis + 1:] != a[:axis] + a[axis + 1:]
               for s in shapes):
            raise ValueError("concatenates tensors whose other sizes differ")
        return a[:axis] + (sum(s[axis] for s in shapes),) + a[axis + 1:], 0
    if op == "StridedSlice":
        return _index_shape(a, attrs["index"]), 0
    if op == "StridedSliceGrad":
        nb = attrs["batch_ndim"]
        if nb > len(a) or nb > len(declared) or a[:nb] != declared[:nb]:
            raise ValueError(f"batch_ndim {nb} does not fit")
        _index_shape(declared[nb:], attrs["index"])
        return declared, 0
    if op in _REDUCTIONS:
        if attrs["axis"] is None:  # all axes
            return (1,) * len(a) if attrs["keepdims"] else (), 0
        rank = max(len(a), 1)  # a scalar takes axis 0 (or -1)
        if any(not -rank <= axis < rank for axis in attrs["axis"]):
            raise ValueError(f"axis {list(attrs['axis'])} is out of range for rank {len(a)}")
        axes, keep = {axis % rank for axis in attrs["axis"]}, attrs["keepdims"]
        return tuple(1 if k in axes else n for k, n in enumerate(a)
                     if keep or k not in axes), 0
    if op == "Softmax":
        if not -len(a) <= attrs["axis"] < len(a):
            raise ValueError(f"axis {attrs['axis']} is out of range for rank {len(a)}")
        return a, 4 * _size_of(a)
    if op in ("MatMul", "MatrixSolve", "MatrixInverse"):
        if any(len(s) < 2 for s in shapes):
            raise ValueError("needs rank >= 2")
        if op == "MatrixInverse":
            if a[-1] != a[-2]:
                raise ValueError("needs square matrices")
            return a, _size_of(a[:-2]) * a[-1] ** 3
        b = shapes[1]
        batch = np.broadcast_shapes(a[:-2], b[:-2])
        if op == "MatrixSolve":
            if a[-1] != a[-2] or b[-2] != a[-1]:
                raise ValueError("needs square matrices and a right side with as many rows")
            return batch + b[-2:], _size_of(batch) * (a[-1] ** 3 + a[-1] ** 2 * b[-1])
        m, k = (a[-1], a[-2]) if attrs["transpose_a"] else (a[-2], a[-1])
        k2, n = (b[-1], b[-2]) if attrs["transpose_b"] else (b[-2], b[-1])
        if k != k2:
            raise ValueError(f"inner sizes {k} and {k2} differ")
        return batch + (m, n), _size_of(batch) * m * n * k
    if op == "Einsum":
        return _einsum_shape(attrs["equation"], shapes)
    raise ValueError("has no shape rule")  # every op in _fn.OPS has one above


def _index_shape(shape, index):
    """The shape `x[index]` has, for an x of `shape`, without allocating x: the
    index is applied to a read-only view with zero strides."""
    arrays = [item.shape for item in index if isinstance(item, np.ndarray)]
    if arrays and _size_of(np.broadcast_shapes(*arrays)) * max(1, _size_of(shape)) \
            > MAX_TENSOR_BYTES:
        raise ValueError("the index selects too many elements")
    return np.broadcast_to(np.zeros((), bool), shape)[index].shape


def _einsum_shape(equation, shapes):
    """(output shape, element operations): NumPy's einsum without `optimize`
    loops over every combination of the distinct indices."""
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
    return tuple(sizes[c] for c in out), len(shapes) * _size_of(sizes.values())


def _probe_dtype(op, attrs, ins, rank):
    """The dtype minitape's own op gives for these input dtypes: run it once on
    inputs of one element each (dtype rules do not depend on sizes). Also
    catches attributes the op refuses."""
    units = [Tensor(np.ones((1,) * len(s.shape), s.dtype)) for s in ins]
    out = _fn.OPS[op].run(units, attrs, [(1,) * rank])
    out = out[0] if isinstance(out, (list, tuple)) else out
    if out.ndim != rank:
        raise ValueError(f"gives rank {out.ndim}, the shape rules rank {rank}")
    return out.dtype


_ELEMENTWISE = frozenset((
    "AddV2", "Sub", "Mul", "RealDiv", "Pow", "Maximum", "Minimum", "SelectV2", "Equal",
    "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual", "Neg", "Square", "Sqrt",
    "Exp", "Log", "Sin", "Cos", "Tanh", "Abs", "Identity", "Sigmoid", "Relu", "Elu",
    "Softplus", "Sign", "Round", "Floor", "StopGradient", "Cast"))
_REDUCTIONS = frozenset(("Sum", "Mean", "Max", "Min", "Prod"))
_SAME_DTYPE = frozenset(("Reshape", "BroadcastTo", "Transpose", "PadV2", "StridedSlice",
                         "StridedSliceGrad", "Identity", "StopGradient"))


def _size_of(shape):
    return math.prod(shape)


def _size(spec):
    return math.prod(spec.shape)


def _nbytes(spec):
    return math.prod(spec.shape) * spec.dtype.itemsize


def _shape_dtype(ref):
    value = ref.x._value if ref.kind == "v" else ref.x
    return value.shape, value.dtype


def _run(graph, inputs, what):
    """Run a loaded graph. A polymorphic one is checked again for the sizes of
    this call first: the limits hold, and its declared shapes fit these sizes."""
    if graph.symbolic_inputs is not None:
        try:
            check_graph(graph, [TensorSpec(t.shape, t.dtype) for t in inputs])
        except ValueError as e:
            raise ValueError(f"loaded {what}, graph {graph.name}: {e}") from None
    return _fn.run_graph(graph, inputs)


def _leaves(s):
    if isinstance(s, dict):
        return [x for v in s.values() for x in _leaves(v)]
    if isinstance(s, (list, tuple)):
        return [x for v in s for x in _leaves(v)]
    return [s]


def _read_only(value):
    array = np.array(value)
    array.flags.writeable = False
    return array


def call_arguments(signature, template, tensors):
    """(args, kwargs) that call a function with a trace's own arguments."""
    values = _fn.fill_arguments(template, tensors)
    params = list(signature.parameters.values())
    for p, v in zip(params, values):
        if p.kind is p.VAR_POSITIONAL and not isinstance(v, tuple) or \
                p.kind is p.VAR_KEYWORD and not isinstance(v, dict):
            raise TypeError(f"parameter {p.name} cannot take {_brief(v)}")
    bound = inspect.BoundArguments(signature, dict(zip([p.name for p in params], values)))
    return bound.args, bound.kwargs


def _spec_text(s):
    return f"{s.dtype}{'[any]' if s.shape is None else list(s.shape)}"


def _specs_text(specs):
    return "[" + ", ".join(_spec_text(s) for s in specs) + "]"


def _inputs_text(graph):
    """A trace's input specs, with the names of its symbolic sizes."""
    shapes = graph.symbolic_inputs or [s.shape for s in graph.inputs]
    return "[" + ", ".join(f"{s.dtype}{list(shape)}"
                           for s, shape in zip(graph.inputs, shapes)) + "]"


def _inline_value(j, spec, where):
    if spec.dtype.kind not in "biuf" or _size(spec) > INLINE_ELEMENTS:
        _fail(where, f"only real constants of at most {INLINE_ELEMENTS} elements are "
              "written inline")
    flat = _flat_numbers(j, spec.shape, where)
    kinds = {"b": (bool,), "i": (int,), "u": (int,), "f": (int, float)}[spec.dtype.kind]
    if not all(type(v) in kinds for v in flat):
        _fail(where, f"expected {spec.dtype} values")
    try:
        return np.array(flat, dtype=spec.dtype).reshape(spec.shape)
    except OverflowError:
        _fail(where, f"a value does not fit {spec.dtype}")


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
        _, tensors, key = self._split(args, kwargs)
        concrete = self._traces.get(key)
        if concrete is None:
            concrete = next((c for k, c in self._traces.items()
                             if c.polymorphic and _fn.key_matches(k, key)), None)
        if concrete is None:
            saved = "; ".join(_inputs_text(c.graph) for c in self._traces.values())
            raise ValueError(
                f"loaded function {self.name} has no trace for these arguments (tensors "
                f"{', '.join(_spec_text(t) for t in tensors) or '()'}); it was saved with "
                f"traces for: {saved or 'nothing'}. "
                "A saved function runs only on the input shapes, dtypes and Python "
                "values it was traced for: call the original with them before saving.")
        return _run(concrete.graph, tensors, f"function {self.name}")

    def concrete_functions(self):
        return list(self._traces.values())

    def __repr__(self):
        return f"<loaded function {self.name}, {len(self._traces)} trace(s)>"
