"""A seeded differential test of `mt.function` over random programs.

Each random program is a chain of steps on a float64 value `a` of shape (n, m),
from the inputs x and y, a scalar int32 argument `i` used as an index and a
slice bound, a float64 scalar `c` used as `pad`'s fill and as clip bounds, a
shape argument `sizes` fed to `reshape`, and two variables it reads, assigns
and swaps; steps include `recompute_grad`, `grad_pass_through` and a custom
gradient. It runs four ways: eagerly (the reference), traced, compiled
(`jit_compile=True`) and compiled for an any-shape input_signature. Each way is
called three times: twice with different values of the same shapes and once
with another shape (sizes 0 included). Each call has NaN and inf entries or
not, on its own draw, so a trace made on finite values meets NaN and inf at
later calls and the other way round (the zero-times-inf masks of the
product rules must follow each call's values). Compared, to rounding, NaN
for NaN:

- inside the function (so the compiled program computes them): the value, its
  gradient with respect to x and y, the Jacobian, a Hessian-vector product
  and a JVP, and the variables afterwards;
- around the call (tapes recording the replay of the trace): the value's
  gradient, second derivative and JVP.

Hypothesis is derandomized (seeded): the same programs run on every machine.
"""
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import minitape as mt

F64 = mt.float64


@mt.custom_gradient
def _half_square(z):
    def grad(dy):
        return dy * z
    return 0.5 * z * z, grad


def _rows_then_fill(a, i, c):
    """The first i rows of a, the rest filled with c (i a slice bound, c a fill)."""
    n = a.shape[0]
    k = min(int(i), n)
    return mt.pad(a[:i], [[0, n - k], [0, 0]], constant_values=c)


def _row(a, x, i):
    n = a.shape[0]
    if n == 0:
        return a
    return a * x[mt.minimum(i, n - 1)]   # an index computed from an argument


STEPS = {
    "sin": lambda a, e: mt.sin(a),
    "tanh": lambda a, e: mt.tanh(a),
    "sigmoid": lambda a, e: mt.nn.sigmoid(a),
    "half_square": lambda a, e: a * a * 0.5,
    "mul_y": lambda a, e: a * e["y"],
    "add_x": lambda a, e: a + e["x"],
    "sub_y": lambda a, e: a - e["y"],
    "div": lambda a, e: a / (1.0 + e["y"] * e["y"]),
    "sqrt": lambda a, e: mt.sqrt(a * a + 1.0),
    "exp": lambda a, e: mt.exp(mt.tanh(a)),
    "log": lambda a, e: mt.log(a * a + 1.0),
    "abs": lambda a, e: mt.abs(a),
    "relu": lambda a, e: mt.nn.relu(a),
    "softplus": lambda a, e: mt.nn.softplus(a),
    "elu": lambda a, e: mt.nn.elu(a),
    "maximum": lambda a, e: mt.maximum(a, e["y"]),
    "minimum": lambda a, e: mt.minimum(a, e["x"]),
    "where": lambda a, e: mt.where(a > 0, a, e["y"] * 0.5),
    "pow": lambda a, e: mt.pow(a * a + 1.0, 0.5),
    "sum0": lambda a, e: a + mt.reduce_sum(a, axis=0, keepdims=True),
    "mean1": lambda a, e: a - mt.reduce_mean(a, axis=1, keepdims=True),
    "max0": lambda a, e: a * mt.reduce_max(a, axis=0, keepdims=True),
    "min1": lambda a, e: a + mt.reduce_min(a, axis=1, keepdims=True),
    "prod0": lambda a, e: a * mt.reduce_prod(mt.tanh(a), axis=0, keepdims=True),
    "softmax": lambda a, e: mt.nn.softmax(a, axis=-1),
    "transpose": lambda a, e: mt.transpose(mt.transpose(a) * 2.0),
    "matmul": lambda a, e: mt.matmul(mt.matmul(a, e["y"], transpose_b=True), a) * 0.1,
    "einsum": lambda a, e: mt.einsum("ik,kj->ij", mt.einsum("ij,kj->ik", a, e["x"]),
                                     e["y"]) * 0.1,
    "concat": lambda a, e: mt.concat([a, e["x"]], axis=1)[:, :a.shape[1]],
    "stack": lambda a, e: mt.reduce_sum(mt.stack([a, e["y"]]), axis=0),
    "rows_then_fill": lambda a, e: _rows_then_fill(a, e["i"], e["c"]),
    "row": lambda a, e: _row(a, e["x"], e["i"]),
    "reshape": lambda a, e: mt.reshape(mt.reshape(a, [-1]), e["sizes"]),
    "clip": lambda a, e: mt.clip_by_value(a, -mt.abs(e["c"]) - 0.5, mt.abs(e["c"]) + 0.5),
    "read": lambda a, e: a * e["w"],
    "assign_add": lambda a, e: _assign_then_read(a, e["w"]),
    "swap": lambda a, e: _swap(a, e["w"], e["u"]),
    "recompute": lambda a, e: mt.recompute_grad(lambda z: mt.sin(z) * z * e["w"])(a),
    "pass_through": lambda a, e: mt.grad_pass_through(lambda z: mt.round(z))(a) + a,
    "custom": lambda a, e: _half_square(a),
    "stop": lambda a, e: mt.stop_gradient(a) * 0.5 + a,
}


