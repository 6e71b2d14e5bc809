"""`mt.function`: trace Python code into a graph of minitape ops, then run the graph.

Tracing. The first call with new input shapes runs the Python function once on
placeholder tensors while a `_Tracer` stands in `state.tapes`. The tracer
claims to track every tensor, so every op the function runs reaches it through
`tape.record`, and it keeps them all, in order, as the nodes of a `Graph`
(`graph.py`). A tensor that is neither a placeholder, nor a variable read, nor
the output of a recorded op (made by `mt.constant`, or a Python number turned
into a tensor) is a captured constant: the graph keeps its value.

Calling. A later call with the same input shapes and dtypes does not run the
Python function: `run_graph` runs the nodes again through the public ops, so
tapes record the call and gradients of any order flow through it. Variables
are referenced, not copied: each call reads their current value. With
`jit_compile=True` a call that no tape or accumulator is watching runs the
graph's compiled NumPy program instead (`compiler.py`).

Custom gradients. A `@mt.custom_gradient` call records its forward ops and
then ONE op of type IdentityN. In a trace that op becomes an IdentityN node,
as in TensorFlow: its gradient function is traced too, into a second graph
on upstream placeholders shaped like the outputs, registered under a fresh key
that the node names (`graph.register_gradient_graph`). The saved-model format
(`minitape.saved_model`) stores the same graphs as JSON.

Variable assignments (`v.assign`, `assign_add`, `assign_sub`) are recorded as
AssignVariableOp nodes and happen again at each call.

What a trace freezes (as TensorFlow does without AutoGraph): Python control
flow and `.numpy()`/`float()` on tensor values, random numbers drawn with
`mt.random`, and anything else computed outside minitape's ops take the values
they had while tracing. Ops made with `mt.primitive` cannot be traced.
"""
import contextlib
import functools
import inspect
import threading
import warnings
import weakref

import numpy as np

from . import nest
from .compiler import compile_graph
from .context import state
from .graph import (GRADIENT_GRAPHS, OPS, Graph, Node, NodeError, Ref,  # noqa: F401
                    bind_dims, register_gradient_graph, run_graph)
from .recording import Operation
from .specs import TensorSpec
from .tensor import Tensor, TensorLike, Variable, convert_to_tensor

__all__ = ["function", "Function", "ConcreteFunction"]


# --- tracing ----------------------------------------------------------------------

class _EveryId(dict):
    """A tracer's `_producer`: it claims every tensor, so `record` gives it every op."""

    def __contains__(self, key):
        return True

    def __setitem__(self, key, value):
        pass


class _OpLog(list):
    """A tracer's `_ops`: `record` appends here."""

    def __init__(self, tracer):
        super().__init__()
        self.tracer = tracer

    def append(self, op):
        tracer = self.tracer
        tracer._settle()
        if op.type == "IdentityN" and op.attrs and "_custom_rule" in op.attrs:
            op = tracer._trace_custom_gradient(op)
        super().append(op)
        deps = frozenset().union(*(tracer._deps_of(x) for x in op.inputs)) \
            if op.inputs else frozenset()
        for y in op.outputs:
            tracer._known.add(y._id)
            tracer._by_array[id(y._value)] = y
            if deps:
                tracer._deps[y._id] = deps


class _VariableLog(list):
    """A tracer's entry in `state.variable_watchers`: every variable read during
    the trace (trainable or not) is noted in the tracer's `_variables`."""

    def __init__(self, tracer):
        super().__init__()
        self.tracer = tracer

    def append(self, variable):
        super().append(variable)
        self.tracer._variables[variable._id] = variable


