"""mt.saved_model: save and load functions, variables and custom gradients."""
import gc
import json
import os
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import minitape as mt
from minitape.core import registry
from minitape.saved_model import LoadError

pytestmark = pytest.mark.filterwarnings("ignore:save. Model.power")

# The guide's SavedModel cells, with `mt` written for `tf`.
GUIDE_DEFINITIONS = """
import minitape as mt

# Establish an identity operation, but clip during the gradient pass.
@mt.custom_gradient
def clip_gradients(y):
  def backward(dy):
    return mt.clip_by_norm(dy, 0.5)
  return y, backward

class MyModule(mt.Module):

  @mt.function(input_signature=[mt.TensorSpec(None)])
  def call_custom_grad(self, x):
    return clip_gradients(x)
"""

GUIDE_SAVE = """
model = MyModule()
mt.saved_model.save(
    model,
    'saved_model',
    options=mt.saved_model.SaveOptions(experimental_custom_gradients={flag}))
"""

GUIDE_LOAD = """
# The loaded gradients will be the same as the above example.
v = mt.Variable(2.0)
loaded = mt.saved_model.load('saved_model')
with mt.GradientTape() as t:
  output = loaded.call_custom_grad(v * v)
print(t.gradient(output, v))
"""

TWO = "mt.Tensor(2.0, shape=(), dtype=float32)"
LOOKUP = "LookupError: No gradient defined for operation 'IdentityN' (op type: IdentityN)"


def run_python(code, cwd):
    """Run `code` in a fresh Python process (nothing registered in this one
    exists there)."""
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


# --- the guide --------------------------------------------------------------------

def test_guide_cell_runs_as_written_and_prints_2(tmp_path):
    code = GUIDE_DEFINITIONS + GUIDE_SAVE.format(flag=True) + GUIDE_LOAD
    result = run_python(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == TWO


@pytest.mark.parametrize("flag", [True, False])
def test_same_process_gradient_with_and_without_saved_gradients(tmp_path, monkeypatch,
                                                                 capsys, flag):
    monkeypatch.chdir(tmp_path)
    exec(GUIDE_DEFINITIONS + GUIDE_SAVE.format(flag=flag) + GUIDE_LOAD, {})
    assert capsys.readouterr().out.strip() == TWO   # False: the live registry has it


@pytest.mark.parametrize("flag", [True, False])
def test_fresh_process_after_saving(tmp_path, flag):
    saved = run_python(GUIDE_DEFINITIONS + GUIDE_SAVE.format(flag=flag), tmp_path)
    assert saved.returncode == 0, saved.stderr
    document = json.loads((tmp_path / "saved_model" / "saved_model.json").read_text())
    assert bool(document["gradients"]) is flag
    # A fresh process that never defined clip_gradients loads the model.
    loaded = run_python(GUIDE_LOAD.replace("# The", "import minitape as mt\n# The"),
                        tmp_path)
    if flag:
        assert loaded.returncode == 0, loaded.stderr
        assert loaded.stdout.strip() == TWO
    else:
        assert loaded.returncode != 0
        assert loaded.stderr.strip().splitlines()[-1] == LOOKUP


def test_fresh_process_forward_works_without_saved_gradients(tmp_path):
    saved = run_python(GUIDE_DEFINITIONS + GUIDE_SAVE.format(flag=False), tmp_path)
    assert saved.returncode == 0, saved.stderr
    code = textwrap.dedent("""
        import minitape as mt
        loaded = mt.saved_model.load('saved_model')
        print(loaded.call_custom_grad(mt.constant(3.0)))
    """)
    result = run_python(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "mt.Tensor(3.0, shape=(), dtype=float32)"


# --- modules, variables, traces ------------------------------------------------------

class Model(mt.Module):
    def __init__(self):
        super().__init__()
        mt.random.set_seed(3)
        self.layers = [mt.layers.Dense(4, activation=mt.tanh), mt.layers.Dense(2)]
        self.scale = mt.Variable(3.0, name="scale")
        self.steps = mt.Variable(0, trainable=False, name="steps")
        for layer, n in zip(self.layers, (3, 4)):
            layer.build((None, n))
            layer.built = True

    @mt.function(input_signature=[mt.TensorSpec([None, 3])])
    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x * self.scale

    @mt.function
    def power(self, x, n=2, *, offset=0.0):
        return {"value": x ** n + offset, "n": n}


def test_module_round_trip(tmp_path):
    model = Model()
    x = mt.constant(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))
    model.power(mt.constant(2.0))
    model.power(mt.constant(2.0), 3, offset=1.0)
    mt.saved_model.save(model, tmp_path / "m")
    loaded = mt.saved_model.load(tmp_path / "m")

    assert [v.name for v in loaded.variables] == [v.name for v in model.variables]
    assert [v.trainable for v in loaded.variables] == [v.trainable for v in model.variables]
    for a, b in zip(loaded.variables, model.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert a is not b
    assert loaded.layers[1].kernel.shape == (4, 2)
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)

    def grads(m):
        with mt.GradientTape() as tape:
            y = mt.reduce_sum(m(x) ** 2)
        return tape.gradient(y, m.trainable_variables)
    for a, b in zip(grads(loaded), grads(model)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5)

    out = loaded.power(mt.constant(2.0), 3, offset=1.0)
    assert float(out["value"]) == 9.0 and int(out["n"]) == 3
    assert float(loaded.power(mt.constant(5.0))["value"]) == 25.0
    with pytest.raises(ValueError, match="no trace for these arguments"):
        loaded.power(mt.constant(5.0), 4)


def test_unknown_sizes_are_saved_polymorphic(tmp_path):
    model = Model()
    mt.saved_model.save(model, tmp_path / "m")
    document = json.loads((tmp_path / "m" / "saved_model.json").read_text())
    (graph,) = [g for g in document["graphs"].values() if g["dims"]]
    assert graph["inputs"][0]["shape"] == ["n0", 3]
    loaded = mt.saved_model.load(tmp_path / "m")
    for batch in (1, 7):
        x = mt.ones([batch, 3])
        np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="not compatible with the input_signature"):
        loaded(mt.ones([2, 4]))


