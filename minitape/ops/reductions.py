"""Reductions over axes: sum, mean, max, min and prod with their gradient rules,
then the statistics and logic built on them (reduce_variance, reduce_std,
reduce_logsumexp, reduce_euclidean_norm, reduce_any, reduce_all,
count_nonzero, argmax, argmin).

Every reduction is made by `broadcasting.reduction`, which remembers
`kept_shape`, the input's shape with the reduced axes set to 1. Its gradient
copies the upstream gradient back over the reduced axes (`spread`); its JVP
rule reduces the tangent the same way, over the same axes shifted past the
tangent's batch dims (`reduced_axes`). reduce_sum itself lives in
`broadcasting.py`: it and broadcast_to are each other's gradient.

Most statistics are written with other ops, as TensorFlow writes them, so
their gradients, JVPs and traces come from those ops: the variance is the mean
squared deviation, logsumexp subtracts the (finite) max before exponentiating
so that large inputs do not overflow. The euclidean norm is one op with its
own rule (TensorFlow's EuclideanNorm: x / (||x|| / grad), NaN at the zero
vector in both directions). any, all, argmax and argmin are not
differentiable (TensorFlow gives None).
"""

import numpy as np

from .. import arguments
from ..core.registry import batch_ndim
from .broadcasting import (declare_reduction, highest, lowest, reduce_sum,  # noqa: F401
                           reduction, reduced_axes, reshape, spread)
from .operands import constant_like, emit, float_input, normalize_axes, one_axis, tensor_input
from .complex import conj
from .control import stop_gradient
from .declaration import declare
from .elementwise import (abs, cast, equal, exp, less, log, not_equal, real_input, select,
                          sqrt, square)
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


def _real_input(op_name, x):
    """A real floating-point tensor. (TensorFlow's variance of complex numbers
    is the mean of |x - mean|^2, a real number; these ops do not take complex
    inputs rather than return the complex mean of (x - mean)^2.)"""
    x = float_input(op_name, x)
    if x.dtype.kind == "c":
        raise TypeError(f"{op_name}: complex inputs are not supported (dtype {x.dtype})")
    return x


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """The mean of the squared deviations from the mean (divides by n, as
    TensorFlow and NumPy's default; NaN over an empty axis)."""
    x = _real_input("reduce_variance", input_tensor)
    normalize_axes("reduce_variance", axis, x.ndim)  # a bad axis fails before any op runs
    deviations = x - reduce_mean(x, axis=axis, keepdims=True)
    return reduce_mean(square(deviations), axis=axis, keepdims=keepdims, name=name)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """The square root of reduce_variance: its gradient is NaN where all
    entries are equal (sqrt has an infinite slope at 0), as in TensorFlow."""
    x = _real_input("reduce_std", input_tensor)
    normalize_axes("reduce_std", axis, x.ndim)
    return sqrt(reduce_variance(x, axis=axis, keepdims=keepdims), name=name)


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """log(sum(exp(x))) computed as m + log(sum(exp(x - m))) with m the max
    (0 where the max is not finite), held constant: the gradient is then
    softmax(x) along the axes, as for the exact formula."""
    x = _real_input("reduce_logsumexp", input_tensor)
    normalize_axes("reduce_logsumexp", axis, x.ndim)
    raw = reduce_max(x, axis=axis, keepdims=True)
    finite = less(abs(raw), np.array(np.inf, x.dtype))  # False for inf and NaN
    m = stop_gradient(select(finite, raw, np.zeros((), x.dtype)))
    total = log(reduce_sum(exp(x - m), axis=axis, keepdims=keepdims))
    return total + (m if keepdims else reshape(m, total.shape))


def _euclidean(value, axis, keepdims):
    """sqrt(sum |x|^2) in the input's dtype (integers truncated and summed in
    their own width, as TensorFlow's kernel does)."""
    if value.dtype.kind == "c":
        squares = (value * value.conj()).real
    else:
        squares = value * value
    total = np.sum(squares, axis=axis, keepdims=keepdims, dtype=squares.dtype)
    return np.asarray(np.sqrt(total)).astype(value.dtype)


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    x = tensor_input("reduce_euclidean_norm", input_tensor)
    if x.dtype.kind == "b":
        raise TypeError("reduce_euclidean_norm: expected numbers, got dtype bool")
    return reduction("EuclideanNorm", "reduce_euclidean_norm", _euclidean, x, axis,
                     keepdims, name)


def _euclidean_norm_grad(op, grad):
    """d||x||/dx = x / ||x||, written x / (||x|| / grad) as in TensorFlow's
    rule: NaN at the zero vector (0 / 0), and 0 where grad is 0 elsewhere."""
    nb = batch_ndim(op, grad)
    kept = op.attrs["kept_shape"]
    norm = reshape(op.outputs[0], kept)
    return op.inputs[0] / (norm / reshape(grad, grad.shape[:nb] + kept))


