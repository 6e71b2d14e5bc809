"""cond, while_loop, map_fn, scan and vectorized_map (minitape/control_flow.py):
TensorFlow 2.21's numbers, derivatives against finite differences, Jacobians
pfor against the loop, forward against reverse, compiled against eager, any
shapes, and bad input that leaves the tapes as they were. (The op table's rows,
tests/op_table_control_flow.py, get the generic checks too; the conformance
cases, tests/conformance/cases_control_flow.py, run the same programs under
TensorFlow.)"""
import collections
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitape as mt
from minitape.test import check_gradients

Pair = collections.namedtuple("Pair", "i s")


def value_and_gradients(f, *args):
    xs = [mt.constant(a) for a in args]
    with mt.GradientTape() as tape:
        tape.watch(xs)
        y = f(*xs)
    return y, tape.gradient(y, xs)


def close(a, b, rtol=1e-6, atol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


# --- TensorFlow 2.21's numbers -------------------------------------------------------------

def _softmax_rows(x):
    return mt.map_fn(lambda r: mt.reduce_sum(mt.nn.softmax(r) * r), x)


def _newton(x):
    return mt.while_loop(lambda i, y: i < 6, lambda i, y: (i + 1, 0.5 * (y + 2.0 * x / y)),
                         (mt.constant(0), x))[1]


def _recurrence(x, w):
    def step(state, t):
        h, total = state
        h = mt.tanh(w[0] * h + t)
        return h, total + h * h
    hs, totals = mt.scan(step, x, initializer=(mt.zeros((), x.dtype), mt.zeros((), x.dtype)),
                         reverse=True)
    return hs + totals


def _cond(x):
    return mt.cond(x[0] > 0, lambda: x * x, lambda: -x)


def _pair_map(x, y):
    out = mt.map_fn(lambda t: {"p": t[0] * t[1], "q": mt.exp(t[0]) - t[1]}, (x, y),
                    fn_output_signature={"p": mt.float32, "q": mt.float32})
    return out


@pytest.mark.parametrize("f, args, value, grads", [
    (_softmax_rows, [[[0.5, -1.0, 2.0], [1.0, 0.0, 3.0]]], [1.6197267, 2.6455791],
     [[[-0.02098693, -0.06335168, 1.0843387], [-0.07372203, -0.06913088, 1.1428531]]]),
    (_newton, [3.0], 2.4494896, [0.40824828]),                 # sqrt(2 x), 1 / sqrt(2 x)
    (_recurrence, [[0.5, -1.0, 2.0, 0.25], [0.7]], [1.4579954, 0.7963077, 1.9836508, 0.3049038],
     [[1.4349489, 0.7005547, 0.3717357, 3.0264382], [0.3321358]]),
    (_cond, [[1.5, -2.0]], [2.25, 4.0], [[3.0, -4.0]]),
    (_cond, [[-1.5, 2.0]], [1.5, -2.0], [[-1.0, -1.0]]),
    (lambda x: mt.vectorized_map(lambda r: mt.reduce_sum(r * r) * r[0], x),
     [[[0.5, -1.0, 2.0], [1.0, 0.0, 3.0]]], [2.625, 10.0],
     [[[5.75, -1.0, 2.0], [12.0, 0.0, 6.0]]]),
    (lambda x: mt.scan(lambda a, t: a * t, x), [[1.0, 2.0, 3.0]], [1.0, 2.0, 6.0],
     [[9.0, 4.0, 2.0]]),
    (lambda x: mt.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * s),
                             (mt.constant(0), x))[1], [1.5], 25.628906, [136.6875]),
], ids=["map_fn-softmax-rows", "while_loop-newton", "scan-recurrence-reverse",
        "cond-true", "cond-false", "vectorized_map-rows", "scan-cumprod", "while_loop-power"])
def test_values_and_gradients_are_tensorflows(f, args, value, grads):
    y, gs = value_and_gradients(f, *[np.asarray(a, np.float32) for a in args])
    assert y.dtype == mt.float32
    close(y, value)
    for g, expected in zip(gs, grads):
        close(g, expected)


