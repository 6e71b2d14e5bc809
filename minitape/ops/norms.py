"""Norms: TensorFlow's vector p-norms and matrix norms, built from other ops.

They have no rules of their own: their derivatives are those of the ops they
are made of (reductions, abs, pow, sqrt), and the spectral norm, the largest
singular value, is an op of the SVD's family (`decompositions.py`), whose
rules give its derivatives of every order; so norms sit above both.
"""
import numpy as np

from ..arguments import one_axis
from .broadcasting import reduce_sum, reshape
from .operands import constant_like, float_input, normalize_axes
from .decompositions import spectral_norm
from .elementwise import abs, cast, pow, sqrt, square
from .reductions import reduce_max
from .shapes import transpose


def norm(tensor, ord="euclidean", axis=None, keepdims=False, name=None):
    """TensorFlow's norms, built from differentiable ops.

    Over one axis (or all, `axis=None`): the vector p-norm for `'euclidean'`
    (= 2, also `'fro'`), 1, `np.inf` and any real p > 0. Over two axes
    (`axis=[r, c]`): the matrix norms `'fro'`/`'euclidean'` (the square root of
    the sum of squares), 1 (the largest sum of |x| over r), `np.inf` (the
    largest sum over c) and 2 (the spectral norm, the largest singular value).
    As in TensorFlow, the 2-norms of complex tensors are complex (5+0j for
    [3+4j]) and the others real, and where a norm has no derivative (the
    2-norm or a p-norm at the zero vector) the gradient is NaN."""
    x = float_input("norm", tensor)
    axes = _norm_axes(axis, x.ndim)
    if isinstance(axis, (list, tuple)) and len(axis) == 2:  # None: the flattened vector
        if not _is_ord(ord, ("euclidean", "fro", 1, 2, np.inf)):
            raise ValueError(f"norm: ord must be a supported matrix norm in ['euclidean', "
                             f"'fro', 1, 2, inf] for two axes {list(axis)}, got {ord!r}")
        value = _matrix_norm(x, ord, axes)
        if keepdims:
            value = reshape(value, tuple(1 if i in axes else n for i, n in enumerate(x.shape)))
        return value
    if not (_is_ord(ord, ("euclidean", "fro")) or (_is_ord(ord, ()) and ord > 0)):
        raise ValueError(f"norm: ord must be a supported vector norm ('euclidean', 'fro', "
                         f"1, 2, np.inf or a real number > 0), got {ord!r}")
    if ord in ("euclidean", "fro", 2, 2.0):
        return _two_norm(x, axes, keepdims)
    if ord in (1, 1.0):
        return reduce_sum(abs(x), axis=axes, keepdims=keepdims, name=name)
    if ord == np.inf:
        return reduce_max(abs(x), axis=axes, keepdims=keepdims, name=name)
    # (sum |x|^p)^(1/p): at the zero vector, inf * 0 = NaN, as in TensorFlow
    magnitude = abs(x)
    return pow(reduce_sum(pow(magnitude, constant_like(magnitude.dtype.type(ord))),
                          axis=axes, keepdims=keepdims),
               constant_like(magnitude.dtype.type(1.0 / ord)))


def _is_ord(ord, allowed):
    """Whether `ord` is one of `allowed` (or, for allowed=(), any real number)."""
    if isinstance(ord, str):
        return ord in allowed
    if isinstance(ord, bool) or not isinstance(ord, (int, float, np.integer, np.floating)):
        return False
    return not allowed or ord in [a for a in allowed if not isinstance(a, str)]


def _norm_axes(axis, ndim):
    """None (all axes), one axis, or two distinct axes kept in their order (the
    order matters for the matrix 1- and inf-norms)."""
    if isinstance(axis, (list, tuple)) and len(axis) == 2:
        r, c = (one_axis("norm", a, ndim) for a in axis)
        if r == c:
            raise ValueError(f"norm: the two axes {list(axis)} are the same axis")
        return (r, c)
    if isinstance(axis, (list, tuple)) and len(axis) != 1:
        raise ValueError(f"norm: axis must be None, one axis or two axes, got {axis!r}")
    axes = normalize_axes("norm", axis, ndim)
    return tuple(range(ndim)) if axes is None else axes


def _two_norm(x, axes, keepdims):
    """sqrt(sum |x|^2); complex inputs give the complex result TensorFlow gives."""
    if x.dtype.kind == "c":
        total = reduce_sum(square(abs(x)), axis=axes, keepdims=keepdims)
        return cast(sqrt(total), x.dtype)
    return sqrt(reduce_sum(x * x, axis=axes, keepdims=keepdims))


def _matrix_norm(x, ord, axes):
    r, c = axes
    if ord in ("euclidean", "fro"):
        return _two_norm(x, axes, False)
    if ord in (1, 1.0):  # the largest sum over r (a column sum for axis=[0, 1])
        return reduce_max(reduce_sum(abs(x), axis=r, keepdims=True), axis=axes)
    if ord == np.inf:    # the largest sum over c (a row sum)
        return reduce_max(reduce_sum(abs(x), axis=c, keepdims=True), axis=axes)
    rest = [i for i in range(x.ndim) if i not in axes]
    return spectral_norm(transpose(x, rest + [r, c]))
