"""Elementwise math: + - * / **, the functions every course meets first, and
the comparisons, `where` and `cast` the rules are made of.

Each op is one row: its forward (the NumPy function) and its partial
derivatives in minitape ops, from which `partials.py` makes its rules and its
declaration (the policies every rule shares, complex conjugates, masks,
skipped inputs, broadcasting, are applied there, once). Multiply's row says
d(xy)/dx = y and d(xy)/dy = x; sin's, d sin(x)/dx = cos(x). A row that says
`masked` drops a zero upstream gradient's products with an infinite partial
(`zero_times_inf.py`: TensorFlow's sqrt does so in reverse mode; multiply,
divide and pow are minitape's, a row of docs/differences.md).
`line` is the op's line in a compiled program. Ops whose rule is not a
partial derivative (abs of a complex number, maximum, where, cast) give
their rules in their row.

Below them, division, rounding and sums as TensorFlow defines them: truediv,
floordiv, floormod (the `//` and `%` operators), divide_no_nan, multiply_no_nan,
squared_difference, add_n and ceil.

TensorFlow's dtype rules: truediv (and divide_no_nan) of integers divides in
floating point (int8 and int16 in float32, int32 and int64 in float64), while
floordiv and floormod of integers stay integers, and an integer division by
zero is an error (for floats it gives inf or NaN). floordiv and ceil have no
gradient (None): they are flat wherever they have a slope.
"""
import functools
import operator

import numpy as np

from ..core.tensor import Tensor
from .complex import conj
from .operands import (broadcast_error, cast, elementwise_shape, emit, operands,  # noqa: F401
                       real_input, tensor_input)
from .declaration import declare
from .partials import binary, binary_rules, chain, check_kind, over, shares, unary
from .skipping import needs


# --- + - * / ** ----------------------------------------------------------------------
# (x, y, z): the inputs and the output. A partial of 1 passes the upstream gradient on;
# `chain` writes the product with the upstream gradient g in TensorFlow's order.

add = binary("add", "AddV2", operator.add,
             partials=(lambda x, y, z: 1, lambda x, y, z: 1),
             doc="x + y, elementwise with broadcasting.",
             quiet=False, line="{0} + {1}", word="add", smooth=True,
             simplify={"one_number": True, "sum": True})

subtract = binary("subtract", "Sub", operator.sub,
                  partials=(lambda x, y, z: 1, lambda x, y, z: -1),
                  doc="x - y, elementwise.",
                  quiet=False, line="{0} - {1}", word="sub", smooth=True,
                  simplify={"one_number": True})

multiply = binary("multiply", "Mul", operator.mul,
                  partials=(lambda x, y, z: y, lambda x, y, z: x),
                  doc="x * y, elementwise.", masked="both",
                  quiet=False, line="{0} * {1}", word="mul", smooth=True,
                  simplify={"one_number": True, "unit": {0: 1, 1: 0}})

divide = binary("divide", "RealDiv", operator.truediv,
                partials=(lambda x, y, z: over(y),                  # 1 / y, as a division
                          chain(lambda g, x, y, z: -(g / y) * z)),   # -x / y**2 = -(1 / y) z
                doc="x / y, elementwise.", masked="both",
                quiet=False, line="{0} / {1}", word="div",
                simplify={"one_number": True})


def power(x, y):
    """x ** y for NumPy values, as C's pow and TensorFlow compute it. NumPy
    takes `x ** 0.5` (a scalar exponent) as sqrt(x), which is NaN at x = -inf,
    where pow gives inf; an array of exponents gets pow. So -inf ** 0.5 is inf
    here whatever the exponent's shape, eagerly and in compiled programs."""
    return np.where((x == -np.inf) & (y == 0.5), -x, x ** y)


def _power_line(attrs, in_shapes, known):
    """NumPy's ** is C's pow but for an exponent of 0.5 (sqrt): a known
    exponent with no 0.5 in it gets ** itself."""
    if known[1] is not None and not np.any(np.asarray(known[1]) == 0.5):
        return "{0} ** {1}"
    return "np.where(({0} == -np.inf) & ({1} == 0.5), -{0}, {0} ** {1})"


