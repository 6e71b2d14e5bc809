"""Issue 30: what TensorFlow's own unit tests still found (wrong numbers,
refusals, error kinds), each program run under TensorFlow 2.21 and minitape."""
import numpy as np

from .probes import probe


# --- wrong numbers ---------------------------------------------------------------

def case_recompute_grad_same_tensor_twice(m):
    # TensorFlow's regression test: f(x, x) with f(a, b) = a * b, at x = 3:
    # value 9, gradient 6 (minitape gave 12), second derivative 2.
    g = m.recompute_grad(lambda a, b: a * b)
    return probe(m, lambda x: g(x, x), [3.0, -0.5], parts=("value", "grad", "grad2"))


def _tape_and_accumulator(m, accumulator_outside):
    c = m.constant(1.0)
    acc = m.autodiff.ForwardAccumulator(c, m.constant(0.1))
    tape = m.GradientTape()
    outer, inner = (acc, tape) if accumulator_outside else (tape, acc)
    with outer:
        with inner:
            tape.watch(c)
            d = m.cos(c)
            jvp = acc.jvp(d)
    return d, jvp, tape.gradient(jvp, c)


def case_tape_inside_accumulator_does_not_record_tangents(m):
    # forwardprop_test's testForwardOverBackwardMemoryEfficiency: None
    # (minitape gave -0.054, the derivative of the JVP).
    return _tape_and_accumulator(m, accumulator_outside=True)


def case_tape_outside_accumulator_records_tangents(m):
    # testBackwardOverForward: -0.1 * cos(1)
    return _tape_and_accumulator(m, accumulator_outside=False)


# --- mt.test.compute_gradient: TensorFlow's gradient_checker_v2_test ---------------

def _random_complex(shape, dtype):
    rng = np.random.default_rng(3)
    return (rng.random(shape) + 1j * rng.random(shape)).astype(dtype)


def case_compute_gradient_complex_mul(m):
    # testComplexMul: a complex number is two real ones, [[5, -7], [7, 5]].
    c = m.constant(5 + 7j, dtype=m.complex64)
    x = m.constant(_random_complex((), np.complex64))
    return m.test.compute_gradient(lambda x: c * x, [x])


case_compute_gradient_complex_mul.atol = 1e-3  # (the numerical Jacobian, in float32)


def case_compute_gradient_complex_conj(m):
    # testComplexConj: [[1, 0], [0, -1]] per element.
    x = m.constant(_random_complex((2,), np.complex64))
    return m.test.compute_gradient(lambda x: m.math.conj(x), [x])


def case_compute_gradient_complex_to_real_and_back(m):
    z = m.constant(np.array([3 + 4j, -1 + 2j]))
    x = m.constant([0.5, -1.5], dtype=m.float64)
    delta = 1.0 / 1024  # TensorFlow's step for every dtype
    return (m.test.compute_gradient(lambda z: m.abs(z) * m.math.real(z), [z], delta=delta),
            m.test.compute_gradient(lambda x: m.complex(x * x, 2.0 * x), [x], delta=delta))


case_compute_gradient_complex_to_real_and_back.atol = 1e-9


def case_compute_gradient_empty_succeeds(m):
    # testEmptySucceeds and testEmptyMatMul: (0, 0) and (0, 12) Jacobians.
    x = m.constant(np.ones((0, 3)), dtype=m.float32)
    y = m.constant(np.ones((3, 4)), dtype=m.float32)
    return (m.test.compute_gradient(lambda x: m.identity(x), [x]),
            m.test.compute_gradient(lambda x, y: m.matmul(x, y), [x, y]))


def case_compute_gradient_empty_with_a_wrong_gradient(m):
    # testEmptyFails: ValueError, "Empty gradient has wrong shape".
    @m.custom_gradient
    def id_bad_grad(x):
        return m.identity(x), lambda dy: m.transpose(dy)

    x = m.constant(np.ones((0, 3)), dtype=m.float32)
    return m.test.compute_gradient(id_bad_grad, [x])


case_compute_gradient_empty_with_a_wrong_gradient.error_only = True


def case_compute_gradient_empty_result_with_a_nonzero_gradient(m):
    # ValueError, "Empty tensor with nonzero gradients".
    @m.custom_gradient
    def id_ones_grad(x):
        return m.identity(x), lambda dy: m.ones_like(x)

    return m.test.compute_gradient(lambda x: id_ones_grad(x)[:0], [m.constant([1.0, 2.0])])


