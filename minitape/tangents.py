"""Forward mode, one op at a time: push tangents through an op with its JVP rule.

A tangent is how a value moves when the inputs move in a chosen direction v.
Each op's JVP rule computes the tangents of its outputs from those of its
inputs (J v, a Jacobian-vector product). `push_tangents` is that one step; a
ForwardAccumulator (`autodiff.py`) takes it for each op as it runs, and a
forward-mode Jacobian (`tape_jacobians.py`) takes it for each op a tape recorded.

The rules sit under each op's gradient rule in `ops/`, registered with
`RegisterJVP`. An op with only a gradient rule (a custom_gradient, a user's
primitive) goes through `jvp_from_gradient`, which needs a GradientTape: that
is why this module sits above `tape.py`.
"""
from . import ops
from .core import registry
from .core.backward import run_rule
from .ops.operands import tangent_batch
from .core.registry import note_rule_error
from .rules import call_user_rule, checked_result
from .tape import GradientTape
from .core.tensor import is_floating


def push_tangents(op, tangents):
    """One step of forward mode: from the tangents of the op's inputs (looked up
    by tensor id in the dict `tangents`) compute those of its outputs, and store
    them there. Inputs without a tangent have tangent zero."""
    in_tangents = [tangents.get(x._id) for x in op.inputs]
    if all(t is None for t in in_tangents):
        return
    for y, t in zip(op.outputs, run_jvp(op, in_tangents)):
        if t is not None:
            tangents[y._id] = t


def run_jvp(op, tangents):
    """Call the op's JVP rule: one tangent (or None) per output."""
    entry = registry.lookup_jvp(op)
    if entry is None:
        try:
            gradient = registry.lookup(op)
        except LookupError as e:
            raise LookupError(f"{e}; forward mode needs a JVP rule "
                              "(mt.autodiff.RegisterJVP) or a gradient (mt.RegisterGradient)"
                              ) from None
        if gradient is None:  # NotDifferentiable: the outputs do not move
            return [None] * len(op.outputs)
        entry = jvp_from_gradient, True
    rule, batch_safe = entry
    try:
        if batch_safe:
            batch = tangent_batch(op, tangents)
            return checked_result(op, rule(op, *tangents), op.outputs, batch, "jvp")
        return call_user_rule(op, rule, tangents, op.inputs, op.outputs, "jvp")
    except Exception as e:
        note_rule_error(e, op, "jvp")
        raise


def jvp_from_gradient(op, *tangents):
    """The JVP of an op that has only a gradient rule, from that rule
    (TensorFlow's trick, used for custom_gradient and user primitives).

    A gradient rule maps an upstream gradient u to J^T u, and that map is
    linear in u. So s(u) = sum((J^T u) * t) = sum(u * (J t)), and the gradient
    of s with respect to u is J t, the JVP we want, whatever u is: we take u = 0.
    It costs a backward step through the op and a backward step through the
    rule. Batched tangents work too: each direction gets its own row of u.
    (A custom "gradient" that is not linear in u, such as one that clips u,
    is not the transpose of any Jacobian; the trick then differentiates it at
    u = 0, as TensorFlow does.)
    """
    batch = tangent_batch(op, tangents)
    us = [ops.zeros(batch + y.shape, y.dtype) if is_floating(y.dtype) else None
          for y in op.outputs]
    watched = [u for u in us if u is not None]
    with GradientTape() as tape:
        tape.unmasked = True  # u = 0 stands for any direction: no zero-times-inf mask
        tape.watch(watched)     # may fire (ops.zero_times_inf.masks_apply)
        grads = run_rule(op, us) or ()
        terms = [ops.reduce_sum(g * t) for g, t in zip(grads, tangents)
                 if g is not None and t is not None]
        total = None
        for term in terms:
            total = term if total is None else total + term
    if total is None:
        return [None] * len(us)
    found = iter(tape.gradient(total, watched))
    return [None if u is None else next(found) for u in us]
