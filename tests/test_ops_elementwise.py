"""The elementwise ops of issue 16 (trigonometric.py, exp_log.py, special.py,
the division ops of elementwise.py, logical.py, complex.py): values against NumPy and known
values in float32 and float64, TensorFlow's dtypes and edge values, the
places where a derivative does not exist (with TensorFlow's answer), errors,
and broadcasting shapes drawn by Hypothesis. Derivatives to third order,
pfor, forward mode and compiled programs: tests/op_table_elementwise.py.
The TensorFlow answers stated here were measured with TensorFlow 2.21
(tests/conformance/cases_*.py compare with it directly)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitape as mt
from minitape.test import check_gradients

DTYPES = [np.float32, np.float64]
GAMMA = 0.5772156649015329  # Euler's constant


def grad(f, *xs, upstream=None):
    xs = [mt.constant(x) for x in xs]
    with mt.GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    return y, tape.gradient(y, xs, output_gradients=upstream)


# --- values ---------------------------------------------------------------------------
UNARY_NUMPY = {  # op: (NumPy reference, inputs inside the domain)
    "tan": (np.tan, [0.5, -1.2, 0.0]), "asin": (np.arcsin, [0.5, -0.9, 0.0]),
    "acos": (np.arccos, [0.5, -0.9, 1.0]), "atan": (np.arctan, [0.5, -30.0, 0.0]),
    "sinh": (np.sinh, [0.5, -3.0, 0.0]), "cosh": (np.cosh, [0.5, -3.0, 0.0]),
    "asinh": (np.arcsinh, [0.5, -30.0, 0.0]), "acosh": (np.arccosh, [1.0, 2.5, 30.0]),
    "atanh": (np.arctanh, [0.5, -0.9, 0.0]), "expm1": (np.expm1, [1e-10, -2.0, 3.0]),
    "log1p": (np.log1p, [1e-10, -0.5, 3.0]), "rsqrt": (lambda v: 1 / np.sqrt(v), [0.25, 4.0, 2.0]),
    "reciprocal": (lambda v: 1 / v, [0.25, -4.0, 3.0]),
    "softsign": (lambda v: v / (1 + np.abs(v)), [0.5, -3.0, 0.0]),
    "log_sigmoid": (lambda v: -np.logaddexp(0, -v), [0.5, -3.0, 20.0]),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(UNARY_NUMPY))
def test_unary_values_match_numpy(name, dtype):
    reference, inputs = UNARY_NUMPY[name]
    x = np.array(inputs, dtype)
    y = getattr(mt.math, name)(mt.constant(x))
    assert y.dtype == dtype and y.shape == (3,)
    rtol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(y.numpy(), reference(x.astype(np.float64)), rtol=rtol)


def test_top_level_names_are_tensorflows():
    # tf.tan, tf.atan2, tf.add_n, tf.complex, tf.truediv exist; tf.expm1, tf.erf, tf.real do not
    for name in ("tan", "sinh", "cosh", "asin", "acos", "atan", "atan2", "asinh", "acosh",
                 "atanh", "truediv", "add_n", "complex", "logical_and", "logical_or",
                 "logical_not"):
        assert getattr(mt, name) is getattr(mt.math, name, getattr(mt, name))
    for name in ("expm1", "log1p", "rsqrt", "reciprocal", "ceil", "erf", "erfc", "lgamma",
                 "digamma", "softsign", "log_sigmoid", "squared_difference", "floordiv",
                 "floormod", "divide_no_nan", "multiply_no_nan", "xlogy", "xdivy",
                 "is_finite", "is_nan", "is_inf", "real", "imag", "conj", "angle",
                 "logical_xor", "polygamma"):
        assert not hasattr(mt, name) and callable(getattr(mt.math, name))
    assert mt.nn.softsign is mt.math.softsign and mt.math.mod is mt.math.floormod


def test_atan2_takes_y_first():
    y = mt.atan2(mt.constant([1.0, 1.0, 0.0]), mt.constant([-1.0, 0.0, -2.0]))
    np.testing.assert_allclose(y.numpy(), [3 * np.pi / 4, np.pi / 2, np.pi], rtol=1e-7)
    # TensorFlow's argument names work as keywords
    assert float(mt.atan2(x=mt.constant(-1.0), y=mt.constant(0.0))) == pytest.approx(np.pi)
    assert float(mt.math.polygamma(x=mt.constant(1.0), a=mt.constant(1.0))) == \
        pytest.approx(np.pi ** 2 / 6)
    assert float(mt.nn.softsign(features=mt.constant(1.0))) == 0.5
    assert mt.complex(imag=mt.constant(2.0), real=mt.constant(1.0)).numpy() == 1 + 2j


@pytest.mark.parametrize("dtype", DTYPES)
def test_special_function_values(dtype):
    x = mt.constant(np.array([0.5, 1.0, 3.0, -0.5], dtype))
    rtol = 1e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(mt.math.erf(x).numpy(),
                               [0.5204998778130465, 0.8427007929497149, 0.9999779095030014,
                                -0.5204998778130465], rtol=rtol)
    np.testing.assert_allclose(mt.math.erfc(x).numpy(),
                               [0.4795001221869535, 0.15729920705028513,
                                2.209049699858544e-05, 1.5204998778130465], rtol=rtol)
    np.testing.assert_allclose(mt.math.lgamma(x).numpy(),
                               [math.log(math.sqrt(math.pi)), 0.0, math.log(2.0),
                                math.log(2 * math.sqrt(math.pi))], rtol=rtol, atol=1e-15)
    np.testing.assert_allclose(mt.math.digamma(x).numpy(),
                               [-GAMMA - 2 * math.log(2), -GAMMA, 1.5 - GAMMA,
                                0.03648997397857652], rtol=rtol)
    for f in (mt.math.erf, mt.math.erfc, mt.math.lgamma, mt.math.digamma):
        assert f(x).dtype == dtype


def test_polygamma_known_values():
    n = mt.constant([[1.0], [2.0], [3.0]], dtype=mt.float64)
    x = mt.constant([1.0, 0.5, -0.5], dtype=mt.float64)
    zeta3 = 1.2020569031595942
    expected = [[np.pi ** 2 / 6, np.pi ** 2 / 2, np.pi ** 2 / 2 + 4],
                [-2 * zeta3, -14 * zeta3, None],
                [np.pi ** 4 / 15, np.pi ** 4, None]]
    got = mt.math.polygamma(n, x).numpy()
    for row, want in zip(got, expected):
        np.testing.assert_allclose([g for g, w in zip(row, want) if w is not None],
                                   [w for w in want if w is not None], rtol=1e-13)
    # psi_2(x + 1) = psi_2(x) + 2 / x**3: psi_2(-0.5) = psi_2(0.5) + 16
    np.testing.assert_allclose(got[1, 2], -14 * zeta3 + 16, rtol=1e-12)
    # digamma for large x: log x - 1/(2x) - 1/(12 x^2)
    big = mt.math.digamma(mt.constant([1e6], dtype=mt.float64)).numpy()
    np.testing.assert_allclose(big, [math.log(1e6) - 5e-7 - 1 / 12e12], rtol=1e-15)


def test_special_functions_at_poles_and_infinities():
    # TensorFlow: lgamma is inf at 0, -1, -2 (and at +-inf); digamma NaN at the poles and
    # -inf, inf at inf; polygamma(n, pole) inf for odd n, NaN for even n;
    # polygamma of a non-integer or negative order is NaN.
    x = mt.constant([0.0, -1.0, -2.0, -np.inf, np.inf, np.nan], dtype=mt.float64)
    np.testing.assert_array_equal(mt.math.lgamma(x).numpy(),
                                  [np.inf, np.inf, np.inf, np.inf, np.inf, np.nan])
    np.testing.assert_array_equal(mt.math.digamma(x).numpy(),
                                  [np.nan, np.nan, np.nan, np.nan, np.inf, np.nan])
    pg = mt.math.polygamma(mt.constant([[1.0], [2.0]], dtype=mt.float64), x).numpy()
    np.testing.assert_array_equal(pg, [[np.inf, np.inf, np.inf, np.inf, 0.0, np.nan],
                                       [np.nan, np.nan, np.nan, np.nan, -0.0, np.nan]])
    assert np.signbit(pg[1, 4])
    bad = mt.math.polygamma(mt.constant([1.5, -1.0]), mt.constant([1.0, 1.0]))
    assert np.isnan(bad.numpy()).all()
    # erf's limits (TensorFlow 2.21 gives NaN for float64 erf(+-inf), float32 -1 and 1)
    for dtype in DTYPES:
        inf = mt.constant(np.array([-np.inf, np.inf], dtype))
        np.testing.assert_array_equal(mt.math.erf(inf).numpy(), [-1.0, 1.0])
        np.testing.assert_array_equal(mt.math.erfc(inf).numpy(), [2.0, 0.0])


def test_special_function_gradients_chain_into_polygamma():
    x = np.array([0.5, 2.5, -0.5])
    _, (g,) = grad(mt.math.lgamma, x)
    np.testing.assert_allclose(g.numpy(), mt.math.digamma(mt.constant(x)).numpy(), rtol=1e-15)
    _, (g,) = grad(mt.math.digamma, x)
    np.testing.assert_allclose(g.numpy()[0], np.pi ** 2 / 2, rtol=1e-13)
    # lgamma's gradient at a pole is digamma's NaN, as in TensorFlow
    _, (g,) = grad(mt.math.lgamma, np.array([0.0, -1.0]))
    assert np.isnan(g.numpy()).all()


# --- where a derivative blows up or does not exist ------------------------------------
def test_rsqrt_and_reciprocal_give_zero_where_the_upstream_gradient_is_zero():
    # TensorFlow's RsqrtGrad / ReciprocalGrad kernels: the where-trap gives 0, not NaN
    for f, bad in ((mt.math.rsqrt, [-1.0, 0.0]), (mt.math.reciprocal, [0.0, -0.0])):
        x = np.array(bad + [4.0])
        y, (g,) = grad(lambda t: mt.where(t > 0, f(t), 0.0), x)
        assert g.numpy()[0] == 0.0 and g.numpy()[1] == 0.0 and g.numpy()[2] < 0
        # forward mode too: a zero tangent gives 0 (TensorFlow's JVP goes through the kernel)
        t = mt.constant(x)
        with mt.autodiff.ForwardAccumulator(t, mt.constant([0.0, 0.0, 1.0], dtype=mt.float64)) as acc:
            y = f(t)
        assert acc.jvp(y).numpy()[:2].tolist() == [0.0, 0.0]
    # a non-zero upstream gradient still meets the infinite derivative
    _, (g,) = grad(mt.math.reciprocal, np.array([0.0]))
    assert g.numpy()[0] == -np.inf


def test_log1p_and_others_multiply_so_the_where_trap_gives_nan():
    # TensorFlow's Log1p rule is a plain product: 0 * inf is NaN at x = -1
    _, (g,) = grad(lambda t: mt.where(t > 0, mt.math.log1p(t), 0.0), np.array([-1.0, 4.0]))
    assert np.isnan(g.numpy()[0]) and g.numpy()[1] == pytest.approx(0.2)


def test_inverse_trig_at_the_domain_edges():
    # TensorFlow: asin'(1) = inf, acos'(1) = -inf, outside [-1, 1] value and slope NaN
    y, (g,) = grad(mt.asin, np.array([1.0, 2.0]))
    assert g.numpy()[0] == np.inf and np.isnan(y.numpy()[1]) and np.isnan(g.numpy()[1])
    _, (g,) = grad(mt.acos, np.array([1.0]))
    assert g.numpy()[0] == -np.inf
    _, (g,) = grad(mt.atanh, np.array([1.0, -2.0]))
    assert g.numpy()[0] == np.inf and g.numpy()[1] == pytest.approx(-1 / 3)


def test_ceil_and_floordiv_have_no_gradient():
    # TensorFlow's _CeilGrad and _FloorDivGrad return None
    _, (g,) = grad(mt.math.ceil, np.array([1.5, -2.0]))
    assert g is None
    _, (gx, gy) = grad(mt.math.floordiv, np.array([7.5, -2.0]), np.array([2.0, 0.3]))
    assert gx is None and gy is None
    x = mt.constant([1.5])
    with mt.autodiff.ForwardAccumulator(x, mt.constant([1.0])) as acc:
        y = mt.math.ceil(x)
    assert acc.jvp(y) is None


def test_floormod_gradient_is_one_and_minus_the_quotient():
    _, (gx, gy) = grad(mt.math.floormod, np.array([7.5, -2.0]), np.array([2.0, 0.3]))
    np.testing.assert_array_equal(gx.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(gy.numpy(), [-3.0, 7.0])


def test_zeros_where_tensorflow_makes_them():
    # divide_no_nan: 0 where y = 0, and so are both partial derivatives
    y, (gx, gy) = grad(mt.math.divide_no_nan, np.array([7.5, 0.0, 1.0]), np.array([0.0, 0.0, 2.0]))
    np.testing.assert_array_equal(y.numpy(), [0.0, 0.0, 0.5])
    np.testing.assert_array_equal(gx.numpy(), [0.0, 0.0, 0.5])
    np.testing.assert_array_equal(gy.numpy(), [0.0, 0.0, -0.25])
    # multiply_no_nan: 0 where y = 0 even for x = inf or NaN; d/dy is x (inf and NaN kept)
    y, (gx, gy) = grad(mt.math.multiply_no_nan, np.array([np.inf, np.nan, 2.0]),
                       np.array([0.0, 0.0, 3.0]))
    np.testing.assert_array_equal(y.numpy(), [0.0, 0.0, 6.0])
    np.testing.assert_array_equal(gx.numpy(), [0.0, 0.0, 3.0])
    np.testing.assert_array_equal(gy.numpy(), [np.inf, np.nan, 2.0])
    # xlogy and xdivy: 0 where x = 0 (even 0 * log 0), and so are their partials
    y, (gx, gy) = grad(mt.math.xlogy, np.array([0.0, 0.0, 2.0]), np.array([0.0, 1.0, 3.0]))
    np.testing.assert_allclose(y.numpy(), [0.0, 0.0, 2 * np.log(3.0)])
    np.testing.assert_allclose(gx.numpy(), [0.0, 0.0, np.log(3.0)])
    np.testing.assert_allclose(gy.numpy(), [0.0, 0.0, 2 / 3])
    y, (gx, gy) = grad(mt.math.xdivy, np.array([0.0, 0.0, 2.0]), np.array([0.0, 1.0, 4.0]))
    np.testing.assert_allclose(y.numpy(), [0.0, 0.0, 0.5])
    np.testing.assert_allclose(gx.numpy(), [0.0, 0.0, 0.25])
    np.testing.assert_allclose(gy.numpy(), [0.0, 0.0, -0.125])


def test_atan2_at_the_origin_has_a_nan_gradient():
    _, (gy, gx) = grad(mt.atan2, np.array([0.0]), np.array([0.0]))  # 0 / 0, as TensorFlow
    assert np.isnan(gy.numpy()).all() and np.isnan(gx.numpy()).all()


# --- division, dtypes -------------------------------------------------------------------
def test_integer_division_stays_integer():
    i, j = mt.constant([7, -7, 0]), mt.constant([2, 2, 3])
    for got, want in ((i // j, [3, -4, 0]), (i % j, [1, 1, 0]), (mt.math.floordiv(i, 2), [3, -4, 0]),
                      (7 // j, [3, 3, 2]), (7 % j, [1, 1, 1])):
        assert got.dtype == np.int32 and got.numpy().tolist() == want


def test_float_division_as_tensorflow():
    f, g = mt.constant([7.5, -7.5, 0.0]), mt.constant([2.0, 2.0, -3.0])
    assert (f // g).numpy().tolist() == [3.0, -4.0, -0.0]
    assert (f % g).numpy().tolist() == [1.5, 0.5, 0.0] and not np.signbit((f % g).numpy()[2])
    # floor of the quotient, as TensorFlow (Python's 1.0 // 0.1 is 9.0)
    assert float(mt.math.floordiv(mt.constant(1.0), 0.1)) == 10.0
    np.testing.assert_array_equal((f // 0.0).numpy(), [np.inf, -np.inf, np.nan])
    assert np.isnan((f % 0.0).numpy()).all()


def test_truediv_divides_integers_in_floating_point():
    for dtype, want in ((np.int8, np.float32), (np.int16, np.float32), (np.uint8, np.float32),
                        (np.int32, np.float64), (np.int64, np.float64)):
        y = mt.truediv(mt.constant(np.array([1, 3], dtype)), mt.constant(np.array([2, 4], dtype)))
        assert y.dtype == want and y.numpy().tolist() == [0.5, 0.75]
    assert mt.math.divide_no_nan(mt.constant([1, 2]), mt.constant([0, 4])).dtype == np.float64
    assert mt.truediv(mt.constant([1.0]), 2).dtype == np.float32


def test_squared_difference_and_add_n():
    assert mt.math.squared_difference(mt.constant([7, -7]), mt.constant([2, 2])).numpy().tolist() \
        == [25, 81]
    z = mt.math.squared_difference(mt.constant([1 + 2j]), mt.constant([0.5 - 1j]))
    assert z.dtype == np.complex128 and z.numpy().tolist() == [9.25 + 0j]  # |x - y|^2
    f, g = mt.constant([7.5, -7.5]), mt.constant([2.0, 3.0])
    assert mt.add_n([f, g, f]).numpy().tolist() == [17.0, -12.0]
    assert mt.add_n([1.0, 2.0]).dtype == np.float32
    assert float(mt.add_n(f)) == 0.0  # a tensor is the list of its rows, as in TensorFlow


def test_ceil_values():
    y = mt.math.ceil(mt.constant([-1.5, -0.5, 0.2, 2.0]))
    assert y.numpy().tolist() == [-1.0, -0.0, 1.0, 2.0] and np.signbit(y.numpy()[1])


# --- logic ---------------------------------------------------------------------------------
def test_logical_ops_and_operators():
    b, c = mt.constant([True, False, True]), mt.constant([True, True, False])
    assert (b & c).numpy().tolist() == [True, False, False]
    assert (b | c).numpy().tolist() == [True, True, True]
    assert (b ^ c).numpy().tolist() == mt.math.logical_xor(b, c).numpy().tolist() \
        == [False, True, True]
    assert (~b).numpy().tolist() == mt.logical_not(b).numpy().tolist() == [False, True, False]
    assert (True & b).numpy().tolist() == [True, False, True]
    assert mt.logical_and(b, [[True], [False]]).shape == (2, 3)
    i, j = mt.constant([7, -7, 0]), mt.constant([2, 2, 3])  # bitwise on integers
    assert (i & j).numpy().tolist() == [2, 0, 0] and (i | j).numpy().tolist() == [7, -5, 3]
    assert (i ^ j).numpy().tolist() == [5, -5, 3] and (~i).numpy().tolist() == [-8, 6, -1]


def test_value_tests():
    for dtype in DTYPES:
        x = mt.constant(np.array([1.0, np.nan, np.inf, -np.inf], dtype))
        assert mt.math.is_finite(x).numpy().tolist() == [True, False, False, False]
        assert mt.math.is_nan(x).numpy().tolist() == [False, True, False, False]
        assert mt.math.is_inf(x).numpy().tolist() == [False, False, True, True]
        assert mt.math.is_nan(x).dtype == np.bool_


# --- complex numbers ------------------------------------------------------------------------
def test_complex_parts_and_dtypes():
    z64 = mt.constant(np.array([1 + 2j, -3 - 0.5j], np.complex64))
    assert mt.math.real(z64).dtype == np.float32 and mt.math.real(z64).numpy().tolist() == [1, -3]
    assert mt.math.imag(z64).numpy().tolist() == [2.0, -0.5]
    assert mt.math.conj(z64).numpy().tolist() == [1 - 2j, -3 + 0.5j]
    np.testing.assert_allclose(mt.math.angle(z64).numpy(), np.angle(z64.numpy()), rtol=1e-6)
    assert mt.complex(1.0, 2.0).dtype == np.complex64
    assert mt.complex(mt.constant([1.0], dtype=mt.float64), 2.0).dtype == np.complex128
    assert mt.complex(mt.ones((2, 1)), mt.ones(3)).shape == (2, 3)
    scalar = mt.constant(np.array(0.5 + 0.3j))  # scalars stay scalars
    assert mt.math.real(scalar).shape == mt.math.imag(scalar).shape == () == scalar.shape
    # real inputs: real and conj return them, imag gives zeros, angle is 0 or pi
    x = mt.constant([1.0, -2.0, -0.0])
    assert mt.math.real(x) is x and mt.math.conj(x) is x
    assert mt.math.imag(x).numpy().tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(mt.math.angle(x).numpy(), [0.0, np.pi, 0.0])


def test_gradients_through_complex_numbers_follow_tensorflow():
    # L = |z|^2 at z = 1 + 2i: TensorFlow's tape gives dL/dx + i dL/dy = 2 + 4i
    # (JAX's and autograd's grad give the conjugate, 2 - 4i: docs/differences.md).
    z = mt.constant(np.array([1 + 2j]))
    _, (g,) = grad(lambda t: mt.math.real(t * mt.math.conj(t)), z.numpy())
    np.testing.assert_allclose(g.numpy(), [2 + 4j])
    # a holomorphic f: the gradient is grad * conj(f'(z)), the JVP f'(z) * t
    z0 = 0.5 + 0.3j
    for f, df in ((mt.sin, np.cos), (mt.tan, lambda v: 1 / np.cos(v) ** 2),
                  (mt.asinh, lambda v: 1 / np.sqrt(1 + v * v)), (mt.exp, np.exp),
                  (mt.math.expm1, np.exp), (mt.math.reciprocal, lambda v: -1 / v ** 2),
                  (mt.square, lambda v: 2 * v), (mt.sqrt, lambda v: 0.5 / np.sqrt(v))):
        _, (g,) = grad(f, np.array([z0]))
        np.testing.assert_allclose(g.numpy(), [np.conj(df(z0))], rtol=1e-12)
        x = mt.constant(np.array([z0]))
        with mt.autodiff.ForwardAccumulator(x, mt.constant(np.array([1.0 - 2j]))) as acc:
            y = f(x)
        np.testing.assert_allclose(acc.jvp(y).numpy(), [df(z0) * (1 - 2j)], rtol=1e-12)


def test_real_inputs_record_no_conjugates():
    x = mt.constant([0.5])
    with mt.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = mt.tan(x)
        tape.gradient(y, x)
    types = [op.type for op in outer._ops]
    assert "Tan" in types and "Conj" not in types


# --- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("call, error, words", [
    (lambda: mt.tan(mt.constant([1, 2])), TypeError, "tan"),
    (lambda: mt.math.erf(mt.constant(np.array([1j]))), TypeError, "erf: expected a real"),
    (lambda: mt.atan2(mt.constant([1.0]), mt.constant([1.0], dtype=mt.float64)), TypeError,
     "atan2: the operands have different dtypes"),
    (lambda: mt.atan2(mt.ones(2), mt.ones(3)), ValueError, "atan2: shapes (2,) and (3,)"),
    (lambda: mt.math.floordiv(mt.constant([1, 2]), mt.constant([1, 0])), ValueError,
     "floordiv: integer division by zero"),
    (lambda: mt.math.floormod(mt.constant([1]), 0), ValueError, "floormod: integer division"),
    (lambda: mt.math.floormod(mt.constant([1j]), mt.constant([1j])), TypeError, "floormod"),
    (lambda: mt.math.xlogy(mt.constant([1]), mt.constant([1])), TypeError, "xlogy"),
    (lambda: mt.math.multiply_no_nan(mt.constant([1]), mt.constant([1])), TypeError,
     "multiply_no_nan"),
    (lambda: mt.add_n([]), ValueError, "add_n"),
    (lambda: mt.add_n([mt.ones(2), mt.ones(3)]), ValueError, "add_n: the inputs have different "
     "shapes, (2,) and (3,)"),
    (lambda: mt.add_n([mt.ones(2), mt.ones(2, dtype=mt.float64)]), TypeError, "float32 and float64"),
    (lambda: mt.logical_and(mt.constant([1]), mt.constant([0])), TypeError, "logical_and"),
    (lambda: mt.constant([1.0]) & mt.constant([2.0]), TypeError, "&: expected bool or integer"),
    (lambda: ~mt.constant([1.0]), TypeError, "~"),
    (lambda: mt.math.is_nan(mt.constant([1])), TypeError, "is_nan"),
    (lambda: mt.complex(mt.constant([1]), mt.constant([2])), TypeError, "complex"),
    (lambda: mt.complex(mt.constant([1.0]), mt.constant([1.0], dtype=mt.float64)), TypeError,
     "complex"),
    (lambda: mt.math.angle(mt.constant([1])), TypeError, "angle"),
    (lambda: mt.math.ceil(mt.constant([1])), TypeError, "ceil"),
    (lambda: mt.math.truediv(mt.constant([1]), 2.5), TypeError, "truediv"),
])
def test_bad_input_raises_a_clear_error(call, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_a_failed_op_records_nothing():
    x = mt.constant([1.0, 2.0])
    with mt.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(ValueError):
            mt.atan2(x, mt.ones(3))
        y = mt.atan2(x, mt.ones(2))
    (g,) = [tape.gradient(y, x)]
    np.testing.assert_allclose(g.numpy(), 1 / (1 + np.array([1.0, 4.0])))


# --- traced functions replay every new op type ------------------------------------------
def test_traced_and_compiled_functions_replay_the_new_ops():
    def f(x, i):
        b = mt.math.is_finite(x) & (x > 0.0)
        z = mt.complex(x, x)
        return [mt.add_n([mt.math.ceil(x), mt.math.floordiv(x, 0.7), mt.math.floormod(x, 0.7),
                          mt.math.real(z * mt.math.conj(z)), mt.math.angle(z),
                          mt.math.imag(x)]),
                mt.cast(b, mt.float32), mt.math.logical_xor(b, ~b), i // 2, i % 3, i & 6]
    x, i = mt.constant([0.5, -1.25, 3.0]), mt.constant([7, -7, 4])
    eager = f(x, i)
    for jit in (False, True):
        traced = mt.function(f, jit_compile=jit)(x, i)
        for a, b in zip(traced, eager):
            assert a.dtype == b.dtype
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


# --- broadcasting shapes ---------------------------------------------------------------------
def _nonzero(rng, shape):
    return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 1.5, shape)


BINARY = {  # op, NumPy reference, x drawn, y drawn
    "atan2": (mt.atan2, np.arctan2, _nonzero, _nonzero),
    "xlogy": (mt.math.xlogy, lambda x, y: x * np.log(y), _nonzero,
              lambda rng, s: rng.uniform(0.5, 2.0, s)),
    "xdivy": (mt.math.xdivy, lambda x, y: x / y, _nonzero, _nonzero),
    "divide_no_nan": (mt.math.divide_no_nan, lambda x, y: x / y, _nonzero, _nonzero),
    "multiply_no_nan": (mt.math.multiply_no_nan, np.multiply, _nonzero, _nonzero),
    "squared_difference": (mt.math.squared_difference, lambda x, y: (x - y) ** 2, _nonzero,
                           _nonzero),
    "floormod": (mt.math.floormod, np.mod, lambda rng, s: rng.uniform(2.1, 2.9, s),
                 lambda rng, s: rng.uniform(0.95, 1.05, s)),
    "truediv": (mt.truediv, np.divide, _nonzero, _nonzero),
    "polygamma": (mt.math.polygamma, None, lambda rng, s: rng.integers(0, 3, s).astype(float),
                  lambda rng, s: rng.uniform(0.5, 3.0, s)),
    "complex": (lambda x, y: mt.math.angle(mt.complex(x, y)), lambda x, y: np.arctan2(y, x),
                _nonzero, _nonzero),
}


@settings(max_examples=40, deadline=None)
@given(pair=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       name=st.sampled_from(sorted(BINARY)), seed=st.integers(0, 2**32 - 1))
def test_binary_ops_broadcast(pair, name, seed):
    fn, reference, draw_x, draw_y = BINARY[name]
    rng = np.random.default_rng(seed)
    x, y = draw_x(rng, pair.input_shapes[0]), draw_y(rng, pair.input_shapes[1])
    z = fn(mt.constant(x), mt.constant(y))
    assert z.shape == pair.result_shape
    if reference is not None:
        np.testing.assert_allclose(z.numpy(), reference(x, y), rtol=1e-13)
    if name == "polygamma":  # no gradient for the order: check x alone
        check_gradients(lambda t: fn(mt.constant(x), t), [y], order=1, seed=seed)
    else:
        check_gradients(fn, [x, y], order=1, seed=seed)
