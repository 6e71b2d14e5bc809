"""The API summary's "the tape" and "controlling gradients" rows (docs/api.md), and forward mode."""
import numpy as np

from .probes import probe


def case_variable_basics(m):
    v = m.Variable([1.0, 2.0])
    v.assign([3.0, 4.0])
    v.assign_add([1.0, 1.0])
    v.assign_sub([0.5, 0.5])
    w = m.Variable(1, trainable=False)
    return v, v.dtype, v.shape, v.trainable, w.trainable, w.dtype, v + 1.0


def case_variable_name(m):
    return m.Variable(1.0, name="weight").name


def case_variable_assign_shape_error(m):
    m.Variable([1.0, 2.0]).assign([1.0, 2.0, 3.0])


case_variable_assign_shape_error.error_only = True


def case_variable_gradient(m):
    v = m.Variable([1.0, 2.0])
    with m.GradientTape() as tape:
        y = m.reduce_sum(v * v)
    return tape.gradient(y, v), tape.watched_variables()[0] is v


def case_watch_accessed_variables_false(m):
    v = m.Variable(2.0)
    x = m.constant(3.0)
    with m.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = v * x
    return tape.gradient(y, [v, x]), len(tape.watched_variables())


def case_untrainable_variable_not_watched(m):
    v = m.Variable(2.0, trainable=False)
    with m.GradientTape() as tape:
        y = v * v
    return tape.gradient(y, v)


def case_constant_not_watched(m):
    x = m.constant(2.0)
    with m.GradientTape() as tape:
        y = x * x
    return tape.gradient(y, x)


def case_gradient_nested_sources(m):
    a = m.Variable(1.0)
    b = m.Variable([2.0, 3.0])
    c = m.constant(4.0)
    with m.GradientTape() as tape:
        tape.watch(c)
        y = a * m.reduce_sum(b) * c
    return tape.gradient(y, {"a": a, "bc": [b, (c,)]})


def case_gradient_output_gradients(m):
    x = m.constant([1.0, 2.0])
    with m.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    return tape.gradient(y, x, output_gradients=m.constant([10.0, -1.0]))


def case_gradient_nested_target(m):
    x = m.constant(2.0)
    with m.GradientTape() as tape:
        tape.watch(x)
        y = [x * x, {"k": x * 3.0}]
    return tape.gradient(y, x)


def case_unconnected_gradients_zero(m):
    x = m.constant([1.0, 2.0])
    z = m.constant(5.0)
    with m.GradientTape() as tape:
        tape.watch([x, z])
        y = m.reduce_sum(x)
    return tape.gradient(y, [x, z], unconnected_gradients=m.UnconnectedGradients.ZERO)


def case_nonpersistent_second_call(m):
    x = m.constant(2.0)
    with m.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    return tape.gradient(y, x)


case_nonpersistent_second_call.error_only = True


def case_persistent_tape(m):
    x = m.constant(2.0)
    with m.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    return tape.gradient(y, x), tape.gradient(z, x), tape.gradient(z, y)


def case_stop_recording(m):
    x = m.Variable(2.0)
    y = m.Variable(3.0)
    with m.GradientTape() as t:
        x_sq = x * x
        with t.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq
    return t.gradient(z, {"x": x, "y": y})


def case_reset(m):
    x = m.Variable(2.0)
    y = m.Variable(3.0)
    with m.GradientTape() as t:
        y_sq = y * y
        t.reset()
        z = x * x + y_sq
    return t.gradient(z, {"x": x, "y": y})


def case_gradient_of_integer_source(m):
    x = m.constant(2)
    with m.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    return tape.gradient(y, x)


def case_watch_non_tensor(m):
    with m.GradientTape() as tape:
        tape.watch("x")


case_watch_non_tensor.error_only = True


def case_stop_gradient(m):
    return probe(m, lambda x, y: x * x + m.stop_gradient(y * y) * x, [1.0, 2.0], [3.0, -1.0])


