"""GradientTape semantics, one focused test each, with real values."""
import threading
import time

import numpy as np
import pytest

import minitape as mt
from minitape.core import registry


def _np(t):
    return None if t is None else np.asarray(t.numpy())


# ---------------------------------------------------------------------------
# persistent tapes and one-shot tapes
# ---------------------------------------------------------------------------

def test_persistent_tape_allows_two_gradient_calls():
    x = mt.constant(3.0)
    with mt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        z = y * y  # x**4
    assert float(t.gradient(z, x)) == 108.0  # 4 x**3
    assert float(t.gradient(y, x)) == 6.0    # 2 x
    assert float(t.gradient(z, x)) == 108.0  # still there


def test_persistent_tape_jacobian_then_gradient():
    x = mt.constant([1.0, 2.0, 3.0])
    with mt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    np.testing.assert_array_equal(_np(t.jacobian(y, x)), np.diag([2.0, 4.0, 6.0]))
    np.testing.assert_array_equal(_np(t.gradient(y, x)), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(_np(t.gradient(y, x)), [2.0, 4.0, 6.0])


def test_persistent_tape_batch_jacobian_jacobian_gradient():
    x = mt.constant([[1.0], [2.0], [3.0]])
    with mt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    np.testing.assert_array_equal(_np(t.batch_jacobian(y, x)), [[[2.0]], [[4.0]], [[6.0]]])
    assert t.jacobian(y, x).shape == (3, 1, 3, 1)
    np.testing.assert_array_equal(_np(t.gradient(y, x)), [[2.0], [4.0], [6.0]])


@pytest.mark.parametrize("first,second", [("gradient", "gradient"),
                                          ("jacobian", "gradient"),
                                          ("gradient", "jacobian"),
                                          ("batch_jacobian", "gradient")])
def test_non_persistent_tape_can_only_be_used_once(first, second):
    x = mt.constant([[1.0, 2.0]])
    with mt.GradientTape() as t:
        t.watch(x)
        y = x * x
    calls = {"gradient": lambda: t.gradient(y, x),
             "jacobian": lambda: t.jacobian(y, x),
             "batch_jacobian": lambda: t.batch_jacobian(y, x)}
    first_result = calls[first]()
    assert first_result is not None
    with pytest.raises(RuntimeError,
                       match="non-persistent GradientTape can only be used to compute "
                             "one set of gradients"):
        calls[second]()


def test_non_persistent_tape_frees_its_records_after_use():
    x = mt.constant(2.0)
    with mt.GradientTape() as t:
        t.watch(x)
        y = mt.sin(x) * x
    assert [op.type for op in t.operations] == ["Sin", "Mul"]
    assert float(t.gradient(y, x)) == pytest.approx(np.sin(2.0) + 2.0 * np.cos(2.0))
    assert t.operations == ()


def test_persistent_tape_keeps_its_records():
    x = mt.constant(2.0)
    with mt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = mt.sin(x) * x
    t.gradient(y, x)
    assert [op.type for op in t.operations] == ["Sin", "Mul"]


def test_persistent_tape_records_its_own_gradient_for_second_order():
    # As in TensorFlow: a persistent tape asked for a gradient inside its own
    # block records that computation, so it can differentiate it again.
    x = mt.constant(3.0)
    with mt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x ** 3
        dy = t.gradient(y, x)
    assert float(dy) == 27.0
    assert float(t.gradient(dy, x)) == 18.0


def test_persistent_tape_can_be_entered_again():
    x = mt.constant(3.0)
    t = mt.GradientTape(persistent=True)
    with t:
        t.watch(x)
        a = x * x
    unrecorded = a * 100.0  # between the blocks: not recorded
    with t:
        b = a * x
    assert len(t.operations) == 2
    assert float(t.gradient(b, x)) == 27.0
    assert t.gradient(unrecorded, x) is None


def test_an_exception_inside_the_block_stops_the_tape():
    x = mt.constant(3.0)
    with pytest.raises(KeyError):
        with mt.GradientTape() as t:
            t.watch(x)
            y = x * x
            raise KeyError("boom")
    _ = x * 5.0  # after the failed block: not recorded
    assert len(t.operations) == 1
    assert float(t.gradient(y, x)) == 6.0


# ---------------------------------------------------------------------------
# watching
# ---------------------------------------------------------------------------

def test_constants_need_watch():
    x = mt.constant(3.0)
    with mt.GradientTape(persistent=True) as t:
        y = x * x
    assert t.gradient(y, x) is None
    assert t.operations == ()  # nothing watched, nothing recorded
    with mt.GradientTape() as t:
        t.watch(x)
        y = x * x
    assert float(t.gradient(y, x)) == 6.0


def test_watch_accepts_nested_structures():
    a, b, c = mt.constant(1.0), mt.constant(2.0), mt.constant(3.0)
    with mt.GradientTape() as t:
        t.watch({"first": a, "rest": [b, (c,)]})
        y = a * b * c
    ga, gb, gc = t.gradient(y, [a, b, c])
    assert (float(ga), float(gb), float(gc)) == (6.0, 3.0, 2.0)


def test_watched_variables_in_order_auto_and_explicit():
    v1, v2, v3 = mt.Variable(1.0), mt.Variable(2.0), mt.Variable(3.0)
    frozen = mt.Variable(4.0, trainable=False)
    with mt.GradientTape() as t:
        _ = v2 * 2.0          # read first: watched automatically
        t.watch(v3)           # explicitly
        _ = v1 + v2 + frozen  # v1 new; v2 again; frozen is not trainable
        t.watch(v1)           # already watched: no duplicate
    watched = t.watched_variables()
    assert isinstance(watched, tuple)
    assert len(watched) == 3
    # TensorFlow: "Returns variables watched by this tape in order of construction."
    assert all(w is v for w, v in zip(watched, (v1, v2, v3)))


def test_watch_accessed_variables_false():
    v, w = mt.Variable(2.0), mt.Variable(5.0)
    with mt.GradientTape(watch_accessed_variables=False) as t:
        t.watch(w)
        y = v * v + w * w
    assert len(t.watched_variables()) == 1 and t.watched_variables()[0] is w
    gv, gw = t.gradient(y, [v, w])
    assert gv is None
    assert float(gw) == 10.0


def test_non_trainable_variable_not_auto_watched_but_watchable():
    v = mt.Variable(2.0, trainable=False)
    with mt.GradientTape() as t:
        y = v * v
    assert t.watched_variables() == ()
    assert t.gradient(y, v) is None
    with mt.GradientTape() as t:
        t.watch(v)
        y = v * v
    assert t.watched_variables()[0] is v
    assert float(t.gradient(y, v)) == 4.0


def test_integer_sources_give_none_with_a_warning_naming_the_dtype():
    x = mt.constant(2.0)
    n = mt.constant(3)
    with mt.GradientTape() as t:
        t.watch(x)
        y = x * x
    with pytest.warns(UserWarning, match="source 1 must be floating.*int32"):
        gx, gn = t.gradient(y, [x, n])
    assert gn is None
    assert float(gx) == 4.0


def test_the_intro_guides_integer_cell_gives_none():
    """TensorFlow's "Introduction to gradients" guide: `x = tf.constant(10)`,
    `g.watch(x)`, `y = x * x`, `g.gradient(y, x)` warns about the dtype of the
    watched tensor, the target and the source, and prints None."""
    x = mt.constant(10)
    with mt.GradientTape() as g:
        with pytest.warns(UserWarning, match="watched tensor must be floating.*int32"):
            g.watch(x)
        y = x * x
    with pytest.warns(UserWarning) as caught:
        assert g.gradient(y, x) is None
    messages = [str(w.message) for w in caught]
    assert any("target 0 must be floating" in m and "int32" in m for m in messages)
    assert any("source 0 must be floating" in m and "int32" in m for m in messages)


def test_watching_an_integer_tensor_warns_and_does_not_watch():
    n = mt.constant([1, 2])
    with mt.GradientTape(persistent=True) as t:
        with pytest.warns(UserWarning, match="int32"):
            t.watch(n)
        y = mt.cast(n, mt.float32) * 2.0
    assert t.operations == ()  # n was not watched, so the Cast was not recorded
    assert float(mt.reduce_sum(y)) == 6.0


# ---------------------------------------------------------------------------
# stop_recording and reset
# ---------------------------------------------------------------------------

def test_stop_recording_suspends_and_resumes():
    x = mt.constant(2.0)
    with mt.GradientTape() as t:
        t.watch(x)
        a = x * x
        n_before = len(t.operations)
        with t.stop_recording():
            b = a * 3.0       # not recorded: b is a constant to the tape
            c = mt.sin(x)
        assert len(t.operations) == n_before == 1
        z = a * b + c         # recorded again after the block
        assert len(t.operations) == 3  # Mul (a), Mul (a*b), AddV2
    # dz/dx through a only, with b = 12 held constant: 2 x * b = 48; c is cut off.
    assert float(t.gradient(z, x)) == 48.0


def test_stop_recording_only_suspends_that_tape():
    x = mt.constant(2.0)
    with mt.GradientTape() as outer:
        outer.watch(x)
        with mt.GradientTape() as inner:
            inner.watch(x)
            with inner.stop_recording():
                y = x * x * x
    assert len(inner.operations) == 0
    assert len(outer.operations) == 2
    assert float(outer.gradient(y, x)) == 12.0


def test_stop_recording_outside_the_tape_block_raises_tensorflows_errors():
    # TensorFlow 2.21: RuntimeError "Trying to stop recording a tape which is not
    # recording." for a tape never entered (or a one-shot tape used), ValueError
    # "Tape is not recording." once its block is over or inside stop_recording
    t = mt.GradientTape()
    with pytest.raises(RuntimeError, match="Trying to stop recording a tape which is not"):
        with t.stop_recording():
            pass
    x = mt.constant(3.0)
    with t:
        t.watch(x)
        y = x * x
        with t.stop_recording():
            with pytest.raises(ValueError, match="Tape is not recording"):
                with t.stop_recording():
                    pass
    with pytest.raises(ValueError, match="Tape is not recording"):
        with t.stop_recording():
            pass
    assert float(t.gradient(y, x)) == 6.0
    with pytest.raises(RuntimeError, match="Trying to stop recording a tape which is not"):
        with t.stop_recording():
            pass


def test_reset_outside_the_recording_block_raises_tensorflows_error_and_keeps_the_records():
    # TensorFlow 2.21: ValueError "Tape is not recording." for reset() before the
    # block, after it, and inside stop_recording
    x = mt.constant(3.0)
    t = mt.GradientTape(persistent=True)
    with pytest.raises(ValueError, match="Tape is not recording"):
        t.reset()
    with t:
        t.watch(x)
        y = x * x
        with t.stop_recording():
            with pytest.raises(ValueError, match="Tape is not recording"):
                t.reset()
    with pytest.raises(ValueError, match="Tape is not recording"):
        t.reset()
    assert float(t.gradient(y, x)) == 6.0   # the records are kept


def test_reset_guide_example():
    x = mt.Variable(2.0)
    y = mt.Variable(3.0)
    with mt.GradientTape() as t:
        y_sq = y * y
        t.reset()  # throw away everything recorded so far
        assert t.operations == () and t.watched_variables() == ()
        z = x * x + y_sq
    grad = t.gradient(z, {"x": x, "y": y})
    assert float(grad["x"]) == 4.0
    assert grad["y"] is None


# ---------------------------------------------------------------------------
# unconnected gradients
# ---------------------------------------------------------------------------

def _unconnected_setup():
    x = mt.constant([1.0, 2.0])
    u = mt.constant(np.ones((2, 3), np.float64))   # float64, never used
    t = mt.GradientTape(persistent=True)
    with t:
        t.watch([x, u])
        y = x * 3.0
    return t, x, u, y


def test_unconnected_gradients_none_and_zero_for_gradient():
    t, x, u, y = _unconnected_setup()
    gx, gu = t.gradient(y, [x, u])
    np.testing.assert_array_equal(_np(gx), [3.0, 3.0])
    assert gu is None
    gx, gu = t.gradient(y, [x, u], unconnected_gradients=mt.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(_np(gx), [3.0, 3.0])
    assert gu.shape == (2, 3) and gu.dtype == np.float64
    np.testing.assert_array_equal(_np(gu), np.zeros((2, 3)))


def test_unconnected_gradients_none_and_zero_for_jacobian():
    t, x, u, y = _unconnected_setup()
    assert t.jacobian(y, u) is None
    for use_pfor in (True, False):
        jx, ju = t.jacobian(y, [x, u], unconnected_gradients=mt.UnconnectedGradients.ZERO,
                            experimental_use_pfor=use_pfor)
        np.testing.assert_array_equal(_np(jx), 3.0 * np.eye(2))
        assert ju.shape == (2, 2, 3) and ju.dtype == np.float64
        assert not np.any(_np(ju))


def test_unconnected_gradients_none_and_zero_for_batch_jacobian():
    t, x, u, y = _unconnected_setup()
    target = mt.reshape(y, [2, 1])
    assert t.batch_jacobian(target, u) is None
    jb = t.batch_jacobian(target, u, unconnected_gradients=mt.UnconnectedGradients.ZERO)
    assert jb.shape == (2, 1, 3) and jb.dtype == np.float64
    assert not np.any(_np(jb))


def test_unconnected_gradients_rejects_other_values():
    t, x, u, y = _unconnected_setup()
    # TensorFlow's words: "Unknown value for unconnected_gradients: 'zeros'".
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients: 'zeros'"):
        t.gradient(y, x, unconnected_gradients="zeros")


def test_errors_of_tensorflows_kind_and_words():
    # Re-entering a recording tape: TensorFlow's ValueError "Tape is still
    # recording, ..." (minitape raised RuntimeError); a batch_jacobian whose
    # target and source batch sizes differ: "Need first dimension of target shape".
    tape = mt.GradientTape()
    with tape:
        with pytest.raises(ValueError, match="Tape is still recording"):
            tape.__enter__()
        assert tape._is_recording()
    x, w = mt.constant(np.ones((2, 3))), mt.constant(np.ones((3, 3)))
    with mt.GradientTape() as tape:
        tape.watch(w)
        y = x * mt.reduce_sum(w)
    with pytest.raises(ValueError, match=r"Need first dimension of target shape \(\(2, 3\)\) "
                                         r"and source shape \(\(3, 3\)\) to match"):
        tape.batch_jacobian(y, w)


# ---------------------------------------------------------------------------
# output_gradients, structures of sources and targets
# ---------------------------------------------------------------------------

def test_output_gradients_weight_the_target():
    x = mt.constant([1.0, 2.0, 3.0])
    with mt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    g = t.gradient(y, x, output_gradients=mt.constant([1.0, 10.0, -1.0]))
    np.testing.assert_array_equal(_np(g), [2.0, 40.0, -6.0])


def test_output_gradients_of_the_wrong_shape_raise():
    x = mt.constant([1.0, 2.0, 3.0])
    with mt.GradientTape() as t:
        t.watch(x)
        y = x * x
    with pytest.raises(ValueError, match=r"\(2,\).*\(3,\)"):
        t.gradient(y, x, output_gradients=mt.constant([1.0, 1.0]))
    # The failed call checked its arguments before using the tape up.
    np.testing.assert_array_equal(_np(t.gradient(y, x)), [2.0, 4.0, 6.0])


def test_nested_sources_keep_their_structure_and_dict_order():
    a = mt.constant(1.0)
    b = mt.constant([1.0, 2.0])
    v = mt.Variable(3.0)
    with mt.GradientTape() as t:
        t.watch([a, b])
        y = a * 2.0 + mt.reduce_sum(b * b) + v * v
    sources = {"zeta": a, "alpha": [b, (v, a)], "mid": {"y": v, "x": b}}
    g = t.gradient(y, sources)
    assert list(g) == ["zeta", "alpha", "mid"]          # caller's key order
    assert list(g["mid"]) == ["y", "x"]
    assert isinstance(g["alpha"], list) and isinstance(g["alpha"][1], tuple)
    assert float(g["zeta"]) == 2.0
    np.testing.assert_array_equal(_np(g["alpha"][0]), [2.0, 4.0])
    assert float(g["alpha"][1][0]) == 6.0
    assert float(g["alpha"][1][1]) == 2.0
    assert float(g["mid"]["y"]) == 6.0
    np.testing.assert_array_equal(_np(g["mid"]["x"]), [2.0, 4.0])


def test_gradient_of_a_list_of_targets_is_the_gradient_of_their_sum():
    x = mt.constant([0.5, 1.0, 2.0])
    with mt.GradientTape(persistent=True) as t:
        t.watch(x)
        y1 = x * x
        y2 = mt.reduce_sum(mt.sin(x))
        total = mt.reduce_sum(y1) + y2
    g_list = t.gradient([y1, y2], x)
    g_sum = t.gradient(total, x)
    np.testing.assert_allclose(_np(g_list), _np(g_sum), rtol=1e-6)
    np.testing.assert_allclose(_np(g_list), 2 * x.numpy() + np.cos(x.numpy()), rtol=1e-6)


def test_a_variable_as_the_target():
    v = mt.Variable([1.0, 2.0])
    w = mt.Variable(3.0)
    with mt.GradientTape() as t:
        t.watch([v, w])
    gv, gw = t.gradient(v, [v, w])
    np.testing.assert_array_equal(_np(gv), [1.0, 1.0])  # dv/dv
    assert gw is None


def test_the_same_source_twice_gets_the_gradient_twice():
    x = mt.constant(3.0)
    with mt.GradientTape() as t:
        t.watch(x)
        y = x * x
    g1, g2 = t.gradient(y, [x, x])
    assert float(g1) == float(g2) == 6.0


def test_a_target_that_does_not_depend_on_the_tape():
    x = mt.constant(3.0)
    with mt.GradientTape() as t:
        t.watch(x)
        _ = x * x
        c = mt.constant(1.0) * 2.0
    assert t.gradient(c, x) is None


def test_reads_of_a_variable_before_and_after_assign_each_count():
    # z = v0**2 + v1**2 with v0 = 2 (read before the assign), v1 = 3 (after):
    # dz/dv sums 2 * 2 and 2 * 3, each read with the value it saw.
    v = mt.Variable(2.0)
    with mt.GradientTape() as t:
        y = v * v
        v.assign(3.0)
        z = v * v + y
    assert float(z) == 13.0
    assert float(t.gradient(z, v)) == 10.0


def test_intermediate_tensors_as_sources():
    x = mt.constant(3.0)
    with mt.GradientTape(persistent=True) as t:
        t.watch(x)
        a = x * x
        b = mt.sin(a)
        z = b * a
    ga, gx, gb = t.gradient(z, [a, x, b])
    d_da = np.cos(9.0) * 9.0 + np.sin(9.0)        # z = sin(a) * a
    assert float(ga) == pytest.approx(d_da, rel=1e-5)
    assert float(gx) == pytest.approx(d_da * 6.0, rel=1e-5)
    assert float(gb) == 9.0
    assert float(t.gradient(a, a)) == 1.0
    assert float(t.gradient([z, a], a)) == pytest.approx(d_da + 1.0, rel=1e-5)


def test_gradient_of_a_variable_collects_all_its_reads():
    v = mt.Variable(2.0)
    with mt.GradientTape() as t:
        y = v * 3.0 + v * v   # two separate reads of v
    assert float(t.gradient(y, v)) == 7.0


def test_assign_after_recording_does_not_change_the_gradient():
    v = mt.Variable(2.0)
    x = mt.constant(5.0)
    with mt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = v * v * x
        v.assign(10.0)  # inside the block, after the read
    v.assign(-7.0)      # and after it
    gv, gx = t.gradient(y, [v, x])
    assert float(gv) == 20.0  # 2 * 2 * 5: the recorded value of v was 2
    assert float(gx) == 4.0   # v*v with v = 2
    assert float(v) == -7.0


def test_batch_jacobian_requires_equal_first_dims():
    x = mt.ones([4, 2])
    with mt.GradientTape() as t:
        t.watch(x)
        y = mt.reduce_sum(x, axis=0)[None] * mt.ones([3, 1])  # (3, 2)
    with pytest.raises(ValueError, match=r"\(3, 2\).*\(4, 2\)"):
        t.batch_jacobian(y, x)


# ---------------------------------------------------------------------------
# higher order
# ---------------------------------------------------------------------------

def _fourth_derivative(f, x0):
    x = mt.constant(x0)
    with mt.GradientTape() as t4:
        t4.watch(x)
        with mt.GradientTape() as t3:
            t3.watch(x)
            with mt.GradientTape() as t2:
                t2.watch(x)
                with mt.GradientTape() as t1:
                    t1.watch(x)
                    y = f(x)
                d1 = t1.gradient(y, x)
            d2 = t2.gradient(d1, x)
        d3 = t3.gradient(d2, x)
    d4 = t4.gradient(d3, x)
    return float(d1), float(d2), float(d3), float(d4)


def test_nested_tapes_to_fourth_order_polynomial():
    d = _fourth_derivative(lambda x: x ** 4, 1.5)
    assert d == pytest.approx((4 * 1.5**3, 12 * 1.5**2, 24 * 1.5, 24.0), rel=1e-6)


def test_nested_tapes_to_fourth_order_sin():
    d = _fourth_derivative(mt.sin, np.float64(1.5))
    assert d == pytest.approx((np.cos(1.5), -np.sin(1.5), -np.cos(1.5), np.sin(1.5)),
                              rel=1e-12)


def test_jacobian_of_a_gradient_is_the_hessian():
    x = mt.constant(np.array([0.5, -1.0, 2.0]))  # float64
    with mt.GradientTape() as t2:
        t2.watch(x)
        with mt.GradientTape() as t1:
            t1.watch(x)
            f = mt.reduce_sum(x ** 3) + x[0] * x[1]
        g = t1.gradient(f, x)
    h = t2.jacobian(g, x)
    xs = x.numpy()
    np.testing.assert_allclose(_np(g), 3 * xs**2 + [xs[1], xs[0], 0.0], rtol=1e-12)
    expected = np.diag(6 * xs)
    expected[0, 1] = expected[1, 0] = 1.0
    assert h.shape == (3, 3)
    np.testing.assert_allclose(_np(h), expected, rtol=1e-12, atol=1e-12)


def test_jacobian_pfor_and_loop_agree():
    x = mt.constant(np.array([[0.3, -0.2], [1.1, 0.7]]))
    with mt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = mt.tanh(x @ x) * mt.exp(x)
    j1 = t.jacobian(y, x, experimental_use_pfor=True)
    j2 = t.jacobian(y, x, experimental_use_pfor=False)
    assert j1.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(_np(j1), _np(j2), rtol=1e-12)


# ---------------------------------------------------------------------------
# controlling gradients: custom_gradient, primitives, registry
# ---------------------------------------------------------------------------

def test_custom_gradient_with_variables():
    w = mt.Variable(3.0)
    seen = {}

    @mt.custom_gradient
    def scaled(x):
        y = x * w

        def grad_fn(dy, variables=None):
            seen["variables"] = variables
            # Deliberately not the true gradients, so the test sees which are used.
            return dy * w * 10.0, [dy * x * 100.0]
        return y, grad_fn

    x = mt.constant(2.0)
    with mt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = scaled(x)
    assert float(y) == 6.0
    # f's own ops are recorded too (as in TensorFlow's eager mode), but the
    # outputs come from ONE IdentityN op over the inputs and the variable read.
    last = t.operations[-1]
    assert last.type == "IdentityN" and last.name == "scaled"
    assert [op.type for op in t.operations] == ["Mul", "IdentityN"]
    assert len(last.inputs) == 2 and last.outputs[0] is y
    gx, gw = t.gradient(y, [x, w])
    assert float(gx) == 30.0    # 1 * 3 * 10
    assert float(gw) == 200.0   # 1 * 2 * 100
    assert len(seen["variables"]) == 1 and seen["variables"][0] is w


def test_custom_gradient_reading_variables_needs_a_variables_argument():
    w = mt.Variable(3.0)

    @mt.custom_gradient
    def scaled(x):
        return x * w, lambda dy: dy * w

    with pytest.raises(TypeError, match="variables"):
        scaled(mt.constant(1.0))


def test_custom_gradient_differentiated_twice():
    @mt.custom_gradient
    def f(x):
        def grad_fn(dy):
            return dy * 5.0 * x * x   # not the true 3 x**2, on purpose
        return x * x * x, grad_fn

    x = mt.constant(3.0)
    with mt.GradientTape() as t2:
        t2.watch(x)
        with mt.GradientTape() as t1:
            t1.watch(x)
            y = f(x)
        dy = t1.gradient(y, x)
    d2y = t2.gradient(dy, x)
    assert float(y) == 27.0
    assert float(dy) == 45.0    # 5 x**2
    assert float(d2y) == 30.0   # d/dx of the grad_fn: 10 x


@pytest.fixture
def my_square():
    """The SPEC's MySquare example, registered for one test and then removed."""
    saved = registry._rules.pop("MySquare", None)
    seen = []

    @mt.primitive("MySquare")      # the function gets and returns NumPy arrays
    def my_square(x):
        assert isinstance(x, np.ndarray)
        return x * x

    @mt.RegisterGradient("MySquare")
    def _my_square_grad(op, grad):
        seen.append((op.type, op.name, len(op.inputs), len(op.outputs)))
        return grad * 2.0 * op.inputs[0]

    my_square.seen = seen
    yield my_square
    registry.unregister("MySquare")
    if saved is not None:
        registry._rules["MySquare"] = saved


def test_register_gradient_for_a_primitive(my_square):
    x = mt.constant([1.0, -2.0, 3.0])
    with mt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = my_square(x)
    np.testing.assert_array_equal(_np(y), [1.0, 4.0, 9.0])
    assert [op.type for op in t.operations] == ["MySquare"]
    np.testing.assert_array_equal(_np(t.gradient(y, x)), [2.0, -4.0, 6.0])
    assert my_square.seen[0] == ("MySquare", "MySquare", 1, 1)
    # A user rule is called row by row inside a vectorised jacobian.
    np.testing.assert_array_equal(_np(t.jacobian(y, x)), np.diag([2.0, -4.0, 6.0]))


def test_registered_gradient_is_differentiable(my_square):
    x = mt.constant(1.5)
    with mt.GradientTape() as t2:
        t2.watch(x)
        with mt.GradientTape() as t1:
            t1.watch(x)
            y = my_square(x)
        g = t1.gradient(y, x)
    assert float(g) == 3.0
    assert float(t2.gradient(g, x)) == 2.0


def test_primitive_attributes_via_get_attr():
    @mt.primitive("TestTapeScalePow")
    def scale_pow(x, scale=1.0, p=2):
        return scale * x ** p

    seen = {}

    @mt.RegisterGradient("TestTapeScalePow")
    def _grad(op, grad):
        s, p = op.get_attr("scale"), op.get_attr("p")
        seen.update(scale=s, p=p)
        return grad * s * p * op.inputs[0] ** (p - 1)

    try:
        x = mt.constant([1.0, 2.0])
        with mt.GradientTape() as t:
            t.watch(x)
            y = scale_pow(x, scale=3.0, p=3)
        np.testing.assert_array_equal(_np(y), [3.0, 24.0])
        np.testing.assert_array_equal(_np(t.gradient(y, x)), [9.0, 36.0])
        assert seen == {"scale": 3.0, "p": 3}
    finally:
        registry.unregister("TestTapeScalePow")


def test_multi_output_primitive():
    @mt.primitive("TestTapeSinCos")
    def sincos(x):
        return np.sin(x), np.cos(x)

    @mt.RegisterGradient("TestTapeSinCos")
    def _grad(op, grad_sin, grad_cos):
        x = op.inputs[0]
        return grad_sin * mt.cos(x) - grad_cos * mt.sin(x)

    try:
        x = mt.constant(np.array([0.1, 1.0, 2.5]))
        with mt.GradientTape(persistent=True) as t:
            t.watch(x)
            s, c = sincos(x)
            z = s + 2.0 * c
        xs = x.numpy()
        np.testing.assert_allclose(_np(s), np.sin(xs))
        np.testing.assert_allclose(_np(t.gradient(z, x)), np.cos(xs) - 2 * np.sin(xs))
        # Only one output used: the other output's gradient is filled with zeros.
        np.testing.assert_allclose(_np(t.gradient(c, x)), -np.sin(xs))
        np.testing.assert_allclose(_np(t.jacobian(z, x)),
                                   np.diag(np.cos(xs) - 2 * np.sin(xs)))
    finally:
        registry.unregister("TestTapeSinCos")


def test_no_registered_gradient_raises_lookup_error():
    @mt.primitive("TestTapeNoGrad")
    def no_grad(x):
        return x + 1.0

    x = mt.constant(1.0)
    with mt.GradientTape() as t:
        t.watch(x)
        y = no_grad(x) * 2.0
    with pytest.raises(LookupError) as info:
        t.gradient(y, x)
    assert str(info.value) == ("No gradient defined for operation 'TestTapeNoGrad' "
                               "(op type: TestTapeNoGrad)")


def test_not_differentiable_gives_none():
    @mt.primitive("TestTapeNotDiff")
    def not_diff(x):
        return np.floor(x)

    mt.NotDifferentiable("TestTapeNotDiff")
    try:
        x = mt.constant(2.5)
        with mt.GradientTape(persistent=True) as t:
            t.watch(x)
            y = not_diff(x)
            z = not_diff(x) + x * x
        assert t.gradient(y, x) is None
        assert float(t.gradient(z, x)) == 5.0  # only the x*x path
        assert float(t.gradient(y, x, unconnected_gradients="zero")) == 0.0
    finally:
        registry.unregister("TestTapeNotDiff")


def test_stop_gradient():
    x = mt.constant(3.0)
    with mt.GradientTape() as t:
        t.watch(x)
        y = x * mt.stop_gradient(x * x)   # x * (9, held constant)
    assert float(y) == 27.0
    assert float(t.gradient(y, x)) == 9.0


# ---------------------------------------------------------------------------
# threads and the walk
# ---------------------------------------------------------------------------

def test_tapes_in_two_threads_do_not_see_each_others_ops():
    # All three tapes watch the same x, so a tape that saw another thread's
    # ops would record them.
    x = mt.constant(2.0)
    barrier = threading.Barrier(2, timeout=10)
    results, errors = {}, []

    def work(name, power):
        try:
            with mt.GradientTape() as t:
                t.watch(x)
                barrier.wait()   # both tapes are recording now
                y = x
                for _ in range(power - 1):
                    y = y * x
                barrier.wait()   # both threads did their ops
                n_ops = len(t.operations)
            results[name] = (n_ops, float(t.gradient(y, x)))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=("a", 3)),
               threading.Thread(target=work, args=("b", 5))]
    with mt.GradientTape() as main_tape:
        main_tape.watch(x)
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    assert not errors, errors
    assert results["a"] == (2, 12.0)   # 3 x**2, x = 2
    assert results["b"] == (4, 80.0)   # 5 x**4, x = 2
    assert main_tape.operations == ()


