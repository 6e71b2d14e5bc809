"""Every row of docs/differences.md, measured.

Each case carries ``differs = "<the row's 'what' cell>"``: the harness requires the
two results to DIFFER, and test_conformance checks that every row has a case. Where
both sides raise the same category of error, the case returns what tells them apart
(the message, the exception's class).
"""
import gc
import os
import tempfile

import numpy as np


def _is_tf(m):
    return m.__name__ == "tensorflow"


def case_register_gradient_twice(m):
    name = f"ConformanceTwice_{m.__name__}"
    for _ in range(2):  # a notebook cell run twice
        @m.RegisterGradient(name)
        def _twice_grad(op, grad):
            return grad * 2.0
    return "registered twice"


case_register_gradient_twice.differs = "registering a gradient for an op type twice"


def case_loop_jacobian_non_persistent(m):
    x = m.constant([[1.0, 2.0], [3.0, 4.0]])
    with m.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    return tape.jacobian(y, x, experimental_use_pfor=False)


case_loop_jacobian_non_persistent.differs = (
    "`jacobian` / `batch_jacobian` with `experimental_use_pfor=False` on a non-persistent tape")


def case_python_if_in_function(m):
    @m.function
    def absolute(x):
        if x > 0:
            return x
        return -x
    values = absolute(m.constant(1.0)), absolute(m.constant(-1.0))
    # the same values; TensorFlow traces once (graph control flow), minitape
    # twice (the trace read x > 0 as a Python value, so it holds for that value)
    return values, absolute.experimental_get_tracing_count()


case_python_if_in_function.differs = "Python `if`/`for` and `.numpy()` inside `mt.function`"


def case_cond_in_function_constant_branch(m):
    @m.function
    def f(x):
        return m.cond(x > 0, lambda: x * x, lambda: m.constant(0.0))
    x = m.constant(-2.0)
    with m.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as acc:
        z = f(x)
    # TensorFlow: 0, 0 and 0; minitape: 0, None and None
    return y, tape.gradient(y, x), acc.jvp(z)


case_cond_in_function_constant_branch.differs = (
    "`mt.cond`, `mt.while_loop`, `mt.map_fn`, `mt.scan` inside `mt.function`")


def case_new_primitive_op_type(m):
    @m.primitive("ConformanceCube")
    def cube(x):
        return x ** 3

    x = m.constant(2.0)
    return cube(x)


case_new_primitive_op_type.differs = "new primitive op types"


def case_reduce_mean_of_integers(m):
    return m.reduce_mean(m.constant([1, 2]))


case_reduce_mean_of_integers.differs = "`reduce_mean` of integers"


def case_printed_names(m):
    return [str(m.constant(1.0)), repr(m.constant(1.0)), type(m.Variable(1.0)).__name__,
            type(m.constant(1.0)).__name__]


case_printed_names.differs = "printed names"


def _op_without_gradient(m, x):
    """An op whose type has no registered gradient (TensorFlow: MatrixLogarithm)."""
    if _is_tf(m):
        return m.math.real(m.raw_ops.MatrixLogarithm(input=m.cast(x, m.complex64)))

    @m.primitive("ConformanceNoGradient")
    def no_gradient(a):
        return a + 1.0
    return no_gradient(x)


def case_no_gradient_message(m):
    x = m.constant([[2.0]])
    with m.GradientTape() as tape:
        tape.watch(x)
        y = _op_without_gradient(m, x)
    try:
        tape.gradient(y, x)
    except LookupError as exc:
        return "LookupError", str(exc).split(":")[0]
    return "no error"


case_no_gradient_message.differs = "differentiating an op type with no gradient"


def case_recompute_grad_forward_mode(m):
    x = m.constant(2.0)
    with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as acc:
        y = m.recompute_grad(lambda t: t * t * t)(x)
    return acc.jvp(y)


case_recompute_grad_forward_mode.differs = "`recompute_grad` under `ForwardAccumulator`"


