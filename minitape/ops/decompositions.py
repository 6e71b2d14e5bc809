"""Matrix decompositions: cholesky, qr, eigh, eigvalsh, svd, eig and eigvals,
with their gradient and JVP rules.

Sources: M. Giles, "An extended collection of matrix derivative results for
forward and reverse mode algorithmic differentiation" (2008); C. Ionescu, O.
Vantzos, C. Sminchisescu, "Matrix backpropagation for deep networks with
structured layers" (2015); S. Murray, "Differentiation of the Cholesky
decomposition" (2016); D. Roberts, L. Roberts, "QR and LQ decomposition matrix
backpropagation algorithms" (2020); J. Townsend, "Differentiating the singular
value decomposition" (2016); and TensorFlow's linalg_grad.py.

Where the rules fail. Eigenvectors (and singular vectors) of a repeated
eigenvalue (singular value) are any basis of its eigenspace, so their
derivative does not exist: the rules divide by e_j - e_i = 0. Even a loss that
does not depend on the basis (V diag(e) V^T) leaves 0/0 there, whose limit the
rule cannot see. minitape gives NaN for a tied pair when anything flows to
those vectors, and 0 only when nothing does (the vectors unused); TensorFlow
gives 0 in every case (its `_SafeReciprocal`), a silently wrong number when
something flows (for V diag(e) V^T at the identity it drops the off-diagonal).
The tied values themselves are sorted, so they have a kink: a loss that weighs
them alike is smooth (their sum), one that does not gets NaN (TensorFlow: the
formula's number). Cholesky of a matrix that is not positive definite raises LinAlgError
(TensorFlow returns NaNs).

Sign conventions: the factors are unique only up to the signs of the columns
of Q, V, U (minitape takes NumPy's LAPACK answer, as TensorFlow takes its
own), so tests compare functions of them that do not depend on the signs.
"""
import collections
import math

import numpy as np

from .broadcasting import reduce_sum, reshape
from .complex import conj, real
from .operands import attr_bool, constant_like, emit, float_input, matrix_shape
from .declaration import declare
from .elementwise import cast, equal, greater, not_equal, select
from .matmul_and_solve import matmul, solve
from .matrices import band_part, diag, diag_part, set_diag
from .shapes import concat, expand_dims, matrix_transpose
from .solvers import check_square, cubic, emit_outputs, real_matrix, triangular_solve

_T = matrix_transpose


def _H(x):
    """The conjugate transpose X^H (for a real matrix, the transpose: nothing
    more is recorded)."""
    return matrix_transpose(x, conjugate=True)


def _as(x, like):
    """`x` in `like`'s dtype: a real tensor (singular values, gaps) meeting
    complex ones. Nothing is recorded when the dtypes agree."""
    return cast(x, like.dtype)


def _sym_lower(da):
    """The symmetric (Hermitian) matrix whose lower triangle is that of `da`
    (what an op that reads only the lower triangle sees): tril(dA) +
    tril(dA, -1)^H, with the real part of the diagonal (LAPACK ignores the rest)."""
    low = band_part(da, -1, 0)
    return low + _H(low) - diag(_as(real(diag_part(low)), da))


def _phi(x):
    """Phi(X): the lower triangle of X with its diagonal halved."""
    low = band_part(x, -1, 0)
    return set_diag(low, 0.5 * diag_part(low))


def _lower_gradient(g):
    """The gradient for an op that reads the lower triangle of a symmetric
    (Hermitian) matrix, from g, the gradient as if both triangles were read:
    each off-diagonal entry stands for two (g + g^H), the diagonal for itself
    (its real part)."""
    return _phi(g + _H(g))


# The masks below are made of recorded comparisons (not NumPy on the values),
# so a traced function (mt.function) checks the values of each call, not
# those it was traced with.

def _and(a, b):
    return select(a, b, a)


def _or(a, b):
    return select(a, a, b)


