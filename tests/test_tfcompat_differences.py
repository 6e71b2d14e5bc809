"""The README's table "Where minitape differs from TensorFlow", checked row by row.

Each row of the table has a test here that shows minitape's side of it, and the
first test makes sure the table and these tests list the same rows, so the
table cannot silently go stale: a new row needs a test, a fixed difference
needs its row removed.
"""
import os
import pathlib

import numpy as np
import pytest

import minitape as mt

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
SECTION = "### Where minitape differs from TensorFlow"

ROWS = [
    "registering a gradient for an op type twice",
    ("`jacobian` / `batch_jacobian` with `experimental_use_pfor=False` on a "
     "non-persistent tape"),
    "Python `if`/`for` and `.numpy()` inside `mt.function`",
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
    "`pad`'s `constant_values` of another dtype",
    "`mt.function(jit_compile=True)`",
    "`NotDifferentiable` / `no_gradient` of an op type already declared not differentiable",
    "a custom gradient registered by tracing an `mt.function`",
]


def _table_rows():
    text = README.read_text(encoding="utf-8")
    assert SECTION in text, f"README.md has no section {SECTION!r}"
    rows = []
    for line in text.split(SECTION, 1)[1].splitlines():
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


def test_declaring_an_op_type_not_differentiable_again_is_accepted():
    mt.no_gradient("MinitapeTestNoGradientTwice")
    mt.no_gradient("MinitapeTestNoGradientTwice")   # TensorFlow: KeyError (a re-run cell)
    mt.NotDifferentiable("MinitapeTestNoGradientTwice")
    with pytest.raises(KeyError, match="Registering two gradient with name 'Sin'"):
        mt.NotDifferentiable("Sin")                  # as TensorFlow: it has a gradient