class _Tracer:
    """Stands in `state.tapes` while a function (or a custom gradient's backward)
    is traced, and turns what it sees into a Graph.

    It offers what the engine asks of a tape: `_producer` and `_ops` (and the
    hook `_variable_assigned`); the variables it reads reach it through its
    `_VariableLog` in `state.variable_watchers`.
    """

    _watch_accessed_variables = False  # variables reach the _VariableLog instead
    _is_trace = True                   # recipes record their ops into a trace

    def __init__(self, name, parent=None):
        self.name = name
        self.parent = parent            # the trace a backward graph captures values from
        self._producer = _EveryId()
        self._ops = _OpLog(self)
        self._placeholders = []
        self._captures = []             # parent tensors this graph takes as extra inputs
        self._known = set()             # ids of tensors defined in this trace
        self._variables = {}            # id -> Variable read during the trace
        self._by_array = {}             # id(ndarray) -> the latest tensor holding it
        self._assigned = {}             # id -> (Variable, its value before the trace)
        self._watcher = _VariableLog(self)
        # Variable reads are snapshots: each value an assigned variable takes in
        # the trace, id(array) -> (array, index in _ops of the assignment that
        # made it, or None for the value before the trace's first assignment).
        self._versions = {}
        self._unsettled = []            # (variable, op index): new value not seen yet
        # Which placeholders (their index) or variables each traced value depends
        # on, and the placeholders whose values the trace used as Python values.
        self._deps = {}
        self._value_inputs = {}         # placeholder index -> the value it was traced for

    def _variable_assigned(self, variable, value, mode):
        """`variable.assign*(value)` during the trace (the engine calls this just
        before the value changes): record it as an AssignVariableOp node, so every
        call assigns. The trace sees the new value from then on, and the variable
        gets its old value back when the trace ends."""
        x = value if type(value) is Tensor and value.dtype == variable.dtype else \
            convert_to_tensor(value, dtype=variable.dtype)
        self._settle()
        if variable._id not in self._assigned:
            self._assigned[variable._id] = (variable, variable._value)
            self._versions[id(variable._value)] = (variable._value, None)
        self._ops.append(Operation("AssignVariableOp", (x,), (),
                                   {"variable": variable, "mode": mode}, mode))
        self._unsettled.append((variable, len(self._ops) - 1))

    def _settle(self):
        """Note the values the assignments recorded so far gave their variables
        (an assignment changes the value just after telling the tracer)."""
        for variable, index in self._unsettled:
            self._versions[id(variable._value)] = (variable._value, index)
        self._unsettled.clear()

    def _deps_of(self, t):
        """The placeholders (indices) and Variables the traced value `t` depends on."""
        if isinstance(t, Variable):
            return frozenset([("var", t._id)])
        deps = self._deps.get(t._id)
        if deps is not None:
            return deps
        if t._id in self._variables:
            return frozenset([("var", t._id)])
        if self.parent is not None and t._id not in self._known:
            return self.parent._deps_of(t)
        return frozenset()

    def _value_read(self, t):
        """`t`'s value was read as a Python value (an index, a shape, an op
        attribute, a condition) while tracing: the trace is right only for the
        values of the arguments it depends on, so calls key on them (as
        TensorFlow retraces for a new Python number)."""
        root = self
        while root.parent is not None:
            root = root.parent
        deps = self._deps_of(t) if not isinstance(t, Variable) else {("var", t._id)}
        for d in deps:
            if isinstance(d, tuple):
                d = self._variable(d[1])
                raise ValueError(
                    f"mt.function {root.name}: the value of variable {d.name!r} is used "
                    "as a Python value (an index, a shape, an op attribute or a Python "
                    "condition) while tracing; a trace would freeze it at "
                    f"{_show(d._value)}. Pass it as an argument, or use it "
                    "through ops")
            if isinstance(d, int):
                root._value_inputs.setdefault(d, _frozen(root._placeholders[d]._value))
            else:
                raise ValueError(
                    f"mt.function {root.name}: a gradient function uses the value of an "
                    "upstream gradient as a Python value (an index, a shape or a "
                    "condition); a traced gradient cannot depend on it")

    def placeholder(self, value_tensor):
        t = Tensor(np.array(value_tensor._value))  # its own array (see _forward_value)
        self._deps[t._id] = frozenset([len(self._placeholders) if self.parent is None
                                       else "upstream"])
        self._placeholders.append(t)
        self._known.add(t._id)
        self._by_array[id(t._value)] = t
        return t

    @contextlib.contextmanager
    def active(self):
        """Make this trace the only recorder (outer tapes pause while tracing; they
        record the replay instead)."""
        saved = state.tapes, state.variable_watchers, state.value_readers
        state.tapes, state.variable_watchers = [self], [self._watcher]
        state.value_readers = [self._value_read]
        try:
            yield self
        finally:
            state.tapes, state.variable_watchers, state.value_readers = saved
            self._settle()
            for variable, old in self._assigned.values():
                variable._value = old  # the replay will assign

    # --- names for values ---------------------------------------------------------
    def _variable(self, tid):
        tracer = self
        while tracer is not None:
            v = tracer._variables.get(tid)
            if v is not None:
                return v
            tracer = tracer.parent
        return None

    def _defines(self, tensor):
        """Whether this (still recording) trace can name `tensor`; a value of an
        enclosing trace becomes a capture (an extra input) of this one."""
        if tensor._id in self._known:
            return True
        return self._capture(tensor)

    def _capture(self, tensor):
        if self.parent is not None and self.parent._defines(tensor):
            self._captures.append(tensor)
            self._known.add(tensor._id)
            return True
        return False

    # --- custom gradients -----------------------------------------------------------
    def _trace_custom_gradient(self, op):
        """The IdentityN op a custom_gradient call records (its rule is the
        Python `_custom_rule`) as a graph op: trace the rule into a gradient
        graph, register it, and name it in `_gradient_op_type`, as in TensorFlow.
        The forward ops of the call were recorded already, just before."""
        name = op.name
        try:
            key, captures = self._trace_backward(name, op.attrs["_custom_rule"], op)
        except Exception as e:
            e.add_note(f"(raised while tracing the gradient function of custom_gradient "
                       f"{name} inside mt.function {self.name})")
            raise
        forward = op.attrs.get("_forward_outputs") or \
            tuple(self._forward_value(y) for y in op.outputs)
        return Operation("IdentityN", op.inputs, op.outputs,
                         {"_gradient_op_type": key, "num_inputs": op.attrs["num_inputs"],
                          "_forward_outputs": tuple(forward), "_captures": tuple(captures)},
                         name)

    def _forward_value(self, output):
        """The tensor a custom_gradient output copies: the engine makes each output
        `Tensor(y._value)` from the function's result y, so y is the latest tensor
        of this trace holding that very array (or a variable's, or a constant)."""
        y = self._by_array.get(id(output._value))
        if y is not None:
            return y
        for v in self._variables.values():
            if v._value is output._value:
                return v
        return Tensor(output._value)  # a constant: no recorded op made it

    def _trace_backward(self, name, rule, op):
        """Trace `rule(op, *upstream)` on upstream placeholders shaped like the
        op's outputs; values of this trace it uses become captures."""
        child = _Tracer(f"{self.name}/{name}_grad", parent=self)
        upstream = [child.placeholder(Tensor(np.ones(y.shape, y.dtype))) for y in op.outputs]
        with child.active():
            grads = rule(op, *upstream)
        grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
        if len(grads) != len(op.inputs):
            raise ValueError(f"custom_gradient {name}: the gradient function returned "
                             f"{len(grads)} gradient(s) for {len(op.inputs)} input(s) "
                             "and variable(s)")
        graph = child.build(grads)
        return register_gradient_graph(graph), list(child._captures)

    # --- building the graph ---------------------------------------------------------
    def build(self, outputs, args=None):
        """Turn the recorded ops into a Graph returning `outputs` (a structure)."""
        self._settle()
        local = {t._id for t in self._placeholders} | {t._id for t in self._captures}
        pending = []  # the output ids of each node, numbered at the end
        reads = {}    # (variable id, assignment index or None) -> its read node
        after = {}    # op index -> the read nodes that follow it

        def ref(t):
            if isinstance(t, Variable):
                return Ref("v", t)
            if t._id in local:
                return Ref("id", t._id)
            v = self._variable(t._id)
            if v is not None:
                version = self._versions.get(id(t._value)) if v._id in self._assigned \
                    else None
                if version is None:
                    return Ref("v", v)
                return Ref("id", snapshot_read(v, version[1]))
            if self._capture(t):  # a value of the enclosing trace
                local.add(t._id)
                return Ref("id", t._id)
            return Ref("c", _frozen(t._value))

        def snapshot_read(v, index):
            """A read of an assigned variable is an Identity node where it was
            read: before the first assignment, or just after the assignment that
            gave the value, so later assignments do not change it."""
            key = ("read", v._id, index)
            if key not in reads:
                reads[key] = Node("Identity", f"{v.name.split(':')[0]}/read", [Ref("v", v)],
                                  {}, [TensorSpec(v.shape, v.dtype)])
                after.setdefault(-1 if index is None else index, []).append(key)
            return key

        entries = []  # (op index, node, its output ids)
        for index, op in enumerate(self._ops):
            attrs = op.attrs or {}
            if op.type == "IdentityN":
                if "_gradient_op_type" not in attrs or "_forward_outputs" not in attrs:
                    raise NotImplementedError(
                        f"mt.function {self.name}: an IdentityN op without a traced "
                        "gradient cannot be traced")
                node_attrs = {"num_inputs": int(attrs["num_inputs"]),
                              "gradient": attrs["_gradient_op_type"],
                              "forward": [ref(t) for t in attrs["_forward_outputs"]],
                              "captures": [ref(t) for t in attrs["_captures"]]}
            elif op.type == "AssignVariableOp":
                node_attrs = dict(attrs)
            else:
                opdef = OPS.get(op.type)
                if opdef is None:
                    raise NotImplementedError(
                        f"mt.function {self.name}: op type {op.type!r} (operation "
                        f"{op.name!r}) cannot be traced: minitape knows how to replay "
                        "only its built-in ops")
                node_attrs = opdef.from_op(op)
            inputs = [ref(t) for t in op.inputs]
            specs = [TensorSpec(y.shape, y.dtype) for y in op.outputs]
            entries.append((index, Node(op.type, op.name, inputs, node_attrs, specs),
                            [y._id for y in op.outputs]))
            local.update(y._id for y in op.outputs)

        def leaf(x):
            if x is None:
                return None
            if isinstance(x, TensorLike):
                return ref(x)
            if isinstance(x, (bool, int, float, complex, np.ndarray, np.generic)):
                return Ref("c", _frozen(convert_to_tensor(x)._value))
            raise TypeError(f"mt.function {self.name} returned a {type(x).__name__} "
                            f"({x!r}); a function may return tensors, variables, numbers "
                            "and None, in lists, tuples and dicts")

        out_structure = _map_structure(outputs, leaf)
        nodes = [reads[key] for key in after.get(-1, ())]
        pending = [[key] for key in after.get(-1, ())]
        for index, node, ids in entries:
            nodes.append(node)
            pending.append(ids)
            for key in after.get(index, ()):
                nodes.append(reads[key])
                pending.append([key])
        # Number the values: placeholders, captures, then each node's outputs.
        number = {}
        for t in self._placeholders + self._captures:
            number[t._id] = len(number)
        for ids in pending:
            for i in ids:
                number[i] = len(number)

        def renumber(r):
            return Ref("t", number[r.x]) if r.kind == "id" else r

        for node in nodes:
            node.inputs = [renumber(r) for r in node.inputs]
            if node.op == "IdentityN":
                node.attrs["forward"] = [renumber(r) for r in node.attrs["forward"]]
                node.attrs["captures"] = [renumber(r) for r in node.attrs["captures"]]
        out_structure = _map_structure(out_structure, lambda r: None if r is None
                                       else renumber(r))
        specs = [TensorSpec(t.shape, t.dtype) for t in self._placeholders + self._captures]
        graph = Graph(self.name, specs, nodes, out_structure,
                      num_captures=len(self._captures), args=args)
        graph.value_inputs = dict(self._value_inputs)
        return graph


