"""`mt.function`: calling traced Python functions.

The first call with new input shapes and dtypes (and Python values) traces
the Python function into a `Graph` (`tracing.py`); the arguments decide which
trace serves a call (`signatures.py`). A later call does not run the Python
function: `run_graph` runs the nodes again through the public ops, so tapes
record the call and gradients of any order flow through it (`concrete.py`:
a trace and how a call runs it). Variables are referenced, not copied: each
call reads their current value. With `jit_compile=True` a call that no tape or
accumulator is watching runs the graph's compiled NumPy program instead
(`compiling/compiler.py`). An input_signature's traces are `signature_traces.py`'s.

A trace that read an argument's value as a Python value (an index, a shape, a
condition) serves that value only: such traces are kept one per value
(`ByValue`). Traces are kept under a bound (`MAX_TRACES`), and tracing
often warns, as TensorFlow's excessive-retracing warning.
"""
import functools
import inspect
import threading
import warnings
import weakref


from .. import nest
from ..graph import (GRADIENT_GRAPHS, OPS, Graph, Node, NodeError, Ref,  # noqa: F401
                    bind_dims, register_gradient_graph, run_graph)
from .signatures import (InputSlot, bind_arguments, check_signature,  # noqa: F401
                         fill_arguments, generalize, input_names, key_matches,
                         sentinel_sizes, split_arguments, symbolic_key)
from ..specs import TensorSpec
from .concrete import MAX_TRACES, ByValue, ConcreteFunction  # noqa: F401 (MAX_TRACES: 04)
from .signature_traces import NOT_YET, signature_trace, signature_trace_for
from ..core.tensor import Tensor
from .tracing import Tracer

__all__ = ["function", "Function", "ConcreteFunction"]

RETRACING_WARNING = 5  # traces before a warning (then at 10, 20, 40, ...)


