"""HIPS autograd's own gradient tests, translated to minitape (issue 16).

autograd (github.com/HIPS/autograd) tests each NumPy function it differentiates
with `check_grads(fun)(args)` over `np.` expressions, in tests/test_scalar_ops.py,
tests/test_numpy.py and tests/test_linalg.py. Here each such test is rewritten
with TensorFlow's names (`np.arcsin` -> `mt.math.asin`, `np.dot(m, v)` ->
`mt.linalg.matvec`, `np.array([x, y])` -> `mt.convert_to_tensor([x, y])`, autograd's
`to_scalar` -> `sum(sin(.))`) and checked with minitape's own checker,
`mt.test.check_gradients(..., order=2)`: first and second derivatives against
central finite differences in float64, in random directions, as `check_grads` does.
The inputs are autograd's (shapes, offsets that keep a function smooth), drawn
from a fixed seed. So the library is measured on examples nobody here wrote.

A test that needs an op minitape does not have yet is a strict xfail while the
name is missing (`needs=`), and runs as a normal test as soon as the op exists.
The few that fail for another reason say which item of issue 16 they wait for.
"""
import functools
import operator

import numpy as np
import pytest

import minitape as mt
from minitape.test import check_gradients

RNG = np.random.default_rng(1)


def randn(*shape):
    return RNG.standard_normal(shape)


def rand(*shape):
    return RNG.random(shape)


def to_scalar(x):
    """autograd's test helper: a scalar that depends on every entry (sum of sines)."""
    return mt.reduce_sum(mt.sin(x))


def rand_psd(d):
    a = randn(d, d)
    return a @ a.T


def symmetrized(fun):
    """autograd's check_symmetric_matrix_grads: differentiate through (L + L^T) / 2."""
    def sym_fun(a, *rest):
        lower = mt.linalg.band_part(a, -1, 0)
        return fun((lower + mt.linalg.matrix_transpose(lower)) / 2.0, *rest)
    sym_fun.__name__ = getattr(fun, "__name__", "f")
    return sym_fun


def _has(name):
    return functools.reduce(lambda obj, part: getattr(obj, part, None), name.split("."), mt) \
        is not None


CASES = []  # pytest params: (autograd test name, fun, args)


def case(name, fun, *args, needs=(), xfail=None):
    """One of autograd's check_grads calls: fun at args, checked to second order."""
    marks = []
    missing = [n for n in needs if not _has(n)]
    if missing:
        marks.append(pytest.mark.xfail(strict=True, reason="minitape has no mt." +
                                       ", mt.".join(missing) + " yet (issue 16)"))
    elif xfail:
        marks.append(pytest.mark.xfail(strict=True, reason=xfail))
    CASES.append(pytest.param(fun, [np.asarray(a, dtype=np.float64) for a in args],
                              id=name, marks=marks))


# --- tests/test_scalar_ops.py: fun = lambda x: 3.0 * np.<f>(x), checked with its grad --

def scalar(fn_name):
    """autograd's `lambda x: 3.0 * np.<f>(x)` with TensorFlow's name for <f>."""
    def fun(t):
        return 3.0 * functools.reduce(getattr, fn_name.split("."), mt)(t)
    fun.__name__ = fn_name
    return fun


case("test_abs[1.1]", lambda x: 3.0 * mt.abs(x), 1.1)
case("test_abs[-1.1]", lambda x: 3.0 * mt.abs(x), -1.1)
case("test_sin", scalar("math.sin"), randn())
case("test_sign", lambda x: 3.0 * mt.sign(x), 1.1)
case("test_exp", scalar("math.exp"), randn())
case("test_log", scalar("math.log"), abs(randn()))
case("test_log1p", scalar("math.log1p"), abs(randn()), needs=["math.log1p"])
case("test_expm1", scalar("math.expm1"), abs(randn()), needs=["math.expm1"])
case("test_neg", lambda x: 3.0 * -x, randn())
case("test_cos", scalar("math.cos"), randn())
case("test_tan", scalar("math.tan"), randn(), needs=["math.tan"])
case("test_cosh", scalar("math.cosh"), randn(), needs=["math.cosh"])
case("test_sinh", scalar("math.sinh"), randn(), needs=["math.sinh"])
case("test_tanh", scalar("math.tanh"), randn())
case("test_arccos", scalar("math.acos"), 0.1, needs=["math.acos"])
case("test_arcsin", scalar("math.asin"), 0.1, needs=["math.asin"])
case("test_arctan", scalar("math.atan"), 0.2, needs=["math.atan"])
case("test_arccosh", scalar("math.acosh"), randn() ** 2 + 1, needs=["math.acosh"])
case("test_arcsinh", scalar("math.asinh"), randn(), needs=["math.asinh"])
case("test_arctanh", scalar("math.atanh"), 0.2, needs=["math.atanh"])
case("test_sqrt", scalar("math.sqrt"), 10.0 * rand())
_Y = randn() ** 2 + 1.0
case("test_power_arg0", lambda x: mt.pow(x, _Y), rand() ** 2 + 1.0)
_X = randn() ** 2
case("test_power_arg1", lambda y: mt.pow(_X, y), rand() ** 2)
case("test_power_arg1_zero", lambda y: mt.pow(0.0, y), rand() ** 2)
case("test_mod", lambda x, y: mt.math.floormod(x, y), 0.7, 0.3, needs=["math.floormod"])
case("test_divide", lambda x, y: mt.divide(x, y), rand(), rand())
case("test_multiply", lambda x, y: mt.multiply(x, y), rand(), rand())
case("test_true_divide", lambda x, y: mt.math.truediv(x, y), rand(), rand(),
     needs=["math.truediv"])
