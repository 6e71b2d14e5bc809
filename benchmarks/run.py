"""Benchmarks W2-W5: minitape against bare NumPy written by hand (and autograd
when it is installed). Medians over repeats; run from the repository root:

    python benchmarks/run.py            # full table
    python benchmarks/run.py --quick    # fewer repeats

W2  a chain of 1,000 scalar ops (y*1.0001, sin alternating), forward + backward,
    reported per op
W3  the guide's Dense Jacobian: relu(x @ K + b), x (7, 5), d y / d K -> (7, 10, 5, 10)
W4  the guide's Hessian of mean(relu(relu(x K1 + b1) K2 + b2)**2) w.r.t. K1 -> (5, 8, 5, 8)
W5  the guide's batch Jacobian of elu(elu(x K1 + b1) K2 + b2) w.r.t. x -> (7, 6, 5)

Every minitape timing includes the forward pass under the tape, as a user runs it.
"""
import argparse
import statistics
import sys
import time

import numpy as np

import minitape as mt

TARGETS_MS = {"W2": 0.003, "W3": 0.15, "W4": 0.4, "W5": 0.15}  # W2 per op


def median_time(fn, repeats, inner=1):
    fn()  # warm up
    samples = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - t) / inner)
    return statistics.median(samples)


# --- the workloads, once in minitape and once by hand in NumPy ----------------

