"""The activations of `tf.nn` and softmax, with their gradient rules.

Each rule reuses the op's output where the math allows (sigmoid' = y(1-y),
tanh' = 1-y^2, elu' = y+1 for x<0): the output is on the tape anyway.

The activations are elementwise, so their Jacobians are diagonal and each JVP
rule is the gradient rule with the tangent in the place of the upstream
gradient. Softmax's Jacobian, diag(y) - y y^T, is symmetric, so for softmax too
the JVP is the same formula as the gradient. Complex inputs: sigmoid (and so
silu) takes them, with the conjugate in its gradient (TensorFlow's convention,
complex.py); the others refuse them, as TensorFlow does.

relu6, leaky_relu and selu are op types of their own in TensorFlow (Relu6,
LeakyRelu, Selu): each has its forward, gradient rule and JVP rule here, side
by side. (softsign, also in tf.nn, is tf.math.softsign: the elementwise
family's, `ops/exp_log.py`.) gelu and silu are Python compositions in TensorFlow,
and here too, so their derivatives of every order come from the ops they are
made of. Every rule is elementwise (a diagonal Jacobian), so its JVP rule is
its gradient rule with the tangent in the place of the upstream gradient.

At a kink TensorFlow picks one side: relu6 passes the gradient only for
0 < x < 6 (0 at both kinks), leaky_relu takes alpha at 0, selu takes the
positive side at 0. The piecewise-linear ones (relu6, leaky_relu) have a zero
second derivative in TensorFlow (its Relu6GradGrad and LeakyReluGradGrad rules
return zeros for x, not None), which `flat_zeros.flat_zero` reproduces.
"""
import math

import numpy as np

from .. import arguments
from .control import stop_gradient
from .complex import conj
from .operands import elementwise_shape, emit, float_input, number, tensor_input, with_numbers
from .declaration import attributes, declare
from .elementwise import (cast, exp, greater, less, log, multiply, real_input, select, square,
                          tanh)
from .flat_zeros import flat_zero, step_rules
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


# --- relu6 ----------------------------------------------------------------------

def relu6(features, name=None):
    """min(max(x, 0), 6): relu capped at 6 (integers too, as in TensorFlow)."""
    x = tensor_input("relu6", features)
    if x.dtype.kind not in "iuf":
        raise TypeError(f"relu6: expected a float or integer tensor, got dtype {x.dtype}")
    return emit("Relu6", np.clip(x._value, 0, 6), (x,), None, name)


def _relu6_grad(op, grad):
    # d/dx = 1 for 0 < x < 6, else 0 (also at both kinks, as TensorFlow's Relu6Grad)
    x = op.inputs[0]
    zero = flat_zero(x, grad.dtype)
    return select(greater(x, 0), select(less(x, 6), grad, zero), zero)


declare("Relu6", _relu6_grad, _relu6_grad, replay=lambda xs, attrs, out_shapes: relu6(xs[0]),
        shape=elementwise_shape, smooth=True)


# --- leaky_relu -----------------------------------------------------------------

def leaky_relu(features, alpha=0.2, name=None):
    """x for x > 0, alpha * x otherwise. Integers are cast to float32, and
    alpha is a float32 attribute, as in TensorFlow (so alpha=0.2 on a float64
    tensor is 0.2 rounded to float32: -1 gives -0.20000000298...)."""
    x = tensor_input("leaky_relu", features)
    if x.dtype.kind not in "iuf":
        raise TypeError(f"leaky_relu: expected a float or integer tensor, got dtype {x.dtype}")
    if isinstance(alpha, np.ndarray) and alpha.ndim == 0:
        alpha = alpha.item()
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating, np.integer)):
        raise TypeError(f"leaky_relu: alpha must be a Python number, got {alpha!r}")
    alpha = float(np.float32(alpha))
    if x.dtype.kind in "iu":
        x = cast(x, np.float32)
    v = x._value
    value = np.where(v > 0, v, v * v.dtype.type(alpha))
    return emit("LeakyRelu", value, (x,), {"alpha": alpha}, name)


def _leaky_relu_grad(op, grad):
    # d/dx = 1 for x > 0, alpha for x <= 0 (alpha at the kink, as TensorFlow)
    x = op.inputs[0]
    alpha = number(grad.dtype, op.attrs["alpha"])
    return select(greater(x, 0), grad, grad * alpha + flat_zero(x, grad.dtype))


declare("LeakyRelu", _leaky_relu_grad, _leaky_relu_grad,
        replay=lambda xs, attrs, out_shapes: leaky_relu(xs[0], attrs["alpha"]),
        attrs_of=lambda op: {"alpha": op.attrs["alpha"]},
        shape=with_numbers(elementwise_shape, "alpha"), smooth=True)