def test_loaded_variables_are_referenced_not_copied(tmp_path):
    model = Model()
    mt.saved_model.save(model, tmp_path / "m")
    loaded = mt.saved_model.load(tmp_path / "m")
    x = mt.ones([1, 3])
    before = loaded(x).numpy()
    loaded.scale.assign(6.0)
    np.testing.assert_allclose(loaded(x).numpy(), 2 * before, rtol=1e-6)
    np.testing.assert_allclose(model(x).numpy(), before, rtol=1e-6)


def test_custom_gradient_with_variables_and_higher_order_after_loading(tmp_path):
    class Cube(mt.Module):
        def __init__(self):
            super().__init__()
            self.w = mt.Variable(3.0)

        @mt.function(input_signature=[mt.TensorSpec([])])
        def __call__(self, x):
            w = self.w

            @mt.custom_gradient
            def scaled_cube(x):
                def grad(dy, variables):
                    return dy * 3 * x * x * w, [dy * x ** 3]
                return x ** 3 * w, grad
            return scaled_cube(x)

    mt.saved_model.save(Cube(), tmp_path / "m")
    loaded = mt.saved_model.load(tmp_path / "m")
    x = mt.constant(2.0)
    with mt.GradientTape() as t2:
        t2.watch(x)
        with mt.GradientTape() as t1:
            t1.watch(x)
            y = loaded(x)
        gx, gw = t1.gradient(y, [x, loaded.w])
    assert (float(y), float(gx), float(gw)) == (24.0, 36.0, 8.0)
    assert float(t2.gradient(gx, x)) == 36.0


def test_assignments_run_in_loaded_functions(tmp_path):
    class Counter(mt.Module):
        def __init__(self):
            super().__init__()
            self.count = mt.Variable(0, trainable=False)

        @mt.function(input_signature=[mt.TensorSpec([])])
        def __call__(self, x):
            self.count.assign_add(1)
            return x * mt.cast(self.count, mt.float32)

    counter = Counter()
    counter(mt.constant(1.0))
    mt.saved_model.save(counter, tmp_path / "c")
    loaded = mt.saved_model.load(tmp_path / "c")
    assert int(loaded.count) == 1            # the dry run assigned nothing
    assert float(loaded(mt.constant(5.0))) == 10.0
    assert int(loaded.count) == 2 and int(counter.count) == 1