def test_nested_structures_are_tensorflows():
    x = np.array([0.5, -1.0, 2.0], np.float32)
    y = np.array([1.5, 0.25, -0.5], np.float32)
    out, grads = value_and_gradients(lambda a, b: _pair_map(a, b), x, y)
    assert sorted(out) == ["p", "q"]
    close(out["p"], [0.75, -0.25, -1.0])
    close(out["q"], [0.14872122, 0.11787945, 7.889056])
    close(grads[0], [3.1487212, 0.61787945, 6.889056])   # (the sum of both results)
    close(grads[1], [-0.5, -2.0, 1.0])
    # TensorFlow 2.21: a namedtuple in, a namedtuple out; a tuple accumulator
    v = mt.constant([1.0, 2.0, 3.0])
    pair = mt.map_fn(lambda p: Pair(p.i * 2, p.s), Pair(v, v))
    assert type(pair) is Pair and pair.i.numpy().tolist() == [2.0, 4.0, 6.0]
    fib = mt.scan(lambda a, _: (a[1], a[0] + a[1]), mt.range(6), initializer=(0, 1))
    assert [t.numpy().tolist() for t in fib] == [[1, 1, 2, 3, 5, 8], [1, 2, 3, 5, 8, 13]]
    loop = mt.while_loop(lambda i, p: i < 3, lambda i, p: (i + 1, (p[0] + 1.0, p[1] * 2.0)),
                         (mt.constant(0), (v, v)))
    assert int(loop[0]) == 3 and type(loop[1]) is tuple
    assert loop[1][0].numpy().tolist() == [4.0, 5.0, 6.0]
    assert loop[1][1].numpy().tolist() == [8.0, 16.0, 24.0]


def test_vectorized_map_gives_the_guides_per_example_gradients_and_jacobian_rows():
    w = mt.constant([[0.5, -1.0], [2.0, 0.25], [1.5, -0.5]])
    xs = mt.constant([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0], [2.0, 1.0, -2.0], [0.0, 0.1, 0.2]])

    def per_example(x):
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = mt.reduce_sum(mt.tanh(mt.linalg.matvec(w, x, transpose_a=True)) ** 2)
        return tape.gradient(y, x)
    close(mt.vectorized_map(per_example, xs),   # TensorFlow 2.21's numbers
          [[0.13621867, -0.03405467, 0.06810933], [0.65070176, -0.61802006, 0.0575011],
           [0.7578417, -0.18946043, 0.37892085], [0.51231134, 1.4165038, 1.1647332]])
    x = mt.constant([0.5, -1.0, 2.0])
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = mt.stack([x[0] * x[1], mt.sin(x[2]), mt.reduce_sum(x * x)])
    rows = mt.vectorized_map(lambda v: tape.gradient(y, x, output_gradients=v), mt.eye(3))
    close(rows, [[-1.0, 0.5, 0.0], [0.0, 0.0, -0.41614684], [1.0, -2.0, 4.0]])
    close(rows, tape.jacobian(y, x))


def test_eager_results_keep_tensorflows_types():
    x = mt.constant([1.0, 2.0])
    assert mt.cond(True, lambda: 1.0, lambda: x) == 1.0    # eager TensorFlow: the number
    assert mt.cond(False, lambda: None, lambda: None) is None
    assert mt.vectorized_map(lambda t: None, x) is None
    looped = mt.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2.0), [0, 1.0])
    assert type(looped) is tuple and looped[0].dtype == mt.int32 and float(looped[1]) == 8.0
    assert type(mt.while_loop(lambda i: i < 0, lambda i: (i + 1,), [0])) is list
    empty = mt.map_fn(lambda t: t * 2, mt.zeros((0, 3)))
    assert empty.shape == (0,) and empty.dtype == mt.float32        # TensorFlow 2.21: (0,)
    assert mt.vectorized_map(lambda t: t * 2, mt.zeros((0, 3))).shape == (0, 3)
    assert mt.scan(lambda a, t: a + t, mt.zeros((0,)), initializer=1.0).shape == (0,)
    changed = mt.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, mt.concat([s, s], 0)),
                            (mt.constant(0), x))
    assert changed[1].shape == (16,)    # eagerly, shapes may change from pass to pass


