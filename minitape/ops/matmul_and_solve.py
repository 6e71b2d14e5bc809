"""Matrix products and solves: matmul, einsum, solve and inv, with their gradient rules.

All of them accept leading batch dimensions, so their rules also accept a
leading batch of upstream gradients (vectorised jacobians) through NumPy's
broadcasting of matmul and solve. For the same reason their JVP rules (forward
mode) accept a leading batch of tangents.

matmul is declared by its two gradients, g @ bᴴ and aᴴ @ g (`products.py`
makes its rules from them). Complex operands follow TensorFlow's convention
(conjugation.py): a gradient rule takes the conjugate of the other operands
(grad @ conj(b)^T for a @ b), a JVP rule does not. `conj` returns a real tensor as it is and records nothing, so
real inputs run (and trace, and compile) exactly the same ops.
"""
import math

import numpy as np

from ..core.registry import batch_ndim
from .broadcasting import lift, unbroadcast
from .complex import conj
from .operands import (attr_bool, emit, float_input, operands, tensor_input)
from .declaration import declare
from .products import Contraction, contraction_rules, matrix_product_rules
from .shapes import matrix_transpose
from .subscripts import parse_subscripts


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           name=None):
    """Matrix product of the last two axes (rank >= 2; leading axes broadcast).
    `adjoint_a`/`adjoint_b` take the conjugate transpose: a recorded Conj op,
    then the transpose flag (for real matrices, the transpose alone)."""
    a, b = operands("matmul", a, b)
    if (transpose_a and adjoint_a) or (transpose_b and adjoint_b):
        raise ValueError("matmul: only one of transpose_a and adjoint_a (and of transpose_b "
                         "and adjoint_b) can be True")
    if adjoint_a:
        a = conj(a)
    if adjoint_b:
        b = conj(b)
    transpose_a, transpose_b = transpose_a or adjoint_a, transpose_b or adjoint_b
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(f"matmul: both operands need rank >= 2, got shapes {a.shape} "
                         f"and {b.shape}")
    av = np.swapaxes(a._value, -1, -2) if transpose_a else a._value
    bv = np.swapaxes(b._value, -1, -2) if transpose_b else b._value
    if av.shape[-1] != bv.shape[-2]:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} are incompatible "
                         f"(transpose_a={transpose_a}, transpose_b={transpose_b}): "
                         f"inner dimensions {av.shape[-1]} and {bv.shape[-2]} differ")
    try:
        value = _product(av, bv)
    except ValueError:
        raise ValueError(f"matmul: the batch dimensions of {a.shape} and {b.shape} "
                         "cannot be broadcast together") from None
    attrs = {"transpose_a": bool(transpose_a), "transpose_b": bool(transpose_b)}
    return emit("MatMul", value, (a, b), attrs, name)


_FOLD_SIZE = 4096  # a matrix this large no longer sits in the fastest cache


def _product(a, b):
    """np.matmul(a, b), with one speed-up for a stack of matrices times ONE
    large matrix, which is what jacobians make (a batch of tangents or of
    upstream gradients against a weight matrix). NumPy multiplies each matrix
    of the stack separately, reading the large one again every time; folding
    the stack into one matrix product is several times faster:
      (..., m, k) @ (k, n): all the rows, one below the other: (... m, k) @ (k, n)
      (m, k) @ (..., k, n): all the columns, side by side:    (m, k) @ (k, ... n)
    then the result is unfolded. Small matrices skip this (the reshuffling
    would cost more than it saves)."""
    if a.ndim > 2 and b.ndim == 2 and b.size >= _FOLD_SIZE:
        return (a.reshape(-1, a.shape[-1]) @ b).reshape(a.shape[:-1] + b.shape[-1:])
    if b.ndim > 2 and a.ndim == 2 and a.size >= _FOLD_SIZE:
        k, n = b.shape[-2:]
        columns = np.moveaxis(b, -2, 0).reshape(k, -1)       # (k, ... n)
        out = (a @ columns).reshape(a.shape[:1] + b.shape[:-2] + (n,))
        return np.moveaxis(out, 0, -2)                       # (..., m, n)
    return np.matmul(a, b)


