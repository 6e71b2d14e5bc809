"""`load`: read, check, then build. Nothing from the files runs as code: ops
are looked up by name in minitape's own table, and everything is checked
before it is used; whatever is wrong raises `LoadError`, naming the file and
the place in it."""
import contextlib
import inspect
import os
import stat

import numpy as np

from ..functions.function import ConcreteFunction
from ..graph import register_gradient_graph
from ..functions.signatures import bind_arguments, fill_arguments, split_arguments, symbolic_key
from ..core.context import state
from ..core.tensor import Tensor, Variable
from .checks import check_graph
from .files import DIRECTORY_FLAGS, OPEN_IN_DIRECTORY, parse_json, read_arrays, read_file
from .format import (FORMAT, FORMAT_VERSION, INLINE_ELEMENTS, JSON_NAME, NPZ_NAME,
                     PARAMETER_KINDS, UNEXPECTED, LoadError, brief, check_bool, check_dict,
                     check_int, check_keys, check_list, check_str, fail, flat_numbers,
                     gradient_key, is_literal, signature_spec, tensor_spec)
from .graph_reader import GraphReader, structure
from .limits import MAX_JSON_BYTES, arrays_problem, nbytes, nodes_problem, size
from .loaded import LoadedFunction, LoadedObject, call_arguments


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
    checked before anything is decompressed); references; op types (the graphs
    through `GraphReader`); and then, for every graph, each node's output shape,
    dtype and cost worked out from its inputs' specs and attributes, without
    computing anything (`check_graph`). Only then are gradients registered and
    objects built."""

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
            raise LoadError(f"{prefix}: {UNEXPECTED}: {type(e).__name__}: {e}") from e

    def load(self):
        """Open the directory itself without following a link, and read the
        files relative to it (where the system allows: on Windows, by path)."""
        if os.path.islink(self.path):
            raise LoadError(f"{self.path}: no saved model here: it is a symbolic link "
                            "(pass the directory it points to)")
        if not OPEN_IN_DIRECTORY:
            if not os.path.isdir(self.path):
                raise LoadError(f"{self.path}: no saved model here: not a directory")
            with _tapes_paused():
                return self.load_from(self.path)
        try:
            directory = os.open(self.path, DIRECTORY_FLAGS)
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
            document = parse_json(read_file(directory, JSON_NAME, MAX_JSON_BYTES))
            expected = self.check_document(document)
        with self.reading(NPZ_NAME):
            arrays = read_arrays(directory, expected)
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
        check_keys(doc, "the document", ("format", "format_version", "variables", "constants",
                                          "objects", "functions", "graphs", "gradients"))
        if doc["format"] != FORMAT:
            fail("format", f"expected {FORMAT!r}, got {brief(doc['format'])}")
        if type(doc["format_version"]) is not int or doc["format_version"] != FORMAT_VERSION:
            fail("format_version", f"version {brief(doc['format_version'])} is not "
                  f"supported (this minitape reads version {FORMAT_VERSION})")
        for key in ("graphs", "gradients"):
            check_dict(doc[key], key)
        if not check_list(doc["objects"], "objects"):
            fail("objects", "there must be at least the root object")
        check_list(doc["functions"], "functions")
        self.variable_specs = []
        expected = {}
        for i, v in enumerate(check_list(doc["variables"], "variables")):
            w = f"variables[{i}]"
            check_keys(v, w, ("name", "shape", "dtype", "trainable"))
            expected[f"v{i}"] = tensor_spec(v, w)
            self.variable_specs.append((expected[f"v{i}"], check_str(v["name"], f"{w}.name", 1000),
                                        check_bool(v["trainable"], f"{w}.trainable")))
        self.constant_specs, self.inline = [], {}
        for i, c in enumerate(check_list(doc["constants"], "constants")):
            w = f"constants[{i}]"
            check_keys(c, w, ("shape", "dtype"), ("value",))
            spec = tensor_spec(c, w)
            self.constant_specs.append(spec)
            if "value" in c:
                self.inline[i] = _inline_value(c["value"], spec, f"{w}.value")
            else:
                expected[f"c{i}"] = spec
        total = sum(nbytes(s) for s in expected.values())
        if arrays_problem(total):
            fail("variables", arrays_problem(total))
        return expected

    # --- graphs, functions, objects -------------------------------------------------
    def build(self, doc):
        nodes = sum(len(g["nodes"]) for g in doc["graphs"].values()
                    if isinstance(g, dict) and isinstance(g.get("nodes"), list))
        if nodes_problem(nodes):
            fail("graphs", nodes_problem(nodes))
        probes = {}
        graphs = GraphReader(self.variables, self.constants)
        self.graphs = {name: graphs.graph(g, f"graphs.{name}", name)
                       for name, g in doc["graphs"].items()}
        self.gradients = {}
        for key, name in doc["gradients"].items():
            w = f"gradients.{key}"
            gradient_key(key, w)
            if not isinstance(name, str) or name not in self.graphs:
                fail(w, f"names no saved graph ({brief(name)})")
            if self.graphs[name].args is not None:
                fail(w, f"graph {name} is a function trace, not a gradient graph")
            self.gradients[key] = self.graphs[name]
        for name, graph in self.graphs.items():
            try:
                specs = check_graph(graph, graph.inputs, probes)
            except ValueError as e:
                raise LoadError(f"graphs.{name}.{e}") from None
            for node in graph.nodes:  # outputs of any shape: as traced (on scalars)
                node.outputs = specs[node.first:node.first + len(node.outputs)]
            graphs.check_custom_gradients(graph, f"graphs.{name}", self.gradients)
        functions = [self.function(f, f"functions[{i}]")
                     for i, f in enumerate(doc["functions"])]

        # Everything checked: register the saved gradients under fresh keys.
        # A key (a GradientKey) owns its registration: the graphs' IdentityN
        # nodes and the ops tapes record from them hold it, and when the last
        # holder is gone, so is the registry entry with its graph.
        fresh = {key: register_gradient_graph(graph)
                 for key, graph in self.gradients.items()}
        for graph in self.graphs.values():
            for node in graph.nodes:
                if node.op == "IdentityN" and node.attrs["gradient"] in fresh:
                    node.attrs["gradient"] = fresh[node.attrs["gradient"]]
        return self.build_objects(doc["objects"], functions)

    def function(self, j, where):
        check_keys(j, where, ("name", "parameters", "input_signature", "traces"))
        name = check_str(j["name"], f"{where}.name", 200)
        params = []
        for i, p in enumerate(check_list(j["parameters"], f"{where}.parameters")):
            w = f"{where}.parameters[{i}]"
            check_keys(p, w, ("name", "kind"), ("default",))
            pname = check_str(p["name"], f"{w}.name", 200)
            if not pname.isidentifier():
                fail(f"{w}.name", f"{brief(pname)} is not a Python identifier")
            kind = p["kind"]
            if kind not in PARAMETER_KINDS:
                fail(f"{w}.kind", f"expected one of {PARAMETER_KINDS}, got {brief(kind)}")
            default = inspect.Parameter.empty
            if "default" in p:
                if not is_literal(p["default"]) or kind.startswith("VAR_"):
                    fail(f"{w}.default", "expected null, a boolean, a number or a string "
                          "(and no default for *args or **kwargs)")
                default = p["default"]
            params.append(inspect.Parameter(pname, getattr(inspect.Parameter, kind),
                                            default=default))
        try:
            signature = inspect.Signature(params)
        except ValueError as e:
            fail(f"{where}.parameters", str(e))
        input_signature = None
        if j["input_signature"] is not None:
            input_signature = tuple(
                structure(s, signature_spec, f"{where}.input_signature[{i}]")
                for i, s in enumerate(check_list(j["input_signature"],
                                            f"{where}.input_signature")))
        traces = {}
        fn = LoadedFunction(name, signature, input_signature, traces)
        for i, g in enumerate(check_list(j["traces"], f"{where}.traces")):
            w = f"{where}.traces[{i}]"
            if not isinstance(g, str) or g not in self.graphs:
                fail(w, f"names no saved graph ({brief(g)})")
            graph = self.graphs[g]
            if graph.args is None:
                fail(w, f"graph {g} is a gradient graph, not a function trace")
            if len(graph.args) != len(signature.parameters):
                fail(w, f"graph {g} was traced with {len(graph.args)} arguments, the "
                      f"function has {len(signature.parameters)} parameters")
            # Stand-ins of the declared shapes that allocate nothing (zero strides).
            examples = [Tensor(np.broadcast_to(np.zeros((), s.dtype), s.shape))
                        for s in graph.inputs]
            try:
                args, kwargs = call_arguments(signature, graph.args, examples)
                _, _, key = bind_arguments(signature, input_signature, args, kwargs,
                                               f"function {name}")
                _, _, same = split_arguments(fill_arguments(graph.args, examples),
                                                 input_signature, "")
                if key != same:
                    raise ValueError("its arguments bind to the parameters differently")
            except (TypeError, ValueError) as e:
                fail(w, f"graph {g} does not fit the function's signature: {e}")
            if graph.symbolic_inputs is not None:
                key = symbolic_key(key, graph)
            if key in traces:
                fail(w, f"graph {g} repeats the arguments of another trace")
            traces[key] = ConcreteFunction(fn, graph, key)
            traces[key].polymorphic = graph.symbolic_inputs is not None
        return fn

    def build_objects(self, objects_json, functions):
        objects = [LoadedObject() for _ in objects_json]
        tables = {"object": objects, "variable": self.variables, "function": functions}

        def value(x, w):
            if not isinstance(x, dict) or len(x) != 1 or next(iter(x)) not in tables:
                fail(w, "expected {object|variable|function: index}, or a list, tuple or "
                      f"dict of them, got {brief(x)}")
            (kind, k), = x.items()
            if not tables[kind]:
                fail(f"{w}.{kind}", f"there are no saved {kind}s")
            return tables[kind][check_int(k, f"{w}.{kind}", 0, len(tables[kind]) - 1)]

        for i, o in enumerate(objects_json):
            w = f"objects[{i}]"
            check_keys(o, w, ("attributes",))
            for name, x in check_dict(o["attributes"], f"{w}.attributes").items():
                if not name.isidentifier() or name.startswith("__") and name != "__call__" \
                        or name in _RESERVED:
                    fail(f"{w}.attributes", f"{brief(name)} cannot be an attribute name")
                setattr(objects[i], name, structure(
                    x, lambda v, w: None if v is None else value(v, w),
                    f"{w}.attributes.{name}"))
        root = objects[0]
        tracked = {id(v) for v in root.variables}
        untracked = [v for v in self.variables if id(v) not in tracked]
        if untracked:
            root._captured_variables = untracked
        return root










_RESERVED = ("variables", "trainable_variables", "non_trainable_variables", "submodules",
             "name", "_collect")


def _read_only(value):
    array = np.array(value)
    array.flags.writeable = False
    return array


def _inline_value(j, spec, where):
    if spec.dtype.kind not in "biuf" or size(spec) > INLINE_ELEMENTS:
        fail(where, f"only real constants of at most {INLINE_ELEMENTS} elements are "
              "written inline")
    flat = flat_numbers(j, spec.shape, where)
    kinds = {"b": (bool,), "i": (int,), "u": (int,), "f": (int, float)}[spec.dtype.kind]
    if not all(type(v) in kinds for v in flat):
        fail(where, f"expected {spec.dtype} values")
    try:
        return np.array(flat, dtype=spec.dtype).reshape(spec.shape)
    except OverflowError:
        fail(where, f"a value does not fit {spec.dtype}")
