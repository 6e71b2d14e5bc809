"""Elementwise math: each op's forward, and right under it, its gradient rule.

Rules see `grad` with the output's shape, possibly with extra leading batch dims
(vectorised jacobians). Elementwise products broadcast over those dims by
themselves; `unbroadcast` sums each gradient back to its input's shape.

Under each gradient rule sits the op's JVP rule (forward mode): it gets one
tangent per input, shaped like that input (None means zero), possibly with
leading batch dims too, and returns the output's tangent. For a binary op the
tangents are first `lift`ed so they broadcast against the output.

Complex inputs follow TensorFlow's convention (complex.py): a gradient rule
multiplies the upstream gradient by the CONJUGATE of the derivative, and the
JVP rule multiplies the tangent by the derivative itself (`_jvp_of`).
`conj` returns a real tensor as it is, so real inputs pay nothing for this.
"""
import operator

import numpy as np

from .. import arguments
from ..context import state
from ..registry import NotDifferentiable, RegisterGradient, RegisterJVP, batch_ndim
from ..recording import record
from ..tensor import Tensor, new_id
from .broadcasting import full_tangent, lift, unbroadcast
from .complex import conj
from .core import (FLOAT_SCALARS, NUMBER_SCALARS, REAL_SCALARS, broadcast_error, emit,
                   float_input, operands, replay, tangent_batch, tensor_input)

_new_tensor = Tensor.__new__


def _binary(op_type, op_name, numpy_fn, doc):
    """Make the elementwise op `op_name(x, y)` that runs `numpy_fn` on the values.

    Every op call passes through here, so the common case (two tensors of one
    dtype) is checked first and costs only a few comparisons.
    """
    def op(x, y, name=None):
        if type(x) is not Tensor or type(y) is not Tensor or not (
                type(x._value) is type(y._value) in NUMBER_SCALARS  # two scalars of one dtype
                or x._value.dtype is y._value.dtype and x._value.dtype.kind in "fiuc"):
            x, y = operands(op_name, x, y)
        try:
            value = numpy_fn(x._value, y._value)
        except ValueError:
            raise broadcast_error(op_name, x, y) from None
        except TypeError:
            raise TypeError(f"{op_name}: not defined for dtype {x.dtype}") from None
        out = _new_tensor(Tensor)  # emit(op_type, value, (x, y), None, name), inlined:
        out._value, out._id = value, new_id()  # the arithmetic operators all pass here
        tapes = state.tapes
        if tapes:
            record(op_type, (x, y), (out,), None, name, tapes)
        return out
    op.__name__ = op.__qualname__ = op_name
    op.__doc__ = doc
    op.numpy_fn = numpy_fn  # what compiled programs call (compiler.py)
    return op


def _unary(op_type, op_name, numpy_fn, doc, kinds="fc"):
    """Make the elementwise op `op_name(x)`; `kinds` are the dtype kinds it
    accepts (floating point by default; "f": real floating point only)."""
    check = float_input if kinds in ("fc", "f") else tensor_input
    scalars = {"fc": FLOAT_SCALARS, "f": FLOAT_SCALARS & REAL_SCALARS}.get(
        kinds, NUMBER_SCALARS)  # (not bools: "biufc")

    def op(x, name=None):
        if type(x) is not Tensor or (type(x._value) not in scalars
                                     and x._value.dtype.kind not in kinds):
            x = check(op_name, x)
            if x._value.dtype.kind not in kinds:  # only complex gets past check here
                raise complex_error(op_name, x)
        out = _new_tensor(Tensor)  # emit(op_type, ..., (x,), None, name), inlined
        out._value, out._id = numpy_fn(x._value), new_id()
        tapes = state.tapes
        if tapes:
            record(op_type, (x,), (out,), None, name, tapes)
        return out
    op.__name__ = op.__qualname__ = op_name
    op.__doc__ = doc
    op.numpy_fn = numpy_fn  # what compiled programs call (compiler.py)
    return op


def complex_error(op_name, x):
    return TypeError(f"{op_name}: complex input (dtype {x.dtype}) is not supported, "
                     "as in TensorFlow")