def _assign_then_read(a, w):
    before = w.read_value()
    w.assign_add(mt.reduce_sum(mt.tanh(a)) * 0.01)
    return a * before + w


def _swap(a, w, u):
    first, second = w.read_value(), u.read_value()
    w.assign(second)
    u.assign(first)
    return a * first + second


def make_program(steps, w, u):
    def program(x, y, i, c, sizes):
        env = {"x": x, "y": y, "i": i, "c": c, "sizes": sizes, "w": w, "u": u}
        a = x
        for name in steps:
            a = STEPS[name](a, env)
        return a
    return program


def with_derivatives(program):
    """The program's value and, computed inside (so compiled with it): the
    gradient of its sum, the Jacobian, a Hessian-vector product and a JVP."""
    def f(x, y, i, c, sizes):
        zero = mt.UnconnectedGradients.ZERO
        with mt.GradientTape() as outer:
            outer.watch(x)
            with mt.GradientTape(persistent=True) as tape:
                tape.watch([x, y])
                a = program(x, y, i, c, sizes)
                total = mt.reduce_sum(a)
            gx, gy = tape.gradient(total, [x, y], unconnected_gradients=zero)
            jacobian = tape.jacobian(a, x, unconnected_gradients=zero)
        hvp = outer.gradient(gx, x, output_gradients=mt.ones_like(x),
                             unconnected_gradients=zero)
        with mt.autodiff.ForwardAccumulator(x, mt.ones_like(x)) as acc:
            again = program(x, y, i, c, sizes)
        jvp = acc.jvp(again, unconnected_gradients=zero)
        return a, gx, gy, jacobian, hvp, jvp
    return f


def around_the_call(function, args):
    """Derivatives taken by tapes around a call (they record the trace's replay)."""
    x = args[0]
    zero = mt.UnconnectedGradients.ZERO
    with mt.GradientTape() as outer:
        outer.watch(x)
        with mt.GradientTape() as tape:
            tape.watch(x)
            total = mt.reduce_sum(function(*args)[0])
        g = tape.gradient(total, x, unconnected_gradients=zero)
    second = outer.gradient(g, x, unconnected_gradients=zero)
    with mt.autodiff.ForwardAccumulator(x, mt.ones_like(x)) as acc:
        out = function(*args)[0]
    return [g, second, acc.jvp(out, unconnected_gradients=zero)]


