"""A finished trace written as a Graph: each recorded op a node, each tensor a
numbered value.

The trace (`tracing.Tracer`) kept the ops in the order they ran, with the
tensors they read and made. A graph names values by number instead:
placeholders first, then captures (values of an enclosing trace), then each
node's outputs in order. Every other tensor an op reads is one of:

- a variable's value: a read of the variable at each call (`Ref("v")`), or,
  where the trace assigns the variable, a snapshot: an Identity node placed
  just after the assignment that gave the value read, or before the first
  (`trace_variables.py`), so later assignments never change it;
- a value of an enclosing trace: a capture (an extra input);
- anything else (`mt.constant`, a Python number turned into a tensor): a
  constant, its value kept frozen in the graph.

Ops the graph cannot replay raise here, naming the op: an op type with no
declared replay (`mt.primitive`), an IdentityN without a traced gradient.
"""
import numpy as np

from ..core.tensor import TensorLike, Variable, convert_to_tensor, frozen
from ..graph import OPS, Graph, Node, Ref
from ..ops.shapes import IDENTITY
from ..specs import TensorSpec

__all__ = ["GraphWriter", "map_structure"]


class GraphWriter:
    """Writes the ops `trace` recorded as the nodes of a Graph (`graph()`)."""

    def __init__(self, trace):
        self.trace = trace
        self.local = {t._id for t in trace.placeholders} | {t._id for t in trace.captures}
        self.reads = {}   # (variable id, assignment index or None) -> its read node
        self.after = {}   # op index -> the read nodes that follow it

    def ref(self, t):
        """How a node names the tensor `t` (see the module docstring)."""
        trace = self.trace
        if isinstance(t, Variable):
            return Ref("v", t)
        if t._id in self.local:
            return Ref("id", t._id)
        v = trace.variables.find(t._id)
        if v is not None:
            version = trace.variables.version(v, t)
            if version is None:
                return Ref("v", v)
            return Ref("id", self.snapshot_read(v, version[1]))
        if trace.capture(t):  # a value of the enclosing trace
            self.local.add(t._id)
            return Ref("id", t._id)
        return Ref("c", frozen(t._value))

    def snapshot_read(self, v, index):
        """A read of an assigned variable is an Identity node where it was
        read: before the first assignment, or just after the assignment that
        gave the value, so later assignments do not change it."""
        key = ("read", v._id, index)
        if key not in self.reads:
            self.reads[key] = Node(IDENTITY.op_type, f"{v.name.split(':')[0]}/read",
                                   [Ref("v", v)], {}, [TensorSpec(v.shape, v.dtype)])
            self.after.setdefault(-1 if index is None else index, []).append(key)
        return key

    def node(self, op):
        """The node of a recorded op (its inputs still named by tensor id)."""
        attrs = op.attrs or {}
        if op.type == "IdentityN":
            if "_gradient_op_type" not in attrs or "_forward_outputs" not in attrs:
                raise NotImplementedError(
                    f"mt.function {self.trace.name}: an IdentityN op without a traced "
                    "gradient cannot be traced")
            node_attrs = {"num_inputs": int(attrs["num_inputs"]),
                          "gradient": attrs["_gradient_op_type"],
                          "forward": [self.ref(t) for t in attrs["_forward_outputs"]],
                          "captures": [self.ref(t) for t in attrs["_captures"]]}
        elif op.type == "AssignVariableOp":
            node_attrs = dict(attrs)
        else:
            opdef = OPS.get(op.type)
            if opdef is None:
                raise NotImplementedError(
                    f"mt.function {self.trace.name}: op type {op.type!r} (operation "
                    f"{op.name!r}) cannot be traced: minitape knows how to replay "
                    "only its built-in ops")
            node_attrs = opdef.from_op(op)
        inputs = [self.ref(t) for t in op.inputs]
        specs = [TensorSpec(y.shape, y.dtype) for y in op.outputs]
        self.local.update(y._id for y in op.outputs)
        return Node(op.type, op.name, inputs, node_attrs, specs, role=self.trace.roles.get(op))

    def leaf(self, x):
        """How the graph names one value the function returned."""
        if x is None:
            return None
        if isinstance(x, TensorLike):
            return self.ref(x)
        if isinstance(x, (bool, int, float, complex, str, bytes, np.ndarray, np.generic)):
            return Ref("c", frozen(convert_to_tensor(x)._value))
        raise TypeError(f"mt.function {self.trace.name} returned a {type(x).__name__} "
                        f"({x!r}); a function may return tensors, variables, numbers "
                        "and None, in lists, tuples and dicts")

    def graph(self, outputs, args=None):
        """The Graph returning `outputs` (a structure)."""
        trace = self.trace
        entries = [(index, self.node(op), [y._id for y in op.outputs])
                   for index, op in enumerate(trace._ops)]
        out_structure = map_structure(outputs, self.leaf)
        # The nodes in order, each snapshot read just after the op it follows.
        nodes = [self.reads[key] for key in self.after.get(-1, ())]
        pending = [[key] for key in self.after.get(-1, ())]  # each node's output ids
        for index, node, ids in entries:
            nodes.append(node)
            pending.append(ids)
            for key in self.after.get(index, ()):
                nodes.append(self.reads[key])
                pending.append([key])
        # Number the values: placeholders, captures, then each node's outputs.
        number = {}
        for t in trace.placeholders + trace.captures:
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
        specs = [TensorSpec(t.shape, t.dtype) for t in trace.placeholders + trace.captures]
        graph = Graph(trace.name, specs, nodes, out_structure,
                      num_captures=len(trace.captures), args=args)
        graph.value_inputs = dict(trace.value_inputs)
        graph.shape_specific = trace.shape_specific
        return graph


def map_structure(s, fn):
    """`s` (nested lists, tuples and dicts) with each leaf replaced by fn(leaf)."""
    if isinstance(s, dict):
        return {k: map_structure(v, fn) for k, v in s.items()}
    if isinstance(s, tuple) and hasattr(s, "_fields"):
        return tuple(map_structure(v, fn) for v in s)
    if isinstance(s, (list, tuple)):
        return type(s)(map_structure(v, fn) for v in s)
    return fn(s)
