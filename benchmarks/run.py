"""Benchmarks W2-W6: minitape against bare NumPy written by hand and, when they
are installed (`pip install -e ".[bench]"`), autograd, JAX and PyTorch.
Medians over repeats; run from the repository root:

    python benchmarks/run.py            # full table, and figures/w6_jacobian_time.png
    python benchmarks/run.py --quick    # fewer repeats
    python benchmarks/run.py --systems minitape,numpy
    python benchmarks/run.py --threads 1  # one BLAS/OpenMP/XLA thread per system

Each system runs in its own Python process (so one system's thread pools,
caches and imports never slow another), one after the other; this process
collects their timings, prints the table and draws the plot.

W2  a chain of 1,000 scalar ops (y*1.0001, sin alternating), forward + backward,
    reported per op
W3  the guide's Dense Jacobian: relu(x @ K + b), x (7, 5), d y / d K -> (7, 10, 5, 10)
W4  the guide's Hessian of mean(relu(relu(x K1 + b1) K2 + b2)**2) w.r.t. K1 -> (5, 8, 5, 8)
W5  the guide's batch Jacobian of elu(elu(x K1 + b1) K2 + b2) w.r.t. x -> (7, 6, 5)
W6  the Jacobian of tanh(W @ x) with respect to x, 64 inputs and m outputs,
    m = 16 ... 4096: the case for forward mode once m is much larger than 64
T1  one training step of the W4 model (Dense(8, relu), Dense(6, relu) on
    x (7, 5)): forward, mean squared output as the loss, gradients of all four
    variables, SGD update

"minitape (compiled)" is the same computation inside
`mt.function(jit_compile=True)`, called after its first call (which traces and
compiles; that first call is timed for W2 as "W2 compile", in seconds).

Every minitape timing includes the forward pass under the tape, as a user runs
it; JAX timings are of jitted functions after compilation (marked "jit").
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

TARGETS_MS = {"W2": 0.003, "W3": 0.11, "W4": 0.3, "W5": 0.1, "W6": 1.0}  # W2 per op, W6 at m=4096
# Targets of the compiled path (issue 12): W2 per op; W3-W5 at most 2x NumPy by hand
# (checked in the table's "x numpy" column) and faster than JAX jit.
COMPILED_TARGETS_MS = {"W2": 0.001, "W3": 0.028, "W4": 0.052, "W5": 0.05, "W6": 0.5}
W6_SIZES = (16, 64, 256, 1024, 4096)
W6_INPUTS = 64
SYSTEMS = ("minitape", "compiled", "numpy", "autograd", "jax", "torch")
_MODULE = {"minitape": "minitape", "compiled": "minitape", "numpy": "numpy",
           "autograd": "autograd", "jax": "jax", "torch": "torch"}


def median_time(fn, budget=0.5, max_repeats=61):
    """Median seconds per call of `fn`, from up to `max_repeats` samples taken
    within about `budget` seconds (at least 3). A sample of a fast function
    times several calls in a row, so that each sample lasts about 1 ms."""
    fn()  # warm up (and compile, for jitted peers)
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    inner = max(1, int(1e-3 / once))
    repeats = int(min(max_repeats, max(3, budget / (once * inner))))
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

    for m in sizes:
        w, x = (mt.constant(a) for a in w6_arrays(m))
        runs[(f"W6 m={m}", "minitape (compiled)")] = jit(w6_for(w, m), x)
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
    return runs


# --- peers: autograd, JAX, PyTorch (each optional) -------------------------------------

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
    eager_grad = jax.grad(chain)

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
        ("W2", "jax (eager)"): lambda: ready(eager_grad)(np.float32(0.5)),
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
             "numpy": numpy_workloads,
             "autograd": autograd_workloads, "jax": jax_workloads, "torch": torch_workloads}


def installed(system):
    import importlib.util
    return importlib.util.find_spec(_MODULE[system]) is not None


# --- running: one worker process per system; the parent prints and plots ------------

def run_worker(system, quick):
    """Time every workload of one system; print one JSON line per timing."""
    if system == "torch" and os.environ.get("OMP_NUM_THREADS"):
        import torch
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    budget = 0.15 if quick else 0.6
    if system == "compiled":
        print(json.dumps({"workload": "W2 compile", "system": "minitape (compiled)",
                          "seconds": w2_trace_and_compile_seconds()}), flush=True)
    for (workload, label), fn in WORKLOADS[system]().items():
        seconds = median_time(fn, budget=budget, max_repeats=15 if quick else 61)
        if workload == "W2":
            seconds /= 1000  # per op
        print(json.dumps({"workload": workload, "system": label, "seconds": seconds}),
              flush=True)


def _thread_env(threads):
    """Environment variables that limit NumPy's BLAS, PyTorch and JAX to
    `threads` threads each (None: leave the defaults). On a small shared machine
    one thread can be faster than two: a BLAS call that waits for a second
    thread the scheduler has not run yet takes milliseconds."""
    env = dict(os.environ)
    if threads:
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[name] = str(threads)
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen="
                            + ("true" if threads > 1 else "false")).strip()
    return env


def collect(systems, quick, threads=None):
    rows = []
    for system in systems:
        if not installed(system):
            print(f"# {system}: not installed, skipped", file=sys.stderr)
            continue
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", system]
        if quick:
            cmd.append("--quick")
        done = subprocess.run(cmd, capture_output=True, text=True, env=_thread_env(threads))
        if done.returncode != 0:
            print(f"# {system}: failed\n{done.stderr}", file=sys.stderr)
            continue
        rows += [json.loads(line) for line in done.stdout.splitlines()
                 if line.startswith("{")]
    return rows


def _order(workload):
    name, _, m = workload.partition(" m=")
    return name, int(m or 0)


def print_table(rows, out=None):
    out = out or sys.stdout
    by_hand = {r["workload"]: r["seconds"] for r in rows if r["system"] == "numpy by hand"}
    print(f"{'workload':<11}{'system':<20}{'median':>14}{'x numpy':>9}{'target':>14}", file=out)
    for r in sorted(rows, key=lambda r: _order(r["workload"])):
        w, system, t = r["workload"], r["system"], r["seconds"]
        name, m = _order(w)
        unit, scale = ("us/op", 1e6) if name == "W2" else ("s", 1) if "compile" in name \
            else ("ms", 1e3)
        ratio = f"{t / by_hand[w]:>8.1f}x" if w in by_hand else f"{'':>9}"
        targets = COMPILED_TARGETS_MS if system == "minitape (compiled)" else TARGETS_MS
        limit = None
        if "compile" in name:
            limit = 1.0 if system == "minitape (compiled)" else None  # seconds
        elif name in targets and (name != "W6" or m == 4096):
            limit = targets[name] * (1e3 if name == "W2" else 1)  # us for W2, else ms
        judged = system in ("minitape", "minitape (pfor)", "minitape (auto)",
                            "minitape (compiled)")
        target, mark = "", ""
        if limit is not None:
            target = f"{limit:>8.3f} {unit}"
            if judged:
                mark = "  ok" if t * scale <= limit else "  MISSED"
        print(f"{w:<11}{system:<20}{t * scale:>8.3f} {unit:<5}{ratio}{target:>14}{mark}",
              file=out)


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
              "numpy by hand": dict(color="k", marker="s"),
              "autograd": dict(color="C2", marker="."),
              "jax jacrev (jit)": dict(color="C1", ls="--", marker="v"),
              "jax jacfwd (jit)": dict(color="C1", ls=":", marker="^"),
              "torch jacrev": dict(color="C4", ls="--", marker="v"),
              "torch jacfwd": dict(color="C4", ls=":", marker="^")}
    for system, points in sorted(series.items()):
        ms, times = zip(*sorted(points))
        ax.plot(ms, times, label=system, **styles.get(system, dict(marker=".")))
    ax.plot([W6_SIZES[-1]], [TARGETS_MS["W6"]], "r*", ms=12, label="target (m=4096)")
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
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--systems", default=",".join(SYSTEMS),
                        help=f"comma-separated, from {','.join(SYSTEMS)}")
    parser.add_argument("--plot", default=os.path.join("figures", "w6_jacobian_time.png"),
                        help="where to save the W6 plot ('' for none)")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads per system for BLAS, OpenMP and XLA (default: theirs)")
    parser.add_argument("--worker", choices=SYSTEMS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        run_worker(args.worker, args.quick)
        return 0
    rows = collect([s for s in args.systems.split(",") if s], args.quick, args.threads)
    print_table(rows)
    if args.plot:
        os.makedirs(os.path.dirname(args.plot) or ".", exist_ok=True)
        plot_w6(rows, args.plot)
        print(f"# saved {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
