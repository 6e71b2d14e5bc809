"""Zero times inf: a product whose upstream gradient or tangent is 0 counts 0.

A rule multiplies the upstream gradient (reverse mode) or a tangent (forward
mode) by a partial derivative. Where that partial is inf or NaN and the
upstream is 0 (a zero row of a Jacobian's one-hot seed, the branch
`tf.where` did not pick, an input the direction does not move), IEEE
arithmetic gives NaN, although nothing moves: d(x0 * 1 + x1 * inf)/dx0 would
be NaN. The ops whose declaration says `masked` (TensorFlow's Sqrt, Rsqrt and
Reciprocal grad kernels do the same; multiply, divide, pow and matmul are
minitape's, a row of docs/differences.md) drop those products, so both
directions give 1 there, at every order (a masked row writes its derivative
with masked ops: rsqrt's is -y * (y * y) / 2, not with `square`). In forward
mode a product with a zero partial derivative (an inf tangent times a
constant 0) counts 0 too. An infinite upstream or tangent times a zero (or
NaN) partial has no value at all: it stays NaN, and so does everything
differentiated from it (the norm's derivatives at the zero vector).

It is one rule for two shapes of product, applied by the declaration
machinery (`partials.py`, `products.py`), never written in a rule:

- an elementwise product t * p (`moved`): its NaN entries where t is 0 are
  made 0, by the op ZeroWhereUnmoved;
- a sum of products, a matmul's or an einsum's (`moved_product`): the
  contraction again with each NaN product whose upstream factor is 0
  counted as 0, by the op UnmovedEinsum behind an AllFinite check.

Which entries those are is a fact about values, and one cheap sum tells
whether there can be any: where there is none, eager code records nothing.
A traced function records the mask at every call site whatever the tracing
call's values (each call masks its own NaNs), unless constants prove that it
can never change a number. Both masks are ops with rules of their own (the
same masks on the upstream gradient), so they differentiate to any order.
"""
import cmath
import functools

import numpy as np

from ..core.context import state
from ..core.registry import batch_ndim
from .broadcasting import full_tangent, unbroadcast
from .complex import conj
from .operands import NUMBER_SCALARS, emit, tangent_batch
from .declaration import declare
from .subscripts import LETTERS, fresh_letters, written

# --- when the masks apply ------------------------------------------------------------

APPLY = True  # False: no mask fires anywhere (the conformance suite compares with TensorFlow so)


def square_sum(v):
    """Σ conj(v)·v over every entry, by BLAS's dot: one pass, three times faster
    than a sum (NumPy sums float32 pairwise). It is NaN if an entry is NaN and
    infinite if an entry is (or if the squares overflow, and then the masks run
    for nothing); an entry that is 0 is finite, so a BLAS that skips zeros
    changes nothing."""
    return np.vdot(v, v)


def has_nan(v):
    """Whether the NumPy value v may have a NaN entry: its square sum is NaN
    if one is (and, for complex v, if an infinite part meets another, for which
    the masks run and change nothing). A NumPy scalar stands for itself (a
    reduction of one costs 30 times more)."""
    total = v if type(v) in NUMBER_SCALARS else square_sum(v)
    return total != total


def recording_trace():
    """The trace being recorded (`tracing.Tracer`: the first recorder while a
    function is traced), or None."""
    tapes = state.tapes
    first = tapes[0] if tapes else None
    return first if first is not None and first.is_trace else None


def masks_apply():
    """False while an `unmasked` recorder records: forward mode from a
    gradient rule (`tangents.jvp_from_gradient`) runs the rule on an upstream
    gradient of zeros that stands for any direction, not for one that does
    not move, so no mask may fire there."""
    return APPLY and not any(r.unmasked for r in state.tapes)


# --- elementwise products: the op ZeroWhereUnmoved -------------------------------------