def test_a_loaded_model_can_be_saved_again(tmp_path):
    exec(GUIDE_DEFINITIONS, namespace := {})
    mt.saved_model.save(namespace["MyModule"](), tmp_path / "a")
    mt.saved_model.save(mt.saved_model.load(tmp_path / "a"), tmp_path / "b")
    gc.collect()  # the first loaded model is gone: "b" must carry the gradient itself
    document = json.loads((tmp_path / "b" / "saved_model.json").read_text())
    assert len(document["gradients"]) == 1
    loaded = mt.saved_model.load(tmp_path / "b")
    v = mt.Variable(2.0)
    with mt.GradientTape() as t:
        y = loaded.call_custom_grad(v * v)
    assert float(t.gradient(y, v)) == 2.0


def test_saving_a_function_directly(tmp_path):
    @mt.function(input_signature=[mt.TensorSpec([2])])
    def double(x):
        return 2.0 * x

    mt.saved_model.save(double, tmp_path / "f")
    loaded = mt.saved_model.load(tmp_path / "f")
    np.testing.assert_allclose(loaded(mt.constant([1.0, 2.0])).numpy(), [2.0, 4.0])


def test_untraced_function_without_signature_is_left_out(tmp_path):
    class M(mt.Module):
        @mt.function
        def f(self, x):
            return x

    with pytest.warns(UserWarning, match="never called"):
        mt.saved_model.save(M(), tmp_path / "m")
    assert not hasattr(mt.saved_model.load(tmp_path / "m"), "f")


# --- the files ------------------------------------------------------------------------

def test_files_are_plain_json_and_npz(tmp_path):
    model = Model()
    mt.saved_model.save(model, tmp_path / "m")
    assert sorted(os.listdir(tmp_path / "m")) == ["saved_model.json", "variables.npz"]
    document = json.loads((tmp_path / "m" / "saved_model.json").read_text())
    assert document["format"] == "minitape-saved-model" and document["format_version"] == 1
    assert [v["name"] for v in document["variables"]] == [v.name[:-2] for v in model.variables]
    with np.load(tmp_path / "m" / "variables.npz", allow_pickle=False) as npz:
        assert sorted(npz.files) == [f"v{i}" for i in range(len(model.variables))]
        np.testing.assert_array_equal(npz["v0"], model.layers[0].kernel.numpy())


def test_failed_save_leaves_the_old_model(tmp_path, monkeypatch):
    path = tmp_path / "m"
    exec(GUIDE_DEFINITIONS, namespace := {})
    mt.saved_model.save(namespace["MyModule"](), path)
    before = (path / "saved_model.json").read_bytes()

    def broken(*args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr(np, "savez", broken)
    with pytest.raises(OSError, match="disk full"):
        mt.saved_model.save(Model(), path)
    monkeypatch.undo()
    assert (path / "saved_model.json").read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["m"]   # no temporary directory left
    mt.saved_model.load(path)
    mt.saved_model.save(Model(), path)             # replacing a model works
    assert (path / "saved_model.json").read_bytes() != before
    assert sorted(os.listdir(tmp_path)) == ["m"]


def test_refuses_to_replace_other_directories(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="holds no minitape saved model"):
        mt.saved_model.save(Model(), tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"


# --- bad input: always LoadError, saying what and where ---------------------------------

@pytest.fixture
def saved(tmp_path):
    exec(GUIDE_DEFINITIONS, namespace := {})
    model = namespace["MyModule"]()
    model.w = mt.Variable([1.0, 2.0], name="w")
    mt.saved_model.save(model, tmp_path / "m")
    return tmp_path / "m"


def edit(path, change):
    file = path / "saved_model.json"
    document = json.loads(file.read_text())
    change(document)
    file.write_text(json.dumps(document))


def first_graph(document):
    return next(iter(document["graphs"].values()))


def backward_graph(document):
    return document["graphs"][next(iter(document["gradients"].values()))]


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(format_version=2), "format_version: version 2 is not supported"),
    (lambda d: d.update(format="other"), "format: expected 'minitape-saved-model'"),
    (lambda d: d.pop("graphs"), "missing field 'graphs'"),
    (lambda d: first_graph(d)["nodes"][0].update(op="os.system"),
     "nodes[0].op: unknown op type 'os.system'"),
    (lambda d: first_graph(d)["nodes"][0].update(inputs=["t7"]),
     "nodes[0].inputs[0]: t7 is not defined before this point"),
    (lambda d: backward_graph(d)["nodes"][1].update(inputs=["v5"]),
     "there are only 1 variables"),
    (lambda d: backward_graph(d)["nodes"][1]["outputs"][0].update(shape=[2]),
     "nodes[1]: op Sum on inputs [float32[]]: gives shape (), but the node declares (2,)"),
    (lambda d: backward_graph(d)["nodes"][4]["outputs"][0].update(dtype="float64"),
     "nodes[4]: op Sqrt on inputs [float32[]]: gives dtype float32, but the node declares "
     "float64"),
    (lambda d: backward_graph(d)["nodes"][0]["outputs"][0].update(dtype="float64"),
     "nodes[0]: op Mul on inputs [float32[], float32[]]: gives dtype float32"),
    (lambda d: backward_graph(d)["nodes"][0]["outputs"][0].update(dtype="object"),
     "unknown dtype 'object'"),
    (lambda d: backward_graph(d)["nodes"][0].update(attrs={"evil": "__import__('os')"}),
     "unexpected field 'evil'"),
    (lambda d: d["variables"][0].update(shape=[3]), "array v0: has shape (2,)"),
    (lambda d: d["variables"][0].update(shape=[1 << 40]), "out of range"),
    (lambda d: first_graph(d)["nodes"][0]["outputs"][0].update(dtype="float64"),
     "nodes[0]: op IdentityN on inputs [float32[]]: declares outputs [float64[any]] but its "
     "forward values are [float32[]]"),
    (lambda d: backward_graph(d).update(inputs=[{"shape": None, "dtype": "float64"}]),
     "nodes[0]: the gradient graph of CustomGradient-"),
    (lambda d: d["objects"][0]["attributes"].update(f={"function": 9}), "out of range"),
    (lambda d: d["functions"][0].update(traces=["nope"]), "names no saved graph"),
    (lambda d: first_graph(d)["nodes"][0]["attrs"].update(gradient="StridedSlice"),
     "'StridedSlice' is not a custom gradient key"),
])
def test_bad_documents_raise_load_error(saved, change, message):
    edit(saved, change)
    with pytest.raises(LoadError, match=message.replace("[", r"\[").replace("(", r"\(")
                       .replace(")", r"\)")):
        mt.saved_model.load(saved)