case_compute_gradient_empty_result_with_a_nonzero_gradient.error_only = True


def case_compute_gradient_x_not_a_list(m):
    # ValueError: "`x` must be a list or tuple of values convertible to a Tensor".
    return m.test.compute_gradient(lambda x: x * 2.0, m.constant([1.0, 2.0]))


case_compute_gradient_x_not_a_list.error_only = True


def case_compute_gradient_of_a_gradient(m):
    # testGradGrad: [[48]].
    def f(x):
        with m.GradientTape() as tape:
            tape.watch(x)
            z = m.square(m.square(x))
        return tape.gradient(z, x)

    return m.test.compute_gradient(f, [2.0])


case_compute_gradient_of_a_gradient.atol = 1e-3


# --- errors of TensorFlow's kind, with its words -------------------------------------

def case_reenter_an_active_accumulator(m):
    # ValueError "Accumulator is already recording." (minitape: RuntimeError)
    x = m.constant(1.0)
    with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as acc:
        with acc:
            pass


case_reenter_an_active_accumulator.error_only = True


def case_reenter_a_recording_tape(m):
    # ValueError "Tape is still recording, ..." (minitape: RuntimeError)
    tape = m.GradientTape()
    with tape:
        with tape:
            pass


case_reenter_a_recording_tape.error_only = True


def _error_text(call):
    try:
        call()
    except ValueError as e:
        return str(e)
    return "no error"


def case_error_words(m):
    """The words a student searches for, in each message (ValueError in both)."""
    x = m.constant([[1.0, 2.0]])
    y = m.constant([[1.0], [2.0]])
    with m.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        z = x * 2.0

    def accumulator(): return m.autodiff.ForwardAccumulator([x, x], [x, x])

    def reenter():
        with m.autodiff.ForwardAccumulator(x, x) as acc:
            with acc:
                pass

    def reenter_tape():
        with tape:
            with tape:
                pass

    calls = {
        "Unknown value for unconnected_gradients: 'zeros'":
            lambda: tape.gradient(z, x, unconnected_gradients="zeros"),
        "specified as a primal multiple times": accumulator,
        "Accumulator is already recording": reenter,
        "Tape is still recording": reenter_tape,
        "Need first dimension of target shape": lambda: tape.batch_jacobian(z, y),
    }
    return {words: words in _error_text(call) for words, call in calls.items()}


def case_unknown_unconnected_gradients_everywhere(m):
    x = m.constant([1.0])
    with m.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 2.0
    with m.autodiff.ForwardAccumulator(x, m.constant([1.0])) as acc:
        z = x * 2.0
    calls = [lambda: tape.gradient(y, x, unconnected_gradients="ZERO"),
             lambda: tape.gradient(y, x, unconnected_gradients=None),
             lambda: tape.jacobian(y, x, unconnected_gradients="foo"),
             lambda: acc.jvp(z, unconnected_gradients="foo")]
    return [_error_text(c) != "no error" for c in calls]


def case_batch_jacobian_batch_sizes_differ(m):
    a = m.constant(np.ones((2, 3), np.float32))
    b = m.constant(np.ones((3, 3), np.float32))
    with m.GradientTape() as tape:
        tape.watch(b)
        y = a * m.reduce_sum(b)
    return tape.batch_jacobian(y, b)


case_batch_jacobian_batch_sizes_differ.error_only = True


# --- one_hot's Python numbers take its dtype (dtype_hint) ----------------------------

def case_one_hot_python_numbers_take_the_dtype(m):
    return (m.one_hot([0, 2], 3, on_value=1.0, off_value=0.0, dtype=m.float64),
            m.one_hot([0, 2], 3, on_value=1, off_value=0, dtype=m.float64),
            m.one_hot([0, 2], 3, on_value=1.5, off_value=0.0, dtype=m.float16),
            m.one_hot([0, 2], 3, on_value=1.0, off_value=0.0))


def case_one_hot_a_tensor_of_another_dtype(m):
    return m.one_hot([0], 2, on_value=m.constant(1.0), off_value=0.0, dtype=m.float64)


case_one_hot_a_tensor_of_another_dtype.error_only = True


