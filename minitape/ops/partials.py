"""Ops declared by their partial derivatives: one row makes an elementwise op.

An elementwise z = f(x) or f(x, y) has a diagonal Jacobian for each input: its
partial derivative p = dz/dx, entry by entry. A row gives the forward (the
NumPy function) and each partial written with minitape ops, so a tape
recording the rules records them too and higher derivatives come free:

    multiply = binary("multiply", "Mul", operator.mul,
                      partials=(lambda x, y, z: y, lambda x, y, z: x), ...)
    tan = unary("tan", "Tan", np.tan, lambda x, z: 1 / square(cos(x)), ...)

From the row this module makes the op, its rules and its declaration. The
rules apply each policy once, so no row has to:

    gradient (reverse mode)  for each input that leads to a source
                             (`skipping.py`), the upstream gradient times p at
                             conjugated values (`conjugation.py`), masked
                             where the row says so (`zero_times_inf.py`), and
                             summed back to the input's shape, leading batch
                             dims kept (`broadcasting.unbroadcast`);
    JVP (forward mode)       for each input with a tangent, the tangent
                             (shaped to broadcast: `broadcasting.lift`) times
                             p, masked the same way; the terms added.

When nothing records the walk (no tape, accumulator or trace is active: a
first-order gradient), the walk runs each row's `plain` rule instead: the
same partials, evaluated as above, but the upstream gradient, the product,
its mask and the summing back are plain NumPy values, never Tensors or
records (`backward.py`). For complex values it calls the tensor rule.

A partial is a function of (x, z) (unary) or (x, y, z) (binary) returning a
tensor or a number p (the upstream times p) or `over(d)` (p = 1 / d, kept a
division: the upstream divided by d, as TensorFlow rounds it); or None (no
gradient for that input); or `chain(fn)`, the product with the upstream
written out, where TensorFlow's rule multiplies in another order (cos:
`-g * sin(x)`). An op whose rule is not a partial (abs of complex
numbers, maximum, where) gives its rules as `gradient=` and `jvp=`; a binary
one may give `terms=` and `tangent_terms=` (each input's share at the
output's shape), and the skipping and unbroadcasting are still done here.
"""
import sys

import numpy as np

from ..core.context import state
from ..core.tape_entries import record
from ..core.tensor import Tensor, new_id
from .broadcasting import full_tangent, lift, unbroadcast, unbroadcast_value
from .conjugation import conjugated
from .operands import (FLOAT_SCALARS, NUMBER_SCALARS, REAL_SCALARS, broadcast_error,
                   complex_error, elementwise_shape, float_input, operands, tangent_batch,
                   tensor_input)
from .declaration import declare
from .skipping import needs
from .zero_times_inf import moved, moved_value

_new_tensor = Tensor.__new__


class over:
    """The partial derivative 1 / d, applied as a division by d (x / 3's
    gradient is upstream / 3, which rounds as TensorFlow's does, not
    upstream * (1 / 3))."""

    __slots__ = ("d",)

    def __init__(self, d):
        self.d = d


class chain:
    """A partial given as the chain rule's product itself, `fn(g, x, z)` or
    `fn(g, x, y, z)`: the upstream gradient g times the partial, in the order
    TensorFlow's rule multiplies (cos: -g * sin(x), the upstream negated
    first). It is linear in g, so with a tangent for g (at values that are not
    conjugated) it is the JVP's term too."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn


# --- the forward: one call of a NumPy function ------------------------------------------
# Every arithmetic operator passes here, so the common case (tensors of one
# dtype) is checked first and the op's result is recorded without `emit`.

_KIND_NAMES = {"f": "floating-point", "c": "complex", "i": "integer", "u": "unsigned integer",
               "b": "bool"}


def check_kind(op_name, x, kinds):
    """A TypeError naming the op when x's dtype is not of one of `kinds`."""
    if x.dtype.kind not in kinds:
        if x.dtype.kind == "c":  # no complex kernel in TensorFlow (nor an order)
            raise complex_error(op_name, x)
        wanted = " or ".join(_KIND_NAMES[k] for k in kinds)
        raise TypeError(f"{op_name}: expected {wanted} tensors, got dtype {x.dtype}")


