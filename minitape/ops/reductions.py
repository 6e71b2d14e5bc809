"""Reductions (sum, mean, max, min, prod), with their gradient rules.

Every reduction is made by `broadcasting.reduction`, which remembers
`kept_shape`, the input's shape with the reduced axes set to 1. Its gradient
copies the upstream gradient back over the reduced axes (`spread`); its JVP
rule reduces the tangent the same way, over the same axes shifted past the
tangent's batch dims (`reduced_axes`). reduce_sum itself lives in
`broadcasting.py`: it and broadcast_to are each other's gradient.
"""

import numpy as np

from ..registry import RegisterGradient, RegisterJVP
from .broadcasting import reduce_sum, reduction, reduced_axes, reshape, spread  # noqa: F401
from .core import constant_like
from .complex import conj
from .elementwise import cast, equal, real_input, where
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