def _map_structure(s, fn):
    if isinstance(s, dict):
        return {k: _map_structure(v, fn) for k, v in s.items()}
    if isinstance(s, tuple) and hasattr(s, "_fields"):
        return tuple(_map_structure(v, fn) for v in s)
    if isinstance(s, (list, tuple)):
        return type(s)(_map_structure(v, fn) for v in s)
    return fn(s)


def _show(value):
    text = np.array2string(np.asarray(value), threshold=8)
    return text if len(text) <= 80 else text[:77] + "..."


def _frozen(value):
    array = np.array(value)
    array.flags.writeable = False
    return array



# --- shape polymorphism ------------------------------------------------------------

class _NotPolymorphic(Exception):
    pass


def sentinel_sizes(n):
    """Sizes to trace `n` unknown dimensions with, twice: (A_k, B_k) with A_k
    odd primes from 13 on and B_k = 2 A_k + 1, chosen so that no size derived
    from one unknown (like n + 1 or 2 n) is mistaken for another."""
    sizes, p = [], 13
    while len(sizes) < n:
        if all(p % q for q in range(3, int(p ** 0.5) + 1, 2)) and \
                all(p != 2 * a + 1 for a in sizes):
            sizes.append(p)
        p += 2
    return [(a, 2 * a + 1) for a in sizes]


def generalize(ga, gb, symbols):
    """One graph for two traces that differ only in some sizes: `symbols` maps
    a pair (size in ga, size in gb) to a symbol name. Returns a Graph whose
    shapes name the symbols where the traces differ, or None when the traces
    differ in anything else (other ops, attributes, constants, or sizes that are
    not a symbol pair): such a function is not shape-polymorphic here."""
    try:
        return _generalize(ga, gb, symbols)
    except _NotPolymorphic:
        return None


