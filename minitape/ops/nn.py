"""Neural-network activations and softmax, with their gradient rules.

Each rule reuses the op's output where the math allows (sigmoid' = y(1-y),
tanh' = 1-y^2, elu' = y+1 for x<0): the output is on the tape anyway.

The activations are elementwise, so their Jacobians are diagonal and each JVP
rule is the gradient rule with the tangent in the place of the upstream
gradient. Softmax's Jacobian, diag(y) - y y^T, is symmetric, so for softmax too
the JVP is the same formula as the gradient. Complex inputs: sigmoid (and so
silu) takes them, with the conjugate in its gradient (TensorFlow's convention,
complex.py); the others refuse them, as TensorFlow does.
"""
import math

import numpy as np

from .. import arguments
from .control import stop_gradient
from .complex import conj
from .operands import elementwise_shape, emit, float_input
from .declaration import attributes, declare
from .elementwise import exp, greater, log, real_input, select
from .flat_zeros import step_rules
from .partials import unary
from .reductions import reduce_max, reduce_sum
from .shapes import identity


def _sigmoid(v):
    """1 / (1 + exp(-v)) of a NumPy value, without overflow for large |v|
    (complex v: as it stands, as TensorFlow computes it)."""
    if v.dtype.kind == "c":
        with np.errstate(all="ignore"):
            return 1 / (1 + np.exp(-v))
    e = np.exp(-np.abs(v))
    value = np.where(v >= 0, 1 / (1 + e), e / (1 + e)).astype(v.dtype, copy=False)
    return value[()] if value.ndim == 0 else value


def sigmoid(x, name=None):
    """1 / (1 + exp(-x)), computed without overflow for large |x|."""
    x = float_input("sigmoid", x)
    return emit("Sigmoid", _sigmoid(x._value), (x,), None, name)


def _sigmoid_grad(op, grad):
    y = conj(op.outputs[0])  # complex: grad * conj(sigmoid'(x))
    return grad * (y * (1 - y))


def _sigmoid_jvp(op, t):
    y = op.outputs[0]  # t * sigmoid'(x), not conjugated
    return t * (y * (1 - y))


def _activation(op_type, public, gradient, jvp, helper):
    """Declare an elementwise activation whose compiled line calls `helper`,
    the NumPy function its forward runs."""
    word = public.__name__
    declare(op_type, gradient, jvp, replay=lambda xs, attrs, out_shapes: public(xs[0]),
            shape=elementwise_shape, line=f"{word}({{0}})", helpers={word: helper},
            rank_free=True, smooth=True)


_activation("Sigmoid", sigmoid, _sigmoid_grad, _sigmoid_jvp, _sigmoid)


# relu passes the upstream gradient where x > 0 (0 at 0, as TensorFlow's ReluGrad)
_relu_gradient, _relu_jvp = step_rules(lambda x: greater(x, 0))
_relu = unary("relu", "Relu", lambda v: np.maximum(v, 0), kinds="f", gradient=_relu_gradient,
              jvp=_relu_jvp, quiet=False, line="np.maximum({0}, 0)", smooth=True)


def relu(features, name=None):
    """max(x, 0), elementwise (TensorFlow's argument name)."""
    return _relu(features, name=name)


def _elu(v):
    """x for x >= 0, exp(x) - 1 otherwise (exp(x) - 1, not expm1, as
    TensorFlow's kernel computes it: the two differ in float32 near 0)."""
    return np.where(v < 0, np.exp(np.minimum(v, 0)) - 1, v).astype(v.dtype, copy=False)


def elu(features, name=None):
    x = real_input("elu", features, floating=True)
    return emit("Elu", _elu(x._value), (x,), None, name)


elu.__doc__ = _elu.__doc__


def _elu_grad(op, grad):
    # d/dx = y + 1 where y < 0, else 1, as TensorFlow's EluGrad: written with y,
    # so d2/dx2 = y + 1 for x < 0 and 0 at x = 0 (TensorFlow's EluGradGrad)
    y = op.outputs[0]
    return select(greater(0, y), grad * (y + 1), grad)


_activation("Elu", elu, _elu_grad, _elu_grad, _elu)


def _softplus(v):
    """log(1 + exp(x)), without overflow."""
    return np.logaddexp(v, 0).astype(v.dtype, copy=False)


def softplus(features, name=None):
    x = real_input("softplus", features, floating=True)
    return emit("Softplus", _softplus(x._value), (x,), None, name)


softplus.__doc__ = _softplus.__doc__


def _softplus_grad(op, grad):
    return grad * sigmoid(op.inputs[0])


_activation("Softplus", softplus, _softplus_grad, _softplus_grad, _softplus)


def _softmax(v, axis):
    """exp(v) / sum(exp(v)) along `axis`, shifted by the max (no overflow)."""
    if v.size == 0:  # nothing to normalise (np.max refuses an empty axis)
        return v.copy()
    e = np.exp(v - np.max(v, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def softmax(logits, axis=-1, name=None):
    x = real_input("softmax", logits, floating=True)
    # negative: leading batch dims never shift it
    axis = arguments.one_axis("softmax", axis, x.ndim) - x.ndim
    return emit("Softmax", _softmax(x._value, axis), (x,), {"axis": axis}, name)


def _softmax_grad(op, grad):
    y = op.outputs[0]
    axis = op.attrs["axis"]
    return y * (grad - reduce_sum(grad * y, axis=axis, keepdims=True))


def _softmax_shape(shapes, attrs, declared):
    a = shapes[0]
    if not -len(a) <= attrs["axis"] < len(a):
        raise ValueError(f"axis {attrs['axis']} is out of range for rank {len(a)}")
    return (tuple(a),), 4 * math.prod(a)


declare("Softmax", _softmax_grad, _softmax_grad,  # diag(y) - y yᵀ is symmetric
        replay=lambda xs, attrs, out_shapes: softmax(xs[0], attrs["axis"]),
        attrs_of=attributes("axis"), shape=_softmax_shape,
        line="softmax({0}, {axis})", helpers={"softmax": _softmax},
        line_attrs=lambda attrs, out_shapes, in_dtypes: {"axis": attrs["axis"]},
        smooth=True, attr_kinds={"axis": "axis"})


def log_softmax(logits, axis=-1, name=None):
    x = real_input("log_softmax", logits, floating=True)
    axis = arguments.one_axis("log_softmax", axis, x.ndim)  # checked before any op runs
    if x.size == 0:  # an empty result; the steps below would take log(0)
        return identity(x, name=name)
    shifted = x - stop_gradient(reduce_max(x, axis=axis, keepdims=True))
    return shifted - log(reduce_sum(exp(shifted), axis=axis, keepdims=True))
