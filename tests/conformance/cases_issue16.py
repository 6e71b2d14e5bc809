"""Issue 16, "Silent wrong answers first": each item as TensorFlow answers it.

The ones minitape still gets wrong carry ``xfail`` naming the item; whoever fixes
one removes the mark (a strict xfail fails once minitape agrees).
"""
import numpy as np

from .probes import probe


def case_list_packing_gradient(m):
    x = m.constant(1.0)
    with m.GradientTape() as tape:
        tape.watch(x)
        y = m.reduce_mean([x, x + 2.0])
    return y, tape.gradient(y, x)


def case_list_packing_keeps_float64(m):
    x = m.constant(1.0, dtype=m.float64)
    return m.reduce_sum([x, x * 2.0]), m.reduce_sum([[x], [3.0]])


def case_list_packing_nested_jacobian(m):
    return probe(m, lambda x, y: m.reduce_sum([[x, y], [y * 2.0, 1.0]], axis=0), 1.5, -0.5)


def case_constant_of_list_of_tensors(m):
    """tf.constant refuses a list holding a tensor (ValueError); convert_to_tensor packs it."""
    return m.constant([m.constant(2.0), 3.0])


case_constant_of_list_of_tensors.error_only = True


def case_convert_to_tensor_list_of_tensors(m):
    x = m.constant(2.0)
    with m.GradientTape() as tape:
        tape.watch(x)
        y = m.convert_to_tensor([[x], [x * 3.0]])
    return y, tape.gradient(y, x)


def case_matmul_list_operand(m):
    x = m.constant(2.0)
    with m.GradientTape() as tape:
        tape.watch(x)
        y = m.matmul([[x, 1.0]], [[1.0], [x]])
    return y, tape.gradient(y, x)


def case_linspace_endpoint_gradients(m):
    return probe(m, lambda a, b: m.linspace(a, b, 5), -1.0, 3.0,
                 parts=("value", "grad", "jacobian", "jvp"))


def case_complex_norm(m):
    return m.norm(m.constant([3.0 + 4.0j])), m.norm(m.constant([1.0 + 1.0j, 2.0 - 1.0j]))


def case_abs_complex_forward_mode(m):
    z = m.constant([3.0 + 4.0j])
    with m.autodiff.ForwardAccumulator(z, m.constant([1.0 + 0.0j])) as acc:
        y = m.abs(z)
    return y, acc.jvp(y)


def case_tensor_equals_none(m):
    t = m.constant([1.0, 2.0])
    return [t == None, t != None, None in [t, t]]  # noqa: E711  (the point of the case)


def case_norm_gradient_at_zero_reverse(m):
    x = m.constant([0.0, 0.0])
    with m.GradientTape() as tape:
        tape.watch(x)
        y = m.norm(x)
    return tape.gradient(y, x)


def case_norm_gradient_at_zero_forward(m):
    """TensorFlow: NaN in forward mode as in reverse mode."""
    x = m.constant([0.0, 0.0])
    with m.autodiff.ForwardAccumulator(x, m.constant([1.0, 0.0])) as acc:
        y = m.norm(x)
    return acc.jvp(y)


def case_matmul_zero_times_inf(m):
    """A zero meeting an inf inside a matrix product, in both directions: TensorFlow gives
    the Jacobian [1, inf] and the JVP nan (0 * inf); minitape masks the zero tangent."""
    a = m.constant([[1.0, np.inf]])
    x = m.constant([[2.0], [0.0]])
    with m.autodiff.ForwardAccumulator(x, m.constant([[1.0], [0.0]])) as acc:
        with m.GradientTape() as tape:
            tape.watch(x)
            y = m.matmul(a, x)
        g = tape.jacobian(y, x)
    return y, g, acc.jvp(y)


case_matmul_zero_times_inf.differs = (
    "a zero tangent meeting an infinite partial derivative in forward mode")


def case_einsum_zero_times_inf(m):
    """As matmul: TensorFlow's JVP is nan, minitape's 1."""
    a = m.constant([1.0, np.inf])
    x = m.constant([2.0, 0.0])
    with m.autodiff.ForwardAccumulator(x, m.constant([1.0, 0.0])) as acc:
        with m.GradientTape() as tape:
            tape.watch(x)
            y = m.einsum("i,i->", a, x)
        g = tape.gradient(y, x)
    return y, g, acc.jvp(y)


