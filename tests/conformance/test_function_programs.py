"""The differential fuzz's random programs (`tests/function_programs.py`) under
`tf.function` and `mt.function`: minitape's answers must be TensorFlow's, or
differ only as a row of docs/differences.md says.

Each program is a chain of one to four steps, called three times, as in
`tests/test_function_fuzz.py`: twice with one shape and once with another,
the first call on finite values (the trace is made there) and each later call
with an inf, -inf or NaN entry or not, on its own draw. Compared, as the
conformance harness compares (structure, None, dtypes, shapes, NaN for NaN,
values to 1e-9): the value, the gradients with respect to x and y, the
Jacobian, a Hessian-vector product and a JVP, all computed inside the
function, the variables afterwards, and at the second call the gradient,
second derivative and JVP taken by tapes around the call. minitape runs
traced and compiled (`jit_compile=True`).

A difference must be one of docs/differences.md's rows, checked by undoing it:
- "a zero tangent meeting an infinite partial derivative in forward mode":
  minitape differentiating as TensorFlow does (the masks of its product rules
  off, and zero tangents where TensorFlow has them) gives TensorFlow's answer;
  TensorFlow's gradient of a tf.function call also sends zeros to the
  outputs nobody differentiates, which meet the infinite partial derivatives
  of the gradients computed inside: there TensorFlow's eager mode gives
  minitape's answer;
- "`recompute_grad` under `ForwardAccumulator`": TensorFlow raises
  NotImplementedError for a program with a `recompute_grad` step (its JVP);
- "`grad_pass_through` under `ForwardAccumulator` inside a function":
  TensorFlow's tf.function gives f's own JVP where its eager mode (and
  minitape, everywhere) passes the tangent through.
TensorFlow 2.21 also fails on some programs minitape runs: its pfor (the
Jacobian) of a matmul over an empty dimension raises InvalidArgumentError
("Inputs to operation loop_body/AddN/pfor/AddN ... must have the same size");
those calls are counted apart.
Anything else fails the test. The figures (programs, calls, agreements and
differences by row) are printed; MINITAPE_TF_PROGRAMS sets the number of
programs (12 by default, so CI stays quick).
"""
import os
import warnings

import numpy as np
import pytest

from . import harness

harness.setup_tensorflow_env()
if os.environ.get("MINITAPE_REQUIRE_TF"):
    import tensorflow as tf  # noqa: F401  (an ImportError fails the run)
else:
    tf = pytest.importorskip("tensorflow")
import function_programs as programs  # noqa: E402  (tests/, on pytest's path)
import minitape as mt  # noqa: E402
from minitape.core import registry  # noqa: E402
from minitape.ops import zero_times_inf  # noqa: E402

harness.quiet(tf)

N_PROGRAMS = int(os.environ.get("MINITAPE_TF_PROGRAMS", "12"))
MASKS_ROW = "a zero tangent meeting an infinite partial derivative in forward mode"
RECOMPUTE_ROW = "`recompute_grad` under `ForwardAccumulator`"
PASS_THROUGH_ROW = "`grad_pass_through` under `ForwardAccumulator` inside a function"
TF_EMPTY_PFOR = "TensorFlow fails: pfor over an empty dimension"
FIGURES = {"programs": 0, "calls": 0, "agree": 0, MASKS_ROW: 0, RECOMPUTE_ROW: 0,
           PASS_THROUGH_ROW: 0, TF_EMPTY_PFOR: 0}


class _Tolerance:
    """The harness reads a case's tolerances from attributes like these."""
    rtol, atol = 1e-9, 1e-12


def _program(seed):
    """(steps, [three calls of (x, y, i, c)]) drawn from `seed`."""
    rng = np.random.default_rng(seed)
    names = sorted(programs.steps(mt))
    steps = list(rng.choice(names, size=rng.integers(1, 5)))
    shapes = [tuple(rng.integers(0, [3, 4]))]
    while len(shapes) < 2:
        other = tuple(rng.integers(0, [3, 4]))
        if other != shapes[0]:
            shapes.append(other)
    calls = []
    for k, (n, m) in enumerate([shapes[0], shapes[0], shapes[1]]):
        x, y = (rng.integers(-8, 9, (n, m)) / 4.0 for _ in range(2))  # zeros and ties too
        if k and n * m and rng.random() < 0.6:
            for _ in range(rng.integers(1, 3)):
                target = x if rng.random() < 0.5 else y
                target.flat[rng.integers(n * m)] = rng.choice([np.inf, -np.inf, np.nan])
        calls.append((x, y, int(rng.integers(0, 4)), float(rng.integers(-8, 9) / 4)))
    return [str(s) for s in steps], calls


