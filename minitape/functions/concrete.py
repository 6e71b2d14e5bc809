"""A trace of an `mt.function`, and how a call runs it.

`ConcreteFunction` is one trace, for one set of input shapes and dtypes (or,
when `polymorphic`, for every size of its symbolic dimensions). A call runs
its graph through the public ops (`graph.run_graph`), so tapes record it and
gradients of any order flow through it; with jit_compile=True, a call that no
tape, accumulator or trace is watching runs the graph's compiled program
instead (`compiling/compiler.py`, loaded the first time one is needed). `ByValue` keeps
the traces of a function that reads some arguments' values as Python values:
one per value.
"""
import threading

from ..core.context import state, value_read
from ..graph import bind_dims, run_graph
from .signatures import input_names, key_matches
from ..specs import TensorSpec
from .tracing import show

MAX_TRACES = 64        # traces one function keeps (and compiled programs one trace keeps)


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
            from ..compiling.compiler import compile_graph
            program = programs[shapes] = compile_graph(
                graph, input_names(graph.args, self._function), node_shapes)
            if self._jit and shapes is None and graph.symbolic_inputs is None and \
                    not graph.value_inputs:
                self._fast = program
        return program

    def __repr__(self):
        return f"<ConcreteFunction {self.graph.name} inputs={self.graph.inputs}>"




class ByValue:
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
