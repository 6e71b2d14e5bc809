"""Plotting helpers for the Jacobian, Hessian and batch-Jacobian notebooks.

The notebooks, the explorers in `minitape.widgets.jacobians` and the figure
builder (`python -m minitape.figures`) all draw with these functions, so a
picture is defined in exactly one place.

Every helper takes an optional matplotlib `ax` (a new figure is made when it is
None) and returns the Axes it drew on, so tests can read the drawn data back
(`ax.lines[0].get_ydata()`, `ax.images[0].get_array()`, `ax.get_title()`).

matplotlib is imported inside the functions: `import minitape` never imports
it, and this module is not imported by `minitape/__init__.py`.
"""
import numpy as np

from . import ops


def _new_axes(ax, ncols=1, figsize=None):
    """`ax` itself, or the Axes of a fresh figure."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt
    _, ax = plt.subplots(1, ncols, figsize=figsize)
    return ax


# --- images centred on zero ----------------------------------------------------

def imshow_zero_center(image, ax=None, label="value (white = 0)", **kwargs):
    """Show a matrix with a colour scale centred on zero.

    White is 0, red is positive, blue is negative, and the scale runs from
    -max|image| to +max|image|, so equal magnitudes get equal colour strength
    whatever their sign. `label` names the colour bar (what a colour means,
    so the picture reads without the text). Extra keyword arguments go to
    `imshow` (the guide passes `extent`). Returns the Axes; the drawn array is
    `ax.images[-1].get_array()`, the colour bar `ax.minitape_colorbar`.
    """
    ax = _new_axes(ax)
    image = ops.convert_to_tensor(image)
    lim = float(ops.reduce_max(abs(image))) if image.size else 0.0
    lim = lim or 1.0  # an all-zero image: any symmetric scale will do
    shown = ax.imshow(image.numpy(), vmin=-lim, vmax=lim, cmap="seismic", **kwargs)
    ax.minitape_colorbar = ax.figure.colorbar(shown, ax=ax, label=label)
    return ax


def label_axes(ax, title=None, xlabel=None, ylabel=None):
    """Set whichever of the title and axis labels are given; returns the Axes."""
    if title is not None:
        ax.set_title(title)
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    return ax


def plot_hessian(h_mat, ax=None, title=None):
    """A flattened (n, n) Hessian as a zero-centred image, every part labelled:
    row i and column j are entries of the flattened kernel, the colour is
    d2 loss / (dw_i dw_j). Returns the Axes."""
    ax = imshow_zero_center(h_mat, ax=ax, label="d\u00b2 loss / (dw_i dw_j)")
    return label_axes(ax, title or "Hessian of the loss (symmetric about the diagonal)",
                      "j, entry of the flattened kernel", "i, entry of the flattened kernel")


def patches_image(j):
    """The image `plot_as_patches` draws, built with minitape ops as in the guide.

    `j` has shape (batch, outs, batch, ins). Reordering the axes to
    (outs, batch, ins, batch) puts each (batch, batch) slice next to its
    neighbours; a one-pixel border of value -max|j| separates the slices; a
    reshape lays them out as one (outs * (batch + 2), ins * (batch + 2)) image.
    Returns (image, extent) where `extent` puts slice (out k, in i) at the
    plot coordinates (i, k).
    """
    j = ops.convert_to_tensor(j)
    if j.ndim != 4:
        raise ValueError(f"plot_as_patches: expected a (batch, outs, batch, ins) "
                         f"Jacobian, got shape {j.shape}")
    # Reorder axes so the diagonals will each form a contiguous patch.
    j = ops.transpose(j, [1, 0, 3, 2])
    # Pad in between each patch with the most negative value of the colour scale.
    lim = ops.reduce_max(abs(j))
    j = ops.pad(j, [[0, 0], [1, 1], [0, 0], [1, 1]], constant_values=-lim)
    # Reshape to form a single image.
    s = j.shape
    image = ops.reshape(j, [s[0] * s[1], s[2] * s[3]])
    extent = [-0.5, s[2] - 0.5, s[0] - 0.5, -0.5]
    return image, extent


def plot_as_patches(j, ax=None):
    """Draw every (batch, batch) slice of a (batch, outs, batch, ins) Jacobian
    as one patch: rows of patches are output units, columns are input features.
    When examples are independent every patch is diagonal. The axes and the
    colour bar say so. Returns the Axes."""
    image, extent = patches_image(j)
    ax = imshow_zero_center(image, ax=ax, extent=extent,
                            label="dy[b, unit] / dx[b', feature]")
    ax.set_xlabel("input feature (in each patch: example b' across)")
    ax.set_ylabel("output unit (in each patch: example b down)")
    return ax


# --- curves --------------------------------------------------------------------

def plot_sigmoid_jacobian(x, y, dy_dx, ax=None, delta=None):
    """The guide's sigmoid picture: y = sigmoid(x + delta) and its Jacobian
    with respect to the scalar `delta`, both against x.

    With `delta` given, the title shows it and a dotted line marks x = -delta,
    where the sigmoid crosses 0.5 and its slope peaks at 0.25. The y-limits
    are fixed so that moving `delta` moves the curves, not the axes.
    Returns the Axes (lines[0] is y, lines[1] is dy/dx).
    """
    ax = _new_axes(ax)
    x = np.asarray(x)
    ax.plot(x, np.asarray(y), label="y")
    ax.plot(x, np.asarray(dy_dx), label="dy/dx")
    if delta is not None:
        delta = float(delta)
        ax.axvline(-delta, color="gray", linestyle=":", label="x = -delta")
        ax.set_title(f"y = sigmoid(x + delta), delta = {delta:.2f}")
    ax.set_xlim(float(x.min()), float(x.max()))
    ax.set_ylim(-0.05, 1.05)
    ax.legend(loc="upper left")
    ax.set_xlabel("x")
    ax.set_ylabel("y, and dy/d(delta)")
    if not ax.get_title():
        ax.set_title("y = sigmoid(x + delta) and its Jacobian")
    return ax


def plot_newton_losses(losses, ax=None, title=None):
    """Loss after each Newton step (step 0 is the starting point).

    The loss axis is logarithmic: one Newton step divides this loss by about
    a thousand, so on a linear axis every point after the first step would
    sit on the x axis; on a log axis each step's improvement is a visible
    drop. (A loss of exactly 0 switches to a symmetric-log axis.) Each point
    is labelled with its value on the side away from the next segment, so no
    label lies on the line. With exactly two values the ticks read "before"
    and "after". Returns the Axes; the curve is `ax.lines[0]`.
    """
    ax = _new_axes(ax)
    losses = np.asarray(losses, dtype=float)
    steps = np.arange(len(losses))
    ax.plot(steps, losses, marker="o")
    finite = losses[np.isfinite(losses)]
    positive = finite[finite > 0]
    if len(positive) == len(finite) and len(positive):
        ax.set_yscale("log")
        ax.set_ylim(positive.min() / 5, positive.max() * 5)
    elif len(finite):
        ax.set_yscale("symlog", linthresh=float(positive.min()) if len(positive) else 1e-8)
    for k, (s, value) in enumerate(zip(steps, losses)):
        rising = k + 1 < len(losses) and losses[k + 1] > value
        # the segment to the next point goes down-right (up-right when rising):
        # put the label on the other side, right of the point (the previous
        # segment arrives from the left)
        ax.annotate(f"{value:.3g}", (s, value), textcoords="offset points",
                    xytext=(6, -6 if rising else 6), ha="left",
                    va="top" if rising else "bottom", fontsize=9)
    if len(losses) == 2:
        ax.set_xticks([0, 1], ["before", "after"])
        ax.set_xlim(-0.5, 1.5)
        ax.set_xlabel("one Newton step")
    else:
        ax.set_xticks(steps)
        ax.set_xlim(-0.5, len(losses) - 0.5)
        ax.set_xlabel("Newton step (0 = start)")
    ax.set_ylabel("loss (mean squared output, log scale)")
    ax.set_title(title or "Loss per Newton step")
    return ax


def plot_training_histories(histories, axes=None):
    """Training with an input-gradient penalty, one curve per penalty weight.

    `histories` maps a weight to a dict with lists `task` (the data loss) and
    `norm` (the input-gradient norm), one value per step. Left panel: the
    data loss; right panel: the input-gradient norm. The run without the
    penalty (weight 0) is drawn faint and dashed, for comparison, when other
    weights are shown. Returns the two Axes.
    """
    if axes is None:
        axes = _new_axes(None, ncols=2, figsize=(11, 4))
    ax_task, ax_norm = axes
    for weight, h in histories.items():
        label = f"weight = {weight:g}"
        faint = weight == 0 and len(histories) > 1
        style = {"color": "0.55", "linestyle": "--"} if faint else {}
        ax_task.plot(np.arange(len(h["task"])), h["task"], label=label, **style)
        ax_norm.plot(np.arange(len(h["norm"])), h["norm"], label=label, **style)
    ax_task.set_title("data loss (mean squared error)")
    ax_norm.set_title("input-gradient norm |d out / d x|")
    ax_task.set_ylabel("mean squared error")
    ax_norm.set_ylabel("|d out / d x|")
    for ax in axes:
        ax.set_xlabel("training step")
        ax.set_ylim(bottom=0)
        ax.legend()
    return axes


def plot_batch_row(j, jb, row, unit, axes=None, title=None):
    """What one output y[row, unit] depends on, and what batch_jacobian says.

    Left: the image of j[row, unit], shape (batch, ins): the gradient of that
    one output with respect to every input row (the selected row is outlined).
    Right: the true per-example gradient j[row, unit, row, :] next to
    batch_jacobian's jb[row, unit, :]. Returns the two Axes.
    """
    import matplotlib.patches as mpatches

    if axes is None:
        axes = _new_axes(None, ncols=2, figsize=(11, 4))
    ax_img, ax_bar = axes
    j, jb = np.asarray(j), np.asarray(jb)
    imshow_zero_center(j[row, unit], ax=ax_img, label=f"dy[{row}, {unit}] / dx")
    ins = j.shape[-1]
    ax_img.add_patch(mpatches.Rectangle((-0.5, row - 0.5), ins, 1, fill=False,
                                        edgecolor="black", linewidth=2))
    ax_img.set_xlabel("input feature")
    ax_img.set_ylabel("batch row of x")
    ax_img.set_title(f"d y[{row}, {unit}] / d x")
    true = j[row, unit, row, :]
    given = jb[row, unit, :]
    width = 0.4
    features = np.arange(ins)
    ax_bar.bar(features - width / 2, true, width, label=f"per-example  j[{row}, {unit}, {row}, :]")
    ax_bar.bar(features + width / 2, given, width, label=f"batch_jacobian  jb[{row}, {unit}, :]")
    ax_bar.axhline(0, color="black", linewidth=0.8)
    ax_bar.set_xticks(features)
    ax_bar.set_xlabel("input feature")
    ax_bar.set_ylabel(f"dy[{row}, {unit}] / dx[{row}, feature]")
    # below the panel, where it covers no bar whatever their heights
    ax_bar.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1, fontsize=9,
                  frameon=False)
    ax_bar.set_title(title or "per-example gradient vs batch_jacobian")
    return axes


# --- 10: forward mode -----------------------------------------------------------------

def plot_direction_work(forward, reverse, auto, ax=None, title=None):
    """Two bars (log scale): the numbers computed by a forward-mode and a
    reverse-mode Jacobian; the bar of the direction "auto" picks is solid, the
    other hatched. Returns the Axes; the bars are `ax.patches`."""
    ax = _new_axes(ax)
    heights = [forward, reverse]
    bars = ax.bar(["forward", "reverse"], heights, color=["C0", "C1"])
    for bar, name, value in zip(bars, ["forward", "reverse"], heights):
        if name != auto:
            bar.set_alpha(0.35)
            bar.set_hatch("//")
        ax.annotate(f"{value:,}", (bar.get_x() + bar.get_width() / 2, value),
                    textcoords="offset points", xytext=(0, 4), ha="center")
    ax.set_yscale("log")
    ax.set_ylim(1, max(heights) * 10)
    ax.set_ylabel("numbers computed (log scale)")
    ax.set_xlabel("direction (solid: the one auto picks)")
    ax.set_title(title or "Jacobian: forward vs reverse mode")
    ax.text(0.02, 0.95, f"auto picks {auto}", transform=ax.transAxes, va="top")
    return ax


def plot_scaling(x, series, ax=None, xlabel=None, ylabel=None, title=None):
    """Several costs against a size, on log-log axes: `series` maps a label to
    one value per entry of `x` (None where not measured). Returns the Axes;
    the curves are `ax.lines`, in the order of `series`."""
    ax = _new_axes(ax)
    for label, values in series.items():
        points = [(a, b) for a, b in zip(x, values) if b is not None]
        ax.plot(*zip(*points), marker="o", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.set_xlabel(xlabel or "size")
    ax.set_ylabel(ylabel or "cost")
    if title:
        ax.set_title(title)
    ax.legend()
    return ax
