"""Checking a graph without running it: every node's output shape and dtype
worked out from its inputs' specs and attributes, compared with what the file
declares, and what one call would cost (bytes held, element operations)
added up against the limits."""
import math

import numpy as np

from ..graph import OPS, bind_dims
from ..ops.declaration import DECLARED
from ..random import OP_TYPES
from ..specs import TensorSpec
from ..tensor import Tensor
from .format import spec_text, specs_text
from .limits import (MAX_GRAPH_BYTES, MAX_GRAPH_WORK, MAX_TENSOR_BYTES, nbytes, size,
                     size_of)


def check_graph(graph, inputs, probes=None):
    """Work out every node's output shape (and, given a dict `probes` to keep
    the answers of `_probe_dtype` in, its dtype)
    from its inputs' specs and attributes, compare them with the declared
    specs, and add up what one call would cost: values held (bytes) and
    element operations. Nothing is computed. `inputs` are the specs of the
    graph's inputs: its own when loading, a call's when a loaded polymorphic
    function is called (symbols take the sizes they give; outputs of any shape
    get the shapes worked out). Raises ValueError("nodes[i]...: ...")."""
    polymorphic = graph.symbolic_inputs is not None
    dims = bind_dims(graph, inputs) if polymorphic else {}

    def sized(spec, shape):
        if not polymorphic or shape is None:
            return TensorSpec(shape, spec.dtype)  # None: any shape, worked out below
        return TensorSpec([dims[d] if isinstance(d, str) else d for d in shape], spec.dtype)

    specs = [TensorSpec(s.shape, s.dtype) for s in inputs]
    held = sum(nbytes(s) for s in specs)
    work = 0
    for i, node in enumerate(graph.nodes):
        declared = [sized(s, shape) for s, shape in
                    zip(node.outputs, node.symbolic or [s.shape for s in node.outputs])]
        ins = [specs[r.x] if r.kind == "t" else graph.spec_of(r) for r in node.inputs]
        try:
            cost, outs = _check_node(node, ins, declared, specs, probes)
        except (ValueError, TypeError, IndexError, ArithmeticError) as e:
            raise ValueError(f"nodes[{i}]: op {node.op} on inputs "
                             f"{specs_text(ins)}: {e}") from None
        except KeyError as e:
            raise ValueError(f"nodes[{i}].attrs: op {node.op} needs the attribute "
                             f"{e.args[0]!r}") from None
        for k, s in enumerate(outs):
            if nbytes(s) > MAX_TENSOR_BYTES:
                raise ValueError(f"nodes[{i}].outputs[{k}]: {spec_text(s)} is more than "
                                 f"the limit of {MAX_TENSOR_BYTES} bytes for one tensor")
        work += cost
        held += sum(nbytes(s) for s in outs)
        specs.extend(outs)
        if held > MAX_GRAPH_BYTES:
            raise ValueError(f"nodes[{i}]: a call would hold {held} bytes of values by "
                             f"here, more than the limit of {MAX_GRAPH_BYTES}")
        if work > MAX_GRAPH_WORK:
            raise ValueError(f"nodes[{i}]: a call would do about {work} element "
                             f"operations by here, more than the limit of {MAX_GRAPH_WORK}")
    return specs


