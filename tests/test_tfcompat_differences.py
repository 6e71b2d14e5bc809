"""The table "Where minitape differs from TensorFlow" (docs/differences.md), checked row by row.

Each row of the table has a test here that shows minitape's side of it, and the
first test makes sure the table and these tests list the same rows, so the
table cannot silently go stale: a new row needs a test, a fixed difference
needs its row removed.
"""
import os
import pathlib
import re

import numpy as np
import pytest

import minitape as mt

DIFFERENCES = pathlib.Path(__file__).resolve().parents[1] / "docs" / "differences.md"
SECTION = "# Where minitape differs from TensorFlow"

ROWS = [
    "registering a gradient for an op type twice",
    ("`jacobian` / `batch_jacobian` with `experimental_use_pfor=False` on a "
     "non-persistent tape"),
    "Python `if`/`for` and `.numpy()` inside `mt.function`",
    "`mt.cond`, `mt.while_loop`, `mt.map_fn`, `mt.scan` inside `mt.function`",
    "new primitive op types",
    "`reduce_mean` of integers",
    "printed names",
    "differentiating an op type with no gradient",
    "`recompute_grad` under `ForwardAccumulator`",
    "SavedModel files",
    "a `gradient` or `jacobian` call that fails inside a non-persistent tape's block",
    "`tape.watch` of a nest with something that is not a tensor",
    "`jacobian(..., experimental_direction=...)`",
    "invalid arguments (a bad shape, axis, size or dtype)",
    "a zero tangent meeting an infinite partial derivative in forward mode",
    "the gradient of `cumprod` where an entry is 0",
    ("ops whose result's shape depends on values (`where(condition)`, `boolean_mask`, "
     "`segment_sum`) inside `mt.function`"),
    "the order of NaNs in `sort`, `argsort`, `top_k`",
    "`variable == None`",
    "`x ** 0.5` at `x = -inf` inside a function",
    "`grad_pass_through` and `custom_gradient` under `ForwardAccumulator` inside a function",
    "`pad`'s `constant_values` of another dtype",
    "`mt.function(jit_compile=True)`",
    "`NotDifferentiable` / `no_gradient` of an op type already declared not differentiable",
    "a custom gradient registered by tracing an `mt.function`",
    ("a loaded function whose custom gradient was not saved "
     "(`experimental_custom_gradients=False`), called in a fresh process"),
    "Cholesky of a matrix that is not positive definite",
    "eigh and svd at repeated eigenvalues or singular values",
    "pinv's gradient at a rank-deficient matrix",
    "the gradient of `linalg.lstsq(..., fast=False)`",
    "`softsign`'s second derivative, Jacobian and JVP",
    "the second derivative of `reduce_prod` at a zero entry",
    "a `ForwardAccumulator` tangent whose shape is not its primal's",
    "`batch_jacobian` of a source the target does not depend on",
    "`batch_jacobian` of a rank-1 target `(b,)`",
    "second derivatives through the branch `where` did not pick",
    "forward mode where a derivative is infinite",
    "float32 gradients of products that overflow or underflow on the way",
    "a Python list as an index, `x[[0, 2]]`",
    "the numbers `mt.random` draws for a seed",
    "the derivatives of an integer result (`argsort`, `top_k`'s indices, a `cast` to integers)",
    ("second derivatives through the singular vectors of a complex matrix (`svd`'s `u` and "
     "`v`, the spectral norm `norm(z, ord=2, axis=[0, 1])` of a complex `z`)"),
    "float32 numbers below 1.2e-38 (subnormals)",
    "the JVP of `segment_max`, `segment_min`, `segment_mean` where a segment has no row",
    "the gradient of `tensor_scatter_nd_update` where an index repeats",
    "NaN in `segment_max` and `segment_min`",
]


def _table_rows():
    text = DIFFERENCES.read_text(encoding="utf-8")
    parts = re.split(rf"^{re.escape(SECTION)}$", text, maxsplit=1, flags=re.M)
    assert len(parts) == 2, f"docs/differences.md has no section {SECTION!r}"
    rows = []
    for line in parts[1].splitlines():
        if line.startswith(("## ", "### ")):
            break
        if line.startswith("| ") and not line.startswith("| ---"):
            rows.append(line.split(" | ")[0][2:].strip())
    assert rows[0] == "what"
    return rows[1:]


def test_the_table_lists_exactly_the_checked_differences():
    assert _table_rows() == ROWS


def test_registering_a_gradient_twice():
    # Running the same cell twice: the same function (module and qualified
    # name) is registered again, which TensorFlow refuses with a KeyError.
    for _ in range(2):
        @mt.RegisterGradient("DiffTwice")
        def _twice_grad(op, grad):
            return grad * 2.0

    @mt.primitive("DiffTwice")
    def twice(x):
        return 2.0 * x

    x = mt.constant(1.5)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = twice(x)
    assert float(tape.gradient(y, x)) == 2.0

    # A different function for the same type is refused, as in TensorFlow.
    with pytest.raises(KeyError, match="Registering two gradient with name 'DiffTwice'"):
        @mt.RegisterGradient("DiffTwice")
        def _another_grad(op, grad):
            return grad


