"""The zero of a flat piece: what a rule returns where an op's derivative is the constant 0.

relu's gradient is the upstream gradient where x > 0 and 0 elsewhere. That 0
could be a constant, but then a second derivative taken through the rule
would be None (unconnected), where TensorFlow gives zeros: its ReluGrad op,
and the GradGrad rules of relu6 and leaky_relu, return zeros for x. So while
a tape or an accumulator could differentiate the rule, the 0 is made from x
by ops whose derivatives are 0 (`flat_zero`); otherwise (no recorder, or
only a trace) it is a plain constant, and traced programs stay short.

Which ops make it depends on who differentiates: for tapes, |sign(x)| * 0
(sign's gradient is a constant, so a compiled Hessian drops the whole path:
the W4 benchmark's program keeps no line of it); while a ForwardAccumulator
records, x - x, whose tangent t - t is +0 where sign's is None. NaN (and for
x - x, inf) entries of x are replaced by 0 first; a trace replaces them
whatever the values it was traced with, for later calls.
"""
import numpy as np

from ..core.context import state
from .elementwise import abs, equal, less, sign, select
from .zero_times_inf import has_nan, recording_trace


def step_rules(passes):
    """(gradient, jvp) of an elementwise op whose derivative is 1 where
    `passes(x)` holds and 0 elsewhere (relu: x > 0): the upstream gradient
    where it passes, else the zero of a flat piece. Its Jacobian is diagonal
    and its own transpose, so the JVP is the same rule with the tangent in the
    place of the upstream gradient."""
    def gradient(op, grad):
        x = op.inputs[0]
        zero = flat_zero(x, grad.dtype)
        return select(passes(x), grad, zero)
    return gradient, gradient


def flat_zero(x, dtype):
    """0 of `dtype`, made from x while a recorder could differentiate the rule
    that uses it (see the module docstring), else a constant."""
    if all(r.is_trace for r in state.tapes):  # none, or traces
        return np.zeros((), dtype)
    if any(r.pushes_tangents for r in state.tapes):
        if recording_trace() is not None or not np.isfinite(x._value).all():
            x = select(less(abs(x), np.inf), x, np.zeros((), x.dtype))
        return x - x
    if recording_trace() is not None or has_nan(x._value):
        x = select(equal(x, x), x, np.zeros((), x.dtype))
    return abs(sign(x)) * 0