def moved(t, term, factor=None, times=None, over=None):
    """`term` (t times a partial derivative) with its NaN entries made exactly
    0 where `t` is 0. `t` is a tangent (forward mode) or an upstream gradient
    (reverse mode). With `factor` (forward mode: `term` is t * factor), a NaN
    where that factor is 0 is also made 0 (an inf tangent times a constant 0).

    An input that does not move, or an output nobody asked about (a zero row
    of a Jacobian's one-hot seed, or the branch `tf.where` did not pick), then
    adds nothing even where the partial derivative is inf or NaN (0 * inf is
    NaN in floating point): d(x0 * 1 + x1 * inf)/dx0 = 1, d(y0)/dx1 = 0 for
    y = x * [1, inf], and `where(x > 0, sqrt(x), 0.)` at x = -1 has the
    gradient 0, as TensorFlow's grad kernels for Sqrt and Rsqrt give.

    Only entries that are NaN are touched, each on its own, so a NaN in one
    entry never changes another, and a tape differentiating the rule sees
    `term` wherever it is finite (second derivatives next to a NaN are those
    of the plain formula). The mask is ONE op, `zero_where_unmoved`, which
    does nothing (and records nothing) when `term` has no NaN: one cheap sum
    tells, so the masks cost next to nothing where there is no NaN.

    In a function being traced (`mt.function`) the op is recorded whatever
    the values, so each call masks its own NaNs, as eager code does; it is
    left out only where values that are the same at every call prove that it
    can never change a number: `t` (and `factor`) a constant with no zeros,
    or `term` being t * `times` (t / `over`) for a constant `times` that is
    finite (`over` with no 0 and no NaN), as in `x * 2.0` or `x / 3.0`."""
    if t is None:
        return term
    trace = recording_trace()
    if trace is None and not has_nan(term._value) or not masks_apply():
        return term
    if trace is not None and _never_masks(trace.same_at_every_call, t, term, factor,
                                          times, over):
        return term
    return zero_where_unmoved(term, term, t, factor)


def moved_value(t, term):
    """`moved` on NumPy values (a walk nothing records: no trace to ask)."""
    if not has_nan(term) or not masks_apply():
        return term
    return unmoved_zeroed(term, term, t)


def _never_masks(fixed, t, term, factor, times, over):
    """Whether `moved`'s mask can never change an entry at any call of a traced
    function, judged from the values `fixed` (same at every call) holds. A NaN
    of t * p where t is 0 needs an inf or NaN in p; with a factor, a NaN where
    the factor is 0 needs an inf or NaN in t."""
    def finite(x):
        return x is not None and fixed(x) and bool(np.isfinite(x._value).all())

    def nonzero(x):
        return x is not None and fixed(x) and bool(np.all(x._value != 0))

    def divisor(x):  # a constant with no 0 and no NaN: t / x is 0 where t is
        return nonzero(x) and not np.isnan(x._value).any()

    if fixed(term):
        v = term._value
        return not np.isnan(v).any()
    if factor is not None:
        times = factor
        if not (nonzero(factor) or finite(t)):
            return False
    return nonzero(t) or finite(times) or divisor(over)


def unmoved_zeroed(x, term, t, factor=None):
    """The NumPy kernel of `zero_where_unmoved` (compiled programs call it
    too): `x` itself when `term` has no NaN, else a copy with 0 where `term`
    is NaN and `t` (or `factor`) is 0, and NaN where `term` is NaN, `t` is
    infinite and `x` is not 0. An infinite upstream gradient or tangent times
    a zero or NaN partial derivative is no number at all (the norm's gradient
    at the zero vector), and nothing differentiated from it is a number either:
    the mask itself (x is `term`) is NaN there already; its gradient and
    tangent (x is their upstream) become NaN there too, where they would have
    carried on as if the product had a value."""
    if not has_nan(term):
        return x
    nan = np.isnan(term)
    unmoved = t == 0
    if factor is not None:
        unmoved = unmoved | (factor == 0)
    out = np.where(nan & unmoved, np.zeros((), x.dtype), x)
    undefined = nan & ~unmoved & np.isinf(t) & (x != 0)
    return np.where(undefined, np.full((), np.nan, x.dtype), out) if undefined.any() else out


