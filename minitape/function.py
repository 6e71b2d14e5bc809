"""`mt.function`: trace Python code into a graph of minitape ops, then replay it.

Tracing. The first call with new input shapes runs the Python function once on
placeholder tensors while a `_Tracer` stands in `state.tapes`. The tracer
claims to track every tensor, so every op the function runs reaches it through
`tape.record`, and it keeps them all, in order, as the nodes of a `Graph`. A
tensor that is neither a placeholder, nor a variable read, nor the output of
a recorded op (made by `mt.constant`, or a Python number turned into a
tensor) is a captured constant: the graph keeps its value.

Replaying. A later call with the same input shapes and dtypes does not run the
Python function: `run_graph` runs each node again through the public op of its
type (`OPS` maps "MatMul" to `mt.matmul`, ...). Because replay goes through the
ordinary ops, tapes record it, and gradients of any order flow through a
function call. Variables are referenced, not copied: each replay reads their
current value.

Custom gradients. A `@mt.custom_gradient` call records its forward ops and
then ONE op of type IdentityN from its inputs to copies of its outputs, whose
gradient is the function's `grad_fn`. In a trace that op becomes an IdentityN
node, as in TensorFlow: its gradient function is traced too, into a second
graph, on upstream placeholders shaped like the outputs, and that graph is
registered in the gradient registry under a fresh key,
`CustomGradient-<process>-<n>`, which the replayed op names in its attribute
`_gradient_op_type`; `registry.lookup` finds the rule there. The saved-model
format (`minitape.saved_model`) stores the same graphs as JSON.

Variable assignments (`v.assign`, `assign_add`, `assign_sub`) are recorded as
AssignVariableOp nodes and happen again at each call.

What a trace freezes (as TensorFlow does without AutoGraph): Python control
flow and `.numpy()`/`float()` on tensor values, random numbers drawn with
`mt.random`, and anything else computed outside minitape's ops take the values
they had while tracing. Ops made with `mt.primitive` cannot be traced. A
gradient taken *inside* a function replays the masks that relu, maximum,
minimum, reduce_max/min, elu and pow's gradient rules computed with NumPy at
trace time, until those rules build their masks from recorded ops.
"""
import contextlib
import functools
import inspect
import itertools
import threading
import weakref

import numpy as np

from . import nest, registry
from .context import state
from .recording import Operation, record
from .tensor import Tensor, TensorLike, TensorSpec, Variable, convert_to_tensor

__all__ = ["function", "Function", "ConcreteFunction", "Graph", "Node", "Ref", "run_graph",
           "register_gradient_graph", "GRADIENT_GRAPHS", "OPS"]


# --- graphs ---------------------------------------------------------------------

class Ref:
    """Where a node input comes from: kind "t" (value number `x` of this graph:
    its inputs first, then each node's outputs), "v" (the current value of
    Variable `x`) or "c" (the constant NumPy array `x`)."""

    __slots__ = ("kind", "x")

    def __init__(self, kind, x):
        self.kind, self.x = kind, x

    def __repr__(self):
        if self.kind == "t":
            return f"t{self.x}"
        if self.kind == "v":
            return f"var({self.x.name})"
        return f"const{tuple(self.x.shape)}"


class Node:
    """One op of a graph. `outputs` are the TensorSpecs it produced when traced;
    its output values are numbered from `first`. In a shape-polymorphic graph,
    `symbolic` holds each output's shape with symbol names (str) for the sizes
    that vary, else it is None."""

    __slots__ = ("op", "name", "inputs", "attrs", "outputs", "first", "symbolic")

    def __init__(self, op, name, inputs, attrs, outputs, symbolic=None):
        self.op, self.name, self.inputs, self.attrs = op, name, inputs, attrs
        self.outputs, self.symbolic = outputs, symbolic
        self.first = 0


