"""Benchmarks for issue 18: minitape eager and compiled against NumPy written by
hand and, when they are installed (`pip install -e ".[bench]"`), micrograd,
autograd, JAX and PyTorch; a chain of a million recorded ops; the import cost.
Run from the repository root (docs/benchmarks.md says more):

    python benchmarks/run.py                              # print the tables
    python benchmarks/run.py --write docs/benchmarks.md
    python benchmarks/run.py --quick                      # a smoke run, seconds
    python benchmarks/run.py --systems minitape,compiled,numpy --threads 1

How it is measured. Each system runs in its own Python process (one system's
thread pools, caches and imports never slow another) and times every workload
as a median over repeats. The processes of all systems are run one after the
other, and that whole round is repeated (`--rounds`, 3 by default, the order of
the systems rotated each round); a timing is the best of its rounds' medians,
so a round slowed by another job on a shared machine does not count. Each
library keeps its default threads unless `--threads N` is given.

W2  a chain of 1,000 scalar ops (500 x `y = sin(y * 1.0001)`), forward and
    backward, reported per op
W3  the guide's Dense Jacobian: relu(x @ K + b), x (7, 5), d y / d K -> (7, 10, 5, 10)
W4  the guide's Hessian of mean(relu(relu(x K1 + b1) K2 + b2)**2) w.r.t. K1 -> (5, 8, 5, 8)
W5  the guide's batch Jacobian of elu(elu(x K1 + b1) K2 + b2) w.r.t. x -> (7, 6, 5)
W6  the Jacobian of tanh(W @ x) with respect to x, 64 inputs and m outputs,
    m = 16 ... 4096 (the tables show m = 4096; the plot all of them); for
    compiled code and JAX, W is captured by the function (a constant of its
    program)
W6 arg  the same with W passed as an argument, as a model's weights are: a
    compiled program cannot fold W into its constants
T1  one training step of the W4 model (Dense(8, relu), Dense(6, relu) on
    x (7, 5)): forward, mean squared output as the loss, gradients of all four
    variables, SGD update
Chain  10**6 recorded ops `y = y * 1.000001` and the gradient, in a fresh
    process: its time and the process's peak memory (resident set)
Import  `import minitape` over `import numpy`, in fresh processes with
    bytecode cached: best of many interleaved, and `python -X importtime`

"minitape compiled" is the same code inside `mt.function(jit_compile=True)`,
called after its first call, which traces and compiles (timed for W2 on its
own). Every minitape timing includes the forward pass under the tape, as a user
runs it; JAX's are of jitted functions after compilation.
"""
import argparse
import datetime
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import time

import numpy as np

W6_SIZES = (16, 64, 256, 1024, 4096)
W6_INPUTS = 64
CHAIN_OPS = 10**6
SYSTEMS = ("minitape", "compiled", "numpy", "micrograd", "autograd", "jax", "torch")
_MODULE = {"minitape": "minitape", "compiled": "minitape", "numpy": "numpy",
           "micrograd": "micrograd", "autograd": "autograd", "jax": "jax", "torch": "torch"}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def median_time(fn, budget=0.5, max_repeats=61, min_repeats=3):
    """Median seconds per call of `fn`, from up to `max_repeats` samples taken
    within about `budget` seconds (at least `min_repeats`). A sample of a fast
    function times several calls in a row, so that each sample lasts about 1 ms."""
    fn()  # warm up (and compile, for jitted peers)
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    inner = max(1, int(1e-3 / once))
    repeats = int(min(max_repeats, max(min_repeats, budget / (once * inner))))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - start) / inner)
    return statistics.median(samples)


# --- the workloads' data: the same numbers for every system ---------------------

def _dense_setup():
    import minitape as mt
    mt.random.set_seed(0)
    x = mt.random.normal([7, 5])
    layer = mt.layers.Dense(10, activation=mt.nn.relu)
    layer(x)
    return x, layer


def _two_layers(activation):
    """x (7, 5) through Dense(8) and Dense(6) with `activation`, seeded."""
    import minitape as mt
    mt.random.set_seed(0)
    x = mt.random.normal([7, 5])
    layer1 = mt.layers.Dense(8, activation=activation)
    layer2 = mt.layers.Dense(6, activation=activation)
    layer2(layer1(x))
    return x, layer1, layer2


def _hessian_setup():
    import minitape as mt
    return _two_layers(mt.nn.relu)


def _batch_setup():
    import minitape as mt
    return _two_layers(mt.nn.elu)


def arrays(setup):
    """The NumPy arrays of a setup: x, then each layer's kernel and bias."""
    x, *layers = setup()
    out = [x.numpy()]
    for layer in layers:
        out += [layer.kernel.numpy(), layer.bias.numpy()]
    return out


def w6_arrays(m, n=W6_INPUTS):
    rng = np.random.default_rng(6)
    w = (rng.standard_normal((m, n)) / np.sqrt(n)).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    return w, x


# --- minitape ----------------------------------------------------------------------

