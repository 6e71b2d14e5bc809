"""Losses of `tf.nn`: l2_loss and the four cross-entropies with logits.

l2_loss and the two softmax cross-entropies are op types of their own in
TensorFlow (L2Loss, SoftmaxCrossEntropyWithLogits,
SparseSoftmaxCrossEntropyWithLogits), with forward, gradient and JVP rules
here. TensorFlow's rule for the logits is softmax(z) - labels, which is the
derivative only where the labels sum to 1 (as a distribution does): minitape
gives the same rule, so its gradients are TensorFlow's for any labels. The
sigmoid and weighted cross-entropies are Python compositions in TensorFlow, and
here, in TensorFlow's numerically stable forms (no exp of a large positive
number is ever taken, so logits of +-1000 give finite losses and gradients).
"""
import math

import numpy as np

from ..core.registry import batch_ndim
from .broadcasting import lift, reduce_sum, reshape, unbroadcast
from .control import stop_gradient
from .operands import (attr_int, constant_like, emit, index_dtypes, packed_operand, tensor_input)
from .declaration import declare
from .elementwise import abs, add, cast, equal, greater_equal, real_input, select
from .flat_zeros import flat_zero
from .activations import log_softmax, relu, softmax, softplus


def _labels_and_logits(op_name, labels, logits):
    if labels is None or logits is None:
        raise ValueError(f"{op_name}: both labels and logits must be given, got "
                         f"labels={labels!r} and logits={logits!r}")
    logits = real_input(op_name, logits, floating=True)  # TensorFlow refuses complex
    labels = packed_operand(op_name, labels, logits)
    return labels, logits


def _same_shape(op_name, labels, logits):
    if labels.shape != logits.shape:
        raise ValueError(f"{op_name}: logits and labels must have the same shape, got "
                         f"logits {logits.shape} and labels {labels.shape}")


# --- l2_loss -----------------------------------------------------------------------

def l2_loss(t, name=None):
    """sum(t^2) / 2, a scalar."""
    x = real_input("l2_loss", t, floating=True)  # TensorFlow refuses complex
    v = x._value
    # float16 squares and sums in float32, as TensorFlow: a sum past float16's
    # 65504 whose half fits is not inf
    w = v.astype(np.float32) if v.dtype == np.float16 else v
    return emit("L2Loss", np.asarray(np.sum(w * w) / 2, v.dtype)[()], (x,), None, name)


def _l2_loss_grad(op, grad):
    # d/dt = t (the upstream gradient is a scalar, or a batch of them)
    x = op.inputs[0]
    return reshape(grad, grad.shape + (1,) * x.ndim) * x


def _l2_loss_jvp(op, t):
    x = op.inputs[0]
    nb = t.ndim - x.ndim
    return reduce_sum(t * x, list(range(nb, t.ndim)))


declare("L2Loss", _l2_loss_grad, _l2_loss_jvp, replay=lambda xs, attrs, out_shapes: l2_loss(xs[0]),
        shape=lambda shapes, attrs, declared: (((),), 0), smooth=True)


# --- sigmoid and weighted cross-entropy (compositions, as in TensorFlow) ------------

def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """-labels log(sigmoid(z)) - (1 - labels) log(1 - sigmoid(z)), computed as
    TensorFlow does: max(z, 0) - z labels + log(1 + exp(-|z|)), with where
    (not abs), so the gradient at z = 0 is 0.5 - labels."""
    op_name = "sigmoid_cross_entropy_with_logits"
    labels, z = _labels_and_logits(op_name, labels, logits)
    _same_shape(op_name, labels, z)
    positive = greater_equal(z, 0)
    zero = np.zeros((), z.dtype)
    relu_logits = select(positive, z, zero)
    neg_abs_logits = select(positive, -z, z)
    return add(relu_logits - z * labels, softplus(neg_abs_logits), name=name)