class Graph:
    """A traced function: input specs, nodes in execution order, and an output
    structure (nested lists, tuples and dicts whose leaves are Refs or None).

    A gradient graph (the traced backward of a custom gradient) takes the
    upstream gradients first and then `num_captures` values captured from the
    forward graph, and returns one gradient (or None) per input of its node.
    """

    def __init__(self, name, inputs, nodes, outputs, num_captures=0, args=None,
                 dims=None, symbolic_inputs=None):
        self.name = name
        self.inputs = list(inputs)       # TensorSpecs with fully known shapes
        self.nodes = list(nodes)
        self.outputs = outputs
        self.num_captures = num_captures
        self.args = args                 # argument template (function graphs)
        # Shape polymorphism: `dims` maps symbol names to the sizes the graph was
        # traced with; `symbolic_inputs` are the input shapes with those symbols.
        self.dims = dict(dims or {})
        self.symbolic_inputs = symbolic_inputs
        first = len(self.inputs)
        for node in self.nodes:
            node.first = first
            first += len(node.outputs)
        self.num_values = first

    def spec_of(self, ref):
        """The TensorSpec of a value this graph refers to."""
        if ref.kind == "t":
            if ref.x < len(self.inputs):
                return self.inputs[ref.x]
            for node in self.nodes:
                if node.first <= ref.x < node.first + len(node.outputs):
                    return node.outputs[ref.x - node.first]
            raise IndexError(f"no value t{ref.x} in graph {self.name}")
        value = ref.x._value if ref.kind == "v" else ref.x
        return TensorSpec(value.shape, value.dtype)

    def __str__(self):
        shapes = self.symbolic_inputs or [s.shape for s in self.inputs]
        lines = [f"graph {self.name}(" + ", ".join(
            f"t{i}: {s.dtype}{list(shape)}" for i, (s, shape) in
            enumerate(zip(self.inputs, shapes))) + ")"]
        for node in self.nodes:
            outs = ", ".join(f"t{node.first + k}" for k in range(len(node.outputs)))
            args = ", ".join(map(repr, node.inputs))
            attrs = {k: (Ref("v", v) if isinstance(v, Variable) else v)
                     for k, v in node.attrs.items() if k not in ("forward", "captures")}
            extra = f" {attrs}" if attrs else ""
            lines.append(f"  {outs + ' = ' if outs else ''}{node.op}({args}){extra}")
        lines.append(f"  return {_structure_text(self.outputs)}")
        return "\n".join(lines)

    __repr__ = __str__


def _structure_text(s):
    if isinstance(s, dict):
        return "{" + ", ".join(f"{k!r}: {_structure_text(v)}" for k, v in s.items()) + "}"
    if isinstance(s, (list, tuple)):
        inner = ", ".join(_structure_text(v) for v in s)
        return f"[{inner}]" if isinstance(s, list) else f"({inner}{',' if len(s) == 1 else ''})"
    return repr(s)


# --- replaying a graph ----------------------------------------------------------

def run_graph(graph, inputs, check=False):
    """Run `graph` on `inputs` (Tensors) through the public ops; returns its
    output structure. With `check`, every node's outputs must match the specs
    recorded in the graph (the saved-model loader's dry run)."""
    env = list(inputs) + [None] * (graph.num_values - len(inputs))
    dims = bind_dims(graph, inputs) if graph.dims else None

    def value(ref):
        kind = ref.kind
        if kind == "t":
            return env[ref.x]
        if kind == "v":
            return ref.x.read_value()
        return Tensor(ref.x)

    for i, node in enumerate(graph.nodes):
        shapes = None if dims is None or node.symbolic is None else \
            [tuple(dims[d] if isinstance(d, str) else d for d in s) for s in node.symbolic]
        if check:
            outs = _checked_run(i, node, value, shapes)
        else:
            outs = _run_node(node, [value(r) for r in node.inputs], value, shapes)
        env[node.first:node.first + len(outs)] = outs
    return _pack(graph.outputs, value)


class NodeError(Exception):
    """A node failed during a checked run (`run_graph(..., check=True)`)."""

    def __init__(self, index, node, error):
        super().__init__(f"node {index} ({node.op}): {type(error).__name__}: {error}")
        self.index, self.node, self.error = index, node, error


