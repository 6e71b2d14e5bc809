"""mt.function(jit_compile=True): the compiled program agrees with eager
execution for every op (values, first and second derivatives, vectorised
Jacobians), stays differentiable under an outer tape, and cannot be made to
run code by the attributes of a graph."""
import ast
import importlib
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitape as mt
from minitape.compiling.compiler import HELPERS, _helper_home, _one_number, compile_graph, identifier
from minitape.graph import Graph, Node, Ref
from minitape.compiling.jacobian_seeds import identity_stack, seed_product
from minitape.specs import TensorSpec
from test_ops_gradients import ALL_CASES  # the gradient tests' op table, one row per op call


def compiled(fn):
    return mt.function(fn, jit_compile=True)


def traceable(fn, xs):
    """Ops made with mt.primitive cannot be traced (see functions/function.py)."""
    try:
        mt.function(fn)(*xs)
    except NotImplementedError:
        pytest.skip("mt.primitive ops are not traced")


def assert_same(a, b):
    a, b = mt.nest.flatten(a), mt.nest.flatten(b)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x is None) == (y is None)
        if x is not None:
            assert x.shape == y.shape and x.dtype == y.dtype
            np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-10, atol=1e-12)


def unexplained_names(source):
    """The names a program reads that are not its parameters, not values its
    lines make, and not listed in its header comments (`# c0 = 3.0 (float32)`,
    `# np = numpy, sigmoid = minitape.ops.activations._sigmoid`)."""
    fn = ast.parse(source).body[0]
    read = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    made = {a.arg for a in fn.args.args} | {
        n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    comments = [line.strip()[2:] for line in source.splitlines() if line.strip().startswith("#")]
    listed = {m for text in comments for m in re.findall(r"(?:^|, )(\w+)(?: =|:)", text)}
    return read - made - listed


def header_homes(source):
    """name -> the path a program's header comments give it (`np = numpy`,
    `moved = minitape.compiling.zero_times_inf.moved`, `c3 = minitape.ops... (the
    op's NumPy function)`)."""
    comments = [line.strip()[2:] for line in source.splitlines() if line.strip().startswith("#")]
    return {name: home for text in comments
            for name, home in re.findall(r"(\w+) = (numpy|minitape(?:\.\w+)+)", text)}


def imported(home):
    """What a dotted path names, imported as a reader would: its module, then the name."""
    module, _, name = home.rpartition(".")
    return importlib.import_module(home) if not module else getattr(
        importlib.import_module(module), name)


def test_every_name_a_program_header_binds_can_be_imported():
    """The header names where each helper lives, and that path imports the very
    function the program calls (it once named minitape.compiler.zero_where_unmoved,
    which no module defines)."""
    for name, fn in HELPERS.items():
        if name != "np":
            assert imported(_helper_home(name)) is fn, name

    def masked_hessian(x):  # notebook 11's: moved and zero_where_unmoved
        with mt.GradientTape() as outer:
            outer.watch(x)
            with mt.GradientTape() as tape:
                tape.watch(x)
                y = mt.reduce_sum(mt.sin(x) * mt.tanh(x) ** 2)
            g = tape.gradient(y, x)
        return outer.jacobian(g, x)

    kernel = mt.Variable(np.linspace(-1, 1, 6).reshape(2, 3).astype(np.float32))

    def dense_jacobian(x):  # check_finite and seed_product
        with mt.GradientTape() as tape:
            y = mt.nn.relu(x @ kernel)
        return tape.jacobian(y, kernel)

    def step(x):  # an assignment's helper, and an op's own NumPy function
        with mt.GradientTape() as tape:
            loss = mt.reduce_sum(mt.nn.softmax(x @ kernel))
        kernel.assign_sub(0.1 * tape.gradient(loss, kernel))
        return loss

    x = mt.constant(np.array([[0.5, -1.0], [2.0, 0.25]], np.float32))
    homes = {}
    for fn, args in ((masked_hessian, [mt.constant([0.5, -1.0, 2.0])]),
                     (dense_jacobian, [x]), (step, [x])):
        source = compiled(fn).experimental_get_compiler_ir(*args)()
        homes.update(header_homes(source))
    assert {"np", "moved", "zero_where_unmoved", "check_finite", "seed_product",
            "assign_sub"} <= set(homes), homes
    for name, home in homes.items():
        value = imported(home)
        assert value is (HELPERS[name] if name in HELPERS else value), (name, home)
        assert callable(value) or name == "np", (name, home)


def body_lines(source):
    return [line.strip() for line in source.splitlines()[1:]
            if line.strip() and not line.strip().startswith(("#", "return"))]


def value_and_derivatives(fn):
    """y, dy/dx, d2(sum w sin y)/dx0 dx, and the pfor Jacobian dy/dx, all computed
    with tapes inside the function (so the compiled program holds them)."""
    def run(*xs):
        with mt.GradientTape(persistent=True) as outer:
            outer.watch(xs)
            with mt.GradientTape(persistent=True) as inner:
                inner.watch(xs)
                y = fn(*xs)
                w = mt.constant(np.linspace(0.5, 1.5, y.size).reshape(y.shape).astype(y.dtype))
                loss = mt.reduce_sum(w * mt.sin(y))
            grads = inner.gradient(loss, list(xs))
            jac = inner.jacobian(y, list(xs), experimental_use_pfor=True)
        hess = outer.jacobian(grads[0], list(xs), experimental_use_pfor=True,
                              unconnected_gradients=mt.UnconnectedGradients.ZERO)
        return y, grads, jac, hess
    return run


@pytest.mark.parametrize("fn, args, check_kwargs", ALL_CASES)
def test_compiled_agrees_with_eager_for_every_op(fn, args, check_kwargs):
    xs = [mt.constant(a) for a in args]
    traceable(fn, xs)
    run = value_and_derivatives(fn)
    f = compiled(run)
    assert_same(f(*xs), run(*xs))
    source = f.experimental_get_compiler_ir(*xs)(stage="python")
    # (no Tensor objects: the word, not an op type's name such as TensorScatterAdd)
    assert not re.search(r"\bTensor\b", source) and "grad_" in source
    assert unexplained_names(source) == set()


@pytest.mark.parametrize("fn, args, check_kwargs", ALL_CASES[:40:3])
def test_calls_under_an_outer_tape_differentiate_to_second_order(fn, args, check_kwargs):
    xs = [mt.constant(a) for a in args]
    traceable(fn, xs)
    f = compiled(lambda *a: mt.reduce_sum(mt.sin(fn(*a))))

    def second(g):
        with mt.GradientTape() as t2:
            t2.watch(xs)
            with mt.GradientTape() as t1:
                t1.watch(xs)
                y = g(*xs)
            d = t1.gradient(y, xs[0])
            s = mt.reduce_sum(d * d)
        return y, d, t2.gradient(s, xs)

    f(*xs)  # compiled once, before the taped call
    assert_same(second(f), second(lambda *a: mt.reduce_sum(mt.sin(fn(*a)))))


def two_layer_model():
    mt.random.set_seed(0)
    layer1 = mt.layers.Dense(8, activation=mt.nn.relu)
    layer2 = mt.layers.Dense(3)
    x = mt.random.normal([7, 5])
    layer2(layer1(x))
    return x, layer1, layer2


def training_step(layer1, layer2):
    def step(x):
        with mt.GradientTape() as tape:
            loss = mt.reduce_mean(layer2(layer1(x)) ** 2)
        variables = layer1.trainable_variables + layer2.trainable_variables
        for v, g in zip(variables, tape.gradient(loss, variables)):
            v.assign_sub(0.1 * g)
        return loss
    return step


def test_a_training_step_with_the_tape_inside_matches_eager():
    x, a1, a2 = two_layer_model()
    _, b1, b2 = two_layer_model()
    eager, fast = training_step(a1, a2), compiled(training_step(b1, b2))
    for _ in range(3):
        np.testing.assert_allclose(fast(x).numpy(), eager(x).numpy(), rtol=1e-6)
    for va, vb in zip(a1.trainable_variables + a2.trainable_variables,
                      b1.trainable_variables + b2.trainable_variables):
        np.testing.assert_allclose(vb.numpy(), va.numpy(), rtol=1e-6, atol=1e-7)
    source = fast.experimental_get_compiler_ir(x)()
    assert "kernel = kernel_var._value" in source and "assign_sub(kernel_var, " in source


def test_the_source_names_inputs_variables_and_adjoints():
    @mt.function(jit_compile=True)
    def cube(x):
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = x ** 3
        return y, tape.gradient(y, x)

    x = mt.constant(2.0)
    y, dy = cube(x)
    assert (float(y), float(dy)) == (8.0, 12.0)
    source = cube.experimental_get_compiler_ir(x)(stage="python")
    assert source.startswith("def cube")
    assert body_lines(source) == ["pow = x ** c0  # Pow", "grad_pow = x ** c1  # Pow (adjoint)",
                                  "grad_mul = c0 * grad_pow  # Mul (adjoint)"]
    assert "# c0 = 3.0 (float32)" in source and "# c1 = 2.0 (float32)" in source
    graph = cube.experimental_get_compiler_ir(x)(stage="graph")
    assert "t1 = Pow(t0, const(3.0))\n" in graph and "Sub(const(3.0), const(1.0))  (adjoint)" in graph
    with pytest.raises(ValueError, match="stage"):
        cube.experimental_get_compiler_ir(x)(stage="hlo")


def test_batch_jacobian_and_forward_mode_inside_a_compiled_function():
    x, layer1, layer2 = two_layer_model()

    def both(x):
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = layer2(layer1(x))
        bj = tape.batch_jacobian(y, x)
        with mt.autodiff.ForwardAccumulator(x, mt.ones_like(x)) as acc:
            z = mt.tanh(layer1(x))
        return bj, acc.jvp(z)

    assert_same(compiled(both)(x), both(x))


def test_simplifications_drop_dead_and_identity_lines():
    @mt.function(jit_compile=True)
    def f(x):
        unused = mt.exp(x)  # noqa: F841  (dead: reaches no output)
        y = mt.identity(mt.reshape(x, x.shape))
        return y * (mt.constant(2.0) + mt.constant(3.0))  # folded to one constant

    x = mt.constant([1.0, 2.0])
    assert f(x).numpy().tolist() == [5.0, 10.0]
    body = [line for line in f.experimental_get_compiler_ir(x)().splitlines()[1:]
            if not line.strip().startswith("#")]
    assert body == ["    mul = x * c0  # Mul", "    return (mul,)"]


# --- security: attributes are values, never code --------------------------------------

PAYLOAD = "ij->i'), __import__('os').system('echo pwned'), ('"


def test_hostile_attributes_and_names_do_not_become_code():
    ran = []
    mt.hostile_flag = ran  # a payload that ran would append here
    evil = "x\n    mt.hostile_flag.append(1)  # '\"\"\""
    v = mt.Variable([[1.0, 2.0], [3.0, 4.0]], name=evil)
    graph = Graph(evil, [TensorSpec((2, 2))],
                  [Node("Einsum", evil, [Ref("t", 0), Ref("v", v)],
                        {"equation": PAYLOAD}, [TensorSpec((2,))]),
                   Node("Einsum", "ok", [Ref("t", 0), Ref("v", v)],
                        {"equation": "ij,ij->i"}, [TensorSpec((2,))])],
                  [Ref("t", 1), Ref("t", 2)])
    program = compile_graph(graph, [evil])
    for text in ("pwned", "__import__", "hostile_flag.append", "'", '"'):
        assert text not in program.source
    for line in program.source.splitlines():
        assert line.startswith(("def ", "    ")), line
    x = np.ones((2, 2), np.float32)
    with pytest.raises(ValueError):  # np.einsum refuses the "equation": nothing ran
        program([x])
    assert ran == []
    del mt.hostile_flag


@pytest.mark.parametrize("text, expected", [
    ("dense/kernel:0", "dense_kernel_0"), ("1x", "v_1x"), ("class", "class_"),
    ("__import__('os')", "import_os"),
    ("np", "np_"), ("", "v"), ("a\nb'c", "a_b_c")])
def test_identifiers_are_sanitised(text, expected):
    assert identifier(text) == expected


def test_a_loaded_model_can_be_compiled(tmp_path):
    class Model(mt.Module):
        def __init__(self):
            super().__init__()
            self.w = mt.Variable([1.0, -2.0, 0.5], name="w")

        @mt.function(input_signature=[mt.TensorSpec([3])])
        def f(self, x):
            return mt.reduce_sum(mt.tanh(x * self.w))

    model = Model()
    x = mt.constant([0.3, 0.2, -0.1])
    model.f(x)
    mt.saved_model.save(model, str(tmp_path / "m"))
    loaded = mt.saved_model.load(str(tmp_path / "m"))
    fast = mt.function(loaded.f, jit_compile=True)
    np.testing.assert_allclose(fast(x).numpy(), model.f(x).numpy(), rtol=1e-6)
    assert "np.tanh" in fast.experimental_get_compiler_ir(x)()


def test_stacks_times_large_matrices_are_folded_and_agree():
    rng = np.random.default_rng(3)
    big = mt.constant(rng.standard_normal((64, 70)))
    stack = mt.constant(rng.standard_normal((3, 70, 5)))
    rows = mt.constant(rng.standard_normal((3, 2, 64)))

    def f(big, stack, rows):
        return big @ stack, rows @ big

    fast = compiled(f)
    assert_same(fast(big, stack, rows), f(big, stack, rows))
    source = fast.experimental_get_compiler_ir(big, stack, rows)()
    assert "matmul_columns(big, stack)" in source and "matmul_rows(rows, big)" in source


def test_a_loaded_model_with_hostile_names_compiles_to_safe_code(tmp_path):
    import json

    class Model(mt.Module):
        def __init__(self):
            super().__init__()
            self.w = mt.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")

        @mt.function(input_signature=[mt.TensorSpec([2, 2])])
        def f(self, x):
            return mt.einsum("ij,ij->i", x, self.w)

    model = Model()
    mt.saved_model.save(model, str(tmp_path / "m"))
    path = tmp_path / "m" / "saved_model.json"
    doc = json.loads(path.read_text())
    hostile = "x\n    __import__('os').system('echo pwned')  # \"'"
    for graph in doc["graphs"].values():
        for node in graph["nodes"]:
            node["name"] = hostile
    for variable in doc["variables"]:
        variable["name"] = hostile
    path.write_text(json.dumps(doc))
    loaded = mt.saved_model.load(str(tmp_path / "m"))
    x = mt.constant([[1.0, 1.0], [2.0, 0.5]])
    fast = mt.function(loaded.f, jit_compile=True)
    np.testing.assert_allclose(fast(x).numpy(), model.f(x).numpy())
    source = fast.experimental_get_compiler_ir(x)()
    for text in ("__import__", "('os')", "'", '"'):
        assert text not in source
    for line in source.splitlines():
        assert line.startswith(("def ", "    ")), line


def test_a_variable_is_read_where_needed_and_again_after_an_assignment():
    v = mt.Variable(1.0, name="counter")

    @mt.function(jit_compile=True)
    def f(x):
        before = v * 1.5
        v.assign_add(x)
        return before, v * 2.0

    x = mt.constant(2.0)
    assert [float(t) for t in f(x)] == [1.5, 6.0] and float(v) == 3.0
    body = [line.strip() for line in f.experimental_get_compiler_ir(x)().splitlines()]
    reads = [line for line in body if line.endswith("# read variable")]
    assert reads == ["counter = counter_var._value  # read variable",
                     "counter_1 = counter_var._value  # read variable"]
    assert body.index(reads[0]) < body.index("assign_add(counter_var, x)  # AssignVariableOp") \
        < body.index(reads[1])


# --- names: where each line came from, and every name explained ------------------------

def test_lines_the_gradient_call_computed_are_adjoint_lines_whatever_they_read():
    """sin(x) * x: the backward walk computes cos(x), which reads only x; it is
    an adjoint line, and the lines without grad_ are the function's program."""
    def f(x):
        return mt.sin(x) * x

    def value_and_gradient(x):
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return y, tape.gradient(y, x)

    x = mt.constant([0.5, 1.5])
    source = compiled(value_and_gradient).experimental_get_compiler_ir(x)()
    assert "grad_cos = np.cos(x)  # Cos (adjoint)" in body_lines(source)
    forward = [line for line in body_lines(source) if not line.startswith("grad_")]
    assert forward == body_lines(compiled(f).experimental_get_compiler_ir(x)())


def test_a_training_steps_update_is_a_forward_line():
    """The update after the gradient call is the function's own computation."""
    x, layer1, layer2 = two_layer_model()
    source = compiled(training_step(layer1, layer2)).experimental_get_compiler_ir(x)()
    update = [line for line in body_lines(source) if line.endswith("# Mul")]
    assert update and all(not line.startswith("grad_") and "grad_" in line for line in update)
    assert unexplained_names(source) == set()


def test_tangent_lines_of_a_forward_accumulator_are_named_tangent():
    @mt.function(jit_compile=True)
    def jvp(x):
        with mt.autodiff.ForwardAccumulator(x, mt.ones_like(x)) as acc:
            y = mt.sin(x) * x
        return y, acc.jvp(y)

    x = mt.constant([0.5, 1.5])
    np.testing.assert_allclose(jvp(x)[1].numpy(), np.cos([0.5, 1.5]) * [0.5, 1.5]
                               + np.sin([0.5, 1.5]), rtol=1e-6)
    lines = body_lines(jvp.experimental_get_compiler_ir(x)())
    assert "tangent_cos = np.cos(x)  # Cos (tangent)" in lines
    assert [line for line in lines if not line.startswith("tangent_")] == \
        ["sin = np.sin(x)  # Sin", "mul = sin * x  # Mul"]


def test_the_header_lists_every_bound_value_and_shows_small_constants():
    v = mt.Variable([[1.0, 2.0], [3.0, 4.0]], name="dense/kernel:0")

    @mt.function(jit_compile=True)
    def f(x):
        y = mt.reduce_sum(mt.sigmoid(x @ v) * mt.constant([0.5, 2.0]), axis=1)
        return y, mt.reduce_mean(y) * mt.ones([3, 4]) + mt.constant(np.eye(3, 4, dtype=np.float32))

    source = f.experimental_get_compiler_ir(mt.constant([[1.0, 2.0]]))()
    assert unexplained_names(source) == set()
    assert "# kernel_var = the variable dense/kernel:0 (float32, shape (2, 2))" in source
    assert "[0.5, 2.0] (float32, shape (2,))" in source and "# axis = (1,)" in source
    assert "sigmoid = minitape.ops.activations._sigmoid" in source  # (the op's own NumPy function)
    graph = f.experimental_get_compiler_ir(mt.constant([[1.0, 2.0]]))(stage="graph")
    assert "const([0.5, 2.0])" in graph


def test_a_hostile_value_in_a_header_comment_is_not_shown():
    v = mt.Variable([1.0, 2.0], name="w'); print('pwned')\nprint('pwned')  #")

    @mt.function(jit_compile=True)
    def f(x):
        return x * v

    source = f.experimental_get_compiler_ir(mt.constant([3.0, 4.0]))()
    assert "(not shown)" in source and "print(" not in source and "'" not in source
    assert all(line.startswith(("def ", "    ")) for line in source.splitlines())
    assert unexplained_names(source) == set()


# --- speed-ups that keep every number ----------------------------------------------------

def test_scalar_constants_are_numpy_scalars_where_only_scalars_use_them():
    """A chain of scalar ops runs on NumPy scalars (several times faster than 0-d
    arrays); a constant that `**` uses stays a 0-d array (the ufunc's pow)."""
    @mt.function(jit_compile=True)
    def chain(x):
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(3):
                y = mt.sin(y * 1.0001)
        return tape.gradient(y, x), (x ** 3) * 2.5

    x = mt.constant(0.5)
    g, c = chain(x)
    want = 0.5
    d = 1.0
    for _ in range(3):
        u = np.float32(want) * np.float32(1.0001)
        d, want = d * np.cos(u) * np.float32(1.0001), np.sin(u)
    np.testing.assert_allclose(float(g), d, rtol=1e-6)
    assert float(c) == np.float32(0.5) ** np.float32(3) * np.float32(2.5)
    program = chain.get_concrete_function(x).program()
    values = program.fn.__globals__
    names = {line.split(" = ")[0].split()[1]: line for line in program.source.splitlines()
             if line.strip().startswith("# c")}
    for name, line in names.items():
        kind = type(values[name])
        assert (kind is np.ndarray) == (name in _pow_operands(program.source)), line


def _pow_operands(source):
    return {m for line in source.splitlines() if " ** " in line
            for m in re.findall(r"\bc\d+\b", line.split("  #")[0])}


def test_a_mask_applied_twice_is_applied_once_and_values_agree():
    """The ReLU Hessian masks twice: where(m, where(m, a, 0) * c, 0) is written
    as where(m, a * c, 0), which is the same number everywhere."""
    x, layer1, layer2 = two_layer_model()

    def hessian(x):
        with mt.GradientTape() as t2:
            with mt.GradientTape() as t1:
                loss = mt.reduce_mean(layer2(mt.nn.relu(layer1(x))) ** 2)
            g = t1.gradient(loss, layer1.kernel)
        return t2.jacobian(g, layer1.kernel)

    fast = compiled(hessian)
    np.testing.assert_array_equal(fast(x).numpy(), hessian(x).numpy())
    source = fast.experimental_get_compiler_ir(x)()
    wheres = [line for line in body_lines(source) if "np.where(" in line]
    masked = {}
    for line in wheres:
        target, rest = line.split(" = ", 1)
        masked[target] = rest.split("(", 1)[1].split(",")[0]
    for line in body_lines(source):  # no where feeds (through one op) a where of its mask
        target, rest = line.split(" = ", 1)
        if "np.where(" in rest:
            inner = [n for n in re.findall(r"\w+", rest.split("  #")[0]) if n in masked]
            assert all(masked[n] != masked[target] for n in inner[1:]), line
    assert unexplained_names(source) == set()


def _jacobian_of(kind):
    """The guide's Dense Jacobian d act(x @ K + b) / dK (act: none or relu),
    or the Hessian of mean(relu(x @ K + b) ** 2) with respect to K, as a
    function of x."""
    rng = np.random.default_rng(5)
    kernel, bias = mt.Variable(rng.standard_normal((5, 4))), mt.Variable(rng.standard_normal(4))

    def layer(x):
        y = x @ kernel + bias
        return y if kind == "dense" else mt.nn.relu(y)

    def jacobian(x):
        if kind != "hessian":
            with mt.GradientTape() as tape:
                y = layer(x)
            return tape.jacobian(y, kernel)
        with mt.GradientTape() as outer:
            with mt.GradientTape() as inner:
                loss = mt.reduce_mean(layer(x) ** 2)
            g = inner.gradient(loss, kernel)
        return outer.jacobian(g, kernel)
    return jacobian


@pytest.mark.parametrize("kind, line", [
    ("dense", "seed_product(x.T, n)"),                   # a @ E
    ("relu", "seed_product(x.T, n, grad_greater)"),      # a @ (E * mask)
    ("hessian", "seed_product(x, n)"),
])
def test_a_jacobians_one_hot_seed_times_a_checked_input_is_written_into_zeros(kind, line):
    """compiling/jacobian_seeds.py: the first matmul that meets a Jacobian's identity seed
    is a seed_product line (no matmul), with the matmul's numbers; an inf in x
    makes the check fail, and the program with the masks (which has no such
    line) gives eager's numbers: inf where the seed's 1 meets it, 0 where a
    plain matmul would give 0 * inf = NaN."""
    jacobian = _jacobian_of(kind)
    fast = compiled(jacobian)
    x = mt.constant(np.random.default_rng(4).standard_normal((3, 5)))
    source = fast.experimental_get_compiler_ir(x)()
    seeded = [text for text in source.splitlines() if "seed_product(" in text]
    assert len(seeded) == 1 and f"= {line}  # MatMul" in seeded[0], source
    np.testing.assert_array_equal(fast(x).numpy(), jacobian(x).numpy())
    assert fast(x).numpy().any()
    bad = mt.constant(np.where(np.arange(15).reshape(3, 5) == 7, np.inf, x.numpy()))
    want = jacobian(bad).numpy()
    assert np.isinf(want).any()
    np.testing.assert_array_equal(fast(bad).numpy(), want)
    masked = fast.get_concrete_function(x).program().masked
    assert masked is not None and "seed_product" not in masked.source


def test_a_seed_times_an_unchecked_value_stays_a_matmul():
    """A variable's value has no check_finite line of its own (an assignment
    could change it between two reads), so its product with a seed stays a
    matmul."""
    v = mt.Variable(np.arange(6.0).reshape(2, 3))
    k = mt.Variable(np.ones((3, 4)))

    def jacobian():
        with mt.GradientTape() as tape:
            y = v @ k
        return tape.jacobian(y, k)
    fast = compiled(jacobian)
    np.testing.assert_array_equal(fast().numpy(), jacobian().numpy())
    assert "seed_product" not in fast.experimental_get_compiler_ir()()


def test_a_jacobian_of_one_columns_seed_is_the_weights_transposed_laid_out_for_its_reader():
    """W6 with W an argument: d tanh(W x) / dx by forward mode meets the seed
    of x (64 one-hot columns of one entry each, n = 1) in W @ E, which is Wᵀ:
    no zeros, no copy (a view of W), and the ops after it keep its layout, so
    the Jacobian the program returns (its final transpose) is row-major, as
    `.numpy()` reads it. An inf in W fails the check: eager's numbers."""
    def w6(w, x):
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = mt.tanh(mt.reshape(w @ mt.reshape(x, (x.shape[0], 1)), (w.shape[0],)))
        return tape.jacobian(y, x)
    rng = np.random.default_rng(6)
    w = mt.constant(rng.standard_normal((300, 8)).astype(np.float32))
    x = mt.constant(rng.standard_normal(8).astype(np.float32))
    fast = compiled(w6)
    source = fast.experimental_get_compiler_ir(w, x)()
    assert "seed_product(w, n)" in source, source
    got = fast(w, x)
    assert got._value.flags["C_CONTIGUOUS"] and got.shape == (300, 8)
    np.testing.assert_array_equal(got.numpy(), w6(w, x).numpy())
    bad = w.numpy()
    bad[3, 5] = np.inf
    bad = mt.constant(bad)
    np.testing.assert_array_equal(fast(bad, x).numpy(), w6(bad, x).numpy())
    assert np.isnan(w6(bad, x).numpy()[3]).any()  # eager: inf * 0 along W's row


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(0, 3), st.integers(1, 3), st.integers(1, 4), st.integers(0, 2 ** 12))
def test_seed_product_gives_the_matmuls_numbers(i, m, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((i, m)).astype(np.float32)
    a[rng.random((i, m)) < 0.2] = 0.0
    mask = rng.random((m, n)) < 0.5
    seed_stack = np.eye(m * n, dtype=np.float32).reshape(m * n, m, n)
    assert identity_stack(seed_stack) == n
    for got, want in ((seed_product(a, n), a @ seed_stack),
                      (seed_product(a, n, mask), a @ (seed_stack * mask))):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_only_the_identity_reshaped_is_a_seed():
    assert identity_stack(np.eye(6).reshape(6, 2, 3)) == 3
    assert identity_stack(np.eye(6)[::-1].reshape(6, 2, 3)) is None   # one 1 each, reordered
    assert identity_stack(2 * np.eye(4).reshape(4, 2, 2)) is None
    assert identity_stack(np.eye(4).reshape(2, 2, 4)) is None
    assert identity_stack(np.zeros((0, 0, 3))) is None
    assert identity_stack(np.eye(4, dtype=int).reshape(4, 2, 2)) is None
    assert identity_stack(None) is None


def test_a_constant_of_one_repeated_number_is_written_as_that_number():
    """A mean's gradient is a constant array of 1 / n everywhere: against an
    operand of the output's shape, its one number gives the same values."""
    x = mt.constant(np.arange(6.0).reshape(2, 3) - 2.5)

    def f(x):
        with mt.GradientTape() as tape:
            tape.watch(x)
            loss = mt.reduce_mean(x ** 2)
        return tape.gradient(loss, x)
    fast = compiled(f)
    np.testing.assert_array_equal(fast(x).numpy(), f(x).numpy())
    source = fast.experimental_get_compiler_ir(x)()
    assert "# c0 = 0.3333333333333333 (float64)" in source, source  # 2 / n, one number
    assert _one_number(np.full((2, 2), np.nan)) and not _one_number(np.array([0.0, -0.0]))
    assert not _one_number(np.ones(1)) and not _one_number(np.array(2.0))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64])
@pytest.mark.parametrize("reduce", [mt.reduce_sum, mt.reduce_prod])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_integer_sums_and_products_keep_their_dtype_and_wrap_around(dtype, reduce, axis):
    """TensorFlow's integer Sum and Prod keep the input's dtype: the int8 sum of
    [[100, 100], [27, 1]] is -28 (228 wrapped around), not NumPy's int64 228."""
    x = mt.constant(np.array([[100, 100], [27, 1]], dtype))
    f = mt.function(lambda x: reduce(x, axis=axis) * 2, jit_compile=True)
    with np.errstate(over="ignore"):
        eager, compiled = reduce(x, axis=axis) * 2, f(x)
        expected = (getattr(np, "sum" if reduce is mt.reduce_sum else "prod")(
            x.numpy(), axis=axis, dtype=dtype) * dtype(2)).astype(dtype)
    assert compiled.dtype == eager.dtype == dtype
    np.testing.assert_array_equal(compiled.numpy(), expected)
    np.testing.assert_array_equal(eager.numpy(), expected)
