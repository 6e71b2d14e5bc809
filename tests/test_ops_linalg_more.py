"""The linear algebra of issue 16 (ops/matrices.py, solvers.py, decompositions.py,
matrix_functions.py): values against NumPy in float32 and float64, batches,
bad arguments, the places where a derivative does not exist (with
TensorFlow's answer, measured with TensorFlow 2.21), and eig, whose complex
results keep it out of the op table. Derivatives to third order, pfor,
forward mode and compiled programs are checked on tests/op_table_linalg.py's rows.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitape as mt

la = mt.linalg
rng = np.random.default_rng(7)


def spd(*shape):
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


DTYPES = [np.float32, np.float64]
TOL = {np.float32: 1e-4, np.float64: 1e-10}


# --- values against NumPy -----------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_structural_ops_match_numpy(dtype):
    x = rng.standard_normal((2, 3, 4)).astype(dtype)
    v = rng.standard_normal((2, 3)).astype(dtype)
    assert la.trace(x).numpy().dtype == dtype
    np.testing.assert_allclose(la.trace(x), np.trace(x, axis1=-2, axis2=-1), rtol=TOL[dtype])
    np.testing.assert_array_equal(la.diag_part(x), np.diagonal(x, axis1=-2, axis2=-1))
    np.testing.assert_array_equal(la.diag_part(x, k=1), np.diagonal(x, 1, -2, -1))
    np.testing.assert_array_equal(la.diag_part(x, k=-2), np.diagonal(x, -2, -2, -1))
    d = la.diag(v)
    assert d.shape == (2, 3, 3) and d.dtype == dtype
    np.testing.assert_array_equal(d[1], np.diag(v[1]))
    np.testing.assert_array_equal(la.diag(v[0], k=2), np.diag(v[0], 2))
    tall = np.zeros((5, 3), dtype)
    tall[[1, 2, 3], [0, 1, 2]] = v[0]
    np.testing.assert_array_equal(la.diag(v[0], k=-1, num_rows=5, num_cols=3), tall)
    np.testing.assert_array_equal(la.diag(v[0], padding_value=9)[0, 1], 9)
    out = la.set_diag(x, v)
    expected = x.copy()
    expected[:, np.arange(3), np.arange(3)] = v
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(la.band_part(x, 1, 0), np.tril(np.triu(x, -1)))
    np.testing.assert_array_equal(la.band_part(x, -1, -1), x)
    np.testing.assert_array_equal(la.band_part(x, 0, 2), np.triu(np.tril(x, 2)))
    np.testing.assert_array_equal(la.adjoint(x), np.swapaxes(x, -1, -2))
    w = rng.standard_normal(4).astype(dtype)
    np.testing.assert_allclose(la.matvec(x, w), x @ w, rtol=TOL[dtype])
    a, b = rng.standard_normal((2, 5, 3)).astype(dtype)
    np.testing.assert_allclose(la.cross(a, b), np.cross(a, b), rtol=TOL[dtype], atol=1e-6)
    m = rng.standard_normal((3, 3)).astype(dtype)
    np.testing.assert_allclose(mt.matmul(m, m, adjoint_a=True), m.T @ m, rtol=TOL[dtype])
    np.testing.assert_allclose(mt.matmul(m, m, adjoint_b=True), m @ m.T, rtol=TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_determinants_and_solves_match_numpy(dtype):
    a = spd(2, 3, 3).astype(dtype)
    b = rng.standard_normal((2, 3, 2)).astype(dtype)
    tol = TOL[dtype]
    for out in (la.det(a), la.slogdet(a).log_abs_determinant, la.logdet(a)):
        assert out.dtype == dtype and out.shape == (2,)
    np.testing.assert_allclose(la.det(a), np.linalg.det(a), rtol=tol)
    sign, logabs = la.slogdet(-a)
    np.testing.assert_allclose(sign, np.linalg.slogdet(-a)[0])
    np.testing.assert_allclose(logabs, np.linalg.slogdet(a)[1], rtol=tol)
    np.testing.assert_allclose(la.logdet(a), np.linalg.slogdet(a)[1], rtol=tol)
    low = np.tril(a)
    np.testing.assert_allclose(la.triangular_solve(a, b), np.linalg.solve(low, b), rtol=tol)
    np.testing.assert_allclose(la.triangular_solve(a, b, adjoint=True),
                               np.linalg.solve(np.swapaxes(low, -1, -2), b), rtol=tol)
    np.testing.assert_allclose(la.triangular_solve(a, b, lower=False),
                               np.linalg.solve(np.triu(a), b), rtol=tol)
    chol = np.linalg.cholesky(a)
    np.testing.assert_allclose(la.cholesky_solve(chol, b), np.linalg.solve(a, b),
                               rtol=10 * tol, atol=10 * tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_decompositions_match_numpy(dtype):
    tol = TOL[dtype]
    a = spd(2, 4, 4).astype(dtype)
    lo = la.cholesky(a)
    assert lo.dtype == dtype
    np.testing.assert_allclose(lo, np.linalg.cholesky(a), rtol=tol, atol=tol)
    e, v = la.eigh(a)
    np.testing.assert_allclose(e, np.linalg.eigvalsh(a), rtol=tol)
    np.testing.assert_allclose(la.eigvalsh(a), np.linalg.eigvalsh(a), rtol=tol)
    np.testing.assert_allclose(np.asarray(v) @ (np.asarray(e)[..., None] *
                                                 np.swapaxes(np.asarray(v), -1, -2)),
                               a, rtol=10 * tol, atol=10 * tol * 10)
    for shape in [(4, 3), (3, 3), (3, 5), (2, 4, 2)]:
        x = rng.standard_normal(shape).astype(dtype)
        q, r = la.qr(x)
        assert q.dtype == r.dtype == dtype
        np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), x, rtol=10 * tol, atol=tol)
        np.testing.assert_array_equal(np.asarray(r), np.triu(np.asarray(r)))
        s, u, vv = la.svd(x)
        k = min(shape[-2:])
        assert s.shape == shape[:-2] + (k,) and u.shape == shape[:-1] + (k,)
        assert vv.shape == shape[:-2] + (shape[-1], k)
        np.testing.assert_allclose(s, np.linalg.svd(x, compute_uv=False), rtol=tol)
        np.testing.assert_allclose(la.svd(x, compute_uv=False), s, rtol=tol)
        rebuilt = (np.asarray(u) * np.asarray(s)[..., None, :]) @ np.swapaxes(vv, -1, -2)
        np.testing.assert_allclose(rebuilt, x, rtol=10 * tol, atol=10 * tol)
    q, r = la.qr(rng.standard_normal((4, 2)), full_matrices=True)
    assert q.shape == (4, 4) and r.shape == (4, 2)
    s, u, vv = la.svd(rng.standard_normal((4, 2)), full_matrices=True)
    assert u.shape == (4, 4) and vv.shape == (2, 2)


def test_results_are_tensorflows_namedtuples_and_tuples():
    a = spd(3, 3)
    result = la.slogdet(a)
    assert type(result).__name__ == "LogMatrixDeterminant"
    assert result._fields == ("sign", "log_abs_determinant")
    q = la.qr(a)
    assert type(q).__name__ == "Qr" and q._fields == ("q", "r") and q.r is q[1]
    assert type(la.eigh(a)) is tuple and type(la.svd(a)) is tuple and type(la.eig(a)) is tuple


@pytest.mark.parametrize("dtype", DTYPES)
def test_pinv_lstsq_expm_match_numpy(dtype):
    tol = TOL[dtype]
    for shape in [(4, 3), (3, 3), (2, 3, 5)]:
        x = rng.standard_normal(shape).astype(dtype)
        p = la.pinv(x)
        assert p.dtype == dtype
        np.testing.assert_allclose(p, np.linalg.pinv(x), rtol=100 * tol, atol=100 * tol)
    a = rng.standard_normal((5, 3)).astype(dtype)
    b = rng.standard_normal((5, 2)).astype(dtype)
    np.testing.assert_allclose(la.lstsq(a, b), np.linalg.lstsq(a, b, rcond=None)[0],
                               rtol=100 * tol, atol=100 * tol)
    wide = a.T  # the smallest solution of an underdetermined system
    c = rng.standard_normal((3, 1)).astype(dtype)
    np.testing.assert_allclose(la.lstsq(wide, c), np.linalg.pinv(wide) @ c,
                               rtol=100 * tol, atol=100 * tol)
    rank1 = np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]], dtype)
    # TensorFlow, fast=False: [[0.12], [0.24]] (l2 ignored); fast=True: NaN (minitape raises)
    np.testing.assert_allclose(la.lstsq(rank1, np.ones((3, 1), dtype), l2_regularizer=0.5,
                                        fast=False), [[0.12], [0.24]], rtol=100 * tol)
    with pytest.raises(np.linalg.LinAlgError, match="cholesky"):
        la.lstsq(rank1, np.ones((3, 1), dtype))
    ridge = np.linalg.solve(a.T @ a + 0.5 * np.eye(3), a.T @ b)
    np.testing.assert_allclose(la.lstsq(a, b, l2_regularizer=0.5), ridge, rtol=100 * tol)
    m = (rng.standard_normal((2, 3, 3)) * 2).astype(dtype)
    w, vecs = np.linalg.eig(m.astype(np.float64))
    expected = np.real((vecs * np.exp(w)[..., None, :]) @ np.linalg.inv(vecs))
    out = la.expm(m)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, expected, rtol=100 * tol)
    np.testing.assert_allclose(la.expm(np.zeros((3, 3), dtype)), np.eye(3))
    # TensorFlow's value for [[1, 2], [3, 4]] (float64)
    np.testing.assert_allclose(la.expm(np.array([[1.0, 2.0], [3.0, 4.0]])),
                               [[51.9689562, 74.73656457], [112.10484685, 164.07380305]])


# --- bad arguments ------------------------------------------------------------------

@pytest.mark.parametrize("call, error, match", [
    (lambda: la.det(np.ones((2, 3))), ValueError, r"linalg.det: .*square.*\(2, 3\)"),
    (lambda: la.det(np.ones((2, 2), np.int32)), TypeError, "linalg.det: .*floating"),
    (lambda: la.cholesky(np.ones((3,))), ValueError, "linalg.cholesky"),
    (lambda: la.triangular_solve(np.eye(3), np.ones((2, 1))), ValueError,
     r"linalg.triangular_solve: rhs .*\(2, 1\)"),
    (lambda: la.triangular_solve(np.ones((2, 3, 3)), np.ones((4, 3, 1))), ValueError,
     "batch dimensions"),
    (lambda: la.cross(np.ones(3), np.ones((1, 3))), ValueError, r"linalg.cross: .*\(3,\).*\(1, 3\)"),
    (lambda: la.cross(np.ones(2), np.ones(2)), ValueError, "linalg.cross"),
    (lambda: la.set_diag(np.zeros((2, 2, 3)), np.ones(2)), ValueError,
     r"linalg.set_diag: .*\(2, 2\)"),
    (lambda: la.diag_part(np.ones((2, 3)), k=3), ValueError, "linalg.diag_part: .*k=3"),
    (lambda: la.diag_part(np.ones((2, 3)), k=(0, 1)), NotImplementedError, "one integer"),
    (lambda: la.diag(np.ones(3), num_rows=2, num_cols=2), ValueError, "linalg.diag"),
    (lambda: la.band_part(np.ones(3), 0, 0), ValueError, "linalg.band_part"),
    (lambda: mt.matmul(np.eye(2), np.eye(2), transpose_a=True, adjoint_a=True), ValueError,
     "only one of transpose_a and adjoint_a"),
    (lambda: la.lstsq(np.ones((3, 2)), np.ones((2, 1))), ValueError, "linalg.lstsq"),
    (lambda: la.svd(np.ones(3)), ValueError, "linalg.svd"),
    (lambda: la.eig(np.ones((2, 3))), ValueError, "linalg.eig"),
    (lambda: la.expm(np.ones((2, 3))), ValueError, "linalg.expm"),
    (lambda: la.det(np.eye(2) * (1 + 1j)), TypeError, "linalg.det: complex"),
    (lambda: la.triangular_solve(np.eye(2) * 1j, np.ones((2, 1)) * 1j), TypeError,
     "linalg.triangular_solve: complex"),
])
def test_bad_arguments_name_the_op_and_record_nothing(call, error, match):
    with mt.GradientTape() as tape:
        with pytest.raises(error, match=match):
            call()
    assert not tape._ops


def test_cholesky_of_a_not_positive_definite_matrix_raises_and_records_nothing():
    # TensorFlow: [[nan, 0], [nan, nan]] (docs/differences.md)
    x = mt.constant([[1.0, 2.0], [2.0, 1.0]])
    with mt.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
            la.cholesky(x)
    assert not tape._ops


# --- where the derivative does not exist: TensorFlow's answers -------------------------

def _gradient(f, x):
    x = mt.constant(np.asarray(x, np.float64))
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return y, tape.gradient(y, x)


def test_det_and_slogdet_of_a_singular_matrix():
    # TensorFlow: det -0.0, slogdet (0, -inf); both gradients raise
    # InvalidArgumentError "Input is not invertible" (the inverse does not exist)
    sing = [[1.0, 2.0], [2.0, 4.0]]
    assert float(la.det(sing)) == 0.0
    sign, logabs = la.slogdet(mt.constant(sing))
    assert float(sign) == 0.0 and float(logabs) == -np.inf
    with pytest.raises(np.linalg.LinAlgError, match="linalg.inv"):
        _gradient(la.det, sing)
    with pytest.raises(np.linalg.LinAlgError, match="linalg.inv"):
        _gradient(lambda a: la.slogdet(a)[1], sing)


def test_slogdet_of_a_negative_determinant():
    # TensorFlow: value (-1, 0) and gradient [[0, 1], [1, 0]]
    (sign, logabs), g = _gradient(lambda a: la.slogdet(a), [[0.0, 1.0], [1.0, 0.0]])
    assert float(sign) == -1.0 and float(logabs) == 0.0
    np.testing.assert_allclose(g, [[0.0, 1.0], [1.0, 0.0]])


def test_triangular_solve_with_a_zero_on_the_diagonal_gives_inf_and_nan():
    # TensorFlow: value [[1], [nan]], gradient [[inf, 0], [-inf, nan]]
    y, g = _gradient(lambda a: la.triangular_solve(a, mt.ones((2, 1), mt.float64)),
                     [[1.0, 0.0], [1.0, 0.0]])
    np.testing.assert_array_equal(y, [[1.0], [np.nan]])
    np.testing.assert_array_equal(g, [[np.inf, 0.0], [-np.inf, np.nan]])


def test_tied_eigenvalues_have_a_gradient_only_for_a_symmetric_loss():
    # The sum of tied eigenvalues (a trace) is smooth: TensorFlow's [[1, 0], [0, 1]]
    # for eigh(x)[0], eigvalsh and svd(x)[0] of the identity.
    for f in (lambda a: la.eigh(a)[0], la.eigvalsh, lambda a: la.svd(a)[0],
              lambda a: la.svd(a, compute_uv=False)):
        _, g = _gradient(f, np.eye(2))
        np.testing.assert_allclose(g, np.eye(2))
    # Weighed unequally they are not: e1 + 3 e2 of I + t [[0, 1], [1, 0]] is
    # 4 + 2|t|, a kink. TensorFlow gives diag(1, 3); minitape NaN.
    for f in (lambda a: la.eigvalsh(a) * [1.0, 3.0], lambda a: la.eigh(a)[0] * [1.0, 3.0],
              lambda a: la.svd(a, compute_uv=False) * [1.0, 3.0]):
        _, g = _gradient(f, np.eye(2))
        assert np.isnan(g.numpy()[np.tril_indices(2)]).all()  # eigh reads the lower triangle


def test_unused_outputs_of_a_decomposition_contribute_nothing():
    # only r of qr, only e of eigh, only s of svd at a tie: the zeros the walk
    # sends for the unused outputs never meet the 1/0
    _, g = _gradient(lambda a: la.qr(a)[1], spd(3, 3))
    assert np.isfinite(g.numpy()).all()
    _, g = _gradient(lambda a: la.svd(a)[0], np.diag([2.0, 2.0, 1.0]))
    np.testing.assert_allclose(g, np.eye(3))


def test_eigh_and_svd_jvps_are_nan_at_a_tie_when_the_vectors_move():
    x = mt.constant(np.eye(2))
    direction = mt.constant(np.array([[0.0, 1.0], [1.0, 0.0]]))
    with mt.autodiff.ForwardAccumulator(x, direction) as acc:
        e, v = la.eigh(x)
        s, u, w = la.svd(x)
    assert np.isnan(acc.jvp(e).numpy()).all()  # they split: 1 - |t| and 1 + |t|
    assert np.isnan(acc.jvp(v).numpy()).any() and np.isnan(acc.jvp(u).numpy()).any()
    with mt.autodiff.ForwardAccumulator(x, mt.constant(np.diag([1.0, 2.0]))) as acc:
        e, v = la.eigh(x)
    assert np.isnan(acc.jvp(e).numpy()).all()  # 1 + t and 1 + 2t swap order at t = 0
    with mt.autodiff.ForwardAccumulator(x, mt.constant(2.0 * np.eye(2))) as acc:
        e, v = la.eigh(x)
    np.testing.assert_allclose(acc.jvp(e), [2.0, 2.0])  # (1 + 2t) I: they move together
    np.testing.assert_array_equal(acc.jvp(v), np.zeros((2, 2)))  # and the basis stays


def test_pinv_gradient_where_the_rank_is_full_and_where_it_drops():
    full = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.25]])
    _, g = _gradient(la.pinv, full)
    assert np.isfinite(g.numpy()).all()
    _, g = _gradient(la.pinv, [[1.0, 2.0], [2.0, 4.0]])
    assert np.isnan(g.numpy()).all()  # TensorFlow: a finite number (docs/differences.md)


def test_qr_full_matrices_gradient_for_deep_matrices_is_not_implemented():
    # TensorFlow: NotImplementedError "QrGrad not implemented when nrows > ncols
    # and full_matrices is true"
    with pytest.raises(NotImplementedError, match="full_matrices"):
        _gradient(lambda a: la.qr(a, full_matrices=True)[1], np.ones((3, 2)) + np.eye(3, 2))
    _, g = _gradient(lambda a: la.qr(a, full_matrices=True)[1], spd(3, 3))  # square: fine
    assert np.isfinite(g.numpy()).all()


def test_cholesky_gradient_is_symmetric_and_eigh_gradient_lower_as_tensorflows():
    # TensorFlow returns a symmetric gradient for cholesky and a lower
    # triangular one for eigh (its forward reads the lower triangle)
    a = spd(3, 3)
    _, g = _gradient(lambda x: mt.reduce_sum(la.cholesky(x) * rng.standard_normal((3, 3))), a)
    np.testing.assert_allclose(g, np.asarray(g).T)
    _, g = _gradient(lambda x: mt.reduce_sum(la.eigh(x)[0] * [1.0, 2.0, 3.0]), a)
    np.testing.assert_array_equal(np.triu(g, 1), 0)


def test_cholesky_and_eigh_read_only_the_lower_triangle():
    a = spd(3, 3)
    messy = a + np.triu(rng.standard_normal((3, 3)), 1)
    np.testing.assert_allclose(la.cholesky(messy), np.linalg.cholesky(a))
    np.testing.assert_allclose(la.eigvalsh(messy), np.linalg.eigvalsh(a))
    np.testing.assert_allclose(la.triangular_solve(messy, np.ones((3, 1))),
                               np.linalg.solve(np.tril(a), np.ones((3, 1))))


# --- eig: complex results ---------------------------------------------------------------

def _eig_real_loss(weights_e, weights_v):
    def f(a):
        e, v = la.eig(a)
        return mt.reduce_sum(mt.cast(e, a.dtype) * weights_e) + \
            mt.reduce_sum(mt.cast(v, a.dtype) * weights_v)
    return f


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_eig_values_dtypes_and_tensorflows_gradient():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    e, v = la.eig(a)
    assert e.dtype == np.complex128 and v.dtype == np.complex128
    assert la.eig(a.astype(np.float32))[0].dtype == np.complex64
    assert mt.eig is la.eig and mt.eigvals is la.eigvals
    np.testing.assert_allclose(np.asarray(a) @ np.asarray(v), np.asarray(v) * np.asarray(e))
    np.testing.assert_allclose(la.eigvals([[0.0, 1.0], [-1.0, 0.0]]), [1j, -1j])
    # TensorFlow 2.21: d sum(real(e))/dA = I (up to rounding); d sum(real(V))/dA
    _, g = _gradient(_eig_real_loss(1.0, 0.0), a)
    np.testing.assert_allclose(g, np.eye(2), atol=1e-15)
    _, g = _gradient(_eig_real_loss(0.0, 1.0), a)
    np.testing.assert_allclose(g, [[0.08041757, -0.14849921], [0.17941704, -0.08041757]],
                               rtol=1e-6)


def _finite_difference(f, a, eps=1e-6):
    g = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[i] = eps
        g[i] = (float(f(mt.constant(a + d))) - float(f(mt.constant(a - d)))) / (2 * eps)
    return g


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_eig_first_derivatives_match_finite_differences_both_ways():
    # a matrix with real, distinct eigenvalues, whose vectors are real (their
    # only freedom is a sign, fixed by LAPACK continuously near this matrix)
    a = np.array([[2.0, 0.5, 0.1], [0.3, -1.0, 0.4], [0.2, 0.1, 0.5]])
    we, wv = np.array([1.0, -2.0, 0.5]), rng.standard_normal((3, 3))
    f = _eig_real_loss(we, wv)
    _, g = _gradient(f, a)
    np.testing.assert_allclose(g, _finite_difference(f, a), rtol=1e-6, atol=1e-8)
    direction = rng.standard_normal((3, 3))
    x = mt.constant(a)
    with mt.autodiff.ForwardAccumulator(x, mt.constant(direction)) as acc:
        y = f(x)
    np.testing.assert_allclose(acc.jvp(y), np.sum(g.numpy() * direction), rtol=1e-8)
    # eigenvalues alone, also of a matrix with complex eigenvalues (real parts)
    rot = np.array([[0.5, -2.0], [1.5, 0.25]])
    fe = lambda m: mt.reduce_sum(mt.cast(la.eigvals(m), m.dtype) * [1.0, 3.0])  # noqa: E731
    _, g = _gradient(fe, rot)
    np.testing.assert_allclose(g, _finite_difference(fe, rot), rtol=1e-6, atol=1e-8)


# --- batches and shapes, drawn by Hypothesis ---------------------------------------------

@settings(max_examples=30, deadline=None)
@given(batch=st.lists(st.integers(1, 3), max_size=2), rows=st.integers(1, 4),
       cols=st.integers(1, 4), k=st.integers(-3, 3))
def test_diag_part_and_diag_are_each_others_gradient(batch, rows, cols, k):
    if not -rows < k < cols:
        return
    x = mt.constant(rng.standard_normal(tuple(batch) + (rows, cols)))
    with mt.GradientTape() as tape:
        tape.watch(x)
        d = la.diag_part(x, k=k)
    assert d.shape == tuple(batch) + (np.diagonal(x.numpy(), k, -2, -1).shape[-1],)
    g = tape.gradient(d, x).numpy()
    mask = np.zeros((rows, cols))
    i = np.arange(d.shape[-1])
    mask[i - min(k, 0), i + max(k, 0)] = 1
    np.testing.assert_array_equal(g, np.broadcast_to(mask, g.shape))


@settings(max_examples=20, deadline=None)
@given(batch=st.lists(st.integers(1, 3), max_size=2), n=st.integers(1, 4),
       lower=st.integers(-1, 3), upper=st.integers(-1, 3))
def test_band_part_and_batched_determinants(batch, n, lower, upper):
    a = rng.standard_normal(tuple(batch) + (n, n)) + 3 * np.eye(n)
    i, j = np.indices((n, n))
    keep = ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))
    np.testing.assert_array_equal(la.band_part(a, lower, upper), np.where(keep, a, 0))
    np.testing.assert_allclose(la.det(a), np.linalg.det(a), rtol=1e-10)
    x = mt.constant(a)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = la.slogdet(x)[1]
    np.testing.assert_allclose(tape.gradient(y, x), np.swapaxes(np.linalg.inv(a), -1, -2),
                               rtol=1e-9, atol=1e-12)


def test_empty_matrices_give_tensorflows_values():
    # TensorFlow 2.21: det 1 (also batched), trace 0, logdet 0, and empty factors
    z = mt.constant(np.zeros((0, 0)))
    assert float(la.det(z)) == 1.0 and float(la.trace(z)) == 0.0 and float(la.logdet(z)) == 0.0
    np.testing.assert_array_equal(la.det(np.zeros((2, 0, 0))), [1.0, 1.0])
    assert [t.shape for t in la.svd(np.zeros((0, 3)))] == [(0,), (0, 0), (3, 0)]
    assert [t.shape for t in la.qr(np.zeros((0, 3)))] == [(0, 0), (0, 3)]
    assert la.expm(z).shape == la.cholesky(z).shape == (0, 0)
    assert la.pinv(np.zeros((0, 3))).shape == (3, 0)


@pytest.mark.parametrize("jit", [False, True])
def test_a_traced_gradient_checks_ties_and_rank_on_every_call(jit):
    """The NaN masks are recorded comparisons: a function traced at one matrix
    answers for the matrix of each later call (no mask frozen at trace time)."""
    w = mt.constant(np.array([[1.0, 2.0], [0.0, 1.0]]))

    def grads(x):
        with mt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            eigh_loss = mt.reduce_sum(la.eigh(x)[1] * w)
            pinv_loss = mt.reduce_sum(la.pinv(x) * w)
        return tape.gradient(eigh_loss, x), tape.gradient(pinv_loss, x)

    distinct = mt.constant(np.array([[2.0, 0.5], [0.5, 1.0]]))
    tied = mt.constant(np.eye(2))
    singular = mt.constant(np.array([[1.0, 2.0], [2.0, 4.0]]))
    eager = [grads(m) for m in (distinct, tied, singular)]
    for order in ([distinct, tied, singular], [tied, singular, distinct]):
        f = mt.function(grads, jit_compile=jit)
        for m in order:
            expected = eager[[id(distinct), id(tied), id(singular)].index(id(m))]
            for got, want in zip(f(m), expected):
                np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert np.isnan(eager[1][0].numpy()).any() and np.isfinite(eager[0][0].numpy()).all()
    assert np.isnan(eager[2][1].numpy()).all() and np.isfinite(eager[0][1].numpy()).all()


@settings(max_examples=25, deadline=None)
@given(a_batch=st.sampled_from([(), (1,), (3,), (2, 1)]),
       b_batch=st.sampled_from([(), (1,), (3,), (2, 3)]), n=st.integers(1, 3),
       k=st.integers(1, 2), lower=st.booleans(), adjoint=st.booleans())
def test_triangular_solve_broadcasts_batches_and_sums_them_back(a_batch, b_batch, n, k,
                                                               lower, adjoint):
    try:
        batch = np.broadcast_shapes(a_batch, b_batch)
    except ValueError:
        return
    a = rng.standard_normal(a_batch + (n, n)) + 3 * np.eye(n)
    b = rng.standard_normal(b_batch + (n, k))
    xa, xb = mt.constant(a), mt.constant(b)
    with mt.GradientTape() as tape:
        tape.watch([xa, xb])
        x = la.triangular_solve(xa, xb, lower=lower, adjoint=adjoint)
        loss = mt.reduce_sum(x * x)
    t = np.tril(a) if lower else np.triu(a)
    t = np.swapaxes(t, -1, -2) if adjoint else t
    expected = np.linalg.solve(np.broadcast_to(t, batch + (n, n)), np.broadcast_to(b, batch + (n, k)))
    np.testing.assert_allclose(x, expected, rtol=1e-10)
    ga, gb = tape.gradient(loss, [xa, xb])
    assert ga.shape == a.shape and gb.shape == b.shape
    # the gradient stays on the triangle that was read
    np.testing.assert_array_equal(np.asarray(ga), np.tril(ga) if lower else np.triu(ga))