def real_input(op_name, x, floating=False):
    """`x` as a tensor (a floating-point one if `floating`), not complex: for the
    ops TensorFlow has no complex kernel for, mostly those that order numbers
    (max, comparisons, relu, softmax), where NumPy would order complex numbers
    lexicographically and give meaningless results."""
    x = (float_input if floating else tensor_input)(op_name, x)
    if x._value.dtype.kind == "c":
        raise complex_error(op_name, x)
    return x


def _both(op, grad, gx, gy):
    """Sum each input's gradient back to that input's shape (None stays None).
    A gradient already of its input's shape was not broadcast (and carries no
    batch dims: it has at least as many dims as grad)."""
    x, y = op.inputs
    if gx is not None and gx._value.shape != x._value.shape:
        gx = unbroadcast(gx, x._value.shape, batch_ndim(op, grad))
    if gy is not None and gy._value.shape != y._value.shape:
        gy = unbroadcast(gy, y._value.shape, batch_ndim(op, grad))
    return gx, gy


def _lifted(op, tx, ty):
    """The tangents of x and y, shaped to broadcast against the output."""
    x, y = op.inputs
    ndim = op.outputs[0]._value.ndim
    return lift(tx, x, ndim), lift(ty, y, ndim)


def moved(t, term, factor=None, times=None, over=None):
    """`term` (t times a partial derivative) with its NaN entries made exactly
    0 where `t` is 0. `t` is a tangent (forward mode) or an upstream gradient
    (reverse mode). Use it in a rule whose partial derivative can be inf or
    NaN where its input is fine to leave alone:

        @RegisterGradient("Sqrt", batch_safe=True)
        def _sqrt_grad(op, grad):
            twice = 2 * op.outputs[0]
            return moved(grad, grad / twice, over=twice)

    An input that does not move, or an output nobody asked about (a zero row
    of a Jacobian's one-hot seed, or the branch `tf.where` did not pick), then
    adds nothing even where the partial derivative is inf or NaN (0 * inf is
    NaN in floating point): d(x0 * 1 + x1 * inf)/dx0 = 1, d(y0)/dx1 = 0 for
    y = x * [1, inf], and `where(x > 0, sqrt(x), 0.)` at x = -1 has the
    gradient 0, as TensorFlow's grad kernels for Sqrt and Rsqrt give.
    With `factor` (forward mode of a product: `term` is t * factor), a NaN
    where that factor is 0 is also made 0 (an inf tangent times a constant 0).

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


_total = np.add.reduce  # the sum of all entries, without ndarray.sum's Python wrapper


def has_nan(v):
    """Whether the NumPy value v may have a NaN entry: its sum is NaN if one
    is (and if inf meets -inf, for which the masks run and change nothing).
    A NumPy scalar is its own sum (a reduction of one costs 30 times more)."""
    total = v if type(v) in NUMBER_SCALARS else _total(v, None)
    return total != total


def recording_trace():
    """The trace being recorded (`tracing.Tracer`: the first recorder while a
    function is traced), or None."""
    tapes = state.tapes
    first = tapes[0] if tapes else None
    return first if getattr(first, "_keeps_masks", False) else None


def masks_apply():
    """False while a recorder marked `_unmasked` records: forward mode from a
    gradient rule (`tangents.jvp_from_gradient`) runs the rule on an upstream
    gradient of zeros that stands for any direction, not for one that does
    not move, so no mask may fire there."""
    return not any(getattr(r, "_unmasked", False) for r in state.tapes)


def _never_masks(fixed, t, term, factor, times, over):
    """Whether `moved`'s mask can never change an entry at any call of a traced
    function, judged from the values `fixed` (same at every call) holds. A NaN
    of t * p where t is 0 needs an inf or NaN in p; with a factor, a NaN where
    the factor is 0 needs an inf or NaN in t."""
    def finite(x):
        return x is not None and fixed(x) and bool(np.isfinite(x._value).all())

    def nonzero(x):
        return x is not None and fixed(x) and bool(np.all(x._value != 0))

    if fixed(term):
        v = term._value
        return not np.isnan(v).any()
    if factor is not None:
        times = factor
        if not (nonzero(factor) or finite(t)):
            return False
    return nonzero(t) or finite(times) or (
        nonzero(over) and not np.isnan(over._value).any())


def unmoved_zeroed(x, term, t, factor=None):
    """The NumPy kernel of `zero_where_unmoved` (compiled programs call it
    too): `x` itself when `term` has no NaN, else a copy with 0 where `term`
    is NaN and `t` (or `factor`) is 0."""
    if not has_nan(term):
        return x
    unmoved = t == 0
    if factor is not None:
        unmoved = unmoved | (factor == 0)
    return np.where(np.isnan(term) & unmoved, np.zeros((), x.dtype), x)


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


@RegisterGradient("ZeroWhereUnmoved", batch_safe=True)
def _zero_where_unmoved_grad(op, grad):
    x, term, t, *factor = op.inputs
    return (zero_where_unmoved(grad, term, t, *factor),) + (None,) * (len(op.inputs) - 1)


@RegisterJVP("ZeroWhereUnmoved", batch_safe=True)
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


replay("ZeroWhereUnmoved", lambda xs, attrs, out_shapes: zero_where_unmoved(*xs),
       arity=None, shape=_mask_shape, dtype=_mask_dtype)


def _sum_jvp(op, batch, a, b):
    """The output tangent a + b from two terms (None is zero), at full shape."""
    t = a if b is None else b if a is None else a + b
    return full_tangent(t, batch + op.outputs[0]._value.shape)


# op.needs[i] is False when input i leads to no source (set by the backward
# walk), so rules skip gradients nobody asked for.

add = _binary("AddV2", "add", operator.add, "x + y, elementwise with broadcasting.")


@RegisterGradient("AddV2", batch_safe=True)
def _add_grad(op, grad):
    return _both(op, grad, grad if op.needs[0] else None, grad if op.needs[1] else None)


@RegisterJVP("AddV2", batch_safe=True)
def _add_jvp(op, tx, ty):
    return _sum_jvp(op, tangent_batch(op, (tx, ty)), *_lifted(op, tx, ty))


subtract = _binary("Sub", "subtract", operator.sub, "x - y, elementwise.")


@RegisterGradient("Sub", batch_safe=True)
def _sub_grad(op, grad):
    return _both(op, grad, grad if op.needs[0] else None, -grad if op.needs[1] else None)


@RegisterJVP("Sub", batch_safe=True)
def _sub_jvp(op, tx, ty):
    batch = tangent_batch(op, (tx, ty))
    tx, ty = _lifted(op, tx, ty)
    return _sum_jvp(op, batch, tx, None if ty is None else -ty)


multiply = _binary("Mul", "multiply", operator.mul, "x * y, elementwise.")


@RegisterGradient("Mul", batch_safe=True)
def _mul_grad(op, grad):
    x, y = op.inputs
    x, y = conj(x), conj(y)  # complex: grad * conj(d(xy)/dx) (see the module docstring)
    return _both(op, grad, moved(grad, grad * y, times=y) if op.needs[0] else None,
                 moved(grad, grad * x, times=x) if op.needs[1] else None)


@RegisterJVP("Mul", batch_safe=True)
def _mul_jvp(op, tx, ty):
    x, y = op.inputs
    batch = tangent_batch(op, (tx, ty))
    tx, ty = _lifted(op, tx, ty)
    return _sum_jvp(op, batch, None if tx is None else moved(tx, tx * y, y),
                    None if ty is None else moved(ty, x * ty, x))


divide = _binary("RealDiv", "divide", operator.truediv, "x / y, elementwise.")


@RegisterGradient("RealDiv", batch_safe=True)
def _div_grad(op, grad):
    y, z = conj(op.inputs[1]), conj(op.outputs[0])   # z = x / y
    gx = moved(grad, grad / y, over=y)
    # d(x/y)/dy = -(1/y) z; gx is 0 where grad is 0, so only an inf or NaN z
    # makes a NaN there
    gy = moved(grad, -gx * z, times=z) if op.needs[1] else None
    return _both(op, grad, gx if op.needs[0] else None, gy)


@RegisterJVP("RealDiv", batch_safe=True)
def _div_jvp(op, tx, ty):
    y, z = op.inputs[1], op.outputs[0]
    batch = tangent_batch(op, (tx, ty))
    tx, ty = _lifted(op, tx, ty)
    q = None if ty is None else z / y
    return _sum_jvp(op, batch, None if tx is None else moved(tx, tx / y, over=y),
                    None if ty is None else moved(ty, -ty * q, times=q))


def power(x, y):
    """x ** y for NumPy values, as C's pow and TensorFlow compute it. NumPy
    takes `x ** 0.5` (a scalar exponent) as sqrt(x), which is NaN at x = -inf,
    where pow gives inf; an array of exponents gets pow. So -inf ** 0.5 is inf
    here whatever the exponent's shape, eagerly and in compiled programs (the
    compiler's line for Pow is this same expression)."""
    return np.where((x == -np.inf) & (y == 0.5), -x, x ** y)