def _matmul_shape(shapes, attrs, declared):
    """(batch + (m, n),): the matrices' rows and columns as the flags read them;
    m n k multiplications for each matrix of the batch."""
    a, b = shapes
    if len(a) < 2 or len(b) < 2:
        raise ValueError("needs rank >= 2")
    batch = np.broadcast_shapes(a[:-2], b[:-2])
    m, k = (a[-1], a[-2]) if attr_bool(attrs, "transpose_a") else (a[-2], a[-1])
    k2, n = (b[-1], b[-2]) if attr_bool(attrs, "transpose_b") else (b[-2], b[-1])
    if k != k2:
        raise ValueError(f"inner sizes {k} and {k2} differ")
    return (batch + (m, n),), math.prod(batch) * m * n * k


# A stack of at least _FOLD_ROWS matrices, or of any number, times a matrix of
# at least _FOLD_SIZE numbers is folded into one product in a compiled
# program (the stack's rows one below the other: no copy); such a matrix times
# a stack too (its columns side by side: a copy).
_FOLD_ROWS = 8


def matmul_rows(a, b):
    """(..., m, k) @ (k, n) as ONE matrix product: the stack's rows one below
    the other (what matmul's forward does for a large b, `_product`)."""
    return (a.reshape(-1, a.shape[-1]) @ b).reshape(a.shape[:-1] + b.shape[-1:])


def matmul_columns(a, b):
    """(m, k) @ (..., k, n) as ONE matrix product: the stack's columns side by side."""
    nb = b.ndim
    k, n = b.shape[-2:]
    side_by_side = b.transpose((nb - 2,) + tuple(range(nb - 2)) + (nb - 1,)).reshape(k, -1)
    out = (a @ side_by_side).reshape(a.shape[:1] + b.shape[:-2] + (n,))
    return out.transpose(tuple(range(1, nb - 1)) + (0, nb - 1))


def _transposed(k, rank):
    """The text of input `k` with its last two axes swapped: `.T` for a matrix."""
    return f"{{{k}}}.T" if rank == 2 else f"{{{k}}}.swapaxes(-1, -2)"


def _matmul_line(attrs, in_shapes, known):
    """The compiled line: `a @ b` with its flags (BLAS takes a transposed
    matrix as it is), or one folded product for a stack times a matrix."""
    ta, tb = bool(attrs["transpose_a"]), bool(attrs["transpose_b"])
    if None not in in_shapes:
        (a, b) = in_shapes
        if len(a) > 2 and len(b) == 2 and not ta and a[-1] > 0 and (
                math.prod(a[:-2]) >= _FOLD_ROWS or math.prod(b) >= _FOLD_SIZE):
            return "matmul_rows({0}, {1}.T)" if tb else "matmul_rows({0}, {1})"
        if len(b) > 2 and len(a) == 2 and not tb and math.prod(a) >= _FOLD_SIZE \
                and b[-2] > 0:
            return "matmul_columns({0}.T, {1})" if ta else "matmul_columns({0}, {1})"
    ranks = [len(s) if s is not None else 0 for s in in_shapes]
    left = _transposed(0, ranks[0]) if ta else "{0}"
    right = _transposed(1, ranks[1]) if tb else "{1}"
    return f"{left} @ {right}"


# z = a @ b: dz/da = g @ bᴴ, dz/db = aᴴ @ g (products.py applies the flags, the
# masks of zero times inf, skipped inputs and batch dimensions)
declare("MatMul", *matrix_product_rules((lambda g, a, b: g @ b.H,
                                         lambda g, a, b: a.H @ g), matmul),
        replay=lambda xs, a, o: matmul(xs[0], xs[1], a["transpose_a"], a["transpose_b"]),
        arity=2, attrs_of=lambda op: {"transpose_a": op.attrs["transpose_a"],
                                      "transpose_b": op.attrs["transpose_b"]},
        shape=_matmul_shape, line=_matmul_line, smooth=True,
        simplify={"transposes": {0: "transpose_a", 1: "transpose_b"}, "seed": True})


def _check_square(op_name, m):
    if m.ndim < 2 or m.shape[-1] != m.shape[-2]:
        raise ValueError(f"{op_name}: needs square matrices in the last two axes, "
                         f"got shape {m.shape}")


