"""Which trace serves a call: `mt.function`'s arguments split into the tensors
a graph takes and a template of the Python values a trace is for, the key a
trace is kept under, and one shape-polymorphic graph for an input_signature
with unknown sizes (two traces with different sizes, generalised).
"""
import inspect

import numpy as np

from .. import nest
from ..graph import GRADIENT_GRAPHS, Graph, Node, Ref, register_gradient_graph
from ..ops.declaration import DECLARED
from ..specs import TensorSpec
from ..core.tensor import Tensor, TensorLike, Variable, convert_to_tensor

__all__ = ["InputSlot", "split_arguments", "bind_arguments", "fill_arguments",
           "input_names", "check_signature", "sentinel_sizes", "generalize",
           "symbolic_key", "key_matches", "rank_free"]


# --- arguments ---------------------------------------------------------------------

class InputSlot:
    """Where the i-th tensor argument goes in a call's argument structure (the
    rest of the structure is Python values fixed at trace time)."""
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


def check_signature(signature):
    if not isinstance(signature, (list, tuple)):
        raise TypeError(f"input_signature must be a list or tuple of mt.TensorSpec, "
                        f"got {signature!r}")
    for spec in nest.flatten(list(signature)):
        if not isinstance(spec, TensorSpec):
            raise TypeError(f"input_signature must hold only mt.TensorSpec, got {spec!r}")
    return tuple(signature)


def _convert_to_spec(value, spec, where):
    if isinstance(value, TensorSpec):
        shape = () if value.shape is None else tuple(1 if s is None else s for s in value.shape)
        value = Tensor(np.ones(shape, value.dtype))
    any_length = spec.dtype.kind in "US" and spec.dtype.itemsize == 0  # mt.string
    try:
        t = convert_to_tensor(value, dtype=None if any_length else spec.dtype)
        if any_length and t.dtype.kind != spec.dtype.kind:
            raise TypeError
    except TypeError:
        given = getattr(value, "dtype", type(value).__name__)
        raise TypeError(f"{where}: expected a {spec.dtype} tensor for {spec}, "
                        f"got {given}") from None
    if not spec.is_compatible_with(t):
        raise ValueError(f"{where}: an input of shape {t.shape} is not compatible "
                         f"with the input_signature's {spec}")
    return t


def _static_key(value, where):
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"{where}: argument {value!r} is neither a tensor nor "
                        "hashable, so it cannot key a trace") from None
    return ("S", type(value).__name__, value)


def split_arguments(values, signature, where):
    """Split canonical argument values into a template (tensors replaced by
    `InputSlot(i)`), the list of tensors, and the trace key."""
    tensors, key = [], []

    def tensor_leaf(t):
        key.append(("T", t.shape, t.dtype.str))
        tensors.append(t)
        return InputSlot(len(tensors) - 1)

    def walk(v, spec):
        if spec is not None and isinstance(spec, TensorSpec):
            return tensor_leaf(_convert_to_spec(v, spec, where))
        if isinstance(v, dict):
            if spec is not None and (not isinstance(spec, dict) or set(spec) != set(v)):
                raise TypeError(f"{where}: argument {v!r} does not match the "
                                f"input_signature {spec!r}")
            key.append(("dict", tuple(sorted(map(repr, v)))))
            return {k: walk(v[k], None if spec is None else spec[k]) for k in v}
        if isinstance(v, (list, tuple)) and not isinstance(v, TensorSpec):
            if spec is not None and (not isinstance(spec, (list, tuple)) or len(spec) != len(v)):
                raise TypeError(f"{where}: argument {v!r} does not match the "
                                f"input_signature {spec!r}")
            key.append((type(v).__name__, len(v)))
            items = [walk(x, None if spec is None else spec[i]) for i, x in enumerate(v)]
            return items if isinstance(v, list) else tuple(items)
        if spec is not None:
            raise TypeError(f"{where}: argument {v!r} does not match the input_signature "
                            f"{spec!r}")
        if isinstance(v, Variable):  # by reference, as TensorFlow passes a variable: the
            key.append(("V", id(v)))  # trace reads (and may assign) this very variable; a
            return v                  # trace that uses it keeps it, so its id stays its own
        if isinstance(v, (TensorLike, np.ndarray, np.generic)):
            return tensor_leaf(convert_to_tensor(v))
        if isinstance(v, TensorSpec):
            return tensor_leaf(_convert_to_spec(v, v, where))
        key.append(_static_key(v, where))
        return v

    specs = list(signature) if signature is not None else []
    template = [walk(v, specs[i] if i < len(specs) else None) for i, v in enumerate(values)]
    return template, tensors, tuple(key)


