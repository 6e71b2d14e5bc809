"""mt.test.check_gradients passes right rules and catches wrong ones;
mt.test.compute_gradient's two Jacobians agree."""
import re
import textwrap

import numpy as np
import pytest

import minitape as mt
from minitape.test import check_gradients, compute_gradient

X = np.array([0.5, -1.0, 2.0])


# A new primitive, x**2, with a right rule and two wrong ones.
@mt.primitive("CheckerSquare")
def right_square(x):
    return x * x


@mt.RegisterGradient("CheckerSquare")
def _right_square_grad(op, grad):
    return grad * 2.0 * op.inputs[0]


@mt.primitive("CheckerSquareTimesThree")
def wrong_square(x):
    return x * x


@mt.RegisterGradient("CheckerSquareTimesThree")
def _wrong_square_grad(op, grad):
    return grad * 3.0 * op.inputs[0]  # should be 2


@mt.primitive("CheckerSquareFrozen")
def frozen_square(x):
    return x * x


@mt.RegisterGradient("CheckerSquareFrozen")
def _frozen_square_grad(op, grad):
    # Right value, but the input is made a constant, so an outer tape cannot
    # see that the gradient depends on x: first order right, second order 0.
    return grad * 2.0 * mt.stop_gradient(op.inputs[0])


# Two inputs, right for x but wrong for y: z = x*y + y.
@mt.primitive("CheckerMulAdd")
def mul_add(x, y):
    return x * y + y


@mt.RegisterGradient("CheckerMulAdd")
def _mul_add_grad(op, grad):
    x, y = op.inputs
    return grad * y, grad * x  # dz/dy is x + 1


def test_right_rule_passes_to_third_order():
    check_gradients(right_square, [X], order=3)


def test_wrong_first_order_rule_is_caught():
    with pytest.raises(AssertionError, match=r"order-1 derivative of wrong_square .* args\[0\]"):
        check_gradients(wrong_square, [X], order=1)


def test_rule_with_constant_input_passes_order_1_and_fails_order_2():
    check_gradients(frozen_square, [X], order=1)
    with pytest.raises(AssertionError, match=r"order-2 derivative of frozen_square") as info:
        check_gradients(frozen_square, [X], order=2)
    # The exact order-2 derivative lost its dependence on x: it is 0.
    assert "got 0 (reverse mode)" in str(info.value)


def test_message_names_the_wrong_argument():
    with pytest.raises(AssertionError, match=r"with respect to args\[1\]"):
        check_gradients(mul_add, [X, X[::-1].copy()], order=1)


def test_error_message_shows_expected_and_got():
    with pytest.raises(AssertionError) as info:
        check_gradients(wrong_square, [np.array([1.0])], order=1, seed=3)
    message = str(info.value)
    expected, got = map(float, re.search(r"expected (\S+) \(central differences\), got "
                                         r"(\S+) \(reverse mode\)", message).groups())
    assert got == pytest.approx(1.5 * expected, rel=1e-6)  # 3x instead of 2x


def test_wrong_rule_caught_for_every_seed():
    for seed in range(5):
        with pytest.raises(AssertionError):
            check_gradients(wrong_square, [X], order=1, seed=seed)


def test_custom_gradient_second_order():
    @mt.custom_gradient
    def good_cube(x):
        return x * x * x, lambda dy: dy * 3.0 * x * x

    @mt.custom_gradient
    def numpy_cube(x):  # grad_fn leaves the tape through NumPy
        return x * x * x, lambda dy: dy * (3.0 * x.numpy() ** 2)

    check_gradients(good_cube, [X], order=2)
    check_gradients(numpy_cube, [X], order=1)
    with pytest.raises(AssertionError, match="order-2"):
        check_gradients(numpy_cube, [X], order=2)


def test_custom_gradient_closure_second_order():
    @mt.custom_gradient
    def log1pexp(x):  # the example of tf.custom_gradient's docstring
        e = mt.exp(x)
        return mt.log(1 + e), lambda dy: dy * (1 - 1 / (1 + e))

    check_gradients(log1pexp, [X], order=2)