case_einsum_zero_times_inf.differs = (
    "a zero tangent meeting an infinite partial derivative in forward mode")


MATRIX = [[1.0, -2.0], [3.0, 0.5]]


def case_matrix_norm_ord_1(m):
    return probe(m, lambda a: m.norm(a, ord=1, axis=[0, 1]), MATRIX,
                 parts=("value", "grad", "jvp"))


def case_matrix_norm_ord_2(m):
    return probe(m, lambda a: m.norm(a, ord=2, axis=[0, 1]), MATRIX,
                 parts=("value", "grad", "jvp"))


def case_matrix_norm_ord_inf(m):
    return probe(m, lambda a: m.norm(a, ord=np.inf, axis=[0, 1]), MATRIX,
                 parts=("value", "grad", "jvp"))


def case_matrix_norm_fro(m):
    return probe(m, lambda a: m.norm(a, ord="fro", axis=[0, 1]), MATRIX)


def case_where_sqrt_at_negative(m):
    x = m.constant(-1.0)
    with m.GradientTape() as tape:
        tape.watch(x)
        y = m.where(x > 0.0, m.sqrt(x), 0.0)
    return y, tape.gradient(y, x)


def case_where_log_at_zero(m):
    """Log's gradient is not masked in TensorFlow: the where trap stays for log."""
    x = m.constant([0.0, 1.0])
    with m.GradientTape() as tape:
        tape.watch(x)
        y = m.where(x > 0.0, m.math.log(x), 0.0)
    return y, tape.gradient(y, x)


def case_where_divide_at_zero(m):
    """TensorFlow: 0 * inf = NaN in divide's gradient; minitape masks the zero upstream."""
    x = m.constant([0.0, 2.0])
    with m.GradientTape() as tape:
        tape.watch(x)
        y = m.where(x > 0.0, 1.0 / x, 0.0)
    return y, tape.gradient(y, x)


def case_where_pow_at_zero(m):
    """TensorFlow: NaN (pow's gradient is not masked); minitape masks the zero upstream."""
    x = m.constant([0.0, 2.0])
    with m.GradientTape() as tape:
        tape.watch(x)
        y = m.where(x > 0.0, m.pow(x, 0.5), 0.0)
    return y, tape.gradient(y, x)


case_where_divide_at_zero.differs = (
    "a zero tangent meeting an infinite partial derivative in forward mode")
case_where_pow_at_zero.differs = (
    "a zero tangent meeting an infinite partial derivative in forward mode")


def case_custom_gradient_forward_mode(m):
    @m.custom_gradient
    def square(x):
        def grad(dy):
            return 7.0 * dy
        return x * x, grad

    x = m.constant(3.0)
    with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as acc:
        y = square(x)
    with m.GradientTape() as tape:
        tape.watch(x)
        z = square(x)
    return acc.jvp(y), tape.gradient(z, x)


def case_int32_reduce_sum_prod(m):
    x = m.constant([1, 2, 3])
    return m.reduce_sum(x), m.reduce_prod(x), m.reduce_sum(x, axis=0, keepdims=True)


def case_relu_second_derivative(m):
    x = m.constant([-1.0, 2.0])
    with m.GradientTape() as t2:
        t2.watch(x)
        with m.GradientTape() as t1:
            t1.watch(x)
            y = m.nn.relu(x)
        g = t1.gradient(y, x)
    return g, t2.gradient(g, x)


def case_sign_jvp(m):
    x = m.constant([-1.0, 2.0])
    with m.autodiff.ForwardAccumulator(x, m.constant([1.0, 1.0])) as acc:
        y = m.sign(x)
    return acc.jvp(y)


def case_unnamed_variable(m):
    return [m.Variable(float(i)).name for i in range(3)]


def case_constant_of_ragged_list(m):
    return m.constant([[1.0, 2.0], [3.0]])


case_constant_of_ragged_list.error_only = True


def case_constant_of_ragged_list_message(m):
    try:
        m.constant([[1.0, 2.0], [3.0]])
    except ValueError as exc:
        return "constant" in str(exc) or "non-rectangular" in str(exc)
    return "no error"
