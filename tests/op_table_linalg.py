"""Op-table rows for the linear algebra family (ops/matrices.py, solvers.py,
decompositions.py, matrix_functions.py): every row gets finite differences to
third order, pfor vs loop Jacobians and Hessians, forward vs reverse and
compiled vs eager.

Inputs are well-conditioned: symmetric positive definite matrices for
Cholesky, distinct eigenvalues and singular values for eigh and svd. The
factors of a decomposition are defined only up to signs, so rows test
functions of them that do not depend on the signs (as TensorFlow's tests do),
and symmetric-input ops get their input symmetrised inside the row (their
forward reads one triangle; the rule returns a symmetric or one-triangle
gradient as TensorFlow does).
"""
import numpy as np

import minitape as mt
from minitape.core import registry
from op_table import M, R, case

la = mt.linalg
_rng = np.random.default_rng(2024)


def T(*shape):
    """Well-conditioned triangles: a diagonal away from zero, small entries off it."""
    n = shape[-1]
    return (2.0 + _rng.uniform(0, 1, shape[:-1])[..., None] * 0) * np.eye(n) + \
        0.3 * _rng.standard_normal(shape)


CASES = [
    # structural ops
    case("linalg.trace", la.trace, R(3, 3)),
    case("linalg.trace-batch-wide", la.trace, R(2, 2, 3)),
    case("linalg.diag", la.diag, R(3)),
    case("linalg.diag-batch-k1", lambda v: la.diag(v, k=1), R(2, 3)),
    case("linalg.diag-k-1-rect", lambda v: la.diag(v, k=-1, num_rows=4, num_cols=3), R(3)),
    case("linalg.diag_part", la.diag_part, R(3, 3)),
    case("linalg.diag_part-batch-k1", lambda x: la.diag_part(x, k=1), R(2, 3, 4)),
    case("linalg.set_diag", la.set_diag, R(3, 3), R(3)),
    case("linalg.set_diag-batch-k-1", lambda x, d: la.set_diag(x, d, k=-1), R(2, 3, 3), R(2, 2)),
    case("linalg.band_part", lambda x: la.band_part(x, 1, 0), R(3, 4)),
    case("linalg.band_part-upper", lambda x: la.band_part(x, 0, -1), R(2, 3, 3)),
    case("linalg.adjoint", la.adjoint, R(2, 3, 4)),
    case("linalg.matvec", la.matvec, R(3, 4), R(4)),
    case("linalg.matvec-batch-ta", lambda a, b: la.matvec(a, b, transpose_a=True),
         R(2, 4, 3), R(2, 4)),
    case("linalg.cross", la.cross, R(3), R(3)),
    case("linalg.cross-batch", la.cross, R(2, 3), R(2, 3)),
    case("matmul-adjoint_a", lambda a, b: mt.matmul(a, b, adjoint_a=True), R(3, 2), R(3, 4)),
    case("matmul-adjoint_b", lambda a, b: mt.matmul(a, b, adjoint_b=True), R(2, 3), R(4, 3)),
    # determinants and triangular solves
    case("linalg.det", la.det, M(3, 3)),
    case("linalg.det-batch", la.det, M(2, 3, 3)),
    case("linalg.slogdet", lambda a: la.slogdet(a)[1], M(3, 3)),
    case("linalg.slogdet-batch-negative", lambda a: la.slogdet(a)[1] * la.slogdet(a)[0],
         -M(2, 3, 3)),
    case("linalg.triangular_solve", la.triangular_solve, T(3, 3), R(3, 2)),
    case("linalg.triangular_solve-upper-adjoint",
         lambda a, b: la.triangular_solve(a, b, lower=False, adjoint=True), T(3, 3), R(3, 2)),
    case("linalg.triangular_solve-bcast", la.triangular_solve, T(3, 3), R(2, 3, 1)),
    case("linalg.triangular_solve-lower-adjoint-batch",
         lambda a, b: la.triangular_solve(a, b, adjoint=True), T(2, 3, 3), R(2, 3, 2)),
    case("linalg.cholesky_solve", la.cholesky_solve, T(3, 3), R(3, 2)),
]


def _spd(a):
    """A A^T + I: symmetric positive definite for any a."""
    return mt.matmul(a, a, transpose_b=True) + mt.eye(a.shape[-1], dtype=a.dtype)


def _sym(a):
    return a + la.adjoint(a)


def _gauge_free(*factors):
    """Squares of the entries of U or V: they do not depend on column signs."""
    total = None
    for x in factors:
        term = mt.reduce_sum(x * x, axis=-1)
        total = term if total is None else total + term
    return total


def S3(*shape):
    """Symmetric matrices with eigenvalues well apart (1, 2.5, 4, ...)."""
    n = shape[-1]
    q, _ = np.linalg.qr(_rng.standard_normal(shape))
    e = 1.0 + 1.5 * np.arange(n)
    half = (q * e[..., None, :]) @ np.swapaxes(q, -1, -2) / 2  # _sym doubles it
    return half


