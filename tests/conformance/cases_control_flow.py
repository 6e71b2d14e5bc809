"""Functional control flow (issue 30): cond, while_loop, map_fn, scan and
vectorized_map, eagerly and inside functions, with their derivatives, nested
structures and errors, run under TensorFlow 2.21 and minitape."""
import collections

import numpy as np

from .probes import probe

Pair = collections.namedtuple("Pair", "i s")


# --- cond -----------------------------------------------------------------------------

def case_cond_branches(m):
    # value x * x or -x by the sign of the first entry; probes both branches
    f = lambda x: m.cond(x[0] > 0, lambda: x * x, lambda: -x)  # noqa: E731
    return probe(m, f, [1.5, -2.0]), probe(m, f, [-1.5, 2.0])


def case_cond_nested_and_python_results(m):
    x = m.constant([1.0, 2.0])
    return (m.cond(m.constant(False), lambda: (x, {"a": x}), lambda: (2 * x, {"a": -x})),
            m.cond(True, lambda: 1.0, lambda: x),   # eager TensorFlow returns the number
            m.cond(1, lambda: [x], lambda: [x]),
            m.cond(np.bool_(False), lambda: x, lambda: x + 1))


def case_cond_vector_predicate(m):
    x = m.constant([1.0, -2.0])
    return m.cond(x > 0, lambda: x, lambda: -x)


case_cond_vector_predicate.error_only = True


def case_cond_missing_false_fn(m):
    return m.cond(True, lambda: 1.0)


case_cond_missing_false_fn.error_only = True


def case_cond_not_callable(m):
    return m.cond(True, lambda: 1.0, 3)


case_cond_not_callable.error_only = True


def case_cond_in_function_taken_branch(m):
    # both branches depend on x: one trace per sign in minitape, one graph in TF
    f = m.function(lambda x: m.cond(x > 0, lambda: x * x, lambda: m.sin(x)))
    return probe(m, f, [2.0], parts=("value", "grad", "grad2", "jvp")), \
        probe(m, f, [-2.0], parts=("value", "grad", "grad2", "jvp"))


# --- while_loop -------------------------------------------------------------------------

def case_while_loop_power(m):
    # s -> s * s three times: s ** 8 (TF: 25.628906 and 136.6875 at 1.5)
    def f(x):
        return m.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * s),
                            (m.constant(0), x))[1]
    return probe(m, f, [1.5, -0.75])


def case_while_loop_structures(m):
    x = m.constant([1.0, 2.0, 3.0])
    i0 = m.constant(0)
    return (m.while_loop(lambda i, s: i < 3, lambda i, s: [i + 1, s * 2.0], (i0, x)),
            m.while_loop(lambda i, p: i < 3, lambda i, p: (i + 1, (p[0] + 1.0, p[1] * 2.0)),
                         (i0, (x, x))),
            m.while_loop(lambda i, s: i < 3, lambda i, s: Pair(i + 1, s * 2.0), Pair(i0, x)),
            m.while_loop(lambda p: p.i < 3, lambda p: [Pair(p.i + 1, p.s * 2.0)],
                         [Pair(i0, x)]),
            m.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2.0), [0, 1.0]),
            m.while_loop(lambda i: i < 0, lambda i: (i + 1,), [0]),
            m.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, m.concat([s, s], 0)),
                         (i0, x), shape_invariants=(i0.shape, [None])),
            m.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, m.cast(s, m.int32)),
                         (i0, x)),
            m.while_loop(lambda i: m.cast(i < 3, m.float32), lambda i: (i + 1,), [i0],
                         parallel_iterations=3, back_prop=True, swap_memory=True, name="w"),
            m.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2.0),
                         (i0, m.Variable(2.0))))


def case_while_loop_maximum_iterations(m):
    i0 = m.constant(0)
    c, b = (lambda i: i < 10), (lambda i: (i + 1,))
    return (m.while_loop(c, b, (i0,), maximum_iterations=4),
            m.while_loop(c, lambda i: [i + 1], [i0], maximum_iterations=4),
            m.while_loop(c, b, (i0,), maximum_iterations=4.5),
            m.while_loop(c, b, (i0,), maximum_iterations=m.constant(2)),
            m.while_loop(c, b, (i0,), maximum_iterations=0),
            m.while_loop(c, b, (i0,), maximum_iterations=-3))


def case_while_loop_maximum_iterations_list_for_tuple(m):
    # TensorFlow nests loop_vars under its counter, so the list must stay a list
    return m.while_loop(lambda i: i < 10, lambda i: (i + 1,), [m.constant(0)],
                        maximum_iterations=4)


