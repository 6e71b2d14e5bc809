"""Checking a graph without running it: every node's output shape and dtype
worked out from its inputs' specs and attributes, compared with what the file
declares, and what one call would cost (bytes held, element operations)
added up against the limits."""
import numpy as np

from ..graph import OPS, bind_dims
from ..ops.declaration import DECLARED
from ..random import OP_TYPES
from ..specs import TensorSpec
from ..core.tensor import Tensor
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
    op, attrs = node.op, node.attrs
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
    if op not in RANDOM_OPS:
        # Op types declared without a shape rule trace and compile, but the
        # loader checks only those that declare one.
        raise ValueError("has no shape rule: a saved model cannot hold this op type yet")
    if len(outs) != 1:
        raise ValueError(f"has one output, {len(outs)} declared")
    if outs[0].shape is None:  # a draw of the declared shape
        raise ValueError("needs a declared output shape")
    out = TensorSpec(tuple(outs[0].shape), _draw_dtype(op, attrs))
    if out.dtype != outs[0].dtype:
        raise ValueError(f"gives dtype {out.dtype}, but the node declares {outs[0].dtype}")
    return sum(size(s) for s in ins) + size(out), [out]


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


RANDOM_OPS = frozenset(OP_TYPES)


def _shape_dtype(ref):
    value = ref.x._value if ref.kind == "v" else ref.x
    return value.shape, value.dtype