def _unary_op(op_type, op_name, forward, doc, kinds, quiet):
    check = float_input if kinds in ("fc", "f") else tensor_input
    scalars = {"fc": FLOAT_SCALARS, "f": FLOAT_SCALARS & REAL_SCALARS}.get(
        kinds, NUMBER_SCALARS if kinds == "biufc" else ())

    def op(x, name=None):
        if type(x) is not Tensor or (type(x._value) not in scalars
                                     and x._value.dtype.kind not in kinds):
            x = check(op_name, x)
            if x._value.dtype.kind not in kinds:
                if kinds == "f":  # complex: TensorFlow has no kernel for it either
                    raise TypeError(f"{op_name}: expected a real floating-point tensor, "
                                    f"got dtype {x.dtype}")
                check_kind(op_name, x, kinds)
        if quiet:  # inf and NaN come back quietly, as in TensorFlow
            with np.errstate(all="ignore"):
                value = forward(x._value)
        else:
            value = forward(x._value)
        out = _new_tensor(Tensor)  # emit(op_type, value, (x,), None, name), inlined
        out._value, out._id = value, new_id()
        tapes = state.tapes
        if tapes:
            record(op_type, (x,), (out,), None, name, tapes)
        return out
    op.__name__ = op.__qualname__ = op_name
    op.__doc__ = doc
    return op


def _binary_op(op_type, op_name, forward, doc, kinds, quiet):
    def op(x, y, name=None):
        if type(x) is not Tensor or type(y) is not Tensor or not (
                type(x._value) is type(y._value) in NUMBER_SCALARS  # two scalars of one dtype
                or x._value.dtype is y._value.dtype and x._value.dtype.kind in "fiuc"):
            x, y = operands(op_name, x, y)
        if kinds is not None and x._value.dtype.kind not in kinds:
            check_kind(op_name, x, kinds)
        try:
            if quiet:
                with np.errstate(all="ignore"):
                    value = np.asarray(forward(x._value, y._value))
            else:
                value = forward(x._value, y._value)
        except ValueError:
            raise broadcast_error(op_name, x, y) from None
        except TypeError:
            raise TypeError(f"{op_name}: not defined for dtype {x.dtype}") from None
        out = _new_tensor(Tensor)  # emit(op_type, value, (x, y), None, name), inlined
        out._value, out._id = value, new_id()
        tapes = state.tapes
        if tapes:
            record(op_type, (x, y), (out,), None, name, tapes)
        return out
    op.__name__ = op.__qualname__ = op_name
    op.__doc__ = doc
    return op


def _named(forward, name, module, quiet):
    """The NumPy function compiled programs call for the op (see Declaration.line):
    named after the op when it is a lambda, inf/NaN warnings silenced if `quiet`."""
    if quiet:
        def run(*values):
            with np.errstate(all="ignore"):
                return forward(*values)
    elif forward.__name__ == "<lambda>":
        def run(*values):
            return forward(*values)
    else:
        return forward
    run.__name__ = run.__qualname__ = name
    run.__module__ = module
    return run


# --- the rules: the upstream (or tangent) times each partial --------------------------

def _times(g, p, masked):
    """g times the partial p (a tensor, a number or `over(d)`), masked."""
    if type(p) is Tensor:
        term = g * p
        return moved(g, term, times=p) if masked else term
    if type(p) is over:
        term = g / p.d
        return moved(g, term, over=p.d) if masked else term
    if p == 1:
        return g
    return -g if p == -1 else g * p


def _chained(g, partial, at, masked):
    """g times the partial, which may be a `chain` (`at`: the values it is
    evaluated at, conjugated in reverse mode), masked."""
    if type(partial) is chain:
        term = partial.fn(g, *at)
        return moved(g, term) if masked else term
    p = partial(*at)
    if type(p) is Tensor:  # (the common case inline: a call less)
        term = g * p
        return moved(g, term, times=p) if masked else term
    return _times(g, p, masked)


def _tangent_times(t, partial, at, masked):
    """The tangent t times the partial, masked (in forward mode a zero partial
    counts too: an inf tangent times a constant 0 is 0)."""
    if type(partial) is chain:
        term = partial.fn(t, *at)
        return moved(t, term) if masked else term
    p = partial(*at)
    if type(p) is Tensor:
        term = t * p
        return moved(t, term, factor=p) if masked else term
    if type(p) is over:
        term = t / p.d
        return moved(t, term, over=p.d) if masked else term
    if p == 1:
        return t
    return -t if p == -1 else t * p


# --- the same on plain values, for a walk nothing records (see the module docstring) ----

def _plain_times(g, partial, at, masked):
    """The NumPy value g times the partial (evaluated at the tensors `at`),
    masked, as `_chained` computes it on tensors."""
    if type(partial) is chain:
        term = partial.fn(Tensor(g), *at)._value
        return moved_value(g, term) if masked else term
    p = partial(*at)
    if type(p) is Tensor:
        term = g * p._value
    elif type(p) is over:
        d = p.d
        with np.errstate(all="ignore"):  # (quiet, as mt.divide)
            term = g / (d._value if type(d) is Tensor else g.dtype.type(d))
    elif p == 1:
        return g
    elif p == -1:
        return -g
    else:  # a Python number takes g's dtype, as `g * 2.0` on a tensor does
        return g * g.dtype.type(p)
    return moved_value(g, term) if masked else term