def _inverse_gaps(e):
    """F with F_ij = 1 / (e_j - e_i), and 0 on the diagonal and wherever
    e_i == e_j; `ties` marks the off-diagonal ties. The division is by a safe
    copy, so the derivatives of F are finite too."""
    d = expand_dims(e, -2) - expand_dims(e, -1)
    zero, one = np.zeros((), e.dtype), np.ones((), e.dtype)
    same = equal(d, zero)
    f = select(same, zero, 1.0 / select(same, one, d))
    ties = _and(same, constant_like(~np.eye(e.shape[-1], dtype=bool)))
    return f, ties


def _undefined_at_ties(term, ties, *flows):
    """`term`, NaN where eigenvalues tie and one of `flows` (what reaches the
    pair's vectors) is not 0 at (i, j) or (j, i): there the derivative does not
    exist (see the module docstring)."""
    moving = None
    for x in flows:
        m = not_equal(x, np.zeros((), x.dtype))
        moving = m if moving is None else _or(moving, m)
    return _nan_where(term, _and(ties, _or(moving, _T(moving))))


def _tied_values(ties, weights, p=None):
    """The tied pairs (i, j) at which the eigenvalues (singular values)
    themselves have no derivative. Sorted values that tie are not
    differentiable: perturbed, they split, and which one goes up depends on
    the direction. A loss that weighs them alike (ge_i == ge_j) is smooth
    there, so reverse mode needs equal `weights`; a tangent must move the tied
    block as c I (P_ij == 0, P_ii == P_jj), else the JVP is NaN too."""
    bad = _and(ties, not_equal(expand_dims(weights, -1), expand_dims(weights, -2)))
    if p is not None:
        bad = _or(bad, _and(ties, not_equal(p, np.zeros((), p.dtype))))
    return bad


def _nan_where(term, bad):
    """`term` with NaN where the boolean tensor `bad` is True."""
    nan = np.array(np.nan, term.dtype)
    return select(bad, nan, term)


# --- Cholesky --------------------------------------------------------------------------

def cholesky(input, name=None):
    """L, lower triangular with a positive diagonal, with L L^T = A, for
    symmetric positive definite A (only A's lower triangle is read). A matrix
    that is not positive definite raises LinAlgError (TensorFlow: NaNs)."""
    a = real_matrix("linalg.cholesky", input)
    check_square("linalg.cholesky", a)
    try:
        value = np.linalg.cholesky(a._value)
    except np.linalg.LinAlgError:
        raise np.linalg.LinAlgError(
            f"linalg.cholesky: a matrix of shape {a.shape} is not positive definite "
            "(TensorFlow would return NaNs)") from None
    return emit("Cholesky", value, (a,), None, name)


def _cholesky_grad(op, grad):
    """A = L L^T: dA = dL L^T + L dL^T, so dL = L Phi(L^-1 dA L^-T). Its
    adjoint: grad_A = sym(L^-T Phi(L^T grad) L^-1) (Murray 2016), symmetric,
    as TensorFlow returns it."""
    lo = op.outputs[0]
    m = _phi(matmul(lo, grad, transpose_a=True))
    p = triangular_solve(lo, m, adjoint=True)                  # L^-T M
    s = _T(triangular_solve(lo, _T(p), adjoint=True))          # L^-T M L^-1
    return 0.5 * (s + _T(s))


def _cholesky_jvp(op, t):
    """dL = L Phi(L^-1 dA L^-T), dA symmetrised as the gradient is."""
    lo = op.outputs[0]
    y = triangular_solve(lo, 0.5 * (t + _T(t)))               # L^-1 dA
    x = _T(triangular_solve(lo, _T(y)))                        # L^-1 dA L^-T
    return matmul(lo, _phi(x))


declare("Cholesky", _cholesky_grad, _cholesky_jvp, replay=lambda xs, a, o: cholesky(xs[0]),
        shape=lambda shapes, a, declared: ((shapes[0],), cubic(shapes, a, declared)[2]))