pow = _binary("Pow", "pow", power, "x ** y, elementwise.")


@RegisterGradient("Pow", batch_safe=True)
def _pow_grad(op, grad):
    x, y = op.inputs
    gx = moved(grad, grad * conj(y) * conj(pow(x, y - 1))) if op.needs[0] else None
    gy = moved(grad, grad * conj(op.outputs[0]) * conj(_log_base(x))) if op.needs[1] else None
    return _both(op, grad, gx, gy)


def _log_base(x):
    """log(x) for d(x**y)/dy = x**y * log(x), taken as 0 where x <= 0 (as
    TensorFlow does); for complex x, 0 only at x = 0 (log is defined elsewhere)."""
    defined = not_equal(x, 0) if x.dtype.kind == "c" else greater(x, 0)
    return where(defined, log(where(defined, x, 1)), 0)


@RegisterJVP("Pow", batch_safe=True)
def _pow_jvp(op, tx, ty):
    x, y = op.inputs
    batch = tangent_batch(op, (tx, ty))
    tx, ty = _lifted(op, tx, ty)
    dx = None if tx is None else y * pow(x, y - 1)
    dy = None if ty is None else op.outputs[0] * _log_base(x)
    return _sum_jvp(op, batch, None if tx is None else moved(tx, tx * dx, times=dx),
                    None if ty is None else moved(ty, ty * dy, times=dy))


