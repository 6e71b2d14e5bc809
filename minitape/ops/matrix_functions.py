"""Functions of matrices built on the decompositions: logdet, pinv, lstsq
and expm, with their gradient and JVP rules.

logdet and lstsq are compositions of Cholesky and triangular solves, as in
TensorFlow, so their rules are those of the ops they are made of. pinv and
expm are ops of their own, each with a rule a student can check on paper.
Sources: Golub & Pereyra, "The differentiation of pseudo-inverses" (1973);
Higham, "The scaling and squaring method for the matrix exponential
revisited" (2005); Mathias, "A chain rule for matrix functions" (1996) for the
block-matrix form of the exponential's derivative.
"""
import math

import numpy as np

from ..core.tensor import TensorLike
from .broadcasting import broadcast_to, reduce_sum, reshape
from .operands import attr_number, constant_like, emit, matrix_shape, packed_operand
from .creation import zeros
from .declaration import declare
from .decompositions import cholesky, svd
from .elementwise import less_equal, log, select
from .matmul_and_solve import matmul
from .matrices import diag_part
from .shapes import concat, matrix_transpose
from .solvers import check_square, cholesky_solve, cubic, real_matrix

_T = matrix_transpose


def logdet(matrix, name=None):
    """log det A of a symmetric positive definite A, as TensorFlow computes it:
    2 sum(log(diag(cholesky(A)))); d logdet(A) = tr(A^-1 dA). A matrix that is
    not positive definite raises (minitape's cholesky; TensorFlow: NaN)."""
    a = real_matrix("linalg.logdet", matrix)
    check_square("linalg.logdet", a)
    chol = cholesky(a)
    return 2.0 * reduce_sum(log(diag_part(chol)), axis=-1)


# --- lstsq ----------------------------------------------------------------------------

def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """X minimising ||A X - B||^2 + l2 ||X||^2, by the normal equations as
    TensorFlow's fast path: X = (A^T A + l2 I)^-1 A^T B for m >= n, and
    X = A^T (A A^T + l2 I)^-1 B for m < n (the smallest solution), through a
    Cholesky factor. Its rules are those of matmul, cholesky and the solves;
    a rank-deficient A raises there (TensorFlow: NaN). fast=False gives the
    smallest least-squares solution of any A, pinv(A) B, ignoring l2 as
    TensorFlow does (whose gradient then raises; this one has pinv's)."""
    a = real_matrix("linalg.lstsq", matrix)
    b = real_matrix("linalg.lstsq", rhs)
    if a.dtype != b.dtype:
        raise TypeError(f"linalg.lstsq: matrix and rhs have different dtypes, {a.dtype} "
                        f"and {b.dtype}")
    if a.ndim < 2 or b.ndim < 2 or a.shape[-2] != b.shape[-2]:
        raise ValueError(f"linalg.lstsq: needs matrix (..., M, N) and rhs (..., M, K), got "
                         f"{a.shape} and {b.shape}")
    if not fast:
        return matmul(pinv(a), b, name=name)
    m, n = a.shape[-2:]
    reg = _regularizer(l2_regularizer, a, min(m, n))
    if m >= n:
        gram = matmul(a, a, transpose_a=True) + reg
        return cholesky_solve(cholesky(gram), matmul(a, b, transpose_a=True), name=name)
    gram = matmul(a, a, transpose_b=True) + reg
    return matmul(a, cholesky_solve(cholesky(gram), b), transpose_a=True, name=name)


def _regularizer(l2, a, k):
    """l2 I (k x k) for the Gram matrix. A tensor l2 is multiplied in with an
    op, so the solution is differentiable in it (TensorFlow: gramian += l2 * I);
    a number gives a constant."""
    eye = np.eye(k, dtype=a.dtype)
    if not isinstance(l2, TensorLike):
        return constant_like(float(l2) * eye)
    l2 = packed_operand("linalg.lstsq", l2, a)  # the matrix's dtype, or a TypeError
    if l2.ndim != 0:
        raise ValueError(f"linalg.lstsq: l2_regularizer must be a scalar, got shape "
                         f"{l2.shape}")
    return l2 * constant_like(eye)


# --- pinv -------------------------------------------------------------------------------

def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse A+ (singular values at or below
    rcond * the largest are treated as 0; rcond defaults to 10 max(m, n) eps,
    as TensorFlow)."""
    x = real_matrix("linalg.pinv", a)
    if x.ndim < 2:
        raise ValueError(f"linalg.pinv: needs rank >= 2, got shape {x.shape}")
    if rcond is None:
        rcond = 10.0 * max(x.shape[-2:]) * np.finfo(x.dtype).eps
    value = np.linalg.pinv(x._value, rcond=float(rcond)).astype(x.dtype, copy=False)
    return emit("MatrixPinv", value, (x,), {"rcond": float(rcond)}, name)


def _nan_if_rank_deficient(op, total):
    """`total`, NaN for each matrix of the batch whose rank is below full (A+
    jumps there, so it has no derivative). Made of recorded ops (an svd and a
    comparison), so a traced function checks each call's matrix."""
    a = op.inputs[0]
    if min(a.shape[-2:]) == 0:
        return total
    s = svd(a, compute_uv=False)
    low = less_equal(s[..., -1], op.attrs["rcond"] * s[..., 0])
    return select(reshape(low, low.shape + (1, 1)), np.array(np.nan, total.dtype), total)


