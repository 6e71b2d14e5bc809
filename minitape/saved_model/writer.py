"""`save`: an object's variables and every `mt.function` on it, with all
their traces and the gradient graphs of custom gradients, written as JSON and
`.npz` into a temporary directory that is then renamed into place, so a
failed save leaves the previous model untouched."""
import io
import json
import os
import shutil
import tempfile
import warnings

import numpy as np

from ..functions.function import Function
from ..graph import GRADIENT_GRAPHS, Ref
from ..functions.signatures import InputSlot
from ..layers import Module
from ..core.tensor import Variable
from .format import (FORMAT, FORMAT_VERSION, INLINE_ELEMENTS, JSON_NAME,
                     NPZ_NAME, attr_codec, dtype_name, is_literal)
from .checks import check_graph
from .limits import MAX_DEPTH, arrays_problem, json_problem, nodes_problem
from .loaded import LoadedFunction


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


def save(obj, export_dir, signatures=None, options=None):
    """Write `obj` (an `mt.Module`, any object with attributes, or an
    `mt.function`) to the directory `export_dir`: its variables, and every
    `mt.function` found on it (methods included) with all its traces. A
    function with an input_signature is traced for it if it was not yet."""
    if options is None:
        options = SaveOptions()
    elif not isinstance(options, SaveOptions):
        raise TypeError(f"save: options must be mt.saved_model.SaveOptions, got {options!r}")
    writer = _Writer(options)
    document, arrays = writer.write(obj)
    text = _dumps(document) + "\n"
    _check_limits(writer, text, arrays)
    _write_directory(os.fspath(export_dir), text, arrays)


def _check_limits(writer, text, arrays):
    """Refuse, before anything is written, what `load` would refuse: the same
    limits, checked by the same functions, with the same messages."""
    problems = [(JSON_NAME, json_problem(text)),
                ("graphs", nodes_problem(sum(len(g.nodes) for g in writer.graph_objects))),
                ("variables", arrays_problem(sum(a.nbytes for a in arrays.values())))]
    for where, problem in problems:
        if problem:
            raise ValueError(f"save: {where}: {problem}, so load would refuse this model")
    for graph in writer.graph_objects:
        try:
            check_graph(graph, graph.inputs)
        except ValueError as e:
            raise ValueError(f"save: graphs.{writer.graph_name(graph)}.{e}, so load would "
                             "refuse this model") from None


def _write_directory(path, text, arrays):
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
        _write_file(os.path.join(tmp, JSON_NAME), text.encode("utf-8"))
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


def is_function(value):
    return isinstance(value, (Function, LoadedFunction))


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
        self.graph_objects = []  # the Graphs written, in order
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
            "variables": [{"name": v._name, "shape": list(v.shape), "dtype": dtype_name(
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
        if is_function(obj):
            found = {"__call__": obj}
        else:
            found = {name: value for name, value in getattr(obj, "__dict__", {}).items()
                     if isinstance(name, str) and (not name.startswith("__")
                                                   or name == "__call__")}
            for cls in type(obj).__mro__:
                for name, value in vars(cls).items():
                    if isinstance(value, Function) and name not in found:
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
        if is_function(value):
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
        if isinstance(fn, Function) and fn.input_signature is not None:
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
            self.graph_objects.append(graph)
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
        for i, node in enumerate(graph.nodes):
            shapes = node.symbolic or [s.shape for s in node.outputs]
            try:
                attrs = self.encode_attrs(node)
            except TypeError as e:
                raise TypeError(f"{e} (graph {graph.name}, nodes[{i}], op {node.op})") from None
            encoded = {"op": node.op, "name": str(node.name),
                       "inputs": [self.ref(r) for r in node.inputs],
                       "attrs": attrs,
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
            graph = GRADIENT_GRAPHS.get(key)
            if self.options.experimental_custom_gradients and graph is not None:
                self.gradients[key] = self.graph_name(graph)
            return {"num_inputs": node.attrs["num_inputs"], "gradient": key,
                    "forward": [self.ref(r) for r in node.attrs["forward"]],
                    "captures": [self.ref(r) for r in node.attrs["captures"]]}
        if node.op == "AssignVariableOp":
            return {"variable": self.ref(Ref("v", node.attrs["variable"])),
                    "mode": node.attrs["mode"]}
        return attr_codec(node.op)[0](node.attrs)


def _inline(array):
    """Small finite real constants are written in the JSON itself, as values."""
    return array.size <= INLINE_ELEMENTS and array.dtype.kind in "biuf" and \
        (array.dtype.kind != "f" or bool(np.isfinite(array).all()))


def _encode_constant(array):
    encoded = {"shape": list(array.shape), "dtype": dtype_name(array.dtype, "a constant")}
    if _inline(array):
        encoded["value"] = array.tolist()
    return encoded


def _encode_spec(spec, shape=()):
    """{"shape", "dtype"}: `shape` (sizes, symbol names, or None for any shape)
    defaults to the spec's own."""
    shape = spec.shape if shape == () else shape
    return {"shape": None if shape is None else list(shape),
            "dtype": dtype_name(spec.dtype, f"{spec}")}


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


def _encode_argument(x, graph_name):
    if isinstance(x, InputSlot):
        return {"input": x.index}
    if not is_literal(x):
        raise TypeError(f"save: trace {graph_name} was made for the Python argument {x!r}; "
                        "only tensors and None, bool, int, float and str arguments can be "
                        "saved")
    return {"value": x}


def _encode_parameter(p):
    encoded = {"name": p.name, "kind": p.kind.name}
    if p.default is not p.empty and is_literal(p.default):
        encoded["default"] = p.default
    return encoded