def W(*shape):
    """Matrices with singular values well apart."""
    m, n = shape[-2:]
    k = min(m, n)
    u, _ = np.linalg.qr(_rng.standard_normal(shape[:-2] + (m, k)))
    v, _ = np.linalg.qr(_rng.standard_normal(shape[:-2] + (n, k)))
    s = 1.0 + 1.2 * np.arange(k)[::-1]
    return (u * s[..., None, :]) @ np.swapaxes(v, -1, -2)


CASES += [
    case("linalg.cholesky", lambda a: la.cholesky(_spd(a)), M(3, 3)),
    case("linalg.cholesky-batch", lambda a: la.cholesky(_spd(a)), M(2, 3, 3)),
    case("linalg.logdet-via-cholesky", lambda a: mt.reduce_sum(
        mt.log(la.diag_part(la.cholesky(_spd(a))))), M(3, 3)),
    case("linalg.qr-q", lambda a: la.qr(a)[0], M(3, 3)),
    case("linalg.qr-r", lambda a: la.qr(a)[1], M(3, 3)),
    case("linalg.qr-deep", lambda a: la.qr(a)[0] + mt.reduce_sum(la.qr(a)[1]), W(4, 3)),
    case("linalg.qr-wide", lambda a: mt.reduce_sum(la.qr(a)[0], -1) + la.qr(a)[1][..., 0],
         W(3, 5)),
    case("linalg.qr-batch-r", lambda a: la.qr(a)[1], W(2, 4, 3)),
    case("linalg.eigh-e", lambda a: la.eigh(_sym(a))[0], S3(3, 3)),
    case("linalg.eigh-v", lambda a: _gauge_free(la.eigh(_sym(a))[1]), S3(3, 3)),
    case("linalg.eigh-batch", lambda a: la.eigh(_sym(a))[0][..., :1] +
         _gauge_free(la.eigh(_sym(a))[1]), S3(2, 3, 3)),
    case("linalg.eigh-lower-triangle", lambda a: la.eigh(a)[0], S3(3, 3) * 2),
    case("linalg.eigvalsh", lambda a: la.eigvalsh(_sym(a)), S3(3, 3)),
    case("linalg.eigvalsh-batch", lambda a: la.eigvalsh(_sym(a)), S3(2, 3, 3)),
    case("linalg.svd-s", lambda a: la.svd(a, compute_uv=False), W(3, 3)),
    case("linalg.svd-s-batch-wide", lambda a: la.svd(a, compute_uv=False), W(2, 2, 4)),
    case("linalg.svd-uv-square", lambda a: _gauge_free(*la.svd(a)[1:]), W(3, 3)),
    case("linalg.svd-deep", lambda a: mt.concat([la.svd(a)[0], la.svd(a)[1][:, 0] ** 2,
                                                  la.svd(a)[2][:, 1] ** 2], 0), W(4, 3)),
    case("linalg.svd-wide", lambda a: mt.concat([la.svd(a)[0], _gauge_free(la.svd(a)[1]),
                                                  _gauge_free(la.svd(a)[2])], 0), W(2, 4)),
    case("linalg.svd-batch-uvT", lambda a: mt.matmul(la.svd(a)[1], la.svd(a)[2],
                                                     transpose_b=True), W(2, 3, 3)),
]

CASES += [
    case("linalg.logdet", lambda a: la.logdet(_spd(a)), M(3, 3)),
    case("linalg.logdet-batch", lambda a: la.logdet(_spd(a)), M(2, 3, 3)),
    case("linalg.pinv-square", la.pinv, W(3, 3)),
    case("linalg.pinv-deep", la.pinv, W(4, 3)),
    case("linalg.pinv-wide-batch", la.pinv, W(2, 2, 3)),
    case("linalg.lstsq-deep", la.lstsq, W(4, 3), R(4, 2)),
    case("linalg.lstsq-wide", la.lstsq, W(2, 3), R(2, 1)),
    case("linalg.lstsq-l2-batch", lambda a, b: la.lstsq(a, b, l2_regularizer=0.5),
         W(2, 4, 3), R(2, 4, 2)),
    case("linalg.expm", la.expm, R(3, 3)),
    case("linalg.expm-batch-scaled", la.expm, 4 * R(2, 2, 2)),
]

CASES += [
    case("linalg.svd-full-deep", lambda a: mt.concat([
        mt.reshape(x ** 2, [-1]) for x in la.svd(a, full_matrices=True)], 0), W(3, 2)),
    case("linalg.svd-full-wide-batch", lambda a: mt.concat([
        mt.reshape(x ** 2, [2, -1]) for x in la.svd(a, full_matrices=True)], -1), W(2, 2, 3)),
]


# The spectral norm's second derivative goes through the SVD's rules (issue 30).
CASES += [
    case("norm-spectral", lambda a: mt.norm(a, ord=2, axis=[0, 1]), W(3, 2)),
    case("norm-spectral-batch-axes", lambda a: mt.norm(a, ord=2, axis=[2, 1]), W(2, 3, 3)),
]


