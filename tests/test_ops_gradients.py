"""Every op of SPEC section 1: first, second and third derivatives against
central differences (float64), and vectorised Jacobians and Hessians
(`experimental_use_pfor=True`) against the plain loop.

One table row is one op call: `case(id, fn, *float64 inputs)`. Inputs are
chosen away from kinks (relu, abs, max at non-zero, no ties), inside domains
(sqrt and log of positives) and well-conditioned (solve, inv).
"""
import numpy as np
import pytest

import minitape as mt
from minitape.test import check_gradients

from op_table import D, M, P, R, S, case, family_cases  # noqa: F401


# --- math, through both `mt.X` and `mt.math.X` -------------------------------
MATH = [
    ("add", R(2, 3), R(2, 3)),
    ("subtract", R(2, 3), R(2, 3)),
    ("multiply", R(2, 3), R(2, 3)),
    ("divide", R(2, 3), S(2, 3)),
    ("negative", R(2, 3)),
    ("pow", P(2, 3), R(2, 3)),
    ("square", R(2, 3)),
    ("sqrt", P(2, 3)),
    ("exp", R(2, 3)),
    ("log", P(2, 3)),
    ("sin", R(2, 3)),
    ("cos", R(2, 3)),
    ("tanh", R(2, 3)),
    ("abs", S(2, 3)),
    ("maximum", D(2, 3), D(2, 3) + 0.05),
    ("minimum", D(2, 3), D(2, 3) + 0.05),
]
MATH_CASES = [case(f"{ns}.{name}", getattr(mt if ns == "mt" else mt.math, name), *args)
              for ns in ("mt", "mt.math") for name, *args in MATH]

OPERATOR_CASES = [
    case("x+y", lambda x, y: x + y, R(2, 3), R(2, 3)),
    case("x+2", lambda x: x + 2, R(2, 3)),
    case("2-x", lambda x: 2 - x, R(2, 3)),
    case("x*y", lambda x, y: x * y, R(2, 3), R(2, 3)),
    case("x/y", lambda x, y: x / y, R(2, 3), S(2, 3)),
    case("1/x", lambda x: 1.0 / x, S(2, 3)),
    case("x**3", lambda x: x ** 3, R(2, 3)),
    case("x**y", lambda x, y: x ** y, P(2, 3), R(2, 3)),
    case("2**x", lambda x: 2.0 ** x, R(2, 3)),
    case("-x", lambda x: -x, R(2, 3)),
    case("abs(x)", lambda x: abs(x), S(2, 3)),
    case("x@y", lambda x, y: x @ y, R(2, 3), R(3, 4)),
]

# --- reductions ----------------------------------------------------------------
AXES = [(None, False), (0, False), (1, True), ((0, 2), False), (-1, True), ([0, 1, 2], True)]
REDUCTION_CASES = [
    case(f"{name}-axis{axis}-keep{keep}",
         lambda x, name=name, axis=axis, keep=keep: getattr(mt, name)(x, axis=axis, keepdims=keep),
         D(2, 3, 4) if name in ("reduce_max", "reduce_min", "reduce_prod") else R(2, 3, 4))
    for name in ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod")
    for axis, keep in AXES
] + [
    case("math.reduce_sum", lambda x: mt.math.reduce_sum(x, axis=1), R(2, 3)),
    case("reduce_prod-2d", lambda x: mt.reduce_prod(x, axis=0), S(4, 3)),
    case("reduce_prod-with-zeros", lambda x: mt.reduce_prod(x, axis=1),
         [[0.0, 2.0, 0.0], [1.0, 0.0, 3.0], [0.5, 2.0, 3.0]]),
    case("norm", lambda x: mt.norm(x), R(2, 3)),
    case("norm-axis1", lambda x: mt.norm(x, axis=1), R(2, 3)),
    case("norm-ord2-keep", lambda x: mt.norm(x, ord=2, axis=-1, keepdims=True), R(2, 3)),
    case("norm-euclidean-axis0", lambda x: mt.norm(x, ord="euclidean", axis=0), R(2, 3)),
    case("norm-fro", lambda x: mt.norm(x, ord="fro"), R(3, 3)),
    case("norm-ord1", lambda x: mt.norm(x, ord=1, axis=1), S(2, 3)),
    case("norm-inf", lambda x: mt.norm(x, ord=np.inf, axis=0), D(2, 3)),
    case("linalg.norm", lambda x: mt.linalg.norm(x, axis=1), R(2, 3)),
]