# --- QR ----------------------------------------------------------------------------------

def qr(input, full_matrices=False, name=None):
    """(Q, R) with A = Q R, Q with orthonormal columns and R upper triangular."""
    a = real_matrix("linalg.qr", input)
    if a.ndim < 2:
        raise ValueError(f"linalg.qr: needs rank >= 2, got shape {a.shape}")
    q, r = np.linalg.qr(a._value, mode="complete" if full_matrices else "reduced")
    return Qr(*emit_outputs("Qr", (q, r), (a,), {"full_matrices": bool(full_matrices)}, name))


Qr = collections.namedtuple("Qr", ["q", "r"])  # TensorFlow's result type


def _times_r_inverse(x, r):
    """X R^-1 for upper triangular R: (R^-T X^T)^T."""
    return _T(triangular_solve(r, _T(x), lower=False, adjoint=True))


def _times_r_inverse_t(x, r):
    """X R^-T for upper triangular R: (R^-1 X^T)^T."""
    return _T(triangular_solve(r, _T(x), lower=False))


def _qr_deep_grad(q, r, dq, dr):
    """m >= n (Roberts & Roberts 2020, as TensorFlow):
    M = tril(Q^T dQ - dQ^T Q + R dR^T - dR R^T),
    grad_A = Q (dR + M R^-T) + (dQ - Q Q^T dQ) R^-T."""
    qdq = matmul(q, dq, transpose_a=True)
    rdr = matmul(r, dr, transpose_b=True)
    m = band_part(qdq - _T(qdq) + rdr - _T(rdr), -1, 0)
    return matmul(q, dr + _times_r_inverse_t(m, r)) + \
        _times_r_inverse_t(dq - matmul(q, qdq), r)


def _qr_checked(op):
    q, r = op.outputs
    m, n = op.inputs[0].shape[-2:]
    if op.attrs["full_matrices"] and m > n:
        raise NotImplementedError(
            f"linalg.qr: no gradient for full_matrices=True when rows > columns (shape "
            f"{op.inputs[0].shape}), as in TensorFlow; use full_matrices=False")
    return q, r, m, n


def _qr_grad(op, dq, dr):
    """Square and deep A: `_qr_deep_grad`. Wide A = [X, Y] (m < n): R = [U, V]
    with X = Q U (a square QR) and Y = Q V, so V = Q^T Y sends dQ += Y dV^T
    and dY = Q dV."""
    q, r, m, n = _qr_checked(op)
    if m >= n:
        return _qr_deep_grad(q, r, dq, dr)
    a = op.inputs[0]
    y, u = a[..., :, m:], r[..., :, :m]
    du, dv = dr[..., :, :m], dr[..., :, m:]
    dx = _qr_deep_grad(q, u, dq + matmul(y, dv, transpose_b=True), du)
    return concat([dx, matmul(q, dv)], axis=-1)


def _qr_deep_jvp(q, r, da):
    """dA = dQ R + Q dR: with B = dA R^-1 and C = Q^T B, Q^T dQ = Omega is
    antisymmetric and dR R^-1 upper triangular, so Omega = tril(C, -1) -
    tril(C, -1)^T, dR = (C - Omega) R and dQ = B - Q (C - Omega)."""
    b = _times_r_inverse(da, r)
    c = matmul(q, b, transpose_a=True)
    low = band_part(c, -1, 0) - diag(diag_part(c))
    upper = c - low + _T(low)                                 # C - Omega
    return b - matmul(q, upper), matmul(upper, r)


def _qr_jvp(op, t):
    q, r, m, n = _qr_checked(op)
    if m >= n:
        return _qr_deep_jvp(q, r, t)
    dq, du = _qr_deep_jvp(q, r[..., :, :m], t[..., :, :m])
    dv = matmul(q, t[..., :, m:] - matmul(dq, r[..., :, m:]), transpose_a=True)
    return dq, concat([du, dv], axis=-1)


