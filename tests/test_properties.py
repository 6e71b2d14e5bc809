"""Property tests: shapes drawn by Hypothesis, values from a seeded generator,
gradients checked against central differences in float64."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitape as mt
from minitape.ops.broadcasting import unbroadcast
from minitape.test import check_gradients

SETTINGS = settings(max_examples=40, deadline=None)
seeds = st.integers(0, 2**32 - 1)
shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=3)


def away_from_zero(rng, shape):
    return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 1.5, shape)


def distinct(rng, shape):
    """Values at least 0.05 apart: max and min have no ties."""
    n = int(np.prod(shape))
    return rng.permutation(np.linspace(-2.0, 2.0, n) + 0.01).reshape(shape)


def grad_of_weighted_sum(fn, x, w):
    """d sum(w * fn(x)) / dx."""
    x = mt.constant(x)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    return tape.gradient(y, x, output_gradients=mt.constant(w)).numpy()


# --- broadcasting binary ops ----------------------------------------------------
BINARY = {
    "add": (mt.add, np.add), "subtract": (mt.subtract, np.subtract),
    "multiply": (mt.multiply, np.multiply), "divide": (mt.divide, np.divide),
    "maximum": (mt.maximum, np.maximum),
}


@SETTINGS
@given(pair=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=3),
       name=st.sampled_from(sorted(BINARY)), seed=seeds)
def test_broadcasting_binary_op_gradients(pair, name, seed):
    fn, np_fn = BINARY[name]
    rng = np.random.default_rng(seed)
    (x_shape, y_shape), out_shape = pair.input_shapes, pair.result_shape
    x, y = rng.uniform(-1, 1, x_shape), away_from_zero(rng, y_shape)
    z = fn(mt.constant(x), mt.constant(y))
    assert z.shape == out_shape
    np.testing.assert_allclose(z.numpy(), np_fn(x, y), rtol=1e-15)
    check_gradients(fn, [x, y], order=2, seed=seed)


# --- reductions ------------------------------------------------------------------
REDUCTIONS = {
    "reduce_sum": np.sum, "reduce_mean": np.mean, "reduce_max": np.max,
    "reduce_min": np.min, "reduce_prod": np.prod,
}


@SETTINGS
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=3),
       name=st.sampled_from(sorted(REDUCTIONS)), keepdims=st.booleans(), seed=seeds)
def test_reductions_over_random_axes(data, shape, name, keepdims, seed):
    ndim = len(shape)
    axis = data.draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1),
                               hnp.valid_tuple_axes(ndim, min_size=1)), label="axis")
    rng = np.random.default_rng(seed)
    x = distinct(rng, shape) if name in ("reduce_max", "reduce_min") else away_from_zero(rng, shape)

    def reduce(t):
        return getattr(mt, name)(t, axis=axis, keepdims=keepdims)

    expected = REDUCTIONS[name](x, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(reduce(mt.constant(x)).numpy(), expected, rtol=1e-12)
    check_gradients(reduce, [x], order=2, seed=seed)


# --- shape round trips -------------------------------------------------------------
@SETTINGS
@given(data=st.data(), shape=shapes, seed=seeds)
def test_reshape_round_trip(data, shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    new = list(data.draw(st.permutations(shape), label="permuted dims"))
    new.insert(data.draw(st.integers(0, len(new)), label="where a 1 goes"), 1)
    if new and data.draw(st.booleans(), label="use -1"):
        new[data.draw(st.integers(0, len(new) - 1))] = -1
    y = mt.reshape(mt.constant(x), new)
    assert y.shape == np.reshape(x, new).shape
    np.testing.assert_array_equal(mt.reshape(y, shape).numpy(), x)
    w = rng.standard_normal(y.shape)
    np.testing.assert_array_equal(
        grad_of_weighted_sum(lambda t: mt.reshape(t, new), x, w), w.reshape(shape))


@SETTINGS
@given(data=st.data(), shape=shapes, seed=seeds)
def test_transpose_round_trip(data, shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    perm = data.draw(st.permutations(range(len(shape))), label="perm")
    y = mt.transpose(mt.constant(x), perm)
    np.testing.assert_array_equal(y.numpy(), np.transpose(x, perm))
    np.testing.assert_array_equal(mt.transpose(y, np.argsort(perm)).numpy(), x)
    w = rng.standard_normal(y.shape)
    np.testing.assert_array_equal(grad_of_weighted_sum(lambda t: mt.transpose(t, perm), x, w),
                                  np.transpose(w, np.argsort(perm)))


@SETTINGS
@given(data=st.data(), shape=shapes, seed=seeds)
def test_expand_dims_squeeze_round_trip(data, shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)), label="axis")
    y = mt.expand_dims(mt.constant(x), axis)
    assert y.shape == np.expand_dims(x, axis).shape
    np.testing.assert_array_equal(mt.squeeze(y, axis).numpy(), x)
    w = rng.standard_normal(y.shape)
    np.testing.assert_array_equal(grad_of_weighted_sum(lambda t: mt.expand_dims(t, axis), x, w),
                                  w.reshape(shape))
    # squeeze with no axis removes every 1, and its gradient restores them.
    squeezed = mt.squeeze(mt.constant(x))
    assert squeezed.shape == np.squeeze(x).shape
    v = rng.standard_normal(squeezed.shape)
    np.testing.assert_array_equal(grad_of_weighted_sum(mt.squeeze, x, v), v.reshape(shape))


# --- unbroadcast ----------------------------------------------------------------------
@st.composite
def shape_and_broadcast(draw):
    """(small, big): `small` broadcasts to `big` (leading dims dropped, some dims 1)."""
    big = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=3))
    kept = big[draw(st.integers(0, len(big))):]
    small = tuple(1 if draw(st.booleans()) else n for n in kept)
    return small, big


@SETTINGS
@given(shapes=shape_and_broadcast(), batch=st.sampled_from([(), (2,), (3, 2)]), seed=seeds)
def test_unbroadcast_is_the_adjoint_of_broadcasting(shapes, batch, seed):
    """<unbroadcast(g), a> == <g, broadcast_to(a)> for every a: so unbroadcast
    sums each element of `small` over exactly the copies broadcasting made."""
    small, big = shapes
    rng = np.random.default_rng(seed)
    g = rng.standard_normal(batch + big)
    result = unbroadcast(mt.constant(g), small, len(batch)).numpy()
    assert result.shape == batch + small
    for _ in range(2):
        a = rng.standard_normal(small)
        lhs = np.einsum("...i,i->...", result.reshape(batch + (-1,)), a.reshape(-1))
        rhs = np.einsum("...i,i->...", g.reshape(batch + (-1,)),
                        np.broadcast_to(a, big).reshape(-1))
        np.testing.assert_allclose(lhs, rhs, rtol=1e-12, atol=1e-12)  # one per batch row


# --- jacobian shapes ------------------------------------------------------------------
@SETTINGS
@given(target_shape=shapes, source_shape=shapes, pfor=st.booleans(), seed=seeds)
def test_jacobian_shape_is_target_shape_plus_source_shape(target_shape, source_shape, pfor,
                                                          seed):
    rng = np.random.default_rng(seed)
    a, c = rng.standard_normal(target_shape), rng.standard_normal(source_shape)
    x = mt.constant(rng.standard_normal(source_shape))
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.reduce_sum(x * c) * mt.constant(a)   # dy/dx = a (outer) c
    jacobian = tape.jacobian(y, x, experimental_use_pfor=pfor)
    assert jacobian.shape == target_shape + source_shape
    np.testing.assert_allclose(jacobian.numpy(), np.multiply.outer(a, c), rtol=1e-12,
                               atol=1e-15)
