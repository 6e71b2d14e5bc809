"""Forward and reverse mode agree where the derivative is finite.

A JVP rule multiplies each input's tangent by a partial derivative. Where the
tangent is 0 (that input does not move) and the partial derivative is inf,
0 * inf would be NaN, although the directional derivative is plainly finite:
reverse mode never forms that product. These cases, from issue 10, compare
reverse mode (gradient, jacobian) with forward mode (ForwardAccumulator, and
jacobian(experimental_direction="forward")), and with the true value.
"""
import numpy as np
import pytest

import minitape as mt

INF = np.float32(np.inf)


def _reverse(f, xs):
    with mt.GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    return [g.numpy() for g in tape.gradient(y, xs)]


def _accumulator(f, xs):
    """One forward sweep per input: tangent 1 for that input, 0 for the others
    (zeros, not missing: the zero tangent is the point)."""
    out = []
    for i in range(len(xs)):
        tangents = [mt.ones_like(x) if j == i else mt.zeros_like(x)
                    for j, x in enumerate(xs)]
        with mt.autodiff.ForwardAccumulator(xs, tangents) as acc:
            y = f(*xs)
        out.append(acc.jvp(y).numpy())
    return out


def _jacobians(f, xs, direction):
    with mt.GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    return [j.numpy() for j in tape.jacobian(y, xs, experimental_direction=direction)]


# (id, f, inputs, the true derivative with respect to each input; NaN/inf
# where it is not finite, which both directions must then agree on too)
CASES = [
    ("pow-0-0", lambda x, y: x ** y, [0.0, 0.0], [np.nan, 0.0]),
    ("pow-0-half", lambda x, y: x ** y, [0.0, 0.5], [np.inf, 0.0]),
    ("pow-2-3", lambda x, y: x ** y, [2.0, 3.0], [12.0, 8 * np.log(2)]),
    ("mul-by-inf", lambda x0, x1: x0 * 1.0 + x1 * INF, [2.0, 3.0], [1.0, np.inf]),
    ("mul-inf-both-ways", lambda x0, x1: x0 * x1, [INF, 0.0], [0.0, np.inf]),
    ("div-by-zero", lambda x, y: x / y + y, [1.0, 0.0], [np.inf, -np.inf]),
    # The path through the NaN x / y is multiplied by the constant 0: it adds nothing.
    ("nan-path-times-zero", lambda x, y: x / y * 0.0 + x, [0.0, 0.0], [1.0, 0.0]),
    ("div-zero-by-zero", lambda x, y: x / y, [0.0, 0.0], [np.inf, np.nan]),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("f, values, expected",
                         [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_forward_and_reverse_agree(f, values, expected):
    xs = [mt.constant(np.float32(v)) for v in values]
    reverse = _reverse(f, xs)
    forward = _accumulator(f, xs)
    jac_forward = _jacobians(f, xs, "forward")
    jac_reverse = _jacobians(f, xs, "reverse")
    for got in (reverse, forward, jac_forward, jac_reverse):
        np.testing.assert_allclose(np.array(got, np.float64), expected, rtol=1e-6)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_vector_input_with_an_infinite_weight():
    """The issue's x0 * 1 + x1 * inf with x = [x0, x1] ONE tensor: the one-hot
    tangent [1, 0] has a zero inside it, met by the inf weight."""
    w = mt.constant([1.0, INF])

    def f(x):
        return mt.reduce_sum(x * w)

    x = mt.constant([2.0, 3.0])
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = f(x)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [1.0, np.inf])
    np.testing.assert_array_equal(tape.jacobian(y, x, experimental_direction="forward"),
                                  [1.0, np.inf])
    with mt.autodiff.ForwardAccumulator(x, mt.constant([1.0, 0.0])) as acc:
        y = f(x)
    assert float(acc.jvp(y)) == 1.0
    # pow, elementwise over a vector: d(x ** y)/dy at x = 0 is 0 in both directions.
    b, e = mt.constant([0.0, 0.0, 2.0]), mt.constant([0.0, 0.5, 3.0])
    with mt.GradientTape(persistent=True) as tape:
        tape.watch([b, e])
        p = b ** e
    for direction in ("forward", "reverse"):
        jb, je = tape.jacobian(p, [b, e], experimental_direction=direction)
        np.testing.assert_allclose(np.diag(je.numpy()), [0.0, 0.0, 8 * np.log(2)],
                                   rtol=1e-6)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_second_derivative_through_the_masked_jvp():
    """Reverse over forward: a tape differentiates the JVP of x * y; where the
    mask is not needed the JVP is the usual product, so d/dx (tx * y + x * ty)
    with ty = 1 is 1 everywhere."""
    x, y = mt.constant([1.0, 2.0]), mt.constant([3.0, INF])
    with mt.GradientTape() as tape:
        tape.watch(x)
        with mt.autodiff.ForwardAccumulator([x, y], [mt.zeros_like(x),
                                                     mt.ones_like(y)]) as acc:
            z = x * y
        jvp = acc.jvp(z)
    np.testing.assert_array_equal(jvp.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(tape.gradient(jvp, x).numpy(), [1.0, 1.0])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("direction, use_pfor", [("forward", True), ("reverse", True),
                                                 ("reverse", False), ("forward", False)])
def test_jacobian_zeros_off_the_diagonal_in_every_direction(direction, use_pfor):
    """y = x * [1, inf]: dy0/dx1 is 0. Reverse mode's one-hot seed [1, 0] meets
    the inf as 0 * inf just as forward mode's does; both rules drop it."""
    cases = [
        (lambda x: x * mt.constant([1.0, INF]), [2.0, 3.0], [[1.0, 0.0], [0.0, np.inf]]),
        (lambda x: x / mt.constant([1.0, 0.0]), [2.0, 3.0], [[1.0, 0.0], [0.0, np.inf]]),
        (lambda x: mt.constant([0.0, 0.0]) ** x, [0.0, 0.5], [[0.0, 0.0], [0.0, 0.0]]),
        (lambda x: x ** mt.constant([0.0, 0.5]), [0.0, 0.0], [[np.nan, 0.0], [0.0, np.inf]]),
        (lambda x: mt.constant([1.0, 0.0]) / x, [1.0, 0.0],
         [[-1.0, 0.0], [0.0, np.nan]]),
    ]
    for f, value, expected in cases:
        x = mt.constant(value)
        with mt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = f(x)
        j = tape.jacobian(y, x, experimental_direction=direction,
                          experimental_use_pfor=use_pfor)
        np.testing.assert_array_equal(j.numpy(), expected)
