"""What the course's notebooks say about TensorFlow, run under TensorFlow.

A notebook cannot run TensorFlow (the course installs minitape alone), so a
sentence like "TensorFlow answers None here too" is checked here, one test
per sentence, each quoting the notebook. The minitape half of the sentence is
checked by a cell of the notebook itself. Skipped when TensorFlow is not
installed; CI runs it in the TensorFlow environment (.ci/run), where
MINITAPE_REQUIRE_TF=1 makes a missing TensorFlow a failure.
"""
import inspect
import os
from pathlib import Path

import numpy as np
import pytest

from .harness import quiet, setup_tensorflow_env

setup_tensorflow_env()
if os.environ.get("MINITAPE_REQUIRE_TF"):
    import tensorflow as tf
else:
    tf = pytest.importorskip("tensorflow")

quiet(tf)


def test_00_eager_tensors_have_no_name():
    """00b_how_a_tape_works: "TensorFlow's eager tensors have no names at all"
    (asking for one raises an error)."""
    with pytest.raises(AttributeError, match="eager execution"):
        tf.constant(3.0).name


def test_00_the_tape_walks_by_usage_counts():
    """00a_build_a_tape: "Usage counts (TensorFlow's `tape.h` and minitape's
    `backward.py` do this)"; 00b_how_a_tape_works: "minitape, like TensorFlow's
    tape, derives the order from usage counts"."""
    header = Path(tf.__file__).parent / "include" / "tensorflow" / "c" / "eager" / "tape.h"
    if not header.exists():
        pytest.skip("this TensorFlow wheel ships no C++ headers")
    text = header.read_text(encoding="utf-8")
    assert "tensor_usage_counts" in text and "op_missing_tensor" in text


def test_01_a_variable_value_is_named_name_colon_zero():
    """01_controlling_recording: "listed as `x:0`: TensorFlow's name for a
    variable's value"."""
    assert tf.Variable(2.0, name="x").name == "x:0"


def test_01_reset_forgets_watches():
    """01_controlling_recording: "`reset` forgets watches too"."""
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        t.reset()
        y = x * x
    assert t.gradient(y, x) is None


def test_02_round_has_no_gradient():
    """02_stop_gradient: "`mt.round` is not differentiable at all" (as `tf.round`)."""
    x = tf.constant([0.3, 1.7])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.round(x)
    assert t.gradient(y, x) is None


def _clip_gradients():
    @tf.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tf.clip_by_norm(dy, 0.5)
        return y, backward
    return clip_gradients


def test_03_custom_gradient_in_a_graph_goes_through_identity_n():
    """03_custom_gradients: "inside a `tf.function` graph, `tf.custom_gradient`
    routes the outputs through one [`IdentityN`]"."""
    clip_gradients = _clip_gradients()

    @tf.function
    def f(v):
        return clip_gradients(v * v)

    graph = f.get_concrete_function(tf.TensorSpec([], tf.float32)).graph
    assert [op.type for op in graph.get_operations()].count("IdentityN") == 1


def test_03_custom_gradient_eagerly_records_one_op_named_after_the_function():
    """03_custom_gradients: "Run eagerly, TensorFlow puts no `IdentityN` on its
    tape: it records one operation named after your function, whose gradient
    is your function"."""
    from tensorflow.python.ops import custom_gradient
    source = inspect.getsource(custom_gradient._eager_mode_decorator)
    assert "record_operation(" in source and "f.__name__" in source
    assert "identity_n" not in source.lower()


def test_03_custom_gradient_body_is_recorded():
    """03_custom_gradients: "TensorFlow's `custom_gradient` runs the body with
    the tapes recording, too": a gradient that uses a value the body computed
    differentiates again through it."""
    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(-tf.abs(x))
        value = tf.maximum(x, 0.0) + tf.math.log(1.0 + e)

        def grad(upstream):
            return upstream * tf.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
        return value, grad

    x = tf.constant(0.5, tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = log1pexp(x)
        dy = inner.gradient(y, x)
    s = 1 / (1 + np.exp(-0.5))
    np.testing.assert_allclose(float(outer.gradient(dy, x)), s * (1 - s), rtol=1e-12)


def test_03_eager_message_for_a_missing_gradient():
    """03_custom_gradients: "eager TensorFlow says `gradient registry has no
    entry for: MySquare`"; Bucketize is an op with no gradient."""
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.raw_ops.Bucketize(input=x, boundaries=[1.5])
    with pytest.raises(LookupError, match="gradient registry has no entry for: Bucketize"):
        t.gradient(y, x)


def test_03_every_second_registration_is_refused():
    """03_custom_gradients: "TensorFlow raises that `KeyError` for *any* second
    `RegisterGradient` of one op type, even the very same definition"."""
    def rule(op, grad):
        return grad

    tf.RegisterGradient("MinitapeCourseClaimSquare")(rule)
    with pytest.raises(KeyError, match="Registering two gradient with name"):
        tf.RegisterGradient("MinitapeCourseClaimSquare")(rule)


class _Module(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec(None)])
    def call_custom_grad(self, x):
        return _clip_gradients()(x)


