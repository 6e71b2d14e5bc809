"""`python -m minitape.figures` rebuilds the README figures; check what they
show (lines, images, titles), not their pixels."""
import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from minitape import figures  # noqa: E402


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    outdir = tmp_path_factory.mktemp("figures")
    return outdir, figures.build_figures(str(outdir))


def _ax(built, name):
    return built[1][name][1].axes[0]


def _image(built, name):
    return np.asarray(_ax(built, name).images[-1].get_array())


def test_every_png_is_written(built):
    outdir, result = built
    assert sorted(result) == sorted(figures.NAMES)
    for name in figures.NAMES:
        path = outdir / f"{name}.png"
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert b"Software" not in data  # no matplotlib version in the metadata


def test_sigmoid_jacobian(built):
    ax = _ax(built, "sigmoid_jacobian")
    x, y = ax.lines[0].get_xdata(), ax.lines[0].get_ydata()
    dy = ax.lines[1].get_ydata()
    assert x.shape == y.shape == dy.shape == (201,)
    np.testing.assert_allclose(y, 1 / (1 + np.exp(-x)), atol=1e-6)
    np.testing.assert_allclose(dy, y * (1 - y), atol=1e-6)
    assert "Jacobian" in ax.get_title()


def test_hessian_symmetry(built):
    h = _image(built, "hessian_symmetry")
    assert h.shape == (40, 40)
    np.testing.assert_allclose(h, h.T, atol=1e-6)
    assert np.abs(h).max() > 0.01
    assert "symmetric" in _ax(built, "hessian_symmetry").get_title()


def test_newton_step_decreases_the_loss(built):
    ax = _ax(built, "newton_step")
    before, after = ax.lines[0].get_ydata()
    assert after < before
    assert "Newton" in ax.get_title()


def _patches(image, batch=7, outs=6, ins=5):
    size = batch + 2
    assert image.shape == (outs * size, ins * size)
    for k in range(outs):
        for i in range(ins):
            yield image[k * size + 1:(k + 1) * size - 1, i * size + 1:(i + 1) * size - 1]


def test_batch_slice_is_diagonal(built):
    s = _image(built, "batch_slice")
    assert s.shape == (7, 7)
    assert np.count_nonzero(s - np.diag(np.diag(s))) == 0
    assert np.count_nonzero(np.diag(s)) > 0
    assert _ax(built, "batch_slice").get_title() == "A (batch, batch) slice"


def test_batch_patches_are_all_diagonal(built):
    for patch in _patches(_image(built, "batch_patches")):
        assert np.count_nonzero(patch - np.diag(np.diag(patch))) == 0
    assert "diagonal" in _ax(built, "batch_patches").get_title()


def test_batchnorm_patches_are_not_diagonal(built):
    off = [np.abs(p - np.diag(np.diag(p))).max() for p in
           _patches(_image(built, "batch_patches_batchnorm"))]
    assert min(off) > 1e-3  # every (batch, batch) slice has off-diagonal terms
    ax = _ax(built, "batch_patches_batchnorm")
    assert "not diagonal" in ax.get_title()
    assert "batch_jacobian" in ax.get_title()  # the guide's warning, axis labels kept


def test_rebuild_is_deterministic(built, tmp_path):
    outdir, _ = built
    figures.build_figures(str(tmp_path))
    for name in ("hessian_symmetry", "batch_patches"):
        assert (tmp_path / f"{name}.png").read_bytes() == (outdir / f"{name}.png").read_bytes()


# --- every figure reads without the text (issue 19) ---------------------------------
# Checked on the figure objects: each plot's title (or the figure's), its x and
# y labels, a labelled colour bar for every image; diagrams drawn with the axis
# off need only a title.

