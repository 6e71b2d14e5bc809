"""Graphs: what `mt.function` traces a Python function into, and how to run one.

A `Graph` is a list of `Node`s in execution order. Each node names an op type,
its inputs (`Ref`s: a value of this graph, a Variable, or a constant array) and
the attributes the op needs. `run_graph` runs the nodes again through the
public ops (`OPS`: how each op type replays, from its declaration,
ops/declaration.py, or from the table below for the families not declared so
yet), so tapes record a replay like any other computation and gradients of any
order flow through it.
`minitape.compiling.compiler` turns the same graph into straight-line NumPy code.

A custom gradient traced into a graph is a node of type IdentityN whose
gradient is itself a graph, registered in the gradient registry under a fresh
key (`register_gradient_graph`).
"""
import itertools
import os
import weakref

import numpy as np

from . import ops, random  # noqa: F401 (ops: the families declare every op)
from .core import registry
from .core.context import state
from .ops.declaration import DECLARED
from .core.tape_entries import record
from .specs import TensorSpec
from .core.tensor import Tensor, Variable

__all__ = ["Graph", "Node", "Ref", "run_graph", "NodeError", "bind_dims", "OPS", "OpDef",
           "register_gradient_graph", "GradientKey", "GRADIENT_GRAPHS"]

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
        return f"const({show_constant(self.x)})"


def show_constant(value, limit=16):
    """A constant as graph text and program comments show it, on one line: its
    numbers when it has at most `limit` of them (`3.0`, `[1.0, 2.0]`), else its
    dtype and shape (`float32[70, 7, 10]`). Only numbers, brackets and a dtype
    name: nothing read from a file reaches the text as it was written."""
    v = np.asarray(value)
    if v.size > limit or v.size == 0 or v.dtype.kind not in "biufc":
        return f"{v.dtype.name}{list(v.shape)}"

    def text(a):  # str of a NumPy scalar: the shortest digits that give it back
        return str(a[()]) if a.ndim == 0 else "[" + ", ".join(text(r) for r in a) + "]"
    return text(v)


class Node:
    """One op of a graph. `outputs` are the TensorSpecs it produced when traced;
    its output values are numbered from `first`. In a shape-polymorphic graph,
    `symbolic` holds each output's shape with symbol names (str) for the sizes
    that vary, else it is None. `role` is "adjoint" for an op a tape's gradient
    or jacobian call computed, "tangent" for one a JVP rule computed, else None
    (`context.state.derivative` when it was traced; compiled programs name
    their lines by it). A random draw keeps its numbers in `stream` (made at
    its first call: `draws`), so each call, replayed or compiled, takes the
    next ones, as TensorFlow keeps one generator per random op of a graph."""

    __slots__ = ("op", "name", "inputs", "attrs", "outputs", "first", "symbolic", "role",
                 "stream")

    def __init__(self, op, name, inputs, attrs, outputs, symbolic=None, role=None):
        self.op, self.name, self.inputs, self.attrs = op, name, inputs, attrs
        self.outputs, self.symbolic, self.role = outputs, symbolic, role
        self.first, self.stream = 0, None

    def draws(self):
        """The Stream a random draw node takes its numbers from."""
        if self.stream is None:
            self.stream = random.Stream(self.attrs["seed"], self.attrs["seed2"])
        return self.stream


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
        # Inputs whose values the trace used as Python values (an index, a shape,
        # an op attribute): input number -> the value this graph is right for.
        self.value_inputs = {}
        # Whether the trace holds for its input shapes only (tracing.shapes_matter)
        self.shape_specific = False
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
            f"t{i}: {s.dtype}{'[...]' if shape is None else list(shape)}" for i, (s, shape) in
            enumerate(zip(self.inputs, shapes))) + ")"]
        for node in self.nodes:
            outs = ", ".join(f"t{node.first + k}" for k in range(len(node.outputs)))
            args = ", ".join(map(repr, node.inputs))
            attrs = {k: (Ref("v", v) if isinstance(v, Variable) else v)
                     for k, v in node.attrs.items() if k not in ("forward", "captures")}
            extra = f" {attrs}" if attrs else ""
            role = f"  ({node.role})" if node.role else ""
            lines.append(f"  {outs + ' = ' if outs else ''}{node.op}({args}){extra}{role}")
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
    dims = bind_dims(graph, inputs) if graph.symbolic_inputs is not None else None

    def value(ref):
        kind = ref.kind
        if kind == "t":
            return env[ref.x]
        if kind == "v":
            return ref.x.read_value()
        return Tensor(ref.x)

    for i, node in enumerate(graph.nodes):
        shapes = None if dims is None or node.symbolic is None else \
            [None if s is None else tuple(dims[d] if isinstance(d, str) else d for d in s)
             for s in node.symbolic]
        if check:
            outs = _checked_run(i, node, value, shapes)
        else:
            outs = _run_node(node, [value(r) for r in node.inputs], value, shapes)
        env[node.first:node.first + len(outs)] = outs
    return pack_outputs(graph.outputs, value)