def _results(m, steps, calls, jit=False, eager=False):
    """Each call's results in module m under m.function (or `eager`): [value
    and derivatives (or what raised), the variables, and at call 1 the tapes
    around it]."""
    w = m.Variable(np.float64(0.5), name="w")
    u = m.Variable(np.float64(-1.5), name="u")
    f = programs.with_derivatives(m, programs.make_program(m, steps, w, u))
    if not eager:
        f = m.function(f, **({"jit_compile": True} if jit else {}))
    out = []
    for k, call in enumerate(calls):
        args = programs.arguments(m, *call)
        inside = harness.run(lambda mod: list(f(*args)), m)
        around = harness.run(lambda mod: programs.around_the_call(m, f, args), m) \
            if k == 1 else None
        out.append([inside, harness.normalise([w, u], m), around])
    return out


class _TensorFlowRules:
    """minitape differentiating as TensorFlow does where docs/differences.md's masks row
    says they differ: the product rules' zero-times-inf masks off, and in
    forward mode a zero tangent (not none) for every input the tangents do
    not reach, which TensorFlow multiplies by the partial derivative."""

    def __enter__(self):
        self.saved = dict(registry._jvp_rules)
        zero_times_inf.APPLY = False
        for op_type, (rule, batch_safe) in self.saved.items():
            if batch_safe:
                registry._jvp_rules[op_type] = (_with_zero_tangents(rule), True)
        return self

    def __exit__(self, *exc):
        zero_times_inf.APPLY = True
        rules = self.saved
        registry._jvp_rules.clear()
        registry._jvp_rules.update(rules)


def _with_zero_tangents(rule):
    def zero_tangents(op, *tangents):
        tangents = [mt.zeros_like(x) if t is None and x.dtype.kind in "fc" else t
                    for x, t in zip(op.inputs, tangents)]
        return rule(op, *tangents)
    return zero_tangents


def _parts(result):
    """{part name: value} of one call's results (a part that raised stays whole)."""
    inside, variables, around = result
    parts = {"variables": variables}
    for prefix, group, names in (("", inside, programs.NAMES),
                                 ("around: ", around, ("gradient", "second", "jvp"))):
        if isinstance(group, list):
            parts.update({prefix + n: v for n, v in zip(names, group)})
        elif group is not None:
            parts[prefix + "all"] = group
    return parts


def _explained(steps, calls, tf_results, mt_results, k):
    """{docs/differences.md row or TensorFlow failure: [parts]} explaining the differences
    at call k; unexplained parts under None."""
    inside = tf_results[k][0]
    if isinstance(inside, harness.Raised):
        if "recompute" in steps and isinstance(inside.exc, NotImplementedError):
            return {RECOMPUTE_ROW: ["all"]}
        if "pfor" in str(inside.exc) and 0 in calls[k][0].shape:
            return {TF_EMPTY_PFOR: ["all"]}
    tf_parts, mt_parts = _parts(tf_results[k]), _parts(mt_results[k])
    differing = [n for n in tf_parts
                 if harness.differences(tf_parts[n], mt_parts.get(n), _Tolerance)]
    with _TensorFlowRules():
        as_tensorflow = _parts(_results(mt, steps, calls)[k])
    tf_eager = _parts(_results(tf, steps, calls, eager=True)[k])
    rows = {}
    for n in differing:
        if not harness.differences(tf_parts[n], as_tensorflow.get(n), _Tolerance):
            row = MASKS_ROW
        elif not harness.differences(tf_eager.get(n), mt_parts[n], _Tolerance):
            # TensorFlow's tf.function differs from its own eager mode, and
            # minitape gives the eager answer
            row = PASS_THROUGH_ROW if "pass_through" in steps and n.endswith("jvp") else \
                MASKS_ROW if n.startswith("around") else None
        else:
            row = None
        rows.setdefault(row, []).append(n)
    return rows


def test_random_programs_agree_with_tf_function():
    unexplained = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # NumPy's invalid-value warnings, retracing
        for seed in range(N_PROGRAMS):
            steps, calls = _program(seed)
            tf_results = _results(tf, steps, calls)
            FIGURES["programs"] += 1
            for jit in (False, True):
                mt_results = _results(mt, steps, calls, jit=jit)
                for k in range(len(calls)):
                    FIGURES["calls"] += 1
                    diffs = harness.differences(tf_results[k], mt_results[k], _Tolerance)
                    if not diffs:
                        FIGURES["agree"] += 1
                        continue
                    rows = _explained(steps, calls, tf_results, mt_results, k)
                    if None in rows:
                        unexplained.append(f"seed {seed} {steps} call {k} "
                                           f"({'compiled' if jit else 'traced'}): {rows[None]} "
                                           f"{diffs[:3]}")
                    for row in rows:
                        if row is not None:
                            FIGURES[row] += 1
    print("\nfunction programs under tf.function:", FIGURES)
    assert not unexplained, "\n".join(unexplained[:10])
