"""The explorer and the measurements of notebook 10 (forward mode).

    count_numbers(fn)                       # how much the ops inside fn computed
    jacobian_work(n, m, direction)          # ... for the Jacobian of tanh(W @ x)
    auto_direction(n, m)                    # the direction "auto" took for it
    second_order_work(k, method)            # ... for a Hessian or one Hessian-vector product
    jacobian_time(n, m, direction)          # the same two, in seconds (the fastest
    second_order_time(k, method)            #   of a few runs)
    jacobian_times(n, ms), second_order_times(ks)   # whole tables, runs interleaved
    direction_explorer(n=16, m=64)          # sliders n and m: forward vs reverse

"Work" here is the number of numbers that ops produce: every op outputs a
tensor, and we add up their sizes. It stands in for the floating-point
operations (FLOPs) done: an elementwise op does a few per number it outputs,
while a matrix product does as many multiply-adds per number as its inner
dimension, which the count leaves out. It is deterministic (timings vary from
run to run; these counts never do), and it shows what batching hides: a batch
of m one-hot rows through an op that makes a vector of 1,000 numbers makes
m * 1,000 of them.

The computations need only NumPy and minitape; ipywidgets and matplotlib are
imported when the explorer is made. Only core widgets are used, so it works
with ipywidgets 7.7 (Colab) and 8.
"""
import random
import time

import numpy as np

from .. import ops
from ..autodiff import ForwardAccumulator
from ..core.context import state
from ..tape_jacobians import GradientTape  # the tape with jacobian attached
from ..core.recorder import Recorder
from ..core.tensor import Variable
from .compat import interactive_with_data, show_figure

__all__ = ["count_numbers", "jacobian_work", "auto_direction", "jacobian_time", "tanh_layer",
           "second_order_loss", "hessian_full", "hvp_nested_tapes",
           "hvp_forward_over_reverse", "second_order_work", "second_order_time",
           "best_time", "interleaved_best_times", "jacobian_times", "second_order_times",
           "direction_explorer"]


class _Everything(dict):
    """A counter's `_producer`: it claims every tensor, so `record` hands it
    every op (the same trick as `mt.function`'s tracer)."""

    def __contains__(self, key):
        return True

    def __setitem__(self, key, value):
        pass


class _Counter(list, Recorder):
    """Stands in `state.tapes` and adds up the sizes of the ops' outputs."""

    def __init__(self):
        super().__init__()
        self._producer = _Everything()
        self._ops = self
        self.numbers = 0
        self.n_ops = 0

    def append(self, op):
        self.n_ops += 1
        self.numbers += sum(int(y.size) for y in op.outputs)


def count_numbers(fn):
    """Run `fn()` and count what its ops computed: (result, numbers, ops), where
    `numbers` adds up the sizes of every op's outputs and `ops` counts the ops."""
    counter = _Counter()
    state.tapes.append(counter)
    try:
        result = fn()
    finally:
        state.tapes[:] = [t for t in state.tapes if t is not counter]
    return result, counter.numbers, counter.n_ops


# --- first derivatives: the Jacobian of tanh(W @ x) ----------------------------------

def tanh_layer(n, m, seed=0):
    """W (m, n), x (n,) and f(x) = tanh(W @ x): n inputs, m outputs (benchmark W6)."""
    rng = np.random.default_rng(seed)
    w = ops.convert_to_tensor((rng.standard_normal((m, n)) / np.sqrt(n)).astype(np.float32))
    x = ops.convert_to_tensor(rng.standard_normal(n).astype(np.float32))

    def f(x):
        return ops.tanh(ops.reshape(w @ ops.reshape(x, (n, 1)), (m,)))
    return f, w, x


def _jacobian_run(n, m, direction):
    f, _, x = tanh_layer(n, m)

    def run():
        with GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return tape.jacobian(y, x, experimental_direction=direction)
    return run


def jacobian_work(n, m, direction="auto"):
    """Numbers computed by the Jacobian of tanh(W @ x) with n inputs and m
    outputs, in the given direction (forward pass included)."""
    _, numbers, _ = count_numbers(_jacobian_run(n, m, direction))
    return numbers


def auto_direction(n, m):
    """The direction `jacobian(..., experimental_direction="auto")` took for
    tanh(W @ x), n inputs and m outputs: the one whose work it did."""
    auto = jacobian_work(n, m, "auto")
    for direction in ("forward", "reverse"):
        if auto == jacobian_work(n, m, direction):
            return direction
    raise AssertionError(f"auto did neither direction's work for n={n}, m={m}")


def jacobian_time(n, m, direction="auto"):
    """Seconds for the same Jacobian: the fastest of a few runs."""
    return best_time(_jacobian_run(n, m, direction))


# --- second derivatives: a Hessian, or a Hessian-vector product ---------------------

def second_order_loss(k, seed=0):
    """A loss of N = k * k parameters: L(W) = mean(tanh(X @ W) ** 2) with X of
    shape (8, k). Returns (loss_fn, W, v): W a Variable, v a direction like W."""
    rng = np.random.default_rng(seed)
    inputs = ops.convert_to_tensor(rng.standard_normal((8, k)).astype(np.float32))
    w = Variable((rng.standard_normal((k, k)) / np.sqrt(k)).astype(np.float32))
    v = ops.convert_to_tensor(rng.standard_normal((k, k)).astype(np.float32))

    def loss_fn(w):
        return ops.reduce_mean(ops.tanh(inputs @ w) ** 2)
    return loss_fn, w, v