case("test_reciprocal", lambda x: mt.math.reciprocal(x), rand() + 0.1,
     needs=["math.reciprocal"])
case("test_negative", lambda x: mt.negative(x), rand())


def test_power_arg0_zero_exponent():
    """autograd's #116: d/dx x**0 at x = 0. autograd answers 0 to first and second order;
    TensorFlow 2.21 answers NaN to both (0 * 0**-1). minitape gives TensorFlow's NaN to
    first order and 0 to second: pow's gradient drops a zero upstream gradient (the
    docs/differences.md's row "a zero tangent meeting an infinite partial derivative"; measured
    against TensorFlow in tests/conformance/cases_elementwise.py)."""
    x = mt.constant(0.0, dtype=mt.float64)
    with mt.GradientTape() as t2:
        t2.watch(x)
        with mt.GradientTape() as t1:
            t1.watch(x)
            y = mt.pow(x, 0.0)
        g = t1.gradient(y, x)
    assert float(y) == 1.0
    assert np.isnan(float(g)) and float(t2.gradient(g, x)) == 0.0


# --- tests/test_numpy.py ----------------------------------------------------------------

_MAT, _VEC2 = randn(10, 11), randn(11)
case("test_dot[matrix,vector]", lambda a, v: mt.linalg.matvec(a, v), _MAT, _VEC2,
     needs=["linalg.matvec"])
case("test_dot[matrix,matrix]", lambda a, b: mt.matmul(a, b), randn(10, 11), randn(11, 10))
case("test_dot[vector,vector]", lambda u, v: mt.tensordot(u, v, 1), randn(11), randn(11),
     needs=["tensordot"])
case("test_outer", lambda u, v: mt.einsum("i,j->ij", u, v), randn(11), randn(11))
case("test_max", lambda x: mt.reduce_max(x), randn(10, 11))
case("test_max_axis", lambda x: mt.reduce_max(x, axis=1), randn(3, 4, 5))
case("test_max_axis_keepdims", lambda x: mt.reduce_max(x, axis=1, keepdims=True),
     randn(3, 4, 5))
case("test_min", lambda x: mt.reduce_min(x), randn(10, 11))
case("test_min_axis", lambda x: mt.reduce_min(x, axis=1), randn(3, 4, 5))
case("test_sum_1", lambda x: mt.reduce_sum(x), randn(10, 11))
case("test_sum_3", lambda x: mt.reduce_sum(x, axis=0, keepdims=True), randn(10, 11))
case("test_sum_with_axis_tuple", lambda x: mt.reduce_sum(x, axis=(1, 2)), randn(10, 11, 7))
case("test_flipud", lambda x: mt.reverse(x, [0]), randn(10, 11), needs=["reverse"])
case("test_rot90", lambda x: mt.transpose(mt.reverse(x, [1])), randn(10, 11),
     needs=["reverse"])
case("test_cumsum_axis0", lambda x: mt.math.cumsum(x, axis=0), randn(10, 11),
     needs=["math.cumsum"])
case("test_cumsum_1d", lambda x: mt.math.cumsum(x), randn(10), needs=["math.cumsum"])
case("test_non_numpy_sum", lambda x, y: sum([x, y]), randn(10, 11), randn(10, 11))
case("test_mean_2", lambda x: mt.reduce_mean(x, axis=0), randn(10, 11))
case("test_mean_3", lambda x: mt.reduce_mean(x, axis=0, keepdims=True), randn(10, 11))
case("test_index_ints", lambda x: x[3, 0, 1], randn(5, 6, 4))
case("test_index_slice", lambda x: x[::-1, 2:4, :], randn(5, 6, 4))
case("test_index_lists", lambda x: mt.gather(x, [0, 1, 2]), randn(5, 6, 4), needs=["gather"])
case("test_index_slice_fanout", lambda x: x[::-1, 2:4, :] + x[::-1, 3:5, :], randn(5, 6, 4))
case("test_index_multiple_slices", lambda x: x[2:6][1:3], randn(7))
case("test_reshape_call", lambda x: mt.reshape(x, (5 * 4, 6)), randn(5, 6, 4))
case("test_ravel_call", lambda x: mt.reshape(x, [-1]), randn(5, 6, 4))
_A564 = randn(5, 6, 4)
case("test_simple_concatenate", lambda x: mt.concat((_A564, x), 0), randn(4, 6, 4))
case("test_concatenate_axis_1", lambda x: mt.concat((_A564, x, _A564), axis=1),
     randn(5, 6, 4))