def _check_node(node, ins, outs, specs, probes):
    """Check one node's declared outputs (a shape None: any shape); return its
    cost in element operations and its output specs."""
    op, attrs, shapes = node.op, node.attrs, [s.shape for s in ins]
    if op == "IdentityN":
        forward = [specs[r.x] if r.kind == "t" else TensorSpec(*_shape_dtype(r))
                   for r in attrs["forward"]]
        if len(forward) != len(outs) or any(
                f.dtype != o.dtype or o.shape not in (None, f.shape)
                for f, o in zip(forward, outs)):
            raise ValueError(f"declares outputs {specs_text(outs)} but its forward values "
                             f"are {specs_text(forward)}")
        return sum(size(s) for s in forward), forward
    if op == "AssignVariableOp":
        variable = attrs["variable"]
        target = TensorSpec(variable.shape, variable.dtype)
        if len(ins) != 1 or outs or ins[0] != target:
            raise ValueError(f"takes one value of the variable's {spec_text(target)} "
                             "and has no outputs")
        return size(ins[0]), []
    arity = OPS[op].arity
    if (arity is None and not ins) or (arity is not None and len(ins) != arity):
        raise ValueError(f"takes {'one or more' if arity is None else arity} inputs")
    declared = DECLARED.get(op)
    if declared is not None and declared.shape is not None:
        return _check_declared(declared, attrs, ins, outs, probes)
    if op not in _RULES:
        # Op types declared with their rules (ops/declaration.py) trace and compile,
        # but the loader checks only those that declare a shape rule too.
        raise ValueError("has no shape rule: a saved model cannot hold this op type yet")
    if len(outs) != 1:
        raise ValueError(f"has one output, {len(outs)} declared")
    out = outs[0]
    shape, work = _output_shape(op, attrs, shapes, out.shape)
    if out.shape is not None and shape != out.shape:
        raise ValueError(f"gives shape {shape}, but the node declares {out.shape}")
    if op in _SAME_DTYPE:
        dtype = ins[0].dtype
    elif op in RANDOM_OPS:
        dtype = _draw_dtype(op, attrs)
    elif probes is None:
        dtype = out.dtype
    else:  # the probe's answer depends only on these (attrs here are hashable)
        key = (op, tuple(sorted(attrs.items())), len(shape),
               tuple((s.dtype, len(s.shape)) for s in ins))
        if key not in probes:
            probes[key] = _probe_dtype(op, attrs, ins, len(shape))
        dtype = probes[key]
    if dtype != out.dtype:
        raise ValueError(f"gives dtype {dtype}, but the node declares {out.dtype}")
    out = TensorSpec(shape, dtype)
    return work + sum(size(s) for s in ins) + size(out), [out]


class _Read(dict):
    """A node's attributes, noting which ones a shape rule reads: every one
    must be read (and so checked); any other is an attribute the op has not."""

    def __init__(self, attrs):
        super().__init__(attrs)
        self.read = set()

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)


def _check_declared(declared, attrs, ins, outs, probes):
    """Check a node of an op type declared with a shape rule (ops/declaration.py):
    the rule gives the output shapes and the work, the `dtype` rule (or a probe
    on one-element inputs) the dtypes."""
    op, rule, dtype_rule = declared.op_type, declared.shape, declared.dtype
    seen = _Read(attrs)
    shapes, work = rule([s.shape for s in ins], seen, [o.shape for o in outs])
    extra = sorted(set(attrs) - seen.read)
    if extra:
        raise ValueError(f"has no attribute {extra[0]!r}")
    shapes = [tuple(int(n) for n in shape) for shape in shapes]
    if len(outs) != len(shapes):
        raise ValueError(f"has {len(shapes)} output(s), {len(outs)} declared")
    for k, (shape, out) in enumerate(zip(shapes, outs)):
        if out.shape is not None and shape != tuple(out.shape):
            raise ValueError(f"{_output(k, outs)} shape {shape}, but the node declares "
                             f"{tuple(out.shape)}")
    if dtype_rule is not None:
        dtypes = [np.dtype(d) for d in dtype_rule([s.dtype for s in ins], attrs)]
    elif probes is None:
        dtypes = [o.dtype for o in outs]
    else:  # the probe's answer depends only on these
        key = (op, _hashable(attrs), tuple(len(s) for s in shapes),
               tuple((s.dtype, len(s.shape)) for s in ins))
        if key not in probes:
            probes[key] = _probe_dtypes(op, attrs, ins, rule, len(outs))
        dtypes = probes[key]
    if len(dtypes) != len(outs):
        raise ValueError(f"gives {len(dtypes)} output(s), {len(outs)} declared")
    for k, (dtype, out) in enumerate(zip(dtypes, outs)):
        if dtype != out.dtype:
            raise ValueError(f"{_output(k, outs)} dtype {dtype}, but the node declares "
                             f"{out.dtype}")
    specs = [TensorSpec(shape, dtype) for shape, dtype in zip(shapes, dtypes)]
    return work + sum(size(s) for s in ins) + sum(size(s) for s in specs), specs


def _output(k, outs):
    """How a message names output k: "gives" for an op of one output."""
    return "gives" if len(outs) == 1 else f"output {k} has"


def _hashable(x):
    if isinstance(x, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__,) + tuple(_hashable(v) for v in x)
    return (type(x).__name__, x)


_PROBE_ELEMENTS = 1 << 12  # a probe's outputs: declare a dtype rule for bigger ones