case_while_loop_maximum_iterations_list_for_tuple.error_only = True


def case_while_loop_maximum_iterations_not_scalar(m):
    return m.while_loop(lambda i: i < 10, lambda i: (i + 1,), (m.constant(0),),
                        maximum_iterations=[4])


case_while_loop_maximum_iterations_not_scalar.error_only = True


def case_while_loop_body_returns_fewer(m):
    x = m.constant([1.0, 2.0, 3.0])
    return m.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1,), (m.constant(0), x))


case_while_loop_body_returns_fewer.error_only = True


def case_while_loop_body_nests_differently(m):
    x = m.constant([1.0, 2.0, 3.0])
    return m.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, (s, s)), (m.constant(0), x))


case_while_loop_body_nests_differently.error_only = True


def case_while_loop_inner_list_for_tuple(m):
    x = m.constant([1.0, 2.0, 3.0])
    return m.while_loop(lambda i, p: i < 3, lambda i, p: (i + 1, [p[0], p[1]]),
                        (m.constant(0), (x, x)))


case_while_loop_inner_list_for_tuple.error_only = True


def case_while_loop_body_returns_a_tensor(m):
    return m.while_loop(lambda i: i < 10, lambda i: i + 1, [m.constant(1)])


case_while_loop_body_returns_a_tensor.error_only = True


def case_while_loop_vector_condition(m):
    return m.while_loop(lambda s: s < 3.0, lambda s: (s + 1.0,), (m.constant([1.0, 2.0]),))


case_while_loop_vector_condition.error_only = True


def case_while_loop_not_callable(m):
    return m.while_loop(3, lambda i: (i,), (m.constant(0),))


case_while_loop_not_callable.error_only = True


def case_while_loop_parallel_iterations_zero(m):
    return m.while_loop(lambda i: i < 3, lambda i: (i + 1,), (m.constant(0),),
                        parallel_iterations=0)


case_while_loop_parallel_iterations_zero.error_only = True


def case_while_loop_in_function(m):
    # Newton's iteration for sqrt(2 * x) until it settles, inside a function
    @m.function
    def f(x):
        def body(i, y):
            return i + 1, 0.5 * (y + 2.0 * x / y)
        return m.while_loop(lambda i, y: i < 6, body, (m.constant(0), x))[1]
    # (TensorFlow's forward mode through a while loop in a function raises a
    # TypeError about a variant dtype; minitape's JVP is checked in test_control_flow.py)
    return probe(m, f, [3.0], parts=("value", "grad", "grad2"))


# --- map_fn -----------------------------------------------------------------------------

def case_map_fn_elementwise(m):
    return probe(m, lambda x: m.map_fn(lambda t: m.sin(t) * t, x), [0.5, -1.0, 2.0])


def case_map_fn_rows(m):
    # each row's softmax-weighted sum: a matrix in, a vector out
    def f(x):
        return m.map_fn(lambda r: m.reduce_sum(m.nn.softmax(r) * r), x,
                        fn_output_signature=x.dtype)
    return probe(m, f, [[0.5, -1.0, 2.0], [1.0, 0.0, 3.0]])


def case_map_fn_nested(m):
    x = m.constant([1.0, 2.0, 3.0])
    return (m.map_fn(lambda t: (t[0] * t[1], t[0] + t[1]), (x, 2 * x)),
            m.map_fn(lambda t: t[0] * t[1], (x, 2 * x), fn_output_signature=m.float32),
            m.map_fn(lambda d: {"a": d["a"] * 2, "b": d["b"]},
                     {"a": x, "b": m.constant([1, 2, 3])}),
            m.map_fn(lambda p: Pair(p.i * 2, p.s), Pair(x, x)),
            m.map_fn(lambda t: m.cast(t, m.int32), x, fn_output_signature=m.int32),
            m.map_fn(lambda t: m.cast(t, m.int32), x, dtype=m.int32),
            m.map_fn(lambda t: t * 2, x, fn_output_signature=m.TensorSpec([], m.float32)),
            m.map_fn(lambda t: 1.0, x),
            m.map_fn(lambda t: t * 2, np.array([1.0, 2.0])),
            m.map_fn(lambda t: t * 2, m.Variable([1.0, 2.0])),
            m.map_fn(lambda t: t * 2, m.zeros((0, 3))),
            m.map_fn(lambda t: t * 2, x, parallel_iterations=1, back_prop=True,
                     swap_memory=False, infer_shape=True, name="m"))