def case_custom_gradient(m):
    @m.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return m.clip_by_norm(dy, 0.5)
        return y, backward

    v = m.Variable(2.0)
    with m.GradientTape() as t:
        output = clip_gradients(v * v)
    return output, t.gradient(output, v)


def case_custom_gradient_log1pexp(m):
    """tf.custom_gradient's docstring example: a stable gradient of log(1 + e^x)."""
    @m.custom_gradient
    def log1pexp(x):
        e = m.exp(x)

        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))
        return m.math.log(1 + e), grad

    x = m.constant(100.0)
    with m.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    return y, tape.gradient(y, x)


def case_custom_gradient_second_order(m):
    @m.custom_gradient
    def cube(x):
        def grad(dy):
            return dy * 3.0 * x * x
        return x * x * x, grad

    return probe(m, cube, [1.0, -2.0], parts=("value", "grad", "grad2"))


def case_custom_gradient_with_variables(m):
    v = m.Variable(3.0)

    @m.custom_gradient
    def scale(x):
        def grad(dy, variables=None):
            return dy * v, [dy * x * 10.0]
        return x * v, grad

    x = m.constant(2.0)
    with m.GradientTape() as tape:
        tape.watch(x)
        y = scale(x)
    return tape.gradient(y, [x, v])


def case_recompute_grad(m):
    def f(x):
        return m.sin(x) * x
    g = m.recompute_grad(f)
    return probe(m, g, [0.5, 1.5], parts=("value", "grad", "grad2"))


def case_grad_pass_through(m):
    x = m.Variable([1.4, -2.6])
    with m.GradientTape() as tape:
        y = m.grad_pass_through(m.round)(x) * 2.0
    return y, tape.gradient(y, x)


def case_jacobian(m):
    x = m.constant([1.0, 2.0, 3.0])
    with m.GradientTape() as tape:
        tape.watch(x)
        y = x[:, None] * x[None, :]
    return tape.jacobian(y, x)


def case_jacobian_scalar_source(m):
    x = m.linspace(-10.0, 10.0, 9)
    delta = m.Variable(0.0)
    with m.GradientTape() as tape:
        y = m.nn.sigmoid(x + delta)
    return tape.jacobian(y, delta)


def case_jacobian_no_pfor(m):
    x = m.constant([1.0, 2.0])
    with m.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = m.sin(x) * x[::-1]
    return tape.jacobian(y, x, experimental_use_pfor=False), tape.jacobian(y, x)


def case_jacobian_unconnected(m):
    x = m.constant([1.0, 2.0])
    z = m.constant([3.0])
    with m.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = x * 2.0
    return (tape.jacobian(y, [x, z]),
            tape.jacobian(y, z, unconnected_gradients=m.UnconnectedGradients.ZERO))


def case_hessian_by_nested_jacobian(m):
    x = m.constant([1.0, -1.0, 0.5], dtype=m.float64)
    with m.GradientTape() as t2:
        t2.watch(x)
        with m.GradientTape() as t1:
            t1.watch(x)
            y = m.reduce_sum(m.sin(x) * x[::-1])
        g = t1.gradient(y, x)
    return t2.jacobian(g, x)


def case_batch_jacobian(m):
    x = m.constant([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]])
    w = m.constant([[1.0, -1.0, 2.0], [0.5, 0.0, 1.0]])
    with m.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = m.tanh(x @ w)
    return (tape.batch_jacobian(y, x), tape.batch_jacobian(y, x, experimental_use_pfor=False),
            tape.jacobian(y, x))


def case_batch_jacobian_mismatch(m):
    x = m.constant([[1.0, 2.0], [3.0, -1.0]])
    with m.GradientTape() as tape:
        tape.watch(x)
        y = m.reshape(x, [1, 4])
    return tape.batch_jacobian(y, x)


case_batch_jacobian_mismatch.error_only = True


def case_forward_accumulator(m):
    x = m.constant([1.0, 2.0])
    t = m.constant([0.5, -1.0])
    with m.autodiff.ForwardAccumulator(x, t) as acc:
        y = m.reduce_sum(m.sin(x) * x)
        z = x * 3.0
    return acc.jvp(y), acc.jvp(z), acc.jvp(m.constant(1.0))