class _Doubler:
    """A module with one traced function (built for either library)."""

    @staticmethod
    def make(m):
        class Doubler(m.Module):
            def __init__(self):
                super().__init__()
                self.w = m.Variable(2.0)

            @m.function(input_signature=[m.TensorSpec([], m.float32)])
            def __call__(self, x):
                return x * self.w
        return Doubler()


def case_saved_model_files(m):
    with tempfile.TemporaryDirectory() as path:
        m.saved_model.save(_Doubler.make(m), path)
        names = sorted(os.listdir(path))
        loaded = m.saved_model.load(path)
        return [n for n in names if "." in n], loaded(m.constant(3.0))


case_saved_model_files.differs = "SavedModel files"


def case_failed_gradient_call_keeps_recording(m):
    @m.custom_gradient
    def broken(v):
        def grad(dy):
            raise ArithmeticError("broken gradient")
        return v * 1.0, grad

    x = m.constant([1.0, 2.0])
    with m.GradientTape() as tape:
        tape.watch(x)
        y = broken(x)
        try:
            tape.gradient(y, x)
        except ArithmeticError:
            pass
        z = x * 3.0
    return tape.gradient(z, x)


case_failed_gradient_call_keeps_recording.differs = (
    "a `gradient` or `jacobian` call that fails inside a non-persistent tape's block")


def case_watch_bad_nest(m):
    x = m.constant(1.0)
    with m.GradientTape() as tape:
        try:
            tape.watch([x, "not a tensor"])
        except ValueError:
            pass
        y = x * 2.0
    return tape.gradient(y, x)


case_watch_bad_nest.differs = "`tape.watch` of a nest with something that is not a tensor"


def case_jacobian_direction(m):
    x = m.constant([1.0, 2.0, 3.0])
    with m.GradientTape() as tape:
        tape.watch(x)
        y = m.sin(x)
    return tape.jacobian(y, x, experimental_direction="forward")


case_jacobian_direction.differs = "`jacobian(..., experimental_direction=...)`"


def case_invalid_argument_class(m):
    try:
        m.reshape(m.ones([2, 3]), [4, 2])
    except Exception as exc:  # noqa: BLE001  (which class, is the point)
        return [isinstance(exc, ValueError), isinstance(exc, TypeError)]
    return "no error"


case_invalid_argument_class.differs = "invalid arguments (a bad shape, axis, size or dtype)"


def case_zero_tangent_meets_infinity(m):
    x0, x1 = m.constant(2.0), m.constant(3.0)
    with m.autodiff.ForwardAccumulator([x0, x1], [m.constant(1.0), m.constant(0.0)]) as acc:
        y = x0 * 1.0 + x1 * np.float32(np.inf)
    x = m.constant([2.0, 3.0])
    with m.GradientTape() as tape:
        tape.watch(x)
        z = x * m.constant([1.0, np.inf])
    return acc.jvp(y), tape.jacobian(z, x)


case_zero_tangent_meets_infinity.differs = (
    "a zero tangent meeting an infinite partial derivative in forward mode")


def case_pad_constant_of_another_dtype(m):
    x = m.constant([1.0], dtype=m.float64)
    return m.pad(x, [[1, 0]], constant_values=m.constant(2.0))


case_pad_constant_of_another_dtype.differs = "`pad`'s `constant_values` of another dtype"


def case_jit_compile_ir(m):
    f = m.function(lambda x: m.sin(x) * x, jit_compile=True)
    x = m.constant(1.0)
    ir = f.experimental_get_compiler_ir(x)
    try:
        hlo = ir(stage="hlo")
    except ValueError:
        hlo = "ValueError"
    return "HloModule" in hlo, f(x)


case_jit_compile_ir.differs = "`mt.function(jit_compile=True)`"


def case_traced_custom_gradient_lifetime(m):
    @m.custom_gradient
    def double_gradient(y):
        return y, lambda dy: 2.0 * dy

    class Model(m.Module):
        @m.function(input_signature=[m.TensorSpec(None, m.float32)])
        def __call__(self, x):
            return double_gradient(x)

    model = Model()
    with tempfile.TemporaryDirectory() as path:
        m.saved_model.save(model, path, options=m.saved_model.SaveOptions(
            experimental_custom_gradients=False))
        del model
        gc.collect()
        loaded = m.saved_model.load(path)
        x = m.constant(3.0)
        with m.GradientTape() as tape:
            tape.watch(x)
            y = loaded(x)
        try:
            return tape.gradient(y, x)
        except LookupError:
            return "LookupError"