def w2_chain_gradient(x, n_ops=1000):
    """W2 in minitape: d/dx of n_ops/2 rounds of sin(y * 1.0001), one tape.
    The eager and the compiled timings both run this function."""
    import minitape as mt

    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(n_ops // 2):
            y = mt.sin(y * 1.0001)
    return tape.gradient(y, x)


def w2_minitape(n_ops=1000):
    import minitape as mt

    return lambda: w2_chain_gradient(mt.constant(0.5), n_ops)


def w3_minitape(pfor):
    import minitape as mt
    x, layer = _dense_setup()

    def run():
        with mt.GradientTape() as tape:
            y = layer(x)
        return tape.jacobian(y, layer.kernel, experimental_use_pfor=pfor)
    return run


def w4_minitape(pfor):
    import minitape as mt
    x, layer1, layer2 = _hessian_setup()

    def run():
        with mt.GradientTape() as t2:
            with mt.GradientTape() as t1:
                loss = mt.reduce_mean(layer2(layer1(x)) ** 2)
            g = t1.gradient(loss, layer1.kernel)
        return t2.jacobian(g, layer1.kernel, experimental_use_pfor=pfor)
    return run


def w5_minitape(pfor):
    import minitape as mt
    x, layer1, layer2 = _batch_setup()

    def run():
        with mt.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(x)
            y = layer2(layer1(x))
        return tape.batch_jacobian(y, x, experimental_use_pfor=pfor)
    return run


def w6_minitape(m, direction="auto"):
    import minitape as mt
    w, x = (mt.constant(a) for a in w6_arrays(m))
    n = x.shape[0]

    def run():
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = mt.tanh(mt.reshape(w @ mt.reshape(x, (n, 1)), (m,)))
        return tape.jacobian(y, x, experimental_direction=direction)
    return run


def t1_step(mt, layer1, layer2):
    def step(x):
        with mt.GradientTape() as tape:
            loss = mt.reduce_mean(layer2(layer1(x)) ** 2)
        variables = layer1.trainable_variables + layer2.trainable_variables
        for v, g in zip(variables, tape.gradient(loss, variables)):
            v.assign_sub(0.01 * g)
        return loss
    return step


def t1_minitape(compiled):
    import minitape as mt
    x, layer1, layer2 = _two_layers(mt.nn.relu)
    step = t1_step(mt, layer1, layer2)
    if compiled:
        step = mt.function(step, jit_compile=True)
    return lambda: step(x)


def compiled_workloads(sizes=W6_SIZES):
    """W2-W6 and T1 inside mt.function(jit_compile=True): the same code as the
    eager workloads, with the tape inside the function."""
    import minitape as mt

    def jit(fn, *args):
        f = mt.function(fn, jit_compile=True)
        return lambda: f(*args)

    x3, layer = _dense_setup()

    def w3(x):
        with mt.GradientTape() as tape:
            y = layer(x)
        return tape.jacobian(y, layer.kernel)

    x4, a1, a2 = _hessian_setup()

    def w4(x):
        with mt.GradientTape() as t2:
            with mt.GradientTape() as t1:
                loss = mt.reduce_mean(a2(a1(x)) ** 2)
            g = t1.gradient(loss, a1.kernel)
        return t2.jacobian(g, a1.kernel)

    x5, b1, b2 = _batch_setup()

    def w5(x):
        with mt.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(x)
            y = b2(b1(x))
        return tape.batch_jacobian(y, x)

    runs = {("W2", "minitape (compiled)"): jit(w2_chain_gradient, mt.constant(0.5)),
            ("W3", "minitape (compiled)"): jit(w3, x3),
            ("W4", "minitape (compiled)"): jit(w4, x4),
            ("W5", "minitape (compiled)"): jit(w5, x5),
            ("T1", "minitape (compiled)"): t1_minitape(True)}
    def w6_for(w, m):  # w is captured, as in the eager W6
        def w6(x):
            with mt.GradientTape() as tape:
                tape.watch(x)
                y = mt.tanh(mt.reshape(w @ mt.reshape(x, (x.shape[0], 1)), (m,)))
            return tape.jacobian(y, x)
        return w6

    def w6_arg(w, x):  # w is an argument
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = mt.tanh(mt.reshape(w @ mt.reshape(x, (x.shape[0], 1)), (w.shape[0],)))
        return tape.jacobian(y, x)

    for m in sizes:
        w, x = (mt.constant(a) for a in w6_arrays(m))
        runs[(f"W6 m={m}", "minitape (compiled)")] = jit(w6_for(w, m), x)
        runs[(f"W6 arg m={m}", "minitape (compiled)")] = jit(w6_arg, w, x)
    return runs


def w2_trace_and_compile_seconds():
    """Seconds for the first call of the compiled W2 chain: tracing 1,000 ops and
    their gradient, writing the program and compiling it."""
    import minitape as mt

    chain = mt.function(w2_chain_gradient, jit_compile=True)
    start = time.perf_counter()
    chain(mt.constant(0.5))
    return time.perf_counter() - start


def minitape_workloads(sizes=W6_SIZES):
    runs = {("W2", "minitape"): w2_minitape(), ("T1", "minitape"): t1_minitape(False)}
    for name, build in (("W3", w3_minitape), ("W4", w4_minitape), ("W5", w5_minitape)):
        runs[(name, "minitape (pfor)")] = build(True)
        runs[(name, "minitape (loop)")] = build(False)
    for m in sizes:
        for direction in ("auto", "reverse", "forward"):
            runs[(f"W6 m={m}", f"minitape ({direction})")] = w6_minitape(m, direction)
    return runs


# --- NumPy by hand --------------------------------------------------------------------

def w2_numpy(n_ops=1000):
    def run():
        y = np.float32(0.5)
        c = np.float32(1.0001)
        inputs = []
        for _ in range(n_ops // 2):
            inputs.append(y * c)
            y = np.sin(inputs[-1])
        g = np.float32(1.0)
        for u in reversed(inputs):
            g = g * np.cos(u) * c
        return g
    return run


def w3_numpy():
    xv, k, b = arrays(_dense_setup)
    eye = np.eye(k.shape[1], dtype=np.float32)

    def run():
        z = xv @ k + b
        mask = (z > 0).astype(np.float32)
        return np.einsum("ij,ik,jl->ijkl", mask, xv, eye)
    return run


def w4_numpy():
    """relu is linear where it is active, so h2 = J vec(K1) + c near K1 and
    the Hessian of mean(h2**2) is (2/N) J^T J."""
    xv, k1, b1, k2, b2 = arrays(_hessian_setup)
    n, i = xv.shape[0] * k2.shape[1], k1.size  # 42 outputs, 40 parameters

    def run():
        z1 = xv @ k1 + b1
        m1 = (z1 > 0).astype(np.float32)
        z2 = (z1 * m1) @ k2 + b2
        m2 = (z2 > 0).astype(np.float32)
        jac = np.einsum("io,il,ik,lo->iokl", m2, m1, xv, k2).reshape(n, i)
        return (2.0 / n) * (jac.T @ jac).reshape(k1.shape + k1.shape)
    return run


def w5_numpy():
    xv, k1, b1, k2, b2 = arrays(_batch_setup)

    def elu_and_slope(z):
        neg = np.expm1(np.minimum(z, 0))
        return np.where(z > 0, z, neg), np.where(z > 0, 1, neg + 1)

    def run():
        h1, d1 = elu_and_slope(xv @ k1 + b1)
        _, d2 = elu_and_slope(h1 @ k2 + b2)
        return np.einsum("bo,lo,bl,il->boi", d2, k2, d1, k1)
    return run


def w6_numpy(m):
    """d tanh(W x)_i / d x_j = (1 - tanh(W x)_i ** 2) W_ij."""
    w, x = w6_arrays(m)

    def run():
        slope = 1 - np.tanh(w @ x) ** 2
        return slope[:, None] * w
    return run


def t1_numpy():
    """The training step's forward, backward and update, by hand."""
    xv, k1, b1, k2, b2 = arrays(_hessian_setup)
    params = [k1.copy(), b1.copy(), k2.copy(), b2.copy()]

    def run():
        k1, b1, k2, b2 = params
        z1 = xv @ k1 + b1
        h1 = np.maximum(z1, 0)
        z2 = h1 @ k2 + b2
        y = np.maximum(z2, 0)
        loss = np.mean(y ** 2)
        gy = (2.0 / y.size) * y * (z2 > 0)
        gh1 = (gy @ k2.T) * (z1 > 0)
        grads = [xv.T @ gh1, gh1.sum(0), h1.T @ gy, gy.sum(0)]
        for p, g in zip(params, grads):
            p -= np.float32(0.01) * g
        return loss
    return run


def numpy_workloads(sizes=W6_SIZES):
    runs = {("W2", "numpy by hand"): w2_numpy(), ("W3", "numpy by hand"): w3_numpy(),
            ("W4", "numpy by hand"): w4_numpy(), ("W5", "numpy by hand"): w5_numpy(),
            ("T1", "numpy by hand"): t1_numpy()}
    for m in sizes:
        runs[(f"W6 m={m}", "numpy by hand")] = w6_numpy(m)
        runs[(f"W6 arg m={m}", "numpy by hand")] = w6_numpy(m)  # (by hand, W is read either way)
    return runs


# --- peers: autograd, JAX, PyTorch (each optional) -------------------------------------

def w2_micrograd(n_ops=1000):
    """W2 in micrograd, the smallest scalar autodiff a student meets. Its `Value`
    has no sin, so `sin` is written here as micrograd writes `relu`: a new Value
    whose `_backward` adds cos(x) times the upstream gradient."""
    from micrograd.engine import Value

    def sin(v):
        out = Value(math.sin(v.data), (v,), "sin")

        def _backward():
            v.grad += math.cos(v.data) * out.grad
        out._backward = _backward
        return out

    def run():
        x = Value(0.5)
        y = x
        for _ in range(n_ops // 2):
            y = sin(y * 1.0001)
        y.backward()
        return x.grad
    return run


def micrograd_workloads(sizes=W6_SIZES):
    # micrograd's backward sorts the graph recursively: about one Python frame
    # per op, more than the default limit of 1,000 for W2's chain.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    return {("W2", "micrograd"): w2_micrograd()}


def autograd_workloads(sizes=W6_SIZES):
    import autograd.numpy as anp
    from autograd import grad, hessian, jacobian

    xv, k, b = arrays(_dense_setup)
    x4, k1, b1, k2, b2 = arrays(_hessian_setup)
    x5, c1, d1, c2, d2 = arrays(_batch_setup)
    relu = lambda z: anp.maximum(z, 0.0)  # noqa: E731
    elu = lambda z: anp.where(z > 0, z, anp.expm1(anp.minimum(z, 0.0)))  # noqa: E731
    per_row = lambda xr: elu(elu(xr @ c1 + d1) @ c2 + d2)  # noqa: E731

    def chain(x):
        y = x
        for _ in range(500):
            y = anp.sin(y * 1.0001)
        return y

    runs = {
        ("W2", "autograd"): lambda: grad(chain)(0.5),
        ("W3", "autograd"): lambda: jacobian(lambda kk: relu(xv @ kk + b))(k),
        ("W4", "autograd"): lambda: hessian(
            lambda kk: anp.mean(relu(relu(x4 @ kk + b1) @ k2 + b2) ** 2))(k1),
        ("W5", "autograd"): lambda: anp.stack([jacobian(per_row)(row) for row in x5]),
    }
    for m in sizes:
        w, x = w6_arrays(m)
        runs[(f"W6 m={m}", "autograd")] = (
            lambda w=w, x=x: jacobian(lambda xx: anp.tanh(anp.dot(w, xx)))(x))
    return runs


def jax_workloads(sizes=W6_SIZES):
    import jax
    import jax.numpy as jnp

    xv, k, b = arrays(_dense_setup)
    x4, k1, b1, k2, b2 = arrays(_hessian_setup)
    x5, c1, d1, c2, d2 = arrays(_batch_setup)
    relu = jax.nn.relu
    elu = jax.nn.elu

    def chain(x):
        y = x
        for _ in range(500):
            y = jnp.sin(y * 1.0001)
        return y

    def ready(fn):
        return lambda *a: jax.block_until_ready(fn(*a))

    w3 = jax.jit(jax.jacrev(lambda kk: relu(xv @ kk + b)))
    w4 = jax.jit(jax.hessian(lambda kk: jnp.mean(relu(relu(x4 @ kk + b1) @ k2 + b2) ** 2)))
    w5 = jax.jit(jax.vmap(jax.jacrev(lambda xr: elu(elu(xr @ c1 + d1) @ c2 + d2))))
    w2 = jax.jit(jax.grad(chain))

    def loss_fn(params, x):
        k1, b1, k2, b2 = params
        return jnp.mean(relu(relu(x @ k1 + b1) @ k2 + b2) ** 2)

    @jax.jit
    def t1_step(params, x):
        loss, grads = jax.value_and_grad(loss_fn)(params, x)
        return [p - 0.01 * g for p, g in zip(params, grads)], loss

    state = {"params": [jnp.asarray(a) for a in (k1, b1, k2, b2)]}

    def t1():
        state["params"], loss = t1_step(state["params"], x4)
        return jax.block_until_ready(loss)

    runs = {
        ("T1", "jax (jit)"): t1,
        ("W2", "jax (jit)"): lambda: ready(w2)(np.float32(0.5)),
        ("W3", "jax (jit)"): lambda: ready(w3)(k),
        ("W4", "jax (jit)"): lambda: ready(w4)(k1),
        ("W5", "jax (jit)"): lambda: ready(w5)(x5),
    }
    for m in sizes:
        w, x = w6_arrays(m)
        f = (lambda w: lambda xx: jnp.tanh(w @ xx))(jnp.asarray(w))
        rev, fwd = jax.jit(jax.jacrev(f)), jax.jit(jax.jacfwd(f))
        runs[(f"W6 m={m}", "jax jacrev (jit)")] = (lambda g=rev, x=x: ready(g)(x))
        runs[(f"W6 m={m}", "jax jacfwd (jit)")] = (lambda g=fwd, x=x: ready(g)(x))
        fwd_arg = jax.jit(jax.jacfwd(lambda ww, xx: jnp.tanh(ww @ xx), argnums=1))
        runs[(f"W6 arg m={m}", "jax jacfwd (jit)")] = (
            lambda g=fwd_arg, w=jnp.asarray(w), x=x: ready(g)(w, x))
    return runs


def torch_workloads(sizes=W6_SIZES):
    import torch
    from torch.func import hessian, jacfwd, jacrev, vmap

    t = torch.from_numpy
    xv, k, b = map(t, arrays(_dense_setup))
    x4, k1, b1, k2, b2 = map(t, arrays(_hessian_setup))
    x5, c1, d1, c2, d2 = map(t, arrays(_batch_setup))
    relu, elu = torch.relu, torch.nn.functional.elu

    params = [p.clone().requires_grad_(True) for p in (k1, b1, k2, b2)]

    def t1():
        loss = torch.mean(relu(relu(x4 @ params[0] + params[1]) @ params[2] + params[3]) ** 2)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p -= 0.01 * g
        return loss.detach()

    def w2():
        x = torch.tensor(0.5, requires_grad=True)
        y = x
        for _ in range(500):
            y = torch.sin(y * 1.0001)
        y.backward()
        return x.grad

    runs = {
        ("T1", "torch"): t1,
        ("W2", "torch"): w2,
        ("W3", "torch (func)"): lambda: jacrev(lambda kk: relu(xv @ kk + b))(k),
        ("W4", "torch (func)"): lambda: hessian(
            lambda kk: torch.mean(relu(relu(x4 @ kk + b1) @ k2 + b2) ** 2))(k1),
        ("W5", "torch (func)"): lambda: vmap(jacrev(
            lambda xr: elu(elu(xr @ c1 + d1) @ c2 + d2)))(x5),
    }
    for m in sizes:
        w, x = map(t, w6_arrays(m))
        f = (lambda w: lambda xx: torch.tanh(w @ xx))(w)
        runs[(f"W6 m={m}", "torch jacrev")] = (lambda f=f, x=x: jacrev(f)(x))
        runs[(f"W6 m={m}", "torch jacfwd")] = (lambda f=f, x=x: jacfwd(f)(x))
    return runs


WORKLOADS = {"minitape": minitape_workloads, "compiled": compiled_workloads,
             "numpy": numpy_workloads, "micrograd": micrograd_workloads,
             "autograd": autograd_workloads, "jax": jax_workloads, "torch": torch_workloads}


# --- a million recorded ops, and the import -----------------------------------------

def chain(n_ops=CHAIN_OPS):
    """n_ops recorded `y = y * 1.000001` on one tape from x = 1, then dy/dx.
    Returns the seconds both took, the gradient and y. At x = 1 the backward
    pass multiplies the same float32 numbers in the same order as the forward
    pass, so the right gradient is y itself, to the last bit."""
    import minitape as mt

    x = mt.constant(1.0)
    start = time.perf_counter()
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(n_ops):
            y = y * 1.000001
    gradient = tape.gradient(y, x)
    return time.perf_counter() - start, float(gradient), float(y)


def _peak_mib():
    """This process's peak resident memory so far, in MiB."""
    import resource
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10  # bytes / KiB


def run_chain_worker(quick):
    import minitape  # noqa: F401  (the memory after the import is reported too)
    base = _peak_mib()
    n_ops = 10**4 if quick else CHAIN_OPS
    seconds, gradient, value = chain(n_ops)
    print(json.dumps({"workload": "chain", "system": "minitape", "seconds": seconds,
                      "ops": n_ops, "peak_mib": _peak_mib(), "import_mib": base,
                      "gradient": gradient, "value": value}), flush=True)


# `import` alone in a fresh process: its seconds, and which heavy modules came along.
_IMPORT_CODE = ("import sys, time; t, c = time.perf_counter(), time.process_time(); "
                "import {module}; t, c = time.perf_counter() - t, time.process_time() - c; "
                "heavy = ('matplotlib', 'ipywidgets', 'IPython'); "
                "print(t, c, *[m for m in heavy if m in sys.modules])")


def _import_env():
    """The environment for timing imports: bytecode may be written (and then
    read), whatever PYTHONDONTWRITEBYTECODE says, as for a user's installed
    package, so that the times are of importing, not of compiling."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _import_seconds(module, env):
    out = subprocess.run([sys.executable, "-c", _IMPORT_CODE.format(module=module)],
                         capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    seconds, cpu, *heavy = out.stdout.split()
    return float(seconds), float(cpu), heavy


def _importtime_seconds(module, env):
    """The cumulative time `python -X importtime` gives `import module`."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                         capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    for line in out.stderr.splitlines():
        match = re.match(r"import time:\s*\d+ \|\s*(\d+) \| (\S+)$", line)
        if match and match.group(2) == module:
            return int(match.group(1)) * 1e-6
    raise RuntimeError(f"-X importtime printed no line for {module}:\n{out.stderr[-2000:]}")


def measure_import(repeats=40, importtime_repeats=10):
    """`import minitape` over `import numpy` (which it includes), each in fresh
    processes, alternating, best of `repeats` (wall-clock time, and the CPU time
    of the process, which other jobs on the machine disturb less); then the
    same with `-X importtime`. A first import writes the bytecode the others read."""
    env = _import_env()
    heavy = set()
    _import_seconds("minitape", env)  # writes the bytecode of minitape (and NumPy's, if missing)
    best = {"numpy": math.inf, "minitape": math.inf}
    cpu = dict(best)
    for _ in range(repeats):
        for module in best:
            seconds, cpu_seconds, loaded = _import_seconds(module, env)
            best[module] = min(best[module], seconds)
            cpu[module] = min(cpu[module], cpu_seconds)
            heavy.update(loaded)
    cumulative = {"numpy": math.inf, "minitape": math.inf}
    for _ in range(importtime_repeats):
        for module in cumulative:
            cumulative[module] = min(cumulative[module], _importtime_seconds(module, env))
    return {"workload": "import", "system": "minitape", "repeats": repeats,
            "numpy": best["numpy"], "minitape": best["minitape"],
            "cpu_numpy": cpu["numpy"], "cpu_minitape": cpu["minitape"],
            "importtime_repeats": importtime_repeats,
            "importtime_numpy": cumulative["numpy"],
            "importtime_minitape": cumulative["minitape"], "heavy": sorted(heavy)}


def installed(system):
    import importlib.util
    return system in ("chain", "import") or importlib.util.find_spec(_MODULE[system]) is not None


# --- running: one worker process per system and round; the parent keeps the best -----

def run_worker(system, quick):
    """Time every workload of one system; print one JSON line per timing."""
    if system == "chain":
        return run_chain_worker(quick)
    if system == "torch" and os.environ.get("OMP_NUM_THREADS"):
        import torch
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    repeats = dict(budget=0, max_repeats=1, min_repeats=1) if quick else dict(budget=0.6)
    sizes = (64,) if quick else W6_SIZES
    if system == "compiled":
        print(json.dumps({"workload": "W2 compile", "system": "minitape (compiled)",
                          "seconds": w2_trace_and_compile_seconds()}), flush=True)
    for (workload, label), fn in WORKLOADS[system](sizes).items():
        seconds = median_time(fn, **repeats)
        if workload == "W2":
            seconds /= 1000  # per op
        print(json.dumps({"workload": workload, "system": label, "seconds": seconds}),
              flush=True)


def _thread_env(threads):
    """Environment variables that limit NumPy's BLAS, PyTorch and JAX to
    `threads` threads each (None: leave each library its default)."""
    env = dict(os.environ)
    if threads:
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[name] = str(threads)
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen="
                            + ("true" if threads > 1 else "false")).strip()
    return env


def run_process(system, quick, threads):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", system]
    if quick:
        cmd.append("--quick")
    done = subprocess.run(cmd, capture_output=True, text=True, env=_thread_env(threads),
                          cwd=ROOT)
    if done.returncode != 0:
        print(f"# {system}: failed\n{done.stderr}", file=sys.stderr)
        return []
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def collect(systems, quick=False, threads=None, rounds=3):
    """Every timing of `systems`: `rounds` rounds of one process per system (the
    order rotated each round), keeping each timing's best round; then the import.
    Also the lowest and highest load average seen (other jobs on the machine)."""
    missing = [s for s in systems if not installed(s)]
    for system in missing:
        print(f"# {system}: not installed, skipped", file=sys.stderr)
    order = [s for s in systems if s not in missing and s != "import"]
    best, loads = {}, [os.getloadavg()[0]]
    for r in range(rounds):
        turn = r % len(order) if order else 0
        for system in order[turn:] + order[:turn]:
            print(f"# round {r + 1}/{rounds}: {system}", file=sys.stderr, flush=True)
            for row in run_process(system, quick, threads):
                key = (row["workload"], row["system"])
                old = best.get(key)
                if old is None or row["seconds"] < old["seconds"]:
                    best[key] = row
                if old is not None and "peak_mib" in row:  # the chain: its lowest peak too
                    best[key]["peak_mib"] = min(row["peak_mib"], old["peak_mib"])
            loads.append(os.getloadavg()[0])
    rows = list(best.values())
    if "import" in systems:
        print("# the import", file=sys.stderr, flush=True)
        rows.append(measure_import(*((1, 1) if quick else (40, 10))))
    return rows, (min(loads), max(loads))


def versions(systems, threads, rounds, quick, load):
    """What the tables were measured with."""
    from importlib.metadata import PackageNotFoundError, version
    found = {}
    for name, package in (("NumPy", "numpy"), ("micrograd", "micrograd"),
                          ("autograd", "autograd"), ("JAX", "jax"), ("PyTorch", "torch")):
        if package != "numpy" and package not in systems:
            continue
        try:
            found[name] = version(package)
        except PackageNotFoundError:
            pass
    return {"date": datetime.date.today().isoformat(), "python": platform.python_version(),
            "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores",
            "versions": found, "threads": threads, "rounds": rounds, "quick": quick,
            "systems": list(systems), "missing": [s for s in systems if not installed(s)],
            "load": load}


# --- the tables (Markdown) ---------------------------------------------------------

# (column, the worker labels it shows, the first one a workload has)
COLUMNS = (("minitape eager", ("minitape", "minitape (pfor)", "minitape (auto)")),
           ("minitape compiled", ("minitape (compiled)",)),
           ("NumPy by hand", ("numpy by hand",)),
           ("micrograd", ("micrograd",)),
           ("autograd", ("autograd",)),
           ("JAX (jit)", ("jax (jit)", "jax jacfwd (jit)")),
           ("PyTorch", ("torch", "torch (func)", "torch jacfwd")))
# (row key, what the row measures, unit)
ROWS = (("W2", "W2: 1,000 scalar ops, forward + backward, per op", "µs"),
        ("W2 compile", "W2: first call of the compiled function (tracing, code generation)",
         "s"),
        ("W3", "W3: Dense Jacobian (7, 10, 5, 10)", "ms"),
        ("W4", "W4: Hessian (5, 8, 5, 8)", "ms"),
        ("W5", "W5: batch Jacobian (7, 6, 5)", "ms"),
        ("W6", "W6: Jacobian of tanh(W x), 64 → {m} (jacfwd), W captured", "ms"),
        ("W6 arg", "W6 arg: the same, W an argument", "ms"),
        ("T1", "T1: training step of the W4 model (forward, loss, 4 gradients, SGD)", "ms"))
_SCALE = {"µs": 1e6, "ms": 1e3, "s": 1}
# (ratio, goal, numerator column, denominator column, workloads)
RATIOS = (("minitape compiled ÷ NumPy by hand", "≤ 1.5", "minitape compiled", "NumPy by hand",
           ("W2", "W3", "W4", "W5", "W6", "W6 arg")),
          ("minitape compiled ÷ JAX (jit)", "< 1", "minitape compiled", "JAX (jit)",
           ("W3", "W4", "W5", "W6", "W6 arg")),
          ("minitape eager ÷ micrograd, per op", "< 1", "minitape eager", "micrograd", ("W2",)))
RATIO_WORKLOADS = ("W2", "W3", "W4", "W5", "W6", "W6 arg")


def _w6_size(rows):
    sizes = [int(r["workload"].split("=")[1]) for r in rows if r["workload"].startswith("W6 m=")]
    return max(sizes, default=W6_SIZES[-1])


def _key(row_key, rows):
    return f"{row_key} m={_w6_size(rows)}" if row_key in ("W6", "W6 arg") else row_key


def cell(rows, row_key, column):
    """(seconds, worker label) of one cell of the main table, or None."""
    labels = dict(COLUMNS)[column]
    found = {r["system"]: r["seconds"] for r in rows if r["workload"] == _key(row_key, rows)}
    for label in labels:
        if label in found:
            return found[label], label
    return None


def _number(value):
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}" if value >= 0.001 else f"{value:.2g}"


def _time(seconds, unit):
    return f"{_number(seconds * _SCALE[unit])} {unit}"


def _ratio(value, goal):
    met = value <= 1.5 if goal == "≤ 1.5" else value < 1
    return f"{value:.2f}{' ✓' if met else ' ✗'}"


def ratio(rows, numerator, denominator, workload):
    top, bottom = cell(rows, workload, numerator), cell(rows, workload, denominator)
    return None if top is None or bottom is None else top[0] / bottom[0]


def _markdown(header, body):
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in body])


