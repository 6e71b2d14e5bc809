"""Traced functions (issue 17): tf.function and mt.function, the same code under both.

Each program runs eagerly and through `m.function`, and where cheap also compiled
(`jit_compile=True`): TensorFlow gives one answer in every mode, so must minitape.
"""
import numpy as np

from .probes import probe


def _modes(m, f, *args, jit=True):
    """f(*args) eagerly, traced and (jit) compiled."""
    out = {"eager": f(*args), "traced": m.function(f)(*args)}
    if jit:
        out["compiled"] = m.function(f, jit_compile=True)(*args)
    return out


def case_function_basic(m):
    f = m.function(lambda x, y: m.sin(x) * y + m.reduce_sum(x))
    x = m.constant([1.0, 2.0])
    return f(x, 2.0), f(x, m.constant(3.0)), f(m.constant([0.5]), 1.0)


def case_function_gradient(m):
    f = m.function(lambda x: m.reduce_sum(m.exp(x) * x))
    return probe(m, f, [0.5, -1.0], parts=("value", "grad", "grad2", "jvp"))


def case_function_compiled_gradient(m):
    f = m.function(lambda x: m.reduce_sum(m.tanh(x) * x), jit_compile=True)
    return probe(m, f, [0.5, -1.0], parts=("value", "grad", "grad2"))


def case_function_tensor_index_argument(m):
    f = m.function(lambda x, i: x[i])
    x = m.constant([10.0, 20.0, 30.0])
    return f(x, m.constant(0)), f(x, m.constant(2))




def case_function_pad_constant_argument(m):
    f = m.function(lambda x, c: m.pad(x, [[1, 0]], constant_values=c))
    x = m.constant([1.0])
    return f(x, m.constant(5.0)), f(x, m.constant(7.0))




def case_function_variable_swap(m):
    p = m.Variable(1.0)
    q = m.Variable(2.0)

    @m.function
    def swap():
        a = p.read_value()
        b = q.read_value()
        p.assign(b)
        q.assign(a)
        return a, b

    r = swap()
    return r, p.read_value(), q.read_value()




def case_function_recompute_grad(m):
    g = m.recompute_grad(lambda x: m.sin(x) * x)
    f = m.function(lambda x: g(x))
    return f(m.constant(1.0)), f(m.constant(2.0))




def case_function_named_like_generated_names(m):
    """Issue 17: a compiled function named like a name the generated program binds."""
    def adjoint(x):
        return m.sin(x) * 2.0

    def shape(x):
        return m.reduce_sum(x * x, axis=0, keepdims=True)

    def index(x):
        return x[1] * m.reduce_max(x)

    def keepdims(x):
        return m.reduce_mean(x, axis=0, keepdims=True)

    def axis(x):
        return m.reduce_sum(m.exp(x), axis=0)

    def w_var(x):
        return m.matmul(m.reshape(x, [1, 2]), m.reshape(x, [2, 1]))
    x = m.constant([1.0, 2.0])
    return [m.function(f, jit_compile=True)(x) for f in (adjoint, shape, index, keepdims, axis,
                                                          w_var)]


def case_function_second_derivative_next_to_nan(m):
    def f(x):
        with m.GradientTape() as t2:
            t2.watch(x)
            with m.GradientTape() as t1:
                t1.watch(x)
                y = m.reduce_sum(x * x)
            g = t1.gradient(y, x)
        return t2.gradient(g, x)
    x = m.constant([0.0, 1.0, np.nan])
    return _modes(m, f, x)


def case_function_sqrt_of_minus_inf_sum(m):
    def f(x):
        return [m.reduce_sum(x) ** 0.5, x[0] ** 0.5]
    return _modes(m, f, m.constant([-np.inf]))


case_function_sqrt_of_minus_inf_sum.xfail = (
    "issue 17: x ** 0.5 at -inf compiled is nan (TensorFlow 2.21: inf eagerly and compiled, "
    "but nan traced, where pow(x, 0.5) becomes sqrt)")


def case_function_modes_agree(m):
    def f(x, y):
        return [m.nn.softmax(x * y), m.reduce_max(x, axis=0), m.matmul(x, y, transpose_b=True),
                m.where(x > 0.0, x, 0.1 * x)]
    a = m.constant([[1.0, -2.0], [0.5, 3.0]])
    b = m.constant([[0.5, 1.0], [-1.0, 2.0]])
    return _modes(m, f, a, b)


def case_function_gradient_inside(m):
    def f(x):
        with m.GradientTape() as tape:
            tape.watch(x)
            y = m.reduce_sum(m.sin(x) * x)
        return y, tape.gradient(y, x)
    return _modes(m, f, m.constant([0.5, 1.5]))


def case_function_jacobian_inside(m):
    def f(x):
        with m.GradientTape() as tape:
            tape.watch(x)
            y = m.tanh(x) * x[::-1]
        return tape.jacobian(y, x)
    return _modes(m, f, m.constant([0.5, 1.5, -1.0]), jit=False)


def case_function_input_signature(m):
    @m.function(input_signature=[m.TensorSpec([None], m.float32)])
    def f(x):
        return x * 2.0
    return f(m.constant([1.0, 2.0])), f(m.constant([3.0]))


def case_function_input_signature_mismatch(m):
    @m.function(input_signature=[m.TensorSpec([2], m.float32)])
    def f(x):
        return x * 2.0
    return f(m.constant([1.0, 2.0, 3.0]))


case_function_input_signature_mismatch.error_only = True
case_function_input_signature_mismatch.xfail = (
    "not in issues 16/17: an input incompatible with input_signature is TypeError in "
    "TensorFlow, ValueError in minitape")


def case_function_variable_assign_add(m):
    v = m.Variable(1.0)

    @m.function
    def step(d):
        v.assign_add(d)
        return v.read_value() * 2.0
    return step(m.constant(1.0)), step(m.constant(2.0)), v.read_value()


def case_function_python_number_retraces(m):
    f = m.function(lambda x, n: x * n)
    x = m.constant(2.0)
    return f(x, 2), f(x, 3), f(x, 3.0)