class NodeError(Exception):
    """A node failed during a checked run (`run_graph(..., check=True)`)."""

    def __init__(self, index, node, error):
        super().__init__(f"node {index} ({node.op}): {type(error).__name__}: {error}")
        self.index, self.node, self.error = index, node, error


def bind_dims(graph, inputs):
    """The sizes of a polymorphic graph's symbols, read off its inputs."""
    dims = {}
    for k, (t, shape) in enumerate(zip(inputs, graph.symbolic_inputs)):
        if shape is None:
            continue  # any shape
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
        declared = DECLARED.get(node.op)
        if declared is None or not declared.singular:
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
    if node.op in random.OP_TYPES:  # the node's next numbers (a checked run: a copy's)
        return (random.replay(node.op, node.attrs, shapes[0], None if check else node.draws()),)
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


def pack_outputs(structure, value):
    """A graph's output structure with each Ref replaced by `value(ref)`."""
    if isinstance(structure, Ref):
        return value(structure)
    if structure is None:
        return None
    if isinstance(structure, dict):
        return {k: pack_outputs(v, value) for k, v in structure.items()}
    if isinstance(structure, list):
        return [pack_outputs(v, value) for v in structure]
    if isinstance(structure, tuple):
        return tuple(pack_outputs(v, value) for v in structure)
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
    recorded Operation; `arity` is the number of inputs (None: one or more).
    Each op's declaration says how (ops/declaration.py); random draws have no
    inputs, and a stream of numbers each node keeps (`_run_node`)."""

    __slots__ = ("run", "arity", "from_op")

    def __init__(self, run, arity, from_op=None):
        self.run, self.arity = run, arity
        self.from_op = from_op or (lambda op: {})


OPS = {op_type: OpDef(d.replay, d.arity, d.attrs_of)
       for op_type, d in DECLARED.items() if d.replay is not None}
OPS.update({op_type: OpDef(lambda xs, a, o, t=op_type: random.replay(t, a, o[0]), 0,
                           random.attrs_of)
            for op_type in random.OP_TYPES})


# --- gradient graphs in the registry ------------------------------------------------

GRADIENT_GRAPHS = {}  # registry key -> the Graph its rule replays (while registered)
_gradient_keys = itertools.count(1)
_process_token = os.urandom(4).hex()  # see register_gradient_graph


class GradientKey(str):
    """The registry key of a gradient graph, which also owns the registration:
    the IdentityN nodes that name it and the ops their calls record hold this
    object, and when the last of them is gone, so is the registry entry (and
    with it the gradient graph and the variables it reads). The registry
    itself is keyed by a plain copy of the string, so it never holds this."""


def _unregister(key):
    registry.unregister(key)
    GRADIENT_GRAPHS.pop(key, None)


def register_gradient_graph(graph):
    """Register a rule that replays `graph` under a fresh key; return the key
    (a GradientKey: keep it for as long as the rule is needed).

    The rule feeds the upstream gradients and the op's captured forward values
    (attribute `_captures`) to the graph. Keys carry a random per-process token,
    so a key saved by one process never names another process's gradient.
    """
    name = f"CustomGradient-{_process_token}-{next(_gradient_keys)}"

    def rule(op, *grads):
        return run_graph(graph, list(grads) + list(op.attrs["_captures"]))

    rule.__qualname__ = f"gradient_graph[{name}]"
    registry.RegisterGradient(name)(rule)
    GRADIENT_GRAPHS[name] = graph
    key = GradientKey(name)
    weakref.finalize(key, _unregister, name)
    return key