def times_table(rows):
    m = _w6_size(rows)
    body = []
    for key, text, unit in ROWS:
        found = [cell(rows, key, column) for column, _ in COLUMNS]
        body.append([text.format(m=f"{m:,}")] +
                    ["—" if c is None else _time(c[0], unit) for c in found])
    return _markdown(["workload"] + [column for column, _ in COLUMNS], body)


def ratios_table(rows):
    body = []
    for text, goal, numerator, denominator, workloads in RATIOS:
        values = {w: ratio(rows, numerator, denominator, w) for w in workloads}
        body.append([text, goal] + ["" if w not in values else "—" if values[w] is None
                                    else _ratio(values[w], goal) for w in RATIO_WORKLOADS])
    return _markdown(["ratio of medians", "goal"] + list(RATIO_WORKLOADS), body)


def variants_table(rows):
    """Every other timing of the main table's workloads (the loop Jacobians,
    W6's other directions, the peers' jacrev)."""
    shown = {(_key(key, rows), c[1]) for key, _, _ in ROWS for column, _ in COLUMNS
             if (c := cell(rows, key, column))}
    units = {_key(key, rows): unit for key, _, unit in ROWS}
    body = [[r["workload"], r["system"], _time(r["seconds"], units[r["workload"]])]
            for r in sorted(rows, key=lambda r: (list(units).index(r["workload"])
                                                 if r["workload"] in units else 99,
                                                 r["system"]))
            if r["workload"] in units and (r["workload"], r["system"]) not in shown]
    return _markdown(["workload", "system", "median"], body)