def zero_where_unmoved(x, term, t, factor=None, name=None):
    """`x`, with 0 where `term` is NaN and `t` (or `factor`) is 0: the mask of
    `moved` (which passes `term` as `x`), one op with one rule. Outside a trace
    it returns `x` itself, recording nothing, when `term` has no NaN. Its
    gradient (and tangent) is the same mask on the upstream gradient (the
    tangent) of `x`; `term`, `t` and `factor` only choose entries, like a
    comparison, and get none. So it differentiates to any order, and a traced
    function masks each call's own NaNs."""
    inputs = (x, term, t) if factor is None else (x, term, t, factor)
    dtype = x._value.dtype
    if dtype.kind not in "fc" or any(a._value.dtype != dtype for a in inputs):
        raise TypeError("zero_where_unmoved: needs floating-point inputs of one dtype, "
                        f"got {[str(a.dtype) for a in inputs]}")
    shapes = [a._value.shape for a in inputs]
    try:
        fits = np.broadcast_shapes(*shapes) == shapes[0]
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"zero_where_unmoved: shapes {shapes[1:]} must broadcast to "
                         f"x's shape {shapes[0]}")
    value = unmoved_zeroed(*(a._value for a in inputs))
    if value is x._value and recording_trace() is None:
        return x
    return emit("ZeroWhereUnmoved", value, inputs, None, name)


def _zero_where_unmoved_grad(op, grad):
    x, term, t, *factor = op.inputs
    return (zero_where_unmoved(grad, term, t, *factor),) + (None,) * (len(op.inputs) - 1)


def _zero_where_unmoved_jvp(op, tx, *others):
    x, term, t, *factor = op.inputs
    return None if tx is None else zero_where_unmoved(tx, term, t, *factor)


def _mask_shape(shapes, attrs, declared):
    """x's shape, which the other inputs broadcast to."""
    if len(shapes) not in (3, 4) or np.broadcast_shapes(*shapes) != tuple(shapes[0]):
        raise ValueError(f"needs 3 or 4 inputs that broadcast to the first one's shape, "
                         f"got shapes {[tuple(s) for s in shapes]}")
    return (tuple(shapes[0]),), 0


def _mask_dtype(dtypes, attrs):
    if dtypes[0].kind not in "fc" or any(d != dtypes[0] for d in dtypes):
        raise ValueError(f"needs floating-point inputs of one dtype, got "
                         f"{[str(d) for d in dtypes]}")
    return (dtypes[0],)


declare("ZeroWhereUnmoved", _zero_where_unmoved_grad, _zero_where_unmoved_jvp,
        replay=lambda xs, attrs, out_shapes: zero_where_unmoved(*xs), arity=None,
        shape=_mask_shape, dtype=_mask_dtype, line="zero_where_unmoved({inputs})",
        word="masked", smooth=True, simplify={"mask": "elementwise"})


# --- sums of products: the ops AllFinite and UnmovedEinsum ------------------------------

_SLICE = 2 ** 22  # products held in memory at once; larger contractions go in slices
MODES = ("select", "if_masked", "if_plain")


def all_finite(*values):
    """Whether every entry of the NumPy values is finite: their square sums are
    (squares of finite numbers may overflow to inf, and then the masks run for
    nothing)."""
    return all(cmath.isfinite(square_sum(v)) for v in values)


def _all_finite_op(*xs, name=None):
    """The op AllFinite: a bool scalar, True when every entry of xs is finite."""
    return emit("AllFinite", np.array(all_finite(*(x._value for x in xs))), tuple(xs),
                None, name)


declare("AllFinite", differentiable=False, replay=lambda xs, a, o: _all_finite_op(*xs),
        arity=None, shape=lambda shapes, attrs, declared: (((),), 0),
        dtype=lambda dtypes, attrs: (np.bool_,), line="all_finite({inputs})", word="finite",
        simplify={"mask": "check"})


