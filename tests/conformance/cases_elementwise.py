"""The API summary's "math" row (docs/api.md): values, dtypes, gradients to second order, Jacobians, JVPs."""
from .probes import probe

X = [0.5, -1.25, 2.0]
POS = [0.5, 1.25, 3.0]
Y = [1.5, 0.75, -2.0]


def case_add(m):
    return probe(m, m.add, X, Y)


def case_subtract(m):
    return probe(m, m.subtract, X, Y)


def case_multiply(m):
    return probe(m, m.multiply, X, Y)


def case_divide(m):
    return probe(m, m.divide, X, Y)


def case_negative(m):
    return probe(m, m.negative, X)


def case_pow(m):
    return probe(m, m.pow, POS, Y)


def case_pow_integer_exponent(m):
    return probe(m, lambda x: m.pow(x, 3.0), X)


def case_square(m):
    return probe(m, m.square, X)


def case_sqrt(m):
    return probe(m, m.sqrt, POS)


def case_exp(m):
    return probe(m, m.exp, X)


def case_log(m):
    return probe(m, m.math.log, POS)


def case_sin(m):
    return probe(m, m.sin, X)


def case_cos(m):
    return probe(m, m.cos, X)


def case_tanh(m):
    return probe(m, m.tanh, X)


def case_abs(m):
    return probe(m, m.abs, X)


def case_maximum(m):
    return probe(m, m.maximum, X, Y)


def case_minimum(m):
    return probe(m, m.minimum, X, Y)


def case_where(m):
    return probe(m, lambda x, y: m.where(x > 0.0, x * y, y), X, Y)


def case_cast(m):
    return probe(m, lambda x: m.cast(m.cast(x, m.float64) * 2.0, x.dtype), X)


def case_math_namespace(m):
    fs = [m.math.sin, m.math.cos, m.math.exp, m.math.tanh, m.math.abs, m.math.square,
          m.math.negative, m.math.sigmoid, m.math.softplus, m.math.floor, m.math.round]
    return probe(m, lambda x: [f(x) for f in fs], X, parts=("value", "grad", "grad2", "jvp"))


def case_math_binary_namespace(m):
    fs = [m.math.add, m.math.subtract, m.math.multiply, m.math.divide, m.math.maximum,
          m.math.minimum]
    return probe(m, lambda x, y: [f(x, y) for f in fs], X, Y,
                 parts=("value", "grad", "grad2", "jvp"))


def case_math_sqrt_pow(m):
    return probe(m, lambda x, y: [m.math.sqrt(x), m.math.pow(x, y), m.math.log(x)], POS, Y,
                 parts=("value", "grad", "grad2", "jvp"))


def case_operators(m):
    def f(x, y):
        return [x + y, x - y, x * y, x / y, x ** 2.0, -x, abs(x), 2.0 * x, 1.0 - y, 3.0 / y,
                2.0 ** x]
    return probe(m, f, X, Y, parts=("value", "grad", "grad2", "jvp"))


def case_matmul_operator(m):
    return probe(m, lambda a, b: a @ b, [[1.0, 2.0], [3.0, -1.0]], [[0.5], [2.0]])


def case_broadcasting_gradients(m):
    return probe(m, lambda x, y: x * y + x / (y * y + 1.0), [[1.0, 2.0, 3.0]], [[0.5], [-1.5]])


def case_scalar_times_matrix_gradient(m):
    return probe(m, lambda s, a: s * a, 2.0, [[1.0, 2.0], [3.0, 4.0]])


def case_comparisons(m):
    x = m.constant([1.0, 2.0, 3.0])
    y = m.constant([2.0, 2.0, 2.0])
    return [x < y, x <= y, x > y, x >= y, m.equal(x, y), m.not_equal(x, y),
            m.less(x, y), m.greater_equal(x, y), m.math.less_equal(x, y), m.greater(x, y)]


def case_comparison_gradient_none(m):
    x = m.constant([1.0, 2.0])
    with m.GradientTape() as tape:
        tape.watch(x)
        y = m.cast(x > 1.5, m.float32)
    return tape.gradient(y, x)


def case_integer_arithmetic_dtypes(m):
    a = m.constant([7, -3, 4])
    b = m.constant([2, 2, 3])
    return [a + b, a - b, a * b, m.maximum(a, b), m.abs(a), -a, m.square(a)]


def case_integer_divide_is_float64(m):
    return m.divide(m.constant([7, -3]), m.constant([2, 2]))


def case_int64_arithmetic(m):
    a = m.constant([7, -3], dtype=m.int64)
    return [a + 1, a * 2, m.cast(a, m.float32)]