# --- shapes and indexing -------------------------------------------------------
MASK = R(3, 4) > 0
SHAPE_CASES = [
    case("reshape", lambda x: mt.reshape(x, (6, 4)), R(2, 3, 4)),
    case("reshape-1", lambda x: mt.reshape(x, [-1]), R(2, 3, 4)),
    case("reshape-tensor-dim", lambda x: mt.reshape(x, [mt.constant(4), 1, 6]), R(2, 3, 4)),
    case("transpose", lambda x: mt.transpose(x), R(2, 3, 4)),
    case("transpose-perm", lambda x: mt.transpose(x, perm=[2, 0, 1]), R(2, 3, 4)),
    case("matrix_transpose", lambda x: mt.linalg.matrix_transpose(x), R(2, 3, 4)),
    case("pad", lambda x: mt.pad(x, [[1, 0], [2, 1]]), R(2, 3)),
    case("pad-constant", lambda x: mt.pad(x, [[0, 2], [1, 1]], constant_values=1.5), R(2, 3)),
    case("pad-tensor-constant",
         lambda x: mt.pad(x, [[1, 1], [0, 0]], constant_values=mt.constant(2.0)), R(2, 3)),
    case("concat-0", lambda x, y: mt.concat([x, y], axis=0), R(2, 3), R(1, 3)),
    case("concat-1", lambda x, y, z: mt.concat([x, y, z], 1), R(2, 3), R(2, 1), R(2, 2)),
    case("concat--1", lambda x, y: mt.concat([x, y], axis=-1), R(2, 2, 3), R(2, 2, 2)),
    case("stack-0", lambda x, y: mt.stack([x, y]), R(2, 3), R(2, 3)),
    case("stack-1", lambda x, y, z: mt.stack([x, y, z], axis=1), R(2, 3), R(2, 3), R(2, 3)),
    case("stack--1", lambda x, y: mt.stack([x, y], axis=-1), R(2, 3), R(2, 3)),
    case("squeeze", lambda x: mt.squeeze(x), R(2, 1, 3, 1)),
    case("squeeze-axis", lambda x: mt.squeeze(x, axis=1), R(2, 1, 3, 1)),
    case("squeeze-axes", lambda x: mt.squeeze(x, axis=[1, -1]), R(2, 1, 3, 1)),
    case("expand_dims-0", lambda x: mt.expand_dims(x, 0), R(2, 3)),
    case("expand_dims--1", lambda x: mt.expand_dims(x, -1), R(2, 3)),
    case("expand_dims-1", lambda x: mt.expand_dims(x, 1), R(2, 3)),
    case("broadcast_to", lambda x: mt.broadcast_to(x, (2, 3, 4)), R(3, 1)),
    case("identity", lambda x: mt.identity(x), R(2, 3)),
    case("unstack", lambda x: mt.stack(mt.unstack(x, axis=1)[::-1]), R(2, 3)),
    # indexing: x[...]
    case("x[1]", lambda x: x[1], R(3, 4)),
    case("x[-1]", lambda x: x[-1], R(3, 4)),
    case("x[1:3]", lambda x: x[1:3], R(4, 3)),
    case("x[:,::2]", lambda x: x[:, ::2], R(3, 5)),
    case("x[::-1]", lambda x: x[::-1], R(4, 2)),
    case("x[1,2]", lambda x: x[1, 2], R(3, 4)),
    case("x[None,...,1]", lambda x: x[None, ..., 1], R(2, 3, 4)),
    case("x[...,-1]", lambda x: x[..., -1], R(2, 3, 4)),
    case("x[1,None,:,2]", lambda x: x[1, None, :, 2], R(2, 3, 4)),
    case("x[tensor-int]", lambda x: x[mt.constant(2)], R(3, 4)),
    case("x[[0,2,2]]", lambda x: x[[0, 2, 2]], R(3, 4)),
    case("x[:,[2,0,2]]", lambda x: x[:, [2, 0, 2]], R(3, 4)),
    case("x[[0,0,1],[1,1,2]]", lambda x: x[[0, 0, 1], [1, 1, 2]], R(3, 4)),
    case("x[2d-int-array]", lambda x: x[np.array([[0, 1], [1, 1]])], R(3, 4)),
    case("x[[0,1],:,[1,1]]", lambda x: x[[0, 1], :, [1, 1]], R(2, 3, 4)),
    case("x[:,[0,0],1:]", lambda x: x[:, [0, 0], 1:], R(2, 3, 4)),
    case("x[bool-mask]", lambda x: x[MASK], R(3, 4)),
    case("x[bool-tensor-mask]", lambda x: x[mt.constant(MASK)], R(3, 4)),
    case("x[row-mask]", lambda x: x[np.array([True, False, True])], R(3, 4)),
]