@pytest.mark.parametrize("method", ["jacobian", "batch_jacobian"])
def test_loop_jacobians_on_a_non_persistent_tape(method):
    x = mt.constant([[1.0, 2.0], [3.0, 4.0]])
    with mt.GradientTape() as tape:   # TensorFlow: RuntimeError (needs persistent=True)
        tape.watch(x)
        y = x * x
    j = getattr(tape, method)(y, x, experimental_use_pfor=False)
    expected = {"jacobian": (2, 2, 2, 2), "batch_jacobian": (2, 2, 2)}[method]
    assert j.shape == expected
    if method == "batch_jacobian":
        np.testing.assert_array_equal(j.numpy(), [[[2, 0], [0, 4]], [[6, 0], [0, 8]]])


@pytest.mark.parametrize("jit", [False, True])
def test_python_control_flow_traces_again_for_each_value_it_read(jit):
    @mt.function(jit_compile=jit)
    def absolute(x):
        if x > 0:
            return x
        return -x

    assert float(absolute(mt.constant(1.0))) == 1.0
    # TensorFlow (AutoGraph): 1.0 from one trace; here the `if` read x's value,
    # so a new value of x traces again, and the answer is TensorFlow's.
    assert float(absolute(mt.constant(-1.0))) == 1.0
    assert absolute.experimental_get_tracing_count() == 2
    assert float(absolute(mt.constant(1.0))) == 1.0
    assert absolute.experimental_get_tracing_count() == 2


@pytest.mark.parametrize("jit", [False, True])
def test_functional_control_flow_in_a_function_is_python_control_flow(jit):
    # TensorFlow 2.21: one trace; at x = -2 the value 0, the gradient 0 and the JVP 0
    @mt.function(jit_compile=jit)
    def f(x):
        return mt.cond(x > 0, lambda: x * x, lambda: mt.constant(0.0))

    for value, expected in [(2.0, 4.0), (-2.0, None)]:
        x = mt.constant(value)
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        grad = tape.gradient(y, x)
        assert (None if grad is None else float(grad)) == expected
        with mt.autodiff.ForwardAccumulator(x, mt.constant(1.0)) as acc:
            y = f(x)
        jvp = acc.jvp(y)
        assert (None if jvp is None else float(jvp)) == expected
    assert f.experimental_get_tracing_count() == 2  # one per sign (TensorFlow: 1)

    @mt.function(jit_compile=jit)
    def doubled(x, n):
        return mt.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s * 2.0), (0, x))[1]

    assert float(doubled(mt.constant(1.0), mt.constant(3))) == 8.0
    assert float(doubled(mt.constant(1.0), mt.constant(5))) == 32.0
    assert doubled.experimental_get_tracing_count() == 2  # (TensorFlow: 1)


def test_a_variable_value_read_as_a_python_value_in_a_trace_raises():
    v = mt.Variable(1.0, name="threshold")

    @mt.function
    def f(x):
        return x if v > 0 else -x   # TensorFlow (AutoGraph): a graph cond

    with pytest.raises(ValueError, match="variable 'threshold:0'.*Python value"):
        f(mt.constant(2.0))