case("test_trace", lambda x: mt.linalg.trace(x), randn(10, 10), needs=["linalg.trace"])
case("test_split", lambda x: mt.split(x, 2)[0], randn(10), needs=["split"])
case("test_diag", lambda x: mt.linalg.diag_part(x), randn(10, 10), needs=["linalg.diag_part"])
case("test_transpose", lambda x: mt.transpose(x), randn(8, 8))
case("test_roll", lambda x: mt.roll(x, 2, axis=1), randn(4, 5), needs=["roll"])
case("test_triu", lambda x: x - mt.linalg.band_part(x, -1, 1), randn(5, 5),
     needs=["linalg.band_part"])
case("test_tril", lambda x: mt.linalg.band_part(x, -1, 2), randn(5, 5),
     needs=["linalg.band_part"])
case("test_clip", lambda x: mt.clip_by_value(x, 0.1, 1.1), randn(5, 5))
case("test_prod_1", lambda x: mt.reduce_prod(x), randn(2, 3) ** 2 / 10.0 + 0.1)
case("test_prod_2", lambda x: mt.reduce_prod(x, axis=0), randn(2, 3) ** 2 + 0.1)
case("test_prod_4", lambda x: mt.reduce_prod(x), randn(7) ** 2 + 0.1)
case("test_1d_array", lambda x: mt.convert_to_tensor([x, x * 1.0, x + 2.5]), 3.0)
case("test_2d_array", lambda x: mt.convert_to_tensor([[x, x * 1.0, x + 2.5],
                                                      [x ** 2, x, x / 2.0]]), 3.0)
case("test_array_from_arrays", lambda x: mt.convert_to_tensor([x, x]), randn(3, 2))
case("test_array_from_arrays_2", lambda x: mt.convert_to_tensor([[2 * x, x + 1], [x, x]]),
     randn(3, 2))
case("test_r_double", lambda x: mt.concat([x, x], 0), randn(3, 2))
case("test_var", lambda x: mt.math.reduce_variance(x, axis=1, keepdims=True), randn(3, 4),
     needs=["math.reduce_variance"])
case("test_std", lambda x: mt.math.reduce_std(x), randn(3, 4), needs=["math.reduce_std"])
_COND = randn(4, 5) > 0
case("test_where", lambda x, y: mt.where(_COND, x, y), randn(4, 5), randn(4, 5))
case("test_squeeze_func", lambda x: mt.squeeze(x), randn(5, 1, 4))
case("test_repeat", lambda x: mt.repeat(x, 2, axis=1), randn(5, 3, 4), needs=["repeat"])
case("test_expand_dims", lambda x: mt.expand_dims(x, 2), randn(5, 1, 4))
case("test_tensordot_kwargs_by_position",
     lambda x: mt.tensordot(x * mt.ones((2, 2), dtype=mt.float64),
                            x * mt.ones((2, 2), dtype=mt.float64), 2), 1.0,
     needs=["tensordot"])
case("test_multi_index", lambda x: mt.reduce_sum(mt.gather(x, [0, 0])), randn(3),
     needs=["gather"])
case("test_multi_index2", lambda x: mt.reduce_sum(mt.gather(x, [0, 1, 0])), randn(3),
     needs=["gather"])
case("test_index_dot_slices", lambda x: mt.reduce_sum(x[:2] * x[2:]), randn(4))
case("test_make_diagonal", lambda d: mt.linalg.diag(d), randn(3, 4), needs=["linalg.diag"])
case("test_diagonal", lambda d: mt.linalg.diag_part(d), randn(3, 4, 4),
     needs=["linalg.diag_part"])


# --- tests/test_linalg.py ---------------------------------------------------------------

_D8 = randn(8, 8)
case("test_inv", lambda x: to_scalar(mt.linalg.inv(x)), _D8 @ _D8 + np.eye(8))
case("test_inv_3d", lambda x: to_scalar(mt.linalg.inv(x)), randn(4, 4, 4) + 5 * np.eye(4))
_B87 = randn(8, 7)
case("test_solve_arg1", lambda a: to_scalar(mt.linalg.solve(a, _B87)),
     randn(8, 8) + 10.0 * np.eye(8))