def bind_dims(graph, inputs):
    """The sizes of a polymorphic graph's symbols, read off its inputs."""
    dims = {}
    for k, (t, shape) in enumerate(zip(inputs, graph.symbolic_inputs)):
        if len(t.shape) != len(shape):
            raise ValueError(f"graph {graph.name}: input {k} has shape {t.shape}, "
                             f"expected rank {len(shape)}")
        for n, d in zip(t.shape, shape):
            if isinstance(d, str):
                d = dims.setdefault(d, n)
            if d != n:
                raise ValueError(f"graph {graph.name}: input {k} has shape {t.shape}, "
                                 f"which does not fit {list(shape)}")
    return dims


def _checked_run(i, node, value, shapes):
    """Run a node for the loader's dry run: any failure, or outputs that differ
    from the declared specs, become a NodeError. A singular matrix is a fact
    about the dry run's values, not about the graph, so it yields zeros."""
    try:
        outs = _run_node(node, [value(r) for r in node.inputs], value, shapes, check=True)
    except np.linalg.LinAlgError as e:
        if node.op not in ("MatrixSolve", "MatrixInverse"):
            raise NodeError(i, node, e) from None
        outs = tuple(Tensor(np.zeros(s.shape, s.dtype)) for s in node.outputs)
    except Exception as e:
        raise NodeError(i, node, e) from None
    try:
        _check_outputs(node, outs)
    except ValueError as e:
        raise NodeError(i, node, e) from None
    return outs


def _run_node(node, args, value, shapes=None, check=False):
    if node.op == "IdentityN":
        return _replay_custom_gradient(node, args, value)
    if node.op == "AssignVariableOp":
        return _assign(node, args[0], check)
    if shapes is None:
        shapes = [s.shape for s in node.outputs]
    outs = OPS[node.op].run(args, node.attrs, shapes)
    return outs if isinstance(outs, (list, tuple)) else (outs,)


def _assign(node, x, check):
    """Replay `variable.assign(x)` (or assign_add, assign_sub); a checked run
    only verifies that the value fits the variable."""
    variable, mode = node.attrs["variable"], node.attrs["mode"]
    if x.shape != variable.shape or x.dtype != variable.dtype:
        raise ValueError(f"{mode} of a {x.dtype}{list(x.shape)} value to variable "
                         f"{variable.name} of {variable.dtype}{list(variable.shape)}")
    if not check:
        getattr(variable, mode)(x, read_value=False)
    return ()


def _check_outputs(node, outs):
    if len(outs) != len(node.outputs):
        raise ValueError(f"op {node.op} produced {len(outs)} outputs, the graph "
                         f"declares {len(node.outputs)}")
    for k, (t, spec) in enumerate(zip(outs, node.outputs)):
        if t.shape != spec.shape or t.dtype != spec.dtype:
            raise ValueError(f"op {node.op} output {k} has shape {t.shape} and dtype "
                             f"{t.dtype}, the graph declares shape {spec.shape} and "
                             f"dtype {spec.dtype}")


def _pack(structure, value):
    if isinstance(structure, Ref):
        return value(structure)
    if structure is None:
        return None
    if isinstance(structure, dict):
        return {k: _pack(v, value) for k, v in structure.items()}
    if isinstance(structure, list):
        return [_pack(v, value) for v in structure]
    if isinstance(structure, tuple):
        return tuple(_pack(v, value) for v in structure)
    raise TypeError(f"bad output structure {structure!r}")


def _replay_custom_gradient(node, args, value):
    """Replay an IdentityN node: outputs are copies of its forward values, and
    the tapes record ONE op whose gradient is the rule under its key."""
    forward = [value(r) for r in node.attrs["forward"]]
    captures = [value(r) for r in node.attrs["captures"]]
    outs = tuple(Tensor(f._value) for f in forward)
    if state.tapes:
        record("IdentityN", tuple(args), outs,
               {"_gradient_op_type": node.attrs["gradient"],
                "num_inputs": node.attrs["num_inputs"],
                "_forward_outputs": tuple(forward), "_captures": tuple(captures)},
               "IdentityN")
    return outs


# --- the op table: how to replay each op type ------------------------------------

class OpDef:
    """How to replay one op type: `run(inputs, attrs, output_shapes)` calls the
    public op; `from_op(operation)` takes the attributes a replay needs from a
    recorded Operation; `arity` is the number of inputs (None: one or more)."""

    __slots__ = ("run", "arity", "from_op")

    def __init__(self, run, arity, from_op=None):
        self.run, self.arity = run, arity
        self.from_op = from_op or (lambda op: {})


