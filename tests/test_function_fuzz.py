"""A seeded differential test of `mt.function` over random programs.

Each random program is a chain of steps (`function_programs.py`: arithmetic,
reductions, matmul and einsum, tensor arguments used as indices, slice
bounds, fills, clip bounds and shapes, variables read, assigned and swapped,
`recompute_grad`, `grad_pass_through`, a custom gradient). It runs four ways:
eagerly (the reference), traced, compiled (`jit_compile=True`) and compiled for
an any-shape input_signature. Each way is called three times: twice with different values of the same shapes and once
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

import function_programs
import minitape as mt
from function_programs import NAMES, around_the_call, make_program, with_derivatives

F64 = mt.float64
STEPS = function_programs.steps(mt)


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
        f = with_derivatives(mt, make_program(mt, steps, w, u))
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
                for name, got, want in zip(NAMES + ("w", "u"),
                        results[way], results["eager"]):
                    _same(f"{steps} call {k} {way} ({special}): {name}", got, want)
            if k >= 1:  # tapes around the call (replaying the graph)
                around = {way: [t.numpy() for t in around_the_call(mt, ways[way][0], args)]
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
