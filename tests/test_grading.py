"""minitape.grading's layers, each on its own, and the processes they make up.

- restricted: what an answer may write (one message per refusal) and what its
  rewritten code can reach at run time, with no audit hook installed;
- audit: the hook alone, in a process of its own, against answer code that is
  neither checked nor rewritten and has every builtin;
- values: only exact plain types leave the answer's process, bit for bit;
- processes and runner: a one-cell exercise graded for real, a report an
  answer forges, the limits.
Exercises of the course: tests/test_exercise_shortcuts.py.
"""
import json
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import minitape as mt
from minitape.grading import cells, restricted, runner, values
from minitape.grading.spies import Spy, watch

# --- cells ----------------------------------------------------------------------------

CHECK = """# inputs: a number
x = 3.0
### BEGIN HIDDEN TESTS
hidden = 4.0
### END HIDDEN TESTS
# run: your function on it
got = {"y": double(x)}
# judge: twice x
assert got["y"] == 6.0, f"double(3.0) gave {got['y']}"
print("ok")
"""


def _notebook(solution, check=CHECK, context=None, tag="ex1-context"):
    code = []
    if context is not None:
        code.append({"cell_type": "code", "metadata": {"tags": [tag]}, "source": context})
    code.append({"cell_type": "code", "source": solution, "metadata": {"nbgrader": {
        "solution": True, "grade": False, "grade_id": "ex1-solution"}}})
    code.append({"cell_type": "code", "source": check, "metadata": {"nbgrader": {
        "solution": False, "grade": True, "grade_id": "ex1-check", "points": 2}}})
    return {"cells": code}


def test_a_check_cell_splits_into_its_three_parts():
    parts = cells.split_parts(CHECK)
    assert list(parts) == ["inputs", "run", "judge"]
    assert parts["inputs"].first_line == 1 and "hidden = 4.0" in parts["inputs"].text
    assert parts["run"].first_line == 6 and parts["judge"].first_line == 8
    assert "".join(p.text for p in parts.values()) == CHECK


@pytest.mark.parametrize("text, complaint", [
    ("x = 1\n# inputs: a\n# run: b\n# judge: c\n", "starts with a line '# inputs"),
    ("# inputs: a\n# judge: c\n# run: b\n", "in that order"),
    ("# inputs: a\n# run: b\n", "one '# judge"),
    ("# inputs: a\n### BEGIN HIDDEN TESTS\n# run: b\n### END HIDDEN TESTS\n# judge: c\n",
     "inside hidden tests"),
])
def test_a_check_cell_in_another_form_is_refused(text, complaint):
    with pytest.raises(cells.NotebookError, match=complaint.replace("(", r"\(")):
        cells.split_parts(text, "ex1-check")


def test_exercises_take_context_cells_by_tag_prefix_and_exports_from_the_instructor():
    nb = _notebook("def double(x):\n    return 2 * x\nHELPER = 1\n", context="import math\n",
                   tag="ex1-context")
    nb["cells"].insert(0, {"cell_type": "code", "metadata": {"tags": ["ex2-context"]},
                           "source": "unrelated = 1\n"})
    (exercise,) = cells.exercises(nb)
    assert [s[0] for s in exercise.steps] == ["context", "answer"]
    assert exercise.steps[0][2] == "import math\n"
    assert exercise.exports == {"ex1-solution": ["double", "HELPER"]}
    assert exercise.points == 2.0


# --- restricted: what an answer may write ----------------------------------------------

@pytest.mark.parametrize("source, complaint", [
    ("x = (1).__class__", "'.__class__'"),
    ("f = lambda: 0\ng = f.__globals__", "'.__globals__'"),
    ("x = y._value", "'._value'"),
    ("_secret = 1", "'_secret' starts with an underscore"),
    ("def f(__x): pass", "'__x'"),
    ("g = getattr", "'getattr' is not available"),
    ("v = vars()", "'vars' is not available"),
    ("exec('1')", "'exec' is not available"),
    ("c = compile('1', 'x', 'eval')", "'compile' is not available"),
    ("t = type(1)", "'type' is not available"),
    ("f = open('x')", "'open' is not available"),
    ("import os", "'import os'"),
    ("import numpy.ctypeslib", "'import numpy.ctypeslib'"),
    ("from minitape import registry as r\nimport gc", "'import gc'"),
    ("from . import x", "'from . import"),
    ("from numpy import *", "'import *'"),
    ("a.b, c = 1, 2", "one attribute per assignment"),
    ("for a.b in []: pass", "one attribute per assignment"),
    ("del a.b", "may not delete attributes"),
    ("g = (lambda: (yield))().gi_frame", "reads frames"),
    ("class A(metaclass=type): pass", "may not pass keywords"),
    ("class A:\n    def __getattr__(self, n): pass", "'__getattr__'"),
    ("async def f(): pass", "'async def'"),
    ("match x:\n    case _: pass", "'match'"),
    ("global __builtins__", "'__builtins__'"),
    ("def f(:", "invalid syntax"),
])
def test_the_static_check_refuses_with_a_message(source, complaint):
    with pytest.raises(restricted.Refused) as refused:
        restricted.check(source)
    assert complaint in str(refused.value) and "line " in str(refused.value)