def _one(rows, workload):
    return next((r for r in rows if r["workload"] == workload), None)


def extras_table(rows):
    body = []
    c = _one(rows, "chain")
    if c:
        ops = f"{c['ops']:,}" if c["ops"] != CHAIN_OPS else "10⁶"
        right = "✓" if c["gradient"] == c["value"] else f"✗ (y = {c['value']:.7g})"
        body += [[f"{ops} recorded ops `y = y * 1.000001`, then the gradient: time",
                  f"{c['seconds']:.3g} s", "under 10 s"],
                 ["the same: peak memory of its process",
                  f"{c['peak_mib']:,.0f} MiB ({c['import_mib']:.0f} MiB after `import minitape`)",
                  "under 300 MiB"],
                 ["the same: the gradient at x = 1 (equal to y, bit for bit)",
                  f"{c['gradient']:.7g} {right}", ""]]
    i = _one(rows, "import")
    if i:
        body += [[f"`import minitape` ÷ `import numpy`: fresh processes, alternating, best of "
                  f"{i['repeats']} each", f"{i['minitape'] / i['numpy']:.2f} "
                  f"({i['minitape'] * 1e3:.0f} ms ÷ {i['numpy'] * 1e3:.0f} ms)", "≤ 1.1"],
                 ["the same, CPU time of the importing process",
                  f"{i['cpu_minitape'] / i['cpu_numpy']:.2f} "
                  f"({i['cpu_minitape'] * 1e3:.0f} ms ÷ {i['cpu_numpy'] * 1e3:.0f} ms)", "≤ 1.1"],
                 [f"the same with `python -X importtime` (cumulative), best of "
                  f"{i['importtime_repeats']} each",
                  f"{i['importtime_minitape'] / i['importtime_numpy']:.2f} "
                  f"({i['importtime_minitape'] * 1e3:.0f} ms ÷ "
                  f"{i['importtime_numpy'] * 1e3:.0f} ms)", "≤ 1.1"],
                 ["matplotlib, ipywidgets or IPython loaded by `import minitape`",
                  ", ".join(i["heavy"]) or "none", "none"]]
    return _markdown(["measurement", "result", "goal"], body) if body else ""