# Ops whose result does not depend on knowing their inputs' rank (reductions
# only over all axes): what a graph for an input of unknown rank may hold.
RANK_FREE = {"AddV2", "Sub", "Mul", "RealDiv", "Pow", "Maximum", "Minimum", "Neg",
             "Square", "Sqrt", "Exp", "Log", "Sin", "Cos", "Tanh", "Abs", "Sign", "Round",
             "Floor", "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
             "SelectV2", "Cast", "Identity", "StopGradient", "Sigmoid", "Relu", "Elu",
             "Softplus", "Sum", "Mean", "Max", "Min", "Prod", "IdentityN"}
_REDUCTIONS = {"Sum", "Mean", "Max", "Min", "Prod"}


def _all_axes(graph, node):
    """Whether a reduction node reduces every axis of its input."""
    return tuple(node.attrs["axis"]) == tuple(range(len(graph.spec_of(node.inputs[0]).shape)))


def _generalize(ga, gb, symbols):
    used = {}

    def shape(sa, sb):
        if sa.dtype != sb.dtype:
            raise _NotPolymorphic
        if len(sa.shape) != len(sb.shape):
            return None  # traced with two ranks (an unknown-rank input): any shape
        out = []
        for a, b in zip(sa.shape, sb.shape):
            if a != b:
                name = symbols.get((a, b))
                if name is None:
                    raise _NotPolymorphic
                used[name] = a
                a = name
            out.append(a)
        return tuple(out)

    def same(a, b):
        if isinstance(a, Ref) or isinstance(b, Ref):
            if not (isinstance(a, Ref) and isinstance(b, Ref)) or a.kind != b.kind:
                return False
            if a.kind == "c":
                return a.x.shape == b.x.shape and a.x.dtype == b.x.dtype and \
                    np.array_equal(a.x, b.x)
            return a.x is b.x if a.kind == "v" else a.x == b.x
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and \
                a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)
        if isinstance(a, Variable) or isinstance(b, Variable):
            return a is b
        if isinstance(a, InputSlot) or isinstance(b, InputSlot):
            return isinstance(a, InputSlot) and isinstance(b, InputSlot) and a.index == b.index
        if isinstance(a, dict):
            return isinstance(b, dict) and list(a) == list(b) and \
                all(same(a[k], b[k]) for k in a)
        if isinstance(a, (list, tuple)):
            return type(a) is type(b) and len(a) == len(b) and \
                all(same(x, y) for x, y in zip(a, b))
        return type(a) is type(b) and a == b

    if len(ga.inputs) != len(gb.inputs) or len(ga.nodes) != len(gb.nodes) or \
            ga.num_captures != gb.num_captures or not same(ga.outputs, gb.outputs) or \
            not same(ga.args, gb.args):
        raise _NotPolymorphic
    inputs = [shape(a, b) for a, b in zip(ga.inputs, gb.inputs)]
    nodes = []
    for na, nb in zip(ga.nodes, gb.nodes):
        if na.op != nb.op or not same(na.inputs, nb.inputs) \
                or len(na.outputs) != len(nb.outputs):
            raise _NotPolymorphic
        attrs = na.attrs
        if na.op == "IdentityN":
            rest = ("num_inputs", "forward", "captures")
            if not all(same(na.attrs[k], nb.attrs[k]) for k in rest):
                raise _NotPolymorphic
            ka, kb = na.attrs["gradient"], nb.attrs["gradient"]
            if ka != kb:
                if ka not in GRADIENT_GRAPHS or kb not in GRADIENT_GRAPHS:
                    raise _NotPolymorphic
                backward = _generalize(GRADIENT_GRAPHS[ka], GRADIENT_GRAPHS[kb], symbols)
                attrs = dict(na.attrs, gradient=register_gradient_graph(backward))
        elif na.op in _REDUCTIONS and not same(na.attrs, nb.attrs):
            # over all axes of inputs of two ranks: over all axes of any input
            if not (_all_axes(ga, na) and _all_axes(gb, nb)
                    and na.attrs["keepdims"] == nb.attrs["keepdims"]):
                raise _NotPolymorphic
            attrs = {"axis": None, "keepdims": na.attrs["keepdims"]}
        elif not same(na.attrs, nb.attrs):
            raise _NotPolymorphic
        out = [shape(a, b) for a, b in zip(na.outputs, nb.outputs)]
        if None in out and na.op not in RANK_FREE:
            raise _NotPolymorphic  # e.g. a reshape whose target shape depends on the rank
        symbolic = out if any(s is None or any(isinstance(d, str) for d in s)
                              for s in out) else None
        nodes.append(Node(na.op, na.name, na.inputs, attrs, na.outputs, symbolic=symbolic))
    if None not in inputs and any(s is None for n in nodes for s in (n.symbolic or ())):
        raise _NotPolymorphic  # a rank that varies but no input tells
    bound = {d for s in inputs if s is not None for d in s if isinstance(d, str)}
    if set(used) - bound:
        raise _NotPolymorphic  # a size that varies but no input tells
    return Graph(ga.name, ga.inputs, nodes, ga.outputs, ga.num_captures, ga.args,
                 dims={d: used[d] for d in sorted(bound)}, symbolic_inputs=inputs)


def symbolic_key(key, graph):
    """A trace key with the tensors' shapes replaced by the graph's symbolic ones
    (None: any shape)."""
    shapes = iter(graph.symbolic_inputs or [s.shape for s in graph.inputs])
    return tuple(("T", next(shapes), k[2]) if k[0] == "T" else k for k in key)


def key_matches(pattern, key):
    """Whether a call's key fits a polymorphic trace's symbolic key."""
    if len(pattern) != len(key):
        return False
    dims = {}
    for p, k in zip(pattern, key):
        if p[0] != "T" or k[0] != "T":
            if p != k:
                return False
            continue
        if p[2] != k[2]:
            return False
        if p[1] is None:
            continue  # an input of any shape
        if len(p[1]) != len(k[1]):
            return False
        for d, n in zip(p[1], k[1]):
            if isinstance(d, str):
                d = dims.setdefault(d, n)
            if d != n:
                return False
    return True


# --- mt.function ----------------------------------------------------------------

class InputSlot:
    """Where the i-th tensor argument goes in a call's argument structure (the
    rest of the structure is Python values fixed at trace time)."""
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