def test_the_static_check_lets_ordinary_answers_through():
    restricted.check(textwrap.dedent("""
        import numpy as np
        import minitape as mt
        from collections import defaultdict
        from minitape.autodiff import ForwardAccumulator

        class Model(mt.Module):
            def __init__(self):
                super().__init__()
                self.scale = mt.Variable(3.0)

            def __call__(self, x):
                return self.scale * x

        def f(values, *args, **kwargs):
            for _ in range(3):
                values = [v * 2 for v in values]
            total = 0
            total += sum(values)
            return f"{total:.3f}", {k: v for k, v in enumerate(values)}
        """))


def _run(source, classes=(), **names):
    """Run `source` as an answer (checked, rewritten, restricted builtins), no hook."""
    guard = restricted.Guard(classes)
    namespace = {"__builtins__": guard.builtins_for(), "__name__": "answer",
                 "np": np, "mt": mt, **names}
    exec(restricted.compile_answer(source, "<answer test>"), namespace)
    return namespace, guard


def test_rewritten_answers_read_write_and_augment_attributes_as_python_does():
    namespace, guard = _run(textwrap.dedent("""
        class Box:
            def __init__(self):
                self.n = 1
        b = Box()
        b.n += 4
        b.m = c = 7
        shape = np.zeros((2, 3)).shape
        text = "{} and {:.1f}".format(b.n, 2.25)
        value = float(mt.constant(2.0) * 3.0)
        """))
    assert (namespace["b"].n, namespace["b"].m, namespace["c"]) == (5, 7, 7)
    assert namespace["shape"] == (2, 3) and namespace["text"] == "5 and 2.2"
    assert namespace["value"] == 6.0 and guard.problems == []


@pytest.mark.parametrize("source, complaint", [
    ("m = np.core", "module numpy.core"),
    ("m = np.lib.npyio", "module numpy.lib"),
    ("m = mt.registry", "module minitape.core.registry"),
    ("m = mt.test.warnings", "module warnings"),
    ("m = mt.test.nest", "module minitape.nest"),
    ("m = np.ctypeslib", "module numpy.ctypeslib"),
    ("mt.GradientTape.gradient = None", "of GradientTape"),
    ("np.testing.assert_allclose = None", "of numpy.testing"),
    ("mt.constant(1.0).extra = 1", "not on a Tensor"),
    ("np.sin.extra = 1", "not on a ufunc"),
    ("leak = '{0.real}'.format(1.0)", "reads attributes or items"),
    ("leak = str.format('{0[0]}', [1])", "reads attributes or items"),
])
def test_the_guard_refuses_at_run_time(source, complaint):
    with pytest.raises(PermissionError, match=complaint):
        _run(source)


def test_the_guard_remembers_a_refusal_the_answer_caught():
    _, guard = _run("try:\n    m = np.core\nexcept Exception:\n    pass\n")
    assert guard.problems and "numpy.core" in guard.problems[0]


def test_the_guard_lets_the_notebooks_classes_be_changed():
    class Notebooks:
        pass
    thing = Notebooks()
    _run("thing.value = 3\n", classes=[Notebooks], thing=thing)
    assert thing.value == 3
    with pytest.raises(PermissionError, match="not on a Notebooks"):
        _run("thing.value = 3\n", thing=thing)


# --- values ---------------------------------------------------------------------------

def test_plain_keeps_exact_types_and_reads_tensors_without_asking_them():
    x = {"a": [1, 2.5, True, None, "s"], "t": (np.float32(1.5), np.arange(3)),
         "tensor": mt.constant([1.0, 2.0]), "variable": mt.Variable(np.float64(3.0))}
    p = values.plain(x)
    assert p["tensor"].dtype == np.float32 and p["variable"].dtype == np.float64
    assert type(p["t"]) is tuple and type(p["t"][0]) is np.float32


