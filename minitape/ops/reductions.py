"""Reductions (sum, mean, max, min, prod), with their gradient rules.

Every reduction is made by `broadcasting.reduction`, which remembers
`kept_shape`, the input's shape with the reduced axes set to 1. Its gradient
copies the upstream gradient back over the reduced axes (`spread`); its JVP
rule reduces the tangent the same way, over the same axes shifted past the
tangent's batch dims (`reduced_axes`). reduce_sum itself lives in
`broadcasting.py`: it and broadcast_to are each other's gradient.
"""

import numpy as np

from .broadcasting import (declare_reduction, highest, lowest, reduce_sum,  # noqa: F401
                           reduction, reduced_axes, reshape, spread)
from .operands import constant_like
from .complex import conj
from .elementwise import cast, equal, real_input, select
from .shapes import transpose


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    return reduction("Mean", "reduce_mean", np.mean, input_tensor, axis, keepdims, name,
                     need_float=True)


def _mean_grad(op, grad):
    count = op.inputs[0].size // max(op.outputs[0].size, 1)
    return spread(op, grad / count)


def _mean_jvp(op, t):
    return reduce_mean(t, reduced_axes(op, t), keepdims=op.attrs["keepdims"])


declare_reduction("Mean", reduce_mean, _mean_grad, _mean_jvp,
                  "{0}.mean({axis}, keepdims={keepdims})")


# reduce_max and reduce_min of nothing are, as in TensorFlow, the identity of
# max (-inf, or the smallest integer) and of min (+inf): max(concat(a, b)) is
# max(max(a), max(b)) even when a is empty.

def reduce_max(input_tensor, axis=None, keepdims=False, name=None):
    x = real_input("reduce_max", input_tensor)  # complex numbers have no order
    return reduction("Max", "reduce_max", np.max, x, axis, keepdims, name, empty=lowest)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None):
    x = real_input("reduce_min", input_tensor)
    return reduction("Min", "reduce_min", np.min, x, axis, keepdims, name, empty=highest)


def _max_of(v, axis, keepdims):
    """What reduce_max computes, on NumPy values (compiled programs call it)."""
    if v.size:
        return np.max(v, axis, keepdims=keepdims)
    return np.max(v, axis, keepdims=keepdims, initial=lowest(v.dtype))


def _min_of(v, axis, keepdims):
    if v.size:
        return np.min(v, axis, keepdims=keepdims)
    return np.min(v, axis, keepdims=keepdims, initial=highest(v.dtype))


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


declare_reduction("Max", reduce_max, _extreme_grad, _extreme_jvp,
                  "reduce_max({0}, {axis}, keepdims={keepdims})",
                  helpers={"reduce_max": _max_of})
declare_reduction("Min", reduce_min, _extreme_grad, _extreme_jvp,
                  "reduce_min({0}, {axis}, keepdims={keepdims})",
                  helpers={"reduce_min": _min_of})


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None):
    return reduction("Prod", "reduce_prod", np.prod, input_tensor, axis, keepdims, name,
                     keep_integers=True)


def _prod_grad(op, grad):
    # complex: the conjugate of the derivative (TensorFlow's _ProdGrad); the JVP takes it as is
    return spread(op, grad) * conj(_prod_of_others(op))


def _prod_jvp(op, t):
    return reduce_sum(t * _prod_of_others(op), reduced_axes(op, t),
                      keepdims=op.attrs["keepdims"])


declare_reduction("Prod", reduce_prod, _prod_grad, _prod_jvp,
                  "{0}.prod({axis}, keepdims={keepdims})", keep_integers=True)


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
    others = reduce_prod(select(eye, np.ones((), x.dtype), rows), axis=-1)
    others = reshape(others, lead + tuple(x.shape[i] for i in axes))
    return transpose(others, np.argsort(perm))
