"""Explorers for the higher-order, Jacobian, Hessian and batch-Jacobian notebooks.

Each explorer is one line in a notebook and returns an ipywidgets
`interactive`: moving a control re-runs the callback, which computes with
minitape and redraws with `minitape.plotting`. The callback also keeps what it
computed in `widget.data` (a dict), so tests can set a control's `.value` and
read the result without a browser.

    sigmoid_explorer()                                   # 07: slide `delta`
    regulariser_explorer(layer, x, targets)              # 06: penalty `weight`
    newton_explorer(inputs, kernel, layer1, layer2)      # 08: `eps` and `steps`
    batch_row_explorer(j, jb, j_bn, jb_bn)               # 09: `row`, `unit`, `batchnorm`

The computations the explorers run (`sigmoid_curves`,
`train_with_input_gradient_penalty`, `newton_losses`) need only NumPy and
minitape; ipywidgets and matplotlib are imported when an explorer is made.
Only core widgets are used, so the explorers work with ipywidgets 7.7 (Colab)
and 8.
"""
import numpy as np

from .. import nn, ops
from ..tape import GradientTape
from ..core.tensor import Variable
from .compat import interactive_with_data, show_figure


# --- 07: the sigmoid and its Jacobian with respect to a scalar -------------------

def sigmoid_curves(delta=0.0, x=None):
    """x, y = sigmoid(x + delta) and the Jacobian dy/d(delta), as NumPy arrays.

    The same computation as the guide's: a Variable `delta`, one tape, and
    `tape.jacobian(y, delta)` of shape (201,).
    """
    x = ops.linspace(-10.0, 10.0, 200 + 1) if x is None else ops.convert_to_tensor(x)
    delta = Variable(float(delta))
    with GradientTape() as tape:
        y = nn.sigmoid(x + delta)
    dy_dx = tape.jacobian(y, delta)
    return x.numpy(), y.numpy(), dy_dx.numpy()


def sigmoid_explorer(delta=0.0):
    """A `delta` slider: y = sigmoid(x + delta) and dy/dx slide along x together.

    `widget.data` holds x, y, dy_dx, delta, peak_x (where dy/dx is largest)
    and the Axes drawn.
    """
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    from ..plotting import plot_sigmoid_jacobian

    def draw(delta):
        x, y, dy_dx = sigmoid_curves(delta)
        fig, ax = plt.subplots(figsize=(8, 5))
        plot_sigmoid_jacobian(x, y, dy_dx, ax=ax, delta=delta)
        show_figure(fig)
        return {"delta": float(delta), "x": x, "y": y, "dy_dx": dy_dx,
                "peak_x": float(x[np.argmax(dy_dx)]), "ax": ax}

    slider = widgets.FloatSlider(value=float(delta), min=-5.0, max=5.0, step=0.5,
                                 description="delta")
    return interactive_with_data(draw, delta=slider)


# --- 06: training with an input-gradient penalty ---------------------------------

def _dense(layer, kernel, bias, x):
    y = ops.matmul(x, kernel) + bias
    return layer.activation(y) if layer.activation is not None else y


def train_with_input_gradient_penalty(layer, x, targets, weight, steps=100,
                                      learning_rate=0.1):
    """Gradient descent on  mean((layer(x) - targets)**2) + weight * |g|,
    where g = d sum(layer(x)**2) / dx is the guide's input gradient.

    Trains copies of the layer's kernel and bias (the layer is not changed).
    Returns {"task": [...], "norm": [...]}: the data loss and |g| before each
    step and after the last one (steps + 1 values each).
    """
    kernel = Variable(layer.kernel.numpy())
    bias = Variable(layer.bias.numpy())
    x = ops.convert_to_tensor(x)
    targets = ops.convert_to_tensor(targets)

    def input_gradient_norm():
        with GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            out = ops.reduce_sum(_dense(layer, kernel, bias, x) ** 2)
        return ops.norm(t1.gradient(out, x))

    history = {"task": [], "norm": []}
    for _ in range(steps):
        with GradientTape() as tape:
            task_loss = ops.reduce_mean((_dense(layer, kernel, bias, x) - targets) ** 2)
            penalty = input_gradient_norm()
            total = task_loss + weight * penalty
        grads = tape.gradient(total, [kernel, bias])
        history["task"].append(float(task_loss))
        history["norm"].append(float(penalty))
        for v, g in zip([kernel, bias], grads):
            v.assign_sub(learning_rate * g)
    history["task"].append(float(ops.reduce_mean((_dense(layer, kernel, bias, x) - targets) ** 2)))
    history["norm"].append(float(input_gradient_norm()))
    return history