def hessian_full(loss_fn, w):
    """The Hessian as the Jacobian of the gradient (nested tapes), shape w.shape * 2."""
    with GradientTape() as outer:
        with GradientTape() as inner:
            loss = loss_fn(w)
        g = inner.gradient(loss, w)
    return outer.jacobian(g, w)


def hvp_nested_tapes(loss_fn, w, v):
    """H v as the gradient of g . v (reverse-over-reverse)."""
    with GradientTape() as outer:
        with GradientTape() as inner:
            loss = loss_fn(w)
        g = inner.gradient(loss, w)
        g_dot_v = ops.reduce_sum(g * v)
    return outer.gradient(g_dot_v, w)


def hvp_forward_over_reverse(loss_fn, w, v):
    """H v as the tangent of the gradient along v (forward-over-reverse)."""
    with ForwardAccumulator(w, v) as acc:
        with GradientTape() as tape:
            loss = loss_fn(w)
        g = tape.gradient(loss, w)
    return acc.jvp(g)


_SECOND_ORDER = {"full Hessian": lambda f, w, v: hessian_full(f, w),
                 "HVP, nested tapes": hvp_nested_tapes,
                 "HVP, forward-over-reverse": hvp_forward_over_reverse}


def second_order_work(k, method):
    """Numbers computed by one `method` (a key of `_SECOND_ORDER`: "full
    Hessian", "HVP, nested tapes" or "HVP, forward-over-reverse") on the loss
    of `second_order_loss(k)`, forward pass included."""
    f, w, v = second_order_loss(k)
    _, numbers, _ = count_numbers(lambda: _SECOND_ORDER[method](f, w, v))
    return numbers


def second_order_time(k, method):
    """Seconds for the same computation: the fastest of a few runs."""
    f, w, v = second_order_loss(k)
    return best_time(lambda: _SECOND_ORDER[method](f, w, v))


def best_time(fn, repeats=7):
    """The fastest of `repeats` runs of `fn()`, in seconds (after two warm-ups).
    The fastest run is the one least disturbed by whatever else the machine does."""
    fn()
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def interleaved_best_times(fns, rounds=40, seed=0):
    """The fastest of `rounds` runs of each callable in the dict `fns`, in
    seconds, as a dict with the same keys.

    Each round runs every callable once, in a shuffled order, so a burst of
    load from elsewhere on the machine slows one run of many callables rather
    than every run of one: the table keeps its shape on a busy machine. Notebook
    10 times its comparisons this way, live."""
    keys = list(fns)
    best = dict.fromkeys(keys, float("inf"))
    for key in keys:  # warm-up
        fns[key]()
    order = random.Random(seed)
    for _ in range(rounds):
        order.shuffle(keys)
        for key in keys:
            start = time.perf_counter()
            fns[key]()
            best[key] = min(best[key], time.perf_counter() - start)
    return best


def jacobian_times(n, ms, directions=("forward", "reverse"), rounds=40):
    """Milliseconds per Jacobian of tanh(W @ x), n inputs: {direction: [one per m]}."""
    fns = {(d, m): _jacobian_run(n, m, d) for d in directions for m in ms}
    best = interleaved_best_times(fns, rounds)
    return {d: [round(best[d, m] * 1e3, 3) for m in ms] for d in directions}


def second_order_times(ks, methods=tuple(_SECOND_ORDER), full_hessian_up_to=48, rounds=40):
    """Milliseconds for one full Hessian or one Hessian-vector product on the loss
    of `second_order_loss(k)`: {method: [one per k]}, None where the full Hessian
    is skipped (k > full_hessian_up_to)."""
    fns = {}
    for method in methods:
        for k in ks:
            if method != "full Hessian" or k <= full_hessian_up_to:
                f, w, v = second_order_loss(k)
                fns[method, k] = (lambda run=_SECOND_ORDER[method], f=f, w=w, v=v: run(f, w, v))
    best = interleaved_best_times(fns, rounds)
    return {method: [round(best[method, k] * 1e3, 3) if (method, k) in best else None for k in ks]
            for method in methods}


# --- the explorer ----------------------------------------------------------------

def direction_explorer(n=16, m=64):
    """Sliders for the number of inputs `n` and of outputs `m` of tanh(W @ x):
    bars for the numbers computed by a forward-mode and a reverse-mode Jacobian,
    and the direction `jacobian` picks by itself (found by running "auto" and
    seeing which of the two it computed, so it follows whatever rule the tape
    uses). Forward mode's work grows with n, reverse mode's with m; they cross
    where n and m are about equal.

    `widget.data` holds n, m, forward, reverse (numbers computed), auto (the
    direction "auto" takes), cheaper (the direction that computed less) and
    the Axes.
    """
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    from ..plotting import plot_direction_work

    def draw(n, m):
        forward = jacobian_work(n, m, "forward")
        reverse = jacobian_work(n, m, "reverse")
        auto = auto_direction(n, m)
        fig, ax = plt.subplots(figsize=(7, 4))
        plot_direction_work(forward, reverse, auto, ax=ax,
                            title=f"Jacobian of tanh(W @ x): {n} inputs, {m} outputs")
        show_figure(fig)
        return {"n": int(n), "m": int(m), "forward": forward, "reverse": reverse,
                "auto": auto, "cheaper": "forward" if forward < reverse else "reverse",
                "ax": ax}

    n_slider = widgets.IntSlider(value=n, min=1, max=128, description="n inputs",
                                 continuous_update=False)
    m_slider = widgets.IntSlider(value=m, min=1, max=256, description="m outputs",
                                 continuous_update=False)
    return interactive_with_data(draw, n=n_slider, m=m_slider)