def measured_with(meta):
    found = ", ".join(f"{name} {v}" for name, v in meta["versions"].items())
    threads = (f"{meta['threads']} thread each" if meta["threads"] == 1 else
               f"{meta['threads']} threads each" if meta["threads"] else
               "each library's default threads")
    return (f"Measured {meta['date']} on {meta['machine']}, Python {meta['python']}: "
            f"{found}; {threads}; best of {meta['rounds']} "
            f"round{'s' if meta['rounds'] != 1 else ''} of interleaved processes, "
            f"each timing a median over repeats{' (--quick)' if meta['quick'] else ''}"
            + (f"; not installed: {', '.join(meta['missing'])}" if meta.get("missing") else "")
            + (f"; the machine's load average was {meta['load'][0]:.1f} to {meta['load'][1]:.1f}"
               if meta.get("load") else "") + ".")


def tables_block(rows, meta):
    parts = [measured_with(meta), times_table(rows), "Ratios (✓: the goal is met):",
             ratios_table(rows), "The chain of a million ops, and the import:",
             extras_table(rows), "Every other timing of these workloads:", variants_table(rows)]
    return "\n\n".join(p for p in parts if p)


def summary_block(rows, meta):
    """The summary's few lines (docs/benchmarks.md): the headline ratios."""
    def ratios(numerator, denominator, workloads):
        values = [(w, ratio(rows, numerator, denominator, w)) for w in workloads]
        return ", ".join(f"{w} {v:.2f}x" for w, v in values if v is not None) or "not measured"
    lines = [f"- compiled (`jit_compile=True`) over NumPy written by hand: "
             f"{ratios('minitape compiled', 'NumPy by hand', RATIO_WORKLOADS)} "
             f"(goal: at most 1.5x); over JAX's jit: "
             f"{ratios('minitape compiled', 'JAX (jit)', RATIO_WORKLOADS[1:])} (goal: under 1x)"]
    eager = cell(rows, "W2", "minitape eager")
    if eager:
        micro = cell(rows, "W2", "micrograd")
        versus = (f", {eager[0] / micro[0]:.2f}x micrograd's {_time(micro[0], 'µs')}"
                  if micro else "")
        lines.append(f"- eager, scalar code (W2): {_time(eager[0], 'µs')} per op{versus} "
                     f"(goal: under 1x)")
    c, i = _one(rows, "chain"), _one(rows, "import")
    if c:
        ops = "10⁶" if c["ops"] == CHAIN_OPS else f"{c['ops']:,}"
        lines.append(f"- {ops} recorded ops and their gradient: {c['seconds']:.3g} s, "
                     f"{c['peak_mib']:,.0f} MiB at peak (goals: under 10 s and 300 MiB)")
    if i:
        lines.append(f"- `import minitape`: {i['minitape'] / i['numpy']:.2f}x `import numpy` "
                     f"(goal: at most 1.1x)")
    return "\n".join(lines + ["", measured_with(meta)])