def _log_base(x):
    """log(x) for d(x**y)/dy = x**y * log(x), taken as 0 where x <= 0 (as
    TensorFlow does); for complex x, 0 only at x = 0 (log is defined elsewhere)."""
    defined = not_equal(x, 0) if x.dtype.kind == "c" else greater(x, 0)
    return select(defined, log(select(defined, x, 1)), 0)


pow = binary("pow", "Pow", power,
             partials=(chain(lambda g, x, y, z: g * y * pow(x, y - 1)),   # y x**(y-1)
                       chain(lambda g, x, y, z: g * z * _log_base(x))),   # x**y log(x)
             doc="x ** y, elementwise.", masked="both",
             quiet=False, line=_power_line,
             simplify={"unit": {1: 0}, "zero_power": True, "arrays": True})

# --- functions of one tensor ---------------------------------------------------------
# (x, z): the input and the output. Some derivatives read better in z: exp' = z.

negative = unary("negative", "Neg", operator.neg, lambda x, z: -1, "-x.",
                 kinds="biufc", quiet=False, line="-{0}", word="neg", smooth=True)
square = unary("square", "Square", np.square, lambda x, z: 2 * x, "x * x.",
               kinds="biufc", quiet=False, line="np.square({0})", smooth=True)
sqrt = unary("sqrt", "Sqrt", np.sqrt,
             lambda x, z: over(2 * z),   # inf at 0, NaN below: TensorFlow's SqrtGrad gives 0
             "Square root.",             # for a zero upstream gradient; its JVP does not
             masked="gradient", quiet=False, line="np.sqrt({0})")
exp = unary("exp", "Exp", np.exp, lambda x, z: z, "e ** x.",
            quiet=False, line="np.exp({0})", smooth=True)
log = unary("log", "Log", np.log, lambda x, z: over(x), "Natural logarithm.",
            quiet=False, line="np.log({0})")
sin = unary("sin", "Sin", np.sin, lambda x, z: cos(x), "Sine.",
            quiet=False, line="np.sin({0})", smooth=True)
cos = unary("cos", "Cos", np.cos, chain(lambda g, x, z: -g * sin(x)), "Cosine.",
            quiet=False, line="np.cos({0})", smooth=True)
tanh = unary("tanh", "Tanh", np.tanh, lambda x, z: 1 - z * z, "Hyperbolic tangent.",
             quiet=False, line="np.tanh({0})", smooth=True)


def _abs_gradient(op, grad):
    """grad * sign(x); for complex x, sign(x) = x / |x| (0 at 0) and the real
    upstream gradient becomes complex: TensorFlow's convention, the conjugate
    of d|x|/dx = conj(x) / (2|x|), doubled."""
    x = op.inputs[0]
    if x.dtype.kind == "c":
        grad = cast(grad, x.dtype)
    return grad * sign(x)


def _abs_jvp(op, t):
    """t * sign(x); for complex x the real Re(conj(sign(x)) t) = Re(s)Re(t) +
    Im(s)Im(t), with Re as a cast to the real dtype and Im(z) = Re(-i z)."""
    x = op.inputs[0]
    if x.dtype.kind != "c":
        return t * sign(x)
    s, real = sign(x), op.outputs[0].dtype
    return cast(s, real) * cast(t, real) + cast(s * -1j, real) * cast(t * -1j, real)


abs = unary("abs", "Abs", np.abs, doc="|x|.", kinds="biufc", gradient=_abs_gradient,
            jvp=_abs_jvp, quiet=False, line="np.abs({0})", smooth=True)


def _sign_gradient(op, grad):
    """(Sign ops are of real inputs: complex sign is made of other ops.)
    Zeros, not None, as in TensorFlow: sign is flat wherever it has a slope,
    so |x|'' = d(grad * sign(x))/dx comes out as 0 rather than unconnected.
    The zeros are a constant (TensorFlow's ZerosLike is not differentiable)."""
    return Tensor(np.zeros(grad.shape, grad.dtype))


def _sign_jvp(op, t):
    """None, as TensorFlow's forward mode gives: sign's output does not move."""
    return None