def _qr_shape(shapes, attrs, declared):
    """Q (m, m or k) and R (m or k, n), k = min(m, n): about m n k operations."""
    batch, m, n = matrix_shape(shapes[0])
    k = min(m, n)
    cols = m if attr_bool(attrs, "full_matrices") else k
    return (batch + (m, cols), batch + (cols, n)), math.prod(batch) * m * n * max(k, 1)


declare("Qr", _qr_grad, _qr_jvp, replay=lambda xs, a, o: qr(xs[0], a["full_matrices"]),
        attrs_of=lambda op: {"full_matrices": op.attrs["full_matrices"]}, shape=_qr_shape)


# --- eigh and eigvalsh --------------------------------------------------------------

def eigh(tensor, name=None):
    """(e, V): the eigenvalues (ascending) and orthonormal eigenvectors (the
    columns of V) of symmetric A = V diag(e) V^T, or Hermitian A = V diag(e)
    V^H; only A's lower triangle is read. As in TensorFlow, e has A's dtype
    (complex, with zero imaginary parts, for a complex A)."""
    a = float_input("linalg.eigh", tensor)
    check_square("linalg.eigh", a)
    e, v = np.linalg.eigh(a._value)
    return emit_outputs("SelfAdjointEigV2", (e.astype(a.dtype), v), (a,),
                        {"compute_v": True}, name)


def eigvalsh(tensor, name=None):
    """The eigenvalues of symmetric (Hermitian) A, ascending, from its lower
    triangle; of A's dtype, as in TensorFlow."""
    a = float_input("linalg.eigvalsh", tensor)
    check_square("linalg.eigvalsh", a)
    return emit("SelfAdjointEigV2", np.linalg.eigvalsh(a._value).astype(a.dtype), (a,),
                {"compute_v": False}, name)


def _eigh_grad(op, ge, gv=None):
    """de_i = v_i^H dA v_i and dV = V (F o V^H dA V), F_ij = 1/(e_j - e_i)
    (Giles 2008, 3.1; Ionescu 2015), so grad_A = V (diag(ge) + F o V^H gV) V^H,
    then folded onto the lower triangle that was read. Complex A: each column
    of V is defined up to a phase, and F's zero diagonal leaves out the part
    of V^H gV that only turns the phases (as TensorFlow and autograd).
    Eigenvalues alone (eigvalsh): V diag(ge) V^H, defined at tied eigenvalues
    only for equal weights ge_i == ge_j (else NaN; TensorFlow: the formula's
    number)."""
    e = op.outputs[0]
    f, ties = _inverse_gaps(e)
    if not op.attrs["compute_v"]:
        _, v = eigh(op.inputs[0])
        mid = diag(ge)
    else:
        v = op.outputs[1]
        k = matmul(v, gv, adjoint_a=True)
        mid = _undefined_at_ties(diag(ge) + f * k, ties, k)
    mid = _nan_where(mid, _tied_values(ties, ge))
    return _lower_gradient(matmul(matmul(v, mid), v, adjoint_b=True))


def _eigh_jvp(op, t):
    """P = V^H dA V (dA made symmetric, or Hermitian, from its lower
    triangle): de = diag(P) (real), dV = V (F o P) (no turn of the phases)."""
    e = op.outputs[0]
    v = op.outputs[1] if op.attrs["compute_v"] else eigh(op.inputs[0])[1]
    p = matmul(matmul(v, _sym_lower(t), adjoint_a=True), v)
    f, ties = _inverse_gaps(e)
    de = _as(real(_values_jvp(p, ties)), e)
    if not op.attrs["compute_v"]:
        return de
    return de, matmul(v, _undefined_at_ties(f * p, ties, p))