# --- einsum, matmul, linear algebra --------------------------------------------
EINSUM = [
    ("bxby->bxy", R(2, 3, 2, 3)),            # repeated letters: a diagonal per batch
    ("ij,jk->ik", R(2, 3), R(3, 4)),
    ("ij,jk", R(2, 3), R(3, 4)),             # implicit output
    ("ii->i", R(3, 3)),
    ("ii", R(3, 3)),                         # trace
    ("iij->j", R(2, 2, 3)),
    ("ij->", R(2, 3)),
    ("ij->ji", R(2, 3)),
    ("i,j->ij", R(3), R(2)),
    ("ij,ij->i", R(2, 3), R(2, 3)),
    ("bij,bjk->bik", R(2, 2, 3), R(2, 3, 2)),
    ("...ij,...jk->...ik", R(2, 2, 3), R(2, 3, 2)),
    ("...i,i->...", R(2, 3, 4), R(4)),
    ("i...->...", R(2, 3, 4)),
    ("...ii->...i", R(2, 3, 3)),
]
EINSUM_CASES = [case(f"einsum-{eq}", lambda *xs, eq=eq: mt.einsum(eq, *xs), *args)
                for eq, *args in EINSUM]

LINALG_CASES = [
    case("matmul", mt.matmul, R(2, 3), R(3, 4)),
    case("matmul-ta", lambda a, b: mt.matmul(a, b, transpose_a=True), R(3, 2), R(3, 4)),
    case("matmul-tb", lambda a, b: mt.matmul(a, b, transpose_b=True), R(2, 3), R(4, 3)),
    case("matmul-ta-tb", lambda a, b: mt.matmul(a, b, transpose_a=True, transpose_b=True),
         R(3, 2), R(4, 3)),
    case("matmul-batch", mt.matmul, R(2, 3, 4), R(2, 4, 2)),
    case("matmul-batch-bcast", mt.matmul, R(2, 1, 3, 4), R(3, 4, 2)),
    case("matmul-rank-bcast", mt.matmul, R(3, 4), R(2, 4, 2)),
    case("matmul-bcast-ta-tb", lambda a, b: mt.matmul(a, b, transpose_a=True, transpose_b=True),
         R(2, 1, 4, 3), R(1, 3, 2, 4)),
    case("linalg.matmul", mt.linalg.matmul, R(2, 3), R(3, 2)),
    case("solve", mt.linalg.solve, M(3, 3), R(3, 2)),
    case("solve-adjoint", lambda a, b: mt.linalg.solve(a, b, adjoint=True), M(3, 3), R(3, 2)),
    case("solve-batch", mt.linalg.solve, M(2, 3, 3), R(2, 3, 1)),
    case("solve-bcast-matrix", mt.linalg.solve, M(3, 3), R(2, 3, 2)),
    case("inv", mt.linalg.inv, M(3, 3)),
    case("inv-batch", mt.linalg.inv, M(2, 3, 3)),
    case("inv-adjoint", lambda a: mt.linalg.inv(a, adjoint=True), M(3, 3)),
]