_sign = unary("sign", "Sign", np.sign, doc="-1, 0 or 1.", kinds="biufc",
              gradient=_sign_gradient, jvp=_sign_jvp, quiet=False, line="np.sign({0})",
              smooth=True)


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
    return select(at_zero, np.zeros((), x.dtype),
                  x / select(at_zero, np.ones((), x.dtype), size), name=name)


# Not differentiable: recorded like any op (so traces replay them), but their
# inputs get no gradient and no tangent.
_round = unary("round", "Round", np.round, doc="Round half to even (not differentiable).",
               kinds="f", differentiable=False, quiet=False, line="np.round({0})")


def round(x, name=None):
    """Round half to even (not differentiable). An integer tensor is returned
    as it is, as TensorFlow's tf.round does (its dtype kept)."""
    if type(x) is not Tensor:
        x = tensor_input("round", x)
    if x._value.dtype.kind in "iu":
        return x
    return _round(x, name)


floor = unary("floor", "Floor", np.floor, doc="Round down (not differentiable).", kinds="f",
              differentiable=False, quiet=False, line="np.floor({0})")

# --- maximum and minimum: the gradient goes to the input picked (x on ties) ----------
# The masks (`x >= y`) are comparison ops rather than NumPy, so a gradient traced
# into an mt.function recomputes them at every call.


def _picked(x_wins):
    """The rules of an op that picks x where `x_wins(x, y)`, else y."""
    def take_x(op, grad):
        return select(x_wins(*op.inputs), grad, np.zeros((), grad.dtype))

    def take_y(op, grad):
        return select(x_wins(*op.inputs), np.zeros((), grad.dtype), grad)

    def tangent(op, tx, ty):
        zero = np.zeros((), op.outputs[0].dtype)
        return select(x_wins(*op.inputs), zero if tx is None else tx, zero if ty is None else ty)
    return {"terms": (take_x, take_y), "tangent": tangent}


maximum = binary("maximum", "Maximum", np.maximum, doc="The larger of x and y, elementwise.",
                 kinds="biuf", quiet=False, line="np.maximum({0}, {1})", smooth=True,
                 **_picked(lambda x, y: greater_equal(x, y)))
minimum = binary("minimum", "Minimum", np.minimum, doc="The smaller of x and y, elementwise.",
                 kinds="biuf", quiet=False, line="np.minimum({0}, {1})", smooth=True,
                 **_picked(lambda x, y: less_equal(x, y)))

# --- comparisons: bool tensors, not differentiable -----------------------------------


def _compare(name, op_type, numpy_fn, line, kinds="biuf"):
    return binary(name, op_type, lambda x, y: np.asarray(numpy_fn(x, y)),
                  doc=f"Elementwise `{name}` (a bool tensor, not differentiable).",
                  kinds=kinds, differentiable=False, quiet=False, line=line)


equal = _compare("equal", "Equal", np.equal, "{0} == {1}", kinds="biufc")
not_equal = _compare("not_equal", "NotEqual", np.not_equal, "{0} != {1}", kinds="biufc")
less = _compare("less", "Less", np.less, "{0} < {1}")   # (no order for complex numbers:
less_equal = _compare("less_equal", "LessEqual", np.less_equal, "{0} <= {1}")  # NumPy's is
greater = _compare("greater", "Greater", np.greater, "{0} > {1}")             # lexicographic)
greater_equal = _compare("greater_equal", "GreaterEqual", np.greater_equal, "{0} >= {1}")

# --- where: x where the condition holds, else y --------------------------------------


def select(condition, x, y, name=None):
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


def _where_tangent(op, tc, tx, ty):
    zero = np.zeros((), op.outputs[0].dtype)
    return select(op.inputs[0], zero if tx is None else tx, zero if ty is None else ty)


declare("SelectV2", *shares(
            terms=(None,
                   lambda op, g: select(op.inputs[0], g, np.zeros((), g.dtype)),
                   lambda op, g: select(op.inputs[0], np.zeros((), g.dtype), g)),
            tangent=_where_tangent),
        replay=lambda xs, attrs, out_shapes: select(*xs), arity=3, shape=elementwise_shape,
        line="np.where({0}, {1}, {2})", word="where", smooth=True, rank_free=True,
        simplify={"select": True})