def case_forward_accumulator_nested(m):
    x = m.constant(1.5, dtype=m.float64)
    with m.autodiff.ForwardAccumulator(x, m.constant(1.0, dtype=m.float64)) as outer:
        with m.autodiff.ForwardAccumulator(x, m.constant(1.0, dtype=m.float64)) as inner:
            y = m.sin(x) * x * x
        d1 = inner.jvp(y)
    return d1, outer.jvp(d1)


def case_forward_over_reverse_hvp(m):
    x = m.constant([1.0, 2.0, -0.5], dtype=m.float64)
    v = m.constant([1.0, 0.0, 2.0], dtype=m.float64)
    with m.autodiff.ForwardAccumulator(x, v) as acc:
        with m.GradientTape() as tape:
            tape.watch(x)
            y = m.reduce_sum(m.exp(x) * x[::-1])
        g = tape.gradient(y, x)
    return g, acc.jvp(g)


def case_forward_accumulator_variable(m):
    v = m.Variable([1.0, 2.0])
    with m.autodiff.ForwardAccumulator(v, m.constant([1.0, 1.0])) as acc:
        y = v * v
    return acc.jvp(y)


def case_forward_accumulator_unconnected_zero(m):
    x = m.constant(1.0)
    with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as acc:
        y = m.constant(2.0) * 3.0
    return acc.jvp(y), acc.jvp(y, unconnected_gradients=m.UnconnectedGradients.ZERO)


def case_forward_accumulator_shape_mismatch(m):
    """TensorFlow broadcasts the tangent, or (after other forward-mode work in the process)
    raises InvalidArgumentError from its traced JVP function; minitape: ValueError."""
    x = m.constant([1.0, 2.0])
    try:
        with m.autodiff.ForwardAccumulator(x, m.constant([1.0])) as acc:
            y = x * x
        return acc.jvp(y)
    except Exception as exc:  # noqa: BLE001  (which class, is the point)
        return "raised", isinstance(exc, ValueError)


case_forward_accumulator_shape_mismatch.differs = (
    "a `ForwardAccumulator` tangent whose shape is not its primal's")


def case_jvp_equals_jacobian_times_tangent(m):
    a = np.array([[1.0, 2.0], [0.5, -1.0]])
    x = m.constant([0.3, -0.7], dtype=m.float64)
    t = m.constant([1.0, 2.0], dtype=m.float64)
    with m.autodiff.ForwardAccumulator(x, t) as acc:
        y = m.tanh(m.linalg.matvec(m.constant(a), x)) if hasattr(m.linalg, "matvec") \
            else m.tanh(m.reshape(m.constant(a) @ m.reshape(x, [2, 1]), [2]))
    return acc.jvp(y)


# --- reset and stop_recording where the tape is not recording (issue 30) ------------

def case_reset_before_the_block(m):
    return m.GradientTape().reset()


case_reset_before_the_block.error_only = True


def case_reset_after_the_block(m):
    x = m.constant(3.0)
    with m.GradientTape(persistent=True) as t:
        t.watch(x)
        x * x
    t.reset()


case_reset_after_the_block.error_only = True


def case_reset_inside_stop_recording(m):
    with m.GradientTape() as t:
        with t.stop_recording():
            t.reset()


case_reset_inside_stop_recording.error_only = True


def case_stop_recording_before_the_block(m):
    with m.GradientTape().stop_recording():
        pass


case_stop_recording_before_the_block.error_only = True


def case_stop_recording_after_the_block(m):
    with m.GradientTape() as t:
        pass
    with t.stop_recording():
        pass


case_stop_recording_after_the_block.error_only = True


def case_stop_recording_twice(m):
    with m.GradientTape() as t:
        with t.stop_recording():
            with t.stop_recording():
                pass


case_stop_recording_twice.error_only = True


def case_reset_inside_the_block_then_watch_again(m):
    x = m.constant(3.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
        t.reset()
        t.watch(x)
        z = x * y
    return t.gradient(z, x)   # 9: y is a constant to the reset tape
