"""Reductions (sum, mean, max, min, prod) and norms, with their gradient rules.

Every reduction remembers `kept_shape`, the input's shape with the reduced axes
set to 1. Its gradient reshapes the upstream gradient to that shape and
broadcasts it back over the reduced axes (`_spread`).
"""
import numpy as np

from ..registry import RegisterGradient, batch_ndim
from .core import constant_like, emit, float_input, normalize_axes, tensor_input


def _reduce(op_type, op_name, numpy_fn, x, axis, keepdims, name, need_float=False):
    x = (float_input if need_float else tensor_input)(op_name, x)
    axes = normalize_axes(op_name, axis, x.ndim)
    if op_type in ("Max", "Min", "Prod") and x.size == 0 and op_type != "Prod":
        raise ValueError(f"{op_name}: cannot reduce an empty tensor of shape {x.shape}")
    value = numpy_fn(x._value, axis=axes, keepdims=bool(keepdims))
    kept = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
    return emit(op_type, value, (x,), {"axis": axes, "keepdims": bool(keepdims),
                                       "kept_shape": kept}, name)


def _spread(op, grad):
    """Copy the upstream gradient back over the reduced axes."""
    from .shapes import broadcast_to, reshape
    nb = batch_ndim(op, grad)
    batch = grad.shape[:nb]
    g = reshape(grad, batch + op.attrs["kept_shape"])
    return broadcast_to(g, batch + op.inputs[0].shape)


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    return _reduce("Sum", "reduce_sum", np.sum, input_tensor, axis, keepdims, name)


@RegisterGradient("Sum", batch_safe=True)
def _sum_grad(op, grad):
    return _spread(op, grad)


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    return _reduce("Mean", "reduce_mean", np.mean, input_tensor, axis, keepdims, name,
                   need_float=True)


@RegisterGradient("Mean", batch_safe=True)
def _mean_grad(op, grad):
    count = op.inputs[0].size // max(op.outputs[0].size, 1)
    return _spread(op, grad / count)


def reduce_max(input_tensor, axis=None, keepdims=False, name=None):
    return _reduce("Max", "reduce_max", np.max, input_tensor, axis, keepdims, name)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None):
    return _reduce("Min", "reduce_min", np.min, input_tensor, axis, keepdims, name)


def _extreme_grad(op, grad):
    """The gradient goes to the entries equal to the max (or min), split evenly
    between ties, as in TensorFlow."""
    x = op.inputs[0]._value
    picked = (x == op.outputs[0]._value.reshape(op.attrs["kept_shape"]))
    counts = picked.sum(axis=op.attrs["axis"], keepdims=True)
    return _spread(op, grad) * constant_like((picked / counts).astype(x.dtype))


RegisterGradient("Max", batch_safe=True)(_extreme_grad)
RegisterGradient("Min", batch_safe=True)(_extreme_grad)


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None):
    return _reduce("Prod", "reduce_prod", np.prod, input_tensor, axis, keepdims, name)


@RegisterGradient("Prod", batch_safe=True)
def _prod_grad(op, grad):
    """d prod(x) / d x_i is the product of all the *other* entries.

    Dividing prod(x) by x_i fails where x_i == 0, so we compute the others
    directly: move the reduced axes last and flatten them to k entries; build,
    for each i, a copy of those k entries with entry i replaced by 1 (a k x k
    block); the product of each copy is "all but x_i". Everything here is a
    minitape op, so higher derivatives work too (each order adds a factor k).
    """
    from .elementwise import where
    from .shapes import reshape, transpose
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
    others = transpose(others, np.argsort(perm))
    return _spread(op, grad) * others


def norm(tensor, ord="euclidean", axis=None, keepdims=False, name=None):
    """Vector norms (`'euclidean'`/2, 1, `np.inf`) and the Frobenius norm
    (`'fro'`), built from differentiable ops (the gradient of the euclidean
    norm at 0 is NaN, as in TensorFlow)."""
    from .elementwise import abs, sqrt
    x = float_input("norm", tensor)
    if ord in ("euclidean", "fro", 2, 2.0):
        return sqrt(reduce_sum(x * x, axis=axis, keepdims=keepdims), name=name)
    if ord in (1, 1.0):
        return reduce_sum(abs(x), axis=axis, keepdims=keepdims, name=name)
    if ord == np.inf:
        return reduce_max(abs(x), axis=axis, keepdims=keepdims, name=name)
    raise ValueError(f"norm: ord must be 'euclidean', 'fro', 1, 2 or np.inf, got {ord!r}")