def _check_signature(signature):
    if not isinstance(signature, (list, tuple)):
        raise TypeError(f"input_signature must be a list or tuple of mt.TensorSpec, "
                        f"got {signature!r}")
    for spec in nest.flatten(list(signature)):
        if not isinstance(spec, TensorSpec):
            raise TypeError(f"input_signature must hold only mt.TensorSpec, got {spec!r}")
    return tuple(signature)


def _convert_to_spec(value, spec, where):
    if isinstance(value, TensorSpec):
        shape = () if value.shape is None else tuple(1 if s is None else s for s in value.shape)
        value = Tensor(np.ones(shape, value.dtype))
    any_length = spec.dtype.kind in "US" and spec.dtype.itemsize == 0  # mt.string
    try:
        t = convert_to_tensor(value, dtype=None if any_length else spec.dtype)
        if any_length and t.dtype.kind != spec.dtype.kind:
            raise TypeError
    except TypeError:
        given = getattr(value, "dtype", type(value).__name__)
        raise TypeError(f"{where}: expected a {spec.dtype} tensor for {spec}, "
                        f"got {given}") from None
    if not spec.is_compatible_with(t):
        raise ValueError(f"{where}: an input of shape {t.shape} is not compatible "
                         f"with the input_signature's {spec}")
    return t


def _static_key(value, where):
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"{where}: argument {value!r} is neither a tensor nor "
                        "hashable, so it cannot key a trace") from None
    return ("S", type(value).__name__, value)


def split_arguments(values, signature, where):
    """Split canonical argument values into a template (tensors replaced by
    `InputSlot(i)`), the list of tensors, and the trace key."""
    tensors, key = [], []

    def tensor_leaf(t):
        key.append(("T", t.shape, t.dtype.str))
        tensors.append(t)
        return InputSlot(len(tensors) - 1)

    def walk(v, spec):
        if spec is not None and isinstance(spec, TensorSpec):
            return tensor_leaf(_convert_to_spec(v, spec, where))
        if isinstance(v, dict):
            if spec is not None and (not isinstance(spec, dict) or set(spec) != set(v)):
                raise TypeError(f"{where}: argument {v!r} does not match the "
                                f"input_signature {spec!r}")
            key.append(("dict", tuple(sorted(map(repr, v)))))
            return {k: walk(v[k], None if spec is None else spec[k]) for k in v}
        if isinstance(v, (list, tuple)) and not isinstance(v, TensorSpec):
            if spec is not None and (not isinstance(spec, (list, tuple)) or len(spec) != len(v)):
                raise TypeError(f"{where}: argument {v!r} does not match the "
                                f"input_signature {spec!r}")
            key.append((type(v).__name__, len(v)))
            items = [walk(x, None if spec is None else spec[i]) for i, x in enumerate(v)]
            return items if isinstance(v, list) else tuple(items)
        if spec is not None:
            raise TypeError(f"{where}: argument {v!r} does not match the input_signature "
                            f"{spec!r}")
        if isinstance(v, (TensorLike, np.ndarray, np.generic)):
            return tensor_leaf(convert_to_tensor(v))
        if isinstance(v, TensorSpec):
            return tensor_leaf(_convert_to_spec(v, v, where))
        key.append(_static_key(v, where))
        return v

    specs = list(signature) if signature is not None else []
    template = [walk(v, specs[i] if i < len(specs) else None) for i, v in enumerate(values)]
    return template, tensors, tuple(key)


def bind_arguments(signature, input_signature, args, kwargs, where):
    """Bind a call's arguments to the Python signature (defaults applied), then
    split them: (template, tensors, trace key)."""
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{where}: {e}") from None
    bound.apply_defaults()
    specs = input_signature
    kinds = [signature.parameters[name].kind for name in bound.arguments]
    if input_signature is not None and inspect.Parameter.VAR_POSITIONAL in kinds:
        specs = _parameter_specs(bound, kinds, list(input_signature), where)
    return split_arguments(list(bound.arguments.values()), specs, where)


def _parameter_specs(bound, kinds, specs, where):
    """The input_signature's specs per parameter when the function takes *args:
    as in TensorFlow, the specs beyond the named parameters are for *args."""
    out, pos = [], 0
    for value, kind in zip(bound.arguments.values(), kinds):
        if kind == inspect.Parameter.VAR_POSITIONAL:
            if pos + len(value) > len(specs):
                raise TypeError(f"{where}: too many positional arguments for the "
                                f"input_signature ({len(specs)} TensorSpecs)")
            out.append(tuple(specs[pos:pos + len(value)]))
            pos += len(value)
        elif kind == inspect.Parameter.VAR_KEYWORD:
            out.append(None)
        else:
            out.append(specs[pos] if pos < len(specs) else None)
            pos += 1
    return out


def fill_arguments(template, tensors):
    def walk(v):
        if isinstance(v, InputSlot):
            return tensors[v.index]
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, tuple) and not hasattr(v, "_fields"):
            return tuple(walk(x) for x in v)
        return v
    return [walk(v) for v in template]


def _input_names(template, function):
    """The Python parameter name of each tensor input of a trace (`x`, or
    `xs_1` for the second tensor inside the argument `xs`)."""
    signature = getattr(function, "_signature", None)
    params = list(signature.parameters) if signature is not None else []
    names = {}

    def walk(v, base):
        if isinstance(v, InputSlot):
            names.setdefault(v.index, base)
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(x, f"{base}_{k}")
        elif isinstance(v, (list, tuple)):
            for k, x in enumerate(v):
                walk(x, f"{base}_{k}")

    for k, v in enumerate(template or []):
        walk(v, params[k] if k < len(params) else f"arg{k}")
    return [names.get(i, f"x{i}") for i in range(max(names, default=-1) + 1)]