def _values_jvp(p, ties):
    """diag(P), NaN for tied values that the tangent splits (`_tied_values`)."""
    d = diag_part(p)
    split = reduce_sum(cast(_tied_values(ties, d, p), np.float64), axis=-1)
    return _nan_where(d, greater(split, 0.0))


def _eig_shape(shapes, attrs, declared):
    """Eigenvalues (..., n), and eigenvectors (..., n, n) with compute_v:
    about 10 n^3 operations (Hessenberg or tridiagonal form, then QR sweeps)."""
    batch, n, work = cubic(shapes, attrs, declared)
    values = batch + (n,)
    return ((values, shapes[0]) if attr_bool(attrs, "compute_v") else (values,)), 10 * work


declare("SelfAdjointEigV2", _eigh_grad, _eigh_jvp,
        replay=lambda xs, a, o: eigh(xs[0]) if a["compute_v"] else eigvalsh(xs[0]),
        attrs_of=lambda op: {"compute_v": op.attrs["compute_v"]}, shape=_eig_shape)


# --- SVD ----------------------------------------------------------------------------------

def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """(s, U, V) with A = U diag(s) V^H (TensorFlow's order, and V, not V^H),
    s descending and real (also for a complex A); only s when compute_uv=False."""
    a = float_input("linalg.svd", tensor)
    if a.ndim < 2:
        raise ValueError(f"linalg.svd: needs rank >= 2, got shape {a.shape}")
    attrs = {"full_matrices": bool(full_matrices), "compute_uv": bool(compute_uv)}
    if not compute_uv:
        return emit("Svd", np.linalg.svd(a._value, compute_uv=False), (a,), attrs, name)
    u, s, vh = np.linalg.svd(a._value, full_matrices=bool(full_matrices))
    v = np.swapaxes(vh, -1, -2)
    return emit_outputs("Svd", (s, u, np.conj(v) if v.dtype.kind == "c" else v), (a,),
                        attrs, name)


def _svd_checked(op):
    """With full_matrices=True, the columns of U (or V) past min(m, n) are a
    basis of a null space: unique (up to sign) only when it has one dimension,
    so, as TensorFlow, the rules need |m - n| <= 1."""
    m, n = op.inputs[0].shape[-2:]
    if op.attrs["full_matrices"] and abs(m - n) > 1:
        raise NotImplementedError(
            f"linalg.svd: no gradient for full_matrices=True when the sizes differ by "
            f"more than 1 (shape {op.inputs[0].shape}), as in TensorFlow; use "
            "full_matrices=False")
    return m, n


def _divided_by_s(x, s):
    """diag(1/s) X, NaN in the rows where s = 0 and X is not 0 (the singular
    vectors of a rank-deficient matrix have no derivative there)."""
    zero = expand_dims(equal(s, np.zeros((), s.dtype)), -1)
    safe = select(zero, np.ones((), s.dtype), expand_dims(s, -1))
    return _nan_where(x / _as(safe, x), _and(zero, not_equal(x, np.zeros((), x.dtype))))


def _phase_turn(d, s):
    """diag(i Im(d) / s), the part of a complex SVD's derivative that turns the
    phases of a column of U against V's (d: diag(U^H dA V) or diag(V^H gV))."""
    return _divided_by_s(diag(0.5 * (d - conj(d))), s)