def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None):
    """The sigmoid cross-entropy with the positive term weighted by pos_weight:
    (1 - labels) z + (1 + (pos_weight - 1) labels) (log(1 + exp(-|z|)) + max(-z, 0)),
    TensorFlow's form (with abs and relu, so at z = 0 the gradient is 1 - labels)."""
    op_name = "weighted_cross_entropy_with_logits"
    labels, z = _labels_and_logits(op_name, labels, logits)
    _same_shape(op_name, labels, z)
    pos_weight = packed_operand(op_name, pos_weight, z)
    try:
        np.broadcast_shapes(pos_weight.shape, z.shape)
    except ValueError:
        raise ValueError(f"{op_name}: pos_weight of shape {pos_weight.shape} cannot be "
                         f"broadcast against logits of shape {z.shape}") from None
    log_weight = 1 + (pos_weight - 1) * labels
    return add((1 - labels) * z, log_weight * (softplus(-abs(z)) + relu(-z)), name=name)


# --- softmax cross-entropy -----------------------------------------------------------

def _softmax_xent_value(z, labels, axis):
    """sum(labels * (logsumexp(z) - z)) along `axis`, with z shifted by its max."""
    if z.shape[axis] == 0:  # no classes: nothing to sum (np.max refuses an empty axis)
        return np.zeros(np.delete(np.broadcast_shapes(z.shape, labels.shape), axis), z.dtype)
    shifted = z - np.max(z, axis=axis, keepdims=True)
    lse = np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    return np.sum(labels * (lse - shifted), axis=axis).astype(z.dtype, copy=False)


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """-sum(labels * log_softmax(logits)) along `axis` (the classes). Labels are
    cast to the logits' dtype and broadcast against them, as in TensorFlow;
    float16 is computed in float32."""
    op_name = "softmax_cross_entropy_with_logits"
    z = real_input(op_name, logits, floating=True)  # TensorFlow refuses complex
    labels = tensor_input(op_name, labels)
    if z.ndim == 0:
        raise ValueError(f"{op_name}: logits must be at least 1-D, got a scalar")
    if not isinstance(axis, (int, np.integer)) or not -z.ndim <= axis < z.ndim:
        raise ValueError(f"{op_name}: axis {axis!r} is out of range for logits of shape "
                         f"{z.shape}")
    try:
        fits = np.broadcast_shapes(labels.shape, z.shape) == z.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{op_name}: logits and labels must be broadcastable: logits "
                         f"{z.shape}, labels {labels.shape}")
    if z.dtype == np.float16:
        loss = softmax_cross_entropy_with_logits(cast(labels, np.float32),
                                                 cast(z, np.float32), axis)
        return cast(loss, np.float16, name=name)
    labels = cast(labels, z.dtype)
    axis = int(axis) % z.ndim - z.ndim  # negative: leading batch dims never shift it
    return emit("SoftmaxCrossEntropyWithLogits",
                _softmax_xent_value(z._value, labels._value, axis), (z, labels),
                {"axis": axis}, name)


def _per_class(grad, axis):
    """The loss's upstream gradient with the class axis put back (size 1)."""
    return reshape(grad, grad.shape[:grad.ndim + axis + 1] + (1,)
                   + grad.shape[grad.ndim + axis + 1:])


def _softmax_xent_grad(op, grad):
    # d/dz = softmax(z) - labels (TensorFlow's rule: the derivative when the
    # labels sum to 1); its derivative for the labels is 0, as TensorFlow's
    # (the labels enter it stopped, plus a zero made from them).
    # d/dlabels = -log_softmax(z).
    z, labels = op.inputs
    axis = op.attrs["axis"]
    g = _per_class(grad, axis)
    gz = g * (softmax(z, axis) - stop_gradient(labels) + flat_zero(labels, z.dtype)) \
        if op.needs[0] else None
    gl = unbroadcast(g * -log_softmax(z, axis), labels.shape, batch_ndim(op, grad)) \
        if op.needs[1] else None
    return gz, gl


def _softmax_xent_jvp(op, tz, tl):
    z, labels = op.inputs
    axis = op.attrs["axis"]
    terms = []
    if tz is not None:
        terms.append(tz * (softmax(z, axis) - labels))
    if tl is not None:
        terms.append(lift(tl, labels, z.ndim) * -log_softmax(z, axis))
    return reduce_sum(terms[0] if len(terms) == 1 else terms[0] + terms[1], axis)


def _softmax_xent_shape(shapes, attrs, declared):
    logits, labels = shapes
    axis = attr_int(attrs, "axis", -len(logits), -1) + len(logits)
    if np.broadcast_shapes(labels, logits) != logits:
        raise ValueError(f"labels of shape {labels} do not broadcast to logits {logits}")
    return (logits[:axis] + logits[axis + 1:],), 4 * math.prod(logits)


