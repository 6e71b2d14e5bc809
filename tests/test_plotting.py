"""The shared plotting helpers draw the data they are given (checked on the
Axes they return, not on pixels)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import minitape as mt  # noqa: E402
from minitape import plotting  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_plotting_is_not_imported_by_minitape():
    import subprocess
    import sys
    code = ("import sys, minitape; "
            "print('matplotlib' in sys.modules, 'minitape.plotting' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


def test_imshow_zero_center_symmetric_scale_and_data():
    image = mt.constant([[1.0, -3.0], [2.0, 0.5]])
    ax = plotting.imshow_zero_center(image)
    shown = ax.images[-1]
    np.testing.assert_array_equal(shown.get_array(), image.numpy())
    assert shown.get_clim() == (-3.0, 3.0)
    assert shown.get_cmap().name == "seismic"
    assert len(ax.figure.axes) == 2  # the image and its colour bar


def test_imshow_zero_center_uses_given_axes_and_kwargs():
    fig, ax = plt.subplots()
    out = plotting.imshow_zero_center(np.eye(3), ax=ax, extent=[0, 3, 3, 0])
    assert out is ax
    assert list(ax.images[-1].get_extent()) == [0, 3, 3, 0]


def test_imshow_zero_center_all_zero_image():
    ax = plotting.imshow_zero_center(np.zeros((2, 2)))
    assert ax.images[-1].get_clim() == (-1.0, 1.0)


def _block_diagonal(batch=3, outs=2, ins=4, seed=0):
    rng = np.random.default_rng(seed)
    j = np.zeros((batch, outs, batch, ins), np.float32)
    for b in range(batch):
        j[b, :, b, :] = rng.normal(size=(outs, ins))
    return j


def test_patches_image_layout_follows_the_guide():
    j = _block_diagonal()
    image, extent = plotting.patches_image(j)
    assert image.shape == (2 * 5, 4 * 5)  # outs * (batch + 2), ins * (batch + 2)
    assert extent == [-0.5, 3.5, 1.5, -0.5]
    image = image.numpy()
    lim = np.abs(j).max()
    for k in range(2):
        for i in range(4):
            patch = image[k * 5:(k + 1) * 5, i * 5:(i + 1) * 5]
            # the border is -lim, the inside is the (batch, batch) slice j[:, k, :, i]
            assert np.all(patch[0] == -lim) and np.all(patch[-1] == -lim)
            assert np.all(patch[:, 0] == -lim) and np.all(patch[:, -1] == -lim)
            np.testing.assert_array_equal(patch[1:-1, 1:-1], j[:, k, :, i])


def test_plot_as_patches_diagonal_for_independent_rows():
    j = _block_diagonal()
    ax = plotting.plot_as_patches(mt.constant(j))
    image = np.asarray(ax.images[-1].get_array())
    inside = image[1:4, 1:4]  # patch (out 0, in 0)
    assert np.count_nonzero(inside - np.diag(np.diag(inside))) == 0
    lim = np.abs(j).max()
    assert ax.images[-1].get_clim() == (-lim, lim)


def test_plot_as_patches_rejects_wrong_rank():
    with pytest.raises(ValueError, match="batch, outs, batch, ins"):
        plotting.plot_as_patches(np.zeros((3, 4)))


def test_plot_sigmoid_jacobian_lines_and_title():
    x = np.linspace(-10, 10, 201)
    y = 1 / (1 + np.exp(-(x + 2)))
    ax = plotting.plot_sigmoid_jacobian(x, y, y * (1 - y), delta=2.0)
    y_line, dy_line = ax.lines[0], ax.lines[1]
    assert y_line.get_label() == "y" and dy_line.get_label() == "dy/dx"
    np.testing.assert_allclose(y_line.get_ydata(), y)
    np.testing.assert_allclose(dy_line.get_xdata(), x)
    assert ax.get_title() == "y = sigmoid(x + delta), delta = 2.00"
    assert ax.lines[2].get_xdata()[0] == -2.0  # the marker at x = -delta
    assert ax.get_ylim() == (-0.05, 1.05)
    assert ax.get_xlabel() == "x"


def test_plot_newton_losses_before_after_and_steps():
    ax = plotting.plot_newton_losses([0.5, 0.1], title="one step")
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [0.5, 0.1])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["before", "after"]
    assert ax.get_title() == "one step"
    ax = plotting.plot_newton_losses([0.5, 0.2, 0.1, 0.05])
    np.testing.assert_allclose(ax.lines[0].get_xdata(), [0, 1, 2, 3])
    assert ax.get_xlabel() == "Newton step (0 = start)"
    assert ax.get_yscale() == "log"  # points after step 1 stay off the x axis


def test_plot_training_histories_two_panels():
    histories = {0.0: {"task": [1, 0.5, 0.2], "norm": [3, 3.1, 3.2]},
                 0.1: {"task": [1, 0.6, 0.4], "norm": [3, 2, 1]}}
    ax_task, ax_norm = plotting.plot_training_histories(histories)
    assert [ln.get_label() for ln in ax_norm.lines] == ["weight = 0", "weight = 0.1"]
    # notebook 06: "The faint curves are the unpenalised run for comparison"
    baseline, penalised = ax_norm.lines
    assert baseline.get_linestyle() == "--" and penalised.get_linestyle() == "-"
    assert baseline.get_color() == "0.55" and penalised.get_color() != "0.55"
    np.testing.assert_allclose(ax_norm.lines[1].get_ydata(), [3, 2, 1])
    np.testing.assert_allclose(ax_task.lines[0].get_ydata(), [1, 0.5, 0.2])


def test_plot_batch_row_image_and_bars():
    j = _block_diagonal()
    jb = np.einsum("bxby->bxy", j)
    ax_img, ax_bar = plotting.plot_batch_row(j, jb, row=1, unit=0)
    np.testing.assert_array_equal(ax_img.images[-1].get_array(), j[1, 0])
    per_example, given = ax_bar.containers
    np.testing.assert_allclose([p.get_height() for p in per_example], j[1, 0, 1, :])
    np.testing.assert_allclose([p.get_height() for p in given], jb[1, 0, :])
    assert ax_img.get_title() == "d y[1, 0] / d x"
