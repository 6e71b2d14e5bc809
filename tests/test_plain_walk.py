"""The plain walk (`core/backward.py`): when nothing records a backward walk,
gradients are NumPy values and each elementwise row's rule runs on values
(`ops/partials.py`). It must give the tensor walk's numbers bit for bit, for
every op of the op table, in float64 and float32, with broadcasting, masks and
inputs that lead nowhere; and it must not run where a recorder listens."""
import numpy as np
import pytest

import minitape as mt
from minitape.core import backward
from test_ops_gradients import ALL_CASES

_rng = np.random.default_rng(32)


def _walks(fn, args, dtype):
    """(plain gradients, tensor-walk gradients) of sum(w * fn(xs)) for each x."""
    xs = [mt.constant(a.astype(dtype)) for a in args]
    with mt.GradientTape(persistent=True) as tape:
        for x in xs:
            tape.watch(x)
        try:
            y = fn(*xs)
        except TypeError:  # a row written for float64 inputs (a cast to float64, say)
            pytest.skip("the row takes float64 inputs only")
        y = y[0] if isinstance(y, (list, tuple)) else y
        w = mt.constant(_rng.uniform(0.5, 1.5, y.shape).astype(y.dtype)) \
            if np.dtype(y.dtype).kind in "fc" else None
        loss = mt.reduce_sum(y * w) if w is not None else None
    if loss is None:
        pytest.skip("an integer result has no gradient")
    walk = backward.BackwardPass(tape, [loss], [mt.ones_like(loss)], xs, plain=True)
    assert walk.plain  # nothing records here
    plain = walk.run()
    tensors = tape.backward_pass(loss, xs).run()
    return [plain.get(x._id) for x in xs], [tensors.get(x._id) for x in xs]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fn, args, check_kwargs", ALL_CASES)
def test_the_plain_walk_gives_the_tensor_walks_numbers(fn, args, check_kwargs, dtype):
    with np.errstate(all="ignore"):
        plain, tensors = _walks(fn, args, dtype)
    for p, t in zip(plain, tensors):
        assert (p is None) == (t is None)
        if p is not None:
            assert p.dtype == t.dtype and p.shape == t.shape
            np.testing.assert_array_equal(p.numpy(), t.numpy())


@pytest.mark.parametrize("x", [[0.0, 1.0, -2.0], [np.inf, 0.0, np.nan]])
def test_masks_inputs_that_lead_nowhere_and_broadcasting_on_values(x):
    """y = sqrt(x) * c + x * k: a mask where the upstream is 0 (sqrt at 0), a
    constant c broadcast from (1,), and k leading nowhere."""
    x = mt.constant(np.array(x))
    c, k = mt.constant([0.0], mt.float64), mt.constant(3.0, mt.float64)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = mt.reduce_sum(mt.sqrt(x) * c + x * k)
    plain = tape.gradient(y, [x, c])
    tensors = tape.backward_pass(y, [x, c]).run()
    np.testing.assert_array_equal(plain[0].numpy(), tensors[x._id].numpy())
    assert plain[1] is None and c._id not in tensors  # c is not watched


def test_no_plain_walk_where_a_recorder_listens():
    """Under a recording tape the walk records its rules (second derivatives)."""
    x = mt.constant(0.5)
    with mt.GradientTape() as outer:
        outer.watch(x)
        with mt.GradientTape() as inner:
            inner.watch(x)
            y = mt.sin(x) * x
        walk = backward.BackwardPass(inner, [y], [mt.ones_like(y)], [x], plain=True)
        assert not walk.plain
        g = inner.gradient(y, x)
    assert isinstance(g, mt.Tensor)
    np.testing.assert_allclose(outer.gradient(g, x).numpy(),
                               2 * np.cos(0.5) - 0.5 * np.sin(0.5), rtol=1e-6)


def test_a_rule_registered_again_loses_its_old_plain_twin():
    """Re-running a definition replaces its rule; a plain twin made for the old
    rule must not outlive it (the walk would run the old rule on values)."""
    from minitape.core import registry

    def rule(op, g):
        return g
    rule.plain = lambda op, g, wanted: (g,)
    try:
        registry.RegisterGradient("PlainTwinProbe", batch_safe=True)(rule)
        probe = mt.core.tape_entries.Operation("PlainTwinProbe", (), ())
        assert registry.lookup_plain(probe) is rule.plain
        del rule.plain
        registry.RegisterGradient("PlainTwinProbe", batch_safe=True)(rule)
        assert registry.lookup_plain(probe) is None
    finally:
        registry.unregister("PlainTwinProbe")