def case_one_hot_a_fraction_for_an_integer_dtype(m):
    return m.one_hot([0], 2, on_value=1.5, off_value=0.0, dtype=m.int32)


case_one_hot_a_fraction_for_an_integer_dtype.error_only = True


# --- pad and reshape refuse what TensorFlow refuses ----------------------------------

def case_pad_unknown_mode(m):
    # ValueError naming `mode` ("expected to be one of CONSTANT, REFLECT, SYMMETRIC")
    return m.pad(m.constant([[1.0, 2.0]]), [[1, 1], [0, 0]], mode="wrap")


case_pad_unknown_mode.error_only = True


def case_pad_modes_in_any_case(m):
    x = m.constant([[1.0, 2.0], [3.0, 4.0]])
    return (m.pad(x, [[1, 1], [0, 0]], mode="reflect"),
            m.pad(x, [[1, 1], [0, 1]], mode="Symmetric"))


def case_pad_paddings_of_the_wrong_shape(m):
    return m.pad(m.constant([[1.0, 2.0]]), [[1, 1]])


case_pad_paddings_of_the_wrong_shape.error_only = True


def case_reshape_to_too_many_dimensions(m):
    # "too many dimensions: must be < 254, but received 300"
    return m.reshape(m.constant(1.0), [1] * 300)


case_reshape_to_too_many_dimensions.error_only = True


# --- the spectral norm's second derivative; complex eigh, eigvalsh and svd -----------

def case_spectral_norm_to_second_order(m):
    # (minitape raised NotImplementedError: "needs an SVD gradient")
    return (probe(m, lambda a: m.norm(a, ord=2, axis=[0, 1]), [[1.0, 2.0], [3.0, 4.0]]),
            probe(m, lambda a: m.norm(a, ord=2, axis=[1, 2]),
                  [[[1.0, -2.0, 0.5], [3.0, 0.5, 1.0]], [[2.0, 0.0, 1.0], [0.5, 1.0, -1.0]]],
                  parts=("value", "grad", "grad2", "jvp")))


case_spectral_norm_to_second_order.ulps = 64

_DTYPES = {"float32": "complex64", "float64": "complex128"}


def _hermitian(m, x, y):
    """A Hermitian matrix with distinct eigenvalues, from real parts x and y."""
    z = m.complex(x + m.transpose(x), y - m.transpose(y))
    return z + m.cast(m.constant(np.diag([0.0, 2.0, 4.0])), z.dtype)


def _phase_free(m, v, weights, u=None):
    """Real numbers from u diag(w) v^H (free of the columns' phases)."""
    u = v if u is None else u
    y = m.matmul(u * m.cast(m.constant(weights), v.dtype), v, adjoint_b=True)
    return m.concat([m.reshape(m.math.real(y), [-1]), m.reshape(m.math.imag(y), [-1])], 0)


X3 = [[0.3, -0.2, 0.5], [0.1, 0.4, -0.3], [0.2, 0.6, -0.1]]
Y3 = [[0.1, 0.5, -0.2], [-0.4, 0.2, 0.3], [0.6, -0.1, 0.2]]


def case_complex_eigh_and_eigvalsh(m):
    # (minitape raised TypeError: "only float32 and float64")
    def f(x, y):
        e, v = m.linalg.eigh(_hermitian(m, x, y))
        return m.concat([m.math.real(e), _phase_free(m, v, [1.0, -2.0, 0.5]),
                         m.math.real(m.linalg.eigvalsh(_hermitian(m, x, y)))], 0)
    return probe(m, f, X3, Y3, parts=("value", "grad", "grad2", "jacobian", "jvp")), \
        m.linalg.eigh(m.constant(np.eye(2) * (1 + 0j)))[0].dtype


case_complex_eigh_and_eigvalsh.ulps = 4096  # float32 eigenvectors


def case_complex_svd_values(m):
    def f(x, y):
        return m.linalg.svd(m.complex(x, y), compute_uv=False)
    return probe(m, f, X3[:2], Y3[:2], parts=("value", "grad", "grad2", "jacobian", "jvp"))


case_complex_svd_values.ulps = 256