@pytest.mark.parametrize("make", [
    lambda: type("Lying", (mt.Tensor,), {})(mt.constant(1.0)._value),
    lambda: type("Sub", (float,), {})(1.0),
    lambda: type("Sub", (dict,), {})(),
    lambda: type("Arr", (np.ndarray,), {})((2,)),
    lambda: type("Fake", (), {"__array__": lambda self: np.eye(2), "numpy": lambda s: 1})(),
    lambda: np.array([object()]),
    lambda: {1: 2},
    lambda: lambda: 0,
])
def test_plain_refuses_look_alikes_and_objects(make):
    with pytest.raises(TypeError):
        values.plain(make())


def test_encode_and_decode_keep_every_bit():
    x = {"floats": [0.1, -0.0, float("inf"), float("nan"), 1e-310],
         "ints": [0, -1, 2**70], "arrays": [np.arange(6, dtype=np.int16).reshape(2, 3),
                                            np.array([1 + 2j], np.complex64), np.zeros(0)],
         "scalar": np.float32(0.1), "tuple": (True, "é", None)}
    back = values.decode(values.encode(x))
    assert np.signbit(back["floats"][1]) and np.isnan(back["floats"][3])
    assert back["floats"][4] == 1e-310 and back["ints"][2] == 2**70
    assert back["arrays"][0].dtype == np.int16 and back["arrays"][0].shape == (2, 3)
    np.testing.assert_array_equal(back["arrays"][1], x["arrays"][1])
    assert type(back["scalar"]) is np.float32 and back["tuple"] == (True, "é", None)


@pytest.mark.parametrize("text", [
    '{"array": "|O", "shape": [1], "data": "AAAAAAAAAAA="}',
    '{"array": "<f8", "shape": [2], "data": "AAAAAAAAAAA="}',
    '{"pickle": "x"}', '[1, 2]', '{"dict": [[1, {"int": "1"}]]}'])
def test_decode_refuses_what_encode_never_writes(text):
    with pytest.raises((ValueError, TypeError)):
        values.decode(text)


# --- spies ----------------------------------------------------------------------------

def test_a_spy_records_calls_results_and_exactness_and_puts_the_method_back():
    original = mt.GradientTape.gradient
    x = mt.constant(2.0)
    f, f_calls = watch(lambda t: t * t)

    class Sub(mt.GradientTape):
        pass
    with Spy(mt.GradientTape, "gradient") as spy:
        for cls in (mt.GradientTape, Sub):
            with cls() as tape:
                tape.watch(x)
                y = f(x)
            g = tape.gradient(y, x)
    assert mt.GradientTape.gradient is original and "gradient" not in vars(Sub)
    assert [c.exact for c in spy.calls] == [True, False] and spy.calls[1].result is g
    assert spy.calls[0].argument(1, "target") is f_calls[0].result
    assert float(g) == 4.0


# --- the audit hook alone ---------------------------------------------------------------

HOOK_ALONE = """
import builtins, os, sys, json
sys.dont_write_bytecode = True  # as the grader's processes do: no .pyc written under the hook
sys.path.insert(0, {path!r})
from minitape.grading import audit
import minitape.compiling.compiler
hook = audit.Hook(os.path.realpath(os.getcwd()), audit.read_roots(), compilers={{"<string>"}})
sys.addaudithook(hook)
results = {{}}
attacks = json.loads({attacks!r})
hook.armed = True
for name, source in attacks.items():
    before = len(hook.problems)
    try:
        exec(compile(source, "<answer " + name + ">", "exec"), {{"__builtins__": builtins}})
        outcome = "ran"
    except PermissionError:
        outcome = "refused"
    except Exception as error:
        outcome = "error: " + type(error).__name__ + ": " + str(error)[:100]
    results[name] = [outcome, len(hook.problems) > before]
sys.stdout.write(json.dumps(results))
"""

