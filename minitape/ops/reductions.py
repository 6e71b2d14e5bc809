"""Reductions (sum, mean, max, min, prod) and norms, with their gradient rules.

Every reduction is made by `broadcasting.reduction`, which remembers
`kept_shape`, the input's shape with the reduced axes set to 1. Its gradient
copies the upstream gradient back over the reduced axes (`spread`); its JVP
rule reduces the tangent the same way, over the same axes shifted past the
tangent's batch dims (`reduced_axes`). reduce_sum itself lives in
`broadcasting.py`: it and broadcast_to are each other's gradient.
"""

import numpy as np

from ..arguments import one_axis
from ..registry import RegisterGradient, RegisterJVP
from .broadcasting import reduce_sum, reduction, reduced_axes, reshape, spread  # noqa: F401
from .core import (constant_like, float_input, normalize_axes)
from .complex import conj
from .elementwise import abs, cast, equal, pow, real_input, sqrt, square, where
from .decompositions import spectral_norm
from .shapes import transpose


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    return reduction("Mean", "reduce_mean", np.mean, input_tensor, axis, keepdims, name,
                   need_float=True)


@RegisterGradient("Mean", batch_safe=True)
def _mean_grad(op, grad):
    count = op.inputs[0].size // max(op.outputs[0].size, 1)
    return spread(op, grad / count)


@RegisterJVP("Mean", batch_safe=True)
def _mean_jvp(op, t):
    return reduce_mean(t, reduced_axes(op, t), keepdims=op.attrs["keepdims"])


def reduce_max(input_tensor, axis=None, keepdims=False, name=None):
    x = real_input("reduce_max", input_tensor)  # complex numbers have no order
    return reduction("Max", "reduce_max", np.max, x, axis, keepdims, name)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None):
    x = real_input("reduce_min", input_tensor)
    return reduction("Min", "reduce_min", np.min, x, axis, keepdims, name)


def _extreme_weights(op):
    """1/k at each of the k entries equal to the max (or min), 0 elsewhere."""
    x = op.inputs[0]
    picked = cast(equal(x, reshape(op.outputs[0], op.attrs["kept_shape"])), x.dtype)
    return picked / reduce_sum(picked, axis=op.attrs["axis"], keepdims=True)


def _extreme_grad(op, grad):
    """The gradient goes to the entries equal to the max (or min), split evenly
    between ties, as in TensorFlow."""
    return spread(op, grad) * _extreme_weights(op)


def _extreme_jvp(op, t):
    """The max moves with the entry that is the max (the mean of tied ones)."""
    return reduce_sum(t * _extreme_weights(op), reduced_axes(op, t),
                      keepdims=op.attrs["keepdims"])


RegisterGradient("Max", batch_safe=True)(_extreme_grad)
RegisterGradient("Min", batch_safe=True)(_extreme_grad)
RegisterJVP("Max", batch_safe=True)(_extreme_jvp)
RegisterJVP("Min", batch_safe=True)(_extreme_jvp)


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None):
    return reduction("Prod", "reduce_prod", np.prod, input_tensor, axis, keepdims, name)


@RegisterGradient("Prod", batch_safe=True)
def _prod_grad(op, grad):
    # complex: the conjugate of the derivative (TensorFlow's _ProdGrad); the JVP takes it as is
    return spread(op, grad) * conj(_prod_of_others(op))


@RegisterJVP("Prod", batch_safe=True)
def _prod_jvp(op, t):
    return reduce_sum(t * _prod_of_others(op), reduced_axes(op, t),
                      keepdims=op.attrs["keepdims"])


def _prod_of_others(op):
    """d prod(x) / d x_i is the product of all the *other* entries.

    Dividing prod(x) by x_i fails where x_i == 0, so we compute the others
    directly: move the reduced axes last and flatten them to k entries; build,
    for each i, a copy of those k entries with entry i replaced by 1 (a k x k
    block); the product of each copy is "all but x_i". Everything here is a
    minitape op, so higher derivatives work too (each order adds a factor k).
    """
    x = op.inputs[0]
    axes = op.attrs["axis"]
    keep = [i for i in range(x.ndim) if i not in axes]
    perm = keep + list(axes)
    lead = tuple(x.shape[i] for i in keep)
    k = int(np.prod([x.shape[i] for i in axes], dtype=np.int64))
    rows = reshape(transpose(x, perm), lead + (1, k))
    eye = constant_like(np.eye(k, dtype=bool))
    others = reduce_prod(where(eye, np.ones((), x.dtype), rows), axis=-1)
    others = reshape(others, lead + tuple(x.shape[i] for i in axes))
    return transpose(others, np.argsort(perm))


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