def test_new_primitive_op_types_from_numpy():
    @mt.primitive("DiffCube")
    def cube(x):
        assert isinstance(x, np.ndarray)
        return x ** 3

    @mt.RegisterGradient("DiffCube")
    def _cube_grad(op, grad):
        return grad * 3.0 * op.inputs[0] * op.inputs[0]

    x = mt.constant(2.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = cube(x)
    assert float(y) == 8.0 and float(tape.gradient(y, x)) == 12.0


def test_reduce_mean_of_integers_is_a_type_error():
    with pytest.raises(TypeError, match=r"reduce_mean.*int32.*mt\.cast"):
        mt.reduce_mean(mt.constant([1, 2]))
    assert float(mt.reduce_mean(mt.cast(mt.constant([1, 2]), mt.float32))) == 1.5


def test_printed_names():
    t = mt.constant(1.0)
    assert str(t) == "mt.Tensor(1.0, shape=(), dtype=float32)"
    assert repr(t) == "<mt.Tensor: shape=(), dtype=float32, numpy=1.0>"
    assert type(mt.Variable(1.0)).__name__ == "Variable"
    assert type(mt.Variable(1.0) + 1.0).__name__ == "Tensor"


def test_the_lookup_error_names_the_operation():
    @mt.primitive("DiffNoGrad")
    def no_grad(x):
        return x + 1.0

    x = mt.constant(1.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = no_grad(x)
    with pytest.raises(LookupError) as info:
        tape.gradient(y, x)
    assert str(info.value) == ("No gradient defined for operation 'DiffNoGrad' "
                               "(op type: DiffNoGrad)")


def test_recompute_grad_works_in_forward_mode():
    x = mt.constant(2.0)
    with mt.autodiff.ForwardAccumulator(x, mt.constant(1.0)) as acc:
        y = mt.recompute_grad(lambda t: t * t * t)(x)
    assert float(acc.jvp(y)) == 12.0   # TensorFlow: NotImplementedError


def test_saved_model_files_are_json_and_npz(tmp_path):
    class Doubler(mt.Module):
        def __init__(self):
            super().__init__()
            self.w = mt.Variable(2.0)

        @mt.function(input_signature=[mt.TensorSpec([])])
        def __call__(self, x):
            return x * self.w

    mt.saved_model.save(Doubler(), str(tmp_path))
    names = sorted(os.listdir(tmp_path))
    assert "saved_model.json" in names and "variables.npz" in names
    assert "saved_model.pb" not in names
    assert float(mt.saved_model.load(str(tmp_path))(mt.constant(3.0))) == 6.0


@pytest.mark.parametrize("method", ["gradient", "jacobian"])
def test_a_failed_call_leaves_a_one_shot_tape_recording(method):
    @mt.custom_gradient
    def broken(v):
        def grad(dy):
            raise ArithmeticError("broken gradient")
        return v * 1.0, grad

    x = mt.constant([1.0, 2.0])
    with mt.GradientTape() as tape:  # TensorFlow: the tape stops recording at the call
        tape.watch(x)
        y = broken(x)
        with pytest.raises(ArithmeticError):
            getattr(tape, method)(y, x)
        z = x * 3.0  # still recorded
    assert tape.operations[-1].outputs[0] is z
    np.testing.assert_array_equal(tape.gradient(z, x).numpy(), [3.0, 3.0])


def test_watch_of_a_bad_nest_watches_nothing():
    x = mt.constant(1.0)
    with mt.GradientTape() as tape:  # TensorFlow watches x, then raises
        with pytest.raises(ValueError):
            tape.watch([x, "not a tensor"])
        y = x * 2.0
    assert tape.gradient(y, x) is None


def test_jacobian_direction_auto_forward_and_reverse_agree():
    rng = np.random.default_rng(0)
    x = mt.constant(rng.standard_normal(3))
    w = mt.constant(rng.standard_normal((40, 3)))
    with mt.GradientTape(persistent=True) as tape:  # TensorFlow: reverse mode only
        tape.watch(x)
        y = mt.tanh(mt.reshape(w @ mt.reshape(x, (3, 1)), (40,)))
    j = {d: tape.jacobian(y, x, experimental_direction=d).numpy()
         for d in ["auto", "forward", "reverse"]}
    np.testing.assert_allclose(j["auto"], j["reverse"], rtol=1e-12)
    np.testing.assert_allclose(j["forward"], j["reverse"], rtol=1e-12)


def test_invalid_arguments_are_value_or_type_errors():
    # tests/test_bad_arguments.py has one row per op, argument and wrong kind.
    x = mt.ones([2, 3])
    with pytest.raises(ValueError, match="reduce_mean: axis"):
        mt.reduce_mean(x, axis=[0, 0])
    with pytest.raises(TypeError, match="reshape: shape entry 0 must be an integer"):
        mt.reshape(x, (2.5, 2))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the 0 * inf that is masked
def test_a_zero_tangent_contributes_nothing_in_forward_mode():
    # tests/test_forward_reverse_finite.py compares both directions.
    x0, x1 = mt.constant(2.0), mt.constant(3.0)
    with mt.autodiff.ForwardAccumulator([x0, x1], [mt.constant(1.0),
                                                   mt.constant(0.0)]) as acc:
        y = x0 * 1.0 + x1 * np.float32(np.inf)
    assert float(acc.jvp(y)) == 1.0


def test_matmul_and_einsum_drop_zero_tangent_products_in_both_directions():
    # TensorFlow 2.21: forward [[nan]] and Jacobian rows [[1, nan], [0, inf]]
    x = mt.constant([[2.0, 3.0]])
    b = mt.constant([[1.0], [np.inf]])
    xs, c = mt.constant([2.0, 3.0]), mt.constant([[1.0, 0.0], [0.0, np.inf]])
    with np.errstate(invalid="ignore"):
        with mt.autodiff.ForwardAccumulator(x, mt.constant([[1.0, 0.0]])) as acc:
            y = mt.matmul(x, b)
        assert acc.jvp(y).numpy().tolist() == [[1.0]]
        with mt.GradientTape(persistent=True) as tape:
            tape.watch(xs)
            ys = mt.matmul(c, mt.reshape(xs, [2, 1]))[:, 0]
            ye = mt.einsum("ij,j->i", c, xs)
        for y in (ys, ye):
            for direction in ("forward", "reverse"):
                jac = tape.jacobian(y, xs, experimental_direction=direction).numpy()
                assert jac.tolist() == [[1.0, 0.0], [0.0, np.inf]]


def test_grad_pass_through_passes_the_tangent_through_everywhere():
    # TensorFlow 2.21: [1, 1] eagerly, [0, 0] (round's JVP) in a tf.function
    def f(x):
        with mt.autodiff.ForwardAccumulator(x, mt.ones_like(x)) as acc:
            y = mt.grad_pass_through(mt.round)(x)
        return acc.jvp(y)
    x = mt.constant([2.3, 0.4])
    for g in (f, mt.function(f), mt.function(f, jit_compile=True)):
        assert g(x).numpy().tolist() == [1.0, 1.0]


def test_a_custom_gradients_jvp_is_the_forward_computations_everywhere():
    # TensorFlow 2.21: the guide's clip_gradients under a ForwardAccumulator gives 1.0
    # eagerly, and 0.0 when it is a tf.function called under the accumulator; the
    # function is the identity, so 1.0
    @mt.custom_gradient
    def clip_gradients(y):
        return y, lambda dy: mt.clip_by_norm(dy, 0.5)

    x = mt.constant(2.0)
    for g in (clip_gradients, mt.function(clip_gradients),
              mt.function(clip_gradients, jit_compile=True)):
        with mt.autodiff.ForwardAccumulator(x, mt.constant(1.0)) as acc:
            y = g(x)
        assert float(acc.jvp(y)) == 1.0


def test_float32_subnormals_are_kept():
    # TensorFlow 2.21 on the CPU: exp(-100.) is 0.0 and 1e-30 * 1e-10 is 0.0
    assert float(mt.exp(mt.constant(-100.0))) == float(np.exp(np.float32(-100.0))) > 0
    assert float(mt.constant(1e-30) * mt.constant(1e-10)) == float(
        np.float32(1e-30) * np.float32(1e-10)) > 0


def test_a_variable_compared_with_none_is_false():
    v = mt.Variable([1.0, 2.0])
    assert (v == None) is False and (v != None) is True  # noqa: E711
    assert None not in [v, mt.Variable(3.0)]


@pytest.mark.parametrize("jit", [False, True])
def test_minus_inf_to_the_half_is_inf_in_functions(jit):
    f = mt.function(lambda x: mt.reduce_sum(x) ** 0.5, jit_compile=jit)
    with np.errstate(invalid="ignore"):
        assert float(f(mt.constant([-np.inf, 1.0]))) == np.inf


def test_pad_converts_a_constant_of_another_dtype():
    x = mt.constant([1.0], dtype=mt.float64)
    padded = mt.pad(x, [[1, 0]], constant_values=mt.constant(2.0))  # a float32 scalar
    assert padded.dtype == np.float64 and padded.numpy().tolist() == [2.0, 1.0]
    with pytest.raises(TypeError, match="pad: constant_values 1.5"):
        mt.pad(mt.constant([1]), [[1, 0]], constant_values=1.5)

def test_jit_compile_writes_python_not_hlo():
    f = mt.function(lambda x: mt.sin(x) * x, jit_compile=True)
    x = mt.constant(1.0)
    ir = f.experimental_get_compiler_ir(x)
    assert "np.sin(x)" in ir() and ir(stage="python") == ir()
    assert "Sin(t0)" in ir(stage="graph")
    with pytest.raises(ValueError, match="stage"):
        ir(stage="hlo")


def test_a_traced_custom_gradient_lives_as_long_as_its_function():
    import gc

    @mt.custom_gradient
    def double_gradient(y):
        return y, lambda dy: 2.0 * dy

    class Model(mt.Module):
        @mt.function(input_signature=[mt.TensorSpec(None)])
        def __call__(self, x):
            return double_gradient(x)

    model = Model()
    # str(): the key object itself owns the registration, so keep only its text
    key = str(model.__call__.get_concrete_function().graph.nodes[0].attrs["gradient"])
    assert mt.registry.is_registered(key)  # TensorFlow: registered for good
    del model
    gc.collect()
    assert not mt.registry.is_registered(key)



def test_a_loaded_function_without_its_gradient_fails_at_tape_gradient(tmp_path):
    """In a fresh process, TensorFlow raises the LookupError at the call under
    the tape (and under a ForwardAccumulator); minitape's call runs, the error
    comes at tape.gradient, and forward mode gives the identity's JVP."""
    import json
    import subprocess
    import sys

    @mt.custom_gradient
    def clip_gradients(y):
        return y, lambda dy: mt.clip_by_norm(dy, 0.5)

    class MyModule(mt.Module):
        @mt.function(input_signature=[mt.TensorSpec(None)])
        def call_custom_grad(self, x):
            return clip_gradients(x)

    mt.saved_model.save(MyModule(), str(tmp_path), options=mt.saved_model.SaveOptions(
        experimental_custom_gradients=False))
    code = f"""
import json
import minitape as mt
loaded = mt.saved_model.load({str(tmp_path)!r})
v = mt.Variable(2.0)
steps = []
with mt.GradientTape() as t:
    output = loaded.call_custom_grad(v * v)
steps.append(float(output))
try:
    t.gradient(output, v)
except LookupError as error:
    steps.append(str(error))
x = mt.constant(3.0)
with mt.autodiff.ForwardAccumulator(x, mt.constant(1.0)) as acc:
    y = loaded.call_custom_grad(x)
steps.append(float(acc.jvp(y)))
print(json.dumps(steps))
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [
        4.0, "No gradient defined for operation 'IdentityN' (op type: IdentityN)", 1.0]

def test_cumprod_gradient_at_a_zero_is_the_true_one():
    x = mt.constant([2.0, 0.0, 3.0])
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.reduce_sum(mt.math.cumprod(x))
    assert tape.gradient(y, x).numpy().tolist() == [1.0, 8.0, 0.0]  # TensorFlow: [1, 0, 0]
    with mt.autodiff.ForwardAccumulator(x, mt.ones([3])) as acc:
        y = mt.math.cumprod(x)
    assert acc.jvp(y).numpy().tolist() == [1.0, 2.0, 6.0]  # TensorFlow: [1, 0, 0]


def test_value_shaped_results_keep_their_traced_shape():
    f = mt.function(lambda x: mt.reduce_sum(mt.boolean_mask(x, x > 0)))
    assert float(f(mt.constant([1.0, -2.0, 3.0]))) == 4.0
    assert float(f(mt.constant([5.0, 2.0, -3.0]))) == 7.0  # two entries again: fine
    with pytest.raises(ValueError, match="where: in this traced function the result had "
                                         r"shape \(2, 1\), now \(1, 1\)"):
        f(mt.constant([1.0, -2.0, -3.0]))  # TensorFlow: 1.0


def test_nans_sort_as_in_numpy():
    x = mt.constant([1.0, np.nan, 0.0])
    assert np.isnan(mt.sort(x).numpy()[2]) and np.isnan(
        mt.sort(x, direction="DESCENDING").numpy()[0])
    assert mt.argsort(x).numpy().tolist() == [2, 0, 1]
def test_cholesky_of_a_matrix_that_is_not_positive_definite_raises():
    # TensorFlow returns NaNs; minitape names the op and the shape
    with pytest.raises(np.linalg.LinAlgError, match=r"linalg.cholesky.*\(2, 2\).*positive"):
        mt.linalg.cholesky(mt.constant([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(np.linalg.LinAlgError, match="cholesky"):
        mt.linalg.logdet(mt.constant([[1.0, 2.0], [2.0, 1.0]]))


def test_repeated_eigenvalues_give_nan_where_the_derivative_does_not_exist():
    # TensorFlow gives [[0, 0], [0, 0]] for `depends`, and [[1, 0], [0, 1]] for
    # `invariant` (V diag(e) V^T is x's symmetric matrix again, whose gradient
    # is [[1, 0], [2, 1]]: TensorFlow's _SafeReciprocal drops the off-diagonal)
    x = mt.eye(2, dtype=mt.float64)
    w = mt.constant([[1.0, 2.0], [0.0, 1.0]], dtype=mt.float64)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        e, v = mt.linalg.eigh(x)
        depends = mt.reduce_sum(v * w)
        invariant = mt.reduce_sum(mt.matmul(v * e, v, transpose_b=True) * w)
        values_only = mt.reduce_sum(e * mt.constant([1.0, 3.0], dtype=mt.float64))
        s, u, vs = mt.linalg.svd(x)
        singular = mt.reduce_sum(mt.matmul(u * s, vs, transpose_b=True) * w)
        singular_values = mt.reduce_sum(s)
    for loss in (depends, invariant, singular):
        assert np.isnan(tape.gradient(loss, x).numpy()).any()
    # tied eigenvalues weighed unequally (TensorFlow: diag(1, 3)) have no
    # derivative; their sum does (TensorFlow's too: the identity)
    assert np.isnan(tape.gradient(values_only, x).numpy()[np.tril_indices(2)]).all()
    np.testing.assert_allclose(tape.gradient(singular_values, x).numpy(), np.eye(2))


def test_pinv_gradient_at_a_rank_deficient_matrix_is_nan():
    # TensorFlow: [[0.0048, -0.0144], [-0.0144, -0.0768]]
    x = mt.constant([[1.0, 2.0], [2.0, 4.0]], dtype=mt.float64)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.linalg.pinv(x)
    np.testing.assert_allclose(y.numpy(), [[0.04, 0.08], [0.08, 0.16]])
    assert np.isnan(tape.gradient(y, x).numpy()).all()


def test_lstsq_with_fast_false_has_a_gradient():
    # TensorFlow: ValueError "Gradient not defined for fast=False"
    a = mt.constant([[1.0, 0.0], [1.0, 2.0], [0.0, 1.0]], dtype=mt.float64)
    b = mt.ones((3, 1), dtype=mt.float64)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(a)
        slow = mt.linalg.lstsq(a, b, fast=False)
        fast = mt.linalg.lstsq(a, b)
    np.testing.assert_allclose(slow, [[2 / 3], [1 / 3]])
    np.testing.assert_allclose(tape.gradient(slow, a), tape.gradient(fast, a), atol=1e-15)
def test_softsign_has_every_derivative():
    # TensorFlow 2.21: tf.nn.softsign's second derivative, tape.jacobian and JVP
    # raise LookupError (no gradient for SoftsignGrad). softsign'(x) = 1/(1+|x|)^2,
    # softsign''(x) = -2 sign(x)/(1+|x|)^3.
    x = mt.constant([0.5, -2.0], dtype=mt.float64)
    with mt.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with mt.GradientTape() as inner:
            inner.watch(x)
            y = mt.nn.softsign(x)
        g = inner.gradient(y, x)
    np.testing.assert_allclose(outer.gradient(g, x).numpy(), [-2 / 1.5 ** 3, 2 / 27])
    np.testing.assert_allclose(outer.jacobian(y, x).numpy(), np.diag([1 / 2.25, 1 / 9]))
    with mt.autodiff.ForwardAccumulator(x, mt.constant([1.0, 1.0], dtype=mt.float64)) as acc:
        y = mt.nn.softsign(x)
    np.testing.assert_allclose(acc.jvp(y).numpy(), [1 / 2.25, 1 / 9])
def test_the_hessian_of_reduce_prod_at_a_zero_entry_is_exact():
    # TensorFlow: [[0, 3, 2], [0, 0, 0], [0, 0, 0]] (tests/conformance measures it)
    x = mt.constant([0.0, 2.0, 3.0], dtype=mt.float64)
    with mt.GradientTape() as outer:
        outer.watch(x)
        with mt.GradientTape() as inner:
            inner.watch(x)
            y = mt.reduce_prod(x)
        g = inner.gradient(y, x)
    np.testing.assert_array_equal(outer.jacobian(g, x).numpy(),
                                  [[0, 3, 2], [3, 0, 0], [2, 0, 0]])


def test_a_tangent_of_another_shape_is_a_value_error():
    # TensorFlow broadcasts the tangent [1.] to [1., 1.]
    with pytest.raises(ValueError, match=r"\(1,\).*\(2,\)"):
        mt.autodiff.ForwardAccumulator(mt.constant([1.0, 2.0]), mt.constant([1.0]))


def test_declaring_an_op_type_not_differentiable_again_is_accepted():
    mt.no_gradient("MinitapeTestNoGradientTwice")
    mt.no_gradient("MinitapeTestNoGradientTwice")   # TensorFlow: KeyError (a re-run cell)
    mt.NotDifferentiable("MinitapeTestNoGradientTwice")
    with pytest.raises(KeyError, match="Registering two gradient with name 'Sin'"):
        mt.NotDifferentiable("Sin")                  # as TensorFlow: it has a gradient


def test_batch_jacobian_of_an_unconnected_source_is_none_as_for_jacobian():
    # TensorFlow 2.21 gives zeros of shape (4, 3, 2) here, even with the default NONE
    x, u = mt.constant(np.ones((4, 3), np.float32)), mt.constant(np.ones((4, 2), np.float32))
    with mt.GradientTape(persistent=True) as tape:
        tape.watch([x, u])
        y = x * 2.0
    assert tape.batch_jacobian(y, u) is None
    assert tape.jacobian(y, u) is None
    zeros = tape.batch_jacobian(y, u, unconnected_gradients=mt.UnconnectedGradients.ZERO)
    assert zeros.shape == (4, 3, 2) and not zeros.numpy().any()


def test_batch_jacobian_of_a_rank_one_target_gives_each_examples_derivatives():
    # TensorFlow 2.21: ValueError: Shape (4,) must have rank at least 2
    x = mt.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    with mt.GradientTape() as tape:
        tape.watch(x)
        loss = mt.reduce_sum(x * x, axis=1)  # one number per example
    j = tape.batch_jacobian(loss, x)
    np.testing.assert_array_equal(j.numpy(), 2 * x.numpy())  # d(sum x_bi^2)/dx_bj


def _second_derivatives(f, x):
    """The second derivative of f at x by nested tapes, and by a ForwardAccumulator
    around the gradient (forward-over-reverse), along ones."""
    with mt.GradientTape() as outer:
        outer.watch(x)
        with mt.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
    nested = outer.gradient(g, x)
    with mt.autodiff.ForwardAccumulator(x, mt.ones_like(x)) as acc:
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        g = tape.gradient(y, x)
    return g, nested, acc.jvp(g)


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
def test_second_derivatives_through_the_branch_where_did_not_pick_are_zero(dtype):
    # TensorFlow 2.21: [nan, nan] at [-1., 0.] both ways (SqrtGrad's gradient is
    # not masked); the gradient itself is 0 there on both
    x = mt.constant([-1.0, 0.0, 4.0], dtype=dtype)
    for f in (lambda x: mt.where(x > 0, mt.sqrt(x), 0.0),
              lambda x: mt.where(x > 0, mt.pow(x, 0.5), 0.0)):
        g, nested, forward = _second_derivatives(f, x)
        np.testing.assert_array_equal(g.numpy(), [0, 0, 0.25])
        np.testing.assert_array_equal(nested.numpy(), [0, 0, -1 / 32])
        np.testing.assert_array_equal(forward.numpy(), [0, 0, -1 / 32])
    for f in (mt.math.rsqrt, mt.math.reciprocal):   # TensorFlow: NaN forward-over-reverse
        _, _, forward = _second_derivatives(lambda x: mt.where(x > 0, f(x), 0.0), x)
        np.testing.assert_array_equal(forward.numpy()[:2], [0, 0])
    # log's gradient at 0 is NaN on both (its rule is not masked, as in TensorFlow),
    # and so is its second derivative here (TensorFlow: 0)
    g, nested, _ = _second_derivatives(lambda x: mt.where(x > 0, mt.math.log(x), 0.0), x)
    assert np.isnan(g.numpy()[1]) and np.isnan(nested.numpy()[1])


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
def test_forward_mode_where_a_derivative_is_infinite_agrees_with_reverse_mode(dtype):
    # TensorFlow 2.21: the JVP is [nan, -0.25] (the exponent's zero tangent times
    # inf * 0), while its gradient is [-inf, -0.25]
    x = mt.constant([0.0, 2.0], dtype=dtype)
    for f in (lambda x: mt.pow(x, -2.0), lambda x: x ** -2):
        with mt.autodiff.ForwardAccumulator(x, mt.ones_like(x)) as acc:
            y = f(x)
        with mt.GradientTape() as tape:
            tape.watch(x)
            z = f(x)
        np.testing.assert_array_equal(acc.jvp(y).numpy(), [-np.inf, -0.25])
        np.testing.assert_array_equal(tape.gradient(z, x).numpy(), [-np.inf, -0.25])
    with mt.autodiff.ForwardAccumulator(x, mt.ones_like(x)) as acc:
        y = 1.0 / x
    np.testing.assert_array_equal(acc.jvp(y).numpy(), [-np.inf, -0.25])  # TensorFlow: nan
    # forward-over-reverse gives what nested tapes give (TensorFlow: nan at 0)
    for f, expected in ((mt.math.log, [-np.inf, -0.25]), (lambda x: mt.pow(x, 0.5), None),
                        (lambda x: 1.0 / x, [np.inf, 0.25])):
        _, nested, forward = _second_derivatives(f, x)
        np.testing.assert_array_equal(forward.numpy(), nested.numpy())
        if expected is not None:
            np.testing.assert_array_equal(forward.numpy(), expected)
    assert _second_derivatives(lambda x: mt.pow(x, 0.5), x)[2].numpy()[0] == -np.inf


def test_the_numbers_for_a_seed_are_numpys_pcg64s_eagerly_traced_and_compiled():
    # TensorFlow 2.21: Philox numbers, and under jit_compile=True XLA ignores
    # the seeds; minitape: PCG64's, the same in a compiled function.
    mt.random.set_seed(1)
    expected = np.random.Generator(np.random.PCG64(1)).random(3, dtype=np.float32)
    np.testing.assert_array_equal(mt.random.uniform([3]).numpy(), expected)
    draws = []
    for jit in (False, True):
        mt.random.set_seed(1)
        f = mt.function(lambda: mt.random.uniform([3]), jit_compile=jit)
        draws.append([f().numpy(), f().numpy()])
    np.testing.assert_array_equal(draws[0], draws[1])
    assert not np.array_equal(draws[0][0], draws[0][1])  # new numbers at each call


def test_a_python_list_index_selects_as_in_numpy():
    # TensorFlow 2.21 reads a list as a tuple: x[[0, 2]] is x[0, 2] = 3.0 and
    # x[[1]] is row 1, shape (3,); minitape follows NumPy
    values = np.arange(1.0, 10.0, dtype=np.float32).reshape(3, 3)
    x = mt.constant(values)
    np.testing.assert_array_equal(x[[0, 2]].numpy(), values[[0, 2]])
    assert x[[0, 2]].shape == (2, 3) and x[[1]].shape == (1, 3)
    assert float(x[0, 2]) == 3.0  # a tuple: one number, as in TensorFlow
    np.testing.assert_array_equal(mt.gather(x, [0, 2]).numpy(), values[[0, 2]])
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.reduce_sum(x[[0, 2, 2]])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[1] * 3, [0] * 3, [2] * 3])


def test_float32_products_that_overflow_on_the_way_keep_their_true_gradients():
    # TensorFlow 2.21: [1, 0, 0], [inf, inf, 0, 0] and all NaN
    def gradient(f, values):
        x = mt.constant(np.array(values, np.float32))
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = mt.reduce_sum(f(x))
        return tape.gradient(y, x).numpy()

    np.testing.assert_array_equal(gradient(mt.math.cumprod, [1e-30, 1e-30, 1e30]), [2, 1, 0])
    np.testing.assert_allclose(gradient(mt.reduce_prod, [1e-30, 1e-30, 1e30, 1e30]),
                               [1e30, 1e30, 0, 0], rtol=1e-6)
    with np.errstate(over="ignore"):
        e = gradient(mt.linalg.expm, [[100.0, 0.0], [0.0, -100.0]])
    assert np.isposinf(e[0]).all() and np.isposinf(e[1, 0])
    assert 0 < e[1, 1] < 1e-40  # exp(-100) and the rest: no NaN anywhere


def test_a_branch_that_returns_a_constant_has_no_gradient_as_eagerly():
    # TensorFlow's AutoGraph makes a cond: gradient and JVP 0 for x = -2.
    def f(x):
        if x > 0:
            return x * x
        return 0.0

    x = mt.constant(-2.0)
    for run in (f, mt.function(f)):
        with mt.GradientTape() as tape:
            tape.watch(x)
            with mt.autodiff.ForwardAccumulator(x, mt.constant(1.0)) as acc:
                y = mt.convert_to_tensor(run(x))
        assert float(y) == 0.0 and tape.gradient(y, x) is None and acc.jvp(y) is None
        assert float(acc.jvp(y, unconnected_gradients=mt.UnconnectedGradients.ZERO)) == 0.0


def test_an_integer_result_has_no_derivative():
    # TensorFlow: gradient zeros for argsort and top_k's indices, None for a
    # cast; jacobian None; batch_jacobian int32 zeros.
    x = mt.constant([3.0, 1.0, 2.0])
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        order, top = mt.argsort(x), mt.math.top_k(x, 2).indices
        whole = mt.cast(x, mt.int32)
    for y in (order, top, whole):
        with pytest.warns(UserWarning, match="target 0 must be floating"):
            assert tape.gradient(y, x) is None
        with pytest.warns(UserWarning, match="target 0 must be floating"):
            zeros = tape.gradient(y, x, unconnected_gradients=mt.UnconnectedGradients.ZERO)
        np.testing.assert_array_equal(zeros.numpy(), [0.0, 0.0, 0.0])
        with pytest.raises(TypeError, match="use mt.cast"):
            tape.jacobian(y, x)


def test_complex_singular_vectors_have_second_derivatives_of_finite_differences():
    # TensorFlow's second derivative of the spectral norm of this complex
    # matrix, along Re + i Im of the gradient, is off by up to 0.05.
    z0 = np.array([[1 + 2j, -0.5 + 0.25j], [0.3 - 1j, 2.0 + 0.5j], [-0.7 + 0.2j, 0.4 - 0.9j]])

    def gradient(z):
        z = mt.convert_to_tensor(z)
        with mt.GradientTape() as tape:
            tape.watch(z)
            n = mt.norm(z, ord=2, axis=[0, 1])
        return tape.gradient(n, z)

    z = mt.constant(z0)
    with mt.GradientTape() as tape:
        tape.watch(z)
        g = gradient(z)
        s = mt.reduce_sum(0.7 * mt.math.real(g) + 0.3 * mt.math.imag(g))
    second = tape.gradient(s, z).numpy()

    def s_of(z):
        g = gradient(z).numpy()
        return float(np.sum(0.7 * g.real + 0.3 * g.imag))

    eps, expected = 1e-6, np.zeros(z0.shape, complex)
    for k in np.ndindex(z0.shape):
        e = np.zeros(z0.shape, complex)
        e[k] = eps
        expected[k] = ((s_of(z0 + e) - s_of(z0 - e)) + 1j * (s_of(z0 + 1j * e)
                                                               - s_of(z0 - 1j * e))) / (2 * eps)
    np.testing.assert_allclose(second, expected, atol=1e-7)


def test_segment_jvps_are_zero_where_a_segment_has_no_row():
    # TensorFlow 2.21: NaN in row 1 of each JVP
    x = mt.constant([[1.0, 2.0], [3.0, 1.0], [5.0, 6.0]])
    ids = mt.constant([0, 0, 2])
    for fn in (mt.math.segment_max, mt.math.segment_min, mt.math.segment_mean):
        with mt.autodiff.ForwardAccumulator(x, mt.ones((3, 2))) as acc:
            y = fn(x, ids)
        jvp = acc.jvp(y).numpy()
        np.testing.assert_array_equal(jvp[1], [0.0, 0.0])
        assert np.isfinite(jvp).all()
    with pytest.raises(TypeError, match="segment_mean.*integer mean"):
        mt.math.segment_mean(mt.constant([1, 2]), mt.constant([0, 0]))


def test_tensor_scatter_nd_update_gives_no_gradient_to_an_overwritten_update():
    # TensorFlow 2.21: [1, 1, 1]
    t = mt.constant([[1.0, 2.0], [3.0, 4.0]])
    u = mt.constant([10.0, 30.0, 7.0])
    with mt.GradientTape() as tape:
        tape.watch(u)
        y = mt.tensor_scatter_nd_update(t, [[0, 1], [0, 1], [1, 0]], u)
        total = mt.reduce_sum(y)
    np.testing.assert_array_equal(y.numpy(), [[1.0, 30.0], [7.0, 4.0]])  # the last one kept
    np.testing.assert_array_equal(tape.gradient(total, u).numpy(), [0.0, 1.0, 1.0])


def test_nan_in_segment_max_and_min_whatever_the_order():
    # TensorFlow 2.21: segment_max([1, nan]) is nan, segment_max([nan, 1]) is 1
    ids = mt.constant([0, 0])
    for values in ([1.0, np.nan], [np.nan, 1.0]):
        assert np.isnan(mt.math.segment_max(mt.constant(values), ids).numpy()).all()
        assert np.isnan(mt.math.segment_min(mt.constant(values), ids).numpy()).all()
