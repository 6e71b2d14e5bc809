"""Normalising tensors: l2_normalize, moments and batch_normalization.

TensorFlow writes all three in Python, as compositions of other ops, and so
does minitape: their derivatives of every order come from the ops they are made
of, and are TensorFlow's, including its choices at the edges. l2_normalize
divides by sqrt(max(sum x^2, epsilon)), so at the zero vector its gradient is
1/sqrt(epsilon) (1e6), finite; moments stops the gradient of the mean inside
the variance, which changes nothing at first order (sum(x - mean) = 0) but
makes d2 variance / dx2 = 2/n I rather than the true 2/n (I - 1 1^T / n).
"""
import numpy as np

from .broadcasting import reshape
from .control import stop_gradient
from .operands import float_input, normalize_axes, number, packed_operand
from .elementwise import add, cast, maximum, multiply, sqrt, square
from .reductions import reduce_mean, reduce_sum


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x^2, axis), epsilon)): x scaled to unit length along
    `axis` (all axes when None); `dim` is TensorFlow's old name for `axis`."""
    x = float_input("l2_normalize", x)
    if x.dtype.kind != "f":
        raise TypeError(f"l2_normalize: expected a real floating-point tensor, got {x.dtype}")
    if dim is not None:
        if axis is not None:
            raise ValueError("l2_normalize: give axis or dim, not both")
        axis = dim
    axes = normalize_axes("l2_normalize", axis, x.ndim)
    if isinstance(epsilon, bool):
        raise TypeError(f"l2_normalize: epsilon must be a number, got {epsilon!r}")
    if isinstance(epsilon, (int, float, np.floating)):
        epsilon = number(x.dtype, epsilon)
    else:  # a tensor (differentiable: TensorFlow gives it a gradient) of x's dtype
        epsilon = packed_operand("l2_normalize", epsilon, x)
        try:
            np.broadcast_shapes(x.shape, epsilon.shape)
        except ValueError:
            raise ValueError(f"l2_normalize: epsilon of shape {epsilon.shape} cannot be "
                             f"broadcast against x of shape {x.shape}") from None
    square_sum = reduce_sum(square(x), axis=list(axes), keepdims=True)
    inv_norm = 1 / sqrt(maximum(square_sum, epsilon))
    return multiply(x, inv_norm, name=name)


def moments(x, axes, shift=None, keepdims=False, name=None):
    """(mean, variance) of `x` over `axes`, as TensorFlow computes them: the
    variance is mean((x - stop_gradient(mean))^2); float16 is computed in
    float32 and rounded back; `shift` is accepted and unused, as in TensorFlow."""
    x = float_input("moments", x)
    if x.dtype.kind != "f":
        raise TypeError(f"moments: expected a real floating-point tensor, got {x.dtype}")
    if axes is None:
        raise ValueError("moments: axes must be given (an int or a list of ints)")
    reduced = normalize_axes("moments", axes, x.ndim)
    y = cast(x, np.float32) if x.dtype == np.float16 else x
    mean = reduce_mean(y, axis=list(reduced), keepdims=True)
    variance = reduce_mean(square(y - stop_gradient(mean)), axis=list(reduced), keepdims=True)
    if not keepdims:
        shape = tuple(n for i, n in enumerate(x.shape) if i not in reduced)
        mean, variance = reshape(mean, shape), reshape(variance, shape)
    if x.dtype == np.float16:
        mean, variance = cast(mean, np.float16), cast(variance, np.float16)
    return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) * scale / sqrt(variance + variance_epsilon) + offset, written
    as TensorFlow writes it: inv = scale / sqrt(variance + eps), then
    x * inv + (offset - mean * inv); `offset` and `scale` may be None.

    As in TensorFlow, inv and the shift are computed in the variance's dtype and
    cast to x's: Python numbers for the statistics make float32 tensors, so with
    float64 x they are used at float32 precision (and float32 statistics may
    normalise a float16 or float64 x)."""
    op = "batch_normalization"
    x = float_input(op, x)
    if mean is None or variance is None or variance_epsilon is None:
        raise ValueError(f"{op}: mean, variance and variance_epsilon must be given")
    variance = float_input(op, variance)
    stats = {"mean": mean, "offset": offset, "scale": scale,
             "variance_epsilon": variance_epsilon}
    stats = {k: None if v is None else packed_operand(op, v, variance, lists=False)
             for k, v in stats.items()}
    shapes = {k: v.shape for k, v in stats.items() if v is not None}
    shapes["variance"] = variance.shape
    try:
        np.broadcast_shapes(x.shape, *shapes.values())
    except ValueError:
        listed = ", ".join(f"{k} {s}" for k, s in shapes.items())
        raise ValueError(f"{op}: x of shape {x.shape} and {listed} cannot be broadcast "
                         "together") from None
    inv = 1 / sqrt(variance + stats["variance_epsilon"])
    if stats["scale"] is not None:
        inv = inv * stats["scale"]
    shift = -stats["mean"] * inv if stats["offset"] is None \
        else stats["offset"] - stats["mean"] * inv
    return add(x * cast(inv, x.dtype), cast(shift, x.dtype), name=name)