def _via_tensors(gradient, op, g):
    """The tensor rule's results as values (complex inputs: conjugation is
    done on tensors)."""
    results = gradient(op, Tensor(g))
    if type(results) is Tensor:  # (a unary rule returns its one gradient)
        return (results._value,)
    return tuple(None if r is None else r._value for r in results)


def unary_rules(derivative, masked=None, conjugate=True):
    """(gradient, jvp) of a unary elementwise op from its derivative(x, z)
    (for ops whose forward is not one NumPy call; `unary` says the rest)."""
    reverse, forward = masked in ("both", "gradient"), masked == "both"
    plain = type(derivative) is not chain and not reverse

    def gradient(op, grad):
        x, z = op.inputs[0], op.outputs[0]
        v = z._value
        if conjugate and type(v) not in REAL_SCALARS and v.dtype.kind == "c":
            x, z = conjugated(x, z)
        if plain:  # (the common case, a call less: grad * f'(x))
            p = derivative(x, z)
            return grad * p if type(p) is Tensor else _times(grad, p, False)
        return _chained(grad, derivative, (x, z), reverse)

    def jvp(op, t):
        return _tangent_times(t, derivative, op.inputs + op.outputs, forward)

    def on_values(op, g, wanted):
        x, z = op.inputs[0], op.outputs[0]
        v = z._value
        if conjugate and type(v) not in REAL_SCALARS and v.dtype.kind == "c":
            return _via_tensors(gradient, op, g)
        return (_plain_times(g, derivative, (x, z), reverse),)
    gradient.plain = on_values
    return gradient, jvp


def binary_rules(partials, masked=None, conjugate=True):
    """(gradient, jvp) of a binary elementwise op from its partials(x, y, z)
    (for ops whose forward is not one NumPy call; `binary` says the rest)."""
    reverse, forward = masked in ("both", "gradient"), masked == "both"
    px, py = partials

    def gradient(op, grad):
        x, y = op.inputs
        z = op.outputs[0]
        wanted = needs(op)
        at = (x, y, z)
        v = z._value
        if conjugate and type(v) not in REAL_SCALARS and v.dtype.kind == "c":
            at = conjugated(x, y, z)
        gx = None if px is None or not wanted[0] else _chained(grad, px, at, reverse)
        gy = None if py is None or not wanted[1] else _chained(grad, py, at, reverse)
        if gx is not None and gx._value.shape != x._value.shape:  # broadcast: summed back,
            gx = unbroadcast(gx, x._value.shape, grad._value.ndim - v.ndim)  # batch dims kept
        if gy is not None and gy._value.shape != y._value.shape:
            gy = unbroadcast(gy, y._value.shape, grad._value.ndim - v.ndim)
        return gx, gy

    def jvp(op, tx, ty):
        x, y = op.inputs
        z = op.outputs[0]
        ndim = z._value.ndim
        total = None
        for t, a, partial in ((tx, x, px), (ty, y, py)):
            if t is None or partial is None:
                continue
            term = _tangent_times(lift(t, a, ndim), partial, (x, y, z), forward)
            total = term if total is None else total + term
        if total is None:
            return None
        return full_tangent(total, tangent_batch(op, (tx, ty)) + z._value.shape)

    def on_values(op, g, wanted):
        x, y = op.inputs
        z = op.outputs[0]
        v = z._value
        if conjugate and type(v) not in REAL_SCALARS and v.dtype.kind == "c":
            return _via_tensors(gradient, op.with_needs(wanted), g)
        at = (x, y, z)
        gx = None if px is None or not wanted[0] else _plain_times(g, px, at, reverse)
        gy = None if py is None or not wanted[1] else _plain_times(g, py, at, reverse)
        if gx is not None and gx.shape != x._value.shape:
            gx = unbroadcast_value(gx, x._value.shape, g.ndim - v.ndim)
        if gy is not None and gy.shape != y._value.shape:
            gy = unbroadcast_value(gy, y._value.shape, g.ndim - v.ndim)
        return gx, gy
    gradient.plain = on_values
    return gradient, jvp