def write_blocks(path, rows, meta):
    """Replace each generated block in the file at `path` (between
    `<!-- benchmarks:NAME begin -->` and `<!-- benchmarks:NAME end -->`)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    made = {"tables": tables_block, "summary": summary_block}
    written = []
    for name, make in made.items():
        begin, end = f"<!-- benchmarks:{name} begin -->", f"<!-- benchmarks:{name} end -->"
        if begin in text:
            head, rest = text.split(begin, 1)
            _, tail = rest.split(end, 1)
            text = f"{head}{begin}\n{make(rows, meta)}\n{end}{tail}"
            written.append(name)
    if not written:
        raise SystemExit(f"{path} has no <!-- benchmarks:... begin --> marker")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return written


def read_block(path, name):
    """The text of one generated block in the file at `path`."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    begin, end = f"<!-- benchmarks:{name} begin -->\n", f"\n<!-- benchmarks:{name} end -->"
    return text.split(begin, 1)[1].split(end, 1)[0]


def _order(workload):
    name, _, m = workload.partition(" m=")
    return name, int(m or 0)


def plot_w6(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = {}
    for r in rows:
        name, m = _order(r["workload"])
        if name == "W6":
            series.setdefault(r["system"], []).append((m, r["seconds"] * 1e3))
    fig, ax = plt.subplots(figsize=(8, 5.5))
    styles = {"minitape (auto)": dict(color="C0", lw=3, marker="o"),
              "minitape (reverse)": dict(color="C0", ls="--", marker="v"),
              "minitape (forward)": dict(color="C0", ls=":", marker="^"),
              "minitape (compiled)": dict(color="C3", lw=2, marker="D"),
              "numpy by hand": dict(color="k", marker="s"),
              "autograd": dict(color="C2", marker="."),
              "jax jacrev (jit)": dict(color="C1", ls="--", marker="v"),
              "jax jacfwd (jit)": dict(color="C1", ls=":", marker="^"),
              "torch jacrev": dict(color="C4", ls="--", marker="v"),
              "torch jacfwd": dict(color="C4", ls=":", marker="^")}
    for system, points in sorted(series.items()):
        ms, times = zip(*sorted(points))
        ax.plot(ms, times, label=system, **styles.get(system, dict(marker=".")))
    ax.set(xscale="log", yscale="log", xlabel="m, the number of outputs (64 inputs)",
           ylabel="median time per Jacobian (ms)",
           title="W6: Jacobian of tanh(W @ x), 64 inputs, m outputs")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.savefig(path, dpi=100, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return fig  # closed; its data stays readable (tests/test_figures.py)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: one round, few repeats, W6 at m=64 only, "
                             "a chain of 10**4 ops (seconds; for tests, not for numbers)")
    parser.add_argument("--systems", default=",".join(SYSTEMS + ("chain", "import")),
                        help=f"comma-separated, from {','.join(SYSTEMS)},chain,import")
    parser.add_argument("--rounds", type=int, default=None,
                        help="rounds of interleaved processes, best kept (default 3; 1 quick)")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads per system for BLAS, OpenMP and XLA (default: theirs)")
    parser.add_argument("--write", action="append", default=[], metavar="FILE",
                        help="replace the generated blocks in FILE (docs/benchmarks.md, "
                             "README.md); may be given twice")
    parser.add_argument("--json", metavar="FILE", help="also save the timings as JSON")
    parser.add_argument("--from-json", metavar="FILE",
                        help="print (and --write) the timings saved in FILE; measure nothing")
    parser.add_argument("--plot", default=None,
                        help="where to save the W6 plot ('' for none; default "
                             "figures/w6_jacobian_time.png, none with --quick)")
    parser.add_argument("--worker", choices=SYSTEMS + ("chain",), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        run_worker(args.worker, args.quick)
        return 0
    if args.from_json:
        with open(args.from_json, encoding="utf-8") as f:
            saved = json.load(f)
        rows, meta = saved["rows"], saved["meta"]
    else:
        systems = [s for s in args.systems.split(",") if s]
        unknown = set(systems) - set(SYSTEMS) - {"chain", "import"}
        if unknown:
            parser.error(f"unknown systems: {', '.join(sorted(unknown))}")
        rounds = args.rounds or (1 if args.quick else 3)
        rows, load = collect(systems, args.quick, args.threads, rounds)
        meta = versions(systems, args.threads, rounds, args.quick, load)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"rows": rows, "meta": meta}, f, indent=1)
    print(tables_block(rows, meta))
    for path in args.write:
        print(f"# wrote the {' and '.join(write_blocks(path, rows, meta))} block in {path}")
    plot = args.plot if args.plot is not None else (
        "" if args.quick or args.from_json else os.path.join(ROOT, "figures",
                                                             "w6_jacobian_time.png"))
    if plot:
        os.makedirs(os.path.dirname(plot) or ".", exist_ok=True)
        plot_w6(rows, plot)
        print(f"# saved {plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