# --- derivatives against finite differences (float64) -----------------------------------

FD_PROGRAMS = {
    "cond-true": (_cond, [np.array([0.7, -1.2, 0.4])]),
    "cond-false": (_cond, [np.array([-0.7, 1.2, 0.4])]),
    "while_loop-newton": (_newton, [np.array([3.0, 0.8])]),
    "map_fn-softmax-rows": (_softmax_rows, [np.array([[0.5, -1.0, 2.0], [1.0, 0.0, 3.0]])]),
    "map_fn-nested": (lambda x, y: _pair_map_64(x, y), [np.array([0.5, -1.0, 2.0]),
                                                        np.array([1.5, 0.25, -0.5])]),
    "scan-recurrence": (_recurrence, [np.array([0.5, -1.0, 2.0, 0.25]), np.array([0.7])]),
    "vectorized_map-rows": (lambda x: mt.vectorized_map(
        lambda r: mt.reduce_sum(r * r) * mt.sin(r[0]), x), [np.array([[0.5, -1.0], [1.0, 3.0]])]),
}


def _pair_map_64(x, y):
    out = mt.map_fn(lambda t: {"p": t[0] * t[1], "q": mt.exp(t[0]) - t[1]}, (x, y),
                    fn_output_signature={"p": x.dtype, "q": x.dtype})
    return out["p"] + 2.0 * out["q"]


@pytest.mark.parametrize("name", FD_PROGRAMS)
def test_first_and_second_derivatives_match_finite_differences(name):
    f, args = FD_PROGRAMS[name]
    check_gradients(f, args, order=2)


@pytest.mark.parametrize("name", FD_PROGRAMS)
def test_jacobians_pfor_and_loop_and_forward_and_reverse_agree(name):
    f, args = FD_PROGRAMS[name]
    xs = [mt.constant(a) for a in args]
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(xs)
        y = f(*xs)
    pfor = tape.jacobian(y, xs)
    loop = tape.jacobian(y, xs, experimental_use_pfor=False)
    forward = tape.jacobian(y, xs, experimental_direction="forward")
    for a, b, c in zip(pfor, loop, forward):
        close(a, b, 1e-12, 1e-12)
        close(a, c, 1e-12, 1e-12)
    tangents = [mt.constant(np.linspace(0.5, 1.5, a.size).reshape(a.shape)) for a in args]
    with mt.autodiff.ForwardAccumulator(xs, tangents) as acc:
        y = f(*xs)
    expected = sum(np.tensordot(j.numpy(), t.numpy(), axes=t.ndim) for j, t in zip(pfor, tangents))
    close(acc.jvp(y), expected, 1e-12, 1e-12)


@pytest.mark.parametrize("name", FD_PROGRAMS)
def test_compiled_agrees_with_eager(name):
    f, args = FD_PROGRAMS[name]

    def with_gradient(*xs):
        with mt.GradientTape() as tape:
            tape.watch(xs)
            y = f(*xs)
        return y, tape.gradient(y, list(xs))

    compiled = mt.function(with_gradient, jit_compile=True)
    xs = [mt.constant(a) for a in args]
    eager_y, eager_g = with_gradient(*xs)
    y, g = compiled(*xs)
    close(y, eager_y, 1e-12, 1e-12)
    for a, b in zip(g, eager_g):
        close(a, b, 1e-12, 1e-12)
    assert "def " in compiled.experimental_get_compiler_ir(*xs)()


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("name", ["while_loop-newton", "scan-recurrence", "map_fn-nested"])
def test_jvps_inside_functions_agree_with_eager(name, jit):
    # (TensorFlow 2.21's forward mode through a while loop inside a tf.function
    # raises a TypeError about a variant dtype; minitape's is the eager JVP)
    f, args = FD_PROGRAMS[name]
    traced = mt.function(f, jit_compile=jit)
    xs = [mt.constant(a) for a in args]
    tangents = [mt.constant(np.linspace(0.5, 1.5, a.size).reshape(a.shape)) for a in args]
    results = []
    for fn in (f, traced):
        with mt.autodiff.ForwardAccumulator(xs, tangents) as acc:
            y = fn(*xs)
        results.append(acc.jvp(y))
    close(results[1], results[0], 1e-12, 1e-12)


