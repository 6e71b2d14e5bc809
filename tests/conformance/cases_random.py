"""`tf.random` / `mt.random`: the seed rules and the draws inside functions.

The numbers themselves differ (TensorFlow's Philox, NumPy's PCG64: docs/differences.md),
so the cases compare what the rules say about them: which
draws are equal, which differ, shapes, dtypes, ranges and gradients.
"""
import numpy as np


def _equal(m, a, b):
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))


def case_eager_op_seed_twice(m):
    m.random.set_seed(1)
    a, b = m.random.uniform([3], seed=7), m.random.uniform([3], seed=7)
    m.random.set_seed(1)
    c, d = m.random.uniform([3], seed=7), m.random.uniform([3], seed=7)
    return [_equal(m, a, b), _equal(m, a, c), _equal(m, b, d)]  # [False, True, True]


def case_global_seed_restarts_and_op_seeds_leave_it_alone(m):
    m.random.set_seed(2)
    a, b = m.random.normal([2]), m.random.normal([2])
    m.random.set_seed(2)
    a2 = m.random.normal([2])
    m.random.normal([2], seed=3)
    b2 = m.random.normal([2])
    return [_equal(m, a, a2), _equal(m, b, b2), _equal(m, a, b)]  # [True, True, False]


def _function_draws(m, jit):
    m.random.set_seed(1234)

    def body(x):
        return x + m.random.uniform([3]), m.random.uniform([3], seed=1), \
            m.random.uniform([3], seed=1)

    f = m.function(body, jit_compile=jit)
    g = m.function(body, jit_compile=jit)
    x = m.constant([0.0, 0.0, 0.0])
    f1, f2, g1 = f(x), f(x), g(x)
    m.random.set_seed(1234)
    f3 = f(x)
    return [_equal(m, f1[0], f2[0]),  # False: each call draws new numbers
            _equal(m, f1[1], f1[2]),  # True: one op seed, one sequence per op
            _equal(m, f1[1], f2[1]),  # False
            _equal(m, g1[0], f1[0]),  # True: another function, the same numbers
            _equal(m, f3[0], f1[0])]  # True: set_seed starts them over


def case_function_draws_new_numbers_each_call(m):
    return _function_draws(m, False)


def case_function_traced_seed_and_eager_op_seed(m):
    m.random.set_seed(1234)

    @m.function
    def h():
        return m.random.uniform([2], seed=1)

    first = h()
    m.random.set_seed(1234)
    return _equal(m, m.random.uniform([2], seed=1), first)  # True


def case_compiled_function_draws_new_numbers_each_call(m):
    m.random.set_seed(5)

    @m.function(jit_compile=True)
    def noisy(x):
        return x + m.random.normal([3])

    x = m.constant([0.0, 0.0, 0.0])
    return _equal(m, noisy(x), noisy(x))  # False (XLA ignores seeds; new numbers anyway)


def case_shapes_dtypes_and_ranges(m):
    m.random.set_seed(3)
    k = m.random.uniform([400], minval=2, maxval=6, dtype=m.int32)
    u = m.random.uniform([2, 3], minval=-1.0, maxval=1.0, dtype=m.float64)
    n = m.random.normal([4, 1], mean=5.0, stddev=0.0)
    return [k.dtype.name, list(k.shape),
            sorted(set(np.asarray(k).tolist())), u.dtype.name, list(u.shape),
            bool((np.asarray(u) >= -1).all() and (np.asarray(u) < 1).all()), n]


def case_integer_draw_without_maxval(m):
    return m.random.uniform([2], dtype=m.int32)  # ValueError in both


case_integer_draw_without_maxval.error_only = True


def case_mean_and_bounds_gradients(m):
    x = m.constant([1.0, 2.0])
    with m.GradientTape(persistent=True) as tape:
        tape.watch(x)
        n = m.random.normal([3], mean=x[0], stddev=x[1])
        u = m.random.uniform([3], minval=x[0], maxval=x[1])
    g_n, g_u = tape.gradient(n, x), tape.gradient(u, x)
    return [g_n[0], np.round(np.asarray(g_u).sum(), 4)]  # d/dmean = 3; d/dlo + d/dhi = 3


def case_dropout_mask_drawn_inside_a_function(m):
    m.random.set_seed(9)

    @m.function
    def step(x):
        with m.GradientTape() as tape:
            tape.watch(x)
            keep = m.cast(m.random.uniform(m.shape(x)) < 0.5, x.dtype)
            loss = m.reduce_sum(x * keep * 3.0)
        return keep, tape.gradient(loss, x)

    x = m.constant(np.arange(8, dtype=np.float32))
    (k1, g1), (k2, g2) = step(x), step(x)
    return [_equal(m, g1, 3 * np.asarray(k1)), _equal(m, g2, 3 * np.asarray(k2)),
            _equal(m, k1, k2)]  # [True, True, False]