def _build_op_table():
    from . import ops
    from .custom import stop_gradient
    from .ops import shapes

    def unary(fn):
        return OpDef(lambda xs, a, o: fn(xs[0]), 1)

    def binary(fn):
        return OpDef(lambda xs, a, o: fn(xs[0], xs[1]), 2)

    def attr(*names):
        return lambda op: {n: op.attrs[n] for n in names}

    def reduction(fn):
        return OpDef(lambda xs, a, o: fn(xs[0], axis=list(a["axis"]), keepdims=a["keepdims"]),
                     1, lambda op: {"axis": tuple(op.attrs["axis"]),
                                    "keepdims": bool(op.attrs["keepdims"])})

    table = {
        "AddV2": binary(ops.add), "Sub": binary(ops.subtract),
        "Mul": binary(ops.multiply), "RealDiv": binary(ops.divide),
        "Pow": binary(ops.pow), "Maximum": binary(ops.maximum),
        "Minimum": binary(ops.minimum),
        "Neg": unary(ops.negative), "Square": unary(ops.square), "Sqrt": unary(ops.sqrt),
        "Exp": unary(ops.exp), "Log": unary(ops.log), "Sin": unary(ops.sin),
        "Cos": unary(ops.cos), "Tanh": unary(ops.tanh), "Abs": unary(ops.abs),
        "Identity": unary(ops.identity), "Sigmoid": unary(ops.sigmoid),
        "Relu": unary(ops.relu), "Elu": unary(ops.elu), "Softplus": unary(ops.softplus),
        "MatrixInverse": unary(ops.inv),
        "SelectV2": OpDef(lambda xs, a, o: ops.where(*xs), 3),
        "Cast": OpDef(lambda xs, a, o: ops.cast(xs[0], a["DstT"]), 1,
                      lambda op: {"DstT": np.dtype(op.attrs["DstT"])}),
        "Reshape": OpDef(lambda xs, a, o: ops.reshape(xs[0], o[0]), 1),
        "BroadcastTo": OpDef(lambda xs, a, o: ops.broadcast_to(xs[0], o[0]), 1),
        "Transpose": OpDef(lambda xs, a, o: ops.transpose(xs[0], a["perm"]), 1,
                           lambda op: {"perm": tuple(int(p) for p in op.attrs["perm"])}),
        "PadV2": OpDef(lambda xs, a, o: ops.pad(xs[0], a["paddings"],
                                                constant_values=a["constant_values"]),
                       1, _pad_attrs),
        "ConcatV2": OpDef(lambda xs, a, o: ops.concat(xs, a["axis"]), None, attr("axis")),
        "Pack": OpDef(lambda xs, a, o: ops.stack(xs, a["axis"]), None, attr("axis")),
        "StridedSlice": OpDef(lambda xs, a, o: ops.getitem(xs[0], a["index"]), 1,
                              attr("index")),
        "StridedSliceGrad": OpDef(  # scatter into zeros of the output's shape
            lambda xs, a, o: shapes._scatter(xs[0], a["index"], o[0][a["batch_ndim"]:],
                                             a["batch_ndim"]),
            1, lambda op: {"index": op.attrs["index"],
                           "batch_ndim": int(op.attrs["batch_ndim"])}),
        "Sum": reduction(ops.reduce_sum), "Mean": reduction(ops.reduce_mean),
        "Max": reduction(ops.reduce_max), "Min": reduction(ops.reduce_min),
        "Prod": reduction(ops.reduce_prod),
        "MatMul": OpDef(lambda xs, a, o: ops.matmul(xs[0], xs[1], a["transpose_a"],
                                                    a["transpose_b"]),
                        2, attr("transpose_a", "transpose_b")),
        "MatrixSolve": OpDef(lambda xs, a, o: ops.solve(xs[0], xs[1], adjoint=a["adjoint"]),
                             2, attr("adjoint")),
        "Einsum": OpDef(lambda xs, a, o: ops.einsum(a["equation"], *xs), None,
                        attr("equation")),
        "Softmax": OpDef(lambda xs, a, o: ops.softmax(xs[0], a["axis"]), 1, attr("axis")),
    }
    # Value ops: not differentiable (the engine registers them NotDifferentiable),
    # but recorded, since their results depend on their inputs.
    for op_type, fn in {"Equal": ops.equal, "NotEqual": ops.not_equal, "Less": ops.less,
                        "LessEqual": ops.less_equal, "Greater": ops.greater,
                        "GreaterEqual": ops.greater_equal}.items():
        table[op_type] = OpDef(lambda xs, a, o, fn=fn: fn(xs[0], xs[1]), 2)
    for op_type, fn in {"Sign": ops.sign, "Round": ops.round, "Floor": ops.floor,
                        "StopGradient": stop_gradient}.items():
        table[op_type] = OpDef(lambda xs, a, o, fn=fn: fn(xs[0]), 1)
    return table