def _euclidean_norm_jvp(op, t):
    """<x, t> / ||x||: NaN at the zero vector, as the gradient."""
    if op.inputs[0].dtype.kind == "c":
        raise NotImplementedError("reduce_euclidean_norm: no forward-mode rule for complex "
                                  "inputs (<x, t> would need conj(x)); use reverse mode")
    return reduce_sum(op.inputs[0] * t, reduced_axes(op, t),
                      keepdims=op.attrs["keepdims"]) / op.outputs[0]


def _logical(op_type, op_name, numpy_fn):
    def op(input_tensor, axis=None, keepdims=False, name=None):
        x = tensor_input(op_name, input_tensor)
        if x.dtype != np.bool_:
            raise TypeError(f"{op_name}: expected a bool tensor, got dtype {x.dtype} "
                            "(compare first, e.g. x > 0)")
        return reduction(op_type, op_name, numpy_fn, x, axis, keepdims, name)
    op.__name__ = op.__qualname__ = op_name
    op.__doc__ = f"`{numpy_fn.__name__}` of a bool tensor over `axis` (not differentiable)."
    return op


reduce_any = _logical("Any", "reduce_any", np.any)
reduce_all = _logical("All", "reduce_all", np.all)


declare_reduction("EuclideanNorm", reduce_euclidean_norm, _euclidean_norm_grad,
                  _euclidean_norm_jvp, smooth=False, any_rank=False)
declare_reduction("Any", reduce_any, differentiable=False, any_rank=False)
declare_reduction("All", reduce_all, differentiable=False, any_rank=False)


def count_nonzero(input, axis=None, keepdims=None, dtype=np.int64, name=None):
    """How many entries are not zero (not False), as int64 by default."""
    x = tensor_input("count_nonzero", input)
    dtype = arguments.dtype("count_nonzero", dtype, kinds="iuf")
    normalize_axes("count_nonzero", axis, x.ndim)
    nonzero = cast(not_equal(x, np.zeros((), x.dtype)), np.int64)
    return cast(reduce_sum(nonzero, axis=axis, keepdims=bool(keepdims)), dtype, name=name)


def _arg_extreme(op_type, op_name, numpy_fn, nan_fill):
    def op(input, axis=None, output_type=np.int64, name=None):
        x = tensor_input(op_name, input)
        if x.dtype.kind == "c":
            raise TypeError(f"{op_name}: complex numbers have no order (dtype {x.dtype})")
        if x.ndim == 0:
            raise ValueError(f"{op_name}: needs a tensor of rank >= 1, got a scalar")
        a = arguments.one_axis(op_name, 0 if axis is None else axis, x.ndim)
        out = arguments.dtype(op_name, output_type, kinds="iu")
        if x.shape[a] == 0:
            raise ValueError(f"{op_name}: axis {a} of shape {x.shape} is empty")
        value = x._value
        if value.dtype.kind in "fc":  # TensorFlow skips NaNs (index 0 if all are)
            value = np.where(np.isnan(value), nan_fill, value)
        return emit(op_type, numpy_fn(value, axis=a).astype(out), (x,),
                    {"axis": a, "output_type": out}, name)
    op.__name__ = op.__qualname__ = op_name
    op.__doc__ = (f"The index of the {op_name[3:]} along `axis` (0 by default), the "
                  "first one on ties; int64 unless `output_type` says otherwise. "
                  "Not differentiable.")
    return op


argmax = _arg_extreme("ArgMax", "argmax", np.argmax, -np.inf)
argmin = _arg_extreme("ArgMin", "argmin", np.argmin, np.inf)

def _arg_extreme_shape(shapes, attrs, declared):
    # the axis goes; output_type is checked by the op itself (the loader's probe)
    a, shape = attrs["output_type"], shapes[0]
    axis = one_axis(attrs, shape)
    if a not in ("int32", "int64", "uint8", "int16", "int8", "uint16", "uint32", "uint64"):
        raise ValueError(f"attribute output_type = {a!r:.40} is not an integer dtype")
    return (shape[:axis] + shape[axis + 1:],), 0


for _op_type, _fn in (("ArgMax", argmax), ("ArgMin", argmin)):
    declare(_op_type, differentiable=False,
            replay=lambda xs, a, o, fn=_fn: fn(xs[0], a["axis"], np.dtype(a["output_type"])),
            attrs_of=lambda op: {"axis": int(op.attrs["axis"]),
                                 "output_type": np.dtype(op.attrs["output_type"]).name},
            shape=_arg_extreme_shape)