def bind_arguments(signature, input_signature, args, kwargs, where):
    """Bind a call's arguments to the Python signature (defaults applied), then
    split them: (template, tensors, trace key)."""
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{where}: {e}") from None
    bound.apply_defaults()
    specs = input_signature
    kinds = [signature.parameters[name].kind for name in bound.arguments]
    if input_signature is not None and inspect.Parameter.VAR_POSITIONAL in kinds:
        specs = _parameter_specs(bound, kinds, list(input_signature), where)
    return split_arguments(list(bound.arguments.values()), specs, where)


def _parameter_specs(bound, kinds, specs, where):
    """The input_signature's specs per parameter when the function takes *args:
    as in TensorFlow, the specs beyond the named parameters are for *args."""
    out, pos = [], 0
    for value, kind in zip(bound.arguments.values(), kinds):
        if kind == inspect.Parameter.VAR_POSITIONAL:
            if pos + len(value) > len(specs):
                raise TypeError(f"{where}: too many positional arguments for the "
                                f"input_signature ({len(specs)} TensorSpecs)")
            out.append(tuple(specs[pos:pos + len(value)]))
            pos += len(value)
        elif kind == inspect.Parameter.VAR_KEYWORD:
            out.append(None)
        else:
            out.append(specs[pos] if pos < len(specs) else None)
            pos += 1
    return out


def fill_arguments(template, tensors):
    def walk(v):
        if isinstance(v, InputSlot):
            return tensors[v.index]
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, tuple) and not hasattr(v, "_fields"):
            return tuple(walk(x) for x in v)
        return v
    return [walk(v) for v in template]


def input_names(template, function):
    """The Python parameter name of each tensor input of a trace (`x`, or
    `xs_1` for the second tensor inside the argument `xs`)."""
    signature = getattr(function, "_signature", None)
    params = list(signature.parameters) if signature is not None else []
    names = {}

    def walk(v, base):
        if isinstance(v, InputSlot):
            names.setdefault(v.index, base)
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(x, f"{base}_{k}")
        elif isinstance(v, (list, tuple)):
            for k, x in enumerate(v):
                walk(x, f"{base}_{k}")

    for k, v in enumerate(template or []):
        walk(v, params[k] if k < len(params) else f"arg{k}")
    return [names.get(i, f"x{i}") for i in range(max(names, default=-1) + 1)]



# --- shape polymorphism ------------------------------------------------------------

class _NotPolymorphic(Exception):
    pass


def sentinel_sizes(n):
    """Sizes to trace `n` unknown dimensions with, twice: (A_k, B_k) with A_k
    odd primes from 13 on and B_k = 2 A_k + 1, chosen so that no size derived
    from one unknown (like n + 1 or 2 n) is mistaken for another."""
    sizes, p = [], 13
    while len(sizes) < n:
        if all(p % q for q in range(3, int(p ** 0.5) + 1, 2)) and \
                all(p != 2 * a + 1 for a in sizes):
            sizes.append(p)
        p += 2
    return [(a, 2 * a + 1) for a in sizes]


def generalize(ga, gb, symbols):
    """One graph for two traces that differ only in some sizes: `symbols` maps
    a pair (size in ga, size in gb) to a symbol name. Returns a Graph whose
    shapes name the symbols where the traces differ, or None when the traces
    differ in anything else (other ops, attributes, constants, or sizes that are
    not a symbol pair): such a function is not shape-polymorphic here."""
    try:
        return _generalize(ga, gb, symbols)
    except _NotPolymorphic:
        return None


def rank_free(op_type):
    """Whether a graph for an input of unknown rank may hold this op type: its
    result does not depend on knowing its inputs' rank (a reduction only over
    all axes). Each op's declaration says it (`Declaration.rank_free`); a custom
    gradient's IdentityN passes its values through."""
    declared = DECLARED.get(op_type)
    return op_type == "IdentityN" or declared is not None and declared.rank_free


def _reduces(op_type):
    declared = DECLARED.get(op_type)
    return declared is not None and declared.reduces


def _all_axes(graph, node):
    """Whether a reduction node reduces every axis of its input."""
    return tuple(node.attrs["axis"]) == tuple(range(len(graph.spec_of(node.inputs[0]).shape)))