negative = _unary("Neg", "negative", operator.neg, "-x.", kinds="biufc")


@RegisterGradient("Neg", batch_safe=True)
def _neg_grad(op, grad):
    return -grad


@RegisterJVP("Neg", batch_safe=True)
def _neg_jvp(op, t):
    return -t


square = _unary("Square", "square", np.square, "x * x.", kinds="biufc")


@RegisterGradient("Square", batch_safe=True)
def _square_grad(op, grad):
    return grad * (2 * conj(op.inputs[0]))


def _jvp_of(gradient_rule):
    """An elementwise f(x) has a diagonal Jacobian, f'(x): the gradient multiplies the
    upstream gradient by conj(f'(x)) and the JVP multiplies the tangent by f'(x).
    So for these ops the JVP rule *is* the gradient rule, with the tangent in the
    place of the upstream gradient, conjugated before and after:
    conj(conj(t) * conj(f'(x))) = f'(x) * t (for real tensors conj does nothing)."""
    return lambda op, tangent: conj(gradient_rule(op, conj(tangent)))


RegisterJVP("Square", batch_safe=True)(_jvp_of(_square_grad))


sqrt = _unary("Sqrt", "sqrt", np.sqrt, "Square root.")


@RegisterGradient("Sqrt", batch_safe=True)
def _sqrt_grad(op, grad):
    """grad / (2 sqrt(x)) (conj(...) for complex x): inf at x = 0, NaN for x < 0.
    A zero upstream gradient gives 0 there (TensorFlow's SqrtGrad kernel), so
    the branch `where(x > 0, sqrt(x), 0.)` did not pick sends back 0, not NaN."""
    twice = 2 * conj(op.outputs[0])
    return moved(grad, grad / twice, over=twice)


@RegisterJVP("Sqrt", batch_safe=True)
def _sqrt_jvp(op, t):
    """t / (2 sqrt(x)), unmasked as in TensorFlow: a zero tangent at x = 0
    gives NaN, so the norm's derivative at the zero vector is NaN in both
    directions."""
    return t / (2 * op.outputs[0])


exp = _unary("Exp", "exp", np.exp, "e ** x.")