declare("SoftmaxCrossEntropyWithLogits", _softmax_xent_grad, _softmax_xent_jvp,
        replay=lambda xs, attrs, out_shapes:
       softmax_cross_entropy_with_logits(xs[1], xs[0], attrs["axis"]),
        arity=2, attrs_of=lambda op: {"axis": int(op.attrs["axis"])}, shape=_softmax_xent_shape)



# --- sparse softmax cross-entropy ------------------------------------------------------

def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None):
    """-log_softmax(logits)[..., labels]: integer class labels of shape
    logits.shape[:-1], each in [0, classes)."""
    op_name = "sparse_softmax_cross_entropy_with_logits"
    z = real_input(op_name, logits, floating=True)  # TensorFlow refuses complex
    labels = tensor_input(op_name, labels)
    if z.ndim == 0:
        raise ValueError(f"{op_name}: logits cannot be a scalar")
    if labels.dtype.kind not in "iu":
        raise TypeError(f"{op_name}: labels must be int32 or int64, got dtype {labels.dtype}")
    if labels.shape != z.shape[:-1]:
        raise ValueError(f"{op_name}: labels.shape must equal logits.shape except for the "
                         f"last dimension, got labels {labels.shape} and logits {z.shape}")
    classes = z.shape[-1]
    if classes == 0:
        raise ValueError(f"{op_name}: must have at least one class, got logits shape "
                         f"{z.shape}")
    bad = (labels._value < 0) | (labels._value >= classes)
    if bad.any():
        raise ValueError(f"{op_name}: a label value of {labels._value[bad].flat[0]} is "
                         f"outside the valid range of [0, {classes})")
    if z.dtype == np.float16:
        loss = sparse_softmax_cross_entropy_with_logits(labels, cast(z, np.float32))
        return cast(loss, np.float16, name=name)
    return emit("SparseSoftmaxCrossEntropyWithLogits",
                _sparse_xent_value(z._value, labels._value), (z, labels), None, name)


def _sparse_xent_value(z, labels):
    """logsumexp(z) - z[label] per row, z shifted by its max. Only the label's
    entry is read, so a -inf logit elsewhere leaves the loss finite (TensorFlow's
    kernel; a one-hot product would make 0 * inf = NaN there)."""
    shifted = z - np.max(z, axis=-1, keepdims=True)
    lse = np.log(np.sum(np.exp(shifted), axis=-1))
    picked = np.take_along_axis(shifted, labels[..., None].astype(np.intp), -1)[..., 0]
    return np.asarray(lse - picked, z.dtype)


def _one_hot(op):
    """The labels as one-hot rows of the logits' dtype (comparisons, recorded,
    so a traced gradient recomputes them from new labels)."""
    z, labels = op.inputs
    classes = constant_like(np.arange(z.shape[-1], dtype=labels.dtype))
    return cast(equal(reshape(labels, labels.shape + (1,)), classes), z.dtype)


def _sparse_softmax_xent_grad(op, grad):
    # d/dz = softmax(z) - one_hot(labels); the integer labels get None
    return _per_class(grad, -1) * (softmax(op.inputs[0]) - _one_hot(op)), None


def _sparse_softmax_xent_jvp(op, tz, tl):
    if tz is None:
        return None
    return reduce_sum(tz * (softmax(op.inputs[0]) - _one_hot(op)), -1)


declare("SparseSoftmaxCrossEntropyWithLogits", _sparse_softmax_xent_grad, _sparse_softmax_xent_jvp,
        replay=lambda xs, attrs, out_shapes:
       sparse_softmax_cross_entropy_with_logits(xs[1], xs[0]),
        arity=2, shape=lambda shapes, attrs, declared: _sparse_xent_shape(*shapes),
        dtype=index_dtypes(1))


def _sparse_xent_shape(logits, labels):
    if not logits or not logits[-1] or labels != logits[:-1]:
        raise ValueError(f"needs logits (..., classes >= 1) and labels of their shape "
                         f"without the last axis, got {logits} and {labels}")
    return (labels,), 4 * math.prod(logits)