def parse(equation, shapes, factors, masks, mode, z_shape=None):
    """The letters of an UnmovedEinsum (its subscripts, output, and each
    letter's size) from its attributes and input shapes, or ValueError."""
    if not isinstance(equation, str) or equation.count("->") != 1 or \
            not set(equation) <= set(LETTERS + ",->"):
        raise ValueError(f"equation {equation!r:.60} is not explicit einsum subscripts")
    lhs, out = equation.split("->")
    ins = lhs.split(",")
    if len(ins) != len(shapes) or mode not in MODES or type(factors) is not int or \
            not 1 <= factors <= len(ins) or type(masks) not in (tuple, list) or \
            any(type(m) is not int or not 0 <= m < len(ins) for m in masks):
        raise ValueError(f"attributes do not fit {len(shapes)} operand(s): equation "
                         f"{equation!r:.60}, factors {factors!r:.20}, masks {masks!r:.40}, "
                         f"mode {mode!r:.20}")
    sizes = {}
    for sub, shape in zip(ins, shapes):
        if len(sub) != len(shape):
            raise ValueError(f"subscripts {sub!r} do not fit shape {tuple(shape)}")
        for c, n in zip(sub, shape):
            if n != 1 and sizes.get(c, 1) not in (1, n):
                raise ValueError(f"letter {c!r} has sizes {sizes[c]} and {n} in "
                                 f"{equation!r} for shapes {[tuple(s) for s in shapes]}")
            sizes[c] = n if n != 1 else sizes.get(c, 1)
    factor_letters = set("".join(ins[:factors]))
    if len(set(out)) != len(out) or not set(out) <= factor_letters or \
            not set(lhs) - {","} <= factor_letters:
        raise ValueError(f"equation {equation!r} has an output or mask letter no factor has")
    if mode == "if_plain" and (len(ins) != 1 or ins[0] != out):
        raise ValueError("if_plain takes one operand, unchanged (subscripts 'ab->ab')")
    shape = tuple(sizes[c] for c in out)
    if mode == "select" and tuple(z_shape) != shape:
        raise ValueError(f"select: z's shape {tuple(z_shape)} is not the result's {shape}")
    return ins, out, sizes


def _broadcast(sizes):
    """The size that sizes broadcast to (1 gives way, also to 0)."""
    return next((n for n in sizes if n != 1), 1)


def _aligned(ins, values, letters):
    """Each operand laid out over all the letters (a repeated letter: its
    diagonal; a missing letter: size 1), so they multiply by broadcasting."""
    out = []
    for sub, x in zip(ins, values):
        unique = "".join(dict.fromkeys(sub))
        if unique != sub:
            x = np.einsum(f"{sub}->{unique}", x)
        order = sorted(unique, key=letters.index)
        x = np.transpose(x, [unique.index(c) for c in order])
        out.append(x.reshape([x.shape[order.index(c)] if c in order else 1 for c in letters]))
    return out


def _masked_contraction(equation, factors, masks, values):
    """The contraction of the factors, each NaN product with a zero factor from
    an operand in `masks` counted as 0 (in slices of at most _SLICE products)."""
    lhs, out = equation.split("->")
    ins = lhs.split(",")
    letters = list(dict.fromkeys("".join(ins[:factors])))
    aligned = _aligned(ins, values, letters)
    sizes = [_broadcast([x.shape[k] for x in aligned]) for k in range(len(letters))]
    summed = tuple(k for k, c in enumerate(letters) if c not in out)
    kept = [c for c in letters if c in out]
    result = _contract(aligned, factors, masks, sizes, summed, 0)
    return np.transpose(result, [kept.index(c) for c in out])


