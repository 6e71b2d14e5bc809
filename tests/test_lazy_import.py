"""`import minitape` loads the engine and the ops only: tracing, graphs, the
compiler, saved models, forward mode, the layers, the gradient checker and the
HTML views load when first used (issue 18: the
import should cost little more than NumPy's). No timing here (that is
benchmarks/run.py): each check runs in a fresh Python process, because this
one has long since imported everything."""
import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Loaded on first use, with everything only they import.
LAZY = ["minitape.functions.function", "minitape.functions.concrete", "minitape.functions.signature_traces",
        "minitape.functions.tracing", "minitape.functions.signatures", "minitape.graph",
        "minitape.compiling.compiler", "minitape.compiling.program", "minitape.saved_model", "minitape.saved_model.reader",
        "minitape.saved_model.writer", "minitape.inspection.display", "minitape.autodiff",
        "minitape.layers", "minitape.test", "minitape.math", "minitape.linalg", "minitape.nn",
        "minitape.random", "minitape.custom", "minitape.recipes", "minitape.specs"]
# Never loaded by `import minitape`: the notebooks' front-end packages, and what
# only the lazy modules need (mt.test's numpy.testing and unittest.mock, which
# bring unittest, asyncio and importlib.metadata along).
HEAVY = ["matplotlib", "ipywidgets", "IPython", "numpy.testing", "unittest", "asyncio"]
# Standard modules NumPy does not import and the engine does without (the
# thread state is threading.local, which is _thread._local).
UNUSED = ["threading", "string"]


def fresh(code):
    """Run `code` in a new Python process (from the checkout); its printed JSON."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def loaded(names):
    return f"[m for m in {names!r} if m in sys.modules]"


def test_import_minitape_loads_none_of_the_lazy_modules():
    out = fresh(f"import sys, json, minitape\nprint(json.dumps({loaded(LAZY + HEAVY)}))")
    assert out == []


def test_import_minitape_adds_no_standard_module_the_engine_does_without():
    """Beyond what `import numpy` loaded (which may change with NumPy)."""
    out = fresh(f"""
import sys, json, numpy
before = set(sys.modules)
import minitape
print(json.dumps([m for m in {UNUSED + HEAVY!r} if m in set(sys.modules) - before]))
""")
    assert out == []


def test_mt_function_is_the_decorator_and_loads_the_compiler_only_for_jit():
    out = fresh(f"""
import sys, json, minitape as mt
steps = []
@mt.function
def f(x):
    return x * x
steps.append([float(f(mt.constant(3.0))), {loaded(["minitape.compiling.compiler"])}])
g = mt.function(jit_compile=True)(lambda x: mt.sin(x))
steps.append([round(float(g(mt.constant(0.5))), 6), {loaded(["minitape.compiling.compiler"])}])
from minitape import function
steps.append([function is mt.function, callable(mt.function), "function" in dir(mt)])
print(json.dumps(steps))
""")
    assert out == [[9.0, []], [0.479426, ["minitape.compiling.compiler"]], [True, True, True]]


@pytest.mark.parametrize("first", [
    "import minitape.saved_model",               # what mt.saved_model does
    "from minitape.functions.function import MAX_TRACES",  # notebook 04 reads the module
    "import minitape.widgets.program",           # a widget built on mt.function
])
def test_importing_the_function_module_first_keeps_mt_function_the_decorator(first):
    """Python sets a package's attribute to each submodule it imports: the module
    of the decorator's name is minitape.functions.function, so mt.function stays
    the decorator whatever was imported first."""
    out = fresh(f"""
import json
{first}
import minitape as mt
@mt.function
def f(x):
    return 2 * x
print(json.dumps([type(mt.function).__name__, float(f(mt.constant(1.5)))]))
""")
    assert out == ["function", 3.0]


def test_saved_models_still_save_and_load(tmp_path):
    out = fresh(f"""
import json, minitape as mt
module = mt.Module()
module.v = mt.Variable(2.0)
module.f = mt.function(input_signature=[mt.TensorSpec(None)])(lambda x: x * module.v)
module.f(mt.constant(1.0))
mt.saved_model.save(module, {str(tmp_path / "model")!r},
                    options=mt.saved_model.SaveOptions(experimental_custom_gradients=True))
