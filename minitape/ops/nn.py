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
import numpy as np

from .. import arguments
from ..registry import RegisterGradient, RegisterJVP
from .control import stop_gradient
from .complex import conj
from .core import emit, float_input
from .elementwise import exp, greater, log, real_input, where
from .flat_zeros import step_rules
from .partials import unary
from .reductions import reduce_max, reduce_sum
from .shapes import identity


def sigmoid(x, name=None):
    """1 / (1 + exp(-x)), computed without overflow for large |x| (complex x:
    1 / (1 + exp(-x)) as it stands, as TensorFlow computes it)."""
    x = float_input("sigmoid", x)
    v = x._value
    if v.dtype.kind == "c":
        with np.errstate(all="ignore"):
            return emit("Sigmoid", 1 / (1 + np.exp(-v)), (x,), None, name)
    e = np.exp(-np.abs(v))
    value = np.where(v >= 0, 1 / (1 + e), e / (1 + e)).astype(v.dtype, copy=False)
    return emit("Sigmoid", value[()] if value.ndim == 0 else value, (x,), None, name)


@RegisterGradient("Sigmoid", batch_safe=True)
def _sigmoid_grad(op, grad):
    y = conj(op.outputs[0])  # complex: grad * conj(sigmoid'(x))
    return grad * (y * (1 - y))


@RegisterJVP("Sigmoid", batch_safe=True)
def _sigmoid_jvp(op, t):
    y = op.outputs[0]  # t * sigmoid'(x), not conjugated
    return t * (y * (1 - y))


# relu passes the upstream gradient where x > 0 (0 at 0, as TensorFlow's ReluGrad)
_relu_gradient, _relu_jvp = step_rules(lambda x: greater(x, 0))
_relu = unary("relu", "Relu", lambda v: np.maximum(v, 0), kinds="f", gradient=_relu_gradient,
              jvp=_relu_jvp, quiet=False, line="np.maximum({0}, 0)", smooth=True)


def relu(features, name=None):
    """max(x, 0), elementwise (TensorFlow's argument name)."""
    return _relu(features, name=name)


def elu(features, name=None):
    """x for x >= 0, exp(x) - 1 otherwise (exp(x) - 1, not expm1, as
    TensorFlow's kernel computes it: the two differ in float32 near 0)."""
    x = real_input("elu", features, floating=True)
    v = x._value
    value = np.where(v < 0, np.exp(np.minimum(v, 0)) - 1, v).astype(v.dtype, copy=False)
    return emit("Elu", value, (x,), None, name)


@RegisterGradient("Elu", batch_safe=True)
def _elu_grad(op, grad):
    # d/dx = y + 1 where y < 0, else 1, as TensorFlow's EluGrad: written with y,
    # so d2/dx2 = y + 1 for x < 0 and 0 at x = 0 (TensorFlow's EluGradGrad)
    y = op.outputs[0]
    return where(greater(0, y), grad * (y + 1), grad)


RegisterJVP("Elu", batch_safe=True)(_elu_grad)


def softplus(features, name=None):
    """log(1 + exp(x)), without overflow."""
    x = real_input("softplus", features, floating=True)
    return emit("Softplus", np.logaddexp(x._value, 0).astype(x.dtype, copy=False), (x,),
                None, name)


@RegisterGradient("Softplus", batch_safe=True)
def _softplus_grad(op, grad):
    return grad * sigmoid(op.inputs[0])


RegisterJVP("Softplus", batch_safe=True)(_softplus_grad)


def softmax(logits, axis=-1, name=None):
    x = real_input("softmax", logits, floating=True)
    # negative: leading batch dims never shift it
    axis = arguments.one_axis("softmax", axis, x.ndim) - x.ndim
    if x.size == 0:  # nothing to normalise (np.max refuses an empty axis)
        value = x._value.copy()
    else:
        e = np.exp(x._value - np.max(x._value, axis=axis, keepdims=True))
        value = e / np.sum(e, axis=axis, keepdims=True)
    return emit("Softmax", value, (x,), {"axis": axis}, name)


@RegisterGradient("Softmax", batch_safe=True)
def _softmax_grad(op, grad):
    y = op.outputs[0]
    axis = op.attrs["axis"]
    return y * (grad - reduce_sum(grad * y, axis=axis, keepdims=True))


RegisterJVP("Softmax", batch_safe=True)(_softmax_grad)


def log_softmax(logits, axis=-1, name=None):
    x = real_input("log_softmax", logits, floating=True)
    axis = arguments.one_axis("log_softmax", axis, x.ndim)  # checked before any op runs
    if x.size == 0:  # an empty result; the steps below would take log(0)
        return identity(x, name=name)
    shifted = x - stop_gradient(reduce_max(x, axis=axis, keepdims=True))
    return shifted - log(reduce_sum(exp(shifted), axis=axis, keepdims=True))
