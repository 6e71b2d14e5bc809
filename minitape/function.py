"""`mt.function`: calling traced Python functions.

The first call with new input shapes and dtypes (and Python values) traces
the Python function into a `Graph` (`tracing.py`); the arguments decide which
trace serves a call (`signatures.py`). A later call does not run the Python
function: `run_graph` runs the nodes again through the public ops, so tapes
record the call and gradients of any order flow through it. Variables are
referenced, not copied: each call reads their current value. With
`jit_compile=True` a call that no tape or accumulator is watching runs the
graph's compiled NumPy program instead (`compiler.py`).

A trace that read an argument's value as a Python value (an index, a shape, a
condition) serves that value only: such traces are kept one per value
(`_ByValue`). Traces are kept under a bound (`MAX_TRACES`), and tracing
often warns, as TensorFlow's excessive-retracing warning.
"""
import functools
import inspect
import threading
import warnings
import weakref

import numpy as np

from . import nest
from .context import state, value_read
from .graph import (GRADIENT_GRAPHS, OPS, Graph, Node, NodeError, Ref,  # noqa: F401
                    bind_dims, register_gradient_graph, run_graph)
from .signatures import (InputSlot, bind_arguments, check_signature,  # noqa: F401
                         fill_arguments, generalize, input_names, key_matches,
                         sentinel_sizes, split_arguments, symbolic_key)
from .specs import TensorSpec
from .tensor import Tensor
from .tracing import Tracer, show

__all__ = ["function", "Function", "ConcreteFunction"]


class ConcreteFunction:
    """One trace of a Function, for one set of input shapes and dtypes (or, when
    `polymorphic`, for every size of its symbolic dimensions)."""

    polymorphic = False

    def __init__(self, function, graph, key):
        self._function = function
        self.graph = graph
        self._key = key
        self._programs = {}  # input shapes (None: the traced ones) -> compiled Program
        self._jit = bool(getattr(function, "jit_compile", False))
        self._fast = None  # the program a call runs when nothing watches and nothing is checked
        self._compiling = threading.Lock()  # one compilation per shapes, whatever the threads

    @property
    def inputs(self):
        """The input specs. In a shape-polymorphic trace a size that may vary
        is None, and an input of any rank has the shape None, as in
        TensorFlow's concrete functions."""
        symbolic = self.graph.symbolic_inputs
        if symbolic is None:
            return list(self.graph.inputs)
        return [TensorSpec(None if shape is None else
                           tuple(d if isinstance(d, int) else None for d in shape), s.dtype)
                for s, shape in zip(self.graph.inputs, symbolic)]

    def __call__(self, *args, **kwargs):
        template, tensors, key = self._function._split(args, kwargs)
        if key != self._key and not (self.polymorphic and key_matches(self._key, key)):
            raise ValueError(f"concrete function {self.graph.name}: these arguments do not "
                             f"match the ones it was traced for ({self.graph.inputs})")
        return self.run(tensors)

    def run(self, tensors):
        """Run the graph on `tensors`: its compiled program when the function was
        made with jit_compile=True and nothing is watching (no tape, accumulator
        or trace could record a program's NumPy calls), else through the ops,
        which tapes record, so gradients of any order flow through the call."""
        fast = self._fast
        if fast is not None and not state.tapes and not state.variable_watchers:
            return fast.run(tensors)
        if self.graph.value_inputs:
            self.check_values(tensors)
        if self._jit and not state.tapes and not state.variable_watchers:
            program = self._programs.get(None) if self.graph.symbolic_inputs is None \
                else None
            if program is None:
                program = self.program(tensors)
            return program.run(tensors)
        return run_graph(self.graph, tensors)

    def check_values(self, tensors):
        """A trace that used an argument's value (as an index, a shape, an op
        attribute) runs only for that value."""
        for k, value in self.graph.value_inputs.items():
            given = tensors[k]._value
            if given.dtype != value.dtype or given.shape != value.shape or \
                    given.tobytes() != value.tobytes():  # (-0.0 is not 0.0: 1 / x differs)
                names = input_names(self.graph.args, self._function)
                name = names[k] if k < len(names) else f"input {k}"
                raise ValueError(
                    f"concrete function {self.graph.name}: argument {name!r} was traced "
                    f"for the value {show(value)}, which the function uses as a Python "
                    f"value (an index, a shape or an op attribute); it cannot run for "
                    f"{show(given)} (call the mt.function itself, which traces again)")

    def program(self, tensors=None):
        """The compiled program for these input tensors (made once per shapes,
        also when several threads call at once)."""
        graph = self.graph
        shapes = None if tensors is None or graph.symbolic_inputs is None else \
            tuple(tuple(t.shape) for t in tensors)
        program = self._programs.get(shapes)
        if program is None:
            with self._compiling:
                program = self._compile(shapes, tensors)
        return program

    def _compile(self, shapes, tensors):
        graph = self.graph
        programs = self._programs
        program = programs.get(shapes)  # (another thread may have made it meanwhile)
        if program is None:
            while len(programs) >= MAX_TRACES:  # one per shape: bounded, oldest first
                programs.pop(next(iter(programs)))
            node_shapes = None
            if shapes is not None:
                dims = bind_dims(graph, tensors)
                node_shapes = [[None if s is None else
                                tuple(dims[d] if isinstance(d, str) else d for d in s)
                                for s in (node.symbolic or [o.shape for o in node.outputs])]
                               for node in graph.nodes]
            # Imported here for load time alone (no cycle): only jit_compile=True needs
            # the compiler, so traced functions and saved models never load it.
            from .compiler import compile_graph
            program = programs[shapes] = compile_graph(
                graph, input_names(graph.args, self._function), node_shapes)
            if self._jit and shapes is None and graph.symbolic_inputs is None and \
                    not graph.value_inputs:
                self._fast = program
        return program

    def __repr__(self):
        return f"<ConcreteFunction {self.graph.name} inputs={self.graph.inputs}>"