def _pad_attrs(op):
    """PadV2 keeps only the paddings; the fill value is read off the output."""
    paddings = tuple((int(a), int(b)) for a, b in op.attrs["paddings"])
    out = op.outputs[0]._value
    inner = np.ones(out.shape, dtype=bool)
    inner[tuple(slice(a, a + n) for (a, _), n in zip(paddings, op.inputs[0].shape))] = False
    fill = out[inner][0].item() if inner.any() else 0
    return {"paddings": paddings, "constant_values": fill}


OPS = _build_op_table()


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
        if op.type == "IdentityN" and op.attrs and "_custom_rule" in op.attrs:
            op = tracer._trace_custom_gradient(op)
        super().append(op)
        for y in op.outputs:
            tracer._known.add(y._id)
            tracer._by_array[id(y._value)] = y


class _VariableWatcher(list):
    """Collects the variables read (all of them, trainable or not). Compared by
    identity, so `state.variable_watchers.remove(other)` never removes it."""

    def __init__(self, on_append=None):
        super().__init__()
        self._on_append = on_append

    def append(self, variable):
        super().append(variable)
        if self._on_append is not None:
            self._on_append(variable)

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__


class _Tracer:
    """Stands in `state.tapes` while a function (or a custom gradient's backward)
    is traced, and turns what it sees into a Graph.

    It offers what the engine asks of a tape: `_producer`, `_ops`,
    `_watch_accessed_variables` and `_watch_variable`.
    """

    _watch_accessed_variables = True

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
        self._watcher = _VariableWatcher(self._watch_variable)

    def _watch_variable(self, variable):
        self._variables[variable._id] = variable

    def _variable_assigned(self, variable, value, mode):
        """`variable.assign*(value)` during the trace (the engine calls this just
        before the value changes): record it as an AssignVariableOp node, so every
        call assigns. The trace sees the new value from then on, and the variable
        gets its old value back when the trace ends."""
        x = value if type(value) is Tensor and value.dtype == variable.dtype else \
            convert_to_tensor(value, dtype=variable.dtype)
        self._assigned.setdefault(variable._id, (variable, variable._value))
        self._ops.append(Operation("AssignVariableOp", (x,), (),
                                   {"variable": variable, "mode": mode}, mode))

    def placeholder(self, value_tensor):
        t = Tensor(np.array(value_tensor._value))  # its own array (see _forward_value)
        self._placeholders.append(t)
        self._known.add(t._id)
        self._by_array[id(t._value)] = t
        return t

    @contextlib.contextmanager
    def active(self):
        """Make this trace the only recorder (outer tapes pause while tracing; they
        record the replay instead)."""
        saved_tapes, saved_watchers = state.tapes, state.variable_watchers
        state.tapes, state.variable_watchers = [self], [self._watcher]
        try:
            yield self
        finally:
            state.tapes, state.variable_watchers = saved_tapes, saved_watchers
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
        local = {t._id for t in self._placeholders} | {t._id for t in self._captures}
        pending = []  # the output ids of each node, numbered at the end

        def ref(t):
            if isinstance(t, Variable):
                return Ref("v", t)
            if t._id in local:
                return Ref("id", t._id)
            v = self._variable(t._id)
            if v is not None:
                return Ref("v", v)
            if self._capture(t):  # a value of the enclosing trace
                local.add(t._id)
                return Ref("id", t._id)
            return Ref("c", _frozen(t._value))

        nodes = []
        for op in self._ops:
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
            nodes.append(Node(op.type, op.name, inputs, node_attrs, specs))
            pending.append([y._id for y in op.outputs])
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
        return Graph(self.name, specs, nodes, out_structure,
                     num_captures=len(self._captures), args=args)


