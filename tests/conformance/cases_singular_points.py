"""Ops at the points where they, or their derivatives, break down, and the
arguments minitape used to refuse: each case agrees with TensorFlow 2.21."""
import numpy as np

from .probes import probe


def case_round_of_integers(m):
    # tf.round returns an integer tensor as it is, of its own dtype
    return [m.round(m.constant([1, -2, 3])), m.round(m.constant([1, -2], dtype=m.int64))]


def case_l2_normalize_epsilon_tensor(m):
    # epsilon as a tensor of x's dtype: differentiable in both, epsilon included
    return probe(m, lambda x, e: m.math.l2_normalize(x, epsilon=e), [0.001, 0.002], 1e-5)


def case_l2_normalize_epsilon_tensor_rows(m):
    x = m.constant([[3.0, 4.0], [0.0, 0.0], [1e-4, 0.0]])
    eps = m.constant([1e-6])
    with m.GradientTape() as tape:
        tape.watch([x, eps])
        y = m.math.l2_normalize(x, axis=1, epsilon=eps)
    return y, tape.gradient(y, [x, eps])


case_l2_normalize_epsilon_tensor_rows.ulps = 64


def case_l2_normalize_epsilon_of_another_dtype(m):
    return m.math.l2_normalize(m.constant([1.0, 2.0], m.float64), epsilon=m.constant(1e-6))


case_l2_normalize_epsilon_of_another_dtype.error_only = True


def case_clip_by_value_complex(m):
    return m.clip_by_value(m.constant([1 + 2j]), 0.0, 1.0)


case_clip_by_value_complex.error_only = True


def case_atan2_second_derivative_at_the_origin(m):
    # NaN at the origin, where the gradient is NaN too
    return probe(m, m.math.atan2, [0.0, 1.0, 3.0], [0.0, 0.0, -4.0],
                 parts=("value", "grad", "grad2"))


def case_atan2_where_at_the_origin(m):
    # the branch where did not pick: NaN at the origin in both (the rule is not masked)
    return probe(m, lambda y, x: m.where(x > 0, m.math.atan2(y, x), 0.0), [0.0, 1.0],
                 [0.0, 2.0], parts=("value", "grad", "jvp"))


def case_pow_negative_exponent_at_zero(m):
    # value and gradient agree (the JVP is a documented difference)
    return probe(m, lambda x: [m.pow(x, -2.0), x ** -2], [0.0, 2.0, -1.0],
                 parts=("value", "grad", "grad2"))


def case_singular_gradients_elementwise(m):
    # gradients and second derivatives at the singular points, where both agree
    fs = [m.sqrt, m.math.rsqrt, m.math.reciprocal, m.abs, m.nn.relu,
          lambda x: m.pow(x, 3.0), lambda x: m.pow(x, 0.5), lambda x: m.pow(x, 2.0)]
    return [probe(m, f, np.array([0.0, -0.0, -2.0, 3.0]), parts=("value", "grad", "grad2"))
            for f in fs]


def _second_derivatives_both_ways(m, f, values):
    """f's gradient, then the derivative of (the sum of) that gradient along
    ones: by a tape around a tape, and by a ForwardAccumulator around a tape."""
    out = {}
    for dtype in ("float32", "float64"):
        x = m.constant(np.asarray(values, dtype))
        with m.GradientTape() as outer:
            outer.watch(x)
            with m.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            g = inner.gradient(y, x)
        nested = outer.gradient(g, x)
        with m.autodiff.ForwardAccumulator(x, m.ones_like(x)) as acc:
            with m.GradientTape() as tape:
                tape.watch(x)
                y = f(x)
            g = tape.gradient(y, x)
        out[dtype] = [g, nested, acc.jvp(g)]
    return out


def case_norm_second_derivative_at_zero(m):
    # issue 30: [nan, nan, nan] both ways, as the gradient (minitape gave inf)
    return _second_derivatives_both_ways(m, m.norm, [0.0, 0.0, 0.0])


def case_atan2_forward_over_reverse_at_the_origin(m):
    # issue 30: nan both ways at the origin (minitape's forward-over-reverse gave +-inf)
    return _second_derivatives_both_ways(m, lambda v: m.math.atan2(v[0], v[1]), [0.0, 0.0])


def _forward_over_reverse(m, fn):
    """The JVP of fn's gradient (a ForwardAccumulator around a tape) and the
    gradient of its gradient, at the kinks, at inf and at NaN."""
    x = m.constant([-np.inf, -1.0, -0.0, 0.0, 0.5, 7.0, np.inf, np.nan])
    with m.autodiff.ForwardAccumulator(x, m.ones_like(x)) as acc:
        with m.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        g = tape.gradient(y, x)
    with m.GradientTape() as outer:
        outer.watch(x)
        with m.GradientTape() as inner:
            inner.watch(x)
            y = fn(x)
        g1 = inner.gradient(y, x)
    return acc.jvp(g), outer.gradient(g1, x)


def case_relu_forward_over_reverse(m):
    # zeros, not None: ReluGrad's tangent with respect to x is zeros
    return _forward_over_reverse(m, m.nn.relu)


def case_relu6_forward_over_reverse(m):
    return _forward_over_reverse(m, m.nn.relu6)


def case_leaky_relu_forward_over_reverse(m):
    return _forward_over_reverse(m, m.nn.leaky_relu)