@RegisterGradient("Exp", batch_safe=True)
def _exp_grad(op, grad):
    return grad * conj(op.outputs[0])


RegisterJVP("Exp", batch_safe=True)(_jvp_of(_exp_grad))  # diagonal Jacobian (see Square)


log = _unary("Log", "log", np.log, "Natural logarithm.")


@RegisterGradient("Log", batch_safe=True)
def _log_grad(op, grad):
    return grad / conj(op.inputs[0])


RegisterJVP("Log", batch_safe=True)(_jvp_of(_log_grad))  # diagonal Jacobian (see Square)


sin = _unary("Sin", "sin", np.sin, "Sine.")


@RegisterGradient("Sin", batch_safe=True)
def _sin_grad(op, grad):
    return grad * cos(conj(op.inputs[0]))


RegisterJVP("Sin", batch_safe=True)(_jvp_of(_sin_grad))  # diagonal Jacobian (see Square)


cos = _unary("Cos", "cos", np.cos, "Cosine.")


@RegisterGradient("Cos", batch_safe=True)
def _cos_grad(op, grad):
    return -grad * sin(conj(op.inputs[0]))


RegisterJVP("Cos", batch_safe=True)(_jvp_of(_cos_grad))  # diagonal Jacobian (see Square)


tanh = _unary("Tanh", "tanh", np.tanh, "Hyperbolic tangent.")


@RegisterGradient("Tanh", batch_safe=True)
def _tanh_grad(op, grad):
    y = conj(op.outputs[0])
    return grad * (1 - y * y)


RegisterJVP("Tanh", batch_safe=True)(_jvp_of(_tanh_grad))  # diagonal Jacobian (see Square)


abs = _unary("Abs", "abs", np.abs, "|x|.", kinds="biufc")


@RegisterGradient("Abs", batch_safe=True)
def _abs_grad(op, grad):
    """grad * sign(x); for complex x, sign(x) = x / |x| (0 at 0) and the real
    upstream gradient becomes complex: TensorFlow's convention, the conjugate
    of d|x|/dx = conj(x) / (2|x|), doubled."""
    x = op.inputs[0]
    if x.dtype.kind == "c":
        grad = cast(grad, x.dtype)
    return grad * sign(x)


@RegisterJVP("Abs", batch_safe=True)
def _abs_jvp(op, t):
    """t * sign(x); for complex x the real Re(conj(sign(x)) t) = Re(s)Re(t) +
    Im(s)Im(t), with Re as a cast to the real dtype and Im(z) = Re(-i z)."""
    x = op.inputs[0]
    if x.dtype.kind != "c":
        return t * sign(x)
    s, real = sign(x), op.outputs[0].dtype
    return cast(s, real) * cast(t, real) + cast(s * -1j, real) * cast(t * -1j, real)


def _select(op_type, op_name, pick_x, x, y, name):
    x, y = operands(op_name, x, y)
    if x._value.dtype.kind == "c":  # no order (NumPy's is lexicographic)
        raise complex_error(op_name, x)
    try:
        value = pick_x(x._value, y._value)
    except ValueError:
        raise broadcast_error(op_name, x, y) from None
    return emit(op_type, value, (x, y), None, name)


def maximum(x, y, name=None):
    return _select("Maximum", "maximum", np.maximum, x, y, name)


def minimum(x, y, name=None):
    return _select("Minimum", "minimum", np.minimum, x, y, name)


def _select_grad(op, grad, x_wins):
    """The gradient goes to whichever input was picked (x on ties)."""
    zero = np.zeros((), grad.dtype)
    return _both(op, grad, where(x_wins, grad, zero) if op.needs[0] else None,
                 where(x_wins, zero, grad) if op.needs[1] else None)


# Masks like `x >= y` are made with (recorded, not differentiable) comparison
# ops rather than NumPy, so a gradient traced into an mt.function recomputes
# them on every call instead of freezing the values seen while tracing.

@RegisterGradient("Maximum", batch_safe=True)
def _maximum_grad(op, grad):
    x, y = op.inputs
    return _select_grad(op, grad, greater_equal(x, y))


