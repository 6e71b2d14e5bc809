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
one op (see `tangents.py`). An op type with a gradient rule but no JVP rule
still works in forward mode, through its gradient rule (`tangents.py` does that).

A built-in rule may carry a `plain` twin (`rule.plain`, made from the same
declaration by `ops/partials.py`): the rule on NumPy values, which the backward
walk runs when nothing records it (`lookup_plain`).

This module imports nothing: it is a table that the ops fill in when imported.
"""

_rules = {}  # op type -> (function, batch_safe), or None for NotDifferentiable
_plain_rules = {}  # op type -> the rule on NumPy values (built-in rules that have one)
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
        _plain_rules.pop(self._op_type, None)  # (a rule registered again: its old twin goes)
        plain = getattr(fn, "plain", None) if self._batch_safe else None
        if plain is not None:
            _plain_rules[self._op_type] = plain
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
    """Declare that ops of this type have no gradient (their inputs get None). As
    in TensorFlow, a type with a gradient keeps it (KeyError); again is fine."""
    if not isinstance(op_type, str):
        raise TypeError(f"NotDifferentiable: op_type must be a string, got {op_type!r}")
    if _rules.get(op_type) is not None:
        raise KeyError(f"Registering two gradient with name '{op_type}'! (it has the "
                       f"gradient {_qualname(_rules[op_type][0])})")
    _rules[op_type] = None


def unregister(op_type):
    """Remove a registration (tests and saved-model loading use this)."""
    _rules.pop(op_type, None)
    _plain_rules.pop(op_type, None)
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
    key = op.type
    if attrs:
        if "_custom_rule" in attrs:
            return attrs["_custom_rule"], False
        key = attrs.get("_gradient_op_type", key)
    try:
        return _rules[key]
    except KeyError:
        raise LookupError(f"No gradient defined for operation '{op.name}' "
                          f"(op type: {op.type})") from None


def lookup_plain(op):
    """The rule on NumPy values for a recorded op of a built-in type, or None
    (a custom_gradient call, an op traced into a function, a user's rule)."""
    attrs = op.attrs
    if attrs and ("_custom_rule" in attrs or "_gradient_op_type" in attrs):
        return None
    return _plain_rules.get(op.type)


def lookup_jvp(op):
    """(jvp rule, batch_safe) registered for a recorded op, or None if it has no
    JVP rule of its own (a custom_gradient call, a user's primitive with only a
    gradient rule, an op traced into a function): forward mode then works
    through its gradient rule (`tangents.jvp_from_gradient`)."""
    attrs = op.attrs
    if attrs and ("_custom_rule" in attrs or "_gradient_op_type" in attrs):
        return None
    return _jvp_rules.get(op.type)


# How a user's rule (not batch_safe) is called, its results checked: `rules.py`
# puts its `call_user_rule` here (it needs ops, which the core does not import).
call_user_rule = None


def note_rule_error(error, op, kind):
    """Add to an exception raised inside a rule which op's rule raised it (once:
    an error that passes through several nested walks keeps the first note)."""
    if not getattr(error, "_mt_noted", False):
        what = "the gradient" if kind == "gradient" else "the JVP rule"
        error.add_note(f"(raised by {what} of operation '{op.name}', op type {op.type})")
        error._mt_noted = True


def batch_ndim(op, grad):
    """How many leading batch dims the upstream `grad` carries (0 for a plain
    gradient, 1 inside a vectorised jacobian)."""
    return grad.ndim - op.outputs[0].ndim