def test_backward_pass_visits_only_ops_between_sources_and_target():
    x = mt.constant(2.0)
    u = mt.constant(5.0)
    with mt.GradientTape() as t:
        t.watch([x, u])
        a = mt.sin(x)        # on the path
        side = mt.exp(x)     # from the source, but does not reach the target
        other = u * 3.0      # reaches the target, but not from the source
        y = a * other
        _ = side * other     # after y, not towards it
    assert len(t.operations) == 5
    steps = list(t.backward_pass(y, x).steps())
    visited = [op.outputs[0] for op, _, _ in steps]
    assert len(visited) == 2 and visited[0] is y and visited[1] is a
    (op1, out1, in1), (op2, out2, in2) = steps
    assert op1.type == "Mul" and op2.type == "Sin"
    assert float(out1[0]) == 1.0
    assert float(in1[0]) == 15.0 and in1[1] is None   # `other` leads to no source
    assert float(out2[0]) == 15.0
    assert float(in2[0]) == pytest.approx(15.0 * np.cos(2.0))
    # Stepping by hand is not the tape's one use.
    assert float(t.gradient(y, x)) == pytest.approx(15.0 * np.cos(2.0))


def test_every_source_or_some_of_them_give_tensorflows_gradients():
    """The walk counts consumers on its way back when the sources are all the
    tape watches, and sweeps forwards from the sources otherwise: both give
    TensorFlow 2.21's numbers. A tensor watched after an op used it (that op
    still counts), a tensor used twice, an intermediate tensor as a source."""
    x, c = mt.constant(3.0), mt.constant(2.0)
    with mt.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * c
        t.watch(c)
        z = y * c
    assert [float(g) for g in t.gradient(y, [x, c])] == [2.0, 3.0]
    assert float(t.gradient(y, c)) == 3.0
    assert [float(g) for g in t.gradient(z, [x, c])] == [4.0, 12.0]
    assert float(t.gradient(z, c)) == 12.0
    assert float(t.gradient(z, x)) == 4.0
    a = mt.constant(1.5)
    with mt.GradientTape(persistent=True) as t:
        t.watch(a)
        b = a * a
        d = b + b
        e = d * b
    assert [float(g) for g in t.gradient(e, [a, b])] == [27.0, 9.0]
    assert float(t.gradient(e, b)) == 9.0
    assert float(t.gradient(e, a)) == 27.0
    assert t.gradient(e, [mt.constant(1.0), a])[0] is None  # not watched: None