class Function:
    """What `@mt.function` returns: a callable that traces once per input
    signature (shapes, dtypes and Python arguments) and replays afterwards."""

    def __init__(self, python_function, input_signature=None, name=None, instance=None,
                 jit_compile=False):
        functools.update_wrapper(self, python_function)
        self.jit_compile = bool(jit_compile)
        self.python_function = python_function
        self.input_signature = None if input_signature is None else \
            check_signature(input_signature)
        self._name = name or getattr(python_function, "__name__", "function")
        signature = inspect.signature(python_function)
        if instance is not None:
            params = list(signature.parameters.values())[1:]
            signature = signature.replace(parameters=params)
        self._signature = signature
        self._instance = instance        # a weakref.ref for a method bound to an object
        self._concrete = {}
        self._by_shapes = {}  # (shape, dtype) of each positional tensor -> its trace
        self._bound = weakref.WeakKeyDictionary()
        self._tracing_count = 0          # traces kept, as TensorFlow counts them
        self._exact_traces = 0           # of which for fixed shapes (they name graphs)
        self._signature_concrete = None
        self._polymorphic = NOT_YET     # the signature's shape-polymorphic trace, or None
        self._lock = threading.RLock()

    @property
    def name(self):
        return self._name

    def __get__(self, instance, owner):
        if instance is None or self._instance is not None:
            return self
        try:
            bound = self._bound.get(instance)
        except TypeError:  # not weak-referenceable or not hashable
            cache = vars(instance).setdefault("_mt_bound_functions", {})
            bound = cache.get(id(self))
            if bound is None:
                bound = cache[id(self)] = Function(self.python_function,
                                                   self.input_signature, self._name,
                                                   instance=lambda i=instance: i,
                                                   jit_compile=self.jit_compile)
            return bound
        if bound is None:
            bound = Function(self.python_function, self.input_signature, self._name,
                             instance=weakref.ref(instance), jit_compile=self.jit_compile)
            self._bound[instance] = bound
        return bound

    def _split(self, args, kwargs):
        return bind_arguments(self._signature, self.input_signature, args, kwargs,
                              f"mt.function {self._name}")

    def _call_python(self, values):
        names = list(self._signature.parameters)
        bound = inspect.BoundArguments(self._signature, dict(zip(names, values)))
        if self._instance is not None:
            instance = self._instance()
            if instance is None:
                raise RuntimeError(f"mt.function {self._name}: its object no longer exists")
            return self.python_function(instance, *bound.args, **bound.kwargs)
        return self.python_function(*bound.args, **bound.kwargs)

    def _concrete_for(self, template, tensors, key):
        concrete = self._concrete.get(key)
        if concrete is None:
            with self._lock:
                concrete = self._concrete.get(key)
                if concrete is None:
                    concrete = self._signature_trace_for(key) or \
                        self._trace(template, tensors, key)
                    if concrete.graph.value_inputs:
                        concrete = ByValue(self, template, key, concrete, tensors)
                    self._keep(self._concrete, key, concrete)
        return concrete

    def _keep(self, traces, key, concrete):
        """Keep a new trace, under a bound: past MAX_TRACES the oldest goes."""
        traces[key] = concrete
        while len(traces) > MAX_TRACES:
            dropped = traces.pop(next(iter(traces)))
            self._by_shapes = {k: c for k, c in self._by_shapes.items()
                               if c is not dropped}

    def _signature_trace_for(self, key):
        return signature_trace_for(self, key)

    def _trace(self, template, tensors, key, count=True):
        tracer = Tracer(f"{self._name}_{self._exact_traces + 1}")
        placeholders = [tracer.placeholder(t) for t in tensors]
        with tracer.active():
            try:
                outputs = self._call_python(fill_arguments(template, placeholders))
            except Exception as e:
                e.add_note(f"(raised while tracing mt.function {self._name})")
                raise
        graph = tracer.build(outputs, args=template)
        self._tracing_count += count
        self._exact_traces += count
        if count and self._tracing_count >= RETRACING_WARNING and \
                (self._tracing_count // RETRACING_WARNING) & \
                (self._tracing_count // RETRACING_WARNING - 1) == 0 and \
                self._tracing_count % RETRACING_WARNING == 0:
            warnings.warn(
                f"mt.function {self._name} has been traced {self._tracing_count} times. "
                f"Tracing is expensive (and at most {MAX_TRACES} traces are kept). Likely "
                "causes: calls with tensors of many shapes (give an input_signature with "
                "None sizes), Python numbers as arguments (pass tensors), or tensor "
                "arguments whose values the function reads as Python values (an index, "
                "a shape, a condition). As TensorFlow warns of excessive retracing.",
                RuntimeWarning, stacklevel=4)
        return ConcreteFunction(self, graph, key)

    def __call__(self, *args, **kwargs):
        if kwargs:
            shapes = None
        elif len(args) == 1:  # (the most common call, kept fast)
            a = args[0]._value if type(args[0]) is Tensor else None
            shapes = None if a is None else ((a.shape, a.dtype),)
        else:
            shapes = tuple([(a._value.shape, a._value.dtype) for a in args if type(a) is Tensor])
            shapes = shapes if len(shapes) == len(args) else None
        if shapes is not None:
            # The common call, positional tensors only: its trace depends on
            # their shapes and dtypes alone, so skip binding the arguments.
            concrete = self._by_shapes.get(shapes)
            if concrete is not None:
                return concrete.run(args)
            template, tensors, key = self._split(args, kwargs)
            concrete = self._concrete_for(template, tensors, key)
            if all(t is a for t, a in zip(tensors, args)) and len(tensors) == len(args):
                self._by_shapes[shapes] = concrete
            return concrete.run(tensors)
        template, tensors, key = self._split(args, kwargs)
        return self._concrete_for(template, tensors, key).run(tensors)

    def experimental_get_compiler_ir(self, *args, **kwargs):
        """TensorFlow's way to read what a call runs: `f.experimental_get_compiler_ir(x)`
        returns a function of `stage`: "python" gives the source of the compiled
        program for these arguments, "graph" the traced graph as text."""
        if not self.jit_compile:
            raise ValueError(f"experimental_get_compiler_ir of mt.function {self._name}: "
                             "Compiler IR can only be returned for functions marked with "
                             "'jit_compile=True'")
        unknown = [s for s in nest.flatten([list(args), list(kwargs.values())])
                   if isinstance(s, TensorSpec) and (s.shape is None or None in s.shape)]
        if unknown:  # a program is written for sizes it knows, as XLA's
            raise ValueError(f"experimental_get_compiler_ir of mt.function {self._name}: "
                             f"Only support static input shape but got inputs = {unknown}")
        template, tensors, key = self._split(args, kwargs)
        concrete = self._concrete_for(template, tensors, key)
        if isinstance(concrete, ByValue):
            concrete = concrete.trace_for(tensors)

        def ir(stage="python", device_name=None):
            if stage == "python":
                return concrete.program(tensors).source
            if stage == "graph":
                return str(concrete.graph)
            raise ValueError(f"experimental_get_compiler_ir: stage must be 'python' or "
                             f"'graph' (minitape compiles to Python, not XLA), got {stage!r}")
        return ir

    def get_concrete_function(self, *args, **kwargs):
        """The trace for these arguments (tensors, or mt.TensorSpecs), made if new.
        With an input_signature and no arguments: the trace for the signature
        (`signature_concrete_function`, the one `mt.saved_model.save` writes),
        which takes every shape the signature allows when it can, as
        TensorFlow's does (`TensorSpec(None)`: any rank)."""
        if not args and not kwargs and self.input_signature is not None:
            return self.signature_concrete_function(any_rank=True)
        template, tensors, key = self._split(args, kwargs)
        concrete = self._concrete_for(template, tensors, key)
        return concrete.trace_for(tensors) if isinstance(concrete, ByValue) else concrete

    def concrete_functions(self):
        """The traces made so far (each once)."""
        found = {}
        for c in self._concrete.values():
            for trace in (c.traces.values() if isinstance(c, ByValue) else (c,)):
                found.setdefault(id(trace), trace)
        return list(found.values())

    def signature_concrete_function(self, any_rank=False):
        """The trace `mt.saved_model.save` writes for the input_signature
        (`signature_traces.signature_trace`: one for every shape it allows, when
        the function lets it; a trace for inputs of unknown rank only with
        `any_rank`)."""
        return signature_trace(self, any_rank)

    def experimental_get_tracing_count(self):
        return self._tracing_count

    def __repr__(self):
        sig = "" if self.input_signature is None else \
            f" input_signature={list(self.input_signature)}"
        return f"<mt.function {self._name}{sig}, {len(self._concrete)} trace(s)>"


def function(func=None, input_signature=None, autograph=True, jit_compile=None,
             reduce_retracing=False, experimental_compile=None, name=None, **kwargs):
    """Decorator: `@mt.function` or `@mt.function(input_signature=[mt.TensorSpec(None)])`.

    The first call with new input shapes and dtypes traces `func` into a Graph;
    later calls replay it. Python values in the arguments are part of what a
    trace is for. With `jit_compile=True` (or TensorFlow's older name
    `experimental_compile`) each trace is also compiled into one straight-line
    NumPy function (`compiling/compiler.py`), which calls run when no tape is recording.
    `autograph` and `reduce_retracing` are accepted for TensorFlow
    compatibility and ignored.
    """
    jit = bool(jit_compile or experimental_compile)
    if func is None:
        return lambda f: Function(f, input_signature, name, jit_compile=jit)
    return Function(func, input_signature, name, jit_compile=jit)