def _generalize(ga, gb, symbols):
    used = {}

    def shape(sa, sb):
        if sa.dtype != sb.dtype:
            raise _NotPolymorphic
        if len(sa.shape) != len(sb.shape):
            return None  # traced with two ranks (an unknown-rank input): any shape
        out = []
        for a, b in zip(sa.shape, sb.shape):
            if a != b:
                name = symbols.get((a, b))
                if name is None:
                    raise _NotPolymorphic
                used[name] = a
                a = name
            out.append(a)
        return tuple(out)

    def same(a, b):
        if isinstance(a, Ref) or isinstance(b, Ref):
            if not (isinstance(a, Ref) and isinstance(b, Ref)) or a.kind != b.kind:
                return False
            if a.kind == "c":
                return a.x.shape == b.x.shape and a.x.dtype == b.x.dtype and \
                    np.array_equal(a.x, b.x)
            return a.x is b.x if a.kind == "v" else a.x == b.x
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and \
                a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)
        if isinstance(a, Variable) or isinstance(b, Variable):
            return a is b
        if isinstance(a, InputSlot) or isinstance(b, InputSlot):
            return isinstance(a, InputSlot) and isinstance(b, InputSlot) and a.index == b.index
        if isinstance(a, dict):
            return isinstance(b, dict) and list(a) == list(b) and \
                all(same(a[k], b[k]) for k in a)
        if isinstance(a, (list, tuple)):
            return type(a) is type(b) and len(a) == len(b) and \
                all(same(x, y) for x, y in zip(a, b))
        return type(a) is type(b) and a == b

    if len(ga.inputs) != len(gb.inputs) or len(ga.nodes) != len(gb.nodes) or \
            ga.num_captures != gb.num_captures or not same(ga.outputs, gb.outputs) or \
            not same(ga.args, gb.args):
        raise _NotPolymorphic
    inputs = [shape(a, b) for a, b in zip(ga.inputs, gb.inputs)]
    nodes = []
    for na, nb in zip(ga.nodes, gb.nodes):
        if na.op != nb.op or not same(na.inputs, nb.inputs) \
                or len(na.outputs) != len(nb.outputs):
            raise _NotPolymorphic
        attrs = na.attrs
        if na.op == "IdentityN":
            rest = ("num_inputs", "forward", "captures")
            if not all(same(na.attrs[k], nb.attrs[k]) for k in rest):
                raise _NotPolymorphic
            ka, kb = na.attrs["gradient"], nb.attrs["gradient"]
            if ka != kb:
                if ka not in GRADIENT_GRAPHS or kb not in GRADIENT_GRAPHS:
                    raise _NotPolymorphic
                backward = _generalize(GRADIENT_GRAPHS[ka], GRADIENT_GRAPHS[kb], symbols)
                attrs = dict(na.attrs, gradient=register_gradient_graph(backward))
        elif _reduces(na.op) and not same(na.attrs, nb.attrs):
            # over all axes of inputs of two ranks: over all axes of any input
            if not (_all_axes(ga, na) and _all_axes(gb, nb)
                    and na.attrs["keepdims"] == nb.attrs["keepdims"]):
                raise _NotPolymorphic
            attrs = {"axis": None, "keepdims": na.attrs["keepdims"]}
        elif not same(na.attrs, nb.attrs):
            raise _NotPolymorphic
        out = [shape(a, b) for a, b in zip(na.outputs, nb.outputs)]
        if None in out and not rank_free(na.op):
            raise _NotPolymorphic  # e.g. a reshape whose target shape depends on the rank
        symbolic = out if any(s is None or any(isinstance(d, str) for d in s)
                              for s in out) else None
        nodes.append(Node(na.op, na.name, na.inputs, attrs, na.outputs, symbolic=symbolic,
                          role=na.role))
    if None not in inputs and any(s is None for n in nodes for s in (n.symbolic or ())):
        raise _NotPolymorphic  # a rank that varies but no input tells
    bound = {d for s in inputs if s is not None for d in s if isinstance(d, str)}
    if set(used) - bound:
        raise _NotPolymorphic  # a size that varies but no input tells
    return Graph(ga.name, ga.inputs, nodes, ga.outputs, ga.num_captures, ga.args,
                 dims={d: used[d] for d in sorted(bound)}, symbolic_inputs=inputs)


def symbolic_key(key, graph):
    """A trace key with the tensors' shapes replaced by the graph's symbolic ones
    (None: any shape)."""
    shapes = iter(graph.symbolic_inputs or [s.shape for s in graph.inputs])
    return tuple(("T", next(shapes), k[2]) if k[0] == "T" else k for k in key)


def key_matches(pattern, key):
    """Whether a call's key fits a polymorphic trace's symbolic key."""
    if len(pattern) != len(key):
        return False
    dims = {}
    for p, k in zip(pattern, key):
        if p[0] != "T" or k[0] != "T":
            if p != k:
                return False
            continue
        if p[2] != k[2]:
            return False
        if p[1] is None:
            continue  # an input of any shape
        if len(p[1]) != len(k[1]):
            return False
        for d, n in zip(p[1], k[1]):
            if isinstance(d, str):
                d = dims.setdefault(d, n)
            if d != n:
                return False
    return True