def test_python_floats_with_a_float64_dtype_are_not_rounded_through_float32():
    assert mt.constant(0.7, dtype=mt.float64).numpy() == 0.7
    assert mt.Variable(0.7, dtype=mt.float64).numpy() == 0.7
    assert mt.constant(0.7).dtype == mt.float32  # TensorFlow's default stays


# ---------------------------------------------------------------------------
# TensorFlow's tape semantics (issue 9): what a tape sees, watched variables, watch
# ---------------------------------------------------------------------------

def test_tapes_only_see_what_they_watch():
    """Two tapes, tape0 watching x0 and tape1 watching x1, ys = x0 * x1: each
    tape differentiates only with respect to what it watched (TensorFlow
    drops the gradient of a tensor that is not on the tape), so the other
    tape's source gets None, although it is an input of an op both recorded."""
    x0, x1 = mt.constant(2.0), mt.constant(3.0)
    with mt.GradientTape(persistent=True) as tape0, \
            mt.GradientTape(persistent=True) as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        ys = x0 * x1
    assert tape0.gradient(ys, x1) is None
    assert tape1.gradient(ys, x0) is None
    assert float(tape0.gradient(ys, x0)) == 3.0
    assert float(tape1.gradient(ys, x1)) == 2.0
    g0 = tape0.gradient(ys, [x0, x1], unconnected_gradients=mt.UnconnectedGradients.ZERO)
    assert [float(g) for g in g0] == [3.0, 0.0]
    assert tape0.jacobian(ys, x1) is None
    assert tape0.jacobian(ys, x1, experimental_direction="forward") is None


