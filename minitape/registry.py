"""The global gradient registry: op type -> gradient rule.

A rule has TensorFlow's signature `rule(op, *output_grads) -> input_grads` and
is written with minitape ops, so when an outer tape is recording, running a rule
is itself recorded: that is all higher-order gradients need.

Built-in rules are registered with `batch_safe=True`: they accept upstream
gradients with extra leading dimensions (`batch_ndim` tells how many), which is
how `jacobian` runs one backward pass for all rows at once. Rules registered by
users are assumed not to, and the tape calls them one row at a time.

Forward mode has a second, smaller registry: `RegisterJVP("Sin")` registers
`jvp(op, *input_tangents) -> output tangent(s)`, the Jacobian-vector product of
one op (see `autodiff.py`). An op type with a gradient rule but no JVP rule
still works in forward mode, through its gradient rule (`lookup_jvp`).
"""

_rules = {}  # op type -> (function, batch_safe), or None for NotDifferentiable
_jvp_rules = {}  # op type -> (function, batch_safe): forward mode


class RegisterGradient:
    """Decorator: `@mt.RegisterGradient("MySquare")` registers `fn(op, *grads)`.

    The registry is global. Registering a type twice is an error, except that
    re-running the same definition (say, a notebook cell) replaces it.
    """

    def __init__(self, op_type, *, batch_safe=False):
        if not isinstance(op_type, str):
            raise TypeError(f"RegisterGradient: op_type must be a string, got {op_type!r}")
        self._op_type = op_type
        self._batch_safe = batch_safe

    def __call__(self, fn):
        old = _rules.get(self._op_type)
        if old is not None and _qualname(old[0]) != _qualname(fn):
            raise KeyError(f"Registering two gradient with name '{self._op_type}'! "
                           f"(already registered: {_qualname(old[0])})")
        _rules[self._op_type] = (fn, self._batch_safe)
        return fn


class RegisterJVP:
    """Decorator: `@RegisterJVP("Sin")` registers the forward-mode rule
    `jvp(op, *input_tangents)` for an op type.

    The rule gets one tangent per input of the op (None where an input has no
    tangent, which means zero; at least one is not None) and returns one tangent
    per output (None means zero), written with minitape ops, like gradient
    rules, so that tapes can differentiate forward mode too. A tangent has the
    shape of its tensor, possibly with extra leading batch dims (a batch of
    directions, as `jacobian` uses); rules registered with `batch_safe=True`
    accept those, others are called one direction at a time.
    """

    def __init__(self, op_type, *, batch_safe=False):
        if not isinstance(op_type, str):
            raise TypeError(f"RegisterJVP: op_type must be a string, got {op_type!r}")
        self._op_type = op_type
        self._batch_safe = batch_safe

    def __call__(self, fn):
        old = _jvp_rules.get(self._op_type)
        if old is not None and _qualname(old[0]) != _qualname(fn):
            raise KeyError(f"Registering two JVP rules with name '{self._op_type}'! "
                           f"(already registered: {_qualname(old[0])})")
        _jvp_rules[self._op_type] = (fn, self._batch_safe)
        return fn


def _qualname(fn):
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def NotDifferentiable(op_type):
    """Declare that ops of this type have no gradient (their inputs get None)."""
    _rules[op_type] = None


def unregister(op_type):
    """Remove a registration (tests and saved-model loading use this)."""
    _rules.pop(op_type, None)
    _jvp_rules.pop(op_type, None)


def is_registered(op_type):
    return op_type in _rules


def lookup(op):
    """(rule, batch_safe) for a recorded op, or None if it is not differentiable.

    A custom_gradient call carries its own rule (attribute `_custom_rule`). An
    op traced into a function names its rule in `_gradient_op_type`, as in
    TensorFlow's graphs. Every other op uses the rule registered for its type.
    """
    attrs = op.attrs
    if attrs and "_custom_rule" in attrs:
        return attrs["_custom_rule"], False
    key = attrs.get("_gradient_op_type", op.type) if attrs else op.type
    try:
        return _rules[key]
    except KeyError:
        raise LookupError(f"No gradient defined for operation '{op.name}' "
                          f"(op type: {op.type})") from None


def lookup_jvp(op):
    """(jvp rule, batch_safe) for a recorded op, or None if it is not differentiable.

    An op with a JVP rule uses it. One without (a custom_gradient call, a user's
    primitive with only a gradient rule) gets `autodiff.jvp_from_gradient`,
    which works through its gradient rule. An op with neither raises LookupError.
    """
    attrs = op.attrs
    if not (attrs and ("_custom_rule" in attrs or "_gradient_op_type" in attrs)):
        entry = _jvp_rules.get(op.type)
        if entry is not None:
            return entry
    try:
        gradient = lookup(op)
    except LookupError as e:
        raise LookupError(f"{e}; forward mode needs a JVP rule "
                          "(mt.autodiff.RegisterJVP) or a gradient (mt.RegisterGradient)"
                          ) from None
    if gradient is None:  # NotDifferentiable: the tangent is zero
        return None
    from .autodiff import jvp_from_gradient
    return jvp_from_gradient, True


def batch_ndim(op, grad):
    """How many leading batch dims the upstream `grad` carries (0 for a plain
    gradient, 1 inside a vectorised jacobian)."""
    return grad.ndim - op.outputs[0].ndim



# --- calling a rule whose output we cannot trust ----------------------------------
# Built-in rules are trusted. User rules (custom gradients, RegisterGradient and
# RegisterJVP without batch_safe) get their results checked, and when the walk
# carries a batch (vectorised jacobians) they are called one row at a time.

_KINDS = {"gradient": ("gradient function", "gradient", "input"),
          "jvp": ("JVP rule", "tangent", "output")}


def checked_result(op, result, like, batch_shape, kind):
    """Normalise a rule's result to one value per entry of `like` (the op's
    inputs for a gradient rule, its outputs for a JVP rule), and say clearly
    which op is wrong when a rule returns the wrong count, shape or dtype."""
    from .ops import convert_to_tensor
    from .tensor import Tensor, is_floating
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
            v = values[i] = convert_to_tensor(v, dtype=x.dtype)
        if v.shape != batch_shape + x.shape or v.dtype != x.dtype:
            raise ValueError(
                f"the {rule_name} of operation '{op.name}' (op type: {op.type}) returned "
                f"a {noun} of shape {v.shape} and dtype {v.dtype} for {side} {i}, which "
                f"needs shape {batch_shape + x.shape} and dtype {x.dtype}")
    return values


def row_by_row(op, rule, args, arg_like, result_like, batch_shape, kind):
    """Apply a rule that knows only one upstream gradient (or tangent) at a time
    to each row of a batch of them, and stack the rows back together."""
    import math

    from . import ops
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