# Complex matrices, from real and imaginary parts: the rows return real
# numbers that do not depend on the phases of the columns of V (or U and V
# together), the only freedom of the vectors of a complex eigh or svd.
def _unitary(n, k):
    q, _ = np.linalg.qr(_rng.standard_normal((n, k)) + 1j * _rng.standard_normal((n, k)))
    return q


def _parts(z):
    return np.stack([z.real, z.imag])


def _hermitian_parts():
    """Real and imaginary parts, halved, of a Hermitian matrix with eigenvalues
    -1, 0.5, 2 (the row adds each part to its (conjugate) transpose)."""
    q = _unitary(3, 3)
    return _parts(q @ np.diag([-1.0, 0.5, 2.0]) @ q.conj().T / 2)


def _complex_w(m, n):
    """The real and imaginary parts of a complex matrix with singular values well apart."""
    k = min(m, n)
    return _parts(_unitary(m, k) @ np.diag(1.0 + 1.2 * np.arange(k)[::-1])
                  @ _unitary(n, k).conj().T)


def _hermitian(p):
    return mt.complex(p[0] + mt.transpose(p[0]), p[1] - mt.transpose(p[1]))


def _gauge_free_c(*factors):
    """|entries|^2 of V (or U), flattened: free of the columns' phases."""
    return [mt.reshape(mt.math.real(x * mt.math.conj(x)), [-1]) for x in factors]


def _product_parts(u, s, v):
    y = mt.matmul(u * mt.cast(s, u.dtype), v, adjoint_b=True)
    return [mt.reshape(mt.math.real(y), [-1]), mt.reshape(mt.math.imag(y), [-1])]


CASES += [
    case("linalg.eigh-complex", lambda p: mt.concat(
        [mt.math.real(la.eigh(_hermitian(p))[0])] +
        _gauge_free_c(la.eigh(_hermitian(p))[1]), 0), _hermitian_parts()),
    case("linalg.eigh-complex-product", lambda p: mt.concat(_product_parts(
        la.eigh(_hermitian(p))[1], mt.constant([1.0, -2.0, 0.5]), la.eigh(_hermitian(p))[1]),
        0), _hermitian_parts()),
    case("linalg.eigvalsh-complex", lambda p: mt.math.real(la.eigvalsh(_hermitian(p))),
         _hermitian_parts()),
    case("linalg.svd-complex-s", lambda p: la.svd(mt.complex(p[0], p[1]), compute_uv=False),
         _complex_w(3, 2)),
    case("linalg.svd-complex-square", lambda p: mt.concat(
        [la.svd(mt.complex(p[0], p[1]))[0]] + _gauge_free_c(*la.svd(mt.complex(p[0], p[1]))[1:]) +
        _product_parts(la.svd(mt.complex(p[0], p[1]))[1], mt.constant([1.0, -2.0, 0.5]),
                       la.svd(mt.complex(p[0], p[1]))[2]), 0), _complex_w(3, 3)),
    case("linalg.svd-complex-deep", lambda p: mt.concat(
        _gauge_free_c(*la.svd(mt.complex(p[0], p[1]))[1:]) +
        _product_parts(la.svd(mt.complex(p[0], p[1]))[1], mt.constant([1.0, -2.0]),
                       la.svd(mt.complex(p[0], p[1]))[2]), 0), _complex_w(3, 2)),
    case("linalg.svd-complex-wide", lambda p: mt.concat(
        _gauge_free_c(*la.svd(mt.complex(p[0], p[1]))[1:]) +
        _product_parts(la.svd(mt.complex(p[0], p[1]))[1], mt.constant([1.0, -2.0]),
                       la.svd(mt.complex(p[0], p[1]))[2]), 0), _complex_w(2, 3)),
    case("linalg.svd-complex-full-deep", lambda p: mt.concat(_gauge_free_c(
        *la.svd(mt.complex(p[0], p[1]), full_matrices=True)[1:]), 0), _complex_w(3, 2)),
    case("norm-spectral-complex", lambda p: mt.norm(mt.complex(p[0], p[1]), ord=2,
                                                    axis=[0, 1]), _complex_w(3, 2)),
]


# eig's rules conjugate with TensorFlow's Conj and Real op types, whose own
# rules come with the complex-number family (ops/complex.py): where it is
# present, eig gets every check of the table. Its results are complex, so the
# rows take real parts; the matrices have real, distinct eigenvalues (real
# eigenvectors, whose only freedom, a sign, LAPACK fixes continuously here).
if registry.is_registered("Conj") and hasattr(mt.math, "real"):
    E3 = np.array([[2.0, 0.5, 0.1], [0.3, -1.0, 0.4], [0.2, 0.1, 0.5]])
    CASES += [
        case("linalg.eigvals", lambda a: mt.math.real(la.eigvals(a)), E3),
        case("linalg.eig", lambda a: mt.concat([mt.math.real(la.eig(a)[0]),
                                                 mt.reshape(mt.math.real(la.eig(a)[1]), [-1])],
                                                0), E3),
        case("linalg.eig-batch", lambda a: mt.math.real(la.eig(a)[1]),
             np.stack([E3, E3.T + 0.5 * np.eye(3)])),
    ]