def test_missing_and_broken_files(saved, tmp_path):
    with pytest.raises(LoadError, match="nowhere: no saved model here: No such file"):
        mt.saved_model.load(tmp_path / "nowhere")
    (saved / "saved_model.json").write_text("{not json")
    with pytest.raises(LoadError, match="not valid JSON"):
        mt.saved_model.load(saved)


def test_npz_problems(saved):
    npz = saved / "variables.npz"
    npz.write_bytes(npz.read_bytes()[:-30])
    with pytest.raises(LoadError, match="variables.npz"):
        mt.saved_model.load(saved)
    os.remove(npz)
    with pytest.raises(LoadError, match="variables.npz"):
        mt.saved_model.load(saved)


def test_pickled_arrays_are_never_unpickled(saved, tmp_path):
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    document = json.loads((saved / "saved_model.json").read_text())
    arrays = {f"v{i}": np.array([Evil()], dtype=object)
              for i in range(len(document["variables"]))}
    arrays.update({f"c{i}": np.zeros(c["shape"], c["dtype"])
                   for i, c in enumerate(document["constants"]) if "value" not in c})
    np.savez(saved / "variables.npz", **arrays)   # np.savez pickles object arrays
    with zipfile.ZipFile(saved / "variables.npz") as z:
        assert len(z.namelist()) == len(arrays)
    with pytest.raises(LoadError, match="holds dtype object"):
        mt.saved_model.load(saved)
    assert not marker.exists()


def test_the_documented_example_is_what_save_writes(tmp_path, monkeypatch):
    import re
    monkeypatch.chdir(tmp_path)
    exec(GUIDE_DEFINITIONS + GUIDE_SAVE.format(flag=True), {})
    written = (tmp_path / "saved_model" / "saved_model.json").read_text()
    docs = os.path.join(os.path.dirname(__file__), "..", "minitape", "saved_model", "FORMAT.md")
    with open(docs) as f:
        example = f.read().split("```json\n")[1].split("```")[0]

    def key(text):
        return re.sub(r"CustomGradient-[0-9a-f]+-\d+", "KEY", text)
    assert key(written) == key(example)