def test_04_the_signature_trace_takes_any_shape():
    """04_custom_gradients_in_saved_models: `TensorSpec(None)` "leaves even the
    number of axes open": the concrete function for the signature takes any
    shape."""
    concrete = _Module().call_custom_grad.get_concrete_function()
    assert concrete.inputs[0].shape.rank is None
    np.testing.assert_array_equal(concrete(tf.constant([1.0, 2.0])).numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(concrete(tf.constant([[3.0]])).numpy(), [[3.0]])


def test_04_custom_gradients_are_saved_by_default():
    """04_custom_gradients_in_saved_models: "It is the default, in minitape as in
    TensorFlow"."""
    assert tf.saved_model.SaveOptions().experimental_custom_gradients is True


def test_04_tensorflow_raises_at_the_call_under_the_tape(tmp_path):
    """04_custom_gradients_in_saved_models: "TensorFlow raises it at the call
    `loaded.call_custom_grad(v * v)` under the tape" (in a fresh process, saved
    with `experimental_custom_gradients=False`); without a tape the call runs.
    docs/differences.md: the error comes from building the function's gradient."""
    import subprocess
    import sys

    tf.saved_model.save(_Module(), str(tmp_path), options=tf.saved_model.SaveOptions(
        experimental_custom_gradients=False))
    code = f"""
import traceback
import tensorflow as tf
loaded = tf.saved_model.load({str(tmp_path)!r})
print("without a tape:", float(loaded.call_custom_grad(tf.constant(3.0))))
v = tf.Variable(2.0)
try:
    with tf.GradientTape() as t:
        output = loaded.call_custom_grad(v * v)
    print("the call ran")
except LookupError as error:
    print("the call raised:", str(error).split(".")[0])
    print("in", traceback.extract_tb(error.__traceback__)[-1].name)
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "without a tape: 3.0",
        "the call raised: No gradient defined for operation'IdentityN' (op type: IdentityN)",
        "in _GradientsHelper"]


def test_05_a_tape_answers_only_for_what_it_tracks():
    """05_multiple_tapes: for `ys = x0 * x1` with tape0 watching x0 and tape1
    watching x1, "TensorFlow answers `None` here too"."""
    x0, x1 = tf.constant(2.0), tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape0, tf.GradientTape(persistent=True) as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        ys = x0 * x1
    assert tape0.gradient(ys, x1) is None and tape1.gradient(ys, x0) is None
    assert float(tape0.gradient(ys, x0)) == 3.0 and float(tape1.gradient(ys, x1)) == 2.0


def _fourth_derivative_at_2(f):
    x = tf.Variable(2.0)
    with tf.GradientTape() as t4:
        with tf.GradientTape() as t3:
            with tf.GradientTape() as t2:
                with tf.GradientTape() as t1:
                    y = f(x)
                d1 = t1.gradient(y, x)
            d2 = t2.gradient(d1, x)
        d3 = t3.gradient(d2, x)
    return float(d3), t4.gradient(d3, x)


def test_06_fourth_derivative_of_x_cubed():
    """06_higher_order_gradients: "the third derivative of `x * x * x` is the
    constant 6, so the fourth `gradient` finds no path to `x`. ... Written
    `x**3`, the power's rule keeps `x` in its formula (in TensorFlow too), and
    the fourth derivative comes out as a computed `0.0`"."""
    assert _fourth_derivative_at_2(lambda x: x * x * x) == (6.0, None)
    d3, d4 = _fourth_derivative_at_2(lambda x: x ** 3)
    assert d3 == 6.0 and float(d4) == 0.0


def test_06_the_norm_has_no_derivative_at_zero():
    """06_higher_order_gradients: "the norm has no derivative at zero (its
    formula divides 0 by 0, giving NaN)" (the cell: "as in TensorFlow")."""
    v = tf.Variable(np.zeros(3, np.float32))
    with tf.GradientTape() as t:
        n = tf.norm(v)
    assert np.isnan(t.gradient(n, v).numpy()).all()


def test_07_the_loop_on_a_one_shot_tape_raises():
    """07_jacobians: "In TensorFlow the loop calls `gradient` once per row, so
    on such a tape it raises `RuntimeError: GradientTape must be created with
    persistent=True ...`"."""
    w = tf.Variable([[1.0], [2.0]])
    with tf.GradientTape() as t:
        y = tf.constant([[1.0, 2.0]]) @ w
    with pytest.raises(RuntimeError, match="GradientTape must be created with persistent=True"):
        t.jacobian(y, w, experimental_use_pfor=False)


def test_10_zero_tangent_times_an_infinite_slope():
    """10_forward_mode: "TensorFlow's forward mode reports dy/dx0 = NaN although
    y moves at rate 1 (its reverse mode too, in the Jacobian of x * [1, inf])"."""
    x0, x1 = tf.constant(2.0), tf.constant(3.0)
    with tf.autodiff.ForwardAccumulator([x0, x1], [tf.constant(1.0), tf.constant(0.0)]) as acc:
        y = x0 * 1.0 + x1 * np.inf
    assert np.isnan(float(acc.jvp(y)))
    xs = tf.constant([2.0, 3.0])
    with tf.GradientTape() as t:
        t.watch(xs)
        ys = xs * tf.constant([1.0, np.inf])
    jac = t.jacobian(ys, xs).numpy()
    assert np.isnan(jac[0, 1]) and jac[0, 0] == 1.0 and jac[1, 1] == np.inf


def test_07_the_gradient_and_the_summed_jacobian_differ_in_the_last_bits():
    """07_jacobians: "TensorFlow prints a `delta` of at most a few 1e-7 (`6.0e-08`
    to `4.8e-07` in our runs)". The same seed gives different deltas from run to
    run (1.2e-07 or 2.4e-07; 6.0e-08 once in CI): TensorFlow's threads split the
    sums differently, so only the bound and a nonzero delta are checked."""
    deltas = []
    for seed in range(6):
        tf.random.set_seed(seed)
        x = tf.random.normal([7, 5])
        layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
        with tf.GradientTape(persistent=True) as tape:
            y = layer(x)
        j = tape.jacobian(y, layer.kernel)
        g = tape.gradient(y, layer.kernel)
        deltas.append(float(tf.reduce_max(abs(g - tf.reduce_sum(j, axis=[0, 1])))))
    assert max(deltas) > 0 and all(d < 5e-7 for d in deltas), deltas


def test_08_the_tape_has_no_hessian_method():
    """08_hessian: "minitape, like TensorFlow, has no `hessian` method" (the
    function `tf.hessians` is for graphs and refuses eager execution)."""
    assert not hasattr(tf.GradientTape, "hessian")
    x = tf.constant([1.0, 2.0])
    with pytest.raises(RuntimeError, match="not supported when eager execution"):
        tf.hessians(tf.reduce_sum(x * x), x)


def test_00_a_tensor_prints_as_tf_tensor():
    """00b_how_a_tape_works: "A tensor prints as `mt.Tensor(...)`, where
    TensorFlow prints `tf.Tensor(...)` with the same value, shape and dtype"."""
    assert str(tf.constant(4.0)) == "tf.Tensor(4.0, shape=(), dtype=float32)"


def test_03_identity_n_passes_a_list_through():
    """03_custom_gradients: "`IdentityN` is an operation that passes a list of
    tensors through unchanged"."""
    a, b = tf.constant([1.0, 2.0]), tf.constant(3)
    out = tf.raw_ops.IdentityN(input=[a, b])
    assert [o.numpy().tolist() for o in out] == [[1.0, 2.0], 3]


def test_03_the_graph_mode_message_names_the_op():
    """03_custom_gradients: "The message is worded like TensorFlow's graph-mode
    one, which names the op" (`No gradient defined for operation ... (op type: ...)`)."""
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        y = tf.raw_ops.Bucketize(input=x, boundaries=[1.5])
        with pytest.raises(LookupError, match=r"No gradient defined for operation ?'Bucketize' "
                                              r"\(op type: Bucketize\)"):
            tf.gradients(y, x)


def test_07_and_10_jacobian_has_no_direction_argument():
    """07_jacobians: "TensorFlow's `jacobian` has no such argument"
    (`experimental_direction`); 10_forward_mode: "TensorFlow's `jacobian` has
    no `experimental_direction` argument"."""
    for method in (tf.GradientTape.jacobian, tf.GradientTape.batch_jacobian):
        assert "experimental_direction" not in inspect.signature(method).parameters