# --- nn, clipping, where, cast -------------------------------------------------
NN_CASES = [
    case("sigmoid", mt.nn.sigmoid, 3 * R(2, 3)),
    case("relu", mt.nn.relu, S(2, 3)),
    case("elu", mt.nn.elu, S(2, 3)),
    case("nn.tanh", lambda x: mt.nn.tanh(x), R(2, 3)),
    case("softplus", mt.nn.softplus, 3 * R(2, 3)),
    case("softmax", mt.nn.softmax, R(2, 3)),
    case("softmax-axis1", lambda x: mt.nn.softmax(x, axis=1), R(2, 3)),
    case("softmax-axis0", lambda x: mt.nn.softmax(x, axis=0), R(2, 3)),
    case("log_softmax", mt.nn.log_softmax, R(2, 3)),
    case("math.sigmoid", mt.math.sigmoid, R(2, 3)),
    case("clip_by_value", lambda x: mt.clip_by_value(x, -0.5, 0.5), D(2, 3) / 2.1),
    case("clip_by_value-tensor-bounds", mt.clip_by_value, D(2, 3), -P(3) / 2, P(3) / 2),
    case("clip_by_norm-clipped", lambda x: mt.clip_by_norm(x, 0.5), R(2, 3)),
    case("clip_by_norm-unclipped", lambda x: mt.clip_by_norm(x, 10.0), R(2, 3)),
    case("clip_by_norm-axes", lambda x: mt.clip_by_norm(x, 0.8, axes=[1]),
         np.array([[0.1, 0.2, -0.3], [1.0, -0.9, 0.5]])),
    case("where", lambda x, y: mt.where(mt.constant(MASK), x, y), R(3, 4), R(3, 4)),
    case("where-bcast", lambda x, y: mt.where(mt.constant(MASK[:, :1]), x, y), R(3, 4), R(4)),
    case("where-cond-biggest", lambda x, y: mt.where(mt.constant(MASK), x, y), R(4), R()),
    case("where-scalar-y", lambda x: mt.where(x > 0, x, 0.0), S(2, 3)),
    case("maximum-bcast", mt.maximum, D(3, 1), D(4) + 0.05),
    case("minimum-scalar", lambda x: mt.minimum(x, 0.1), D(2, 3)),
    case("cast-f64-f64", lambda x: mt.cast(x, mt.float64), R(2, 3)),
    # float32 in the middle: steps of 1e-2 keep float32 rounding out of the check.
    case("cast-f64-f32", lambda x: mt.cast(x, mt.float32), R(2, 3), eps=1e-2, rtol=1e-4),
    case("cast-f64-f32-f64", lambda x: mt.cast(mt.cast(x, mt.float32), mt.float64) * x,
         R(2, 3), eps=1e-2, rtol=1e-4, atol=1e-5),
]

# --- user-defined ops: a primitive and a custom_gradient ---------------------------
# Their rules are not marked batch-safe, so vectorised Jacobians call them row by row.
@mt.primitive("OpsTableCube")
def cube(x):
    return x ** 3


@mt.RegisterGradient("OpsTableCube")
def _cube_grad(op, grad):
    x = op.inputs[0]
    return grad * 3.0 * x * x


@mt.custom_gradient
def log1pexp(x):
    # grad_fn uses the input x (not a value computed inside log1pexp: see
    # test_checker.py's closure test), so outer tapes can differentiate it.
    return mt.log(1 + mt.exp(x)), lambda dy: dy * mt.sigmoid(x)


USER_CASES = [
    case("primitive", cube, R(2, 3)),
    case("primitive-in-expression", lambda x, y: cube(x * y) + y, R(2, 3), R(3)),
    case("custom_gradient", log1pexp, R(2, 3)),
]


def test_namespaces_hold_their_names():
    assert mt.nn.tanh is mt.tanh
    assert mt.linalg.norm is mt.norm and mt.linalg.eye is mt.eye


ALL_CASES = (MATH_CASES + OPERATOR_CASES + REDUCTION_CASES + SHAPE_CASES + EINSUM_CASES
             + LINALG_CASES + NN_CASES + USER_CASES + family_cases())


