"""Triangular solves and determinants: triangular_solve, cholesky_solve, det
and slogdet, with their gradient and JVP rules.

Sources for the rules: M. Giles, "An extended collection of matrix derivative
results for forward and reverse mode algorithmic differentiation" (2008), and
TensorFlow's linalg_grad.py. Leading batch dims broadcast as in matmul, so
the rules also take a leading batch of upstream gradients (vectorised
Jacobians) or of tangents.
"""
import collections
import math

import numpy as np

from ..core.context import state
from ..core.tape_entries import record
from ..core.registry import batch_ndim
from ..core.tensor import Tensor
from .broadcasting import lift, reshape, unbroadcast
from .operands import attr_bool, emit, float_input, matrix_shape, operands
from .declaration import declare
from .matmul_and_solve import inv, matmul, solve
from .matrices import band_part, trace


def emit_outputs(op_type, values, inputs, attrs=None, name=None):
    """`emit` for an op with several outputs (slogdet, qr, eigh, svd): one
    Tensor per NumPy value, recorded as one op."""
    outs = tuple(Tensor(v) for v in values)
    if state.tapes:
        record(op_type, inputs, outs, attrs, name)
    return outs


def real_matrix(op_name, x):
    """`x` as a float32/float64 tensor. Complex matrices are refused: these
    rules do not conjugate (TensorFlow accepts them; minitape would be wrong)."""
    x = float_input(op_name, x)
    if x._value.dtype.kind == "c":
        raise TypeError(f"{op_name}: complex matrices (dtype {x.dtype}) are not supported; "
                        "only float32 and float64")
    return x


def check_square(op_name, m):
    if m.ndim < 2 or m.shape[-1] != m.shape[-2]:
        raise ValueError(f"{op_name}: needs square matrices in the last two axes, "
                         f"got shape {m.shape}")


def _matrix_and_rhs(op_name, matrix, rhs):
    a, b = operands(op_name, matrix, rhs)
    real_matrix(op_name, a)
    check_square(op_name, a)
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        raise ValueError(f"{op_name}: rhs must have shape (..., {a.shape[-1]}, K) for a "
                         f"matrix of shape {a.shape}, got {b.shape}")
    try:
        np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"{op_name}: the batch dimensions of {a.shape} and {b.shape} "
                         "cannot be broadcast together") from None
    return a, b


# --- triangular_solve ------------------------------------------------------------

def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """X with T X = rhs, T the lower (or upper) triangle of `matrix` (T^T X =
    rhs when adjoint); the other triangle is never read. A zero on T's
    diagonal gives inf/NaN, as TensorFlow does."""
    a, b = _matrix_and_rhs("linalg.triangular_solve", matrix, rhs)
    lower, adjoint = bool(lower), bool(adjoint)
    t = np.tril(a._value) if lower else np.triu(a._value)
    if adjoint:  # T^T is triangular the other way round
        value = _substitute(np.swapaxes(t, -1, -2), b._value, not lower)
    else:
        value = _substitute(t, b._value, lower)
    return emit("MatrixTriangularSolve", value, (a, b), {"lower": lower, "adjoint": adjoint},
                name)


