"""Controlling gradients: stop_gradient, custom_gradient and new primitive ops.

- `stop_gradient(x)` (an op, in `ops/control.py`) cuts a value off from the tape.
- `@custom_gradient` records the whole call of a function as ONE op of type
  IdentityN from its inputs to (fresh copies of) its outputs, whose gradient is
  the `grad_fn` the function returned.
- `@primitive("MySquare")` turns a NumPy function into an op type; its
  gradient comes from `@RegisterGradient("MySquare")`.
- `no_gradient("OpType")` is TensorFlow 2's name for `NotDifferentiable`.

Two custom gradients with a fixed recipe, `recompute_grad` and
`grad_pass_through`, are built on `custom_gradient` in `recipes.py`.
"""
import functools
import inspect

import numpy as np

from . import nest
from .core.context import state
from .ops.control import stop_gradient  # noqa: F401  (mt.stop_gradient, an op)
from .core.tape_entries import record
from .core.registry import NotDifferentiable
from .core.tensor import Tensor, convert_to_tensor, holds_tensors, snapshot


def custom_gradient(f=None):
    """Decorator: `f(*x)` returns `(y, grad_fn)`; `grad_fn(*dy)` returns dx.

    If `f` reads variables, `grad_fn(*dy, variables=...)` must return
    `(dx, dvariables)`. The gradient function is written with minitape ops, so
    it can itself be differentiated by an outer tape.
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        for i, a in enumerate(args):
            if holds_tensors(a):  # TensorFlow flattens it and then wants one gradient
                raise TypeError(   # per entry; converting it would detach the tensors
                    f"custom_gradient {f.__name__}: argument {i} is a list holding tensors; "
                    "pass the tensors as separate arguments, or mt.stack them first")
        inputs = [convert_to_tensor(a) for a in args]
        # Run f with the tapes recording, as TensorFlow's eager mode does: the
        # ops inside are recorded but unreachable from the outputs (their
        # producer is the IdentityN op below); they matter when grad_fn uses a
        # value computed in f, which an outer tape must then differentiate.
        variables = []
        state.variable_watchers.append(variables)
        try:
            returned = f(*inputs, **kwargs)
        finally:
            # by identity: an inner call's list may be equal to this one
            state.variable_watchers[:] = [w for w in state.variable_watchers if w is not variables]
        if type(returned) not in (tuple, list) or len(returned) != 2 or \
                not callable(returned[1]):
            # (a tensor of 2 rows would unpack into two rows without this check)
            what = f"{type(returned).__name__}" + (
                f" of shape {returned.shape}" if hasattr(returned, "shape") else
                f" of length {len(returned)}" if isinstance(returned, (list, tuple)) else "")
            raise TypeError(f"custom_gradient {f.__name__}: the function must return a "
                            f"tuple (y, grad_fn) with grad_fn callable, got a {what}")
        result, grad_fn = returned
        takes_variables = _accepts_variables(grad_fn)
        if variables and not takes_variables:
            raise TypeError(
                f"custom_gradient {f.__name__}: the function reads variables "
                f"{[v.name for v in variables]}, so its gradient function must accept "
                "a keyword argument `variables` and return (input_grads, variable_grads)")
        forward = [convert_to_tensor(y) for y in nest.flatten(result)]
        outputs = [Tensor(y._value) for y in forward]
        reads = [snapshot(v) for v in variables]
        rule = _custom_rule(f.__name__, grad_fn, len(inputs), variables)
        if state.tapes:
            # `_forward_outputs`: f's own results, whose tangents a
            # ForwardAccumulator gives the outputs (forward mode follows f's
            # ops, not the custom rule, as in TensorFlow)
            record("IdentityN", tuple(inputs + reads), tuple(outputs),
                   {"_custom_rule": rule, "num_inputs": len(inputs),
                    "_forward_outputs": forward}, f.__name__)
        return nest.pack_like(result, outputs) if nest.is_nested(result) else outputs[0]

    return wrapper


def _accepts_variables(fn):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "variables" in params or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _custom_rule(fn_name, grad_fn, n_inputs, variables):
    """Adapt `grad_fn` to the registry's `rule(op, *grads)` signature."""
    def rule(op, *grads):
        if not variables:
            return grad_fn(*grads)
        result = grad_fn(*grads, variables=variables)
        if not (isinstance(result, (list, tuple)) and len(result) == 2):
            raise ValueError(f"custom_gradient {fn_name}: with variables, the gradient "
                             "function must return (input_grads, variable_grads)")
        input_grads, var_grads = result
        input_grads = list(input_grads) if isinstance(input_grads, (list, tuple)) \
            else [input_grads]
        var_grads = list(var_grads) if isinstance(var_grads, (list, tuple)) else [var_grads]
        if len(var_grads) != len(variables):
            raise ValueError(f"custom_gradient {fn_name}: the gradient function returned "
                             f"{len(var_grads)} variable gradient(s) for {len(variables)} "
                             "variable(s)")
        return input_grads + var_grads
    return rule


def primitive(op_type):
    """Decorator turning a function of NumPy arrays into a minitape op type.

        @mt.primitive("MySquare")
        def my_square(x):
            return x * x

    Keyword arguments become the op's attributes (`op.get_attr(name)`). Give it a
    gradient with `@mt.RegisterGradient("MySquare")`.
    """
    def decorate(fn):
        @functools.wraps(fn)
        def op(*args, **attrs):
            inputs = tuple(x if isinstance(x, Tensor) else convert_to_tensor(x)
                           for x in args)
            try:
                value = fn(*[x._value for x in inputs], **attrs)
            except Exception as e:
                e.add_note(f"(raised by primitive op {op_type} on inputs of shapes "
                           f"{[x.shape for x in inputs]} and dtypes "
                           f"{[str(x.dtype) for x in inputs]})")
                raise
            many = isinstance(value, (tuple, list))
            outputs = tuple(Tensor(_primitive_output(op_type, v))
                            for v in (value if many else (value,)))
            if state.tapes:
                record(op_type, inputs, outputs, dict(attrs) or None, op_type)
            return list(outputs) if many else outputs[0]
        op.op_type = op_type
        return op
    return decorate


def _primitive_output(op_type, value):
    """A primitive's result as a NumPy array of numbers, or a TypeError naming
    the op type (a None, a string or an object would make a tensor that no op
    or gradient can use)."""
    numeric = isinstance(value, (int, float, complex)) or hasattr(value, "__array__")
    array = np.asarray(value) if numeric else None
    if array is None or array.dtype.kind not in "biufc":
        raise TypeError(f"primitive op {op_type}: the function must return NumPy arrays "
                        f"(or numbers), got {type(value).__name__} {value!r:.80}")
    return array


def no_gradient(op_type):
    """TensorFlow 2's name for `NotDifferentiable`: ops of this type give their
    inputs no gradient (None)."""
    if not isinstance(op_type, str):
        raise TypeError(f"no_gradient: op_type must be a string, got {op_type!r}")
    NotDifferentiable(op_type)
