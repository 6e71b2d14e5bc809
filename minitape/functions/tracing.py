"""Tracing: running a Python function once on placeholders and keeping what it
did as a `Graph` (`graph.py`), for `mt.function` (`function.py`) to call.

A `Tracer` stands in `state.tapes` while the function runs. It claims to track
every tensor, so every op the function runs reaches it through `tape.record`,
and it keeps them all, in order, as the nodes of the graph. A tensor that is
neither a placeholder, nor a variable read, nor the output of a recorded op
(made by `mt.constant`, or a Python number turned into a tensor) is a captured
constant: the graph keeps its value.

Variable reads are snapshots: a read of a variable the function assigns
becomes an Identity node where it was read (before the first assignment, or
just after the one that gave its value), so later assignments never change
it. Assignments (`v.assign`, `assign_add`, `assign_sub`) are AssignVariableOp
nodes and happen again at each call. While tracing, the values they give are
the trace's own (`state.traced_values`): tracing never changes a variable, so
another thread's assignments made meanwhile are kept, as in TensorFlow.

Values read as Python values. `int(t)`, `t.numpy()`, `np.asarray(t)`, and so
an index (`x[i]`), a shape (`mt.reshape(x, s)`), `pad`'s fill or a Python `if`
on a tensor, tell the tracer (`context.value_read`). The trace then holds only
for the values of the arguments that tensor came from (`Graph.value_inputs`):
`mt.function` traces again for other values, as TensorFlow does for a new
Python number. A variable's value read that way raises: a trace would freeze it.

Custom gradients. A `@mt.custom_gradient` call records its forward ops and
then ONE op of type IdentityN. In a trace that op becomes an IdentityN node,
as in TensorFlow: its gradient function is traced too, into a second graph
on upstream placeholders shaped like the outputs, registered under a fresh key
that the node names (`graph.register_gradient_graph`). The saved-model format
(`minitape.saved_model`) stores the same graphs as JSON.

Random draws (`mt.random`) are ops with no inputs, which `record` gives to
traces alone: each becomes a node that draws new numbers at every call, as
TensorFlow's random ops do. A value made from a draw is never "the same at
every call" (`same_at_every_call`), and reading it as a Python value raises.

What a trace freezes: anything computed outside minitape's ops, as TensorFlow
does. Ops made with `mt.primitive` cannot be traced.
"""
import contextlib

import numpy as np

from ..core.context import state
from ..graph import OPS, Graph, Node, Ref, register_gradient_graph
from ..ops.shapes import IDENTITY
from ..random import OP_TYPES as RANDOM_OPS
from ..core.recorder import Recorder
from ..core.tape_entries import Operation
from ..specs import TensorSpec
from ..core.tensor import Tensor, TensorLike, Variable, convert_to_tensor

__all__ = ["Tracer", "map_structure", "frozen", "show"]

DRAWN = frozenset(["drawn"])  # what a random draw depends on: new numbers at each call


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
        tracer._roles[op] = state.derivative
        deps = frozenset().union(*(tracer._deps_of(x) for x in op.inputs)) \
            if op.inputs else DRAWN if op.type in RANDOM_OPS else frozenset()
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


