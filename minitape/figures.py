"""Rebuild the README's figures from the same code the notebooks run.

    python -m minitape.figures [outdir]        # default: figures/

Each figure repeats its notebook's seeded computation (seed 42, the guide's
shapes) and draws it with the helpers in `minitape.plotting`, so the pictures
match the notebooks and there is no second copy of any plotting code:

    sigmoid_jacobian.png           07  y = sigmoid(x + delta) and dy/dx
    hessian_symmetry.png           08  the (40, 40) Hessian of layer1's kernel
    newton_step.png                08  the loss before and after one Newton step
    batch_slice.png                09  one (batch, batch) slice of the Jacobian
    batch_patches.png              09  all slices: diagonal
    batch_patches_batchnorm.png    09  with BatchNormalization: not diagonal

The builder returns the figures as well as saving them, so tests can check
their data (lines, images, titles) rather than pixels.
"""
import os
import sys

import minitape as mt

from .widgets.jacobians import newton_losses
from .plotting import (imshow_zero_center, label_axes, plot_as_patches, plot_hessian,
                       plot_newton_losses, plot_sigmoid_jacobian)

SEED = 42
NAMES = ("sigmoid_jacobian", "hessian_symmetry", "newton_step",
         "batch_slice", "batch_patches", "batch_patches_batchnorm")


def sigmoid_example():
    """07: the Jacobian of sigmoid(x + delta) with respect to the scalar delta."""
    x = mt.linspace(-10.0, 10.0, 200 + 1)
    delta = mt.Variable(0.0)
    with mt.GradientTape() as tape:
        y = mt.nn.sigmoid(x + delta)
    dy_dx = tape.jacobian(y, delta)
    return {"x": x, "y": y, "dy_dx": dy_dx}


def hessian_example(seed=SEED):
    """08: the Hessian of the loss with respect to layer1's kernel, and one
    Newton step (the notebook's draws in the notebook's order)."""
    mt.random.set_seed(seed)
    x = mt.random.normal([7, 5])
    inputs = x
    layer1 = mt.layers.Dense(8, activation=mt.nn.relu)
    layer2 = mt.layers.Dense(6, activation=mt.nn.relu)
    with mt.GradientTape() as t2:
        with mt.GradientTape() as t1:
            x = layer1(x)
            x = layer2(x)
            loss = mt.reduce_mean(x**2)
        g = t1.gradient(loss, layer1.kernel)
    h = t2.jacobian(g, layer1.kernel)
    n_params = mt.reduce_prod(layer1.kernel.shape)
    h_mat = mt.reshape(h, [n_params, n_params])
    losses = newton_losses(inputs, layer1.kernel.numpy(), layer1, layer2, eps=1e-3, steps=1)
    return {"h": h, "h_mat": h_mat, "losses": losses}


def batch_example(seed=SEED):
    """09: the full Jacobians of the two-layer ELU model and of the same model
    with BatchNormalization (the notebook's draws in the notebook's order)."""
    mt.random.set_seed(seed)
    x = mt.random.normal([7, 5])
    layer1 = mt.layers.Dense(8, activation=mt.nn.elu)
    layer2 = mt.layers.Dense(6, activation=mt.nn.elu)
    with mt.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        y = layer2(y)
    j = tape.jacobian(y, x)

    x = mt.random.normal([7, 5])
    layer1 = mt.layers.Dense(8, activation=mt.nn.elu)
    bn = mt.layers.BatchNormalization()
    layer2 = mt.layers.Dense(6, activation=mt.nn.elu)
    with mt.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        y = bn(y, training=True)
        y = layer2(y)
    j_bn = tape.jacobian(y, x)
    return {"j": j, "j_bn": j_bn}


def make_figures():
    """The six figures, by name (matplotlib Figure objects, not saved)."""
    import matplotlib.pyplot as plt

    figures = {}

    def new(name, figsize=(8, 6)):
        fig, ax = plt.subplots(figsize=figsize)
        figures[name] = fig
        return ax

    s = sigmoid_example()
    ax = plot_sigmoid_jacobian(s["x"], s["y"], s["dy_dx"], ax=new("sigmoid_jacobian"))
    ax.set_title("y = sigmoid(x + delta) and its Jacobian with respect to delta")

    hess = hessian_example()
    plot_hessian(hess["h_mat"], ax=new("hessian_symmetry"),
                 title="The (40, 40) Hessian of the loss w.r.t. layer1.kernel is symmetric")
    plot_newton_losses(hess["losses"], ax=new("newton_step", (6, 4)),
                       title="Loss before and after one Newton step (eps = 1e-3)")

    b = batch_example()
    ax = imshow_zero_center(b["j"][:, 0, :, 0], ax=new("batch_slice"),
                            label="dy[b, 0] / dx[b', 0]")
    label_axes(ax, "A (batch, batch) slice", "b', example of x (input feature 0)",
               "b, example of y (output unit 0)")
    ax = plot_as_patches(b["j"], ax=new("batch_patches"))
    ax.set_title("All (batch, batch) slices are diagonal")
    ax = plot_as_patches(b["j_bn"], ax=new("batch_patches_batchnorm"))
    ax.set_title("With BatchNormalization the slices are not diagonal:\n"
                 "don't use `batch_jacobian`")
    return figures


def build_figures(outdir="figures"):
    """Draw the six figures and save them as PNGs in `outdir`.

    Returns {name: (path, Figure)}; the figures are closed but their data
    stays readable. PNGs carry no `Software` chunk, so a matplotlib upgrade
    alone does not change the files' metadata.
    """
    import matplotlib
    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    os.makedirs(outdir, exist_ok=True)
    built = {}
    for name, fig in make_figures().items():
        path = os.path.join(outdir, f"{name}.png")
        fig.savefig(path, dpi=100, bbox_inches="tight", metadata={"Software": None})
        plt.close(fig)
        built[name] = (path, fig)
    return built


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    outdir = argv[0] if argv else "figures"
    for name, (path, _) in build_figures(outdir).items():
        print(path)


if __name__ == "__main__":
    main()
