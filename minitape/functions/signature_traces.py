"""The traces of an `mt.function`'s input_signature.

A signature with unknown sizes (`TensorSpec([None, 3])`) or an unknown rank
(`TensorSpec(None)`) is traced once for every shape it allows when the
function lets it: traced twice, with two different sizes for each unknown,
the two graphs become one graph whose shapes name the sizes (`generalize`).
Otherwise it is traced with each unknown size 1. Each function here takes the
`Function` (`function.py`) whose traces it makes and keeps.
"""
import warnings

import numpy as np

from .. import nest
from .concrete import ByValue, ConcreteFunction
from .signatures import generalize, key_matches, sentinel_sizes, symbolic_key
from ..core.tensor import Tensor

NOT_YET = object()  # a Function's polymorphic signature trace before it is made
_FAILED = object()


def signature_trace_for(fn, key):
    """The input_signature's one trace, when it has unknown sizes or ranks,
    was traced shape-polymorphic and fits these arguments (as TensorFlow
    traces a signature once)."""
    if fn.input_signature is None or not any(
            s.shape is None or None in s.shape
            for s in nest.flatten(list(fn.input_signature))):
        return None
    concrete = polymorphic_signature_trace(fn)
    if concrete is not None and key_matches(concrete._key, key):
        return concrete
    return None


def polymorphic_signature_trace(fn):
    if fn._polymorphic is NOT_YET:
        with fn._lock:  # traced once, also when several threads ask at once
            if fn._polymorphic is NOT_YET:
                fn._polymorphic = _polymorphic_trace(fn)
    return fn._polymorphic


def signature_trace(fn, any_rank=False):
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
    if fn.input_signature is None:
        return None
    specs = nest.flatten(list(fn.input_signature))
    if any_rank or any(s.shape is not None and None in s.shape for s in specs):
        polymorphic = polymorphic_signature_trace(fn)
        if polymorphic is not None and (
                any_rank or None not in polymorphic.graph.symbolic_inputs):
            return polymorphic
    if fn._signature_concrete is None:
        with fn._lock:
            if fn._signature_concrete is None:
                fn._signature_concrete = _exact_signature_trace(fn)
    return fn._signature_concrete


def _exact_signature_trace(fn):
    """The trace with each unknown size 1 and each unknown rank a scalar."""
    template, tensors, key = fn._split(tuple(fn.input_signature), {})
    concrete = fn._concrete.get(key)
    if isinstance(concrete, ByValue):
        return concrete.trace_for(tensors)
    if concrete is None or concrete.polymorphic:
        concrete = fn._trace(template, tensors, key)
        if not concrete.graph.value_inputs:
            fn._concrete.setdefault(key, concrete)
    return concrete


def _polymorphic_trace(fn):
    """Trace twice, with different sizes for each unknown size and, for an
    unknown rank, a scalar and then a matrix; one graph if they agree. When
    the function fails on different sizes (`a + b`, `a @ a`: sizes the ops
    require to be equal), it tries again with one size for all of them;
    when that fails too, each call's shapes get a trace of their own."""
    specs = nest.flatten(list(fn.input_signature))
    n = sum(d is None for s in specs if s.shape is not None for d in s.shape)
    ranks = sum(s.shape is None for s in specs)
    if not n and not ranks:
        return None
    pairs = sentinel_sizes(n + 2 * ranks)
    concrete = _trace_twice(fn, specs, pairs)
    if concrete is _FAILED and n > 1 and not ranks:
        concrete = _trace_twice(fn, specs, [pairs[0]] * n)
    return None if concrete is _FAILED else concrete


def _trace_twice(fn, specs, pairs):
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
        args = nest.pack_like(list(fn.input_signature), examples)
        template, tensors, key = fn._split(tuple(args), {})
        try:
            traces.append((fn._trace(template, tensors, key, count=False), key))
        except Exception:
            return _FAILED  # trace each shape on its own (it raises there if wrong)
    if any(trace.graph.value_inputs for trace, _ in traces):
        return None  # it uses an argument's value: one trace per value instead
    if any(trace.graph.shape_specific for trace, _ in traces):
        return None  # it holds for its shapes only: one trace per shape
    symbols = {p: f"n{k}" for k, p in enumerate(dict.fromkeys(pairs))}
    graph = generalize(traces[0][0].graph, traces[1][0].graph, symbols)
    if graph is None or not _same_at_small_sizes(fn, specs, pairs, traces[0][0].graph):
        return None
    fn._tracing_count += 1
    concrete = ConcreteFunction(fn, graph, symbolic_key(traces[0][1], graph))
    concrete.polymorphic = True
    return concrete


def _same_at_small_sizes(fn, specs, pairs, graph):
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
        args = nest.pack_like(list(fn.input_signature), examples)
        template, tensors, key = fn._split(tuple(args), {})
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (ones at size 1: n - 1 may be 0)
                trace = fn._trace(template, tensors, key, count=False)
        except Exception:
            return False  # it fails there: each call's shapes get a trace of their own
        graph_small = trace.graph
        if graph_small.value_inputs or graph_small.shape_specific or generalize(
                graph, graph_small, {(a, small): f"n{k}" for k, (a, _) in
                                     enumerate(dict.fromkeys(pairs))}) is None:
            return False
    return True
