"""`mt.function` is never silently wrong: each case of issue 17, traced and compiled.

Every expected number is what TensorFlow 2.21 returns for the same program
under `tf.function` (run eagerly, it is also what minitape returns eagerly).
"""
import re
import tempfile
import warnings

import numpy as np
import pytest

import minitape as mt

MODES = pytest.mark.parametrize("jit", [False, True], ids=["traced", "compiled"])


# --- 1. a tensor argument used as an index or an op attribute is an input ----------

@MODES
def test_a_tensor_index_follows_its_value(jit):
    f = mt.function(lambda x, i: x[i], jit_compile=jit)
    x = mt.constant([1.0, 2.0, 3.0])
    assert float(f(x, mt.constant(0))) == 1.0
    assert float(f(x, mt.constant(2))) == 3.0
    assert float(f(x, mt.constant(0))) == 1.0
    assert f.experimental_get_tracing_count() == 2   # one trace per value, kept


@MODES
def test_an_index_computed_from_an_argument_follows_it(jit):
    f = mt.function(lambda x, i: x[i + 1] * x[:i + 1][-1], jit_compile=jit)
    x = mt.constant([1.0, 2.0, 3.0])
    assert float(f(x, mt.constant(0))) == 2.0 * 1.0
    assert float(f(x, mt.constant(1))) == 3.0 * 2.0


@MODES
def test_pad_constant_values_follow_the_argument(jit):
    f = mt.function(lambda x, c: mt.pad(x, [[1, 1]], constant_values=c), jit_compile=jit)
    x = mt.constant([1.0, 2.0])
    np.testing.assert_array_equal(f(x, mt.constant(5.0)).numpy(), [5, 1, 2, 5])
    np.testing.assert_array_equal(f(x, mt.constant(7.0)).numpy(), [7, 1, 2, 7])


@MODES
def test_shapes_paddings_and_fill_values_follow_the_arguments(jit):
    reshape = mt.function(lambda x, s: mt.reshape(x, s), jit_compile=jit)
    x = mt.ones([6])
    assert reshape(x, mt.constant([2, 3])).shape == (2, 3)
    assert reshape(x, mt.constant([3, 2])).shape == (3, 2)
    pad = mt.function(lambda x, p: mt.pad(x, [[p, 0]]), jit_compile=jit)
    assert pad(x, mt.constant(1)).shape == (7,)
    assert pad(x, mt.constant(3)).shape == (9,)
    fill = mt.function(lambda v: mt.fill([2], v) + 0.0, jit_compile=jit)
    np.testing.assert_array_equal(fill(mt.constant(2.0)).numpy(), [2, 2])
    np.testing.assert_array_equal(fill(mt.constant(3.0)).numpy(), [3, 3])
    zeros = mt.function(lambda n: mt.reduce_sum(mt.ones([n])), jit_compile=jit)
    assert float(zeros(mt.constant(2))) == 2.0
    assert float(zeros(mt.constant(5))) == 5.0
    rng = mt.function(lambda a, b: mt.range(a, b), jit_compile=jit)
    np.testing.assert_array_equal(rng(mt.constant(0), mt.constant(2)).numpy(), [0, 1])
    np.testing.assert_array_equal(rng(mt.constant(1), mt.constant(4)).numpy(), [1, 2, 3])
    lin = mt.function(lambda a: mt.linspace(a, 1.0, 3), jit_compile=jit)
    np.testing.assert_allclose(lin(mt.constant(0.0)).numpy(), [0, 0.5, 1])
    np.testing.assert_allclose(lin(mt.constant(-1.0)).numpy(), [-1, 0, 1])