class Tracer(Recorder):
    """Stands in `state.tapes` while a function (or a custom gradient's backward)
    is traced, and turns what it sees into a Graph.

    It is a recorder (`recording.Recorder`: `_producer`, `_ops`, and the hook
    `_variable_assigned`); the variables it reads reach it through its
    `_VariableLog` in `state.variable_watchers`, not `_watch_variable`.
    """

    is_trace = True  # random draws are recorded; rules record their NaN masks

    def __init__(self, name, parent=None):
        self.name = name
        self.parent = parent            # the trace a backward graph captures values from
        self._producer = _EveryId()
        self._ops = _OpLog(self)
        self._roles = {}                # op -> state.derivative when it was recorded
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
        self._shape_specific = False    # see shapes_matter

    def _variable_assigned(self, variable, value, mode):
        """`variable.assign*(value)` during the trace (the engine calls this just
        before the value changes): record it as an AssignVariableOp node, so every
        call assigns. The trace sees the new value from then on; the variable
        itself never sees it (the value is the trace's: `state.traced_values`)."""
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

    def same_at_every_call(self, t):
        """Whether `t` has the same value at every call of the traced function:
        it depends on no argument, no variable and no random draw (a constant,
        or ops on constants). A rule may decide on such a value while tracing
        (`ops.zero_times_inf.moved` leaves out masks that could never change it)."""
        return not isinstance(t, Variable) and not self._deps_of(t)

    def _value_read(self, t):
        """`t`'s value was read as a Python value (an index, a shape, an op
        attribute, a condition) while tracing: the trace is right only for the
        values of the arguments it depends on, so calls key on them (as
        TensorFlow retraces for a new Python number)."""
        root = self
        while root.parent is not None:
            root = root.parent
        deps = self._deps_of(t) if not isinstance(t, Variable) else {("var", t._id)}
        if "drawn" in deps:
            raise ValueError(
                f"mt.function {root.name}: a value made from random numbers (mt.random) "
                "is used as a Python value (an index, a shape, an op attribute or a Python "
                "condition) while tracing; a trace would freeze it, but each call draws "
                "new numbers. Use it through ops (mt.where, mt.cast, ...)")
        for d in deps:
            if isinstance(d, tuple):
                d = self._variable(d[1])
                raise ValueError(
                    f"mt.function {root.name}: the value of variable {d.name!r} is used "
                    "as a Python value (an index, a shape, an op attribute or a Python "
                    "condition) while tracing; a trace would freeze it at "
                    f"{show(d._value)}. Pass it as an argument, or use it "
                    "through ops")
            if isinstance(d, int):
                root._value_inputs.setdefault(d, frozen(root._placeholders[d]._value))
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
        saved = (state.tapes, state.variable_watchers, state.value_readers, state.derivative,
                 state.traced_values)
        state.tapes, state.variable_watchers = [self], [self._watcher]
        state.value_readers, state.derivative = [self._value_read], None
        # The values the trace assigns are its own (a trace inside a trace starts
        # from the outer one's): the variables never change, the replay assigns.
        state.traced_values = dict(saved[-1] or {})
        try:
            yield self
        finally:
            self._settle()
            (state.tapes, state.variable_watchers, state.value_readers, state.derivative,
             state.traced_values) = saved

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
        child = Tracer(f"{self.name}/{name}_grad", parent=self)
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
            return Ref("c", frozen(t._value))

        def snapshot_read(v, index):
            """A read of an assigned variable is an Identity node where it was
            read: before the first assignment, or just after the assignment that
            gave the value, so later assignments do not change it."""
            key = ("read", v._id, index)
            if key not in reads:
                reads[key] = Node(IDENTITY.op_type, f"{v.name.split(':')[0]}/read",
                                  [Ref("v", v)], {}, [TensorSpec(v.shape, v.dtype)])
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
            entries.append((index, Node(op.type, op.name, inputs, node_attrs, specs,
                                        role=self._roles.get(op)),
                            [y._id for y in op.outputs]))
            local.update(y._id for y in op.outputs)

        def leaf(x):
            if x is None:
                return None
            if isinstance(x, TensorLike):
                return ref(x)
            if isinstance(x, (bool, int, float, complex, str, bytes, np.ndarray, np.generic)):
                return Ref("c", frozen(convert_to_tensor(x)._value))
            raise TypeError(f"mt.function {self.name} returned a {type(x).__name__} "
                            f"({x!r}); a function may return tensors, variables, numbers "
                            "and None, in lists, tuples and dicts")

        out_structure = map_structure(outputs, leaf)
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
        out_structure = map_structure(out_structure, lambda r: None if r is None
                                       else renumber(r))
        specs = [TensorSpec(t.shape, t.dtype) for t in self._placeholders + self._captures]
        graph = Graph(self.name, specs, nodes, out_structure,
                      num_captures=len(self._captures), args=args)
        graph.value_inputs = dict(self._value_inputs)
        graph.shape_specific = self._shape_specific
        return graph


def shapes_matter():
    """Called by code whose cost is checked for each call's sizes (a loaded
    graph of any input shape, against the saved-model limits): the traces being
    recorded now hold for their input shapes only, so a call with new shapes
    traces again, and that code checks them again."""
    for tracer in state.tapes:
        if tracer.is_trace:
            while tracer.parent is not None:
                tracer = tracer.parent
            tracer._shape_specific = True


def map_structure(s, fn):
    if isinstance(s, dict):
        return {k: map_structure(v, fn) for k, v in s.items()}
    if isinstance(s, tuple) and hasattr(s, "_fields"):
        return tuple(map_structure(v, fn) for v in s)
    if isinstance(s, (list, tuple)):
        return type(s)(map_structure(v, fn) for v in s)
    return fn(s)


def show(value):
    text = np.array2string(np.asarray(value), threshold=8)
    return text if len(text) <= 80 else text[:77] + "..."


def frozen(value):
    array = np.array(value)
    array.flags.writeable = False
    return array