def test_several_args_and_several_outputs():
    def f(x, y):
        return [mt.sin(x) * y, mt.reduce_sum(x * x), mt.exp(y)]
    check_gradients(f, [X, np.array([0.3, 0.2, -0.1])], order=3)


def test_unconnected_argument_is_fine():
    check_gradients(lambda x, y: mt.sin(x), [X, X], order=2)


def test_args_may_be_a_single_array_or_tensors():
    check_gradients(mt.tanh, X, order=2)
    check_gradients(mt.tanh, [mt.constant(X)], order=2)


def test_float32_warns_and_uses_loose_tolerances():
    x32 = X.astype(np.float32)
    with pytest.warns(RuntimeWarning, match="float64"):
        check_gradients(mt.sin, [x32], order=2)
    with pytest.warns(RuntimeWarning), pytest.raises(AssertionError):
        check_gradients(wrong_square, [x32], order=1)


def test_bad_arguments():
    with pytest.raises(ValueError, match="reverse mode"):
        check_gradients(mt.sin, [X], modes=("fwd", "rev"))
    with pytest.raises(TypeError, match="floating-point"):
        check_gradients(lambda x, i: x[i], [X, np.array(1)])


def test_docstring_example_runs():
    doc = check_gradients.__doc__
    example = textwrap.dedent(doc.split("Check a gradient you registered for a new primitive:")[1]
                              .split("Defaults:")[0])
    assert example.count('"MyCube"') == 2
    # A private op type name, so no other test's "MyCube" can clash with it.
    example = example.replace('"MyCube"', '"CheckerDocstringCube"')
    namespace = {"mt": mt, "np": np}
    exec(example, namespace)  # raises AssertionError if the example's rule were wrong
    assert mt.registry.is_registered("CheckerDocstringCube")


# --- compute_gradient ---------------------------------------------------------

def test_compute_gradient_square_is_diagonal():
    x = mt.constant(X)
    theoretical, numerical = compute_gradient(lambda x: x * x, [x])
    assert len(theoretical) == len(numerical) == 1
    np.testing.assert_allclose(theoretical[0], np.diag(2 * X), rtol=1e-12)
    np.testing.assert_allclose(numerical[0], np.diag(2 * X), rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("f, shapes", [
    (mt.sin, [(2, 3)]),
    (mt.matmul, [(2, 3), (3, 4)]),
    (lambda x: mt.reduce_prod(x, axis=0), [(3, 2)]),
    (lambda a, b: mt.linalg.solve(a, b), [(3, 3), (3, 2)]),
    (lambda x: mt.einsum("bxby->bxy", x), [(2, 3, 2, 3)]),
    (lambda x: x[[0, 0, 1]], [(2, 3)]),
], ids=["sin", "matmul", "reduce_prod", "solve", "einsum", "getitem"])
def test_compute_gradient_agrees(f, shapes):
    rng = np.random.default_rng(7)
    xs = [mt.constant(rng.uniform(0.5, 1.5, s) + (3 * np.eye(s[0]) if s == (3, 3) else 0))
          for s in shapes]
    y = f(*xs)
    theoretical, numerical = compute_gradient(f, xs)
    for x, t, n in zip(xs, theoretical, numerical):
        assert t.shape == n.shape == (y.size, x.size)
        np.testing.assert_allclose(t, n, rtol=1e-7, atol=1e-8)


def test_compute_gradient_matmul_jacobian_values():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4) / 10
    theoretical, numerical = compute_gradient(mt.matmul, [mt.constant(a), mt.constant(b)])
    # d(ab)[i,k]/da[j,l] = [i == j] b[l, k]
    expected_a = np.einsum("ij,lk->ikjl", np.eye(2), b).reshape(8, 6)
    np.testing.assert_allclose(theoretical[0], expected_a, rtol=1e-12)
    np.testing.assert_allclose(numerical[0], expected_a, rtol=1e-8, atol=1e-9)


def test_compute_gradient_float32_and_unconnected():
    x = mt.constant([0.5, 1.0, 1.5])  # float32: default delta 2**-10
    theoretical, numerical = compute_gradient(lambda x, y: mt.exp(x), [x, mt.constant([1.0])])
    np.testing.assert_allclose(theoretical[0], np.diag(np.exp([0.5, 1.0, 1.5])), rtol=1e-6)
    np.testing.assert_allclose(numerical[0], theoretical[0], rtol=2e-3, atol=2e-3)
    assert theoretical[1].shape == numerical[1].shape == (3, 1)
    assert not theoretical[1].any() and not numerical[1].any()