def _probe_dtypes(op, attrs, ins, rule, count):
    """The output dtypes of a declared op type, from one run on inputs of one
    element each; the output shapes it is told are the rule's for those inputs
    (an attribute that asks for a large output must come with a dtype rule)."""
    unit = [(1,) * len(s.shape) for s in ins]
    shapes, _ = rule(unit, attrs, [None] * count)
    if sum(size_of(s) for s in shapes) > _PROBE_ELEMENTS:
        raise ValueError("gives large outputs even for one-element inputs; its family "
                         "must declare a dtype rule")
    units = [Tensor(np.ones(u, s.dtype)) for u, s in zip(unit, ins)]
    out = OPS[op].run(units, attrs, [tuple(s) for s in shapes])
    out = tuple(out) if isinstance(out, (list, tuple)) else (out,)
    if [o.shape for o in out] != [tuple(s) for s in shapes]:
        raise ValueError(f"gives shapes {[o.shape for o in out]} for one-element inputs, "
                         f"its shape rule {[tuple(s) for s in shapes]}")
    return [o.dtype for o in out]


def _output_shape(op, attrs, shapes, declared):
    """(output shape, element operations beyond reading inputs and writing the
    output) by NumPy's and minitape's shape rules. Raises ValueError."""
    if op in _ELEMENTWISE:
        return np.broadcast_shapes(*shapes), 0
    if op in RANDOM_OPS:  # a draw of the declared shape, held and counted as any output
        if declared is None:
            raise ValueError("needs a declared output shape")
        return tuple(declared), 0
    a = shapes[0]
    if declared is None and op in ("Reshape", "BroadcastTo", "StridedSliceGrad"):
        raise ValueError("needs a declared output shape")
    if op == "Reshape":
        if math.prod(a) != math.prod(declared):
            raise ValueError(f"cannot reshape {math.prod(a)} elements to {declared}")
        return declared, 0
    if op == "BroadcastTo":
        return np.broadcast_shapes(a, declared), 0
    if op == "Transpose":
        perm = attrs["perm"]
        if sorted(perm) != list(range(len(a))):
            raise ValueError(f"perm {list(perm)} is not a permutation of {len(a)} axes")
        return tuple(a[p] for p in perm), 0
    if op == "PadV2":
        pads = attrs["paddings"]
        if len(pads) != len(a):
            raise ValueError(f"{len(pads)} paddings for rank {len(a)}")
        return tuple(n + before + after for n, (before, after) in zip(a, pads)), 0
    if op in ("ConcatV2", "Pack"):
        rank = len(a) + (op == "Pack")
        axis = attrs["axis"]
        if not -rank <= axis < rank or (op == "ConcatV2" and not a):
            raise ValueError(f"axis {axis} is out of range for rank {rank}")
        axis %= rank
        if op == "Pack":
            if any(s != a for s in shapes):
                raise ValueError("stacks tensors of different shapes")
            return a[:axis] + (len(shapes),) + a[axis:], 0
        if any(len(s) != len(a) or s[:axis] + s[axis + 1:] != a[:axis] + a[axis + 1:]
               for s in shapes):
            raise ValueError("concatenates tensors whose other sizes differ")
        return a[:axis] + (sum(s[axis] for s in shapes),) + a[axis + 1:], 0
    if op == "StridedSlice":
        return _index_shape(a, attrs["index"]), 0
    if op == "StridedSliceGrad":
        nb = attrs["batch_ndim"]
        if nb > len(a) or nb > len(declared) or a[:nb] != declared[:nb]:
            raise ValueError(f"batch_ndim {nb} does not fit")
        _index_shape(declared[nb:], attrs["index"])
        return declared, 0
    if op in _REDUCTIONS:
        if attrs["axis"] is None:  # all axes
            return (1,) * len(a) if attrs["keepdims"] else (), 0
        rank = max(len(a), 1)  # a scalar takes axis 0 (or -1)
        if any(not -rank <= axis < rank for axis in attrs["axis"]):
            raise ValueError(f"axis {list(attrs['axis'])} is out of range for rank {len(a)}")
        axes, keep = {axis % rank for axis in attrs["axis"]}, attrs["keepdims"]
        return tuple(1 if k in axes else n for k, n in enumerate(a)
                     if keep or k not in axes), 0
    if op == "Softmax":
        if not -len(a) <= attrs["axis"] < len(a):
            raise ValueError(f"axis {attrs['axis']} is out of range for rank {len(a)}")
        return a, 4 * size_of(a)
    if op in ("MatrixSolve", "MatrixInverse"):
        if any(len(s) < 2 for s in shapes):
            raise ValueError("needs rank >= 2")
        if op == "MatrixInverse":
            if a[-1] != a[-2]:
                raise ValueError("needs square matrices")
            return a, size_of(a[:-2]) * a[-1] ** 3
        b = shapes[1]
        batch = np.broadcast_shapes(a[:-2], b[:-2])
        if a[-1] != a[-2] or b[-2] != a[-1]:
            raise ValueError("needs square matrices and a right side with as many rows")
        return batch + b[-2:], size_of(batch) * (a[-1] ** 3 + a[-1] ** 2 * b[-1])
    if op == "Einsum":
        return _einsum_shape(attrs["equation"], shapes)
    # Op types declared with their rules (ops/declaration.py) trace and compile, but
    # the loader checks only the op types it has a shape and cost rule for.
    raise ValueError("has no shape rule: a saved model cannot hold this op type yet")