_NOT_YET = object()
_FAILED = object()
MAX_TRACES = 64        # traces one function keeps (and compiled programs one trace keeps)
RETRACING_WARNING = 5  # traces before a warning (then at 10, 20, 40, ...)


class _ByValue:
    """The traces of one input signature whose Python function uses some tensor
    arguments' values as Python values (`x[i]`, `mt.reshape(x, shape)`,
    `pad(..., constant_values=c)`): one trace per value of those arguments, as
    TensorFlow retraces for each new Python number. `which` are their indices."""

    polymorphic = False

    def __init__(self, function, template, key, concrete, tensors):
        self._function, self._template, self._key = function, template, key
        self.which = sorted(concrete.graph.value_inputs)
        self.traces = {self._value_key(tensors): concrete}

    def _value_key(self, tensors):
        for k in self.which:  # (called inside another trace: that trace depends on them)
            value_read(tensors[k])
        return tuple(tensors[k]._value.tobytes() for k in self.which)

    def trace_for(self, tensors):
        concrete = self.traces.get(self._value_key(tensors))
        if concrete is None:
            function = self._function
            with function._lock:
                concrete = self.traces.get(self._value_key(tensors))
                if concrete is not None:  # another thread traced it meanwhile
                    return concrete
                concrete = function._trace(self._template, tensors, self._key)
                if not set(concrete.graph.value_inputs) <= set(self.which):
                    # this value took a path that uses more arguments' values
                    self.which = sorted(set(self.which) | set(concrete.graph.value_inputs))
                    self.traces = {}
                function._keep(self.traces, self._value_key(tensors), concrete)
        return concrete

    def run(self, tensors):
        return self.trace_for(tensors).run(tensors)

    def program(self, tensors):
        return self.trace_for(tensors).program(tensors)


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
        self._polymorphic = _NOT_YET     # the signature's shape-polymorphic trace, or None
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
                        concrete = _ByValue(self, template, key, concrete, tensors)
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
        """The input_signature's one trace, when it has unknown sizes or ranks,
        was traced shape-polymorphic and fits these arguments (as TensorFlow
        traces a signature once)."""
        if self.input_signature is None or not any(
                s.shape is None or None in s.shape
                for s in nest.flatten(list(self.input_signature))):
            return None
        concrete = self._polymorphic_signature_trace()
        if concrete is not None and key_matches(concrete._key, key):
            return concrete
        return None

    def _polymorphic_signature_trace(self):
        if self._polymorphic is _NOT_YET:
            with self._lock:  # traced once, also when several threads ask at once
                if self._polymorphic is _NOT_YET:
                    self._polymorphic = self._polymorphic_trace()
        return self._polymorphic

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
        if isinstance(concrete, _ByValue):
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
        return concrete.trace_for(tensors) if isinstance(concrete, _ByValue) else concrete

    def concrete_functions(self):
        """The traces made so far (each once)."""
        found = {}
        for c in self._concrete.values():
            for trace in (c.traces.values() if isinstance(c, _ByValue) else (c,)):
                found.setdefault(id(trace), trace)
        return list(found.values())

    def signature_concrete_function(self, any_rank=False):
        """The trace `mt.saved_model.save` writes for the input_signature.

        Unknown sizes make it shape-polymorphic when the function allows: it is
        traced twice, with two different sizes for each unknown (and a scalar,
        then a matrix, for an unknown rank), and if the two graphs differ only
        in those sizes they become one graph whose shapes name them (`n0`,
        `n1`, ...; None for a shape of unknown rank). Calls that fit the
        signature then all run this one trace. Otherwise it is the trace with
        each unknown size 1 (an unknown rank traces as a scalar).

        A trace for inputs of unknown rank is returned only with `any_rank`
        (the saved-model format stores fixed ranks; without it such a
        signature gives its scalar trace, as before).
        """
        if self.input_signature is None:
            return None
        specs = nest.flatten(list(self.input_signature))
        if any_rank or any(s.shape is not None and None in s.shape for s in specs):
            polymorphic = self._polymorphic_signature_trace()
            if polymorphic is not None and (
                    any_rank or None not in polymorphic.graph.symbolic_inputs):
                return polymorphic
        if self._signature_concrete is None:
            with self._lock:
                if self._signature_concrete is None:
                    self._signature_concrete = self._exact_signature_trace()
        return self._signature_concrete

    def _exact_signature_trace(self):
        """The trace with each unknown size 1 and each unknown rank a scalar."""
        template, tensors, key = self._split(tuple(self.input_signature), {})
        concrete = self._concrete.get(key)
        if isinstance(concrete, _ByValue):
            return concrete.trace_for(tensors)
        if concrete is None or concrete.polymorphic:
            concrete = self._trace(template, tensors, key)
            if not concrete.graph.value_inputs:
                self._concrete.setdefault(key, concrete)
        return concrete

    def _polymorphic_trace(self):
        """Trace twice, with different sizes for each unknown size and, for an
        unknown rank, a scalar and then a matrix; one graph if they agree. When
        the function fails on different sizes (`a + b`, `a @ a`: sizes the ops
        require to be equal), it tries again with one size for all of them;
        when that fails too, each call's shapes get a trace of their own."""
        specs = nest.flatten(list(self.input_signature))
        n = sum(d is None for s in specs if s.shape is not None for d in s.shape)
        ranks = sum(s.shape is None for s in specs)
        if not n and not ranks:
            return None
        pairs = sentinel_sizes(n + 2 * ranks)
        concrete = self._trace_twice(specs, pairs)
        if concrete is _FAILED and n > 1 and not ranks:
            concrete = self._trace_twice(specs, [pairs[0]] * n)
        return None if concrete is _FAILED else concrete

    def _trace_twice(self, specs, pairs):
        """The shape-polymorphic trace for these sentinel size pairs, None when
        the two traces differ in more than sizes, _FAILED when tracing raised."""
        traces = []
        for pick in (0, 1):
            sizes = iter(p[pick] for p in pairs)

            def example(s):
                if s.shape is None:  # unknown rank: a scalar, then a matrix
                    first, second = next(sizes), next(sizes)
                    return () if pick == 0 else (first, second)
                return tuple(next(sizes) if d is None else d for d in s.shape)
            examples = [Tensor(np.ones(example(s), s.dtype)) for s in specs]
            args = nest.pack_like(list(self.input_signature), examples)
            template, tensors, key = self._split(tuple(args), {})
            try:
                traces.append((self._trace(template, tensors, key, count=False), key))
            except Exception:
                return _FAILED  # trace each shape on its own (it raises there if wrong)
        if any(trace.graph.value_inputs for trace, _ in traces):
            return None  # it uses an argument's value: one trace per value instead
        if any(trace.graph.shape_specific for trace, _ in traces):
            return None  # it holds for its shapes only: one trace per shape
        symbols = {p: f"n{k}" for k, p in enumerate(dict.fromkeys(pairs))}
        graph = generalize(traces[0][0].graph, traces[1][0].graph, symbols)
        if graph is None or not self._same_at_small_sizes(specs, pairs, traces[0][0].graph):
            return None
        self._tracing_count += 1
        concrete = ConcreteFunction(self, graph, symbolic_key(traces[0][1], graph))
        concrete.polymorphic = True
        return concrete

    def _same_at_small_sizes(self, specs, pairs, graph):
        """Whether the function takes the path it took at the sentinel sizes
        (odd, from 13 on) also where every unknown size is 1, and where it is
        2: a Python decision on a size (`if x.shape[0] > 5`, `n % 2`, squeeze()
        of an axis of size 1, broadcasting against one) that both sentinel
        traces took the same way would otherwise hold for every size. (A size
        0, a decision between 2 and 13 or past 27, and an input of unknown rank
        are not tried.)"""
        if any(s.shape is None for s in specs):
            return True
        for small in (1, 2):
            examples = [Tensor(np.ones(tuple(small if d is None else d for d in s.shape),
                                       s.dtype)) for s in specs]
            args = nest.pack_like(list(self.input_signature), examples)
            template, tensors, key = self._split(tuple(args), {})
            try:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # (ones at size 1: n - 1 may be 0)
                    trace = self._trace(template, tensors, key, count=False)
            except Exception:
                return False  # it fails there: each call's shapes get a trace of their own
            graph_small = trace.graph
            if graph_small.value_inputs or graph_small.shape_specific or generalize(
                    graph, graph_small, {(a, small): f"n{k}" for k, (a, _) in
                                         enumerate(dict.fromkeys(pairs))}) is None:
                return False
        return True

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
    NumPy function (`compiler.py`), which calls run when no tape is recording.
    `autograph` and `reduce_retracing` are accepted for TensorFlow
    compatibility and ignored.
    """
    jit = bool(jit_compile or experimental_compile)
    if func is None:
        return lambda f: Function(f, input_signature, name, jit_compile=jit)
    return Function(func, input_signature, name, jit_compile=jit)