def _svd_grad(op, gs, gu=None, gv=None):
    """Townsend 2016, as TensorFlow (for m <= n; m > n works on A^H):
    with F_ij = 1/(s_j^2 - s_i^2), J = F o (U^H gU), K = F o (V^H gV),
    grad_A = U [diag(gs) + (J + J^H) S + S (K + K^H)] V^H
             + U S^-1 (gV^H - gV^H V V^H)   (the part outside V's span, m < n),
    less U S^-1 V^H gV2 V2^H for the extra column V2 of full_matrices.
    Complex A: a column of U and the same column of V can turn their phases
    together; what turns one against the other adds U S^-1 i Im(diag(K')) V^H,
    K' = V^H gV with its diagonal (TensorFlow's term, Wan and Zhang 2019).
    s alone (compute_uv=False) has the gradient U diag(gs) V^H."""
    a = op.inputs[0]
    if not op.attrs["compute_uv"]:
        _, u, v = svd(a)
        _, ties = _inverse_gaps(op.outputs[0])
        mid = _nan_where(diag(_as(gs, a)), _tied_values(ties, gs))
        return matmul(matmul(u, mid), v, adjoint_b=True)
    m, n = _svd_checked(op)
    s, u, v = op.outputs
    deep = m > n
    if deep:  # A^H = V S U^H
        m, n, u, v, gu, gv = n, m, v, u, gv, gu
    if v.shape[-1] > m:  # full_matrices: V = [V1, V2]
        v, v2, gv, gv2 = v[..., :, :m], v[..., :, m:], gv[..., :, :m], gv[..., :, m:]
    f, ties = _inverse_gaps(s * s)
    ku, kv = matmul(u, gu, adjoint_a=True), matmul(v, gv, adjoint_a=True)
    ju, jv = _as(f, ku) * ku, _as(f, kv) * kv
    sm = expand_dims(_as(s, ku), -2)  # X * sm = X S; S X = X * transposed sm
    middle = diag(_as(gs, ku)) + (ju + _H(ju)) * sm + _T(sm) * (jv + _H(jv))
    if a.dtype.kind == "c":
        middle = middle - _phase_turn(diag_part(kv), s)
    middle = _undefined_at_ties(middle, ties, ku, kv)
    middle = _nan_where(middle, _tied_values(ties, gs))
    grad = matmul(matmul(u, middle), v, adjoint_b=True)
    if m < n:
        gvt = _H(gv)
        outside = gvt - matmul(matmul(gvt, v), v, adjoint_b=True)
        if op.attrs["full_matrices"]:
            outside = outside - matmul(matmul(v, gv2, adjoint_a=True), v2, adjoint_b=True)
        grad = grad + matmul(u, _divided_by_s(outside, s))
    return _H(grad) if deep else grad


def _svd_jvp(op, t):
    """For m >= n (else on A^H): dP = U^H dA V, ds = Re diag(dP),
    dU = U (F o (dP S + S dP^H)) + (I - U U^H) dA V S^-1,
    dV = V (F o (S dP + dP^H S)), F_ij = 1/(s_j^2 - s_i^2); the extra column
    U2 of full_matrices (A^H U2 = 0) moves by dU2 = -U1 S^-1 V^H dA^H U2.
    Complex A: i Im(dP_ii) / s_i turns the phase of column i of V against U's
    (of U, for a matrix that is not square), as the gradient above has it."""
    a = op.inputs[0]
    s = op.outputs[0]
    if not op.attrs["compute_uv"]:
        _, u, v = svd(a)
        dp = matmul(matmul(u, t, adjoint_a=True), v)
        _, ties = _inverse_gaps(s)
        return _as(_values_jvp(0.5 * (dp + _H(dp)), ties), s)
    _svd_checked(op)
    s, u, v = op.outputs
    wide = a.shape[-2] < a.shape[-1]
    if wide:
        u, v, t = v, u, _H(t)
    u2 = None
    if u.shape[-1] > v.shape[-1]:  # full_matrices: U = [U1, U2]
        u, u2 = u[..., :, :v.shape[-1]], u[..., :, v.shape[-1]:]
    dp = matmul(matmul(u, t, adjoint_a=True), v)
    f, ties = _inverse_gaps(s * s)
    f, sm = _as(f, dp), expand_dims(_as(s, dp), -2)
    left, right = dp * sm + _T(sm) * _H(dp), _T(sm) * dp + _H(dp) * sm
    tv = matmul(t, v)
    outside = tv - matmul(u, matmul(u, tv, adjoint_a=True))
    du = matmul(u, _undefined_at_ties(f * left, ties, left)) + \
        _T(_divided_by_s(_T(outside), s))
    dv = matmul(v, _undefined_at_ties(f * right, ties, right))
    if a.dtype.kind == "c":
        turn = _phase_turn(diag_part(dp), s)
        if a.shape[-2] == a.shape[-1]:
            dv = dv - matmul(v, turn)
        else:
            du = du + matmul(u, turn)
    if u2 is not None:
        du2 = -matmul(u, _divided_by_s(matmul(v, matmul(t, u2, adjoint_a=True),
                                              adjoint_a=True), s))
        du = concat([du, du2], axis=-1)
    ds = _as(_values_jvp(0.5 * (dp + _H(dp)), ties), s)
    return (ds, dv, du) if wide else (ds, du, dv)


