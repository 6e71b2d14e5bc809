"""What `load` gives back: objects with the saved attributes, and functions
that dispatch to their saved traces (a polymorphic trace is checked against
the limits again for the sizes of each call)."""
import inspect

from ..graph import run_graph
from ..functions.signatures import bind_arguments, fill_arguments, key_matches
from ..functions.tracing import shapes_matter
from ..layers import Module
from ..specs import TensorSpec
from .checks import check_graph
from .format import brief, inputs_text, spec_text


def _run(graph, inputs, what):
    """Run a loaded graph. A polymorphic one is checked again for the sizes of
    this call first: the limits hold, and its declared shapes fit these sizes."""
    if graph.symbolic_inputs is not None:
        shapes_matter()  # inside a trace: it traces again for new sizes, checked again
        try:
            check_graph(graph, [TensorSpec(t.shape, t.dtype) for t in inputs])
        except ValueError as e:
            raise ValueError(f"loaded {what}, graph {graph.name}: {e}") from None
    return run_graph(graph, inputs)


def leaves(s):
    if isinstance(s, dict):
        return [x for v in s.values() for x in leaves(v)]
    if isinstance(s, (list, tuple)):
        return [x for v in s for x in leaves(v)]
    return [s]


def call_arguments(signature, template, tensors):
    """(args, kwargs) that call a function with a trace's own arguments."""
    values = fill_arguments(template, tensors)
    params = list(signature.parameters.values())
    for p, v in zip(params, values):
        if p.kind is p.VAR_POSITIONAL and not isinstance(v, tuple) or \
                p.kind is p.VAR_KEYWORD and not isinstance(v, dict):
            raise TypeError(f"parameter {p.name} cannot take {brief(v)}")
    bound = inspect.BoundArguments(signature, dict(zip([p.name for p in params], values)))
    return bound.args, bound.kwargs


class LoadedObject(Module):
    """What `load` returns: the saved attributes (variables, modules, functions)."""

    def __init__(self):
        super().__init__("loaded")

    def __call__(self, *args, **kwargs):
        fn = self.__dict__.get("__call__")
        if fn is None:
            raise TypeError("this loaded object has no saved __call__ function")
        return fn(*args, **kwargs)

    def __repr__(self):
        names = [k for k in vars(self) if not k.startswith("_")]
        return f"<mt.saved_model loaded object with {names}>"


class LoadedFunction:
    """A saved function: its traces, dispatched on the arguments' shapes, dtypes
    and Python values. It cannot trace anything new: the Python code is not saved."""

    def __init__(self, name, signature, input_signature, traces):
        self.name = name
        self._signature = signature
        self.input_signature = input_signature
        self._traces = traces

    def _split(self, args, kwargs):
        return bind_arguments(self._signature, self.input_signature, args, kwargs,
                                  f"loaded function {self.name}")

    def __call__(self, *args, **kwargs):
        _, tensors, key = self._split(args, kwargs)
        concrete = self._traces.get(key)
        if concrete is None:
            concrete = next((c for k, c in self._traces.items()
                             if c.polymorphic and key_matches(k, key)), None)
        if concrete is None:
            saved = "; ".join(inputs_text(c.graph) for c in self._traces.values())
            raise ValueError(
                f"loaded function {self.name} has no trace for these arguments (tensors "
                f"{', '.join(spec_text(t) for t in tensors) or '()'}); it was saved with "
                f"traces for: {saved or 'nothing'}. "
                "A saved function runs only on the input shapes, dtypes and Python "
                "values it was traced for: call the original with them before saving.")
        return _run(concrete.graph, tensors, f"function {self.name}")

    def concrete_functions(self):
        return list(self._traces.values())

    def __repr__(self):
        return f"<loaded function {self.name}, {len(self._traces)} trace(s)>"
