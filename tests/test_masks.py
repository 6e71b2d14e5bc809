"""The zero-times-inf masks of the product rules (`ops/zero_times_inf.py`), in
eager, traced and compiled functions alike.

Each test runs its function four ways (eagerly, `mt.function`,
`jit_compile=True`, and compiled for any shape), first on inputs without inf
or NaN, so the trace is made there, then on inputs with them: a traced
function answers for each call's inputs, never for its first call's. The
expected numbers are worked out by hand from docs/differences.md's row
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
    assert "moved(grad_cos, grad_cos * y)" in source, source
    body = [line for line in source.splitlines()[1:] if not line.strip().startswith("#")]
    assert sum(" = " in line for line in body) == 3, source  # mul, grad_cos, grad_mul


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
        mt.ops.zero_times_inf.zero_where_unmoved(c([1.0]), c([1.0]), mt.constant([1]))
    with pytest.raises(ValueError, match="zero_where_unmoved: shapes"):
        mt.ops.zero_times_inf.zero_where_unmoved(c([1.0]), c([1.0, 2.0]), c([1.0]))


# --- matmul and einsum: the masks of a sum of products (ops/zero_times_inf.py) ---

def test_matmul_jacobian_zero_seed_rows_meet_inf():
    # d(a @ b)_ij / d a_kl = [i == k] b_lj: 0 where i != k, even where b is inf
    def f(a, b):
        a, b = mt.reshape(a, [2, 2]), mt.reshape(b, [2, 2])
        with mt.GradientTape() as tape:
            tape.watch(a)
            y = mt.matmul(a, b)
        return mt.reshape(tape.jacobian(y, a), [-1])

    def expected(b):
        b = np.reshape(b, (2, 2))
        same = np.eye(2, dtype=bool)[:, None, :, None]   # [i == k], axes i, j, k, l
        return np.where(same, b.T[None, :, None, :], 0.0).ravel()
    check(f, [(([1, 2, 3, 4], [1, 2, 2, 3]), expected([1, 2, 2, 3])),
              (([1, 2, 3, 4], [1, 2, inf, 3]), expected([1, 2, inf, 3]))])


def test_matmul_jvp_zero_tangent_meets_inf():
    def f(a, b):
        a, b = mt.reshape(a, [2, 2]), mt.reshape(b, [2, 2])
        with mt.autodiff.ForwardAccumulator(a, c([[1, 0], [0, 0]])) as acc:
            y = mt.matmul(a, b)
        return mt.reshape(acc.jvp(y), [-1])
    check(f, [(([1, 2, 3, 4], [1, 2, 2, 3]), [1, 2, 0, 0]),
              (([1, 2, 3, 4], [1, 2, inf, 3]), [1, 2, 0, 0])])


def test_einsum_jacobian_zero_seed_rows_meet_inf():
    def f(m, x):
        m = mt.reshape(m, [2, 2])
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = mt.einsum("ij,j->i", m, x)
        return mt.reshape(tape.jacobian(y, x), [-1])
    check(f, [(([1, 0, 0, 2], [2, 3]), [1, 0, 0, 2]),
              (([1, 0, 0, inf], [2, 3]), [1, 0, 0, inf])])


def test_hessian_through_masked_matmul_gradients():
    # f(x) = x . (C x): the Hessian is C + C^T, inf where C is, 0 where neither is
    def f(m, x):
        m = mt.reshape(m, [2, 2])
        with mt.GradientTape() as outer:
            outer.watch(x)
            with mt.GradientTape() as inner:
                inner.watch(x)
                y = mt.reduce_sum(x * mt.reshape(mt.matmul(m, mt.reshape(x, [2, 1])), [2]))
            g = inner.gradient(y, x)
        return mt.reshape(outer.jacobian(g, x), [-1])
    check(f, [(([1, 0, 0, 2], [1, 2]), [2, 0, 0, 4]),
              (([1, 0, 0, inf], [1, 2]), [2, 0, 0, inf]),
              (([1, inf, 0, 1], [1, 2]), [2, inf, inf, 2])])


def test_second_derivatives_through_the_masked_contraction():
    """Where the masks are used (a NaN product), the second derivatives flow
    through the masked contraction and its gradient: eagerly and in every
    traced way alike, and each entry apart from the inf."""
    def f(a, b):
        a, b = mt.reshape(a, [2, 2]), mt.reshape(b, [2, 2])
        with mt.GradientTape() as outer:
            outer.watch(a)
            with mt.GradientTape() as inner:
                inner.watch(a)
                y = mt.matmul(a, b)
            jac = inner.jacobian(y, a)          # masked: zero seed rows meet inf
            s = mt.reduce_sum(jac * mt.reshape(a, [1, 1, 2, 2]))
        return mt.reshape(outer.gradient(s, a), [-1])
    # s = sum_ijkl [i == k] b_lj a_kl, so ds/da_kl = sum_j b_lj (row sums of b)
    check(f, [(([1, 2, 3, 4], [1, 2, 2, 3]), [3, 5, 3, 5]),
              (([1, 2, 3, 4], [1, 2, inf, 3]), [3, inf, 3, inf])])


def test_masked_contraction_in_slices_is_the_same(monkeypatch):
    from minitape.ops import zero_times_inf as unmoved_products
    rng = np.random.default_rng(0)
    g = rng.choice([0.0, 1.0, -2.0], (3, 4, 5))
    b = rng.normal(size=(5, 6))
    b[1, 2] = inf
    b[3, 0] = nan
    whole = unmoved_products._masked_contraction("ijk,kl->jl", 2, (0,), [g, b])
    monkeypatch.setattr(unmoved_products, "_SLICE", 7)
    sliced = unmoved_products._masked_contraction("ijk,kl->jl", 2, (0,), [g, b])
    np.testing.assert_allclose(sliced, whole, rtol=1e-12, equal_nan=True)
    terms = np.einsum("ijk,kl->ijkl", g, b)
    terms[np.isnan(terms) & (g == 0)[..., None]] = 0
    np.testing.assert_allclose(whole, terms.sum(axis=(0, 2)), rtol=1e-12, equal_nan=True)


def test_compiled_matmul_masks_are_checks_with_a_masked_program_behind():
    """The compiled program assumes the factors a mask could meet are finite
    (a `check_finite` line, the masks themselves gone); a call where they are
    not runs the program with the masks, after undoing the assignments."""
    v = mt.Variable(np.float64(0.0))

    @mt.function(jit_compile=True)
    def f(a, b):
        v.assign_add(1.0)
        a, b = mt.reshape(a, [2, 2]), mt.reshape(b, [2, 2])
        with mt.GradientTape() as tape:
            tape.watch(a)
            y = mt.matmul(a, b) * v
        return mt.reshape(tape.jacobian(y, a), [-1])

    source = f.experimental_get_compiler_ir(c([1, 2, 3, 4]), c([1, 2, 2, 3]))()
    assert "check_finite(" in source and "unmoved" not in source, source
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        first = f(c([1, 2, 3, 4]), c([1, 2, 2, 3])).numpy()
        second = f(c([1, 2, 3, 4]), c([1, 2, inf, 3])).numpy()
    assert float(v.numpy()) == 2.0   # each call assigned once
    # d(a @ b * v)_ij / d a_kl = [i == k] b_lj v, with v = 1 and then 2
    np.testing.assert_array_equal(first, [1, 2, 0, 0, 2, 3, 0, 0, 0, 0, 1, 2, 0, 0, 2, 3])
    np.testing.assert_array_equal(   # masked: 0 where i != k, not NaN
        second, [2, inf, 0, 0, 4, 6, 0, 0, 0, 0, 2, inf, 0, 0, 4, 6])


def test_forward_mode_from_a_gradient_rule_is_not_masked():
    """recompute_grad's JVP comes from its gradient at an upstream of zeros
    (tangents.jvp_from_gradient): those zeros stand for any direction, so no
    mask may fire there. sqrt's slope at 0 is inf, as sqrt's own JVP gives
    (it used to come out 0 eagerly)."""
    def f(x):
        with mt.autodiff.ForwardAccumulator(x, mt.ones_like(x)) as acc:
            y = mt.recompute_grad(lambda z: mt.sqrt(z) * 2.0)(x)
        return acc.jvp(y)
    check(f, [(([4, 1],), [0.5, 1]), (([0, 4],), [inf, 0.5])])


def test_masked_products_over_an_empty_dimension():
    """A letter of size 1 against one of size 0 has size 0 (it used to be 1 in
    the gradient of the mask, and tracing a Hessian through matmul failed)."""
    def f(a, b):
        with mt.GradientTape() as outer:
            outer.watch(a)
            with mt.GradientTape() as inner:
                inner.watch(a)
                y = mt.reduce_sum(mt.matmul(mt.matmul(a, b, transpose_b=True), a))
            g = inner.gradient(y, a)
        return outer.jacobian(g, a)
    for n in (0, 2):
        a, b = c(np.ones((n, 2))), c(np.full((n, 2), inf))
        for way, g in ways(f, 2).items():
            if way != "any shape":
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    assert g(a, b).shape == (n, 2, n, 2), way


@pytest.mark.parametrize("key, value", [
    ("equation", "ab,bc->ca,"), ("equation", "a" * 60 + "->a"), ("equation", 5),
    ("equation", "ab,ab->ab"), ("mode", "explode"), ("masks", {"tuple": [99]}),
    ("masks", {"tuple": ["x"]}), ("factors", 0), ("factors", 10 ** 9)])
def test_a_saved_mask_with_bad_attributes_is_refused(tmp_path, key, value):
    import json

    def f(a, b, g):
        with mt.GradientTape() as tape:
            tape.watch(a)
            y = mt.matmul(a, b)
        return tape.gradient(y, a, output_gradients=g)

    module = mt.Module()
    module.f = mt.function(f, input_signature=[mt.TensorSpec([None, 2], F64),
                                               mt.TensorSpec([2, 2], F64),
                                               mt.TensorSpec([None, 2], F64)])
    mt.saved_model.save(module, str(tmp_path))
    path = tmp_path / "saved_model.json"
    doc = json.loads(path.read_text())
    nodes = [n for g in doc["graphs"].values() for n in g["nodes"] if n["op"] == "UnmovedEinsum"]
    assert nodes
    nodes[0]["attrs"][key] = value
    path.write_text(json.dumps(doc))
    with pytest.raises(mt.saved_model.LoadError, match="UnmovedEinsum"):
        mt.saved_model.load(str(tmp_path))


def test_relu_gradient_under_an_outer_tape_at_a_nan():
    """relu's gradient is 0 where x <= 0, NaN or not (TensorFlow 2.21 too): its
    0 comes from x (`flat_zeros.flat_zero`) while a tape could differentiate it
    again, and a trace made on finite values used to give NaN at a later NaN."""
    def f(x):
        with mt.GradientTape() as outer:
            outer.watch(x)
            with mt.GradientTape() as inner:
                inner.watch(x)
                y = mt.reduce_sum(mt.nn.relu(x))
            g = inner.gradient(y, x)
        return mt.concat([g, outer.gradient(g, x)], 0)
    check(f, [(([1, -1],), [1, 0, 0, 0]), (([nan, -1],), [0, 0, 0, 0]),
              (([inf, -inf],), [1, 0, 0, 0])])


# --- issue 30: one mask mechanism, so minitape agrees with itself ---------------------
# Each function gives [nested tapes, forward over reverse]: the derivative of the
# gradient along ones, both ways; TensorFlow 2.21's answers are in the comments.

def second_derivatives(f):
    def both(x):
        with mt.GradientTape() as outer:
            outer.watch(x)
            with mt.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            g = inner.gradient(y, x)
        nested = outer.gradient(g, x)
        with mt.autodiff.ForwardAccumulator(x, mt.ones_like(x)) as acc:
            with mt.GradientTape() as tape:
                tape.watch(x)
                y = f(x)
            g = tape.gradient(y, x)
        return mt.stack([nested, acc.jvp(g)])
    return both


@pytest.mark.parametrize("op", [mt.math.rsqrt, mt.math.reciprocal])
def test_the_branch_where_did_not_pick_adds_nothing_at_second_order_either_way(op):
    # TensorFlow 2.21: [[nan, nan, x], [nan, nan, x]] (its RsqrtGrad and ReciprocalGrad
    # mask the first derivative only). minitape gave nan with nested tapes and 0
    # forward over reverse; the README row on second derivatives through the branch
    # `where` did not pick promises 0, which both ways give now
    def f(x):
        return mt.where(x > 0, op(x), mt.zeros_like(x))
    at_4 = 0.75 * 4.0 ** -2.5 if op is mt.math.rsqrt else 2.0 / 4.0 ** 3
    check(second_derivatives(f), [(([-1.0, 0.0, 4.0],), [[0, 0, at_4], [0, 0, at_4]])])


def test_the_norms_second_derivative_at_zero_is_nan_both_ways():
    # TensorFlow 2.21: [nan, nan] both ways, as its gradient there (minitape gave inf:
    # an infinite upstream times the zero partial x has no value, and the mask now
    # says so to what is differentiated from it)
    check(second_derivatives(mt.norm), [(([0.0, 0.0],), [[nan, nan], [nan, nan]])])
    # elsewhere (I - n n^T) / |x|, its rows summed: [0.032, -0.024] at [3, 4]
    got = second_derivatives(mt.norm)(c([3.0, 4.0])).numpy()
    np.testing.assert_allclose(got, [[0.032, -0.024], [0.032, -0.024]], rtol=1e-12)


def test_atan2_second_derivatives_at_the_origin_are_nan_both_ways():
    # TensorFlow 2.21: [nan, nan] both ways (minitape's forward over reverse gave
    # [inf, -inf]: x^2 + y^2 has a zero tangent there, and a zero tangent adds nothing)
    def f(v):
        return mt.math.atan2(v[0], v[1])
    check(second_derivatives(f), [(([0.0, 0.0],), [[nan, nan], [nan, nan]])])
    # away from the origin the Hessian's rows summed: d2f/dy2 = -2xy / r^4,
    # d2f/dx2 = 2xy / r^4, d2f/dxdy = (y^2 - x^2) / r^4
    y, x = 1.0, 2.0
    h = [(-2 * x * y + y * y - x * x) / 25, (y * y - x * x + 2 * x * y) / 25]
    got = second_derivatives(f)(c([y, x])).numpy()
    np.testing.assert_allclose(got, [h, h], rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128"])
def test_the_finiteness_checks_see_every_inf_and_nan(dtype):
    """`all_finite`, `has_nan` and compiled programs' `check_finite` read one
    square sum (BLAS's dot): an inf or NaN anywhere, in any layout, is seen;
    finite values are finite unless their squares overflow (then the masks
    run for nothing, which changes no number)."""
    from minitape.compiling.zero_times_inf import MasksNeeded, check_finite
    from minitape.ops.zero_times_inf import all_finite, has_nan
    base = np.arange(24, dtype=dtype).reshape(4, 6) / 7
    views = lambda a: (a, a.T, a[:, ::2], a[1:2, 3:4].reshape(()))  # noqa: E731
    for v in views(base):
        assert all_finite(v) and not has_nan(v) and check_finite(v)
    for bad, nan in ((np.inf, False), (-np.inf, False), (np.nan, True)):
        a = base.copy()
        a[1, 4] = bad
        for v in views(a)[:3]:
            assert not all_finite(v)
            # (complex: an infinite part may read as a NaN too, and the masks then change nothing)
            assert has_nan(v) if nan or v.dtype.kind == "c" else not has_nan(v)
            with pytest.raises(MasksNeeded):
                check_finite(v)
    if dtype.startswith("complex"):
        a = base.copy()
        a[2, 2] = complex(0, np.inf)
        assert not all_finite(a)