def case_complex_svd_vectors_first_order(m):
    def f(x, y):
        s, u, v = m.linalg.svd(m.complex(x, y))
        return m.concat([s, _phase_free(m, v, [1.0, -2.0], u), _phase_free(m, u, [1.0, 0.5])], 0)
    return (probe(m, f, X3[:2], Y3[:2], parts=("value", "grad", "jacobian", "jvp")),
            probe(m, f, np.transpose(X3[:2]), np.transpose(Y3[:2]), parts=("value", "grad")),
            probe(m, lambda x, y: m.norm(m.complex(x, y), ord=2, axis=[0, 1]), X3[:2], Y3[:2],
                  parts=("value", "grad", "jvp")))


case_complex_svd_vectors_first_order.ulps = 4096


def case_complex_svd_vectors_second_order(m):
    def f(x, y):
        _, u, v = m.linalg.svd(m.complex(x, y))
        return _phase_free(m, v, [1.0, -2.0], u)
    return probe(m, f, X3[:2], Y3[:2], dtypes=("float64",), parts=("grad2",))


case_complex_svd_vectors_second_order.differs = (
    "second derivatives through the singular vectors of a complex matrix (`svd`'s `u` and "
    "`v`, the spectral norm `norm(z, ord=2, axis=[0, 1])` of a complex `z`)")


# --- derivatives of integer results and of branches ----------------------------------

def case_argsort_gradient(m):
    x = m.constant([3.0, 1.0, 2.0])
    with m.GradientTape() as tape:
        tape.watch(x)
        order = m.argsort(x)
    return tape.gradient(order, x)


case_argsort_gradient.differs = (
    "the derivatives of an integer result (`argsort`, `top_k`'s indices, a `cast` to integers)")


def case_argsort_gradient_unconnected_zero(m):
    x = m.constant([3.0, 1.0, 2.0])
    with m.GradientTape() as tape:
        tape.watch(x)
        order = m.argsort(x)
        top = m.math.top_k(x, 2)
    with m.autodiff.ForwardAccumulator(x, m.constant([1.0, 1.0, 1.0])) as acc:
        again = m.argsort(x)
    return (tape.gradient(order, x, unconnected_gradients=m.UnconnectedGradients.ZERO),
            tape.gradient(top.values, x), acc.jvp(again))


def case_integer_jacobian(m):
    x = m.constant([3.0, 1.0, 2.0])
    with m.GradientTape() as tape:
        tape.watch(x)
        order = m.argsort(x)
    return tape.jacobian(order, x)


case_integer_jacobian.differs = case_argsort_gradient.differs


def _branch(m, x):
    @m.function
    def f(x):
        if x > 0:
            return x * x
        return 0.0

    with m.GradientTape() as tape:
        tape.watch(x)
        with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as acc:
            y = f(x)
    return y, tape.gradient(y, x), acc.jvp(y)


def case_function_returning_a_number(m):
    # TensorFlow's functions return tensors: tf.function(lambda: 1.0)() is one
    x = m.constant(2.0)
    with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as acc:
        y = m.function(lambda x: 1.0)(x)
    return (y, acc.jvp(y), m.function(lambda: 3)(), m.function(lambda x: (x, 2.0))(x),
            m.function(lambda x: "text")(x), _branch(m, m.constant(2.0)))


def case_function_branch_returning_a_number(m):
    return _branch(m, m.constant(-2.0))


case_function_branch_returning_a_number.differs = (
    "Python `if`/`for` and `.numpy()` inside `mt.function`")


# --- diag_part with a diagonal outside the matrix ------------------------------------
# TensorFlow 2.21 refuses it ("lower_diag_index is out of bound"), for k = 3 or
# k = -2 of a 2 x 3 matrix; NumPy (and tf.experimental.numpy.diagonal) give an
# empty diagonal. minitape refuses it with TensorFlow.

def case_diag_part_of_a_diagonal_outside_the_matrix(m):
    return m.linalg.diag_part(m.constant(np.arange(6.0).reshape(2, 3)), k=3)


case_diag_part_of_a_diagonal_outside_the_matrix.error_only = True


def case_diag_part_below_the_matrix(m):
    return m.linalg.diag_part(m.constant(np.arange(6.0).reshape(2, 3)), k=-2)


case_diag_part_below_the_matrix.error_only = True


def case_diag_part_at_the_edges(m):
    x = m.constant(np.arange(6.0).reshape(2, 3))
    return m.linalg.diag_part(x, k=2), m.linalg.diag_part(x, k=-1)