case_traced_custom_gradient_lifetime.differs = (
    "a custom gradient registered by tracing an `mt.function`")


# What the fresh process runs: `m` is the library, `path` the saved model. Each
# step is tried on its own, and its outcome (a value, or the error's class) printed.
_FRESH_LOAD = """
import json
loaded = m.saved_model.load(path)
x = m.constant(3.0)
steps = {}
try:
    with m.GradientTape() as tape:
        tape.watch(x)
        y = loaded(x)
    steps["call under a tape"] = float(y)
    steps["tape.gradient"] = float(tape.gradient(y, x))
except LookupError:
    steps.setdefault("call under a tape", "LookupError")
    steps.setdefault("tape.gradient", "LookupError")
try:
    with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as acc:
        y = loaded(x)
    steps["jvp"] = float(acc.jvp(y))
except LookupError:
    steps["jvp"] = "LookupError"
steps["call without a tape"] = float(loaded(x))
print(json.dumps(steps))
"""


def _in_a_fresh_process(m, code, **names):
    """Run `code` in a new Python process that has imported `m` as `m` and has
    `names` (plain values); return the JSON its last line printed."""
    import json
    import subprocess
    import sys

    parent = os.path.dirname(os.path.dirname(os.path.abspath(m.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [parent] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    prelude = f"import {m.__name__} as m\n" + "".join(
        f"{name} = {value!r}\n" for name, value in names.items())
    run = subprocess.run([sys.executable, "-c", prelude + code], capture_output=True,
                         text=True, env=env, timeout=300)
    if run.returncode != 0:
        raise RuntimeError(f"the fresh process failed: {run.stderr.strip()[-2000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def case_loaded_custom_gradient_not_saved_in_a_fresh_process(m):
    @m.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return m.clip_by_norm(dy, 0.5)
        return y, backward

    class MyModule(m.Module):
        @m.function(input_signature=[m.TensorSpec(None, m.float32)])
        def __call__(self, x):
            return clip_gradients(x)

    with tempfile.TemporaryDirectory() as path:
        m.saved_model.save(MyModule(), path, options=m.saved_model.SaveOptions(
            experimental_custom_gradients=False))
        # TensorFlow: the call under the tape and under the accumulator raise;
        # minitape: the call runs, tape.gradient raises, the JVP is 1
        return _in_a_fresh_process(m, _FRESH_LOAD, path=path)


case_loaded_custom_gradient_not_saved_in_a_fresh_process.differs = (
    "a loaded function whose custom gradient was not saved "
    "(`experimental_custom_gradients=False`), called in a fresh process")


def case_not_differentiable_twice(m):
    # TensorFlow: KeyError the second time (a re-run notebook cell); minitape accepts it
    registry = m.no_gradient if hasattr(m, "no_gradient") else m.NotDifferentiable
    registry("ConformanceNoGradientTwice")
    try:
        registry("ConformanceNoGradientTwice")
        return "accepted"
    except KeyError:
        return "KeyError"


case_not_differentiable_twice.differs = (
    "`NotDifferentiable` / `no_gradient` of an op type already declared not differentiable")


def case_grad_pass_through_jvp_in_a_function(m):
    @m.function
    def jvp(x):
        with m.autodiff.ForwardAccumulator(x, m.ones_like(x)) as acc:
            y = m.grad_pass_through(m.round)(x)
        return acc.jvp(y)
    return jvp(m.constant([2.3, 0.4]))


# TensorFlow's eager mode passes the tangent through ([1, 1]); its tf.function
# gives round's JVP ([0, 0]); minitape passes it through everywhere.
case_grad_pass_through_jvp_in_a_function.differs = (
    "`grad_pass_through` and `custom_gradient` under `ForwardAccumulator` inside a function")


def case_custom_gradient_jvp_in_a_function(m):
    @m.custom_gradient
    def clip_gradients(y):
        return y, lambda dy: m.clip_by_norm(dy, 0.5)

    traced = m.function(clip_gradients)
    x = m.constant(2.0)
    with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as acc:
        y = traced(x)
    return acc.jvp(y)  # TensorFlow: 0.0 (1.0 eagerly); minitape: 1.0


case_custom_gradient_jvp_in_a_function.differs = (
    "`grad_pass_through` and `custom_gradient` under `ForwardAccumulator` inside a function")


def case_batch_jacobian_unconnected(m):
    x, u = m.constant([[1.0, 2.0], [3.0, 4.0]]), m.constant([[1.0], [2.0]])
    with m.GradientTape() as tape:
        tape.watch([x, u])
        y = x * 2.0
    return tape.batch_jacobian(y, u)  # TensorFlow: zeros (2, 2, 1); minitape: None


case_batch_jacobian_unconnected.differs = (
    "`batch_jacobian` of a source the target does not depend on")


def case_batch_jacobian_rank_one_target(m):
    x = m.constant([[1.0, 2.0], [3.0, 4.0]])
    with m.GradientTape() as tape:
        tape.watch(x)
        loss = m.reduce_sum(x * x, axis=1)
    return tape.batch_jacobian(loss, x)  # TensorFlow: ValueError; minitape: 2 x


case_batch_jacobian_rank_one_target.differs = "`batch_jacobian` of a rank-1 target `(b,)`"


def _second_derivatives(m, f, values, dtype):
    """d2f/dx2 by nested tapes and by a ForwardAccumulator around the gradient."""
    x = m.constant(np.asarray(values, dtype))
    with m.GradientTape() as outer:
        outer.watch(x)
        with m.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
    nested = outer.gradient(g, x)
    with m.autodiff.ForwardAccumulator(x, m.ones_like(x)) as acc:
        with m.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        g = tape.gradient(y, x)
    return g, nested, acc.jvp(g)


def case_where_sqrt_second_derivative(m):
    # TensorFlow: gradient [0, 0, 0.25], second derivatives [nan, nan, -1/32] both
    # ways; minitape [0, 0, -1/32]
    return {dtype: _second_derivatives(m, lambda x: m.where(x > 0, m.sqrt(x), 0.0),
                                       [-1.0, 0.0, 4.0], dtype)
            for dtype in ("float32", "float64")}


case_where_sqrt_second_derivative.differs = (
    "second derivatives through the branch `where` did not pick")


def case_where_rsqrt_second_derivative(m):
    # TensorFlow: nan at -1 and 0, by nested tapes and forward-over-reverse; minitape 0
    # both ways (issue 30: its nested tapes gave nan, its forward-over-reverse 0)
    return {dtype: [_second_derivatives(m, lambda x: m.where(x > 0, f(x), 0.0),
                                        [-1.0, 0.0, 4.0], dtype)
                    for f in (m.math.rsqrt, m.math.reciprocal)]
            for dtype in ("float32", "float64")}


case_where_rsqrt_second_derivative.differs = (
    "second derivatives through the branch `where` did not pick")


def case_pow_negative_exponent_jvp_at_zero(m):
    # TensorFlow: JVP [nan, -0.25], gradient [-inf, -0.25]; minitape: both [-inf, -0.25]
    out = {}
    for dtype in ("float32", "float64"):
        x = m.constant(np.asarray([0.0, 2.0], dtype))
        for name, f in (("pow", lambda x: m.pow(x, -2.0)), ("**", lambda x: x ** -2),
                        ("1/x", lambda x: 1.0 / x)):
            with m.autodiff.ForwardAccumulator(x, m.ones_like(x)) as acc:
                y = f(x)
            with m.GradientTape() as tape:
                tape.watch(x)
                z = f(x)
            out[f"{dtype} {name}"] = (acc.jvp(y), tape.gradient(z, x))
    return out


case_pow_negative_exponent_jvp_at_zero.differs = "forward mode where a derivative is infinite"


def case_log_forward_over_reverse_at_zero(m):
    # TensorFlow: nested tapes -inf, forward-over-reverse nan; minitape -inf both
    return {dtype: _second_derivatives(m, m.math.log, [0.0, 2.0], dtype)
            for dtype in ("float32", "float64")}


case_log_forward_over_reverse_at_zero.differs = "forward mode where a derivative is infinite"


def case_products_overflowing_on_the_way(m):
    def gradient(f, values):
        x = m.constant(values)
        with m.GradientTape() as tape:
            tape.watch(x)
            y = m.reduce_sum(f(x))
        return tape.gradient(y, x)

    return (gradient(m.math.cumprod, [1e-30, 1e-30, 1e30]),
            gradient(m.reduce_prod, [1e-30, 1e-30, 1e30, 1e30]),
            gradient(m.linalg.expm, [[100.0, 0.0], [0.0, -100.0]]))


case_products_overflowing_on_the_way.differs = (
    "float32 gradients of products that overflow or underflow on the way")


def case_list_index(m):
    x = m.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
    return x[[0, 2]], x[[1]]  # TensorFlow: 3.0 and row 1; minitape: rows 0 and 2, and [row 1]


case_list_index.differs = "a Python list as an index, `x[[0, 2]]`"


def case_random_numbers_for_a_seed(m):
    m.random.set_seed(1)
    return m.random.uniform([3])  # TensorFlow: Philox's numbers; minitape: PCG64's


case_random_numbers_for_a_seed.differs = "the numbers `mt.random` draws for a seed"


def case_float32_subnormals(m):
    # scaled up after the fact, so the flushed value shows: 0 in TensorFlow
    return (m.exp(m.constant(-100.0)) * 1e30 * 1e14,  # minitape 3.78, TensorFlow 0
            m.constant(1e-30) * m.constant(1e-10) * 1e30 * 1e10)  # 1.0 and 0


# TensorFlow on the CPU flushes float32 subnormals to 0; minitape keeps NumPy's values
case_float32_subnormals.differs = "float32 numbers below 1.2e-38 (subnormals)"


def case_segment_jvp_where_a_segment_has_no_row(m):
    x = m.constant([[1.0, 2.0], [3.0, 1.0], [5.0, 6.0]])
    ids = m.constant([0, 0, 2])
    with m.autodiff.ForwardAccumulator(x, m.ones((3, 2))) as acc:
        ys = [m.math.segment_max(x, ids), m.math.segment_min(x, ids),
              m.math.segment_mean(x, ids)]
    # TensorFlow: NaN in row 1 of each; minitape: 0
    return [acc.jvp(y) for y in ys]


case_segment_jvp_where_a_segment_has_no_row.differs = (
    "the JVP of `segment_max`, `segment_min`, `segment_mean` where a segment has no row")


def case_tensor_scatter_nd_update_gradient_of_a_repeated_index(m):
    t = m.constant([[1.0, 2.0], [3.0, 4.0]])
    u = m.constant([10.0, 30.0, 7.0])
    with m.GradientTape() as tape:
        tape.watch(u)
        y = m.reduce_sum(m.tensor_scatter_nd_update(t, [[0, 1], [0, 1], [1, 0]], u))
    # TensorFlow: [1, 1, 1] (the overwritten 10 too); minitape [0, 1, 1]
    return tape.gradient(y, u)


case_tensor_scatter_nd_update_gradient_of_a_repeated_index.differs = (
    "the gradient of `tensor_scatter_nd_update` where an index repeats")


def case_nan_in_segment_max(m):
    ids = m.constant([0, 0])
    return (m.math.segment_max(m.constant([np.nan, 1.0]), ids),
            m.math.segment_min(m.constant([np.nan, 1.0]), ids))


case_nan_in_segment_max.differs = "NaN in `segment_max` and `segment_min`"


def case_segment_mean_of_integers(m):
    return m.math.segment_mean(m.constant([1, 2]), m.constant([0, 0]))


case_segment_mean_of_integers.differs = "`reduce_mean` of integers"
