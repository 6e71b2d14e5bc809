"""Division, rounding and sums as TensorFlow defines them: truediv, floordiv,
floormod (the `//` and `%` operators), divide_no_nan, multiply_no_nan,
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

from ..tensor import Tensor
from .complex import conj
from .operands import broadcast_error, elementwise_shape, emit, operands, tensor_input
from .declaration import declare
from .elementwise import cast, divide
from .partials import binary, binary_rules, chain, check_kind, shares, unary
from .skipping import needs

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