def test_polymorphic_trace_with_a_custom_gradient(tmp_path):
    exec(GUIDE_DEFINITIONS, namespace := {})
    clip = namespace["clip_gradients"]

    class M(mt.Module):
        @mt.function(input_signature=[mt.TensorSpec([None, 2])])
        def __call__(self, x):
            return clip(mt.reduce_sum(x * x, axis=1))

    mt.saved_model.save(M(), tmp_path / "m")
    loaded = mt.saved_model.load(tmp_path / "m")
    (trace,) = loaded.__call__.concrete_functions()
    assert trace.polymorphic
    x = mt.constant([[3.0, 4.0], [0.0, 1.0], [1.0, 1.0]])
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = loaded(x)
    # The upstream ones(3) has norm sqrt(3), clipped to 0.5: each row gets
    # 0.5 / sqrt(3), times d(sum x^2)/dx = 2x.
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2 * x.numpy() * 0.5 / np.sqrt(3),
                               rtol=1e-6)


# --- memory: what a loaded model registers goes away with it ---------------------------------

def saved_gradient_keys(loaded):
    return [str(node.attrs["gradient"]) for c in loaded.call_custom_grad.concrete_functions()
            for node in c.graph.nodes if node.op == "IdentityN"]


def live_graphs():
    gc.collect()
    return sum(type(o).__name__ == "Graph" and type(o).__module__ == "minitape.graph"
               for o in gc.get_objects())


def test_dropped_loaded_models_leave_nothing_registered(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(GUIDE_DEFINITIONS + GUIDE_SAVE.format(flag=True), {})
    graphs_before = live_graphs()
    keys = []
    for _ in range(20):
        loaded = mt.saved_model.load("saved_model")
        keys += saved_gradient_keys(loaded)
        v = mt.Variable(2.0)
        with mt.GradientTape() as tape:
            output = loaded.call_custom_grad(v * v)
        assert float(tape.gradient(output, v)) == 2.0
    assert len(set(keys)) == 20 and all(registry.is_registered(k) for k in keys[-1:])
    del loaded, tape, output
    assert live_graphs() == graphs_before
    assert not any(registry.is_registered(k) for k in keys)


def test_a_tape_keeps_the_gradient_of_a_dropped_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(GUIDE_DEFINITIONS + GUIDE_SAVE.format(flag=True), {})
    v = mt.Variable(2.0)
    with mt.GradientTape() as tape:
        output = mt.saved_model.load("saved_model").call_custom_grad(v * v)
    gc.collect()   # the loaded object is gone; the recorded op holds its gradient key
    assert float(tape.gradient(output, v)) == 2.0


# --- TensorSpec(None): any shape, before and after saving ------------------------------------

ANY_SHAPE = """
import minitape as mt

class Squares(mt.Module):
    @mt.function(input_signature=[mt.TensorSpec(None)])
    def __call__(self, x):
        return mt.reduce_sum(x * x)
"""

ANY_SHAPE_CALLS = """
for shape in [(), (3,), (2, 2)]:
    x = mt.ones(shape) * 3.0
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = model(x)
    print(float(y), tape.gradient(y, x).numpy().tolist())
"""

ANY_SHAPE_OUTPUT = """9.0 6.0
27.0 [6.0, 6.0, 6.0]
36.0 [[6.0, 6.0], [6.0, 6.0]]
"""


def test_tensor_spec_none_accepts_any_shape_before_and_after_saving(tmp_path, monkeypatch,
                                                                    capsys):
    monkeypatch.chdir(tmp_path)
    namespace = {}
    exec(ANY_SHAPE + "model = Squares()\n" + ANY_SHAPE_CALLS, namespace)
    assert namespace["model"].__call__.experimental_get_tracing_count() == 1
    assert capsys.readouterr().out == ANY_SHAPE_OUTPUT
    mt.saved_model.save(namespace["model"], "m")
    document = json.loads((tmp_path / "m" / "saved_model.json").read_text())
    assert document["functions"][0]["input_signature"] == [{"shape": None,
                                                            "dtype": "float32"}]
    exec("model = mt.saved_model.load('m')\n" + ANY_SHAPE_CALLS, {"mt": mt})
    assert capsys.readouterr().out == ANY_SHAPE_OUTPUT
    result = run_python("import minitape as mt\nmodel = mt.saved_model.load('m')\n"
                        + ANY_SHAPE_CALLS, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ANY_SHAPE_OUTPUT