def unreadable(fig):
    """What a reader of `fig` alone would miss: a list of complaints."""
    problems = []
    colorbars = {id(a) for a in fig.axes if getattr(a, "_colorbar", None) is not None}
    suptitle = fig._suptitle.get_text() if fig._suptitle is not None else ""
    for k, ax in enumerate(fig.axes):
        where = f"axes {k} ({ax.get_title() or 'untitled'})"
        if id(ax) in colorbars:
            cb = ax._colorbar
            label = ax.get_ylabel() if cb.orientation == "vertical" else ax.get_xlabel()
            if not label.strip():
                problems.append(f"{where}: colour bar without a label")
            continue
        titles = [ax.get_title(loc) for loc in ("left", "center", "right")]
        if not any(t.strip() for t in titles) and not suptitle.strip():
            problems.append(f"{where}: no title")
        if ax.axison:
            if not ax.get_xlabel().strip():
                problems.append(f"{where}: no x label")
            if not ax.get_ylabel().strip():
                problems.append(f"{where}: no y label")
        for image in ax.images:
            if not any(getattr(a, "_colorbar", None) is not None
                       and a._colorbar.mappable is image for a in fig.axes):
                problems.append(f"{where}: an image without a colour bar")
    return problems


def test_every_saved_figure_has_titles_labels_and_labelled_colour_bars(built):
    for name, (_, fig) in built[1].items():
        assert unreadable(fig) == [], name
    images = [name for name, (_, fig) in built[1].items() if fig.axes[0].images]
    assert sorted(images) == ["batch_patches", "batch_patches_batchnorm", "batch_slice",
                              "hessian_symmetry"]


def test_the_benchmark_figure_is_labelled_too(tmp_path):
    """figures/w6_jacobian_time.png comes from benchmarks/run.py."""
    import importlib.util
    from pathlib import Path
    spec = importlib.util.spec_from_file_location(
        "bench_run", Path(__file__).resolve().parent.parent / "benchmarks" / "run.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows = [{"workload": f"W6 m={m}", "system": s, "seconds": t * m} for m in (64, 4096)
            for s, t in (("minitape (auto)", 1e-6), ("minitape (reverse)", 1e-5))]
    fig = bench.plot_w6(rows, tmp_path / "w6.png")
    assert unreadable(fig) == []


def test_the_checker_finds_what_is_missing():
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.imshow(np.eye(2))
    assert unreadable(fig) == ["axes 0 (untitled): no title", "axes 0 (untitled): no x label",
                               "axes 0 (untitled): no y label",
                               "axes 0 (untitled): an image without a colour bar"]
    fig.colorbar(ax.images[0], ax=ax)
    fig.suptitle("t")
    ax.set(xlabel="x", ylabel="y")
    assert unreadable(fig) == ["axes 1 (untitled): colour bar without a label"]
    plt.close(fig)


def test_the_hessian_image_names_its_axes_and_colours(built):
    fig = built[1]["hessian_symmetry"][1]
    ax = fig.axes[0]
    assert "flattened kernel" in ax.get_xlabel() and "flattened kernel" in ax.get_ylabel()
    assert "loss" in ax.minitape_colorbar.ax.get_ylabel()


def _display_points(ax, line):
    return ax.transData.transform(np.column_stack([line.get_xdata(), line.get_ydata()]))


def _renderer(fig):
    """Draw `fig` (closed figures too) and return the renderer, for the
    layout's boxes in display units."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _labels_clear_of_line(ax):
    """Every annotation's box misses the curve (sampled along each segment)."""
    renderer = _renderer(ax.figure)
    points = _display_points(ax, ax.lines[0])
    samples = np.concatenate([np.linspace(a, b, 200) for a, b in zip(points[:-1], points[1:])]
                             + [points])
    for text in ax.texts:
        box = text.get_window_extent(renderer)
        inside = ((samples[:, 0] > box.x0) & (samples[:, 0] < box.x1)
                  & (samples[:, 1] > box.y0) & (samples[:, 1] < box.y1))
        assert not inside.any(), f"the label {text.get_text()!r} lies on the line"


@pytest.mark.parametrize("losses", [
    [0.21, 0.0005],                                  # the guide's one step
    [0.21, 0.0005, 2e-6, 1e-8, 1e-9],                # several steps
    [0.21, 0.3, 0.05, 0.06, 0.001],                  # a step that makes it worse
])
def test_newton_points_after_step_1_stand_clear_of_the_axis(losses):
    """Issue 19: on a linear axis every point after the first step sat on the x
    axis, and "0.0005" lay on the line. A log axis spreads them out."""
    import matplotlib.pyplot as plt
    from minitape.plotting import plot_newton_losses
    ax = plot_newton_losses(losses)
    assert ax.get_yscale() == "log"
    assert unreadable(ax.figure) == []
    _renderer(ax.figure)
    bottom = ax.transAxes.transform((0, 0))[1]
    top = ax.transAxes.transform((0, 1))[1]
    heights = _display_points(ax, ax.lines[0])[:, 1]
    assert (heights - bottom > 0.05 * (top - bottom)).all()  # none on the axis
    # and equal ratios are equal drops: steps a student can compare
    _labels_clear_of_line(ax)
    plt.close(ax.figure)