def test_a_variable_the_tape_did_not_see_gets_none():
    """Variables read with watch_accessed_variables=False, and never watched,
    are not sources of that tape even when a recorded op reads them."""
    v = mt.Variable(2.0)
    x = mt.constant(5.0)
    with mt.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = v * x
    gv, gx = tape.gradient(y, [v, x])
    assert gv is None and float(gx) == 2.0


def test_a_computed_tensor_is_a_source_of_the_tape_that_computed_it():
    x = mt.constant(2.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        h = x * x
        y = h * 3.0
    assert float(tape.gradient(y, h)) == 3.0


def test_watched_variables_survive_a_one_shot_gradient_and_reset():
    a, b = mt.Variable(1.0, name="a"), mt.Variable(2.0, name="b")
    with mt.GradientTape() as tape:
        y = b * a  # b is read first; TensorFlow lists them in creation order
    assert [v.name for v in tape.watched_variables()] == ["a:0", "b:0"]
    grads = tape.gradient(y, [a, b])
    assert [float(g) for g in grads] == [2.0, 1.0]
    assert [v.name for v in tape.watched_variables()] == ["a:0", "b:0"]  # still known
    with mt.GradientTape(persistent=True) as tape2:
        _ = a * 2.0
        tape2.reset()
        assert tape2.watched_variables() == ()
        _ = b * 2.0
    assert [v.name for v in tape2.watched_variables()] == ["b:0"]


@pytest.mark.parametrize("thing", [1.5, 3, "x", np.array([1.0, 2.0]), None, [1.0]],
                         ids=["float", "int", "str", "ndarray", "None", "list"])
def test_watching_something_that_is_not_a_tensor_is_a_value_error(thing):
    """TensorFlow: "Passed in object ... of type ..., not tf.Tensor or
    tf.Variable or ExtensionType" (NumPy arrays included: they are not tensors)."""
    x = mt.constant(1.0)
    with mt.GradientTape() as tape:
        with pytest.raises(ValueError, match="not mt.Tensor or mt.Variable") as e:
            tape.watch([x, thing])
        y = x * 2.0
    inner = thing[0] if isinstance(thing, list) else thing
    assert type(inner).__name__ in str(e.value)
    assert tape.operations == ()  # nothing was watched, x included: nothing recorded
    assert tape.gradient(y, x) is None


# ---------------------------------------------------------------------------
# Threads and failed calls (issue 10)
# ---------------------------------------------------------------------------

@mt.primitive("ThreadTestMul")
def _thread_test_mul(a, b):
    return a * b


@mt.RegisterGradient("ThreadTestMul")
def _thread_test_mul_grad(op, dy):
    """A user's rule that skips the gradients nobody needs (op.needs, as
    TensorFlow's skip_input_indices) after some work: the sleep lets other
    threads run their own walks over the same recorded op meanwhile."""
    time.sleep(0.0002)
    a, b = op.inputs
    return (dy * b if op.needs[0] else None, dy * a if op.needs[1] else None)


def test_one_persistent_tape_differentiated_from_several_threads():
    """Gradients with respect to x1 and to x2 need different inputs' gradients
    from the same recorded ops; jacobians and forward sweeps run over the same
    ops too. Each walk keeps its own state (not flags on the shared ops), so
    four threads differentiating one tape at once all get exact values."""
    rng = np.random.default_rng(0)
    x1 = mt.constant(rng.standard_normal(3))
    x2 = mt.constant(rng.standard_normal(3))
    with mt.GradientTape(persistent=True) as tape:
        tape.watch([x1, x2])
        h = _thread_test_mul(x1, x2) + mt.sin(x1) / (1.5 + mt.cos(x2))
        y = mt.reduce_sum(h * h)
    a, b = x1.numpy(), x2.numpy()
    hv = a * b + np.sin(a) / (1.5 + np.cos(b))
    dh_da = b + np.cos(a) / (1.5 + np.cos(b))
    dh_db = a + np.sin(a) * np.sin(b) / (1.5 + np.cos(b)) ** 2
    expected = {"g1": 2 * hv * dh_da, "g2": 2 * hv * dh_db,
                "j2": np.diag(dh_db), "f1": np.diag(dh_da)}
    jobs = {"g1": lambda: tape.gradient(y, x1), "g2": lambda: tape.gradient(y, x2),
            "j2": lambda: tape.jacobian(h, x2, experimental_direction="reverse"),
            "f1": lambda: tape.jacobian(h, x1, experimental_direction="forward")}
    results, errors = [], []

    def work(names, n):
        try:
            for i in range(n):
                name = names[i % len(names)]
                got = jobs[name]()
                results.append((name, None if got is None else got.numpy()))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(names, 40)) for names in
               (["g1", "g2"], ["g2", "g1"], ["g1", "j2"], ["g2", "f1"])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 160
    wrong = [name for name, got in results if got is None or not np.allclose(
        got, expected[name], rtol=1e-10, atol=1e-12)]
    assert wrong == []


