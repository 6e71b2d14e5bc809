"""The zero-times-inf masks of the product rules (`ops/elementwise.moved`), in
eager, traced and compiled functions alike.

Each test runs its function four ways (eagerly, `mt.function`,
`jit_compile=True`, and compiled for any shape), first on inputs without inf
or NaN, so the trace is made there, then on inputs with them: a traced
function answers for each call's inputs, never for its first call's. The
expected numbers are worked out by hand from the README's differences row
("a zero tangent meeting an infinite partial derivative"): a zero tangent or
upstream gradient adds nothing, even times inf; TensorFlow gives NaN there.
"""
import warnings

import numpy as np
import pytest

import minitape as mt

F64 = mt.float64
inf, nan = np.inf, np.nan


def c(x):
    return mt.constant(np.asarray(x, dtype=np.float64))


def ways(fn, n_args):
    """fn eagerly, traced, compiled, and compiled for any 1-D shape."""
    spec = [mt.TensorSpec([None], F64)] * n_args
    return {"eager": fn, "traced": mt.function(fn),
            "compiled": mt.function(fn, jit_compile=True),
            "any shape": mt.function(fn, jit_compile=True, input_signature=spec)}


def check(fn, calls):
    """calls: [(args, expected)]; each way must give `expected` (one tensor)
    at each call, NaN for NaN."""
    for way, f in ways(fn, len(calls[0][0])).items():
        for k, (args, expected) in enumerate(calls):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                got = f(*[c(a) for a in args])
            np.testing.assert_array_equal(got.numpy(), np.asarray(expected, np.float64),
                                          err_msg=f"{way}, call {k}")


def jacobian_wrt(k, op):
    def f(*args):
        with mt.GradientTape() as tape:
            tape.watch(args[k])
            y = op(*args)
        return tape.jacobian(y, args[k])
    return f


def jvp_along(k, op, tangent):
    def f(*args):
        with mt.autodiff.ForwardAccumulator(args[k], c(tangent)) as acc:
            y = op(*args)
        return acc.jvp(y)
    return f


def test_mul_jacobian_zero_seed_rows_meet_inf():
    # y = x * w: dy0/dx1 = 0 even though w1 = inf (0 * inf would be NaN)
    check(jacobian_wrt(0, mt.multiply), [
        (([2, 3], [1, 2]), [[1, 0], [0, 2]]),
        (([2, 3], [1, inf]), [[1, 0], [0, inf]]),
        (([2, 3], [nan, 1]), [[nan, 0], [0, 1]]),
    ])


def test_mul_jvp_zero_tangent_meets_inf():
    # d(x0 * 1 + x1 * inf)/dx0 along [1, 0]: the second entry does not move
    check(jvp_along(0, mt.multiply, [1, 0]), [
        (([2, 3], [1, 2]), [1, 0]),
        (([2, 3], [1, inf]), [1, 0]),
        (([2, 3], [-inf, nan]), [-inf, 0]),
    ])


def test_mul_jvp_inf_tangent_times_a_zero_factor():
    # forward mode of x * w with an inf tangent where w is 0: the factor mask
    check(jvp_along(0, mt.multiply, [inf, 1]), [
        (([2, 3], [1, 2]), [inf, 2]),
        (([2, 3], [0, 2]), [0, 2]),
    ])


def test_divide_jacobians_meet_a_zero_divisor():
    check(jacobian_wrt(0, mt.divide), [
        (([2, 3], [1, 2]), [[1, 0], [0, 0.5]]),
        (([2, 3], [1, 0]), [[1, 0], [0, inf]]),
    ])
    # d(x/w)/dw = -x / w**2: -inf at w = 0, and 0 off the diagonal
    check(jacobian_wrt(1, mt.divide), [
        (([2, 3], [1, 2]), [[-2, 0], [0, -0.75]]),
        (([2, 3], [1, 0]), [[-2, 0], [0, -inf]]),
    ])


def test_divide_jvps_meet_a_zero_divisor():
    check(jvp_along(0, mt.divide, [1, 0]), [
        (([2, 3], [1, 2]), [1, 0]),
        (([2, 3], [1, 0]), [1, 0]),
    ])
    check(jvp_along(1, mt.divide, [1, 0]), [
        (([2, 3], [1, 2]), [-2, 0]),
        (([2, 3], [1, 0]), [-2, 0]),
    ])


def test_pow_jacobians_meet_infinite_slopes():
    # d(x ** 0.5)/dx is inf at x = 0; d(w ** y)/dy = w ** y log w is inf at w = inf
    check(jacobian_wrt(0, lambda x: x ** 0.5), [
        (([1, 4],), [[0.5, 0], [0, 0.25]]),
        (([1, 0],), [[0.5, 0], [0, inf]]),
    ])
    check(jacobian_wrt(1, mt.pow), [
        (([1, 2], [2, 3]), [[0, 0], [0, 8 * np.log(2)]]),
        (([inf, 2], [2, 3]), [[inf, 0], [0, 8 * np.log(2)]]),
    ])