# The float dtype TensorFlow's truediv divides integers of each size in.
_TRUEDIV_FLOAT = {1: np.float32, 2: np.float32, 4: np.float64, 8: np.float64}


def _as_floats(op_name, x, y):
    """x and y of one dtype, integers cast to TensorFlow's truediv float dtype."""
    x, y = operands(op_name, x, y)
    check_kind(op_name, x, "iufc")
    if x.dtype.kind in "iu":
        dtype = _TRUEDIV_FLOAT[x.dtype.itemsize]
        x, y = cast(x, dtype), cast(y, dtype)
    return x, y


def truediv(x, y, name=None):
    """x / y; integers are divided in floating point (int32 -> float64)."""
    return divide(*_as_floats("truediv", x, y), name=name)


def _integer_division(op_type, op_name, numpy_int, numpy_float, doc):
    def op(x, y, name=None):
        x, y = operands(op_name, x, y)
        check_kind(op_name, x, "iuf")
        if x.dtype.kind in "iu" and not np.all(y._value):
            raise ValueError(f"{op_name}: integer division by zero (the divisor of shape "
                             f"{y.shape} holds a 0)")
        with np.errstate(all="ignore"):
            try:
                value = np.asarray((numpy_int if x.dtype.kind in "iu" else numpy_float)(
                    x._value, y._value))
            except ValueError:
                raise broadcast_error(op_name, x, y) from None
        return emit(op_type, value, (x, y), None, name)
    op.__name__ = op.__qualname__ = op_name
    op.__doc__ = doc
    return op


def _floor_mod(x, y):
    """TensorFlow's float floormod: fmod moved into the sign of y (fmod(0, -3) = 0.0)."""
    r = np.fmod(x, y)
    return np.where((r != 0) & ((y < 0) != (r < 0)), r + y, r)


floordiv = _integer_division(
    "FloorDiv", "floordiv", np.floor_divide, lambda x, y: np.floor(x / y),
    "floor(x / y): integers stay integers; for floats floor of the quotient, as "
    "TensorFlow computes it (floordiv(1., 0.1) is 10, not Python's 9). No gradient.")
floormod = _integer_division(
    "FloorMod", "floormod", np.mod, _floor_mod,
    "The remainder of floordiv, with the sign of y: x - floor(x / y) * y.")
mod = floormod
declare("FloorDiv", differentiable=False,  # TensorFlow's gradient is (None, None): a staircase
        replay=lambda xs, attrs, out_shapes: floordiv(xs[0], xs[1]), arity=2,
        shape=elementwise_shape, rank_free=True)
# x mod y = x - floor(x / y) y: d/dx = 1, d/dy = -floor(x / y) (between the jumps)
declare("FloorMod", *binary_rules((lambda x, y, z: 1,
                                   chain(lambda g, x, y, z: -g * floordiv(x, y)))),
        replay=lambda xs, attrs, out_shapes: floormod(xs[0], xs[1]), arity=2,
        shape=elementwise_shape, rank_free=True)


def divide_no_nan(x, y, name=None):
    """x / y, and 0 where y is 0 (even 0 / 0); integers divided as in truediv."""
    x, y = _as_floats("divide_no_nan", x, y)
    with np.errstate(all="ignore"):
        try:
            value = np.asarray(np.where(y._value == 0, np.zeros((), x.dtype),
                                        x._value / y._value))
        except ValueError:
            raise broadcast_error("divide_no_nan", x, y) from None
    return emit("DivNoNan", value, (x, y), None, name)


def _over_y(x, y, t):
    """t times d/dx = 1 / y, 0 where y is 0 (TensorFlow's rule)."""
    return divide_no_nan(t, y)


def _minus_x_over_y_squared(x, y, t):
    """t times d/dy = -x / y**2, 0 where y is 0."""
    return t * divide_no_nan(divide_no_nan(-x, y), y)