@RegisterGradient("Minimum", batch_safe=True)
def _minimum_grad(op, grad):
    x, y = op.inputs
    return _select_grad(op, grad, less_equal(x, y))


def _select_jvp(op, tx, ty, x_wins):
    """The output's tangent is the tangent of whichever input was picked."""
    batch = tangent_batch(op, (tx, ty))
    tx, ty = _lifted(op, tx, ty)
    zero = np.zeros((), op.outputs[0].dtype)
    t = where(x_wins, zero if tx is None else tx, zero if ty is None else ty)
    return full_tangent(t, batch + op.outputs[0].shape)


@RegisterJVP("Maximum", batch_safe=True)
def _maximum_jvp(op, tx, ty):
    x, y = op.inputs
    return _select_jvp(op, tx, ty, greater_equal(x, y))


@RegisterJVP("Minimum", batch_safe=True)
def _minimum_jvp(op, tx, ty):
    x, y = op.inputs
    return _select_jvp(op, tx, ty, less_equal(x, y))


def where(condition, x, y, name=None):
    """Elementwise `x` where `condition` is true, else `y` (TensorFlow's where_v2)."""
    condition = tensor_input("where", condition)
    if condition.dtype != np.bool_:
        raise TypeError(f"where: condition must be a bool tensor, got {condition.dtype}")
    x, y = operands("where", x, y)
    try:
        value = np.where(condition._value, x._value, y._value)
    except ValueError:
        raise ValueError(f"where: shapes {condition.shape}, {x.shape} and {y.shape} "
                         "cannot be broadcast together") from None
    return emit("SelectV2", value, (condition, x, y), None, name)


@RegisterGradient("SelectV2", batch_safe=True)
def _where_grad(op, grad):
    condition, x, y = op.inputs
    nb = batch_ndim(op, grad)
    zero = np.zeros((), grad.dtype)
    return (None,
            unbroadcast(where(condition, grad, zero), x.shape, nb) if op.needs[1] else None,
            unbroadcast(where(condition, zero, grad), y.shape, nb) if op.needs[2] else None)


@RegisterJVP("SelectV2", batch_safe=True)
def _where_jvp(op, tc, tx, ty):
    condition, x, y = op.inputs
    batch = tangent_batch(op, (tc, tx, ty))
    ndim = op.outputs[0].ndim
    zero = np.zeros((), op.outputs[0].dtype)
    tx = zero if tx is None else lift(tx, x, ndim)
    ty = zero if ty is None else lift(ty, y, ndim)
    return full_tangent(where(condition, tx, ty), batch + op.outputs[0].shape)


def cast(x, dtype, name=None):
    """`x` converted to `dtype`; differentiable between floating dtypes."""
    x = tensor_input("cast", x) if not isinstance(x, Tensor) else x
    dtype = arguments.dtype("cast", dtype)
    if x.dtype.kind not in "biufc":
        raise TypeError(f"cast: cannot cast a {x.dtype} tensor to {dtype}")
    if x.dtype == dtype:
        return x
    v = x._value
    if v.dtype.kind == "c" and dtype.kind != "c":
        v = v.real  # the real part, as TensorFlow's cast (NumPy would warn)
    return emit("Cast", v.astype(dtype), (x,), {"DstT": dtype}, name)


@RegisterGradient("Cast", batch_safe=True)
def _cast_grad(op, grad):
    x = op.inputs[0]
    if x.dtype.kind in "fc" and grad.dtype.kind in "fc":
        return cast(grad, x.dtype)
    return None


@RegisterJVP("Cast", batch_safe=True)
def _cast_jvp(op, t):
    dtype = op.attrs["DstT"]
    return cast(t, dtype) if dtype.kind in "fc" else None


_sign = _unary("Sign", "sign", np.sign, "-1, 0 or 1.", kinds="biufc")


def sign(x, name=None):
    """-1, 0 or 1 (its gradient is zero). For complex x, x / |x| (0 at 0),
    made of ops as TensorFlow's tf.math.sign makes it (div_no_nan), so that
    it differentiates: the second derivatives of abs (whose gradient is
    grad * sign(x)) and of complex norms go through it."""
    if type(x) is not Tensor:
        x = tensor_input("sign", x)
    if x._value.dtype.kind != "c":
        return _sign(x, name)
    size = cast(abs(x), x.dtype)
    at_zero = equal(size, 0)  # div_no_nan: 0 there, and its gradient 0 too
    return where(at_zero, np.zeros((), x.dtype),
                 x / where(at_zero, np.ones((), x.dtype), size), name=name)