def shares(terms, tangent_terms=None, tangent=None):
    """(gradient, jvp) rules of an elementwise op from each input's share, for
    ops whose rule is not a partial derivative (maximum picks an input, where
    too): `terms[i](op, grad)` is input i's gradient at the output's shape
    (None: it gets none); `tangent_terms[i](op, t)` its share of the output's
    tangent, or `tangent(op, *ts)` the whole tangent, from tangents shaped to
    broadcast against the output (None where an input has none). The inputs
    that lead nowhere are skipped and each gradient is summed back to its
    input's shape, as for a row of partials."""
    def gradient(op, grad):
        inputs, wanted = op.inputs, needs(op)
        nb = grad._value.ndim - op.outputs[0]._value.ndim
        grads = [None] * len(inputs)
        for i, term in enumerate(terms):
            if term is not None and wanted[i]:
                g = term(op, grad)
                shape = inputs[i]._value.shape
                grads[i] = g if g._value.shape == shape else unbroadcast(g, shape, nb)
        return grads

    def jvp(op, *tangents):
        z = op.outputs[0]
        ndim = z._value.ndim
        lifted = [None if t is None else lift(t, x, ndim) for t, x in zip(tangents, op.inputs)]
        if tangent is not None:
            total = tangent(op, *lifted)
        else:
            total = None
            for t, term in zip(lifted, tangent_terms):
                if t is not None and term is not None:
                    share = term(op, t)
                    total = share if total is None else total + share
        if total is None:
            return None
        return full_tangent(total, tangent_batch(op, tangents) + z._value.shape)
    return gradient, jvp


def _declared_in(module, op, *rules):
    """The op and its rules belong to the family module whose row made them
    (`mt.multiply.__module__` is "minitape.ops.elementwise"), and the rules are
    named after the op, as a hand-written rule would be."""
    op.__module__ = module
    for rule, suffix in zip(rules, ("grad", "jvp")):
        if rule is not None and rule.__module__ == __name__:
            rule.__module__ = module
            rule.__name__ = rule.__qualname__ = f"_{op.__name__}_{suffix}"


def _caller():
    """The module whose row called `unary` or `binary`."""
    return sys._getframe(2).f_globals["__name__"]


# --- the rows --------------------------------------------------------------------------

def unary(name, op_type, forward, derivative=None, doc="", kinds="fc", masked=None,
          conjugate=True, gradient=None, jvp=None, differentiable=True, quiet=True,
          line=None, word=None, smooth=False, rank_free=True):
    """Declare the op `name(x)` recording `op_type`, which computes
    `forward(x)` on the NumPy value of a tensor whose dtype kind is in
    `kinds` ("fc": floating point, complex too; "f": real only; "biufc": any
    number). `derivative(x, z)` is dz/dx in minitape ops; `masked` ("both",
    or "gradient" for reverse mode only, as TensorFlow's Sqrt) says a zero
    upstream gradient or tangent counts 0 even times an infinite derivative
    (`zero_times_inf.py`); `conjugate=False` takes the derivative as it is for
    complex inputs (some of TensorFlow's rules do). Or give the rules
    themselves (`gradient`, `jvp`), or none (`differentiable=False`). `quiet`:
    inf and NaN results without warnings, as TensorFlow gives them."""
    op = _unary_op(op_type, name, forward, doc, kinds, quiet)
    if derivative is not None:
        gradient, jvp = unary_rules(derivative, masked, conjugate)
    _declared_in(_caller(), op, gradient, jvp)
    declare(op_type, gradient, jvp, differentiable,
            replay=lambda xs, attrs, out_shapes: op(xs[0]), shape=elementwise_shape,
            forward=_named(forward, name, op.__module__, quiet), line=line, word=word,
            smooth=smooth, rank_free=rank_free)
    return op


def binary(name, op_type, forward, partials=None, doc="", kinds=None, masked=None,
           conjugate=True, terms=None, tangent_terms=None, tangent=None, gradient=None,
           jvp=None,
           differentiable=True, quiet=True, line=None, word=None, simplify=None,
           smooth=False, rank_free=True):
    """Declare the op `name(x, y)` recording `op_type`: both operands
    converted to one dtype (Python numbers take the tensor's), of a kind in
    `kinds` (None: any number), broadcast together, and `forward(x, y)` on
    their NumPy values. `partials` are (dz/dx, dz/dy) as functions of
    (x, y, z); the other arguments are those of `unary`, and `terms`,
    `tangent_terms` and `tangent` each input's share of the rules (`shares`). `simplify` holds the exact rewrites the compiler may make
    (Declaration)."""
    op = _binary_op(op_type, name, forward, doc, kinds, quiet)
    if partials is not None:
        gradient, jvp = binary_rules(partials, masked, conjugate)
    elif terms is not None:
        gradient, jvp = shares(terms, tangent_terms, tangent)
    _declared_in(_caller(), op, gradient, jvp)
    declare(op_type, gradient, jvp, differentiable,
            replay=lambda xs, attrs, out_shapes: op(xs[0], xs[1]), arity=2,
            shape=elementwise_shape, forward=_named(forward, name, op.__module__, quiet),
            line=line, word=word, simplify=simplify, smooth=smooth, rank_free=rank_free)
    return op