def solve(matrix, rhs, adjoint=False, name=None):
    """X with matrix @ X = rhs (or matrix^H @ X = rhs when adjoint: the
    conjugate transpose, for real matrices the transpose)."""
    a, b = operands("linalg.solve", matrix, rhs)
    float_input("linalg.solve", a)
    _check_square("linalg.solve", a)
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        raise ValueError(f"linalg.solve: rhs must have shape (..., {a.shape[-1]}, K) "
                         f"for a matrix of shape {a.shape}, got {b.shape}")
    if adjoint and a._value.dtype.kind == "c":
        # the conjugate is an op of its own (differentiable), so a recorded
        # MatrixSolve with adjoint=True only ever transposes a real matrix
        return solve(matrix_transpose(conj(a)), b, name=name)
    try:
        value = _solve(a._value, b._value, bool(adjoint))
    except np.linalg.LinAlgError as e:
        raise np.linalg.LinAlgError(f"linalg.solve: matrix of shape {a.shape}: {e}") from None
    except ValueError:
        raise ValueError(f"linalg.solve: the batch dimensions of {a.shape} and "
                         f"{b.shape} cannot be broadcast together") from None
    return emit("MatrixSolve", value, (a, b), {"adjoint": bool(adjoint)}, name)


def _solve(a, b, adjoint):
    """The NumPy solve the op runs (compiled programs call it)."""
    value = np.linalg.solve(np.swapaxes(a, -1, -2) if adjoint else a, b)
    return value.astype(a.dtype, copy=False)


def _solve_grad(op, grad):
    """X = A^-1 B: dB = A^-H grad (one more solve), dA = -dB X^H (for real
    matrices the transposes; complex ones are conjugated, as TensorFlow's
    _MatrixSolveGrad)."""
    a, b = op.inputs
    x = op.outputs[0]
    adjoint = op.attrs["adjoint"]
    gb = solve(a, grad, adjoint=not adjoint)
    ga = None
    if op.needs[0]:
        ga = -matmul(x, conj(gb), transpose_b=True) if adjoint else \
            -matmul(gb, conj(x), transpose_b=True)
    nb = batch_ndim(op, grad)
    return (None if ga is None else unbroadcast(ga, a.shape, nb),
            unbroadcast(gb, b.shape, nb))


def _solve_jvp(op, ta, tb):
    """A X = B, so dA X + A dX = dB: dX = A^-1 (dB - dA X) (A^H for adjoint)."""
    a, b = op.inputs
    x = op.outputs[0]
    adjoint = op.attrs["adjoint"]
    ndim = x.ndim
    rhs = None if tb is None else lift(tb, b, ndim)
    if ta is not None:
        da_x = matmul(lift(ta, a, ndim), x, adjoint_a=adjoint)
        rhs = -da_x if rhs is None else rhs - da_x
    return solve(a, rhs, adjoint=adjoint)  # broadcasting with A gives X's full shape


def _solve_shape(shapes, attrs, declared):
    attr_bool(attrs, "adjoint")
    a, b = shapes
    if len(a) < 2 or len(b) < 2:
        raise ValueError("needs rank >= 2")
    batch = np.broadcast_shapes(a[:-2], b[:-2])
    if a[-1] != a[-2] or b[-2] != a[-1]:
        raise ValueError("needs square matrices and a right side with as many rows")
    return (batch + b[-2:],), math.prod(batch) * (a[-1] ** 3 + a[-1] ** 2 * b[-1])


declare("MatrixSolve", _solve_grad, _solve_jvp, arity=2,
        replay=lambda xs, attrs, out_shapes: solve(xs[0], xs[1], adjoint=attrs["adjoint"]),
        attrs_of=lambda op: {"adjoint": op.attrs["adjoint"]}, shape=_solve_shape,
        line="solve({0}, {1}, {adjoint})", word="solve", helpers={"solve": _solve},
        line_attrs=lambda attrs, out_shapes, in_dtypes: {"adjoint": bool(attrs["adjoint"])},
        singular=True, attr_kinds={"adjoint": "flag"})


def inv(input, adjoint=False, name=None):
    """A^-1 (its conjugate transpose when adjoint) of each square matrix."""
    a = float_input("linalg.inv", input)
    _check_square("linalg.inv", a)
    try:
        value = _inv(a._value)
    except np.linalg.LinAlgError as e:
        raise np.linalg.LinAlgError(f"linalg.inv: matrix of shape {a.shape}: {e}") from None
    out = emit("MatrixInverse", value, (a,), None, name)
    return matrix_transpose(conj(out)) if adjoint else out


def _inv(a):
    """The NumPy inverse the op runs (compiled programs call it)."""
    return np.linalg.inv(a).astype(a.dtype, copy=False)