_A6 = randn(6, 6) + np.eye(6)
case("test_solve_arg2", lambda b: to_scalar(mt.linalg.solve(_A6, b)), randn(6, 5))
_B546 = randn(5, 4, 6)
case("test_solve_arg1_3d_3d", lambda a: to_scalar(mt.linalg.solve(a, _B546)),
     randn(5, 4, 4) + 5 * np.eye(4))
case("test_det", lambda x: mt.linalg.det(x), randn(6, 6), needs=["linalg.det"])
case("test_det_3d", lambda x: to_scalar(mt.linalg.det(x)), randn(3, 3, 3),
     needs=["linalg.det"])
_M6 = randn(6, 6)
case("test_slogdet", lambda x: mt.linalg.slogdet(x)[1], _M6, needs=["linalg.slogdet"])
case("test_slogdet[negative]", lambda x: mt.linalg.slogdet(x)[1], -_M6,
     needs=["linalg.slogdet"])
case("test_slogdet_3d", lambda x: mt.reduce_sum(mt.linalg.slogdet(x)[1]),
     np.stack([rand_psd(5) + 5 * np.eye(5) for _ in range(3)]), needs=["linalg.slogdet"])
case("test_vector_2norm", lambda x: to_scalar(mt.norm(x)), randn(6))
case("test_frobenius_norm", lambda x: to_scalar(mt.norm(x)), randn(6, 5))
case("test_frobenius_norm_axis", lambda x: to_scalar(mt.norm(x, axis=[0, 1])),
     randn(6, 5, 4))
for _ord in (2, 3, 4):
    case(f"test_vector_norm_ord[{_ord}]", functools.partial(
        lambda x, o: mt.norm(x, ord=o), o=_ord), randn(6))
for _axis in range(3):
    case(f"test_norm_axis[{_axis}]", functools.partial(
        lambda x, a: to_scalar(mt.norm(x, axis=a)), a=_axis), randn(6, 5, 4))
_H6 = randn(6, 6)
case("test_eigvalh_lower", symmetrized(
    lambda x: operator.add(*[to_scalar(t) for t in mt.linalg.eigh(x)])), _H6.T @ _H6,
    needs=["linalg.eigh"])
case("test_cholesky", symmetrized(lambda a: to_scalar(mt.linalg.cholesky(a))), rand_psd(6),
     needs=["linalg.cholesky"])
case("test_cholesky_broadcast", symmetrized(lambda a: to_scalar(mt.linalg.cholesky(a))),
     np.stack([rand_psd(6) for _ in range(3)]), needs=["linalg.cholesky"])
_Z6 = randn(6)
case("test_cholesky_reparameterization_trick",
     symmetrized(lambda a: mt.norm(mt.linalg.matvec(mt.linalg.cholesky(a), _Z6))),
     rand_psd(6), needs=["linalg.cholesky", "linalg.matvec"])
_b6 = randn(6, 1)
for _lower in (True, False):
    for _adjoint in (False, True):
        case(f"test_solve_triangular_arg1[lower={_lower},adjoint={_adjoint}]",
             functools.partial(lambda a, lo, ad: to_scalar(mt.linalg.triangular_solve(
                 a, _b6, lower=lo, adjoint=ad)), lo=_lower, ad=_adjoint),
             randn(6, 6) + 10 * np.eye(6), needs=["linalg.triangular_solve"])


def _svd_sum(x):
    s, u, v = mt.linalg.svd(x, full_matrices=False)  # TensorFlow's order: s, u, v
    return to_scalar(u) + to_scalar(s) + to_scalar(v)


case("test_svd_wide_2d", _svd_sum, randn(3, 5), needs=["linalg.svd"])
case("test_svd_wide_3d", _svd_sum, randn(4, 3, 5), needs=["linalg.svd"])
case("test_svd_square_2d", _svd_sum, randn(4, 4), needs=["linalg.svd"])
case("test_svd_tall_2d", _svd_sum, randn(5, 3), needs=["linalg.svd"])
case("test_svd_only_s_2d", lambda x: to_scalar(mt.linalg.svd(x, compute_uv=False)),
     randn(5, 3), needs=["linalg.svd"])


@pytest.mark.parametrize("fun, args", CASES)
@pytest.mark.filterwarnings("ignore:.*encountered:RuntimeWarning")
def test_autograd_check_grads(fun, args):
    # float64 in, float64 out: a result silently made float32 (a detached list) would
    # also hide from the finite differences, whose steps float32 rounds away.
    out = fun(*[mt.constant(a) for a in args])
    assert out.dtype == np.float64, f"float64 arguments gave a {out.dtype} result"
    check_gradients(fun, args, order=2)