@pytest.mark.parametrize("fn, args, check_kwargs", ALL_CASES)
def test_derivatives_up_to_third_order_match_finite_differences(fn, args, check_kwargs):
    check_gradients(fn, args, order=3, **check_kwargs)  # checks orders 1, 2 and 3


@pytest.mark.parametrize("fn, args, check_kwargs", ALL_CASES)
def test_vectorised_jacobian_matches_loop(fn, args, check_kwargs):
    xs = [mt.constant(a) for a in args]
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(xs)
        y = fn(*xs)
    fast = tape.jacobian(y, xs, experimental_use_pfor=True)
    slow = tape.jacobian(y, xs, experimental_use_pfor=False)
    for x, j_fast, j_slow in zip(xs, fast, slow):
        assert j_fast.shape == y.shape + x.shape
        np.testing.assert_allclose(j_fast.numpy(), j_slow.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn, args, check_kwargs", ALL_CASES)
def test_vectorised_hessian_matches_loop(fn, args, check_kwargs):
    """Jacobian of a gradient: the vectorised pass runs each rule (and the
    rules of the ops inside each rule) with a leading batch dimension. The
    sin makes the Hessian non-zero even for linear ops."""
    xs = [mt.constant(a) for a in args]
    with mt.GradientTape(persistent=True) as outer:
        outer.watch(xs)
        with mt.GradientTape() as inner:
            inner.watch(xs)
            y = fn(*xs)
            w = mt.constant(np.linspace(0.5, 1.5, y.size).reshape(y.shape).astype(y.dtype))
            loss = mt.reduce_sum(w * mt.sin(y))
        g = inner.gradient(loss, xs[0])
    zero = mt.UnconnectedGradients.ZERO
    fast = outer.jacobian(g, xs, unconnected_gradients=zero, experimental_use_pfor=True)
    slow = outer.jacobian(g, xs, unconnected_gradients=zero, experimental_use_pfor=False)
    assert np.abs(fast[0].numpy()).max() > 0  # a real second derivative was computed
    for x, h_fast, h_slow in zip(xs, fast, slow):
        assert h_fast.shape == xs[0].shape + x.shape
        np.testing.assert_allclose(h_fast.numpy(), h_slow.numpy(), rtol=1e-10, atol=1e-12)


# --- broadcasting of binary ops -------------------------------------------------
def anything(rng, shape):
    return rng.uniform(-1.0, 1.0, shape)


def positive(rng, shape):
    return rng.uniform(0.5, 2.0, shape)


def nonzero(rng, shape):
    return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.3, 1.5, shape)


BINARY = {  # name: (op, how to draw x, how to draw y)
    "add": (mt.add, anything, anything),
    "subtract": (mt.subtract, anything, anything),
    "multiply": (mt.multiply, anything, anything),
    "divide": (mt.divide, anything, nonzero),
    "pow": (mt.pow, positive, anything),
    "maximum": (mt.maximum, anything, anything),
    "minimum": (mt.minimum, anything, anything),
    "where": (lambda x, y: mt.where(x > 0.2, x, y), anything, anything),
}
SHAPES = [((3, 1), (4,)), ((), (3, 4)), ((3, 4), ()), ((2, 1, 3), (1, 4, 1)), ((4,), (2, 3, 4))]


@pytest.mark.parametrize("x_shape, y_shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_broadcasting_binary_ops(name, x_shape, y_shape):
    fn, draw_x, draw_y = BINARY[name]
    rng = np.random.default_rng(5)
    x, y = draw_x(rng, x_shape), draw_y(rng, y_shape)
    assert fn(mt.constant(x), mt.constant(y)).shape == np.broadcast_shapes(x_shape, y_shape)
    check_gradients(fn, [x, y], order=2)
    # Each input's gradient has the input's own shape (summed over the copies).
    xs = [mt.constant(x), mt.constant(y)]
    with mt.GradientTape() as tape:
        tape.watch(xs)
        z = fn(*xs)
    gx, gy = tape.gradient(z, xs)
    assert gx.shape == x_shape and gy.shape == y_shape