def case_python_number_takes_tensor_dtype(m):
    x = m.constant([1.0, 2.0], dtype=m.float64)
    return [x + 1, 2 * x, x / 2, x ** 2, 1.5 - x]


def case_floor_round_gradients(m):
    return probe(m, lambda x: [m.floor(x), m.round(x)], [0.4, -1.6, 2.5],
                 parts=("value", "grad", "grad2", "jvp"))


def case_sign_gradients(m):
    return probe(m, m.sign, [0.4, -1.6, 0.0], parts=("value", "grad", "grad2", "jvp"))


def case_round_half_to_even(m):
    return m.round(m.constant([0.5, 1.5, 2.5, -0.5, -2.5]))


def case_sigmoid_softplus(m):
    return probe(m, lambda x: [m.sigmoid(x), m.nn.softplus(x)], [-3.0, 0.0, 2.5],
                 parts=("value", "grad", "grad2", "jvp"))


def case_abs_at_zero(m):
    return probe(m, m.abs, [0.0, -0.0, 1.0])


def case_maximum_ties(m):
    return probe(m, m.maximum, [1.0, 2.0], [1.0, 3.0])


def case_minimum_ties(m):
    return probe(m, m.minimum, [1.0, 2.0], [1.0, 3.0])


def case_sqrt_at_zero(m):
    return probe(m, m.sqrt, [0.0, 4.0])


def case_log_at_zero(m):
    return probe(m, m.math.log, [0.0, 1.0], parts=("value", "grad", "jvp"))


def case_pow_zero_base(m):
    return probe(m, m.pow, [0.0, 0.0, 2.0], [2.0, 0.5, 0.0])


case_pow_zero_base.differs = "a zero tangent meeting an infinite partial derivative in forward mode"


def case_pow_zero_exponent_at_zero(m):
    """autograd's test #116: d/dx x**0 at 0 (autograd: 0 and 0; TensorFlow: NaN and NaN)."""
    return probe(m, lambda x: m.pow(x, 0.0), [0.0], parts=("value", "grad", "grad2"),
                 dtypes=("float64",))


case_pow_zero_exponent_at_zero.differs = (
    "a zero tangent meeting an infinite partial derivative in forward mode")


def case_pow_negative_base(m):
    return probe(m, lambda x: m.pow(x, 2.0), [-2.0, -0.5])


def case_divide_by_zero(m):
    return probe(m, m.divide, [1.0, 0.0, -1.0], [0.0, 0.0, 0.0], parts=("value", "grad"))


def case_exp_overflow(m):
    return probe(m, m.exp, [100.0, -100.0, 800.0], parts=("value", "grad"))


def case_where_broadcast(m):
    return probe(m, lambda x, y: m.where(m.constant([[True], [False]]), x, y),
                 [[1.0, 2.0, 3.0]], [[4.0], [5.0]])


def case_where_scalar_branches(m):
    return probe(m, lambda x: m.where(x > 0.0, x, 0.0), X)


def case_where_wrong_condition_dtype(m):
    return m.where(m.constant([1.0, 0.0]), m.constant([1.0, 2.0]), m.constant([3.0, 4.0]))


case_where_wrong_condition_dtype.error_only = True


def case_cast_gradients(m):
    def f(x):
        return m.cast(x, m.float64) if x.dtype == m.float32 else m.cast(x, m.float32)
    return probe(m, f, X)


def case_cast_to_int_gradient_none(m):
    x = m.constant([1.7, -2.3])
    with m.GradientTape() as tape:
        tape.watch(x)
        y = m.cast(x, m.int32)
    return y, tape.gradient(y, x)


def case_cast_truncates(m):
    return m.cast(m.constant([1.7, -2.7, 0.5]), m.int32)


def case_bool_dtype(m):
    return m.cast(m.constant([1, 0, 3]), m.bool)


case_bool_dtype.xfail = "not in issue 16: TensorFlow's tf.bool is mt.bool_ (no mt.bool)"


def case_add_shape_mismatch(m):
    return m.add(m.constant([1.0, 2.0, 3.0]), m.constant([1.0, 2.0]))


case_add_shape_mismatch.error_only = True


def case_multiply_int_float(m):
    return m.multiply(m.constant([1, 2]), m.constant([1.0, 2.0]))


case_multiply_int_float.error_only = True


def case_sin_of_int(m):
    return m.sin(m.constant([1, 2]))


case_sin_of_int.error_only = True


def case_float16(m):
    x = m.constant([0.5, 1.5], dtype=m.float16)
    with m.GradientTape() as tape:
        tape.watch(x)
        y = m.reduce_sum(m.sin(x) * x)
    return y, tape.gradient(y, x)
