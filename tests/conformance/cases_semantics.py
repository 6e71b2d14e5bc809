"""Conformance cases for the silent wrong answers of issues 16 and 17: each
function runs under `m` = tensorflow or minitape and returns what the two
must agree on (see OPSGUIDE.md)."""
import numpy as np


def _grad(m, f, x):
    with m.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return y, tape.gradient(y, x)


def _grad2(m, f, x):
    with m.GradientTape() as t2:
        t2.watch(x)
        with m.GradientTape() as t1:
            t1.watch(x)
            y = f(x)
        g = t1.gradient(y, x)
    return g, t2.gradient(g, x)


def _jvp(m, f, x, v):
    with m.autodiff.ForwardAccumulator(x, v) as acc:
        y = f(x)
    return y, acc.jvp(y)


# --- 1. lists auto-pack --------------------------------------------------------------

def case_list_of_tensors_packs_with_gradient(m):
    return _grad(m, lambda x: m.reduce_mean([x, x + 2]), m.constant(1.0))


def case_list_keeps_float64(m):
    return _grad(m, lambda x: m.reduce_mean([x, 3.0]), m.constant(1.0, m.float64))


def case_nested_list_packs(m):
    return _grad(m, lambda x: m.convert_to_tensor([[x, 2.0], (3, x)]), m.constant(1.0))


def case_list_with_variable_packs(m):
    v = m.Variable(2.0)
    with m.GradientTape() as tape:
        y = m.reduce_sum(m.convert_to_tensor([v, v * v]))
    return y, tape.gradient(y, v)


def case_list_of_ints_stays_int32(m):
    return m.reduce_sum([m.constant(1), 2])


def case_list_matmul(m):
    return _grad(m, lambda x: m.matmul([[x, 1.0]], [[2.0], [x]]), m.constant(1.0))


def case_list_with_dtype_casts(m):
    return m.convert_to_tensor([m.constant(1.0), 2.0], dtype=m.float64)


def case_list_number_not_int(m):
    return m.convert_to_tensor([m.constant(1), 2.5])  # TypeError in both


def case_constant_of_list_with_tensor_raises(m):
    return m.constant([m.constant(1.0), 3.0])  # ValueError in both


def case_variable_from_list_of_tensors(m):
    return m.Variable([m.constant(1.0, m.float64), 3.0]).read_value()


def case_ragged_constant_raises(m):
    return m.constant([[1.0, 2.0], [3.0]])


# --- 4. comparisons with None ----------------------------------------------------------

def case_tensor_equals_none(m):
    t = m.constant([1.0, 2.0])
    return t == None, t != None, None in [t, t]  # noqa: E711


# --- 9. custom_gradient under a ForwardAccumulator ------------------------------------

def case_custom_gradient_jvp_follows_forward_ops(m):
    @m.custom_gradient
    def square(x):
        return x * x, lambda dy: 7 * dy
    return _jvp(m, square, m.constant(3.0), m.constant(1.0))


def case_custom_gradient_jvp_of_a_constant_output(m):
    @m.custom_gradient
    def five(x):
        return m.constant(5.0), lambda dy: 7 * dy
    return _jvp(m, five, m.constant(3.0), m.constant(1.0))


def case_grad_pass_through_jvp(m):
    return _jvp(m, m.grad_pass_through(m.round), m.constant(2.3), m.constant(1.0))


# --- 10. dtypes, relu'', sign's JVP, names ----------------------------------------------

def case_reduce_sum_prod_int32(m):
    x = m.constant([1, 2, 3])
    return m.reduce_sum(x), m.reduce_prod(x), m.reduce_sum(m.constant([2**31 - 1, 1]))


def case_relu_second_derivative(m):
    return _grad2(m, m.nn.relu, m.constant([-1.0, 2.0]))


def case_sign_jvp_is_none(m):
    return _jvp(m, m.sign, m.constant([1.0, -1.0]), m.constant([1.0, 1.0]))


def case_unnamed_variable_names(m):
    return [m.Variable(1.0).name, m.Variable(2.0).name, m.Variable(1.0, name="w").name]


# --- 5. the norm at zero; 8. the where trap; 11. NaN neighbours, -inf ** 0.5 ---------

def case_norm_gradient_at_zero_is_nan(m):
    return _grad(m, m.norm, m.zeros([3]))


def case_norm_jvp_at_zero_is_nan(m):
    return _jvp(m, m.norm, m.zeros([3]), m.ones([3]))


def case_where_trap_sqrt(m):
    return _grad(m, lambda x: m.where(x > 0, m.sqrt(x), 0.0), m.constant([-1.0, 0.0, 4.0]))