# Each runs with every builtin and no rewriting: only the hook stands in the way.
HOOK_ATTACKS = {
    "read the course's source": "open('/etc/hostname').read()",
    "read a file by a relative path": "open('../' * 20 + 'etc/hostname').read()",
    "list a folder": "import os\nos.listdir('/')",
    "write outside the folder": "open('/tmp/written-by-an-answer', 'w')",
    "run a command": "import os\nos.system('true')",
    "start a subprocess": "import subprocess\nsubprocess.run(['true'])",
    "fork": "import os\nos.fork()",
    "open a socket": "import socket\nsocket.socket().connect(('127.0.0.1', 9))",
    "ctypes memory": "import ctypes\nctypes.string_at(id(1), 8)",
    "read frames": "import sys\nsys._getframe(1).f_locals",
    "read every thread's frame": "import sys\nsys._current_frames()",
    "set a tracer": "import sys\nsys.settrace(lambda *a: None)",
    "a traceback's frame": "try:\n    1 / 0\nexcept Exception as e:\n    e.__traceback__.tb_frame",
    "a generator's frame": "def g():\n    yield\ng().gi_frame",
    "a function's code": "(lambda: 0).__code__",
    "replace a function's code": "f = lambda: 0\nf.__code__ = (lambda: 1).__code__",
    "gc.get_referrers": "import gc\ngc.get_referrers(gc)",
    "gc.get_objects": "import gc\ngc.get_objects()",
    "compile code": "compile('1', 'x', 'eval')",
    "eval": "eval('1')",
    "typing's eval of a string annotation": (
        "import typing\ndef f(x: '1 + 1'): pass\ntyping.get_type_hints(f)"),
    "marshal.loads": "import marshal\nmarshal.loads(marshal.dumps(1))",
    "pickle's class lookup": "import pickle\npickle.loads(pickle.dumps(len))",
    "a new code object": "c = (lambda: 0).__code__.replace()",
    "a new thread": "import threading\nthreading.Thread(target=len, args=([],)).start()",
    "change an environment variable": "import os\nos.environ['X'] = '1'",
    "raise a limit": "import resource\nresource.setrlimit(resource.RLIMIT_CPU, (-1, -1))",
    "add another hook": "import sys\nsys.addaudithook(lambda *a: None)",
    "change an object's class": "import types\nm = types.ModuleType('m')\nm.__class__ = type('M', (types.ModuleType,), {})",
    "change directory": "import os\nos.chdir('/')",
}


def test_the_audit_hook_alone_refuses_every_action_and_remembers_it(tmp_path):
    script = HOOK_ALONE.format(path=runner._PACKAGE_PARENT, attacks=json.dumps(HOOK_ATTACKS))
    out = subprocess.run([sys.executable, "-I", "-c", script], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)
    # CPython swallows an Exception raised for sys.addaudithook, and adds no hook
    assert results.pop("add another hook") == ["ran", True]
    if sys.version_info < (3, 12):  # 3.11 raises no audit event for a new thread
        assert results.pop("a new thread") == ["ran", False]
    not_refused = {name: r for name, r in results.items() if r != ["refused", True]}
    assert not not_refused, not_refused