def test_compute_gradient_catches_wrong_rule():
    theoretical, numerical = compute_gradient(wrong_square, [mt.constant(X)])
    np.testing.assert_allclose(theoretical[0], 1.5 * numerical[0], rtol=1e-6)


def test_compute_gradient_treats_a_complex_number_as_two_real_ones():
    # TensorFlow's gradient_checker_v2_test (testComplexMul, testComplexConj):
    # rows Re y, Im y; columns Re x, Im x; arrays of x's real dtype (minitape
    # gave complex (1, 1) Jacobians, and a numerical one that dropped Im x).
    c = mt.constant(5 + 7j, dtype=mt.complex64)
    theoretical, numerical = compute_gradient(lambda x: c * x, [mt.constant(1 + 2j, mt.complex64)])
    assert isinstance(theoretical, tuple) and theoretical[0].dtype == np.float32
    np.testing.assert_array_equal(theoretical[0], [[5, -7], [7, 5]])
    np.testing.assert_allclose(numerical[0], [[5, -7], [7, 5]], rtol=1e-4)
    z = mt.constant(np.array([1 + 2j, 3 - 1j]))
    theoretical, numerical = compute_gradient(mt.math.conj, [z])
    conj = np.kron(np.eye(2), [[1, 0], [0, -1]])
    np.testing.assert_array_equal(theoretical[0], conj)
    np.testing.assert_allclose(numerical[0], conj, rtol=1e-9)
    # |z| of 3 + 4j: [[0.6, 0.8]]; a real x into a complex y: two rows per element.
    theoretical, numerical = compute_gradient(mt.abs, [mt.constant(np.array([3 + 4j]))])
    np.testing.assert_allclose(theoretical[0], [[0.6, 0.8]], rtol=1e-12)
    np.testing.assert_allclose(numerical[0], [[0.6, 0.8]], rtol=1e-9)
    x = mt.constant([1.0, 2.0], dtype=mt.float64)
    theoretical, numerical = compute_gradient(lambda x: mt.complex(x * x, 2.0 * x), [x])
    expected = [[2, 0], [2, 0], [0, 4], [0, 2]]
    np.testing.assert_allclose(theoretical[0], expected, rtol=1e-12)
    np.testing.assert_allclose(numerical[0], expected, rtol=1e-9)


def test_compute_gradient_of_an_empty_result_still_checks_the_gradient():
    # testEmptySucceeds / testEmptyFails: (0, 0) Jacobians, but a gradient of the
    # wrong shape, or a nonzero one, is a ValueError (minitape ran no gradient).
    x = mt.constant(np.ones((0, 3)), dtype=mt.float32)
    theoretical, numerical = compute_gradient(mt.identity, [x])
    assert theoretical[0].shape == numerical[0].shape == (0, 0)

    @mt.custom_gradient
    def transposed_grad(x):
        return mt.identity(x), lambda dy: mt.transpose(dy)

    with pytest.raises(ValueError, match=r"shape \(3, 0\)"):
        compute_gradient(transposed_grad, [x])

    @mt.custom_gradient
    def ones_grad(x):
        return mt.identity(x), lambda dy: mt.ones_like(x)

    with pytest.raises(ValueError, match="Empty tensor with nonzero gradients"):
        compute_gradient(lambda x: ones_grad(x)[:0], [mt.constant([1.0, 2.0])])


def test_compute_gradient_takes_a_list_or_tuple_of_arguments():
    # TensorFlow: ValueError "`x` must be a list or tuple of values convertible to a Tensor".
    with pytest.raises(ValueError, match="`x` must be a list or tuple"):
        compute_gradient(mt.sin, mt.constant([1.0]))
    theoretical, _ = compute_gradient(lambda x: x * x, ([1.0, 2.0],))
    np.testing.assert_array_equal(theoretical[0], [[2, 0], [0, 4]])