def test_pow_jvps_meet_infinite_slopes():
    check(jvp_along(0, lambda x: x ** 0.5, [1, 0]), [
        (([1, 4],), [0.5, 0]),
        (([1, 0],), [0.5, 0]),
    ])
    check(jvp_along(1, mt.pow, [0, 1]), [
        (([1, 2], [2, 3]), [0, 8 * np.log(2)]),
        (([inf, 2], [2, 3]), [0, 8 * np.log(2)]),
    ])


def test_sqrt_where_trap_gives_zero():
    # TensorFlow's SqrtGrad: the branch where() did not pick sends back 0
    def f(x):
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = mt.where(x > 0, mt.sqrt(x), mt.zeros_like(x))
        return tape.gradient(y, x)
    check(f, [(([4, 1],), [0.25, 0.5]), (([4, -1],), [0.25, 0])])


def test_batch_jacobian_seed_rows_meet_inf():
    def f(x, w):
        x = mt.reshape(x, [2, 2])
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = x * mt.reshape(w, [2, 2])
        return mt.reshape(tape.batch_jacobian(y, x), [-1])
    check(f, [
        (([1, 2, 3, 4], [1, 2, 3, 4]), [1, 0, 0, 2, 3, 0, 0, 4]),
        (([1, 2, 3, 4], [inf, 2, 3, nan]), [inf, 0, 0, 2, 3, 0, 0, nan]),
    ])


def test_second_derivatives_next_to_a_nan():
    # d2/dx2 of sum(x * x) is 2 at every entry (TensorFlow 2.21 too), and the
    # Hessian-vector product along ones; a NaN in one entry stays there
    def f(x):
        with mt.GradientTape() as outer:
            outer.watch(x)
            with mt.GradientTape() as inner:
                inner.watch(x)
                y = mt.reduce_sum(x * x * x)
            g = inner.gradient(y, x)
        return outer.gradient(g, x)
    check(f, [(([0, 1, 2],), [0, 6, 12]), (([0, 1, nan],), [0, 6, nan]),
              (([inf, 1, 0],), [inf, 6, 0])])

    def hessian(x):
        with mt.GradientTape() as outer:
            outer.watch(x)
            with mt.GradientTape() as inner:
                inner.watch(x)
                y = mt.reduce_sum(x * x)
            g = inner.gradient(y, x)
        return outer.jacobian(g, x)
    check(hessian, [(([0, 1, 2],), np.eye(3) * 2), (([0, 1, nan],), np.eye(3) * 2)])


def test_a_jacobian_of_a_product_with_a_nan_row():
    # y = x * (x * w): each Hessian row of sum(y) only sees its own entry
    def f(x, w):
        with mt.GradientTape() as outer:
            outer.watch(x)
            with mt.GradientTape() as inner:
                inner.watch(x)
                y = mt.reduce_sum(x * (x * w))
            g = inner.gradient(y, x)
        return outer.jacobian(g, x)
    check(f, [
        (([1, 2], [1, 3]), [[2, 0], [0, 6]]),
        (([1, 2], [1, inf]), [[2, 0], [0, inf]]),
        (([1, 2], [nan, 3]), [[nan, 0], [0, 6]]),
    ])


def test_traced_graph_holds_one_mask_op_per_site():
    """The mask is one ZeroWhereUnmoved node, recorded whatever the tracing
    call's values; a constant finite partial (x * 2.0) needs none."""
    def f(x, w):
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = x * w + x * 2.0
        return tape.jacobian(y, x)
    graph = str(mt.function(f).get_concrete_function(c([1, 2]), c([1, 2])).graph)
    assert graph.count("ZeroWhereUnmoved") == 1, graph


def test_compiled_masks_take_no_line_of_their_own():
    @mt.function(jit_compile=True)
    def f(x, y):
        with mt.GradientTape() as tape:
            tape.watch(x)
            z = mt.sin(x * y)
        return tape.gradient(z, x)
    source = f.experimental_get_compiler_ir(c(1.0), c(2.0))()
    assert "moved(cos, cos * y)" in source, source
    assert source.count(" = ") == 3, source


def test_saved_models_keep_the_masks(tmp_path):
    def f(x, w):
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = x * w
        return tape.jacobian(y, x)

    module = mt.Module()
    module.f = mt.function(f, input_signature=[mt.TensorSpec([2], F64)] * 2)
    mt.saved_model.save(module, str(tmp_path / "m"))
    loaded = mt.saved_model.load(str(tmp_path / "m"))
    assert "ZeroWhereUnmoved" in str(module.f.get_concrete_function().graph)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for fn in (loaded.f, mt.function(loaded.f, jit_compile=True)):
            np.testing.assert_array_equal(fn(c([2, 3]), c([1, 2])).numpy(), [[1, 0], [0, 2]])
            np.testing.assert_array_equal(fn(c([2, 3]), c([1, inf])).numpy(),
                                          [[1, 0], [0, inf]])


def test_the_mask_op_refuses_bad_inputs():
    with pytest.raises(TypeError, match="zero_where_unmoved"):
        mt.ops.elementwise.zero_where_unmoved(c([1.0]), c([1.0]), mt.constant([1]))
    with pytest.raises(ValueError, match="zero_where_unmoved: shapes"):
        mt.ops.elementwise.zero_where_unmoved(c([1.0]), c([1.0, 2.0]), c([1.0]))