class ConcreteFunction:
    """One trace of a Function, for one set of input shapes and dtypes (or, when
    `polymorphic`, for every size of its symbolic dimensions)."""

    polymorphic = False

    def __init__(self, function, graph, key):
        self._function = function
        self.graph = graph
        self._key = key
        self._programs = {}  # input shapes (None: the traced ones) -> compiled Program
        self._jit = bool(getattr(function, "jit_compile", False))

    @property
    def inputs(self):
        return list(self.graph.inputs)

    def __call__(self, *args, **kwargs):
        template, tensors, key = self._function._split(args, kwargs)
        if key != self._key and not (self.polymorphic and key_matches(self._key, key)):
            raise ValueError(f"concrete function {self.graph.name}: these arguments do not "
                             f"match the ones it was traced for ({self.graph.inputs})")
        return self.run(tensors)

    def run(self, tensors):
        """Run the graph on `tensors`: its compiled program when the function was
        made with jit_compile=True and nothing is watching (no tape, accumulator
        or trace could record a program's NumPy calls), else through the ops,
        which tapes record, so gradients of any order flow through the call."""
        if self.graph.value_inputs:
            self.check_values(tensors)
        if self._jit and not state.tapes and not state.variable_watchers:
            program = self._programs.get(None) if self.graph.symbolic_inputs is None \
                else None
            if program is None:
                program = self.program(tensors)
            return program([t._value for t in tensors])
        return run_graph(self.graph, tensors)

    def check_values(self, tensors):
        """A trace that used an argument's value (as an index, a shape, an op
        attribute) runs only for that value."""
        for k, value in self.graph.value_inputs.items():
            given = tensors[k]._value
            if given.dtype != value.dtype or given.shape != value.shape or \
                    not np.array_equal(given, value, equal_nan=value.dtype.kind in "fc"):
                names = _input_names(self.graph.args, self._function)
                name = names[k] if k < len(names) else f"input {k}"
                raise ValueError(
                    f"concrete function {self.graph.name}: argument {name!r} was traced "
                    f"for the value {_show(value)}, which the function uses as a Python "
                    f"value (an index, a shape or an op attribute); it cannot run for "
                    f"{_show(given)} (call the mt.function itself, which traces again)")

    def program(self, tensors=None):
        """The compiled program for these input tensors (made once per shapes)."""
        graph = self.graph
        shapes = None if tensors is None or graph.symbolic_inputs is None else \
            tuple(tuple(t.shape) for t in tensors)
        programs = self._programs
        program = programs.get(shapes)
        if program is None:
            while len(programs) >= MAX_TRACES:  # one per shape: bounded, oldest first
                programs.pop(next(iter(programs)))
            node_shapes = None
            if shapes is not None:
                dims = bind_dims(graph, tensors)
                node_shapes = [[None if s is None else
                                tuple(dims[d] if isinstance(d, str) else d for d in s)
                                for s in (node.symbolic or [o.shape for o in node.outputs])]
                               for node in graph.nodes]
            program = programs[shapes] = compile_graph(
                graph, _input_names(graph.args, self._function), node_shapes)
        return program

    def __repr__(self):
        return f"<ConcreteFunction {self.graph.name} inputs={self.graph.inputs}>"


_NOT_YET = object()
_FAILED = object()
MAX_TRACES = 64        # traces one function keeps (and compiled programs one trace keeps)
RETRACING_WARNING = 5  # traces before a warning (then at 10, 20, 40, ...)


class _ByValue:
    """The traces of one input signature whose Python function uses some tensor
    arguments' values as Python values (`x[i]`, `mt.reshape(x, shape)`,
    `pad(..., constant_values=c)`): one trace per value of those arguments, as
    TensorFlow retraces for each new Python number. `which` are their indices."""

    polymorphic = False

    def __init__(self, function, template, key, concrete, tensors):
        self._function, self._template, self._key = function, template, key
        self.which = sorted(concrete.graph.value_inputs)
        self.traces = {self._value_key(tensors): concrete}

    def _value_key(self, tensors):
        return tuple(tensors[k]._value.tobytes() for k in self.which)

    def trace_for(self, tensors):
        concrete = self.traces.get(self._value_key(tensors))
        if concrete is None:
            function = self._function
            with function._lock:
                concrete = function._trace(self._template, tensors, self._key)
                if not set(concrete.graph.value_inputs) <= set(self.which):
                    # this value took a path that uses more arguments' values
                    self.which = sorted(set(self.which) | set(concrete.graph.value_inputs))
                    self.traces = {}
                function._keep(self.traces, self._value_key(tensors), concrete)
        return concrete

    def run(self, tensors):
        return self.trace_for(tensors).run(tensors)

    def program(self, tensors):
        return self.trace_for(tensors).program(tensors)