def _svd_shape(shapes, attrs, declared):
    """s (..., k), and U (..., m, m or k), V (..., n, n or k) with compute_uv,
    k = min(m, n): about 10 m n max(m, n) operations."""
    batch, m, n = matrix_shape(shapes[0])
    k = min(m, n)
    full, uv = attr_bool(attrs, "full_matrices"), attr_bool(attrs, "compute_uv")
    work = 10 * math.prod(batch) * m * n * max(m, n, 1)
    if not uv:
        return (batch + (k,),), work
    return (batch + (k,), batch + (m, m if full else k), batch + (n, n if full else k)), work


declare("Svd", _svd_grad, _svd_jvp,
        replay=lambda xs, a, o: svd(xs[0], a["full_matrices"], a["compute_uv"]),
        attrs_of=lambda op: {"full_matrices": op.attrs["full_matrices"],
                            "compute_uv": op.attrs["compute_uv"]},
        shape=_svd_shape)


# --- the spectral norm: the largest singular value ---------------------------------

def spectral_norm(a):
    """The largest singular value of each matrix in the last two axes
    (`norm(x, ord=2, axis=[r, c])`)."""
    value = np.linalg.svd(a._value, compute_uv=False)[..., 0]
    return emit("SpectralNorm", value.astype(a._value.real.dtype), (a,))


def _top_direction(a):
    """u1 v1^H for the top singular pair of each matrix, from the Svd op, so
    its own derivatives (the spectral norm's second) are the SVD's."""
    _, u, v = svd(a)
    return matmul(u[..., :, :1], v[..., :, :1], adjoint_b=True)


def _spectral_norm_grad(op, grad):
    """d sigma_1 = Re(u1^H dA v1), so grad_A = grad * u1 v1^H (Giles 2008; TF's
    _SvdGrad with compute_uv=False); complex A in TensorFlow's convention, as
    grad * x / |x| for abs. Defined where sigma_1 is a simple singular value."""
    a = op.inputs[0]
    direction = _top_direction(a)
    return _as(reshape(grad, grad.shape + (1, 1)), a) * direction


def _spectral_norm_jvp(op, t):
    """d sigma_1 = Re(sum(conj(u1 v1^H) * dA))."""
    d = reduce_sum(conj(_top_direction(op.inputs[0])) * t, axis=[-2, -1])
    return _as(d, op.outputs[0])


def _spectral_shape(shapes, attrs, declared):
    """sigma_1 of each matrix, through an SVD: about 10 m n max(m, n) operations."""
    batch, m, n = matrix_shape(shapes[0])
    return (batch,), 10 * math.prod(batch) * m * n * max(m, n, 1)


declare("SpectralNorm", _spectral_norm_grad, _spectral_norm_jvp,
        replay=lambda xs, attrs, out_shapes: spectral_norm(xs[0]), shape=_spectral_shape)


# --- eig (general square matrices; complex results) ------------------------------------

_COMPLEX = {np.dtype(np.float32): np.dtype(np.complex64),
            np.dtype(np.float64): np.dtype(np.complex128)}


