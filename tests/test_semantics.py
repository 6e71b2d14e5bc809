"""TensorFlow's answers where minitape used to be silently wrong (issue 16's
"silent wrong answers", issue 17's NaN masking and `-inf ** 0.5`). Every
expected value here was measured with TensorFlow 2.21."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitape as mt


# --- lists holding tensors pack as tf.convert_to_tensor does ------------------------

def test_a_list_of_tensors_is_packed_and_keeps_its_gradient():
    x = mt.constant(1.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.reduce_mean([x, x + 2])
    assert float(y) == 2.0 and float(tape.gradient(y, x)) == 1.0  # TF: 1.0


def test_a_packed_list_keeps_the_tensors_dtype_and_numbers_take_it():
    x = mt.constant(1.0, mt.float64)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.reduce_mean([x, 3.0])
    assert y.dtype == mt.float64 and float(tape.gradient(y, x)) == 0.5
    assert mt.convert_to_tensor([x, np.float32(2)]).dtype == mt.float64
    # ints stay int32 (TF: tf.reduce_sum([tf.constant(1), 2]) is int32 3)
    s = mt.reduce_sum([mt.constant(1), 2])
    assert s.dtype == mt.int32 and int(s) == 3


def test_nested_lists_tuples_and_variables_pack():
    x = mt.constant(1.0)
    v = mt.Variable(2.0)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        nested = mt.convert_to_tensor([[x, 2.0], (3, x)])
        packed = mt.convert_to_tensor([v, v * v])
        product = mt.matmul([[x, 1.0]], [[2.0], [x]])
    np.testing.assert_array_equal(nested.numpy(), [[1.0, 2.0], [3.0, 1.0]])
    assert float(tape.gradient(nested, x)) == 2.0
    assert float(tape.gradient(packed, v)) == 5.0           # TF: 5.0
    assert float(tape.gradient(product, x)) == 3.0
    # the pack is a recorded Pack op, as TensorFlow's auto-packing
    assert any(op.type == "Pack" for op in tape._ops)


def test_every_operand_position_packs():
    x = mt.constant(1.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.reduce_sum(mt.multiply([x, 1.0], [2.0, x]) + mt.where([True, False], [x, x], 0.0))
    assert float(y) == 4.0 and float(tape.gradient(y, x)) == 4.0


def test_packing_errors_name_the_op():
    x, x64 = mt.constant(1.0), mt.constant(1.0, mt.float64)
    with pytest.raises(TypeError, match="convert_to_tensor.*float64.*float32"):
        mt.convert_to_tensor([x, x64])  # TF: InvalidArgumentError (Pack)
    with pytest.raises(ValueError, match="reduce_sum.*different shapes"):
        mt.reduce_sum([x, mt.constant([1.0, 2.0])])
    with pytest.raises(TypeError, match="int32"):
        mt.convert_to_tensor([mt.constant(1), 2.5])  # TF: TypeError


def test_convert_to_tensor_with_a_dtype_casts_the_tensors():
    # TF: tf.convert_to_tensor([tf.constant(1.0), 2.0], dtype=tf.float64) is float64
    x = mt.constant(1.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.convert_to_tensor([x, 2.0], dtype=mt.float64)
    assert y.dtype == mt.float64
    assert tape.gradient(y, x).dtype == mt.float32


def test_constant_of_a_list_holding_tensors_raises_as_in_tensorflow():
    # TF: tf.constant([x, 3.0]) raises ValueError (a constant cannot hold a tensor)
    with pytest.raises(ValueError, match="constant.*mt.stack"):
        mt.constant([mt.constant(1.0), 3.0])
    with pytest.raises(ValueError, match="constant"):
        mt.constant([mt.Variable(1.0), 3.0])


def test_variable_from_a_list_of_tensors_keeps_their_dtype():
    v = mt.Variable([mt.constant(1.0, mt.float64), 3.0])  # TF: float64 [1, 3]
    assert v.dtype == mt.float64
    np.testing.assert_array_equal(v.numpy(), [1.0, 3.0])


def test_a_ragged_list_names_constant():
    with pytest.raises(ValueError, match="constant: cannot convert a non-rectangular"):
        mt.constant([[1.0, 2.0], [3.0]])


# --- comparisons with None ----------------------------------------------------------

def test_comparing_with_none():
    t = mt.constant([1.0, 2.0])
    assert (t == None) is False and (t != None) is True  # noqa: E711
    assert None not in [t, mt.constant(3.0)]
    v = mt.Variable(1.0)  # TF raises ValueError here; see docs/differences.md
    assert (v == None) is False and (v != None) is True  # noqa: E711
    np.testing.assert_array_equal((t == [1.0, 3.0]).numpy(), [True, False])


# --- small ones -----------------------------------------------------------------------

def test_integer_sums_and_products_keep_int32():
    assert mt.reduce_sum(mt.constant([1, 2])).dtype == mt.int32
    assert mt.reduce_prod(mt.constant([1, 2])).dtype == mt.int32
    assert mt.reduce_sum(mt.constant([1, 2], mt.int64)).dtype == mt.int64
    # TF wraps around, as int32 arithmetic does
    assert int(mt.reduce_sum(mt.constant([2**31 - 1, 1]))) == -2**31


def test_relu_second_derivative_is_zeros():
    x = mt.constant([-1.0, 2.0, np.nan])
    with mt.GradientTape() as t2:
        t2.watch(x)
        with mt.GradientTape() as t1:
            t1.watch(x)
            y = mt.nn.relu(x)
        g = t1.gradient(y, x)
    d2 = t2.gradient(g, x)
    np.testing.assert_array_equal(g.numpy(), [0.0, 1.0, 0.0])
    assert not np.signbit(g.numpy()[0])
    np.testing.assert_array_equal(d2.numpy(), [0.0, 0.0, 0.0])  # TF: zeros


def test_unnamed_variables_are_all_called_variable():
    names = [mt.Variable(1.0).name, mt.Variable(2.0).name, mt.Variable(3.0, name="w").name]
    assert names == ["Variable:0", "Variable:0", "w:0"]


# --- the norm at zero, the where trap, NaN neighbours, -inf ** 0.5 -------------------

def test_the_norms_derivative_at_zero_is_nan_in_both_directions():
    z = mt.zeros([3])
    with mt.GradientTape() as tape:
        tape.watch(z)
        y = mt.norm(z)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = tape.gradient(y, z)
        with mt.autodiff.ForwardAccumulator(z, mt.ones([3])) as acc:
            y = mt.norm(z)
    assert np.isnan(g.numpy()).all()         # TF: [nan nan nan]
    assert np.isnan(float(acc.jvp(y)))       # TF: nan


@pytest.mark.parametrize("x", [-1.0, 0.0])
def test_the_where_trap_with_sqrt_gives_zero(x):
    # TF 2.21: the gradient of where(x > 0, sqrt(x), 0.) is 0 at -1 and at 0
    x = mt.constant(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = mt.where(x > 0, mt.sqrt(x), 0.0)
        assert float(tape.gradient(y, x)) == 0.0


def test_the_where_trap_with_log_at_zero_stays_nan_as_in_tensorflow():
    # TF: Log's gradient is grad * reciprocal(x), 0 * inf = NaN at x = 0; at
    # x = -1 the derivative is finite and the unpicked branch gives -0.
    with np.errstate(invalid="ignore", divide="ignore"):
        for value, expected in [(0.0, np.nan), (-1.0, 0.0)]:
            x = mt.constant(value)
            with mt.GradientTape() as tape:
                tape.watch(x)
                y = mt.where(x > 0, mt.log(x), 0.0)
            np.testing.assert_array_equal(tape.gradient(y, x).numpy(), expected)


def _second(f, x):
    with mt.GradientTape() as t2:
        t2.watch(x)
        with mt.GradientTape() as t1:
            t1.watch(x)
            y = f(x)
        g = t1.gradient(y, x)
    return g, t2.gradient(g, x)


def test_second_derivatives_next_to_a_nan_are_entry_by_entry():
    x = mt.constant([0.0, 1.0, np.nan])
    with np.errstate(invalid="ignore"):
        g, h = _second(lambda x: mt.reduce_sum(x * x), x)
        np.testing.assert_array_equal(g.numpy(), [0.0, 2.0, np.nan])
        np.testing.assert_array_equal(h.numpy(), [2.0, 2.0, 2.0])  # TF: [2, 2, 2]
        g, h = _second(lambda x: mt.reduce_sum(x * x * x), x)
        np.testing.assert_array_equal(h.numpy(), [0.0, 6.0, np.nan])  # TF


def test_hessian_vector_products_next_to_a_nan():
    x = mt.constant([0.0, 1.0, np.nan])
    e0 = mt.constant([1.0, 0.0, 0.0])
    with np.errstate(invalid="ignore"):
        with mt.GradientTape() as t2:
            t2.watch(x)
            with mt.GradientTape() as t1:
                t1.watch(x)
                y = mt.reduce_sum(x * x)
            g = t1.gradient(y, x)
            s = mt.reduce_sum(g * e0)
        reverse = t2.gradient(s, x)
        with mt.autodiff.ForwardAccumulator(x, e0) as acc:
            with mt.GradientTape() as t1:
                t1.watch(x)
                y = mt.reduce_sum(x * x)
            g = t1.gradient(y, x)
        forward = acc.jvp(g)
    np.testing.assert_array_equal(reverse.numpy(), [2.0, 0.0, 0.0])  # TF
    np.testing.assert_array_equal(forward.numpy(), [2.0, 0.0, 0.0])


@pytest.mark.parametrize("jit", [False, True])
def test_traced_second_derivatives_next_to_a_nan_agree_with_eager(jit):
    @mt.function(jit_compile=jit)
    def hess_diag(x):
        return _second(lambda x: mt.reduce_sum(x * x), x)[1]

    @mt.function(jit_compile=jit)
    def masked(x):  # a zero upstream meeting an inf: traced on finite values first
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = mt.where(x > 0, mt.sqrt(x), 0.0)
        return tape.gradient(y, x)

    with np.errstate(invalid="ignore", divide="ignore"):
        np.testing.assert_array_equal(masked(mt.constant([1.0, 4.0])).numpy(), [0.5, 0.25])
        np.testing.assert_array_equal(masked(mt.constant([-1.0, 4.0])).numpy(), [0.0, 0.25])
        np.testing.assert_array_equal(hess_diag(mt.constant([1.0, 2.0, 3.0])).numpy(), [2, 2, 2])
        np.testing.assert_array_equal(hess_diag(mt.constant([0.0, 1.0, np.nan])).numpy(),
                                      [2, 2, 2])


def test_minus_inf_to_the_half_is_inf_everywhere():
    inf = np.inf
    f = mt.function(lambda x: mt.reduce_sum(x) ** 0.5)
    g = mt.function(lambda x: mt.reduce_sum(x) ** 0.5, jit_compile=True)
    with np.errstate(invalid="ignore"):
        values = [mt.constant(-inf) ** 0.5, mt.reduce_sum([-inf]) ** 0.5,
                  mt.reduce_sum(mt.constant([-inf, 1.0])) ** 0.5,
                  f(mt.constant([-inf, 1.0])), g(mt.constant([-inf, 1.0])),
                  mt.pow(mt.constant(-inf, mt.float64), 0.5)]
        assert [float(v) for v in values] == [inf] * 6  # TF: inf in all
        # C's pow for the other exponents (TF 2.21's values)
        got = mt.pow(mt.constant([-inf, -inf, -inf, -inf, -4.0, -inf]),
                     mt.constant([1.5, 2.0, -0.5, 3.0, 0.5, 0.25])).numpy()
    np.testing.assert_array_equal(got, [inf, inf, 0.0, -inf, np.nan, inf])


# --- linspace's endpoints ------------------------------------------------------------

def test_linspace_gradients_match_tensorflow():
    a, b = mt.constant(0.0), mt.constant(1.0)
    weights = mt.constant([1.0, 2.0, 3.0, 4.0, 5.0])
    with mt.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        s = mt.reduce_sum(mt.linspace(a, b, 5) * weights)
        one = mt.reduce_sum(mt.linspace(a, b, 1))
        none = mt.reduce_sum(mt.linspace(a, b, 0))
    assert [float(g) for g in tape.gradient(s, [a, b])] == [5.0, 10.0]   # TF
    assert [float(g) for g in tape.gradient(one, [a, b])] == [1.0, 0.0]  # TF
    assert [float(g) for g in tape.gradient(none, [a, b])] == [0.0, 0.0]
    with mt.autodiff.ForwardAccumulator(a, mt.constant(1.0)) as acc:
        y = mt.linspace(a, b, 3)
    np.testing.assert_array_equal(acc.jvp(y).numpy(), [1.0, 0.5, 0.0])  # TF


def test_linspace_against_finite_differences_traced_and_as_jacobians():
    def f(a, b):
        return mt.linspace(a, b, 5) * mt.linspace(b, a, 5)
    mt.test.check_gradients(f, [np.array(0.3), np.array(-0.7)], order=3)
    a, b = mt.constant(0.3, mt.float64), mt.constant(-0.7, mt.float64)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y = f(a, b)
    for source in (a, b):
        np.testing.assert_allclose(
            tape.jacobian(y, source, experimental_direction="forward").numpy(),
            tape.jacobian(y, source, experimental_direction="reverse").numpy(), rtol=1e-12)
        np.testing.assert_allclose(
            tape.jacobian(y, source).numpy(),
            tape.jacobian(y, source, experimental_use_pfor=False).numpy(), rtol=1e-12)
    traced = mt.function(lambda a, b: mt.linspace(a, b, 3))
    np.testing.assert_array_equal(traced(a, b).numpy(), mt.linspace(a, b, 3).numpy())
    np.testing.assert_allclose(traced(b, a).numpy(), [-0.7, -0.2, 0.3], rtol=1e-12)


def test_linspace_dtypes_as_tensorflow():
    assert mt.linspace(0, 1, 3).dtype == mt.float64  # TF: float64 [0, 0.5, 1]
    np.testing.assert_array_equal(mt.linspace(0, 1, 3).numpy(), [0.0, 0.5, 1.0])
    assert mt.linspace(0.0, 1.0, 3).dtype == mt.float32
    assert mt.linspace(mt.constant(0.0), 1.0, 3).dtype == mt.float32
    v = mt.Variable(2.0)
    with mt.GradientTape() as tape:
        y = mt.reduce_sum(mt.linspace(0.0, v, 3))
    assert float(tape.gradient(y, v)) == 1.5
    with pytest.raises(TypeError, match="linspace.*different dtypes"):
        mt.linspace(mt.constant(0.0), mt.constant(1.0, mt.float64), 3)


# --- complex norms and abs -------------------------------------------------------------

def test_the_norm_of_a_complex_vector_is_its_length_as_a_complex_number():
    y = mt.norm(mt.constant(np.array([3 + 4j], np.complex64)))
    assert y.dtype == np.complex64 and complex(y.numpy()) == 5 + 0j  # TF: (5+0j)
    c = mt.constant(np.array([3 + 4j, 1 - 1j]))
    assert mt.norm(c, ord=1).dtype == mt.float64  # TF: the other ords are real
    np.testing.assert_allclose(float(mt.norm(c, ord=1)), 5 + np.sqrt(2))


def test_complex_abs_and_norm_derivatives_follow_tensorflows_convention():
    c = mt.constant(np.array([3 + 4j, 1 - 1j]))
    t = mt.constant(np.array([1 + 0j, 1j]))
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(c)
        total = mt.reduce_sum(mt.abs(c))
        n = mt.norm(c)
    # TF: grad * x / |x| (the conjugate of the holomorphic derivative, doubled)
    np.testing.assert_allclose(tape.gradient(total, c).numpy(), [0.6 + 0.8j, (1 - 1j) / np.sqrt(2)])
    np.testing.assert_allclose(tape.gradient(n, c).numpy(), np.array([3 + 4j, 1 - 1j]) / np.sqrt(27))
    with mt.autodiff.ForwardAccumulator(c, t) as acc:
        a, n = mt.abs(c), mt.norm(c)
    assert acc.jvp(a).dtype == mt.float64
    np.testing.assert_allclose(acc.jvp(a).numpy(), [0.6, -1 / np.sqrt(2)])  # TF
    np.testing.assert_allclose(complex(acc.jvp(n).numpy()), 2 / np.sqrt(27))  # TF: 0.3849+0j


# --- matrix norms and p-norms ------------------------------------------------------------

A = np.array([[1.0, -2.0], [3.0, 0.5]])


def test_matrix_norms_match_tensorflow():
    a = mt.constant(A.astype(np.float32))
    values = {o: float(mt.norm(a, ord=o, axis=[0, 1])) for o in (1, 2, np.inf, "fro")}
    assert values[1] == 4.0 and values[np.inf] == 3.5                      # TF
    np.testing.assert_allclose(values[2], 3.1690931, rtol=1e-6)             # TF
    np.testing.assert_allclose(values["fro"], 3.7749171, rtol=1e-6)         # TF
    assert float(mt.norm(a, ord=1, axis=[1, 0])) == 3.5                    # TF: order counts
    assert mt.norm(a, ord=np.inf, axis=(0, 1), keepdims=True).shape == (1, 1)
    stacked = mt.stack([a, 2 * a])
    np.testing.assert_array_equal(mt.norm(stacked, ord=1, axis=[-2, -1]).numpy(), [4.0, 8.0])
    with pytest.raises(ValueError, match="norm.*matrix norm.*3"):
        mt.norm(a, ord=3, axis=[0, 1])
    with pytest.raises(ValueError, match="norm.*same axis"):
        mt.norm(a, axis=[1, -1])


@pytest.mark.parametrize("ord", [1, np.inf, "fro", 3, 4, 0.5])
def test_norms_against_finite_differences(ord):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 2.0, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4))
    x[0, 0], x[1, 2] = 3.0, -2.5  # a clear max (no ties) for the 1- and inf-norms
    axes = [[0, 1]] if ord in (1, np.inf, "fro") else [None, 1]
    for axis in axes:
        mt.test.check_gradients(lambda x: mt.norm(x, ord=ord, axis=axis), [x], order=2)


def test_the_spectral_norm_gradient_and_its_limits():
    a = mt.constant(A)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(a)
        y = mt.norm(a, ord=2, axis=[0, 1])
    g = tape.gradient(y, a)
    np.testing.assert_allclose(g.numpy(), [[0.36728074, -0.03169955],
                                           [0.92612674, -0.07993285]], rtol=1e-6)  # TF
    mt.test.check_gradients(lambda x: mt.norm(x, ord=2, axis=[0, 1]), [A], order=1)
    v = mt.constant([[0.5, 1.0], [-1.0, 2.0]], mt.float64)
    with mt.autodiff.ForwardAccumulator(a, v) as acc:
        y = mt.norm(a, ord=2, axis=[0, 1])
    np.testing.assert_allclose(float(acc.jvp(y)), float(mt.reduce_sum(g * v)), rtol=1e-12)
    # second order: through the SVD's rules, as TensorFlow's (minitape raised
    # NotImplementedError before svd had a gradient)
    mt.test.check_gradients(lambda x: mt.norm(x, ord=2, axis=[0, 1]), [A], order=2)


def test_p_norms_match_tensorflow():
    b = mt.constant([1.0, -2.0, 3.0], mt.float64)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(b)
        y3, y4 = mt.norm(b, ord=3), mt.norm(b, ord=4)
    np.testing.assert_allclose([float(y3), float(y4)], [3.3019272488946263, 3.1463462836457885])
    np.testing.assert_allclose(tape.gradient(y3, b).numpy(), [0.0917202, -0.36688081, 0.82548181],
                               rtol=1e-6)  # TF
    z = mt.zeros([3], mt.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        with mt.GradientTape(persistent=True) as tape:
            tape.watch(z)
            y3, y1, yi = mt.norm(z, ord=3), mt.norm(z, ord=1), mt.norm(z, ord=np.inf)
        assert np.isnan(tape.gradient(y3, z).numpy()).all()         # TF: nan
        np.testing.assert_array_equal(tape.gradient(y1, z).numpy(), 0.0)  # TF: 0
        np.testing.assert_array_equal(tape.gradient(yi, z).numpy(), 0.0)  # TF: 0
    with pytest.raises(ValueError, match="norm.*vector norm.*0"):
        mt.norm(b, ord=0)


def test_stack_and_concat_give_numbers_the_tensors_dtype():
    # TF 2.21: tf.stack([x64, 1.0]) and tf.concat([v64, [1.0]], 0) are float64
    x, v = mt.constant(1.0, mt.float64), mt.constant([1.0], mt.float64)
    assert mt.stack([x, 1.0]).dtype == mt.float64
    assert mt.stack([1.0, x]).dtype == mt.float64
    assert mt.concat([v, [1.0]], 0).dtype == mt.float64
    assert mt.stack([mt.constant(1), 2]).dtype == mt.int32
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.reduce_sum(mt.stack([[x, 2.0], [1.0, x]]))
    assert float(tape.gradient(y, x)) == 2.0


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=3), data=st.data())
def test_matrix_norms_agree_with_numpy_over_any_two_axes(shape, data):
    ndim = len(shape)
    r = data.draw(st.integers(-ndim, ndim - 1))
    c = data.draw(st.integers(-ndim, ndim - 1).filter(lambda c: c % ndim != r % ndim))
    ord = data.draw(st.sampled_from([1, 2, np.inf, "fro"]))
    keepdims = data.draw(st.booleans())
    x = np.random.default_rng(len(shape) + 5 * (r % ndim) + c % ndim).standard_normal(shape)
    got = mt.norm(mt.constant(x), ord=ord, axis=[r, c], keepdims=keepdims).numpy()
    want = np.linalg.norm(x, ord=ord, axis=(r, c), keepdims=keepdims)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_a_custom_gradient_refuses_a_list_holding_tensors():
    # TF flattens the list and then fails wanting one gradient per entry;
    # converting it to one tensor would silently detach x.
    @mt.custom_gradient
    def f(v):
        return mt.reduce_sum(v * v), lambda dy: dy * 3.0 * v

    x = mt.constant(2.0)
    with pytest.raises(TypeError, match="custom_gradient f: argument 0 is a list holding"):
        f([x, 1.0])
    assert float(f(mt.stack([x, 1.0]))) == 5.0


@pytest.mark.parametrize("equation", ["bxby,yz->bxz", "bxby,yz->bz", "ij,jk->ik"])
def test_einsum_jacobians_with_an_inf_agree_in_every_direction(equation):
    w = mt.constant(np.array([[1.0, np.inf], [0.5, 2.0]]))
    shape = (2, 2) if equation.startswith("ij") else (2, 2, 2, 2)
    x = mt.constant(np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape))
    with np.errstate(invalid="ignore"):
        with mt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = mt.einsum(equation, x, w)
        forward = tape.jacobian(y, x, experimental_direction="forward").numpy()
        reverse = tape.jacobian(y, x, experimental_direction="reverse").numpy()
        loop = tape.jacobian(y, x, experimental_use_pfor=False).numpy()
    assert not np.isnan(forward).any()
    np.testing.assert_array_equal(reverse, forward)
    np.testing.assert_array_equal(loop, forward)


@pytest.mark.parametrize("jit", [False, True])
def test_packed_lists_in_traced_and_compiled_functions(jit):
    @mt.function(jit_compile=jit)
    def g(x):
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = mt.reduce_mean([x, x + 2, 3.0])
        return y, tape.gradient(y, x)

    for value in (1.0, 4.0):
        y, dy = g(mt.constant(value))
        np.testing.assert_allclose([float(y), float(dy)], [(2 * value + 5) / 3, 2 / 3], rtol=1e-6)
