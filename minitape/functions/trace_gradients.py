"""A custom gradient inside a trace: its gradient function traced into a graph
of its own, as TensorFlow does.

A `@mt.custom_gradient` call records its forward ops and then ONE op of type
IdentityN whose rule is a Python function (`_custom_rule`). A graph cannot
keep a Python function, so while a function is traced that op becomes an
IdentityN node naming a second graph: the gradient function traced on
upstream placeholders shaped like the outputs, by a child trace whose values
of the enclosing trace become captures (extra inputs), and registered under
a fresh key (`graph.register_gradient_graph`). The saved-model format
(`minitape.saved_model`) stores the same graphs as JSON.
"""
import numpy as np

from ..core.tape_entries import Operation
from ..core.tensor import Tensor
from ..graph import register_gradient_graph


def traced_custom_gradient(trace, op):
    """The IdentityN op a custom_gradient call records (its rule is the Python
    `_custom_rule`) as a graph op: trace the rule into a gradient graph,
    register it, and name it in `_gradient_op_type`, as in TensorFlow. The
    forward ops of the call were recorded already, just before."""
    name = op.name
    try:
        key, captures = _trace_backward(trace, name, op.attrs["_custom_rule"], op)
    except Exception as e:
        e.add_note(f"(raised while tracing the gradient function of custom_gradient "
                   f"{name} inside mt.function {trace.name})")
        raise
    forward = op.attrs.get("_forward_outputs") or \
        tuple(_forward_value(trace, y) for y in op.outputs)
    return Operation("IdentityN", op.inputs, op.outputs,
                     {"_gradient_op_type": key, "num_inputs": op.attrs["num_inputs"],
                      "_forward_outputs": tuple(forward), "_captures": tuple(captures)},
                     name)


def _forward_value(trace, output):
    """The tensor a custom_gradient output copies: the engine makes each output
    `Tensor(y._value)` from the function's result y, so y is the latest tensor
    of this trace holding that very array (or a variable's, or a constant)."""
    y = trace.by_array.get(id(output._value))
    if y is not None:
        return y
    for v in trace.variables.by_id.values():
        if v._value is output._value:
            return v
    return Tensor(output._value)  # a constant: no recorded op made it


def _trace_backward(trace, name, rule, op):
    """Trace `rule(op, *upstream)` on upstream placeholders shaped like the
    op's outputs; values of `trace` it uses become captures."""
    child = trace.child(f"{trace.name}/{name}_grad")
    upstream = [child.placeholder(Tensor(np.ones(y.shape, y.dtype))) for y in op.outputs]
    with child.active():
        grads = rule(op, *upstream)
    grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
    if len(grads) != len(op.inputs):
        raise ValueError(f"custom_gradient {name}: the gradient function returned "
                         f"{len(grads)} gradient(s) for {len(op.inputs)} input(s) "
                         "and variable(s)")
    graph = child.build(grads)
    return register_gradient_graph(graph), list(child.captures)