def test_a_function_traces_again_for_another_predicate_and_the_stepper_sees_plain_ops():
    f = mt.function(_cond, jit_compile=True)
    close(f(mt.constant([1.5, -2.0])), [2.25, 4.0])
    close(f(mt.constant([-1.5, 2.0])), [1.5, -2.0])
    close(f(mt.constant([1.5, -2.0])), [2.25, 4.0])
    # one trace per value of x the predicate read (TensorFlow: one for all)
    assert f.experimental_get_tracing_count() == 2
    x = mt.constant([1.0, 2.0, 3.0])
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.reduce_sum(mt.map_fn(lambda t: t * t, x))
    types = {op.type for op in tape.operations}
    assert types <= {"StridedSlice", "Mul", "Pack", "Sum"}, types
    steps = list(tape.backward_pass(y, x).steps())
    assert steps and float(mt.reduce_sum(tape.gradient(y, x))) == 12.0


# --- any shapes -------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                  elements=st.floats(-3, 3)), st.booleans())
def test_loops_match_numpy_on_any_shape(x, reverse):
    t = mt.constant(x)
    close(mt.map_fn(mt.sin, t), np.sin(x), 1e-12, 1e-12)
    close(mt.vectorized_map(lambda r: mt.reduce_sum(r), t),
          x.reshape(x.shape[0], -1).sum(axis=1), 1e-12, 1e-12)
    expected = np.cumsum(x[::-1], axis=0)[::-1] if reverse else np.cumsum(x, axis=0)
    close(mt.scan(lambda a, r: a + r, t, reverse=reverse), expected, 1e-12, 1e-12)
    with mt.GradientTape() as tape:
        tape.watch(t)
        y = mt.reduce_sum(mt.scan(lambda a, r: a + r, t, reverse=reverse) ** 2)
    grad = 2 * (np.cumsum(np.cumsum(x, axis=0)[::-1], axis=0)[::-1] if not reverse
                else np.cumsum(np.cumsum(x[::-1], axis=0)[::-1], axis=0))
    close(tape.gradient(y, t), grad, 1e-10, 1e-10)


# --- bad input ----------------------------------------------------------------------------

X3 = [1.0, 2.0, 3.0]
BAD = [
    (lambda v: mt.map_fn(lambda t: t[0] * t[1], (v.x, v.head), fn_output_signature=mt.float32),
     ValueError, ["map_fn", "same leading size", "(3,)", "(2,)"]),
    (lambda v: mt.map_fn(lambda t: (t, t), v.x), ValueError,
     ["map_fn", "structure", "tuple of 2"]),
    (lambda v: mt.map_fn(lambda t: mt.cast(t * 2, mt.int32), v.x), TypeError,
     ["map_fn", "int32", "float32", "fn_output_signature"]),
    (lambda v: mt.map_fn(lambda t: mt.tile(t[None] * 2, [mt.cast(t, mt.int32)]), v.x), ValueError,
     ["map_fn", "shape (2,)", "shape (1,)"]),
    (lambda v: mt.map_fn(lambda t: t, v.first), ValueError, ["map_fn", "scalar", "float32"]),
    (lambda v: mt.map_fn(3, v.x), TypeError, ["map_fn", "fn must be callable"]),
    (lambda v: mt.vectorized_map(lambda t: t[0] + t[1][0], (v.x, v.ones)), ValueError,
     ["vectorized_map", "(3,)", "(2, 2)"]),
    (lambda v: mt.vectorized_map(lambda t: t, v.first), ValueError, ["vectorized_map", "scalar"]),
    (lambda v: mt.scan(lambda a, t: (a * t, t), v.x, initializer=1.0), ValueError,
     ["scan", "structure"]),
    (lambda v: mt.scan(lambda a, t: mt.cast(a * t, mt.float64), v.x, initializer=1.0), TypeError,
     ["scan", "float64", "float32"]),
    (lambda v: mt.scan(lambda a, t: a + t, v.empty), ValueError, ["scan", "no entries", "(0,)"]),
    (lambda v: mt.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1,), (0, v.x)),
     ValueError, ["while_loop", "structure", "list of 2", "list of 1"]),
    (lambda v: mt.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, [s * 2, s]), (0, (v.x, v.x))),
     TypeError, ["while_loop", "sequence type", "tuple of 2", "list of 2"]),
    (lambda v: mt.while_loop(lambda s: s < 3.0, lambda s: (s * 2,), (v.x,)), ValueError,
     ["while_loop", "shape (3,)"]),
    (lambda v: mt.while_loop(lambda i: i < 3, lambda i: i + 1, [v.first]), TypeError,
     ["while_loop", "list or tuple", "Tensor of shape ()"]),
    (lambda v: mt.while_loop(lambda i: i < 3, lambda i: (i + 1,), v.x), TypeError,
     ["while_loop", "loop_vars", "(3,)"]),
    (lambda v: mt.while_loop(lambda i: i < 3, lambda i: (i + 1,), (v.x,), maximum_iterations=[2]),
     ValueError, ["while_loop", "maximum_iterations", "(1,)"]),
    (lambda v: mt.cond(v.positive, lambda: v.x * 2, lambda: v.x), ValueError, ["cond", "(3,)"]),
    (lambda v: mt.cond(True, lambda: v.x * 2), TypeError, ["cond", "false_fn"]),
]