loaded = mt.saved_model.load({str(tmp_path / "model")!r})
print(json.dumps(float(loaded.f(mt.constant(4.0)))))
""")
    assert out == 8.0


def test_jupyter_views_load_display_on_first_use():
    """A tensor's and a tape's `_repr_html_` (and IPython's pretty text of a
    tape) import display.py the first time they are asked for."""
    out = fresh(f"""
import json, sys, minitape as mt
before = {loaded(["minitape.inspection.display"])}
x = mt.constant(3.0)
with mt.GradientTape() as tape:
    tape.watch(x)
    y = x * x
html = x._repr_html_()
from minitape.inspection.display import tape_html, tape_text, tensor_html

class Printer:
    def text(self, s):
        self.out = s

p = Printer()
tape._repr_pretty_(p, False)
print(json.dumps([before, html == tensor_html(x), tape._repr_html_() == tape_html(tape),
                  p.out == tape_text(tape), mt.display.tape_html is tape_html]))
""")
    assert out == [[], True, True, True, True]


def test_an_unknown_name_is_still_an_attribute_error():
    import minitape as mt
    with pytest.raises(AttributeError, match="no attribute 'no_such_op'"):
        mt.no_such_op


def test_lazy_names_work_and_are_listed():
    """`mt.Module`, `mt.layers`, `mt.math`, `mt.custom_gradient`, ... are the
    modules' own objects, whichever way they are reached, and dir(mt) lists them."""
    out = fresh("""
import json, minitape as mt
from minitape import Module
import minitape.layers
names = ["Module", "layers", "autodiff", "test", "function", "saved_model", "display", "math",
         "linalg", "nn", "random", "TensorSpec", "custom_gradient", "primitive", "no_gradient",
         "grad_pass_through", "recompute_grad", "custom", "recipes", "specs"]
print(json.dumps([Module is mt.layers.Module is mt.Module,
                  mt.autodiff.ForwardAccumulator.__module__, mt.test.check_gradients.__module__,
                  mt.layers.Dense(2).__class__.__name__, [n in dir(mt) for n in names],
                  mt.math.top_k is mt.nn.top_k, mt.linalg.det.__module__,
                  mt.custom_gradient.__module__, mt.TensorSpec.__module__]))
""")
    assert out == [True, "minitape.autodiff", "minitape.test", "Dense", [True] * 20, True,
                   "minitape.ops.solvers", "minitape.custom", "minitape.specs"]


def test_every_op_type_is_known_right_after_the_import():
    """Only whole modules with no op in them load lazily: every op family is
    loaded by `import minitape`, so in a fresh process, before mt.linalg,
    mt.math or any op was touched, the gradient registry, the JVP rules and
    the replay tables (graphs, saved models) already hold every built-in op
    type, and registering a built-in type again is TensorFlow's KeyError."""
    out = fresh("""
import json, minitape as mt
from minitape.core import registry
from minitape.ops.declaration import DECLARED

def tables():
    return [sorted(registry._rules), sorted(registry._jvp_rules), sorted(DECLARED),
            sorted(t for t, d in DECLARED.items() if d.shape is not None)]

first = tables()
refused = []
for declare in (mt.NotDifferentiable, lambda t: mt.RegisterGradient(t)(lambda op, g: g),
                mt.no_gradient):
    for op_type in ("Qr", "Lgamma", "MatrixDeterminant", "Erf"):
        try:
            declare(op_type)
        except KeyError:
            refused.append(op_type)
import minitape.functions.function, minitape.compiling.compiler, minitape.saved_model, minitape.inspection.display
import minitape.layers, minitape.autodiff, minitape.test, minitape.math, minitape.linalg
import minitape.nn, minitape.custom, minitape.recipes, minitape.inspection.stepping, minitape.inspection.viz
from minitape.graph import OPS
print(json.dumps([first == tables(), [t in first[0] for t in ("Qr", "ArgSort", "Erf")],
                  refused, sorted(set(DECLARED) - set(OPS)), len(first[0])]))
""")
    same, known, refused, not_replayable, n_rules = out
    assert same and known == [True, True, True] and n_rules > 100
    assert refused == ["Qr", "Lgamma", "MatrixDeterminant", "Erf"] * 3
    assert not_replayable == []