def _inv_grad(op, grad):
    """d(A^-1) = -A^-1 dA A^-1, so dA = -A^-H grad A^-H (A^-T for real A)."""
    ainv = conj(op.outputs[0])
    return -matmul(matmul(ainv, grad, transpose_a=True), ainv, transpose_b=True)


def _inv_jvp(op, t):
    """d(A^-1) = -A^-1 dA A^-1."""
    ainv = op.outputs[0]
    return -matmul(matmul(ainv, t), ainv)


def _inv_shape(shapes, attrs, declared):
    a = shapes[0]
    if len(a) < 2:
        raise ValueError("needs rank >= 2")
    if a[-1] != a[-2]:
        raise ValueError("needs square matrices")
    return (tuple(a),), math.prod(a[:-2]) * a[-1] ** 3


declare("MatrixInverse", _inv_grad, _inv_jvp,
        replay=lambda xs, attrs, out_shapes: inv(xs[0]), shape=_inv_shape,
        line="inv({0})", word="inv", helpers={"inv": _inv}, singular=True)


# --- einsum ------------------------------------------------------------------

def einsum(equation, *inputs, name=None, **kwargs):
    """Einstein summation, e.g. `mt.einsum('bxby->bxy', j)` (repeated letters
    in an input take a diagonal)."""
    if not isinstance(equation, str):
        raise TypeError(f"einsum: the equation must be a string such as 'ij,jk->ik', "
                        f"got {type(equation).__name__} {equation!r}")
    if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = tuple(inputs[0])  # einsum(eq, [a, b]) as TensorFlow allows
    xs = [tensor_input("einsum", x) for x in inputs]
    if not xs:
        raise ValueError(f"einsum: {equation!r} needs at least one operand")
    if len({x.dtype for x in xs}) > 1:
        raise TypeError(f"einsum: operands have different dtypes "
                        f"{[str(x.dtype) for x in xs]}")
    ins, out = parse_subscripts(equation, [x.ndim for x in xs])
    explicit = ",".join(ins) + "->" + out
    try:
        value = np.einsum(explicit, *[x._value for x in xs])
    except ValueError as e:
        raise ValueError(f"einsum: {equation!r} does not fit shapes "
                         f"{[x.shape for x in xs]}: {e}") from None
    return emit("Einsum", np.asarray(value), tuple(xs),
                {"equation": explicit, "inputs": ins, "output": out}, name)


def _einsum_shape(shapes, attrs, declared):
    """(output shape, element operations): NumPy's einsum without `optimize`
    loops over every combination of the distinct indices."""
    equation = attrs["equation"]
    lhs, arrow, out = equation.partition("->")
    if not arrow:
        raise ValueError(f"equation {equation!r} is not explicit")
    subs = lhs.split(",")
    if len(subs) != len(shapes):
        raise ValueError(f"equation {equation!r} names {len(subs)} operands")
    sizes = {}
    for sub, shape in zip(subs, shapes):
        if len(sub) != len(shape) or not all(c.isascii() and c.isalpha() for c in sub):
            raise ValueError(f"subscripts {sub!r} do not fit shape {shape}")
        for c, n in zip(sub, shape):
            if sizes.setdefault(c, n) != n:
                raise ValueError(f"index {c!r} has sizes {sizes[c]} and {n}")
    if len(set(out)) != len(out) or any(c not in sizes for c in out):
        raise ValueError(f"output subscripts {out!r} are not distinct input indices")
    return (tuple(sizes[c] for c in out),), len(shapes) * math.prod(sizes.values())


# z = einsum(ins -> out, x_0, ..., x_n) is linear in each operand: the gradient
# for x_i is g contracted with the other operands, the output's and x_i's
# subscripts swapped; the tangent is the sum over i of the contraction with
# t_i in place of x_i (products.py applies conjugation, the masks of zero
# times inf, skipped inputs and batch dimensions)
declare("Einsum", *contraction_rules(
            lambda g, xs, i: Contraction([g] + xs[:i] + xs[i + 1:], xs[i].letters),
            lambda z, xs, i, t: Contraction(xs[:i] + [t] + xs[i + 1:], z.letters), einsum),
        arity=None,
        replay=lambda xs, attrs, out_shapes: einsum(attrs["equation"], *xs),
        attrs_of=lambda op: {"equation": op.attrs["equation"]}, shape=_einsum_shape,
        line="np.einsum({equation}, {inputs})",
        line_attrs=lambda attrs, out_shapes, in_dtypes: {"equation": attrs["equation"]},
        smooth=True, attr_kinds={"equation": "text"})