def _inputs(draw, n, m, special):
    """x, y (n, m) and the scalar arguments; `special`: one or two entries of x
    or y are inf, -inf or NaN (a lone inf is where the masks matter)."""
    elements = st.floats(-2, 2, allow_nan=False, width=64)
    x = np.array(draw(st.lists(elements, min_size=n * m, max_size=n * m))).reshape(n, m)
    y = np.array(draw(st.lists(elements, min_size=n * m, max_size=n * m))).reshape(n, m)
    if special and n * m:
        for _ in range(draw(st.integers(1, 2))):
            target = draw(st.sampled_from([x, y]))
            target.flat[draw(st.integers(0, n * m - 1))] = draw(
                st.sampled_from([np.inf, -np.inf, np.nan]))
    i = draw(st.integers(0, 3))
    c = draw(st.floats(-2, 2, allow_nan=False, width=64))
    return [mt.constant(x, F64), mt.constant(y, F64), mt.constant(i, mt.int32),
            mt.constant(c, F64), mt.constant([n, m], mt.int32)]


@st.composite
def cases(draw):
    steps = draw(st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=4))
    n, m = draw(st.integers(0, 2)), draw(st.integers(0, 3))
    n2, m2 = draw(st.tuples(st.integers(0, 2), st.integers(0, 3)).filter(
        lambda s: s != (n, m)))
    special = [draw(st.booleans()) for _ in range(3)]   # NaN/inf entries, call by call
    calls = [_inputs(draw, n, m, special[0]), _inputs(draw, n, m, special[1]),
             _inputs(draw, n2, m2, special[2])]
    return steps, calls, special


SIGNATURE = [mt.TensorSpec([None, None], F64), mt.TensorSpec([None, None], F64),
             mt.TensorSpec([], mt.int32), mt.TensorSpec([], F64),
             mt.TensorSpec([2], mt.int32)]

FIGURES = {"programs": 0, "calls": 0}
MAX_EXAMPLES = int(os.environ.get("MINITAPE_FUZZ_EXAMPLES", "20"))


def _same(label, got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, \
        f"{label}: {got.dtype}{got.shape} != {want.dtype}{want.shape}"
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10, equal_nan=True,
                               err_msg=label)


@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.generate] if os.environ.get("MINITAPE_FUZZ_NO_SHRINK")
          else list(Phase))
@given(cases())
def test_traced_and_compiled_programs_match_eager(case):
    steps, calls, special = case
    ways = {}
    for way in ("eager", "traced", "compiled", "signature"):
        w = mt.Variable(np.float64(0.5), name="w")
        u = mt.Variable(np.float64(-1.5), name="u")
        f = with_derivatives(make_program(steps, w, u))
        if way != "eager":
            f = mt.function(f, jit_compile=way != "traced",
                            input_signature=SIGNATURE if way == "signature" else None)
        ways[way] = (f, w, u)
    FIGURES["programs"] += 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # NumPy's invalid-value warnings, retracing
        for k, args in enumerate(calls):
            results = {way: [t.numpy() for t in f(*args)] + [w.numpy(), u.numpy()]
                       for way, (f, w, u) in ways.items()}
            FIGURES["calls"] += len(ways)
            for way in ("traced", "compiled", "signature"):
                for name, got, want in zip(
                        ("value", "dx", "dy", "jacobian", "hvp", "jvp", "w", "u"),
                        results[way], results["eager"]):
                    _same(f"{steps} call {k} {way} ({special}): {name}", got, want)
            if k >= 1:  # tapes around the call (replaying the graph)
                around = {way: [t.numpy() for t in around_the_call(ways[way][0], args)]
                          for way in ways}   # (all: each call assigns the variables)
                for way in ("traced", "compiled", "signature"):
                    for name, got, want in zip(("gradient", "second", "jvp"),
                                               around[way], around["eager"]):
                        _same(f"{steps} call {k} around {way} ({special}): {name}", got,
                              want)


def test_figures_were_counted():
    """Run after the fuzz test (the file's order): it ran programs and calls."""
    if FIGURES["programs"] == 0:
        pytest.skip("run with the fuzz test")
    assert FIGURES["calls"] >= 3 * 4 * FIGURES["programs"]
