"""Tracing: running a Python function once on placeholders and keeping what it
did as a `Graph` (`graph.py`), for `mt.function` (`function.py`) to call.

A `Tracer` stands in `state.tapes` while the function runs. It claims to track
every tensor, so every op the function runs reaches it through `tape.record`,
and it keeps them all, in order, as the nodes of the graph (`build` writes
them out: `trace_graph.py`). A tensor that is neither a placeholder, nor a
variable read, nor the output of a recorded op (made by `mt.constant`, or a
Python number turned into a tensor) is a captured constant: the graph keeps
its value.

The rest of what a trace does is in modules of their own, one idea each:

- variables read and assigned (`trace_variables.py`): a read is a snapshot,
  an assignment (`v.assign`, `assign_add`, `assign_sub`) an AssignVariableOp
  node that happens again at each call; tracing never changes a variable;
- a finished trace written as a Graph (`trace_graph.py`);
- custom gradients (`trace_gradients.py`): a `@mt.custom_gradient` call
  becomes an IdentityN node naming its gradient function, traced into a
  second graph by a child trace (`child`), whose values of this trace are
  captures (`capture`).

Values read as Python values. `int(t)`, `t.numpy()`, `np.asarray(t)`, and so
an index (`x[i]`), a shape (`mt.reshape(x, s)`), `pad`'s fill or a Python `if`
on a tensor, tell the tracer (`context.value_read`). So the tracer keeps what
each value depends on (placeholders, variables, random draws). The trace then
holds only for the values of the arguments that tensor came from
(`Graph.value_inputs`): `mt.function` traces again for other values, as
TensorFlow does for a new Python number. A variable's value read that way
raises: a trace would freeze it.

Random draws (`mt.random`) are ops with no inputs, which `record` gives to
traces alone: each becomes a node that draws new numbers at every call, as
TensorFlow's random ops do. A value made from a draw is never "the same at
every call" (`same_at_every_call`), and reading it as a Python value raises.

What a trace freezes: anything computed outside minitape's ops, as TensorFlow
does. Ops made with `mt.primitive` cannot be traced.
"""
import contextlib

import numpy as np

from .. import arguments
from ..core.context import state
from ..core.recorder import Recorder
from ..core.tape_entries import Operation
from ..core.tensor import Tensor, Variable, convert_to_tensor, frozen
from ..random import OP_TYPES as RANDOM_OPS
from .trace_gradients import traced_custom_gradient
from .trace_graph import GraphWriter
from .trace_variables import TracedVariables

__all__ = ["Tracer", "show"]

DRAWN = frozenset(["drawn"])  # what a random draw depends on: new numbers at each call


class _EveryId(dict):
    """A tracer's `_producer`: it claims every tensor, so `record` gives it every op."""

    def __contains__(self, key):
        return True

    def __setitem__(self, key, value):
        pass


class _OpLog(list):
    """A tracer's `_ops`, the nodes of its graph to be: `record` appends each op
    here, and the tracer notes what its outputs are and depend on."""

    def __init__(self, tracer):
        super().__init__()
        self.tracer = tracer

    def append(self, op):
        tracer = self.tracer
        tracer.variables.settle()
        if op.type == "IdentityN" and op.attrs and "_custom_rule" in op.attrs:
            op = traced_custom_gradient(tracer, op)
        super().append(op)
        tracer.roles[op] = state.derivative
        deps = frozenset().union(*(tracer._deps_of(x) for x in op.inputs)) \
            if op.inputs else DRAWN if op.type in RANDOM_OPS else frozenset()
        for y in op.outputs:
            tracer._known.add(y._id)
            tracer.by_array[id(y._value)] = y
            if deps:
                tracer._deps[y._id] = deps