sign.numpy_fn = np.sign  # what compiled programs call for a Sign op (compiler.py)


@RegisterGradient("Sign", batch_safe=True)
def _sign_grad(op, grad):
    """(Sign ops are of real inputs: complex sign is made of other ops.)
    Zeros, not None, as in TensorFlow: sign is flat wherever it has a slope,
    so |x|'' = d(grad * sign(x))/dx comes out as 0 rather than unconnected.
    The zeros are a constant (TensorFlow's ZerosLike is not differentiable)."""
    return Tensor(np.zeros(grad.shape, grad.dtype))


@RegisterJVP("Sign", batch_safe=True)
def _sign_jvp(op, t):
    """None, as TensorFlow's forward mode gives: sign's output does not move."""
    return None


def connected_zeros(x):
    """Zeros shaped like x, made from x by ops whose derivatives are zero. A
    rule that returns 0 for every x (relu's gradient where x <= 0) builds its
    0 with this, so its derivative with respect to x is zeros, not None, as in
    TensorFlow (ZerosLike's zeros for a tape over the rule, ReluGrad's zero
    tangent for a ForwardAccumulator around it). For tapes it is |sign(x)| * 0:
    sign's gradient is a constant, so a compiled Hessian drops the whole path.
    While a ForwardAccumulator records (it keeps `_tangents`) it is x - x,
    whose tangent t - t is +0 where sign's is None. NaN (and for x - x, inf)
    entries of x are replaced by 0 first; a trace replaces them whatever the
    values it was traced with, for later calls."""
    if any(hasattr(r, "_tangents") for r in state.tapes):
        if recording_trace() is not None or not np.isfinite(x._value).all():
            x = where(less(abs(x), np.inf), x, np.zeros((), x.dtype))
        return x - x
    if recording_trace() is not None or has_nan(x._value):
        x = where(equal(x, x), x, np.zeros((), x.dtype))
    return abs(sign(x)) * 0


# Not differentiable: recorded like any op (so traces replay them), but their
# inputs get no gradient (NotDifferentiable) and no tangent.
_round = _unary("Round", "round", np.round, "Round half to even (not differentiable).",
                kinds="f")


def round(x, name=None):
    """Round half to even (not differentiable). An integer tensor is returned
    as it is, as TensorFlow's tf.round does (its dtype kept)."""
    if type(x) is not Tensor:
        x = tensor_input("round", x)
    if x._value.dtype.kind in "iu":
        return x
    return _round(x, name)


round.numpy_fn = np.round  # what compiled programs call for a Round op (compiler.py)
floor = _unary("Floor", "floor", np.floor, "Round down (not differentiable).", kinds="f")


def _comparison(op_type, op_name, numpy_fn):
    def compare(x, y, name=None):
        x, y = operands(op_name, x, y)
        if x._value.dtype.kind == "c" and op_type not in ("Equal", "NotEqual"):
            raise complex_error(op_name, x)  # no order (NumPy's is lexicographic)
        try:
            value = np.asarray(numpy_fn(x._value, y._value))
        except ValueError:
            raise broadcast_error(op_name, x, y) from None
        return emit(op_type, value, (x, y), None, name)
    compare.__name__ = compare.__qualname__ = op_name
    compare.__doc__ = f"Elementwise `{op_name}` (a bool tensor, not differentiable)."
    return compare


equal = _comparison("Equal", "equal", np.equal)
not_equal = _comparison("NotEqual", "not_equal", np.not_equal)
less = _comparison("Less", "less", np.less)
less_equal = _comparison("LessEqual", "less_equal", np.less_equal)
greater = _comparison("Greater", "greater", np.greater)
greater_equal = _comparison("GreaterEqual", "greater_equal", np.greater_equal)

for _op_type in ("Round", "Floor", "Equal", "NotEqual", "Less", "LessEqual",
                 "Greater", "GreaterEqual"):
    NotDifferentiable(_op_type)