def case_map_fn_nested_gradient(m):
    # two inputs in a tuple, two results in a dict
    def f(x, y):
        out = m.map_fn(lambda t: {"p": t[0] * t[1], "q": m.exp(t[0]) - t[1]}, (x, y),
                       fn_output_signature={"p": x.dtype, "q": x.dtype})
        return out["p"] + 2.0 * out["q"]
    return probe(m, f, [0.5, -1.0, 2.0], [1.5, 0.25, -0.5])


def case_map_fn_different_leading_sizes(m):
    x = m.constant([1.0, 2.0, 3.0])
    return m.map_fn(lambda t: t[0] * t[1], (x, m.constant([1.0, 2.0])),
                    fn_output_signature=m.float32)


case_map_fn_different_leading_sizes.error_only = True


def case_map_fn_scalar(m):
    return m.map_fn(lambda t: t, m.constant(1.0))


case_map_fn_scalar.error_only = True


def case_map_fn_no_tensors(m):
    return m.map_fn(lambda t: t, [])


case_map_fn_no_tensors.error_only = True


def case_map_fn_other_structure(m):
    x = m.constant([1.0, 2.0])
    return m.map_fn(lambda t: (t, t), x)


case_map_fn_other_structure.error_only = True


def case_map_fn_other_dtype_without_signature(m):
    return m.map_fn(lambda t: m.cast(t, m.int32), m.constant([1.0, 2.0]))


case_map_fn_other_dtype_without_signature.error_only = True


def case_map_fn_shapes_vary(m):
    return m.map_fn(lambda t: m.range(t), m.constant([1, 2]))


case_map_fn_shapes_vary.error_only = True


def case_map_fn_no_entries(m):
    z = m.zeros((0, 3))
    return (m.map_fn(lambda t: t * 2, z, fn_output_signature=m.TensorSpec([3], m.float32)),
            m.map_fn(lambda t: t * 2, z, fn_output_signature=m.int32),
            m.map_fn(lambda t: t, (z, m.zeros((0,), m.int32))),
            m.vectorized_map(lambda t: (t[0] * 2, m.reduce_sum(t[0])), (z,)),
            m.scan(lambda a, t: a + t, z, initializer=m.zeros((3,))))


def case_map_fn_no_entries_and_a_signature_of_unknown_size(m):
    return m.map_fn(lambda t: t * 2, m.zeros((0, 3)),
                    fn_output_signature=m.TensorSpec([None], m.float32))


case_map_fn_no_entries_and_a_signature_of_unknown_size.error_only = True


def case_map_fn_signature_shape(m):
    return m.map_fn(lambda t: t * 2, m.constant([1.0, 2.0]),
                    fn_output_signature=m.TensorSpec([2], m.float32))


case_map_fn_signature_shape.error_only = True


# --- scan -------------------------------------------------------------------------------

def case_scan_values(m):
    x = m.constant([1.0, 2.0, 3.0])
    return (m.scan(lambda a, t: a + t, x),
            m.scan(lambda a, t: a + t, x, initializer=10.0),
            m.scan(lambda a, t: a + t, x, reverse=True),
            m.scan(lambda a, t: a * t, x, initializer=1.0, reverse=True),
            m.scan(lambda a, t: (a[0] + t, a[1] * t), x, initializer=(0.0, 1.0)),
            m.scan(lambda a, _: (a[1], a[0] + a[1]), m.range(6), initializer=(0, 1)),
            m.scan(lambda a, t: a + t[0] * t[1], (x, 2 * x), initializer=0.0),
            m.scan(lambda a, t: (a[0] + t[0], a[1] * t[1]), (x, 2 * x)),
            m.scan(lambda a, t: a + t, m.zeros((0,)), initializer=1.0),
            m.scan(lambda a, t: 1.0, x, initializer=0.0),
            m.scan(lambda a, t: a + 1, x, initializer=0),
            m.scan(lambda a, t: a + t, m.reshape(m.range(6.0), (3, 2))),
            m.scan(lambda a, t: a + t, x, parallel_iterations=1, back_prop=True,
                   swap_memory=False, infer_shape=True, name="s"))


def case_scan_cumprod_gradient(m):
    # TF: the gradient of sum(scan(a * t)) at [1, 2, 3] is [9, 4, 2]
    return probe(m, lambda x: m.scan(lambda a, t: a * t, x), [1.0, 2.0, 3.0])


def case_scan_recurrence(m):
    # an RNN-like recurrence h = tanh(w * h + x), reversed, with a tuple state
    def f(x, w):
        def step(state, t):
            h, total = state
            h = m.tanh(w[0] * h + t)
            return h, total + h * h
        hs, totals = m.scan(step, x, initializer=(m.zeros((), x.dtype), m.zeros((), x.dtype)),
                            reverse=True)
        return hs + totals
    return probe(m, f, [0.5, -1.0, 2.0, 0.25], [0.7])