class Tracer(Recorder):
    """Stands in `state.tapes` while a function (or a custom gradient's backward)
    is traced, and turns what it sees into a Graph.

    It is a recorder (`core.recorder.Recorder`: `_producer`, `_ops`, and the hook
    `_variable_assigned`); the variables it reads reach it through its
    `variables` (`trace_variables.TracedVariables`) in
    `state.variable_watchers`, not `_watch_variable`.
    """

    is_trace = True  # random draws are recorded; rules record their NaN masks

    def __init__(self, name, parent=None):
        self.name = name
        self.parent = parent            # the trace a backward graph captures values from
        self._producer = _EveryId()
        self._ops = _OpLog(self)
        self.roles = {}                 # op -> state.derivative when it was recorded
        self.placeholders = []
        self.captures = []              # parent tensors this graph takes as extra inputs
        self._known = set()             # ids of tensors defined in this trace
        self.by_array = {}              # id(ndarray) -> the latest tensor holding it
        self.variables = TracedVariables(None if parent is None else parent.variables)
        # Which placeholders (their index) or variables each traced value depends
        # on, and the placeholders whose values the trace used as Python values.
        self._deps = {}
        self.value_inputs = {}          # placeholder index -> the value it was traced for
        self.shape_specific = False     # see shapes_matter

    def child(self, name):
        """A trace inside this one (a custom gradient's gradient function)."""
        return Tracer(name, parent=self)

    def _variable_assigned(self, variable, value, mode):
        """`variable.assign*(value)` during the trace (the engine calls this just
        before the value changes): record it as an AssignVariableOp node, so every
        call assigns. The trace sees the new value from then on; the variable
        itself never sees it (the value is the trace's: `state.traced_values`)."""
        x = value if type(value) is Tensor and value.dtype == variable.dtype else \
            convert_to_tensor(value, dtype=variable.dtype)
        self._ops.append(Operation("AssignVariableOp", (x,), (),
                                   {"variable": variable, "mode": mode}, mode))
        self.variables.assigned(variable, len(self._ops) - 1)

    # --- the function's inputs -------------------------------------------------------
    def placeholder(self, value_tensor):
        """A new input of the graph, standing for `value_tensor` while tracing."""
        t = Tensor(np.array(value_tensor._value))  # its own array (trace_gradients._forward_value)
        self._deps[t._id] = frozenset([len(self.placeholders) if self.parent is None
                                       else "upstream"])
        self.placeholders.append(t)
        self._known.add(t._id)
        self.by_array[id(t._value)] = t
        return t

    def _defines(self, tensor):
        """Whether this (still recording) trace can name `tensor`; a value of an
        enclosing trace becomes a capture (an extra input) of this one."""
        if tensor._id in self._known:
            return True
        return self.capture(tensor)

    def capture(self, tensor):
        """Take `tensor`, a value of an enclosing trace, as an extra input; False
        if no enclosing trace defines it."""
        if self.parent is not None and self.parent._defines(tensor):
            self.captures.append(tensor)
            self._known.add(tensor._id)
            return True
        return False

    # --- what each value depends on ------------------------------------------------
    def _deps_of(self, t):
        """The placeholders (indices) and Variables the traced value `t` depends on."""
        if isinstance(t, Variable):
            return frozenset([("var", t._id)])
        deps = self._deps.get(t._id)
        if deps is not None:
            return deps
        if t._id in self.variables.by_id:
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
                d = self.variables.find(d[1])
                raise ValueError(
                    f"mt.function {root.name}: the value of variable {d.name!r} is used "
                    "as a Python value (an index, a shape, an op attribute or a Python "
                    "condition) while tracing; a trace would freeze it at "
                    f"{show(d._value)}. Pass it as an argument, or use it "
                    "through ops")
            if isinstance(d, int):
                root.value_inputs.setdefault(d, frozen(root.placeholders[d]._value))
            else:
                raise ValueError(
                    f"mt.function {root.name}: a gradient function uses the value of an "
                    "upstream gradient as a Python value (an index, a shape or a "
                    "condition); a traced gradient cannot depend on it")

    # --- running and finishing ---------------------------------------------------------
    @contextlib.contextmanager
    def active(self):
        """Make this trace the only recorder (outer tapes pause while tracing; they
        record the replay instead)."""
        saved = (state.tapes, state.variable_watchers, state.value_readers, state.derivative,
                 state.traced_values)
        state.tapes, state.variable_watchers = [self], [self.variables]
        state.value_readers, state.derivative = [self._value_read], None
        # The values the trace assigns are its own (a trace inside a trace starts
        # from the outer one's): the variables never change, the replay assigns.
        state.traced_values = dict(saved[-1] or {})
        try:
            yield self
        finally:
            self.variables.settle()
            (state.tapes, state.variable_watchers, state.value_readers, state.derivative,
             state.traced_values) = saved

    def build(self, outputs, args=None):
        """Turn the recorded ops into a Graph returning `outputs` (a structure)."""
        self.variables.settle()
        return GraphWriter(self).graph(outputs, args)


def shapes_matter():
    """Called by code whose cost is checked for each call's sizes (a loaded
    graph of any input shape, against the saved-model limits): the traces being
    recorded now hold for their input shapes only, so a call with new shapes
    traces again, and that code checks them again."""
    for tracer in state.tapes:
        if tracer.is_trace:
            while tracer.parent is not None:
                tracer = tracer.parent
            tracer.shape_specific = True


def show(value):
    """A tensor's value (an array or a NumPy scalar) as short text, as NumPy prints
    it; `arguments._show` prints what is not an array as its repr."""
    return arguments._show(np.asarray(value))