def case_where_trap_log(m):
    return _grad(m, lambda x: m.where(x > 0, m.math.log(x), 0.0), m.constant([-1.0, 0.0, 4.0]))


def case_where_trap_divide(m):
    return _grad(m, lambda x: m.where(x > 0, 1.0 / x, 0.0), m.constant([-1.0, 4.0]))


def case_where_trap_tanh(m):
    return _grad(m, lambda x: m.where(x > 0, m.tanh(x), 0.0), m.constant([-1.0, 4.0]))


def case_second_derivative_next_to_nan(m):
    return _grad2(m, lambda x: m.reduce_sum(x * x), m.constant([0.0, 1.0, np.nan]))


def case_second_derivative_of_cube_next_to_nan(m):
    return _grad2(m, lambda x: m.reduce_sum(x * x * x), m.constant([0.0, 1.0, np.nan]))


def case_hvp_next_to_nan(m):
    x = m.constant([0.0, 1.0, np.nan])
    with m.GradientTape() as t2:
        t2.watch(x)
        with m.GradientTape() as t1:
            t1.watch(x)
            y = m.reduce_sum(x * x)
        g = t1.gradient(y, x)
        s = m.reduce_sum(g * m.constant([1.0, 0.0, 0.0]))
    return t2.gradient(s, x)


def case_traced_second_derivative_next_to_nan(m):
    @m.function
    def hess_diag(x):
        return _grad2(m, lambda x: m.reduce_sum(x * x), x)[1]
    return hess_diag(m.constant([1.0, 2.0, 3.0])), hess_diag(m.constant([0.0, 1.0, np.nan]))


def case_minus_inf_to_the_half(m):
    inf = np.inf
    return (m.constant(-inf) ** 0.5, m.reduce_sum([-inf]) ** 0.5,
            m.pow(m.constant(-inf), 0.5),
            m.pow(m.constant([-inf, -inf, -inf, -inf, -4.0]), [1.5, 2.0, -0.5, 3.0, 0.5]))


def case_minus_inf_to_the_half_traced(m):
    traced = m.function(lambda x: m.reduce_sum(x) ** 0.5)
    return traced(m.constant([-np.inf, 1.0]))


# tf.function's graph optimizer rewrites x ** 0.5 as sqrt(x): NaN at -inf, while eager
# TensorFlow and XLA give inf; minitape gives inf everywhere.
case_minus_inf_to_the_half_traced.differs = "`x ** 0.5` at `x = -inf` inside a function"


def case_minus_inf_to_the_half_compiled(m):
    compiled = m.function(lambda x: m.reduce_sum(x) ** 0.5, jit_compile=True)
    return compiled(m.constant([-np.inf, 1.0]))


# --- 6. matmul and einsum: a zero tangent meeting an inf (docs/differences.md) ------

def case_matmul_zero_tangent_meets_inf(m):
    x, b = m.constant([[2.0, 3.0]]), m.constant([[1.0], [np.inf]])
    return _jvp(m, lambda x: m.matmul(x, b), x, m.constant([[1.0, 0.0]]))


case_matmul_zero_tangent_meets_inf.xfail = (
    "docs/differences.md: minitape drops the zero tangent's product (1.0), TF gives NaN")


def case_einsum_jacobian_zero_row_meets_inf(m):
    xs, c = m.constant([2.0, 3.0]), m.constant([[1.0, 0.0], [0.0, np.inf]])
    with m.GradientTape() as tape:
        tape.watch(xs)
        y = m.einsum("ij,j->i", c, xs)
    return tape.jacobian(y, xs)


case_einsum_jacobian_zero_row_meets_inf.xfail = (
    "docs/differences.md: minitape [[1, 0], [0, inf]], TF [[1, nan], [0, inf]]")


def case_matmul_reverse_with_inf(m):
    x, b = m.constant([[2.0, 3.0]]), m.constant([[1.0], [np.inf]])
    return _grad(m, lambda x: m.matmul(x, b), x)


# --- 2. linspace's endpoints -----------------------------------------------------------

def case_linspace_gradients(m):
    a, b = m.constant(0.0), m.constant(1.0)
    with m.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        s = m.reduce_sum(m.linspace(a, b, 5) * m.constant([1.0, 2.0, 3.0, 4.0, 5.0]))
        one = m.reduce_sum(m.linspace(a, b, 1))
    return tape.gradient(s, [a, b]), tape.gradient(one, [a, b])


def case_linspace_jvp(m):
    return _jvp(m, lambda a: m.linspace(a, 1.0, 3), m.constant(0.0), m.constant(1.0))