# (TensorFlow's rule, and not a product with the upstream gradient: an inf upstream
# where y is 0 gives 0; complex inputs are conjugated in reverse mode)
declare("DivNoNan", *shares(
            terms=(lambda op, g: _over_y(*map(conj, op.inputs), g),
                   lambda op, g: _minus_x_over_y_squared(*map(conj, op.inputs), g)),
            tangent_terms=(lambda op, t: _over_y(*op.inputs, t),
                           lambda op, t: _minus_x_over_y_squared(*op.inputs, t))),
        replay=lambda xs, attrs, out_shapes: divide_no_nan(xs[0], xs[1]), arity=2,
        shape=elementwise_shape, rank_free=True)


# TensorFlow's rule: d/dx = y (0 where y is 0), d/dy = x, 0 where the upstream
# gradient is 0 (whatever x is); as in TensorFlow, no conjugate for complex inputs
multiply_no_nan = binary(
    "multiply_no_nan", "MulNoNan",
    lambda x, y: np.where(y == 0, np.zeros((), np.result_type(x, y)), x * y),
    doc="x * y, and 0 where y is 0 (even where x is inf or NaN).", kinds="fc",
    terms=(lambda op, g: multiply_no_nan(g, op.inputs[1]),
           lambda op, g: multiply_no_nan(op.inputs[0], g)),
    tangent_terms=(lambda op, t: multiply_no_nan(t, op.inputs[1]),
                   lambda op, t: multiply_no_nan(op.inputs[0], t)))


def _squared_difference(x, y):
    d = x - y
    return d * np.conj(d) if d.dtype.kind == "c" else d * d


# d/dx = 2 (x - y), d/dy = -2 (x - y): TensorFlow's rule (no conjugate for complex)
squared_difference = binary(
    "squared_difference", "SquaredDifference", _squared_difference,
    partials=(lambda x, y, z: 2 * (x - y), lambda x, y, z: -2 * (x - y)),
    doc="(x - y)**2 elementwise; |x - y|**2 for complex inputs (as in TensorFlow).",
    kinds="iufc", conjugate=False, smooth=True)


def add_n(inputs, name=None):
    """The sum of a list of tensors of one shape and dtype (no broadcasting, as in
    TensorFlow); a tensor is taken as the list of its rows."""
    if isinstance(inputs, Tensor):
        inputs = [inputs[i] for i in range(inputs.shape[0])] if inputs.ndim else [inputs]
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("add_n: expected a non-empty list of tensors of one shape and "
                         f"dtype, got {inputs!r}")
    xs = [tensor_input("add_n", x) for x in inputs]  # a list entry holding tensors: packed
    first = xs[0]
    check_kind("add_n", first, "iufc")
    for x in xs[1:]:
        if x.dtype != first.dtype:
            raise TypeError(f"add_n: the inputs have different dtypes, {first.dtype} and "
                            f"{x.dtype}")
        if x.shape != first.shape:
            raise ValueError(f"add_n: the inputs have different shapes, {first.shape} and "
                             f"{x.shape} (add_n does not broadcast)")
    value = functools.reduce(operator.add, (x._value for x in xs))
    return emit("AddN", np.asarray(value, first.dtype), tuple(xs), None, name)


def _add_n_gradient(op, grad):
    wanted = needs(op)  # d(sum)/dx_i = 1
    return tuple(grad if wanted[i] else None for i in range(len(op.inputs)))


def _add_n_jvp(op, *tangents):
    terms = [t for t in tangents if t is not None]  # all of the output's shape
    return terms[0] if len(terms) == 1 else add_n(terms)


def _add_n_shape(shapes, attrs, declared):
    if any(s != shapes[0] for s in shapes):
        raise ValueError(f"add_n adds tensors of one shape, got {shapes}")
    return (shapes[0],), 0


declare("AddN", _add_n_gradient, _add_n_jvp,
        replay=lambda xs, attrs, out_shapes: add_n(list(xs)), arity=None, shape=_add_n_shape,
        smooth=True)

ceil = unary("ceil", "Ceil", np.ceil,
             doc="Round up. No gradient (None), as in TensorFlow: flat wherever it has a slope.",
             kinds="f", differentiable=False, quiet=False)