def _contract(aligned, factors, masks, sizes, summed, axis):
    """The masked products summed over `summed`; too many products at once are
    split along `axis` (then the next axis), and the parts joined or added."""
    if int(np.prod(sizes, dtype=np.float64)) <= _SLICE or axis == len(sizes):
        term = functools.reduce(np.multiply, aligned[:factors])
        term = np.broadcast_to(term, sizes)
        unmoved = functools.reduce(np.logical_or, [aligned[m] == 0 for m in masks], False)
        term = np.where(np.isnan(term) & unmoved, np.zeros((), term.dtype), term)
        return term.sum(axis=summed) if summed else np.array(term)
    step = max(1, int(_SLICE // np.prod(sizes[:axis] + sizes[axis + 1:], dtype=np.float64)))
    parts = []
    for start in range(0, sizes[axis], step):
        part = [x[(slice(None),) * axis + (slice(start, start + step),)]
                if x.shape[axis] != 1 else x for x in aligned]
        inner = sizes[:axis] + [min(step, sizes[axis] - start)] + sizes[axis + 1:]
        parts.append(_contract(part, factors, masks, inner, summed, axis + 1))
    if axis in summed:
        return functools.reduce(np.add, parts)
    return np.concatenate(parts, axis=sum(1 for k in range(axis) if k not in summed))


def unmoved_kernel(mode, equation, factors, masks, finite, *values):
    """UnmovedEinsum on NumPy values (compiled programs call it too): `finite`
    is AllFinite's answer, `values` are z (select only) and the operands."""
    operands = values[1:] if mode == "select" else values
    if mode == "if_plain":
        return operands[0] if finite else np.zeros_like(operands[0])
    if not finite:
        return _masked_contraction(equation, factors, masks, operands)
    if mode == "select":
        return values[0]
    lhs, out = equation.split("->")
    sizes = {}
    for sub, x in zip(lhs.split(","), operands):
        for c, n in zip(sub, np.shape(x)):
            sizes[c] = _broadcast([sizes.get(c, 1), n])
    return np.zeros([sizes[c] for c in out], operands[0].dtype)


def unmoved_einsum(mode, equation, factors, masks, finite, operands, z=None, name=None):
    """The op (see the module docstring): `finite` is a bool scalar tensor
    (AllFinite's), `operands` and select's `z` are tensors."""
    inputs = (finite,) + ((z,) if mode == "select" else ()) + tuple(operands)
    dtype = inputs[1]._value.dtype
    if finite._value.dtype != np.bool_ or finite._value.shape != () or dtype.kind not in "fc" \
            or any(x._value.dtype != dtype for x in inputs[1:]):
        raise TypeError("unmoved_einsum: needs a bool scalar and floating-point inputs of "
                        f"one dtype, got {[str(x.dtype) for x in inputs]}")
    try:
        parse(equation, [x.shape for x in operands], factors, masks, mode,
              None if z is None else z.shape)
    except ValueError as e:
        raise ValueError(f"unmoved_einsum: {e}") from None
    value = unmoved_kernel(mode, equation, factors, tuple(masks), bool(finite._value),
                           *(x._value for x in inputs[1:]))
    if mode == "select" and value is z._value and recording_trace() is None:
        return z
    attrs = {"equation": equation, "factors": factors, "masks": tuple(masks), "mode": mode}
    return emit("UnmovedEinsum", value, inputs, attrs, name)


def moved_product(z, ins, out, xs, moving, structural=()):
    """`z`, the contraction `ins -> out` of the tensors `xs`, with each NaN
    product whose factor from xs[moving] (or from a `structural` operand: the
    identity matrices that write out a diagonal) is 0 counted as 0 (see the
    module docstring). Eagerly it is z itself, unrecorded, when the factors
    that could meet a zero are all finite; in a trace, an AllFinite check and
    ONE UnmovedEinsum op, unless constants prove the check passes."""
    masks = (moving,) + tuple(structural)
    checks = [x for i, x in enumerate(xs) if i not in (structural or masks)]
    trace = recording_trace()
    if trace is None:
        if all_finite(*(x._value for x in checks)) or not masks_apply():
            return z
    elif all(trace.same_at_every_call(x) and np.isfinite(x._value).all() for x in checks) \
            or not masks_apply():
        return z
    return unmoved_einsum("select", ",".join(ins) + "->" + out, len(xs), masks,
                          _all_finite_op(*checks), xs, z=z)


def _parts(op):
    """(subscripts, output, the check, the operands, factors, masks) of an op."""
    a = op.attrs
    lhs, out = a["equation"].split("->")
    first = 2 if a["mode"] == "select" else 1
    return lhs.split(","), out, op.inputs[0], op.inputs[first:], a["factors"], a["masks"]


def _plain(finite, batch, out, t):
    """t where the check passed, else zeros."""
    return unmoved_einsum("if_plain", f"{batch + out}->{batch + out}", 1, (), finite, [t])


def _unmoved_einsum_grad(op, grad):
    """Each factor's gradient is the masked contraction of the upstream
    gradient with the other factors (a zero upstream drops its products
    too), gated as the op; select's z gets the upstream where the check
    passed. A letter only that factor has comes back through ones, a repeated
    letter through an identity matrix (as in einsum's gradient). Complex factors
    are conjugated, as in einsum's gradient (their zeros, the masks, stay)."""
    ins, out, finite, operands, factors, masks = _parts(op)
    mode = op.attrs["mode"]
    first = len(op.inputs) - len(operands)
    nb = batch_ndim(op, grad)
    fresh = iter(fresh_letters(*ins, out))
    batch = "".join(next(fresh) for _ in range(nb))
    grads = [None] * len(op.inputs)
    if mode == "if_plain":
        grads[1] = _plain(finite, batch, out, grad)
        return grads
    if mode == "select" and op.needs[1]:
        grads[1] = _plain(finite, batch, out, grad)
    sizes = {c: n for s, x in zip(ins, operands) for c, n in zip(s, x.shape) if n != 1}
    for j in range(factors):
        if not op.needs[first + j]:
            continue
        terms = [(batch + out, grad)]
        new_masks = [0]
        for i in range(factors):
            if i != j:
                if i in masks:
                    new_masks.append(len(terms))
                terms.append((ins[i], conj(operands[i])))
        x = operands[j]
        terms, result, eyes = written(terms, ins[j], sizes, fresh, x.dtype)
        new_masks += eyes
        n_factors = len(terms)
        for m in masks:
            if m == j or m >= factors:
                new_masks.append(len(terms))
                terms.append((ins[m], operands[m]))
        equation = ",".join(s for s, _ in terms) + "->" + batch + result
        g = unmoved_einsum("if_masked", equation, n_factors, tuple(new_masks), finite,
                           [t for _, t in terms])
        grads[first + j] = unbroadcast(g, x.shape, nb)
    return grads


def _unmoved_einsum_jvp(op, *tangents):
    """The sum over factors with a tangent of the masked contraction with that
    factor replaced by its tangent (whose zeros drop products too, and whose
    batch letters go to the output), gated as the op; select's z moves with
    its own tangent where the check passed."""
    ins, out, finite, operands, factors, masks = _parts(op)
    mode = op.attrs["mode"]
    first = len(op.inputs) - len(operands)
    batch_shape = tangent_batch(op, tangents)
    batch = "".join(fresh_letters(*ins, out)[:len(batch_shape)])
    total = []
    if mode in ("select", "if_plain") and tangents[1] is not None:
        total.append(_plain(finite, batch, out,
                            full_tangent(tangents[1], batch_shape + op.inputs[1].shape)))
    if mode != "if_plain":
        for j in range(factors):
            t = tangents[first + j]
            if t is None:
                continue
            subs = [batch + s if i == j else s for i, s in enumerate(ins)]
            xs = [t if i == j else x for i, x in enumerate(operands)]
            new_masks = sorted(set(masks) | {j})  # a zero tangent drops its products
            if j in masks:  # and x_j's zeros still do
                new_masks.append(len(xs))
                subs.append(ins[j])
                xs.append(operands[j])
            equation = ",".join(subs) + "->" + batch + out
            total.append(unmoved_einsum("if_masked", equation, factors, tuple(new_masks),
                                        finite, xs))
    if not total:
        return None
    return full_tangent(functools.reduce(lambda a, b: a + b, total),
                        batch_shape + op.outputs[0].shape)


def _shape(shapes, attrs, declared):
    """The output's shape and the products the contraction may compute."""
    first = 2 if attrs["mode"] == "select" else 1
    if len(shapes) <= first or tuple(shapes[0]) != ():
        raise ValueError("takes the check (a scalar), then z (select) and the operands")
    ins, out, sizes = parse(attrs["equation"], shapes[first:], attrs["factors"],
                            attrs["masks"], attrs["mode"], shapes[1])
    products = int(np.prod(list(sizes.values()) or [1], dtype=np.float64))
    return (tuple(sizes[c] for c in out),), 2 * products


def _dtype(dtypes, attrs):
    if dtypes[0] != np.bool_ or dtypes[1].kind not in "fc" or \
            any(d != dtypes[1] for d in dtypes[1:]):
        raise ValueError(f"needs a bool and floating-point inputs of one dtype, got "
                         f"{[str(d) for d in dtypes]}")
    return (dtypes[1],)


def _replay(xs, a, out_shapes):
    first = 2 if a["mode"] == "select" else 1
    return unmoved_einsum(a["mode"], a["equation"], a["factors"], a["masks"], xs[0],
                          xs[first:], z=xs[1] if first == 2 else None)


declare("UnmovedEinsum", _unmoved_einsum_grad, _unmoved_einsum_jvp, replay=_replay, arity=None,
        attrs_of=lambda op: {k: op.attrs[k] for k in ("equation", "factors", "masks", "mode")},
        shape=_shape, dtype=_dtype, line="{unmoved}({inputs})", word="masked", smooth=True,
        line_attrs=lambda a, out_shapes, in_dtypes: {"unmoved": functools.partial(
            unmoved_kernel, a["mode"], a["equation"], a["factors"], tuple(a["masks"]))},
        simplify={"mask": "contraction"})
