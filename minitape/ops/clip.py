"""Clipping, built from differentiable ops (so no rules of its own)."""
from .core import float_input, tensor_input
from .elementwise import maximum, minimum, sqrt, where
from .reductions import reduce_sum


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Elementwise min(max(t, lo), hi): the gradient passes where t is inside."""
    t = tensor_input("clip_by_value", t)
    return minimum(maximum(t, clip_value_min), clip_value_max, name=name)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """Rescale `t` so that its L2 norm (over `axes`) is at most `clip_norm`:
    t * clip_norm / max(norm(t), clip_norm).

    Like TensorFlow, the norm is taken through a `where` that avoids sqrt(0),
    so the gradient stays finite when t is all zeros.
    """
    t = float_input("clip_by_norm", t)
    l2sum = reduce_sum(t * t, axis=axes, keepdims=True)
    positive = l2sum > 0
    l2norm = where(positive, sqrt(where(positive, l2sum, 1)), l2sum)
    return t * clip_norm / maximum(l2norm, clip_norm)
