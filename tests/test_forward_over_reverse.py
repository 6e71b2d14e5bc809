"""Forward over reverse through the piecewise-linear activations: TensorFlow
2.21 gives zeros, not None, for the JVP of relu's, relu6's and leaky_relu's
gradient (their gradient ops, ReluGrad and the like, have a zero tangent with
respect to x), and zeros for the gradient of their gradient: +0 everywhere,
at the kinks, at -0, at +-inf and at NaN alike."""
import numpy as np
import pytest

import minitape as mt

POINTS = [-np.inf, -1.0, -0.0, 0.0, 0.5, 7.0, np.inf, np.nan]
ACTIVATIONS = [mt.nn.relu, mt.nn.relu6, mt.nn.leaky_relu]


def _gradient(fn, x):
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    return tape.gradient(y, x)


def _plus_zeros(t, n):
    assert t is not None, "None: the gradient looked unconnected to x"
    values = np.asarray(t)
    assert values.shape == (n,)
    assert (values == 0).all() and not np.signbit(values).any(), values  # +0, never -0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", ACTIVATIONS, ids=lambda f: f.__name__)
def test_jvp_of_the_gradient_is_zeros(fn, dtype):
    x = mt.constant(np.array(POINTS, dtype))
    with mt.autodiff.ForwardAccumulator(x, mt.ones_like(x)) as acc:
        g = _gradient(fn, x)
    _plus_zeros(acc.jvp(g), len(POINTS))


@pytest.mark.parametrize("fn", ACTIVATIONS, ids=lambda f: f.__name__)
def test_gradient_of_the_gradient_is_zeros(fn):
    x = mt.constant(np.array(POINTS, np.float32))
    with mt.GradientTape() as outer:
        outer.watch(x)
        g = _gradient(fn, x)
    _plus_zeros(outer.gradient(g, x), len(POINTS))


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("fn", ACTIVATIONS, ids=lambda f: f.__name__)
def test_traced_forward_over_reverse_is_zeros_at_every_call(fn, jit):
    @mt.function(jit_compile=jit)
    def jvp_of_gradient(x):
        with mt.autodiff.ForwardAccumulator(x, mt.ones_like(x)) as acc:
            g = _gradient(fn, x)
        return acc.jvp(g)

    _plus_zeros(jvp_of_gradient(mt.constant([1.0, -2.0, 3.0])), 3)  # traced without inf
    _plus_zeros(jvp_of_gradient(mt.constant([np.inf, -np.inf, np.nan])), 3)


def test_the_gradient_itself_is_unchanged():
    x = mt.constant(np.array(POINTS, np.float32))
    assert np.asarray(_gradient(mt.nn.relu, x)).tolist()[:7] == [0, 0, 0, 0, 1, 1, 1]
    leaky = np.asarray(_gradient(mt.nn.leaky_relu, x))
    np.testing.assert_allclose(leaky[:7], [0.2, 0.2, 0.2, 0.2, 1, 1, 1], rtol=1e-6)


def test_a_compiled_hessian_through_relu_spends_no_line_on_the_zero():
    # Under tapes alone the zero is |sign(x)| * 0, whose gradient is a constant:
    # the compiled program keeps no line of it (x - x would cost a dozen)
    x = mt.constant(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4))
    k = mt.Variable(np.full((4, 2), 0.5, np.float32))

    @mt.function(jit_compile=True)
    def hessian(x):
        with mt.GradientTape() as outer:
            with mt.GradientTape() as inner:
                loss = mt.reduce_sum(mt.nn.relu(x @ k) ** 2)
            g = inner.gradient(loss, k)
        return outer.jacobian(g, k)

    h = hessian(x)
    assert h.shape == (4, 2, 4, 2)
    source = hessian.experimental_get_compiler_ir(x)()
    for op_type in ("# Sign", "# Abs", "# Sub", "# Neg"):
        assert op_type not in source, source