def _map_structure(s, fn):
    if isinstance(s, dict):
        return {k: _map_structure(v, fn) for k, v in s.items()}
    if isinstance(s, tuple) and hasattr(s, "_fields"):
        return tuple(_map_structure(v, fn) for v in s)
    if isinstance(s, (list, tuple)):
        return type(s)(_map_structure(v, fn) for v in s)
    return fn(s)


def _frozen(value):
    array = np.array(value)
    array.flags.writeable = False
    return array


# --- gradient graphs in the registry ------------------------------------------------

GRADIENT_GRAPHS = {}  # registry key -> the Graph its rule replays
_gradient_keys = itertools.count(1)
_process_token = None


def register_gradient_graph(graph):
    """Register a rule that replays `graph` under a fresh key; return the key.

    The rule feeds the upstream gradients and the op's captured forward values
    (attribute `_captures`) to the graph. Keys carry a random per-process token,
    so a key saved by one process never names another process's gradient.
    """
    global _process_token
    if _process_token is None:
        import os
        _process_token = os.urandom(4).hex()
    key = f"CustomGradient-{_process_token}-{next(_gradient_keys)}"

    def rule(op, *grads):
        return run_graph(graph, list(grads) + list(op.attrs["_captures"]))

    rule.__qualname__ = f"gradient_graph[{key}]"
    registry.RegisterGradient(key)(rule)
    GRADIENT_GRAPHS[key] = graph
    return key


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


def _generalize(ga, gb, symbols):
    used = {}

    def shape(sa, sb):
        if sa.dtype != sb.dtype or len(sa.shape) != len(sb.shape):
            raise _NotPolymorphic
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
        if isinstance(a, _Input) or isinstance(b, _Input):
            return isinstance(a, _Input) and isinstance(b, _Input) and a.index == b.index
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
        elif not same(na.attrs, nb.attrs):
            raise _NotPolymorphic
        out = [shape(a, b) for a, b in zip(na.outputs, nb.outputs)]
        symbolic = out if any(isinstance(d, str) for s in out for d in s) else None
        nodes.append(Node(na.op, na.name, na.inputs, attrs, na.outputs, symbolic=symbolic))
    bound = {d for s in inputs for d in s if isinstance(d, str)}
    if set(used) - bound:
        raise _NotPolymorphic  # a size that varies but no input tells
    return Graph(ga.name, ga.inputs, nodes, ga.outputs, ga.num_captures, ga.args,
                 dims={d: used[d] for d in sorted(bound)}, symbolic_inputs=inputs)


def symbolic_key(key, graph):
    """A trace key with the tensors' shapes replaced by the graph's symbolic ones."""
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
        if p[2] != k[2] or len(p[1]) != len(k[1]):
            return False
        for d, n in zip(p[1], k[1]):
            if isinstance(d, str):
                d = dims.setdefault(d, n)
            if d != n:
                return False
    return True


# --- mt.function ----------------------------------------------------------------