def test_a_failed_gradient_leaves_a_one_shot_tape_recording():
    """A gradient call that fails (in a rule, half-way through the walk)
    inside a non-persistent tape's block leaves that tape as it was: still
    recording, still unused."""
    @mt.custom_gradient
    def fragile(v):
        def grad(dy):
            if float(mt.reduce_sum(dy)) > 100.0:
                raise ArithmeticError("upstream gradient too large")
            return dy
        return v * 1.0, grad

    x = mt.constant(2.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = fragile(x) * 1000.0
        n = len(tape.operations)
        with pytest.raises(ArithmeticError, match="too large"):
            tape.gradient(y, x)
        assert len(tape.operations) == n
        z = fragile(x) * 3.0  # recorded: the tape is still recording
        assert len(tape.operations) == 2 * n  # the same three ops again
    assert float(tape.gradient(z, x)) == 3.0


def test_a_failed_rule_leaves_every_tape_as_it_was():
    """A gradient rule that raises half-way: the outer tape loses what the walk
    recorded, the inner one-shot tape records again and can still be used."""
    @mt.custom_gradient
    def bad(v):
        def grad(dy):
            _ = dy * 2.0  # recorded by the outer tape before the error
            raise ArithmeticError("broken rule")
        return v * 1.0, grad

    x = mt.constant(2.0)
    with mt.GradientTape() as outer:
        outer.watch(x)
        with mt.GradientTape() as inner:
            inner.watch(x)
            y = mt.sin(bad(x))
            n_outer, n_inner = len(outer.operations), len(inner.operations)
            with pytest.raises(ArithmeticError, match="broken rule"):
                inner.gradient(y, x)
            assert len(outer.operations) == n_outer
            assert len(inner.operations) == n_inner
            z = y * y  # both tapes still record
        assert len(inner.operations) == n_inner + 1
        with pytest.raises(ArithmeticError):
            inner.jacobian(z, x, experimental_direction="reverse")
        assert len(outer.operations) == n_outer + 1
    assert np.isclose(float(outer.gradient(z, y)), 2 * float(y))