def regulariser_explorer(layer, x, targets, steps=100, learning_rate=0.1):
    """A `weight` slider for the input-gradient penalty: train from the layer's
    current values and compare with training without the penalty (weight 0).

    The slider stops at 0.2: beyond it this layer's ReLUs all switch off, the
    input gradient becomes exactly zero, and the norm's derivative at zero is
    0/0 (NaN). `widget.data` holds weight, the histories, final_norm,
    final_task and the Axes.
    """
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    from ..plotting import plot_training_histories

    baseline = train_with_input_gradient_penalty(layer, x, targets, 0.0, steps,
                                                 learning_rate)

    def draw(weight):
        history = train_with_input_gradient_penalty(layer, x, targets, weight, steps,
                                                    learning_rate)
        histories = {0.0: baseline} if weight else {}
        histories[float(weight)] = history
        # constrained layout keeps the figure's title clear of the two panels' titles
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), constrained_layout=True)
        plot_training_histories(histories, axes=axes)
        fig.suptitle(f"after {steps} steps: data loss {history['task'][-1]:.4f}, "
                     f"input-gradient norm {history['norm'][-1]:.4f}")
        show_figure(fig)
        return {"weight": float(weight), "histories": histories,
                "final_task": history["task"][-1], "final_norm": history["norm"][-1],
                "axes": axes}

    slider = widgets.FloatSlider(value=0.05, min=0.0, max=0.2, step=0.01,
                                 description="weight", continuous_update=False)
    return interactive_with_data(draw, weight=slider)


# --- 08: Newton's method with the Hessian of one kernel ---------------------------

def newton_losses(inputs, kernel, layer1, layer2, eps=1e-3, steps=1):
    """Losses of `steps` damped Newton steps on layer1's kernel, as in the guide:

        loss = mean(layer2(layer1(inputs))**2)
        kernel -= solve(H + eps * I, g)      (H, g flattened to (n, n), (n, 1))

    starting from the kernel value `kernel`. A copy is updated; the layers are
    not changed. Returns steps + 1 losses (the first is the starting loss).
    """
    k = Variable(np.array(kernel, dtype=np.float32))
    inputs = ops.convert_to_tensor(inputs)

    def loss_fn():
        return ops.reduce_mean(layer2(_dense(layer1, k, layer1.bias, inputs)) ** 2)

    n = int(np.prod(k.shape))
    eye_eps = ops.eye(n) * eps
    losses = [float(loss_fn())]
    for _ in range(steps):
        with GradientTape() as t2:
            with GradientTape() as t1:
                loss = loss_fn()
            g = t1.gradient(loss, k)
        h = t2.jacobian(g, k)
        update = ops.solve(ops.reshape(h, [n, n]) + eye_eps, ops.reshape(g, [n, 1]))
        k.assign_sub(ops.reshape(update, k.shape))
        losses.append(float(loss_fn()))
    return losses


def newton_explorer(inputs, kernel, layer1, layer2):
    """Sliders for Newton's damping `eps` (log scale) and the number of `steps`;
    plots the loss after each step. Small eps: nearly the pure Newton step, which
    jumps to the minimum of the local quadratic. Large eps: H + eps*I is close
    to eps*I, so the step is about gradient / eps, a small gradient-descent step.
    `widget.data` holds eps, steps, losses and the Axes.
    """
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    from ..plotting import plot_newton_losses

    def draw(eps, steps):
        losses = newton_losses(inputs, kernel, layer1, layer2, eps=eps, steps=steps)
        fig, ax = plt.subplots(figsize=(8, 4))
        plot_newton_losses(losses, ax=ax, title=f"Newton steps with eps = {eps:.0e}")
        show_figure(fig)
        return {"eps": float(eps), "steps": int(steps), "losses": losses, "ax": ax}

    eps = widgets.FloatLogSlider(value=1e-3, base=10, min=-4, max=1, step=0.5,
                                 description="eps", continuous_update=False)
    steps = widgets.IntSlider(value=3, min=1, max=10, description="steps",
                              continuous_update=False)
    return interactive_with_data(draw, eps=eps, steps=steps)


# --- 09: one batch row, with and without BatchNormalization -----------------------

def batch_row_explorer(j, jb, j_bn, jb_bn):
    """Pick a batch `row` and an output `unit`, with or without `batchnorm`:
    see which input rows that one output depends on, and compare the true
    per-example gradient with what batch_jacobian returned.

    `j`, `j_bn` are full Jacobians (batch, outs, batch, ins); `jb`, `jb_bn` the
    batch_jacobians (batch, outs, ins). `widget.data` holds row, unit,
    batchnorm, patch (= j[row, unit]), per_example, batch_jacobian, max_error
    and the Axes.
    """
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    from ..plotting import plot_batch_row

    pairs = {False: (np.asarray(j), np.asarray(jb)),
             True: (np.asarray(j_bn), np.asarray(jb_bn))}
    batch, outs = pairs[False][0].shape[:2]

    def draw(row, unit, batchnorm):
        jj, jjb = pairs[bool(batchnorm)]
        per_example = jj[row, unit, row, :]
        given = jjb[row, unit, :]
        error = float(np.max(np.abs(per_example - given)))
        label = "with" if batchnorm else "without"
        # constrained layout keeps the colour bar's label clear of the bars' axis label
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), constrained_layout=True)
        plot_batch_row(jj, jjb, row, unit, axes=axes,
                       title=f"{label} BatchNormalization: max difference {error:.3f}")
        show_figure(fig)
        return {"row": int(row), "unit": int(unit), "batchnorm": bool(batchnorm),
                "patch": jj[row, unit], "per_example": per_example,
                "batch_jacobian": given, "max_error": error, "axes": axes}

    row = widgets.IntSlider(value=0, min=0, max=batch - 1, description="row")
    unit = widgets.IntSlider(value=0, min=0, max=outs - 1, description="unit")
    batchnorm = widgets.Checkbox(value=False, description="batchnorm")
    return interactive_with_data(draw, row=row, unit=unit, batchnorm=batchnorm)