def _substitute(t, b, lower):
    """Forward (lower) or back (upper) substitution, one row at a time:
    x_i = (b_i - sum_j t_ij x_j) / t_ii over the rows already solved."""
    n = t.shape[-1]
    shape = np.broadcast_shapes(t.shape[:-2], b.shape[:-2]) + b.shape[-2:]
    x = np.zeros(shape, np.result_type(t, b))
    rows = range(n) if lower else range(n - 1, -1, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in rows:
            done = slice(0, i) if lower else slice(i + 1, n)
            s = b[..., i, :] - np.einsum("...j,...jk->...k", t[..., i, done], x[..., done, :])
            x[..., i, :] = s / t[..., i, i, None]
    return x


def _solved_triangle(op):
    lower = op.attrs["lower"]
    return (-1, 0) if lower else (0, -1)


def _triangular_solve_grad(op, grad):
    """As for solve (X = T^-1 B): dB = T^-T grad, dT = -dB X^T (or -X dB^T
    when adjoint), kept to the triangle that was read (Giles 2008, 2.3.1)."""
    a, b = op.inputs
    x = op.outputs[0]
    lower, adjoint = op.attrs["lower"], op.attrs["adjoint"]
    nb = batch_ndim(op, grad)
    gb = triangular_solve(a, grad, lower=lower, adjoint=not adjoint)
    ga = None
    if op.needs[0]:
        ga = -matmul(x, gb, transpose_b=True) if adjoint else -matmul(gb, x, transpose_b=True)
        ga = unbroadcast(band_part(ga, *_solved_triangle(op)), a.shape, nb)
    return ga, unbroadcast(gb, b.shape, nb)


def _triangular_solve_jvp(op, ta, tb):
    """T X = B, so dT X + T dX = dB: dX = T^-1 (dB - dT X), dT the triangle of dA."""
    a, b = op.inputs
    x = op.outputs[0]
    lower, adjoint = op.attrs["lower"], op.attrs["adjoint"]
    rhs = None if tb is None else lift(tb, b, x.ndim)
    if ta is not None:
        dt = band_part(lift(ta, a, x.ndim), *_solved_triangle(op))
        dt_x = matmul(dt, x, transpose_a=adjoint)
        rhs = -dt_x if rhs is None else rhs - dt_x
    return triangular_solve(a, rhs, lower=lower, adjoint=adjoint)


declare("MatrixTriangularSolve", _triangular_solve_grad, _triangular_solve_jvp,
        replay=lambda xs, a, o: triangular_solve(xs[0], xs[1], a["lower"], a["adjoint"]), arity=2,
        attrs_of=lambda op: {"lower": op.attrs["lower"], "adjoint": op.attrs["adjoint"]},
        shape=lambda shapes, a, declared: _triangular_solve_shape(*shapes, a))


def _triangular_solve_shape(matrix, rhs, attrs):
    """Substitution: n^2 k multiply-adds per matrix."""
    attr_bool(attrs, "lower"), attr_bool(attrs, "adjoint")
    batch, n, _ = matrix_shape(matrix, square=True)
    rhs_batch, rows, k = matrix_shape(rhs)
    if rows != n:
        raise ValueError(f"rhs of shape {rhs} for matrices of shape {matrix}")
    batch = np.broadcast_shapes(batch, rhs_batch)
    return (batch + (n, k),), math.prod(batch) * n * n * k


def cubic(shapes, attrs, declared):
    """(batch shape, n, work) for a stack of n x n matrices: a factorisation
    does about n^3 operations per matrix."""
    batch, n, _ = matrix_shape(shapes[0], square=True)
    return batch, n, math.prod(batch) * n ** 3


def cholesky_solve(chol, rhs, name=None):
    """X with A X = rhs, given A's Cholesky factor L (A = L L^T): two
    triangular solves, L Y = rhs then L^T X = Y (as TensorFlow; its rules are
    theirs)."""
    a, b = _matrix_and_rhs("linalg.cholesky_solve", chol, rhs)
    y = triangular_solve(a, b, lower=True)
    return triangular_solve(a, y, lower=True, adjoint=True, name=name)


# --- det and slogdet ---------------------------------------------------------------

def det(input, name=None):
    """The determinant of each matrix in the last two axes."""
    a = real_matrix("linalg.det", input)
    check_square("linalg.det", a)
    return emit("MatrixDeterminant", np.asarray(np.linalg.det(a._value), a.dtype), (a,),
                None, name)


def _as_matrices(x):
    """(...,) -> (..., 1, 1): a scalar per matrix, ready to scale it."""
    return reshape(x, x.shape + (1, 1))


def _det_grad(op, grad):
    """d det(A) = det(A) tr(A^-1 dA) (Jacobi's formula), so the gradient is
    grad det(A) A^-T. A singular matrix has no inverse: like TensorFlow's,
    this raises (LinAlgError) rather than returning a number."""
    a, d = op.inputs[0], op.outputs[0]
    return _as_matrices(grad * d) * inv(a, adjoint=True)


def _det_jvp(op, t):
    """Jacobi's formula: d det(A) = det(A) tr(A^-1 dA)."""
    a, d = op.inputs[0], op.outputs[0]
    return d * trace(solve(a, t))


def _det_shape(shapes, attrs, declared):
    batch, _, work = cubic(shapes, attrs, declared)
    return (batch,), work


declare("MatrixDeterminant", _det_grad, _det_jvp, replay=lambda xs, a, o: det(xs[0]),
        shape=_det_shape)


def slogdet(input, name=None):
    """(sign, log|det|) of each matrix: the determinant as sign * exp(logabsdet),
    without overflow. A singular matrix gives (0, -inf), as TensorFlow."""
    a = real_matrix("linalg.slogdet", input)
    check_square("linalg.slogdet", a)
    sign, logabs = np.linalg.slogdet(a._value)
    sign, logabs = np.asarray(sign, a.dtype), np.asarray(logabs, a.dtype)
    return LogMatrixDeterminant(*emit_outputs("LogMatrixDeterminant", (sign, logabs), (a,),
                                              None, name))


# TensorFlow's result type (a namedtuple named after the op)
LogMatrixDeterminant = collections.namedtuple("LogMatrixDeterminant",
                                              ["sign", "log_abs_determinant"])


def _slogdet_grad(op, grad_sign, grad_logabs):
    """d log|det A| = tr(A^-1 dA), so the gradient is grad A^-T; the sign is
    piecewise constant (no gradient). Singular A: raises, as TensorFlow."""
    return _as_matrices(grad_logabs) * inv(op.inputs[0], adjoint=True)


def _slogdet_jvp(op, t):
    return None, trace(solve(op.inputs[0], t))


def _slogdet_shape(shapes, attrs, declared):
    batch, _, work = cubic(shapes, attrs, declared)
    return (batch, batch), work


declare("LogMatrixDeterminant", _slogdet_grad, _slogdet_jvp,
        replay=lambda xs, a, o: slogdet(xs[0]), shape=_slogdet_shape)