def w2_minitape(n_ops=1000):
    def run():
        x = mt.constant(0.5)
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(n_ops // 2):
                y = mt.sin(y * 1.0001)
        return tape.gradient(y, x)
    return run


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


def _dense_setup():
    mt.random.set_seed(0)
    x = mt.random.normal([7, 5])
    layer = mt.layers.Dense(10, activation=mt.nn.relu)
    layer(x)
    return x, layer


def w3_minitape(pfor):
    x, layer = _dense_setup()

    def run():
        with mt.GradientTape() as tape:
            y = layer(x)
        return tape.jacobian(y, layer.kernel, experimental_use_pfor=pfor)
    return run


def w3_numpy():
    x, layer = _dense_setup()
    xv, k, b = x.numpy(), layer.kernel.numpy(), layer.bias.numpy()
    eye = np.eye(10, dtype=np.float32)

    def run():
        z = xv @ k + b
        mask = (z > 0).astype(np.float32)
        return np.einsum("ij,ik,jl->ijkl", mask, xv, eye)
    return run


def _hessian_setup():
    mt.random.set_seed(0)
    x = mt.random.normal([7, 5])
    layer1 = mt.layers.Dense(8, activation=mt.nn.relu)
    layer2 = mt.layers.Dense(6, activation=mt.nn.relu)
    layer2(layer1(x))
    return x, layer1, layer2


def w4_minitape(pfor):
    x, layer1, layer2 = _hessian_setup()

    def run():
        with mt.GradientTape() as t2:
            with mt.GradientTape() as t1:
                loss = mt.reduce_mean(layer2(layer1(x)) ** 2)
            g = t1.gradient(loss, layer1.kernel)
        return t2.jacobian(g, layer1.kernel, experimental_use_pfor=pfor)
    return run


def w4_numpy():
    """relu is linear where it is active, so h2 = J vec(K1) + c near K1 and
    the Hessian of mean(h2**2) is (2/N) J^T J."""
    x, layer1, layer2 = _hessian_setup()
    xv = x.numpy()
    k1, b1 = layer1.kernel.numpy(), layer1.bias.numpy()
    k2, b2 = layer2.kernel.numpy(), layer2.bias.numpy()

    def run():
        z1 = xv @ k1 + b1
        m1 = (z1 > 0).astype(np.float32)
        z2 = (z1 * m1) @ k2 + b2
        m2 = (z2 > 0).astype(np.float32)
        jac = np.einsum("io,il,ik,lo->iokl", m2, m1, xv, k2).reshape(42, 40)
        return (2.0 / 42) * (jac.T @ jac).reshape(5, 8, 5, 8)
    return run


def _batch_setup():
    mt.random.set_seed(0)
    x = mt.random.normal([7, 5])
    layer1 = mt.layers.Dense(8, activation=mt.nn.elu)
    layer2 = mt.layers.Dense(6, activation=mt.nn.elu)
    layer2(layer1(x))
    return x, layer1, layer2


def w5_minitape(pfor):
    x, layer1, layer2 = _batch_setup()

    def run():
        with mt.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(x)
            y = layer2(layer1(x))
        return tape.batch_jacobian(y, x, experimental_use_pfor=pfor)
    return run


def w5_numpy():
    x, layer1, layer2 = _batch_setup()
    xv = x.numpy()
    k1, b1 = layer1.kernel.numpy(), layer1.bias.numpy()
    k2, b2 = layer2.kernel.numpy(), layer2.bias.numpy()

    def elu_and_slope(z):
        neg = np.expm1(np.minimum(z, 0))
        return np.where(z > 0, z, neg), np.where(z > 0, 1, neg + 1)

    def run():
        h1, d1 = elu_and_slope(xv @ k1 + b1)
        _, d2 = elu_and_slope(h1 @ k2 + b2)
        return np.einsum("bo,lo,bl,il->boi", d2, k2, d1, k1)
    return run


# --- optional peer: autograd -----------------------------------------------

def autograd_workloads():
    try:
        import autograd.numpy as anp
        from autograd import elementwise_grad, grad, hessian, jacobian
    except ImportError:
        return {}
    x3, layer = _dense_setup()
    xv, k, b = x3.numpy(), layer.kernel.numpy(), layer.bias.numpy()
    relu = lambda z: anp.maximum(z, 0.0)  # noqa: E731

    def w2():
        def f(x):
            y = x
            for _ in range(500):
                y = anp.sin(y * 1.0001)
            return y
        return lambda: grad(f)(0.5)

    x4, l1, l2 = _hessian_setup()
    x4v, k1, b1, k2, b2 = (x4.numpy(), l1.kernel.numpy(), l1.bias.numpy(),
                           l2.kernel.numpy(), l2.bias.numpy())
    x5, m1, m2 = _batch_setup()
    x5v, c1, d1, c2, d2 = (x5.numpy(), m1.kernel.numpy(), m1.bias.numpy(),
                           m2.kernel.numpy(), m2.bias.numpy())
    elu = lambda z: anp.where(z > 0, z, anp.expm1(anp.minimum(z, 0.0)))  # noqa: E731
    per_row = lambda xr: elu(elu(xr @ c1 + d1) @ c2 + d2)  # noqa: E731
    return {
        "W2": w2(),
        "W3": lambda: jacobian(lambda kk: relu(xv @ kk + b))(k),
        "W4": lambda: hessian(lambda kk: anp.mean(relu(relu(x4v @ kk + b1) @ k2 + b2) ** 2))(k1),
        "W5": lambda: anp.stack([jacobian(per_row)(row) for row in x5v]),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args(argv)
    reps = 15 if args.quick else 61

    rows = []  # (workload, system, seconds)
    rows.append(("W2", "minitape", median_time(w2_minitape(), reps // 3) / 1000))
    rows.append(("W2", "numpy by hand", median_time(w2_numpy(), reps // 3) / 1000))
    for name, mini, by_hand in (("W3", w3_minitape, w3_numpy), ("W4", w4_minitape, w4_numpy),
                                ("W5", w5_minitape, w5_numpy)):
        rows.append((name, "minitape (pfor)", median_time(mini(True), reps, inner=5)))
        rows.append((name, "minitape (loop)", median_time(mini(False), reps // 3)))
        rows.append((name, "numpy by hand", median_time(by_hand(), reps, inner=20)))
    for name, fn in autograd_workloads().items():
        t = median_time(fn, max(3, reps // 10))
        rows.append((name, "autograd", t / 1000 if name == "W2" else t))

    numpy_time = {w: t for w, s, t in rows if s == "numpy by hand"}
    print(f"{'workload':<9}{'system':<18}{'median':>14}{'x numpy':>10}{'target':>12}")
    for w, system, t in rows:
        unit = "us/op" if w == "W2" else "ms"
        scale = 1e6 if w == "W2" else 1e3
        target = TARGETS_MS[w] * 1e3 if w == "W2" else TARGETS_MS[w]
        mark = "" if not system.startswith("minitape (pfor)") and system != "minitape" \
            else ("  ok" if t * scale <= target else "  MISSED")
        print(f"{w:<9}{system:<18}{t * scale:>10.3f} {unit:<5}{t / numpy_time[w]:>8.1f}x"
              f"{target:>9.3f} {unit}{mark}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