@MODES
def test_clip_bounds_stay_graph_inputs(jit):
    f = mt.function(lambda x, lo, hi: mt.clip_by_value(x, lo, hi), jit_compile=jit)
    x = mt.constant([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(f(x, mt.constant(1.5), mt.constant(2.5)).numpy(),
                                  [1.5, 2, 2.5])
    np.testing.assert_array_equal(f(x, mt.constant(0.0), mt.constant(1.0)).numpy(), [1, 1, 1])
    assert f.experimental_get_tracing_count() == 1   # bounds are inputs: no retrace


@MODES
def test_the_gradient_through_a_tensor_index_follows_it(jit):
    f = mt.function(lambda x, i: x[i] * x[i], jit_compile=jit)
    x = mt.constant([1.0, 2.0, 3.0])
    for i, expected in ((0, [2, 0, 0]), (2, [0, 0, 6])):
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = f(x, mt.constant(i))
        np.testing.assert_array_equal(tape.gradient(y, x).numpy(), expected)


@MODES
def test_a_signature_with_a_tensor_index_traces_per_value(jit):
    f = mt.function(lambda x, i: x[i], jit_compile=jit,
                    input_signature=[mt.TensorSpec([None]), mt.TensorSpec([], mt.int32)])
    assert float(f(mt.constant([1.0, 2.0, 3.0]), mt.constant(0))) == 1.0
    assert float(f(mt.constant([1.0, 2.0, 3.0]), mt.constant(2))) == 3.0
    assert float(f(mt.constant([1.0, 2.0, 3.0, 4.0]), mt.constant(3))) == 4.0


@MODES
def test_a_function_indexing_inside_another_follows_the_index(jit):
    inner = mt.function(lambda x, i: x[i])
    outer = mt.function(lambda x, i: inner(x, i) * 2.0, jit_compile=jit)
    x = mt.constant([1.0, 2.0, 3.0])
    assert float(outer(x, mt.constant(0))) == 2.0
    assert float(outer(x, mt.constant(2))) == 6.0


def test_a_concrete_function_for_one_index_value_refuses_another():
    f = mt.function(lambda x, i: x[i])
    x = mt.constant([1.0, 2.0, 3.0])
    concrete = f.get_concrete_function(x, mt.constant(0))
    assert float(concrete(x, mt.constant(0))) == 1.0
    with pytest.raises(ValueError, match="argument 'i' was traced for the value 0"):
        concrete(x, mt.constant(1))


def test_saving_a_trace_that_used_an_argument_value_is_refused():
    module = mt.Module()
    module.f = mt.function(lambda x, i: x[i])
    module.f(mt.constant([1.0, 2.0]), mt.constant(1))
    with pytest.raises(ValueError, match=r"uses the value of its input\(s\) \[1\]"):
        mt.saved_model.save(module, tempfile.mkdtemp())


# --- 2. variable reads are snapshots ------------------------------------------------

@MODES
def test_the_swap_swaps(jit):
    p, q = mt.Variable(1.0), mt.Variable(2.0)

    @mt.function(jit_compile=jit)
    def swap():
        a = p.read_value()
        b = q.read_value()
        p.assign(b)
        q.assign(a)
        return a, b

    a, b = swap()
    assert (float(a), float(b), float(p), float(q)) == (1.0, 2.0, 2.0, 1.0)
    a, b = swap()
    assert (float(a), float(b), float(p), float(q)) == (2.0, 1.0, 1.0, 2.0)


@MODES
def test_reads_between_assign_adds_see_the_value_at_that_point(jit):
    v = mt.Variable(0.0)

    @mt.function(jit_compile=jit)
    def f(x):
        v.assign_add(x)
        a = v.read_value()
        v.assign_add(x)
        b = v * 1.0
        v.assign_add(x)
        return a, b, v.read_value()

    assert [float(t) for t in f(mt.constant(1.0))] == [1.0, 2.0, 3.0]
    assert [float(t) for t in f(mt.constant(1.0))] == [4.0, 5.0, 6.0]


@MODES
def test_a_read_before_an_assignment_keeps_its_value_and_gradient(jit):
    w = mt.Variable(3.0)

    @mt.function(jit_compile=jit)
    def f(x):
        y = w * x
        w.assign(10.0)
        return y + w * 0.0

    x = mt.constant(2.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert float(y) == 6.0
    assert float(tape.gradient(y, x)) == 3.0
    w.assign(3.0)
    assert float(f(x)) == 6.0


def test_a_saved_swap_swaps(tmp_path):
    module = mt.Module()
    module.p, module.q = mt.Variable(1.0), mt.Variable(2.0)

    @mt.function(input_signature=[])
    def swap():
        a = module.p.read_value()
        b = module.q.read_value()
        module.p.assign(b)
        module.q.assign(a)
        return a, b

    module.swap = swap
    mt.saved_model.save(module, str(tmp_path))
    loaded = mt.saved_model.load(str(tmp_path))
    assert [float(t) for t in loaded.swap()] == [1.0, 2.0]
    assert (float(loaded.p), float(loaded.q)) == (2.0, 1.0)
    compiled = mt.function(lambda: loaded.swap(), jit_compile=True)
    assert [float(t) for t in compiled()] == [2.0, 1.0]
    assert (float(loaded.p), float(loaded.q)) == (1.0, 2.0)


# --- 3. recompute_grad follows its inputs ---------------------------------------------

@MODES
def test_recompute_grad_inside_a_function_follows_its_inputs(jit):
    w = mt.Variable(3.0)
    g = mt.recompute_grad(lambda x: mt.sin(x) * x * w)
    f = mt.function(lambda x: g(x), jit_compile=jit)
    for value in (1.0, 2.0):
        x = mt.constant(value)
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        dx, dw = tape.gradient(y, [x, w])
        np.testing.assert_allclose(float(y), np.sin(value) * value * 3, rtol=1e-6)
        np.testing.assert_allclose(float(dx), 3 * (np.cos(value) * value + np.sin(value)),
                                   rtol=1e-6)
        np.testing.assert_allclose(float(dw), np.sin(value) * value, rtol=1e-6)
    w.assign(5.0)
    np.testing.assert_allclose(float(f(mt.constant(2.0))), np.sin(2.0) * 10, rtol=1e-6)
    x = mt.constant(2.0)
    with mt.GradientTape() as outer:
        outer.watch(x)
        with mt.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        dy = inner.gradient(y, x)
    np.testing.assert_allclose(float(outer.gradient(dy, x)),
                               5 * (2 * np.cos(2.0) - 2 * np.sin(2.0)), rtol=1e-5)


@MODES
def test_grad_pass_through_inside_a_function_follows_its_inputs(jit):
    f = mt.function(lambda x: mt.grad_pass_through(lambda z: z * 3.0)(x), jit_compile=jit)
    for value in (1.0, 2.0):
        x = mt.constant(value)
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        assert (float(y), float(tape.gradient(y, x))) == (3 * value, 1.0)


# --- 4. generated names never collide with the user's ----------------------------------

NAMES = ["adjoint", "shape", "index", "keepdims", "axis", "w_var", "np", "c0", "assign",
         "solve", "mul", "x"]


@pytest.mark.parametrize("name", NAMES)
def test_a_function_named_like_a_generated_name_compiles(name):
    w = mt.Variable(np.eye(3, dtype=np.float32), name="w")
    namespace = {"mt": mt, "w": w}
    exec(f"def {name}(x):\n"
         "    y = mt.linalg.solve(w + 2.0 * mt.eye(3), x[:, None], adjoint=True)\n"
         "    z = mt.reshape(y, [3]) * x[1]\n"
         "    return mt.reduce_sum(z, axis=0, keepdims=True) + mt.reduce_max(x)\n",
         namespace)
    fn = namespace[name]
    x = mt.constant([1.0, 2.0, 3.0])
    np.testing.assert_allclose(mt.function(fn, jit_compile=True)(x).numpy(),
                               fn(x).numpy(), rtol=1e-6)


def test_a_loaded_function_named_axis_compiles(tmp_path):
    def axis(x):
        return mt.reduce_sum(x * x, axis=0, keepdims=True)

    module = mt.Module()
    module.axis = mt.function(axis, input_signature=[mt.TensorSpec([2, 3])])
    mt.saved_model.save(module, str(tmp_path))
    loaded = mt.saved_model.load(str(tmp_path))
    x = mt.constant(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    compiled = mt.function(lambda x: loaded.axis(x), jit_compile=True)
    np.testing.assert_array_equal(compiled(x).numpy(), axis(x).numpy())


# --- 5. overflow and registry errors ------------------------------------------------------

@MODES
def test_a_compiled_int8_assign_add_that_overflows_raises(jit):
    v = mt.Variable(np.int8(120), name="count")
    f = mt.function(lambda: v.assign_add(np.int8(5), read_value=False), jit_compile=jit)
    f()
    with pytest.raises(ValueError, match="'count:0' .*int8.*130 is out of range"):
        f()
    assert v.numpy() == 125


def test_an_eager_scalar_integer_variable_that_overflows_raises():
    v = mt.Variable(np.int32(2**31 - 1), name="big")
    with pytest.raises(ValueError, match="'big:0' .*int32.*2147483648 is out of range"):
        v.assign_add(1)
    assert v.numpy() == 2**31 - 1


def test_no_gradient_of_an_op_type_with_a_gradient_raises_key_error():
    with pytest.raises(KeyError, match="Registering two gradient with name 'Mul'"):
        mt.no_gradient("Mul")
    x = mt.constant(3.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert float(tape.gradient(y, x)) == 6.0   # the built-in gradient stays


@pytest.mark.parametrize("op_type", [5, None])
def test_not_differentiable_needs_a_string(op_type):
    with pytest.raises(TypeError, match="op_type must be a string"):
        mt.NotDifferentiable(op_type)
    with pytest.raises(TypeError, match="op_type must be a string"):
        mt.no_gradient(op_type)


# --- 6. crashes where TensorFlow works --------------------------------------------------

TWO_ANY = [mt.TensorSpec([None]), mt.TensorSpec([None])]


@MODES
def test_unknown_sizes_that_the_ops_need_equal_may_be_equal(jit):
    add = mt.function(lambda a, b: a + b, input_signature=TWO_ANY, jit_compile=jit)
    np.testing.assert_array_equal(add(mt.ones([3]), mt.ones([3])).numpy(), [2, 2, 2])
    np.testing.assert_array_equal(add(mt.ones([1]), mt.ones([2])).numpy(), [2, 2])
    np.testing.assert_array_equal(add(mt.ones([5]), mt.ones([5])).numpy(), [2] * 5)
    with pytest.raises(ValueError, match="add: shapes"):
        add(mt.ones([2]), mt.ones([3]))
    square = mt.function(lambda a: a @ a, input_signature=[mt.TensorSpec([None, None])],
                         jit_compile=jit)
    np.testing.assert_array_equal(square(mt.ones([3, 3])).numpy(), np.full((3, 3), 3.0))
    matvec = mt.function(lambda a, b: mt.einsum("ij,j->i", a, b), jit_compile=jit,
                         input_signature=[mt.TensorSpec([None, None]), mt.TensorSpec([None])])
    np.testing.assert_array_equal(matvec(mt.ones([2, 3]), mt.ones([3])).numpy(), [3, 3])


@MODES
def test_max_min_and_softmax_over_an_empty_axis(jit):
    x = mt.zeros([0, 3])
    f = mt.function(lambda x: (mt.reduce_max(x, axis=0), mt.reduce_min(x, axis=0)),
                    jit_compile=jit)
    hi, lo = f(x)
    np.testing.assert_array_equal(hi.numpy(), [-np.inf] * 3)   # TensorFlow's identity
    np.testing.assert_array_equal(lo.numpy(), [np.inf] * 3)
    ints = mt.function(lambda x: mt.reduce_max(x, axis=0), jit_compile=jit)
    np.testing.assert_array_equal(ints(mt.zeros([0, 2], mt.int32)).numpy(),
                                  [np.iinfo(np.int32).min] * 2)

    def gradient(x):
        with mt.GradientTape() as tape:
            tape.watch(x)
            ys = [mt.reduce_max(x, axis=0), mt.reduce_min(x, axis=0)]
        return tape.gradient(ys, x)
    assert mt.function(gradient, jit_compile=jit)(x).shape == (0, 3)
    softmax = mt.function(lambda x: mt.nn.softmax(x), jit_compile=jit)
    assert softmax(mt.zeros([3, 0])).shape == (3, 0)


@MODES
def test_pad_of_a_scalar_with_empty_paddings(jit):
    f = mt.function(lambda x: mt.pad(x, np.zeros((0, 2), np.int32)), jit_compile=jit)
    assert float(f(mt.constant(3.0))) == 3.0
    assert float(f(mt.constant(4.0))) == 4.0


@MODES
def test_an_input_signature_covers_star_args(jit):
    f = mt.function(lambda *a: a[0] + a[1], jit_compile=jit,
                    input_signature=[mt.TensorSpec([]), mt.TensorSpec([])])
    assert float(f(mt.constant(1.0), mt.constant(2.0))) == 3.0

    def g(x, *rest):
        return x + sum(rest)
    g = mt.function(g, input_signature=[mt.TensorSpec([]), mt.TensorSpec([])])
    assert float(g(mt.constant(1.0), mt.constant(2.0))) == 3.0
    with pytest.raises(TypeError, match="too many positional arguments"):
        f(mt.constant(1.0), mt.constant(2.0), mt.constant(3.0))


def test_tensor_spec_arguments_as_in_tensorflow():
    assert mt.TensorSpec(5).shape == (5,)                  # TensorFlow: shape [5]
    assert mt.TensorSpec((5,)).shape == (5,)
    with pytest.raises(TypeError, match="dtype"):
        mt.TensorSpec(None, None)                            # TensorFlow: TypeError
    f = mt.function(lambda s: s, input_signature=[mt.TensorSpec([], mt.string)])
    assert f(mt.constant("ab")).numpy() == "ab"
    assert f(mt.constant("abc")).numpy() == "abc"
    with pytest.raises(TypeError, match="expected a"):
        f(mt.constant(1.0))


def test_compiler_ir_needs_jit_compile_and_known_shapes():
    with pytest.raises(ValueError, match="jit_compile=True"):
        mt.function(lambda a: a * 2).experimental_get_compiler_ir(mt.constant(1.0))
    f = mt.function(lambda a: a * 2, jit_compile=True,
                    input_signature=[mt.TensorSpec([None])])
    with pytest.raises(ValueError, match="Only support static input shape"):
        f.experimental_get_compiler_ir(mt.TensorSpec([None]))
    assert "a * c0" in f.experimental_get_compiler_ir(mt.ones([3]))()


def test_retracing_warns_and_the_kept_traces_are_bounded():
    from minitape.functions.function import MAX_TRACES
    f = mt.function(lambda x: x * 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, MAX_TRACES + 20):
            f(mt.ones([n]))
    assert [str(w.message).split(" Tracing")[0] for w in caught] == [
        f"mt.function <lambda> has been traced {n} times." for n in (5, 10, 20, 40, 80)]
    assert len(f.concrete_functions()) == MAX_TRACES
    assert f(mt.ones([1])).shape == (1,)   # an evicted trace is made again
    g = mt.function(lambda x: x * 2, input_signature=[mt.TensorSpec([None])],
                    jit_compile=True)
    for n in range(1, MAX_TRACES + 20):
        g(mt.ones([n]))
    (trace,) = g.concrete_functions()
    assert len(trace._programs) == MAX_TRACES


# --- 7. clear errors ----------------------------------------------------------------------

@pytest.mark.parametrize("tangent", [mt.constant([1, 2]), mt.constant([1.0, 2.0], mt.float64)])
def test_a_tangent_of_the_wrong_dtype_names_the_accumulator_primal_and_dtypes(tangent):
    x = mt.constant([1.0, 2.0])
    # TensorFlow: ValueError "Tensor conversion requested dtype float32 for Tensor with dtype ..."
    with pytest.raises(ValueError, match=f"ForwardAccumulator: tangent 0 has dtype "
                                         f"{tangent.dtype}, but its primal 0 .* float32"):
        mt.autodiff.ForwardAccumulator(x, tangent)
    v = mt.Variable(1.0, name="w")
    with pytest.raises(ValueError, match="primal 0 \\(variable 'w:0'\\)"):
        mt.autodiff.ForwardAccumulator(v, mt.constant(1.0, mt.float64))


@pytest.mark.parametrize("value, shown", [(1.0, "Tensor of shape ()"),
                                          ([1.0, 2.0], "Tensor of shape (2,)")])
def test_a_custom_gradient_returning_a_tensor_raises_at_the_call(value, shown):
    @mt.custom_gradient
    def doubled(x):
        return x * 2.0   # forgot the gradient function

    # TensorFlow: TypeError ("Cannot iterate over a scalar tensor", "unsupported callable")
    with pytest.raises(TypeError, match=f"custom_gradient doubled: .*tuple \\(y, grad_fn\\)"
                                        f".*got a {re.escape(shown)}"):
        doubled(mt.constant(value))


def test_ragged_paddings_and_too_many_dimensions_name_the_op():
    with pytest.raises(ValueError, match=r"pad: paddings must be 2 pairs .*\[\[1, 1\], \[1\]\]"):
        mt.pad(mt.ones([2, 2]), [[1, 1], [1]])
    with pytest.raises(ValueError, match="ones: shape has 65 dimensions"):
        mt.ones([1] * 65)


def test_compiled_elementwise_lines_compute_what_the_op_computes(monkeypatch):
    """A compiled line is the op's declared line, or, where its declaration
    gives none, a call of the op's own NumPy function (one op, one answer
    everywhere)."""
    x = mt.constant([4.0, 9.0])
    cube = mt.function(lambda x: x ** 3.0, jit_compile=True)
    assert "pow = x ** c0" in cube.experimental_get_compiler_ir(x)()   # C's pow
    f = mt.function(lambda x: x ** 0.5, jit_compile=True)               # NumPy: sqrt
    assert "np.where((x == -np.inf) & (c0 == 0.5), -x, x ** c0)" in \
        f.experimental_get_compiler_ir(x)()
    assert float(f(mt.constant([-np.inf, 4.0]))[0]) == np.inf

    def power(a, b):
        return np.full(np.broadcast_shapes(np.shape(a), np.shape(b)), 7.0, np.result_type(a, b))
    from minitape.ops.declaration import DECLARED
    monkeypatch.setattr(DECLARED["Pow"], "line", None)
    monkeypatch.setattr(DECLARED["Pow"], "forward", power)
    g = mt.function(lambda x: x ** 0.5, jit_compile=True)
    assert "pow = power(x, c0)" in g.experimental_get_compiler_ir(x)()
    np.testing.assert_array_equal(g(x).numpy(), [7.0, 7.0])


def test_a_where_on_a_constant_condition_is_one_of_its_branches():
    @mt.function(jit_compile=True)
    def f(x):
        keep = mt.where(mt.constant([True, True]), x * 2.0, x * 3.0)
        drop = mt.where(mt.constant([False, False]), x * 5.0, x * 7.0)
        return keep + drop

    x = mt.constant([1.0, 2.0])
    np.testing.assert_array_equal(f(x).numpy(), [9.0, 18.0])
    source = f.experimental_get_compiler_ir(x)()
    assert "np.where" not in source and "5.0" not in source and "3.0" not in source


def test_a_concrete_function_traced_for_zero_refuses_negative_zero():
    """pad's constant_values is read as a Python value, so the trace holds for
    0.0 only; -0.0 is another value (1 / x tells them apart) and the concrete
    function must not answer for it with the padding of 0.0."""
    def body(x, c):
        return mt.pad(x, [[1, 1]], constant_values=c)

    f = mt.function(body)
    x = mt.constant([1.0, 2.0])
    concrete = f.get_concrete_function(x, mt.constant(0.0))
    with pytest.raises(ValueError, match="was traced for the value"):
        concrete(x, mt.constant(-0.0))
    assert np.signbit(f(x, mt.constant(-0.0)).numpy()[0])  # the function traces again


def _branch_on_size(x):
    if x.shape[0] > 5:  # a Python decision on an unknown size
        return x * 2.0
    return x * 3.0


def _odd_or_even(x):
    return x * (1.0 if x.shape[0] % 2 else -1.0)


def _squeezed_sum(x):
    return mt.reduce_sum(mt.squeeze(x), axis=0)


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("body, shape, spec", [
    (_branch_on_size, (2,), [None]), (_branch_on_size, (8,), [None]),
    (_odd_or_even, (2,), [None]), (_odd_or_even, (3,), [None]),
    (_squeezed_sum, (1, 3), [None, None]), (_squeezed_sum, (4, 3), [None, None])])
def test_python_decisions_on_an_unknown_size_hold_for_the_calls_size(body, shape, spec, jit):
    """Traced with sizes 13 and 27, these functions take one path both times;
    at 1 or 2 they take the other. A polymorphic trace would answer for every
    size with the first path (squeeze() of (1, 3) summed over axis 0 gave
    [1, 2, 3] where eager and TensorFlow give 6)."""
    f = mt.function(body, input_signature=[mt.TensorSpec(spec, mt.float32)], jit_compile=jit)
    x = mt.constant(np.arange(1, 1 + np.prod(shape), dtype=np.float32).reshape(shape))
    np.testing.assert_array_equal(f(x).numpy(), body(x).numpy())


@pytest.mark.parametrize("jit", [False, True])
def test_a_variable_passed_as_an_argument_is_the_variable_itself(jit):
    """TensorFlow passes a variable argument by reference: the function may
    assign it, and reads its value at each call (TensorFlow 2.21: [4, 6], and
    v becomes [2, 3]). minitape had turned it into a tensor of its value."""
    v = mt.Variable([1.0, 2.0])

    @mt.function(jit_compile=jit)
    def step(var):
        var.assign_add([1.0, 1.0])
        return var * 2.0

    np.testing.assert_array_equal(step(v).numpy(), [4.0, 6.0])
    np.testing.assert_array_equal(v.numpy(), [2.0, 3.0])
    w = mt.Variable([10.0, 10.0])  # another variable: its own trace, its own value
    np.testing.assert_array_equal(step(w).numpy(), [22.0, 22.0])
    np.testing.assert_array_equal(v.numpy(), [2.0, 3.0])
    with mt.GradientTape() as tape:
        y = mt.reduce_sum(step(v))
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [2.0, 2.0])