class Function:
    """What `@mt.function` returns: a callable that traces once per input
    signature (shapes, dtypes and Python arguments) and replays afterwards."""

    def __init__(self, python_function, input_signature=None, name=None, instance=None,
                 jit_compile=False):
        functools.update_wrapper(self, python_function)
        self.jit_compile = bool(jit_compile)
        self.python_function = python_function
        self.input_signature = None if input_signature is None else \
            _check_signature(input_signature)
        self._name = name or getattr(python_function, "__name__", "function")
        signature = inspect.signature(python_function)
        if instance is not None:
            params = list(signature.parameters.values())[1:]
            signature = signature.replace(parameters=params)
        self._signature = signature
        self._instance = instance        # a weakref.ref for a method bound to an object
        self._concrete = {}
        self._by_shapes = {}  # (shape, dtype) of each positional tensor -> its trace
        self._bound = weakref.WeakKeyDictionary()
        self._tracing_count = 0          # traces kept, as TensorFlow counts them
        self._exact_traces = 0           # of which for fixed shapes (they name graphs)
        self._signature_concrete = None
        self._polymorphic = _NOT_YET     # the signature's shape-polymorphic trace, or None
        self._lock = threading.RLock()

    @property
    def name(self):
        return self._name

    def __get__(self, instance, owner):
        if instance is None or self._instance is not None:
            return self
        try:
            bound = self._bound.get(instance)
        except TypeError:  # not weak-referenceable or not hashable
            cache = vars(instance).setdefault("_mt_bound_functions", {})
            bound = cache.get(id(self))
            if bound is None:
                bound = cache[id(self)] = Function(self.python_function,
                                                   self.input_signature, self._name,
                                                   instance=lambda i=instance: i,
                                                   jit_compile=self.jit_compile)
            return bound
        if bound is None:
            bound = Function(self.python_function, self.input_signature, self._name,
                             instance=weakref.ref(instance), jit_compile=self.jit_compile)
            self._bound[instance] = bound
        return bound

    def _split(self, args, kwargs):
        return bind_arguments(self._signature, self.input_signature, args, kwargs,
                              f"mt.function {self._name}")

    def _call_python(self, values):
        names = list(self._signature.parameters)
        bound = inspect.BoundArguments(self._signature, dict(zip(names, values)))
        if self._instance is not None:
            instance = self._instance()
            if instance is None:
                raise RuntimeError(f"mt.function {self._name}: its object no longer exists")
            return self.python_function(instance, *bound.args, **bound.kwargs)
        return self.python_function(*bound.args, **bound.kwargs)

    def _concrete_for(self, template, tensors, key):
        concrete = self._concrete.get(key)
        if concrete is None:
            with self._lock:
                concrete = self._concrete.get(key)
                if concrete is None:
                    concrete = self._signature_trace_for(key) or \
                        self._trace(template, tensors, key)
                    if concrete.graph.value_inputs:
                        concrete = _ByValue(self, template, key, concrete, tensors)
                    self._keep(self._concrete, key, concrete)
        return concrete

    def _keep(self, traces, key, concrete):
        """Keep a new trace, under a bound: past MAX_TRACES the oldest goes."""
        traces[key] = concrete
        while len(traces) > MAX_TRACES:
            dropped = traces.pop(next(iter(traces)))
            self._by_shapes = {k: c for k, c in self._by_shapes.items()
                               if c is not dropped}

    def _signature_trace_for(self, key):
        """The input_signature's one trace, when it has unknown sizes or ranks,
        was traced shape-polymorphic and fits these arguments (as TensorFlow
        traces a signature once)."""
        if self.input_signature is None or not any(
                s.shape is None or None in s.shape
                for s in nest.flatten(list(self.input_signature))):
            return None
        concrete = self._polymorphic_signature_trace()
        if concrete is not None and key_matches(concrete._key, key):
            return concrete
        return None

    def _polymorphic_signature_trace(self):
        if self._polymorphic is _NOT_YET:
            self._polymorphic = self._polymorphic_trace()
        return self._polymorphic

    def _trace(self, template, tensors, key, count=True):
        tracer = _Tracer(f"{self._name}_{self._exact_traces + 1}")
        placeholders = [tracer.placeholder(t) for t in tensors]
        with tracer.active():
            try:
                outputs = self._call_python(fill_arguments(template, placeholders))
            except Exception as e:
                e.add_note(f"(raised while tracing mt.function {self._name})")
                raise
        graph = tracer.build(outputs, args=template)
        self._tracing_count += count
        self._exact_traces += count
        if count and self._tracing_count >= RETRACING_WARNING and \
                (self._tracing_count // RETRACING_WARNING) & \
                (self._tracing_count // RETRACING_WARNING - 1) == 0 and \
                self._tracing_count % RETRACING_WARNING == 0:
            warnings.warn(
                f"mt.function {self._name} has been traced {self._tracing_count} times. "
                f"Tracing is expensive (and at most {MAX_TRACES} traces are kept). Likely "
                "causes: calls with tensors of many shapes (give an input_signature with "
                "None sizes), Python numbers as arguments (pass tensors), or tensor "
                "arguments whose values the function reads as Python values (an index, "
                "a shape, a condition). As TensorFlow warns of excessive retracing.",
                RuntimeWarning, stacklevel=4)
        return ConcreteFunction(self, graph, key)

    def __call__(self, *args, **kwargs):
        if not kwargs and all(type(a) is Tensor for a in args):
            # The common call, positional tensors only: its trace depends on
            # their shapes and dtypes alone, so skip binding the arguments.
            shapes = tuple((a._value.shape, a._value.dtype) for a in args)
            concrete = self._by_shapes.get(shapes)
            if concrete is not None:
                return concrete.run(args)
            template, tensors, key = self._split(args, kwargs)
            concrete = self._concrete_for(template, tensors, key)
            if all(t is a for t, a in zip(tensors, args)) and len(tensors) == len(args):
                self._by_shapes[shapes] = concrete
            return concrete.run(tensors)
        template, tensors, key = self._split(args, kwargs)
        return self._concrete_for(template, tensors, key).run(tensors)

    def experimental_get_compiler_ir(self, *args, **kwargs):
        """TensorFlow's way to read what a call runs: `f.experimental_get_compiler_ir(x)`
        returns a function of `stage`: "python" gives the source of the compiled
        program for these arguments, "graph" the traced graph as text."""
        if not self.jit_compile:
            raise ValueError(f"experimental_get_compiler_ir of mt.function {self._name}: "
                             "Compiler IR can only be returned for functions marked with "
                             "'jit_compile=True'")
        unknown = [s for s in nest.flatten([list(args), list(kwargs.values())])
                   if isinstance(s, TensorSpec) and (s.shape is None or None in s.shape)]
        if unknown:  # a program is written for sizes it knows, as XLA's
            raise ValueError(f"experimental_get_compiler_ir of mt.function {self._name}: "
                             f"Only support static input shape but got inputs = {unknown}")
        template, tensors, key = self._split(args, kwargs)
        concrete = self._concrete_for(template, tensors, key)
        if isinstance(concrete, _ByValue):
            concrete = concrete.trace_for(tensors)

        def ir(stage="python", device_name=None):
            if stage == "python":
                return concrete.program(tensors).source
            if stage == "graph":
                return str(concrete.graph)
            raise ValueError(f"experimental_get_compiler_ir: stage must be 'python' or "
                             f"'graph' (minitape compiles to Python, not XLA), got {stage!r}")
        return ir

    def get_concrete_function(self, *args, **kwargs):
        """The trace for these arguments (tensors, or mt.TensorSpecs), made if new.
        With an input_signature and no arguments: the trace for the signature
        (`signature_concrete_function`, the one `mt.saved_model.save` writes)."""
        if not args and not kwargs and self.input_signature is not None:
            return self.signature_concrete_function()
        template, tensors, key = self._split(args, kwargs)
        concrete = self._concrete_for(template, tensors, key)
        return concrete.trace_for(tensors) if isinstance(concrete, _ByValue) else concrete

    def concrete_functions(self):
        """The traces made so far (each once)."""
        found = {}
        for c in self._concrete.values():
            for trace in (c.traces.values() if isinstance(c, _ByValue) else (c,)):
                found.setdefault(id(trace), trace)
        return list(found.values())

    def signature_concrete_function(self, any_rank=False):
        """The trace `mt.saved_model.save` writes for the input_signature.

        Unknown sizes make it shape-polymorphic when the function allows: it is
        traced twice, with two different sizes for each unknown (and a scalar,
        then a matrix, for an unknown rank), and if the two graphs differ only
        in those sizes they become one graph whose shapes name them (`n0`,
        `n1`, ...; None for a shape of unknown rank). Calls that fit the
        signature then all run this one trace. Otherwise it is the trace with
        each unknown size 1 (an unknown rank traces as a scalar).

        A trace for inputs of unknown rank is returned only with `any_rank`
        (the saved-model format stores fixed ranks; without it such a
        signature gives its scalar trace, as before).
        """
        if self.input_signature is None:
            return None
        specs = nest.flatten(list(self.input_signature))
        if any_rank or any(s.shape is not None and None in s.shape for s in specs):
            polymorphic = self._polymorphic_signature_trace()
            if polymorphic is not None and (
                    any_rank or None not in polymorphic.graph.symbolic_inputs):
                return polymorphic
        if self._signature_concrete is None:
            self._signature_concrete = self._exact_signature_trace()
        return self._signature_concrete

    def _exact_signature_trace(self):
        """The trace with each unknown size 1 and each unknown rank a scalar."""
        template, tensors, key = self._split(tuple(self.input_signature), {})
        concrete = self._concrete.get(key)
        if isinstance(concrete, _ByValue):
            return concrete.trace_for(tensors)
        if concrete is None or concrete.polymorphic:
            concrete = self._trace(template, tensors, key)
            if not concrete.graph.value_inputs:
                self._concrete.setdefault(key, concrete)
        return concrete

    def _polymorphic_trace(self):
        """Trace twice, with different sizes for each unknown size and, for an
        unknown rank, a scalar and then a matrix; one graph if they agree. When
        the function fails on different sizes (`a + b`, `a @ a`: sizes the ops
        require to be equal), it tries again with one size for all of them;
        when that fails too, each call's shapes get a trace of their own."""
        specs = nest.flatten(list(self.input_signature))
        n = sum(d is None for s in specs if s.shape is not None for d in s.shape)
        ranks = sum(s.shape is None for s in specs)
        if not n and not ranks:
            return None
        pairs = sentinel_sizes(n + 2 * ranks)
        concrete = self._trace_twice(specs, pairs)
        if concrete is _FAILED and n > 1 and not ranks:
            concrete = self._trace_twice(specs, [pairs[0]] * n)
        return None if concrete is _FAILED else concrete

    def _trace_twice(self, specs, pairs):
        """The shape-polymorphic trace for these sentinel size pairs, None when
        the two traces differ in more than sizes, _FAILED when tracing raised."""
        traces = []
        for pick in (0, 1):
            sizes = iter(p[pick] for p in pairs)

            def example(s):
                if s.shape is None:  # unknown rank: a scalar, then a matrix
                    first, second = next(sizes), next(sizes)
                    return () if pick == 0 else (first, second)
                return tuple(next(sizes) if d is None else d for d in s.shape)
            examples = [Tensor(np.ones(example(s), s.dtype)) for s in specs]
            args = nest.pack_like(list(self.input_signature), examples)
            template, tensors, key = self._split(tuple(args), {})
            try:
                traces.append((self._trace(template, tensors, key, count=False), key))
            except Exception:
                return _FAILED  # trace each shape on its own (it raises there if wrong)
        if any(trace.graph.value_inputs for trace, _ in traces):
            return None  # it uses an argument's value: one trace per value instead
        symbols = {p: f"n{k}" for k, p in enumerate(dict.fromkeys(pairs))}
        graph = generalize(traces[0][0].graph, traces[1][0].graph, symbols)
        if graph is None:
            return None
        self._tracing_count += 1
        concrete = ConcreteFunction(self, graph, symbolic_key(traces[0][1], graph))
        concrete.polymorphic = True
        return concrete

    def experimental_get_tracing_count(self):
        return self._tracing_count

    def __repr__(self):
        sig = "" if self.input_signature is None else \
            f" input_signature={list(self.input_signature)}"
        return f"<mt.function {self._name}{sig}, {len(self._concrete)} trace(s)>"


def function(func=None, input_signature=None, autograph=True, jit_compile=None,
             reduce_retracing=False, experimental_compile=None, name=None, **kwargs):
    """Decorator: `@mt.function` or `@mt.function(input_signature=[mt.TensorSpec(None)])`.

    The first call with new input shapes and dtypes traces `func` into a Graph;
    later calls replay it. Python values in the arguments are part of what a
    trace is for. With `jit_compile=True` (or TensorFlow's older name
    `experimental_compile`) each trace is also compiled into one straight-line
    NumPy function (`compiler.py`), which calls run when no tape is recording.
    `autograph` and `reduce_retracing` are accepted for TensorFlow
    compatibility and ignored.
    """
    jit = bool(jit_compile or experimental_compile)
    if func is None:
        return lambda f: Function(f, input_signature, name, jit_compile=jit)
    return Function(func, input_signature, name, jit_compile=jit)