# --- selu -------------------------------------------------------------------------

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def selu(features, name=None):
    """scale * x for x >= 0, scale * alpha * (exp(x) - 1) otherwise
    (Klambauer et al. 2017). exp(x) - 1, not expm1, as TensorFlow's kernel."""
    x = real_input("selu", features, floating=True)  # TensorFlow refuses complex
    v = x._value
    t = v.dtype.type
    negative = t(SELU_SCALE * SELU_ALPHA) * (np.exp(np.minimum(v, 0)) - t(1))
    value = np.where(v < 0, negative, v * t(SELU_SCALE)).astype(v.dtype, copy=False)
    return emit("Selu", value, (x,), None, name)


def _selu_grad(op, grad):
    # d/dx = y + scale * alpha where y < 0, else scale (at 0 too, as TensorFlow's
    # SeluGrad). Written with y, so d2/dx2 = y + scale * alpha for x < 0, 0 at 0.
    y = op.outputs[0]
    dtype = grad.dtype
    return select(less(y, 0), grad * (y + number(dtype, SELU_SCALE * SELU_ALPHA)),
                  grad * number(dtype, SELU_SCALE))


declare("Selu", _selu_grad, _selu_grad, replay=lambda xs, attrs, out_shapes: selu(xs[0]),
        shape=elementwise_shape, smooth=True)


# --- gelu -------------------------------------------------------------------------
# TensorFlow 2.21 computes gelu as 0.5 x erfc(-x c) with c = 1/sqrt(2) made by
# casting a float32 constant to x's dtype, so in float64 c carries float32's
# rounding (gelu''(0) = 2c/sqrt(pi) = 0.79788454..., not 0.79788456...): minitape
# uses the same c. 0.5 erfc(-c x) is an op of its own here (`_half_erfc`, op type
# Ndtr: it is the normal CDF Phi(x) for c = 1/sqrt 2), whose derivative is
# (c / sqrt(pi)) exp(-(c x)^2).

_GELU_C = float(np.float32(0.7071067811865476))
_erfc = np.frompyfunc(math.erfc, 1, 1)


def _half_erfc(x, scale):
    """0.5 erfc(-scale x): -scale x in x's dtype, erfc in float64, rounded back."""
    v = x._value
    arg = (-v * v.dtype.type(scale)).astype(np.float64)
    value = np.asarray(0.5 * _erfc(arg).astype(np.float64), dtype=v.dtype)
    return emit("Ndtr", value, (x,), {"scale": scale}, None)


def _half_erfc_grad(op, grad):
    # d/dx 0.5 erfc(-c x) = (c / sqrt(pi)) exp(-(c x)^2): finite everywhere, 0 at +-inf
    x, c = op.inputs[0], op.attrs["scale"]
    dtype = grad.dtype
    return grad * (exp(-square(x * number(dtype, c))) * number(dtype, c / math.sqrt(math.pi)))


declare("Ndtr", _half_erfc_grad, _half_erfc_grad,
        replay=lambda xs, attrs, out_shapes: _half_erfc(float_input("gelu", xs[0]),
                                                        attrs["scale"]),
        attrs_of=lambda op: {"scale": float(op.attrs["scale"])},
        shape=with_numbers(elementwise_shape, "scale"))


def gelu(features, approximate=False, name=None):
    """Gaussian error linear unit (Hendrycks and Gimpel 2016): x Phi(x), as
    0.5 x erfc(-x / sqrt 2), or with `approximate=True` TensorFlow's tanh form
    0.5 x (1 + tanh(0.7978845608028654 (x + 0.044715 x^3)))."""
    x = tensor_input("gelu", features)
    if x.dtype.kind != "f":
        raise ValueError(f"gelu: features must be a floating point tensor, got dtype {x.dtype}")
    dtype = x.dtype
    if approximate:
        # TensorFlow casts a float32 0.044715 to x's dtype (so float64 gets its rounding)
        coeff = number(dtype, float(np.float32(0.044715)))
        inner = (x + coeff * (x * x * x)) * number(dtype, 0.7978845608028654)
        return multiply(number(dtype, 0.5) * x, 1 + tanh(inner), name=name)
    return multiply(x, _half_erfc(x, _GELU_C), name=name)


# --- silu (swish) -----------------------------------------------------------------

def silu(features, beta=1.0):
    """x * sigmoid(beta * x) (Ramachandran et al. 2017); differentiable in beta
    too (a number or a tensor, cast to x's dtype). TensorFlow's signature has
    no `name`."""
    x = float_input("silu", features)
    if isinstance(beta, (int, float)) and not isinstance(beta, bool):
        if beta == 1:
            return x * sigmoid(x)
        beta = number(x.dtype, beta)
    else:
        beta = tensor_input("silu", beta)
        if beta.dtype.kind not in "iuf":
            raise TypeError(f"silu: beta must be a real number or tensor, got dtype {beta.dtype}")
        try:
            np.broadcast_shapes(x.shape, beta.shape)
        except ValueError:
            raise ValueError(f"silu: beta of shape {beta.shape} cannot be broadcast against "
                             f"features of shape {x.shape}") from None
        beta = cast(beta, x.dtype)
    return x * sigmoid(beta * x)


swish = silu
