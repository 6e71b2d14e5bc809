"""tensordot: sum the products over pairs of axes of two tensors.

It is written as TensorFlow writes it: move the summed axes of `a` last and
those of `b` first, flatten each side into a matrix, multiply the matrices,
and unflatten the free axes. Its gradient and JVP are those of transpose,
reshape and matmul.
"""
import math

import numpy as np

from .. import arguments
from .broadcasting import reshape
from .operands import operands
from .matmul_and_solve import matmul
from .shapes import transpose


def _axis_list(op_name, axes, ndim, which):
    axes = [int(a) for a in arguments.integers(op_name, f"axes of {which}", axes)]
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"{op_name}: axis {a} is out of range for {which}, of rank "
                             f"{ndim}")
    axes = [a % ndim for a in axes]
    if len(set(axes)) != len(axes):
        raise ValueError(f"{op_name}: axes {axes} of {which} name an axis twice")
    return axes


def tensordot(a, b, axes, name=None):
    """`axes=N` sums over the last N axes of a and the first N of b;
    `axes=[a_axes, b_axes]` over the listed pairs. The result's axes are a's
    free axes, then b's."""
    a, b = operands("tensordot", a, b)
    if isinstance(axes, (list, tuple)) or np.ndim(axes) > 0:
        if len(axes) != 2:
            raise ValueError(f"tensordot: axes must be an integer or a pair of axis lists, "
                             f"got {axes!r}")
        a_axes = _axis_list("tensordot", axes[0], a.ndim, "a")
        b_axes = _axis_list("tensordot", axes[1], b.ndim, "b")
        if len(a_axes) != len(b_axes):
            raise ValueError(f"tensordot: {a_axes} and {b_axes} must name as many axes of "
                             "a as of b")
    else:
        n = arguments.integer("tensordot", "axes", axes)
        if not 0 <= n <= min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes={n} must be in [0, {min(a.ndim, b.ndim)}] "
                             f"for shapes {a.shape} and {b.shape}")
        a_axes, b_axes = list(range(a.ndim - n, a.ndim)), list(range(n))
    for i, j in zip(a_axes, b_axes):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot: axis {i} of a {a.shape} and axis {j} of b "
                             f"{b.shape} differ in size")
    free_a = [d for d in range(a.ndim) if d not in a_axes]
    free_b = [d for d in range(b.ndim) if d not in b_axes]
    summed = math.prod(a.shape[i] for i in a_axes)
    rows, cols = (tuple(a.shape[d] for d in free_a), tuple(b.shape[d] for d in free_b))
    left = reshape(transpose(a, free_a + a_axes), (math.prod(rows), summed))
    right = reshape(transpose(b, b_axes + free_b), (summed, math.prod(cols)))
    shape = rows + cols
    return reshape(matmul(left, right), shape, name=name)
