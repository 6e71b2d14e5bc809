"""Traced functions and variables used from several threads at once (issue 30).

TensorFlow's tracing never changes a variable, its assignments are atomic, and
a function traces (and XLA compiles) once for what one trace serves, whichever
thread calls first."""
import importlib
import sys
import threading

import numpy as np
import pytest

import minitape as mt

function_module = importlib.import_module("minitape.functions.function")  # (mt.function is the decorator)


@pytest.fixture
def switch_often():
    """Threads take turns every 10 µs instead of every 5 ms: races show at once."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(before)


def run_threads(*targets):
    errors = []

    def guarded(target):
        try:
            target()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(t,)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors


def test_assignments_from_two_threads_are_never_lost(switch_often):
    # TensorFlow's assign_add reads and writes under the variable's lock:
    # 2 x 5,000 additions give 10,000 (minitape lost about 40% of them).
    v = mt.Variable(mt.constant(0.0, dtype=mt.float64))
    w = mt.Variable(mt.constant(0.0, dtype=mt.float64))

    def add():
        for _ in range(5000):
            v.assign_add(1.0)
            w.assign_sub(1.0)

    run_threads(add, add)
    assert (float(v), float(w)) == (10000.0, -10000.0)


def test_tracing_never_changes_a_variable_another_thread_assigns():
    # One thread traces a function that adds 0 to v (get_concrete_function: a
    # trace only); while it traces, another thread adds 1. TensorFlow keeps
    # the 1 (minitape put v's value from before the trace back: 0).
    v = mt.Variable(0.0)

    def other_thread_adds_one():
        run_threads(lambda: v.assign_add(1.0))

    seen = []

    @mt.function
    def f(x):
        v.assign_add(0.0 * x)
        other_thread_adds_one()
        seen.append(v.read_value())  # the trace's own value: 0 + 0
        return x

    f.get_concrete_function(mt.constant(2.0))
    assert float(v) == 1.0 and [float(t) for t in seen] == [0.0]
    f(mt.constant(2.0))  # a call adds 0 again
    assert float(v) == 1.0


def test_a_trace_that_assigns_sees_its_own_values_and_leaves_the_variable():
    v = mt.Variable([1.0, 2.0])

    @mt.function
    def f(x):
        before = v.read_value()
        v.assign_add(x)
        middle = v.read_value()
        v.assign(middle * 10.0)
        return before, middle, v.read_value()

    f.get_concrete_function(mt.constant([1.0, 1.0]))
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])  # the trace assigned nothing
    before, middle, after = f(mt.constant([1.0, 1.0]))
    np.testing.assert_array_equal(before.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(middle.numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(after.numpy(), [20.0, 30.0])
    np.testing.assert_array_equal(v.numpy(), [20.0, 30.0])


def test_a_compiled_function_of_unknown_sizes_traces_and_compiles_once_per_shape(
        monkeypatch):
    # TensorFlow traces a jit_compile function with an input_signature of unknown
    # sizes once, whichever threads call it; here each shape also gets its one
    # program. A compilation that takes a while (as a first one does) let two
    # threads both compile, and both trace the signature's one trace.
    compiler = pytest.importorskip("minitape.compiling.compiler")
    made, traced = [], []
    compile_graph = compiler.compile_graph

    def slow_compile(*args, **kwargs):
        made.append(1)
        threading.Event().wait(0.02)  # the other thread runs meanwhile
        return compile_graph(*args, **kwargs)

    monkeypatch.setattr(compiler, "compile_graph", slow_compile)
    signature_traces = importlib.import_module("minitape.functions.signature_traces")
    trace = signature_traces._polymorphic_trace

    def slow_trace(fn):
        traced.append(1)
        threading.Event().wait(0.02)
        return trace(fn)

    monkeypatch.setattr(signature_traces, "_polymorphic_trace", slow_trace)

    @mt.function(jit_compile=True, input_signature=[mt.TensorSpec([None])])
    def f(x):
        return mt.reduce_sum(x * x)

    sizes = [3, 4, 5] * 4
    results = {}

    def calls(name):
        def run():
            if name == "b":
                f.get_concrete_function()
            results[name] = [float(f(mt.constant(np.ones(n, np.float32)))) for n in sizes]
        return run

    run_threads(calls("a"), calls("b"))
    assert results["a"] == results["b"] == [float(n) for n in sizes]
    assert len(traced) == 1 and f.experimental_get_tracing_count() == 1
    assert len(made) == 3  # one program per shape