def case_linspace_second_derivative(m):
    return _grad2(m, lambda a: m.reduce_sum(m.linspace(a, 2.0, 4) ** 2), m.constant(0.5))


def case_linspace_of_ints_is_float64(m):
    return m.linspace(0, 1, 3)


# --- 3. complex norms and abs; 7. matrix norms and p-norms -----------------------------

def _complex(m):
    return m.constant(np.array([3 + 4j, 1 - 1j]))


def case_norm_of_complex_is_complex(m):
    return m.norm(m.constant(np.array([3 + 4j], np.complex64))), m.norm(_complex(m))


def case_norm_of_complex_other_ords_are_real(m):
    c = _complex(m)
    return m.norm(c, ord=1), m.norm(c, ord=np.inf), m.norm(c, ord=3), m.norm(c, ord=2)


def case_abs_of_complex_gradient(m):
    return _grad(m, lambda c: m.reduce_sum(m.abs(c)), _complex(m))


def case_abs_of_complex_jvp(m):
    return _jvp(m, m.abs, m.constant(np.array([3 + 4j, 1 - 1j, 0j])),
                m.constant(np.array([1 + 0j, 1j, 1 + 1j])))


def case_norm_of_complex_gradient_and_jvp(m):
    c = _complex(m)
    return _grad(m, m.norm, c), _jvp(m, m.norm, c, m.constant(np.array([1 + 0j, 1j])))


def case_norm1_of_complex_gradient(m):
    return _grad(m, lambda c: m.norm(c, ord=1), _complex(m))


def _matrix(m, dtype=None):
    return m.constant(np.array([[1.0, -2.0], [3.0, 0.5]], dtype or np.float32))


def case_matrix_norms(m):
    a = _matrix(m)
    return [m.norm(a, ord=o, axis=[0, 1]) for o in (1, 2, np.inf, "fro", "euclidean")]


def case_matrix_norms_axis_order_and_keepdims(m):
    a = _matrix(m)
    stacked = m.stack([a, 2 * a])
    return (m.norm(a, ord=1, axis=[1, 0]), m.norm(a, ord=np.inf, axis=(0, 1), keepdims=True),
            m.norm(stacked, ord=1, axis=[-2, -1]), m.norm(stacked, ord=2, axis=[1, 2]),
            m.norm(stacked, ord=2, axis=[2, 1], keepdims=True))


def case_matrix_norm_gradients(m):
    a = _matrix(m, np.float64)
    return [_grad(m, lambda x: m.norm(x, ord=o, axis=[0, 1]), a)[1]
            for o in (1, 2, np.inf, "fro")]


def case_spectral_norm_jvp(m):
    a = _matrix(m, np.float64)
    return _jvp(m, lambda x: m.norm(x, ord=2, axis=[0, 1]), a,
                m.constant(np.array([[0.5, 1.0], [-1.0, 2.0]])))


def case_matrix_norm_bad_ord(m):
    return m.norm(_matrix(m), ord=3, axis=[0, 1])  # ValueError in both


def case_vector_p_norms(m):
    b = m.constant([1.0, -2.0, 3.0], m.float64)
    return [_grad(m, lambda x: m.norm(x, ord=o), b) for o in (3, 4, 0.5)]


def case_vector_p_norm_at_zero(m):
    z = m.zeros([3], m.float64)
    return [_grad(m, lambda x: m.norm(x, ord=o), z)[1] for o in (3, 1, np.inf)]


def case_vector_norm_bad_ord(m):
    return m.norm(m.constant([1.0, 2.0]), ord=0)  # ValueError in both


def case_complex_matrix_norms(m):
    c = m.constant(np.array([[3 + 4j, 1 - 1j], [1j, 2]]))
    return [m.norm(c, ord=o, axis=[0, 1]) for o in ("fro", 1, 2, np.inf)]


def case_variable_equals_none(m):
    v = m.Variable([1.0, 2.0])
    return v == None, v != None  # noqa: E711


# TF raises ValueError for a variable (a tensor gives False); minitape gives False
# and True for both.
case_variable_equals_none.differs = "`variable == None`"


def case_where_with_packed_lists(m):
    x = m.constant(1.0)
    return _grad(m, lambda x: m.reduce_sum(m.where([True, False], [x, x], 0.0)
                                           + m.multiply([x, 1.0], [2.0, x])), x)


def case_stack_and_concat_with_numbers(m):
    x, v = m.constant(1.0, m.float64), m.constant([1.0], m.float64)
    return (m.stack([x, 1.0]), m.stack([1.0, x]), m.concat([v, [1.0]], 0),
            _grad(m, lambda x: m.reduce_sum(m.stack([[x, 2.0], [1.0, x]])), x))
