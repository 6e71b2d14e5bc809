"""Calling a rule we cannot trust: a user's gradient or JVP rule.

Built-in rules are registered with `batch_safe=True` and called directly. User
rules (custom gradients, RegisterGradient and RegisterJVP without batch_safe)
get their results checked, so a wrong rule is named clearly; and when the walk
carries a batch (vectorised jacobians), they are called one row at a time.
The backward walk (`backward.py`, through `registry.call_user_rule`: the core
imports no op) and forward mode (`tangents.py`) both use this.
"""
import math

from . import ops
from .core import registry
from .core.tensor import Tensor, is_floating

_KINDS = {"gradient": ("gradient function", "gradient", "input"),
          "jvp": ("JVP rule", "tangent", "output")}


def call_user_rule(op, rule, args, arg_like, result_like, kind):
    """`rule(op, *args)`, checked, one value per entry of `result_like`.

    `args` are the upstream gradients (one per output: `arg_like`) of a
    gradient rule, or the tangents (one per input) of a JVP rule; the results
    are one per input (`result_like`) or one per output. Args may carry extra
    leading batch dims; the rule is then called once per row.
    """
    batch_shape = ()
    for a, x in zip(args, arg_like):
        if a is not None:
            batch_shape = a.shape[:a.ndim - x.ndim]
            break
    if not batch_shape:
        return checked_result(op, rule(op, *args), result_like, (), kind)
    return row_by_row(op, rule, args, arg_like, result_like, batch_shape, kind)


def checked_result(op, result, like, batch_shape, kind):
    """Normalise a rule's result to one value per entry of `like` (the op's
    inputs for a gradient rule, its outputs for a JVP rule), and say clearly
    which op is wrong when a rule returns the wrong count, shape or dtype."""
    rule_name, noun, side = _KINDS[kind]
    values = list(result) if isinstance(result, (list, tuple)) else [result]
    if len(values) != len(like):
        raise ValueError(
            f"the {rule_name} of operation '{op.name}' (op type: {op.type}) returned "
            f"{len(values)} {noun}(s), but the op has {len(like)} {side}(s) with shapes "
            f"{[x.shape for x in like]}")
    for i, (v, x) in enumerate(zip(values, like)):
        if v is None:
            continue
        if not is_floating(x.dtype):
            values[i] = None  # integer tensors have no gradient and do not move
            continue
        if type(v) is not Tensor:
            v = values[i] = ops.convert_to_tensor(v, dtype=x.dtype)
        if v.shape != batch_shape + x.shape or v.dtype != x.dtype:
            raise ValueError(
                f"the {rule_name} of operation '{op.name}' (op type: {op.type}) returned "
                f"a {noun} of shape {v.shape} and dtype {v.dtype} for {side} {i}, which "
                f"needs shape {batch_shape + x.shape} and dtype {x.dtype}")
    return values


def row_by_row(op, rule, args, arg_like, result_like, batch_shape, kind):
    """Apply a rule that knows only one upstream gradient (or tangent) at a time
    to each row of a batch of them, and stack the rows back together."""
    n = math.prod(batch_shape)
    flat = [None if a is None else ops.reshape(a, (n,) + x.shape)
            for a, x in zip(args, arg_like)]
    rows = [checked_result(op, rule(op, *[None if a is None else a[i] for a in flat]),
                           result_like, (), kind) for i in range(n)]
    stacked = []
    for k, x in enumerate(result_like):
        column = [r[k] for r in rows]
        if all(v is None for v in column):
            stacked.append(None)
            continue
        column = [ops.zeros(x.shape, x.dtype) if v is None else v for v in column]
        stacked.append(ops.reshape(ops.stack(column), batch_shape + x.shape))
    return stacked


registry.call_user_rule = call_user_rule  # how the backward walk calls user rules