class _Input:
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
    try:
        t = convert_to_tensor(value, dtype=spec.dtype)
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
    `_Input(i)`), the list of tensors, and the trace key."""
    tensors, key = [], []

    def tensor_leaf(t):
        key.append(("T", t.shape, t.dtype.str))
        tensors.append(t)
        return _Input(len(tensors) - 1)

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
    return split_arguments(list(bound.arguments.values()), input_signature, where)


def fill_arguments(template, tensors):
    def walk(v):
        if isinstance(v, _Input):
            return tensors[v.index]
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, tuple) and not hasattr(v, "_fields"):
            return tuple(walk(x) for x in v)
        return v
    return [walk(v) for v in template]


class ConcreteFunction:
    """One trace of a Function, for one set of input shapes and dtypes (or, when
    `polymorphic`, for every size of its symbolic dimensions)."""

    polymorphic = False

    def __init__(self, function, graph, key):
        self._function = function
        self.graph = graph
        self._key = key

    @property
    def inputs(self):
        return list(self.graph.inputs)

    def __call__(self, *args, **kwargs):
        template, tensors, key = self._function._split(args, kwargs)
        if key != self._key and not (self.polymorphic and key_matches(self._key, key)):
            raise ValueError(f"concrete function {self.graph.name}: these arguments do not "
                             f"match the ones it was traced for ({self.graph.inputs})")
        return run_graph(self.graph, tensors)

    def __repr__(self):
        return f"<ConcreteFunction {self.graph.name} inputs={self.graph.inputs}>"


class Function:
    """What `@mt.function` returns: a callable that traces once per input
    signature (shapes, dtypes and Python arguments) and replays afterwards."""

    def __init__(self, python_function, input_signature=None, name=None, instance=None):
        functools.update_wrapper(self, python_function)
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
        self._bound = weakref.WeakKeyDictionary()
        self._tracing_count = 0
        self._signature_concrete = None
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
                                                   instance=lambda i=instance: i)
            return bound
        if bound is None:
            bound = Function(self.python_function, self.input_signature, self._name,
                             instance=weakref.ref(instance))
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
                    concrete = self._trace(template, tensors, key)
                    self._concrete[key] = concrete
        return concrete

    def _trace(self, template, tensors, key):
        tracer = _Tracer(f"{self._name}_{self._tracing_count + 1}")
        placeholders = [tracer.placeholder(t) for t in tensors]
        with tracer.active():
            try:
                outputs = self._call_python(fill_arguments(template, placeholders))
            except Exception as e:
                e.add_note(f"(raised while tracing mt.function {self._name})")
                raise
        graph = tracer.build(outputs, args=template)
        self._tracing_count += 1
        return ConcreteFunction(self, graph, key)

    def __call__(self, *args, **kwargs):
        template, tensors, key = self._split(args, kwargs)
        return run_graph(self._concrete_for(template, tensors, key).graph, tensors)

    def get_concrete_function(self, *args, **kwargs):
        """The trace for these arguments (tensors, or mt.TensorSpecs), made if new.
        With an input_signature and no arguments: the trace for the signature."""
        if not args and not kwargs and self.input_signature is not None:
            args = tuple(self.input_signature)  # unknown sizes trace as 1, unknown rank as ()
        template, tensors, key = self._split(args, kwargs)
        return self._concrete_for(template, tensors, key)

    def concrete_functions(self):
        """The traces made so far."""
        return list(self._concrete.values())

    def signature_concrete_function(self):
        """The trace `mt.saved_model.save` writes for the input_signature.

        Unknown sizes in specs of known rank make it shape-polymorphic when the
        function allows: it is traced twice, with two different sizes for each
        unknown, and if the two graphs differ only in those sizes they become one
        graph whose shapes name them (`n0`, `n1`, ...). Otherwise it is the
        trace with each unknown size 1 (an unknown rank traces as a scalar).
        """
        if self.input_signature is None:
            return None
        if self._signature_concrete is None:
            self._signature_concrete = self._polymorphic_trace() or \
                self.get_concrete_function()
        return self._signature_concrete

    def _polymorphic_trace(self):
        specs = nest.flatten(list(self.input_signature))
        n = sum(d is None for s in specs if s.shape is not None for d in s.shape)
        if not n:
            return None
        pairs = sentinel_sizes(n)
        traces = []
        for pick in (0, 1):
            sizes = iter(p[pick] for p in pairs)
            examples = [Tensor(np.ones(() if s.shape is None else tuple(
                next(sizes) if d is None else d for d in s.shape), s.dtype)) for s in specs]
            args = nest.pack_like(list(self.input_signature), examples)
            template, tensors, key = self._split(tuple(args), {})
            traces.append((self._trace(template, tensors, key), key))
        symbols = {p: f"n{k}" for k, p in enumerate(pairs)}
        graph = generalize(traces[0][0].graph, traces[1][0].graph, symbols)
        if graph is None:
            return None
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
    trace is for. `autograph`, `jit_compile` and `reduce_retracing` are accepted
    for TensorFlow compatibility and ignored.
    """
    if func is None:
        return lambda f: Function(f, input_signature, name)
    return Function(func, input_signature, name)
