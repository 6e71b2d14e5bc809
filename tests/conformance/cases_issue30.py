"""Issue 30: what TensorFlow's own unit tests still found (wrong numbers,
refusals, error kinds), each program run under TensorFlow 2.21 and minitape."""
from .probes import probe


# --- wrong numbers ---------------------------------------------------------------

def case_recompute_grad_same_tensor_twice(m):
    # TensorFlow's regression test: f(x, x) with f(a, b) = a * b, at x = 3:
    # value 9, gradient 6 (minitape gave 12), second derivative 2.
    g = m.recompute_grad(lambda a, b: a * b)
    return probe(m, lambda x: g(x, x), [3.0, -0.5], parts=("value", "grad", "grad2"))


def _tape_and_accumulator(m, accumulator_outside):
    c = m.constant(1.0)
    acc = m.autodiff.ForwardAccumulator(c, m.constant(0.1))
    tape = m.GradientTape()
    outer, inner = (acc, tape) if accumulator_outside else (tape, acc)
    with outer:
        with inner:
            tape.watch(c)
            d = m.cos(c)
            jvp = acc.jvp(d)
    return d, jvp, tape.gradient(jvp, c)


def case_tape_inside_accumulator_does_not_record_tangents(m):
    # forwardprop_test's testForwardOverBackwardMemoryEfficiency: None
    # (minitape gave -0.054, the derivative of the JVP).
    return _tape_and_accumulator(m, accumulator_outside=True)


def case_tape_outside_accumulator_records_tangents(m):
    # testBackwardOverForward: -0.1 * cos(1)
    return _tape_and_accumulator(m, accumulator_outside=False)