@pytest.mark.parametrize("call, error, fragments", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_input_names_the_function_and_leaves_the_tapes_as_they_were(call, error, fragments):
    x = mt.constant(X3)
    with mt.GradientTape(persistent=True) as tape, \
            mt.autodiff.ForwardAccumulator(x, mt.constant([1.0, 1.0, 1.0])) as acc:
        tape.watch(x)
        y = x * x
        v = types.SimpleNamespace(x=x, head=x[:2], first=x[0], empty=x[:0], positive=x > 0,
                                  ones=mt.ones((2, 2)))
        before = len(tape.operations)
        with pytest.raises(error) as info:
            call(v)
        assert len(tape.operations) == before
        z = mt.reduce_sum(y)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    close(tape.gradient(z, x), [2.0, 4.0, 6.0])
    close(acc.jvp(z), 12.0)


@pytest.mark.parametrize("jit", [False, True])
def test_a_limit_or_a_count_read_from_an_argument_traces_again(jit):
    # maximum_iterations and num_segments-like counts are read as Python values:
    # a trace holds for the value it read (TensorFlow 2.21: 8.0 and 32.0)
    f = mt.function(lambda x, n: mt.while_loop(lambda s: True, lambda s: (s * 2.0,), (x,),
                                               maximum_iterations=n)[0], jit_compile=jit)
    assert float(f(mt.constant(1.0), mt.constant(3))) == 8.0
    assert float(f(mt.constant(1.0), mt.constant(5))) == 32.0
    g = mt.function(lambda x, n: mt.math.unsorted_segment_sum(x, [0, 1, 0], n),
                    jit_compile=jit)
    assert g(mt.constant([1.0, 2.0, 3.0]), mt.constant(2)).shape == (2,)
    assert g(mt.constant([1.0, 2.0, 3.0]), mt.constant(4)).shape == (4,)


@pytest.mark.parametrize("jit", [False, True])
def test_any_shape_signatures_trace_for_each_number_of_entries(jit):
    f = mt.function(lambda x: mt.map_fn(mt.sin, x), input_signature=[mt.TensorSpec([None])],
                    jit_compile=jit)
    close(f(mt.constant([1.0, 2.0])), np.sin([1.0, 2.0]))
    close(f(mt.constant([1.0, 2.0, 3.0])), np.sin([1.0, 2.0, 3.0]))
    g = mt.function(lambda x: mt.scan(lambda a, t: a + t, x), input_signature=[mt.TensorSpec(None)],
                    jit_compile=jit)
    close(g(mt.constant([1.0, 2.0, 3.0])), [1.0, 3.0, 6.0])
    close(g(mt.constant([[1.0], [2.0]])), [[1.0], [3.0]])