def test_the_audit_hook_lets_libraries_and_the_answers_folder_work(tmp_path):
    allowed = {"write and read in its own folder": (
                   "with open('mine.txt', 'w') as f:\n    f.write('x')\n"
                   "assert open('mine.txt').read() == 'x'"),
               "a compiled minitape function": (
                   "import minitape as mt\n"
                   "f = mt.function(lambda x: x * x, jit_compile=True)\n"
                   "assert float(f(mt.constant(3.0))) == 9.0"),
               "namedtuple": "import collections\ncollections.namedtuple('P', 'a b')(1, 2)",
               "numpy warns": "import numpy as np\nnp.array([1.0]) / 0"}
    script = HOOK_ALONE.format(path=runner._PACKAGE_PARENT, attacks=json.dumps(allowed))
    script = script.replace('compilers={"<string>"}', 'compilers={"<string>", '
                            "minitape.compiling.compiler.__file__, __import__('collections').__file__}")
    out = subprocess.run([sys.executable, "-I", "-c", script], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {name: ["ran", False] for name in allowed}


# --- processes and runner ---------------------------------------------------------------

LIMITS = runner.Limits(seconds=60, cpu_seconds=10, memory_bytes=2 * 2**30)


def _grade(solution, check=CHECK, limits=LIMITS):
    (grade,) = runner.grade_notebook(_notebook(solution, check), limits=limits)
    return grade


def test_a_right_answer_gets_the_points_and_a_wrong_one_the_judges_message():
    right = _grade("def double(x):\n    return 2 * x\n")
    assert right.passed and right.points == 2.0 and right.printed == "ok\n"
    wrong = _grade("def double(x):\n    return 5.0\n")
    assert not wrong.passed and wrong.points == 0.0
    assert "double(3.0) gave 5.0" in wrong.message and "judgement" in wrong.message
    blank = _grade("def double(x):\n    raise NotImplementedError()\n")
    assert blank.message.startswith("NotImplementedError") and "answer ex1-solution" in blank.message


def test_the_answer_process_never_sees_the_judge_part(monkeypatch):
    jobs, run = [], runner.run_process
    monkeypatch.setattr(runner, "run_process", lambda job, limits: jobs.append(job) or run(
        job, limits))
    grade = _grade("def double(x):\n    return 2 * x\n")
    answer_job, judge_job = jobs
    assert "double(3.0) gave" not in json.dumps(answer_job) and "judge" not in answer_job["parts"]
    assert "def double" not in json.dumps(judge_job) and "run" not in judge_job["parts"]
    assert grade.stages["judge"]["status"] == "passed"
    sneaky = CHECK.replace('got = {"y": double(x)}', 'got = {"y": double(x), "seen": '
                           '[k for k in globals() if not k.startswith("_")]}')
    grade = _grade("def double(x):\n    return 2 * x\n", sneaky)
    seen = values.decode(grade.stages["answer"]["got"])["seen"]
    assert "x" in seen and "hidden" in seen and "print" not in seen


@pytest.mark.parametrize("answer, complaint", [
    ("def double(x):\n    while True:\n        pass\n", "CPU time limit"),
    ("def double(x):\n    return np.ones(2**33)\n", "MemoryError"),
    ("def double(x):\n    return double(x)\n", "RecursionError"),
    ("def double(x):\n    return [[]] * 10**9\n", "MemoryError"),
    ("def double(x):\n    print('{\"mac\": \"0\", \"body\": \"{}\"}')\n    return 6.0\n", None),
])
def test_limits_and_a_report_printed_by_the_answer(answer, complaint):
    grade = _grade(answer, limits=runner.Limits(seconds=60, cpu_seconds=3))
    if complaint is None:  # the answer's own print is not the report
        assert grade.passed
    else:
        assert not grade.passed and complaint in grade.message, grade.message


def test_a_report_not_signed_with_the_key_is_refused():
    fake = json.dumps({"mac": "0" * 128, "body": json.dumps({"status": "ok", "got": "{}"})})
    report = runner._signed((fake + "\n").encode(), b"k" * 32)
    assert report["ename"] == "ForgedReport"
    assert runner._signed(b"two\nlines\n", b"k" * 32) is None


def test_the_grading_process_has_no_jupyter_and_an_empty_folder():
    check = CHECK.replace('got = {"y": double(x)}', 'import os, sys\ngot = {"y": double(x), '
                          '"jupyter": "IPython" in sys.modules, "folder": os.listdir(".")}')
    grade = _grade("def double(x):\n    return 2 * x\n", check)
    got = values.decode(grade.stages["answer"]["got"])
    assert got["jupyter"] is False and got["folder"] == []


def test_the_command_grades_a_notebook(tmp_path):
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(_notebook("def double(x):\n    return 2 * x\n")))
    out = subprocess.run([sys.executable, "-m", "minitape.grading", "check", str(path)],
                         capture_output=True, text=True, cwd=runner._PACKAGE_PARENT, timeout=120)
    assert out.returncode == 0 and "ex1-check 2/2 passed" in out.stdout, out.stdout + out.stderr
    answers = tmp_path / "student.ipynb"
    answers.write_text(json.dumps(_notebook("def double(x):\n    return x\n")))
    out = subprocess.run([sys.executable, "-m", "minitape.grading", "check", str(path),
                          "--answers", str(answers)], capture_output=True, text=True,
                         cwd=runner._PACKAGE_PARENT, timeout=120)
    assert out.returncode == 1 and "ex1-check 0/2 FAILED" in out.stdout


def test_nothing_else_in_minitape_imports_grading_and_only_autograde_imports_nbgrader():
    import pathlib
    root = pathlib.Path(mt.__file__).parent
    for path in root.rglob("*.py"):
        text = path.read_text()
        if "grading" not in path.parts:
            assert "grading" not in text.replace("upgrading", ""), path
        elif path.name != "autograde.py":
            assert "nbgrader" not in text.replace("nbgrader'", "").split('"""', 2)[-1] or \
                "import nbgrader" not in text, path
    assert isinstance(restricted, types.ModuleType)