def _eye(n, dtype):
    return constant_like(np.eye(n, dtype=dtype))


def _pinv_grad(op, grad):
    """Golub & Pereyra: for A of constant rank, with X = A+,
    dX = -X dA X + X X^T dA^T (I - A X) + (I - X A) dA^T X^T X, whose adjoint is
    grad_A = -X^T G X^T + (I - A X) G^T X X^T + X^T X G^T (I - X A).
    A rank-deficient A gives NaN (TensorFlow, through its SVD: a finite number)."""
    a, x = op.inputs[0], op.outputs[0]
    m, n = a.shape[-2:]
    gt = _T(grad)
    left = _eye(m, a.dtype) - matmul(a, x)
    right = _eye(n, a.dtype) - matmul(x, a)
    total = -matmul(matmul(x, grad, transpose_a=True), x, transpose_b=True) \
        + matmul(matmul(left, gt), matmul(x, x, transpose_b=True)) \
        + matmul(matmul(x, x, transpose_a=True), matmul(gt, right))
    return _nan_if_rank_deficient(op, total)


def _pinv_jvp(op, t):
    """dX = -X dA X + X X^T dA^T (I - A X) + (I - X A) dA^T X^T X."""
    a, x = op.inputs[0], op.outputs[0]
    m, n = a.shape[-2:]
    tt = _T(t)
    left = _eye(m, a.dtype) - matmul(a, x)
    right = _eye(n, a.dtype) - matmul(x, a)
    total = -matmul(matmul(x, t), x) \
        + matmul(matmul(x, x, transpose_b=True), matmul(tt, left)) \
        + matmul(matmul(right, tt), matmul(x, x, transpose_a=True))
    return _nan_if_rank_deficient(op, total)


def _pinv_shape(shapes, attrs, declared):
    """(..., n, m) through an SVD: about 10 m n max(m, n) operations."""
    attr_number(attrs, "rcond")
    batch, m, n = matrix_shape(shapes[0])
    return (batch + (n, m),), 10 * math.prod(batch) * m * n * max(m, n, 1)


declare("MatrixPinv", _pinv_grad, _pinv_jvp, replay=lambda xs, a, o: pinv(xs[0], a["rcond"]),
        attrs_of=lambda op: {"rcond": op.attrs["rcond"]}, shape=_pinv_shape)


# --- expm ---------------------------------------------------------------------------------

# Higham (2005): the [13/13] Pade approximant, accurate to double precision for
# matrices whose 1-norm is at most theta_13; larger ones are scaled by 2^-s and
# the result squared s times (e^A = (e^(A / 2^s))^(2^s)).
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
           1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
           33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _expm_value(a):
    if a.size == 0:
        return a.copy()
    norm = np.abs(a).sum(axis=-2).max()
    s = max(0, int(np.ceil(np.log2(norm / _THETA13)))) if norm > _THETA13 else 0
    a = a / 2.0 ** s
    b = _PADE13
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
             + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + \
        b[2] * a2 + b[0] * eye
    r = np.linalg.solve(v - u, v + u)
    for _ in range(s):
        r = r @ r
    return r


def expm(input, name=None):
    """The matrix exponential e^A = I + A + A^2/2! + ... of each square matrix."""
    a = real_matrix("linalg.expm", input)
    check_square("linalg.expm", a)
    return emit("MatrixExponential", _expm_value(a._value).astype(a.dtype, copy=False), (a,),
                None, name)


def _frechet(a, e):
    """L(A, E), the derivative of e^A in the direction E, read off one bigger
    exponential: expm([[A, E], [0, A]]) = [[e^A, L(A, E)], [0, e^A]]. It is
    made of ops (an expm of the block matrix), so it differentiates again."""
    n = a.shape[-1]
    a = broadcast_to(a, e.shape)
    top = concat([a, e], axis=-1)
    bottom = concat([zeros(e.shape, e.dtype), a], axis=-1)
    return expm(concat([top, bottom], axis=-2))[..., :n, n:]


def _expm_grad(op, grad):
    """<G, L(A, E)> = <L(A^T, G), E>, so grad_A = L(A^T, G). Defined everywhere."""
    return _frechet(_T(op.inputs[0]), grad)


def _expm_jvp(op, t):
    """d e^A = L(A, dA)."""
    return _frechet(op.inputs[0], t)


def _expm_shape(shapes, attrs, declared):
    """About 7 matrix products and a solve, then one product per squaring; the
    squarings depend on the values (log2 of the norm over theta_13), so count
    the most a finite matrix of the widest float can need (about 1030)."""
    _, n, work = cubic(shapes, attrs, declared)
    squarings = int(np.log2(np.finfo(np.float64).max / _THETA13)) + 1
    return (shapes[0],), (8 + squarings) * work


declare("MatrixExponential", _expm_grad, _expm_jvp, replay=lambda xs, a, o: expm(xs[0]),
        shape=_expm_shape)
