"""Clipping, built from differentiable ops (so no rules of its own)."""
import numpy as np

from .operands import float_input, normalize_axes, packed_operand
from .elementwise import maximum, minimum, real_input, sqrt, select
from .reductions import reduce_sum


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Elementwise max(min(t, hi), lo), in TensorFlow's order, so for lo > hi
    every value is lo (and its gradient goes to lo). The gradient passes to t
    where t is inside, ties included. Complex tensors have no order: a
    TypeError, as TensorFlow has no kernel for them."""
    t = real_input("clip_by_value", t)
    # Checked before the first op runs, so a bad bound leaves no op on a tape.
    lo = packed_operand("clip_by_value", clip_value_min, t)
    hi = packed_operand("clip_by_value", clip_value_max, t)
    try:
        np.broadcast_shapes(t.shape, lo.shape, hi.shape)
    except ValueError:
        raise ValueError(f"clip_by_value: bounds of shapes {lo.shape} and {hi.shape} "
                         f"cannot be broadcast against t of shape {t.shape}") from None
    return maximum(minimum(t, hi), lo, name=name)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """Rescale `t` so that its L2 norm (over `axes`) is at most `clip_norm`:
    t * clip_norm / max(norm(t), clip_norm).

    Like TensorFlow, the norm is taken through a `where` that avoids sqrt(0),
    so the gradient stays finite when t is all zeros.
    """
    t = float_input("clip_by_norm", t)
    clip_norm = packed_operand("clip_by_norm", clip_norm, t)  # checked before any op runs
    if clip_norm.ndim != 0:
        raise ValueError(f"clip_by_norm: clip_norm must be a scalar, got shape "
                         f"{clip_norm.shape}")
    normalize_axes("clip_by_norm", axes, t.ndim)
    l2sum = reduce_sum(t * t, axis=axes, keepdims=True)
    positive = l2sum > 0
    l2norm = select(positive, sqrt(select(positive, l2sum, 1)), l2sum)
    return t * clip_norm / maximum(l2norm, clip_norm)
