"""The explorers of notebooks 06-09, driven headless: set a control's value on
the `interactive` and read what the callback computed (`widget.data`)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import minitape as mt  # noqa: E402
from minitape.widgets import jacobians as jw  # noqa: E402

pytest.importorskip("ipywidgets")


def _control(widget, description):
    return next(c for c in widget.children if getattr(c, "description", None) == description)


def test_sigmoid_curves_match_the_formula():
    x, y, dy = jw.sigmoid_curves(1.5)
    assert x.shape == y.shape == dy.shape == (201,)
    s = 1 / (1 + np.exp(-(x + 1.5)))
    np.testing.assert_allclose(y, s, atol=1e-6)
    np.testing.assert_allclose(dy, s * (1 - s), atol=1e-6)


def test_sigmoid_explorer_delta_slider_shifts_the_curves():
    import ipywidgets as widgets
    w = jw.sigmoid_explorer()
    slider = _control(w, "delta")
    assert isinstance(slider, widgets.FloatSlider)
    assert w.data["delta"] == 0.0 and w.data["peak_x"] == 0.0
    y0 = w.data["ax"].lines[0].get_ydata().copy()
    slider.value = 2.0
    assert w.data["delta"] == 2.0
    assert w.data["peak_x"] == -2.0  # the slope peaks where x + delta = 0
    ax = w.data["ax"]
    assert ax.get_title() == "y = sigmoid(x + delta), delta = 2.00"
    y2 = ax.lines[0].get_ydata()
    assert not np.allclose(y0, y2)
    np.testing.assert_allclose(y2[:-20], y0[20:], atol=1e-6)  # shifted by 2 = 20 grid steps
    assert np.max(ax.lines[1].get_ydata()) == pytest.approx(0.25, abs=1e-6)
    assert plt.get_fignums() == []  # each redraw frees its figure


@pytest.fixture
def regulariser_setup():
    mt.random.set_seed(42)
    x = mt.random.normal([7, 5])
    layer = mt.layers.Dense(10, activation=mt.nn.relu)
    layer(x)
    targets = mt.random.uniform([7, 10])
    return layer, x, targets


def test_training_with_penalty_leaves_the_layer_alone(regulariser_setup):
    layer, x, targets = regulariser_setup
    before = layer.kernel.numpy().copy()
    h = jw.train_with_input_gradient_penalty(layer, x, targets, 0.05, steps=5)
    assert len(h["task"]) == len(h["norm"]) == 6
    np.testing.assert_array_equal(layer.kernel.numpy(), before)


def test_regulariser_explorer_larger_weight_smaller_input_gradient(regulariser_setup):
    layer, x, targets = regulariser_setup
    w = jw.regulariser_explorer(layer, x, targets, steps=30)
    slider = _control(w, "weight")
    norms, tasks = [], []
    for weight in (0.0, 0.05, 0.1, 0.2):
        slider.value = weight
        assert w.data["weight"] == weight
        norms.append(w.data["final_norm"])
        tasks.append(w.data["final_task"])
    assert norms == sorted(norms, reverse=True) and norms[-1] < 0.5 * norms[0]
    assert tasks[-1] > tasks[0]  # the price: a worse fit
    # with a nonzero weight, the weight-0 baseline is drawn too
    ax_task, ax_norm = w.data["axes"]
    assert [ln.get_label() for ln in ax_norm.lines] == ["weight = 0", "weight = 0.2"]


@pytest.fixture
def newton_setup():
    mt.random.set_seed(42)
    x = mt.random.normal([7, 5])
    layer1 = mt.layers.Dense(8, activation=mt.nn.relu)
    layer2 = mt.layers.Dense(6, activation=mt.nn.relu)
    layer2(layer1(x))
    return x, layer1.kernel.numpy().copy(), layer1, layer2


def test_newton_losses_matches_the_guide_step(newton_setup):
    x, k0, layer1, layer2 = newton_setup
    losses = jw.newton_losses(x, k0, layer1, layer2, eps=1e-3, steps=1)
    # the guide's step, written out
    with mt.GradientTape() as t2:
        with mt.GradientTape() as t1:
            loss = mt.reduce_mean(layer2(layer1(x)) ** 2)
        g = t1.gradient(loss, layer1.kernel)
    h = t2.jacobian(g, layer1.kernel)
    n = mt.reduce_prod(layer1.kernel.shape)
    update = mt.linalg.solve(mt.reshape(h, [n, n]) + mt.eye(40) * 1e-3, mt.reshape(g, [n, 1]))
    layer1.kernel.assign_sub(mt.reshape(update, layer1.kernel.shape))
    after = float(mt.reduce_mean(layer2(layer1(x)) ** 2))
    assert losses[0] == pytest.approx(float(loss), rel=1e-6)
    assert losses[1] == pytest.approx(after, rel=1e-4, abs=1e-7)
    assert losses[1] < losses[0]


def test_newton_explorer_eps_and_steps(newton_setup):
    x, k0, layer1, layer2 = newton_setup
    w = jw.newton_explorer(x, k0, layer1, layer2)
    eps, steps = _control(w, "eps"), _control(w, "steps")
    steps.value = 4
    assert len(w.data["losses"]) == 5
    np.testing.assert_allclose(w.data["ax"].lines[0].get_ydata(), w.data["losses"])
    eps.value = 1e-4
    small = w.data["losses"]
    eps.value = 10.0
    large = w.data["losses"]
    assert w.data["eps"] == 10.0
    # nearly pure Newton solves the local quadratic at once; heavy damping crawls
    assert small[1] < 0.1 * small[0]
    assert large[1] > 0.5 * large[0]
    assert all(b < a for a, b in zip(large, large[1:]))
    np.testing.assert_array_equal(layer1.kernel.numpy(), k0)


@pytest.fixture
def batch_setup():
    from minitape.figures import batch_example
    ex = batch_example()
    j, j_bn = ex["j"], ex["j_bn"]
    jb = mt.einsum("bxby->bxy", j)
    jb_bn = mt.reduce_sum(j_bn, axis=0)            # what batch_jacobian returns
    jb_bn = mt.transpose(jb_bn, [1, 0, 2])         # (batch, outs, ins)
    return j, jb, j_bn, jb_bn


def test_batch_row_explorer(batch_setup):
    j, jb, j_bn, jb_bn = batch_setup
    w = jw.batch_row_explorer(j, jb, j_bn, jb_bn)
    row, unit, bn = _control(w, "row"), _control(w, "unit"), _control(w, "batchnorm")
    assert (row.max, unit.max) == (6, 5)
    row.value, unit.value = 3, 2
    patch = w.data["patch"]
    assert patch.shape == (7, 5)
    assert np.count_nonzero(np.delete(patch, 3, axis=0)) == 0  # only row 3 matters
    assert w.data["max_error"] < 1e-6
    bn.value = True
    assert w.data["batchnorm"] is True
    assert np.count_nonzero(np.delete(w.data["patch"], 3, axis=0)) > 0
    assert w.data["max_error"] > 1e-2
    np.testing.assert_allclose(w.data["batch_jacobian"], np.asarray(jb_bn)[3, 2])
    ax_img, _ = w.data["axes"]
    np.testing.assert_array_equal(ax_img.images[-1].get_array(), w.data["patch"])