def _complex_dtype(op_name, a):
    if a.dtype.kind == "c":
        return a.dtype
    if a.dtype not in _COMPLEX:
        raise TypeError(f"{op_name}: expected float32, float64 or complex, got {a.dtype}")
    return _COMPLEX[a.dtype]


def eig(tensor, name=None):
    """(e, V), complex: the eigenvalues and unit eigenvectors (columns of V) of
    a general square matrix, A V = V diag(e). Their order, and each column's
    phase, are LAPACK's (TensorFlow's may differ)."""
    a = float_input("linalg.eig", tensor)
    check_square("linalg.eig", a)
    dtype = _complex_dtype("linalg.eig", a)
    e, v = np.linalg.eig(a._value)
    return emit_outputs("Eig", (e.astype(dtype), v.astype(dtype)), (a,),
                        {"compute_v": True}, name)


def eigvals(tensor, name=None):
    """The (complex) eigenvalues of a general square matrix."""
    a = float_input("linalg.eigvals", tensor)
    check_square("linalg.eigvals", a)
    dtype = _complex_dtype("linalg.eigvals", a)
    return emit("Eig", np.linalg.eigvals(a._value).astype(dtype), (a,), {"compute_v": False},
                name)


def _real_as_complex(x):
    return cast(real(x), x.dtype)


def _to_input_dtype(g, a):
    """A complex gradient for a real input keeps its real part (TensorFlow casts)."""
    return g if a.dtype.kind == "c" else real(g)


def _eig_grad(op, ge, gv=None):
    """TensorFlow's rule (Boeddeker et al. 2017, eq. 4.77), in its convention
    (upstream times the conjugate derivative): with W = V^H,
    grad_A = W^-1 (diag(ge) + conj(F) o (W gV - W V diag(Re diag(W gV)))) W,
    F_ij = 1/(e_j - e_i); the last term keeps the columns of V at unit length.
    Eigenvalues alone: W^-1 diag(ge) W. Repeated eigenvalues: NaN where
    something flows through the tie, or the tied values are weighed unequally
    (TensorFlow: 0); a defective (not diagonalizable) A makes W singular."""
    a = op.inputs[0]
    f, ties = _inverse_gaps(op.outputs[0])
    if not op.attrs["compute_v"]:
        _, v = eig(a)
        w = _T(conj(v))
        mid = diag(ge)
    else:
        v = op.outputs[1]
        w = _T(conj(v))
        wgv = matmul(w, gv)
        inner = wgv - matmul(matmul(w, v), diag(_real_as_complex(diag_part(wgv))))
        mid = diag(ge) + _undefined_at_ties(conj(f) * inner, ties, inner)
    mid = _nan_where(mid, _tied_values(ties, ge))
    return _to_input_dtype(solve(w, matmul(mid, w)), a)


def _eig_jvp(op, t):
    """P = V^-1 dA V: de = diag(P), and dV = V (F o P), less each column's
    component along itself that would change its length (the gauge of the
    gradient above)."""
    a = op.inputs[0]
    t = cast(t, _complex_dtype("linalg.eig", a))
    f, ties = _inverse_gaps(op.outputs[0])
    v = op.outputs[1] if op.attrs["compute_v"] else eig(a)[1]
    p = solve(v, matmul(t, v))
    de = _values_jvp(p, ties)
    if not op.attrs["compute_v"]:
        return de
    dv = matmul(v, _undefined_at_ties(f * p, ties, p))
    along = _real_as_complex(reduce_sum(conj(v) * dv, axis=-2, keepdims=True))
    return de, dv - v * along


declare("Eig", _eig_grad, _eig_jvp,
        replay=lambda xs, a, o: eig(xs[0]) if a["compute_v"] else eigvals(xs[0]),
        attrs_of=lambda op: {"compute_v": op.attrs["compute_v"]}, shape=_eig_shape)