def test_the_saved_newton_figure(built):
    ax = built[1]["newton_step"][1].axes[0]
    assert ax.get_yscale() == "log"
    _labels_clear_of_line(ax)


# --- the explorers' first pictures --------------------------------------------------

@pytest.fixture(scope="module")
def explorer_figures():
    import minitape as mt
    from minitape.widgets import forward, jacobians as wj
    made = {}
    made["07 sigmoid"] = wj.sigmoid_explorer().data["ax"].figure
    mt.random.set_seed(42)
    layer = mt.layers.Dense(3, activation=mt.nn.relu)
    x = mt.random.normal([4, 2])
    targets = mt.random.normal([4, 3])
    layer(x)
    made["06 regulariser"] = wj.regulariser_explorer(layer, x, targets,
                                                     steps=5).data["axes"][0].figure
    mt.random.set_seed(42)
    inputs = mt.random.normal([7, 5])
    l1, l2 = mt.layers.Dense(8, activation=mt.nn.relu), mt.layers.Dense(6, activation=mt.nn.relu)
    l2(l1(inputs))
    made["08 newton"] = wj.newton_explorer(inputs, l1.kernel.numpy(), l1,
                                           l2).data["ax"].figure
    b = figures.batch_example()
    jb = np.stack([b["j"].numpy()[i, :, i, :] for i in range(7)])
    made["09 batch row"] = wj.batch_row_explorer(b["j"], jb, b["j_bn"],
                                                 jb).data["axes"][0].figure
    made["10 directions"] = forward.direction_explorer().data["ax"].figure
    return made


def test_every_explorer_figure_is_labelled(explorer_figures):
    for name, fig in explorer_figures.items():
        assert unreadable(fig) == [], name


def _overlapping_labels(fig):
    """Pairs of titles and axis labels (colour bars' too) whose boxes overlap."""
    renderer = _renderer(fig)
    texts = [t for ax in fig.axes for t in (ax.title, ax.xaxis.label, ax.yaxis.label)
             if t.get_text().strip()]
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    return [(a, b) for i, (a, box_a) in enumerate(boxes) for b, box_b in boxes[i + 1:]
            if box_a.overlaps(box_b)]


def test_no_label_lies_on_another(explorer_figures, built):
    """The 09 explorer's colour-bar label once sat on the bar panel's y label."""
    for name, fig in list(explorer_figures.items()) + [
            (n, f) for n, (_, f) in built[1].items()]:
        assert _overlapping_labels(fig) == [], name


def test_06_figure_title_clear_of_the_plot_titles(explorer_figures):
    fig = explorer_figures["06 regulariser"]
    renderer = _renderer(fig)
    top = fig._suptitle.get_window_extent(renderer)
    for ax in fig.axes:
        title = ax.title.get_window_extent(renderer)
        gap = (top.y0 - title.y1) / fig.dpi * 72  # points
        assert gap >= 4, f"the figure title crowds a plot title ({gap:.1f} pt apart)"


def test_09_legend_covers_no_bar(explorer_figures):
    fig = explorer_figures["09 batch row"]
    (ax_bar,) = [a for a in fig.axes if a.get_legend() is not None]
    bars = list(ax_bar.patches)
    assert len(bars) == 10  # two bars for each of the 5 input features
    renderer = _renderer(fig)
    legend = ax_bar.get_legend().get_window_extent(renderer)
    for bar in bars:
        assert not legend.overlaps(bar.get_window_extent(renderer))


def test_the_readme_describes_every_figure_it_shows():
    """Alt text that says what the picture shows (not just its name), for each
    figure the README embeds, and each embedded figure is one the builder makes."""
    import re
    from pathlib import Path
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    shown = re.findall(r"!\[([^\]]*)\]\(figures/([\w.]+)\.png\)", readme)
    assert sorted(name for _, name in shown) == sorted(figures.NAMES)
    for alt, name in shown:
        assert len(alt.split()) >= 10, f"{name}: alt text {alt!r} does not describe the figure"