def _index_shape(shape, index):
    """The shape `x[index]` has, for an x of `shape`, without allocating x: the
    index is applied to a read-only view with zero strides."""
    arrays = [item.shape for item in index if isinstance(item, np.ndarray)]
    if arrays and size_of(np.broadcast_shapes(*arrays)) * max(1, size_of(shape)) \
            > MAX_TENSOR_BYTES:
        raise ValueError("the index selects too many elements")
    return np.broadcast_to(np.zeros((), bool), shape)[index].shape


def _einsum_shape(equation, shapes):
    """(output shape, element operations): NumPy's einsum without `optimize`
    loops over every combination of the distinct indices."""
    lhs, arrow, out = equation.partition("->")
    if not arrow:
        raise ValueError(f"equation {equation!r} is not explicit")
    subs = lhs.split(",")
    if len(subs) != len(shapes):
        raise ValueError(f"equation {equation!r} names {len(subs)} operands")
    sizes = {}
    for sub, shape in zip(subs, shapes):
        if len(sub) != len(shape) or not all(c.isascii() and c.isalpha() for c in sub):
            raise ValueError(f"subscripts {sub!r} do not fit shape {shape}")
        for c, n in zip(sub, shape):
            if sizes.setdefault(c, n) != n:
                raise ValueError(f"index {c!r} has sizes {sizes[c]} and {n}")
    if len(set(out)) != len(out) or any(c not in sizes for c in out):
        raise ValueError(f"output subscripts {out!r} are not distinct input indices")
    return tuple(sizes[c] for c in out), len(shapes) * size_of(sizes.values())


def _draw_dtype(op, attrs):
    """The dtype of a random draw, checked with its bounds (as `mt.random` checks them)."""
    dtype = attrs["dtype"]
    if op != "RandomUniformInt":
        if dtype.kind != "f":
            raise ValueError(f"draws floats, not {dtype}")
        return dtype
    if dtype.kind not in "iu":
        raise ValueError(f"draws integers, not {dtype}")
    lo, hi, info = attrs["minval"], attrs["maxval"], np.iinfo(dtype)
    if not info.min <= lo < hi <= info.max + 1:
        raise ValueError(f"draws from [{lo}, {hi}), which is empty or does not fit {dtype}")
    return dtype


def _probe_dtype(op, attrs, ins, rank):
    """The dtype minitape's own op gives for these input dtypes: run it once on
    inputs of one element each (dtype rules do not depend on sizes). Also
    catches attributes the op refuses."""
    units = [Tensor(np.ones((1,) * len(s.shape), s.dtype)) for s in ins]
    out = OPS[op].run(units, attrs, [(1,) * rank])
    out = out[0] if isinstance(out, (list, tuple)) else out
    if out.ndim != rank:
        raise ValueError(f"gives rank {out.ndim}, the shape rules rank {rank}")
    return out.dtype


_ELEMENTWISE = frozenset(("Identity", "Sigmoid", "Elu", "Softplus", "StopGradient"))
_REDUCTIONS = frozenset(("Sum", "Mean", "Max", "Min", "Prod"))
RANDOM_OPS = frozenset(OP_TYPES)
_RULES = _ELEMENTWISE | _REDUCTIONS | RANDOM_OPS | frozenset((  # the op types _output_shape knows
    "Reshape", "BroadcastTo", "Transpose", "PadV2", "ConcatV2", "Pack", "StridedSlice",
    "StridedSliceGrad", "Softmax", "MatrixSolve", "MatrixInverse", "Einsum"))
_SAME_DTYPE = frozenset(("Reshape", "BroadcastTo", "Transpose", "PadV2", "StridedSlice",
                         "StridedSliceGrad", "Identity", "StopGradient"))


def _shape_dtype(ref):
    value = ref.x._value if ref.kind == "v" else ref.x
    return value.shape, value.dtype