def case_scan_other_structure(m):
    return m.scan(lambda a, t: (a, t), m.constant([1.0, 2.0]), initializer=0.0)


case_scan_other_structure.error_only = True


def case_scan_other_dtype(m):
    return m.scan(lambda a, t: m.cast(a, m.int32), m.constant([1.0, 2.0]), initializer=0.0)


case_scan_other_dtype.error_only = True


def case_scan_other_shape(m):
    return m.scan(lambda a, t: m.concat([a, [t]], 0), m.constant([1.0, 2.0]),
                  initializer=m.zeros([1]))


case_scan_other_shape.error_only = True


def case_scan_no_entries_no_initializer(m):
    return m.scan(lambda a, t: a + t, m.zeros((0,)))


case_scan_no_entries_no_initializer.error_only = True


def case_scan_different_leading_sizes(m):
    x = m.constant([1.0, 2.0, 3.0])
    return m.scan(lambda a, t: a + t[0], (x, x[:2]), initializer=0.0)


case_scan_different_leading_sizes.error_only = True


def case_scan_in_function(m):
    # (with jit_compile=True TensorFlow raises UnimplementedError: its TensorList
    # cannot cross into XLA; minitape's compiled scan is checked in test_control_flow.py,
    # and so is the JVP: TensorFlow's raises the variant-dtype TypeError here too)
    f = m.function(lambda x: m.scan(lambda a, t: a * 0.5 + m.sin(t), x, initializer=x[0]))
    return probe(m, f, [0.5, -1.0, 2.0], parts=("value", "grad", "grad2"))


# --- vectorized_map ---------------------------------------------------------------------

def case_vectorized_map_values(m):
    x = m.constant([1.0, 2.0, 3.0])
    return (m.vectorized_map(lambda t: t * t, x),
            m.vectorized_map(lambda t: m.constant(1.0), x),
            m.vectorized_map(lambda t: 1.0, x),
            m.vectorized_map(lambda t: (t[0] * t[1], t[0]), (x, 2 * x)),
            m.vectorized_map(lambda d: d["a"] + 1, {"a": x}),
            m.vectorized_map(lambda r: m.linalg.matvec(m.eye(2) * 2.0, r),
                             m.reshape(m.range(6.0), (3, 2))),
            m.vectorized_map(lambda t: t * 2, m.zeros((0, 3))),
            m.vectorized_map(lambda t: None, x),
            m.vectorized_map(lambda t: m.cast(t, m.int32), x),
            m.vectorized_map(lambda t: t * 2, np.array([1.0, 2.0])),
            m.vectorized_map(lambda t: t * 2, x, fallback_to_while_loop=False, warn=False),
            m.vectorized_map(lambda t: m.reduce_sum(t), m.ones((2, 3))),
            m.vectorized_map(lambda t: t * x, x))


case_vectorized_map_values.needs = ["linalg.matvec"]


def case_vectorized_map_gradient(m):
    # each row's squared norm times its first entry
    return probe(m, lambda x: m.vectorized_map(lambda r: m.reduce_sum(r * r) * r[0], x),
                 [[0.5, -1.0, 2.0], [1.0, 0.0, 3.0]])


def case_vectorized_map_per_example_gradients(m):
    # the guide's use: per-example gradients of a model, one tape per example
    w = m.constant([[0.5, -1.0], [2.0, 0.25], [1.5, -0.5]])
    xs = m.constant([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0], [2.0, 1.0, -2.0], [0.0, 0.1, 0.2]])

    def per_example(x):
        with m.GradientTape() as tape:
            tape.watch(x)
            y = m.reduce_sum(m.tanh(m.linalg.matvec(w, x, transpose_a=True)) ** 2)
        return tape.gradient(y, x)
    return m.vectorized_map(per_example, xs)


case_vectorized_map_per_example_gradients.needs = ["linalg.matvec"]


def case_vectorized_map_jacobian_rows(m):
    # a Jacobian row by row: vjps against the rows of the identity, as tf's jacobian
    x = m.constant([0.5, -1.0, 2.0])
    with m.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = m.stack([x[0] * x[1], m.sin(x[2]), m.reduce_sum(x * x)])
    rows = m.vectorized_map(lambda v: tape.gradient(y, x, output_gradients=v), m.eye(3))
    return rows, tape.jacobian(y, x)


def case_vectorized_map_different_leading_sizes(m):
    x = m.constant([1.0, 2.0, 3.0])
    return m.vectorized_map(lambda t: t[0] + t[1][0], (x, m.ones((2, 2))))


case_vectorized_map_different_leading_sizes.error_only = True
