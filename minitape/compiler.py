"""Compile a traced graph into one straight-line Python function on NumPy arrays.

`mt.function(jit_compile=True)` traces as usual (`function.py`), then hands the
graph to `compile_graph`, which writes the source of one Python function with
one line per node, calls `compile` on it once, and keeps the result with the
trace. A gradient taken inside the function was traced into the same graph
(its rules are minitape ops), so its adjoint lines come out too:

    def f(x):
        mul = x * x                       # Mul
        mul_1 = mul * x                   # Mul
        grad_mul = c0 * x                 # Mul (adjoint)
        ...
        return (mul_1, grad_add)

The program holds no Tensors, tapes or registry look-ups: only NumPy calls.

What is written into the source, and what is not. The text holds identifiers
that this module makes (sanitised variable names, op-derived names, `c0`,
`shape_3`) and the fixed call of each op type from `LINES`. Every attribute
(shapes, axes, einsum equations, indices, constants, variables) is passed in
as a bound value of the function's namespace and named by an identifier, never
pasted into the text, so a graph loaded from a hostile file cannot make code.

Simplifications, each exact: Identity, StopGradient and IdentityN lines become
aliases (IdentityN's outputs are the forward values of its custom gradient);
reshapes and broadcasts to the shape the value already has are dropped; a
node whose inputs are all constants is computed once, here, through the
ordinary op; nodes whose values reach no output and no assignment are dropped.

The rules' zero-times-inf masks have their own module, `program_masks.py`: a
product rule's mask goes into the product's line, and matmul's and einsum's
are checks, behind which a Program keeps the program with the masks.
"""
import functools
import keyword
import math
import operator
import re

import numpy as np

from . import arguments, ops
from .context import state
from .graph import OPS, pack_outputs
from .ops.elementwise import power, unmoved_zeroed
from .ops.unmoved_products import all_finite, unmoved_kernel
from .program_masks import (MasksNeeded, check_finite, is_true, mask_is_idle, masks_in_place,
                            moved, same_value)
from .tensor import Tensor

__all__ = ["compile_graph", "Program", "LINES"]


# --- the NumPy helpers the generated code calls -------------------------------------
# Each computes exactly what the op's forward computes in `minitape/ops`.

def sigmoid(v):
    e = np.exp(-np.abs(v))
    value = np.where(v >= 0, 1 / (1 + e), e / (1 + e)).astype(v.dtype, copy=False)
    return value[()] if value.ndim == 0 else value


def elu(v):
    return np.where(v < 0, np.exp(np.minimum(v, 0)) - 1, v).astype(v.dtype, copy=False)


def softplus(v):
    return np.logaddexp(v, 0).astype(v.dtype, copy=False)


def reduce_max(v, axis, keepdims):
    """np.max, and for nothing to reduce TensorFlow's identity (-inf, or the
    smallest integer), as `mt.reduce_max` computes it."""
    if v.size:
        return np.max(v, axis, keepdims=keepdims)
    lowest = False if v.dtype.kind == "b" else \
        -np.inf if v.dtype.kind in "fc" else np.iinfo(v.dtype).min
    return np.max(v, axis, keepdims=keepdims, initial=lowest)


def reduce_min(v, axis, keepdims):
    if v.size:
        return np.min(v, axis, keepdims=keepdims)
    highest = True if v.dtype.kind == "b" else \
        np.inf if v.dtype.kind in "fc" else np.iinfo(v.dtype).max
    return np.min(v, axis, keepdims=keepdims, initial=highest)


def softmax(v, axis):
    if v.size == 0:  # nothing to normalise (np.max refuses an empty axis)
        return v.copy()
    e = np.exp(v - np.max(v, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def matmul_rows(a, b):
    """(..., m, k) @ (k, n) as ONE matrix product: the stack's rows one below
    the other (what matmul's forward does for a large b, see ops/linalg.py)."""
    return (a.reshape(-1, a.shape[-1]) @ b).reshape(a.shape[:-1] + b.shape[-1:])


def matmul_columns(a, b):
    """(m, k) @ (..., k, n) as ONE matrix product: the stack's columns side by side."""
    k, n = b.shape[-2:]
    out = (a @ np.moveaxis(b, -2, 0).reshape(k, -1)).reshape(a.shape[:1] + b.shape[:-2] + (n,))
    return np.moveaxis(out, 0, -2)


def solve(a, b, adjoint):
    value = np.linalg.solve(np.swapaxes(a, -1, -2) if adjoint else a, b)
    return value.astype(a.dtype, copy=False)


def inv(a):
    return np.linalg.inv(a).astype(a.dtype, copy=False)


def scatter(g, index, shape, nb):
    """Zeros of the batch dims + `shape`, with `g` added at `index` (the
    gradient of indexing; repeated indices add up)."""
    batch = g.shape[:nb]
    out = np.zeros(batch + shape, dtype=g.dtype)
    arrays = [i for i, item in enumerate(index) if isinstance(item, np.ndarray)]
    if not arrays:
        out[(slice(None),) * nb + index] = g
    elif nb and len(arrays) > 1 and arrays[-1] - arrays[0] != len(arrays) - 1:
        for b in np.ndindex(*batch):  # separated index arrays: one batch row at a time
            np.add.at(out[b], index, g[b])
    else:
        np.add.at(out, (slice(None),) * nb + index, g)
    return out


def frozen(value, dtype):
    array = np.array(value, dtype=dtype)
    array.flags.writeable = False
    return array


def assign(variable, value):
    variable._value = frozen(value, variable.dtype)


def assign_add(variable, value):
    """As Variable.assign_add: an integer result that would wrap around raises."""
    variable._value = frozen(arguments.exact_sum(
        variable._what("assign_add"), variable._value, np.asarray(value, variable.dtype), 1),
        variable.dtype)


def assign_sub(variable, value):
    variable._value = frozen(arguments.exact_sum(
        variable._what("assign_sub"), variable._value, np.asarray(value, variable.dtype), -1),
        variable.dtype)


HELPERS = {"np": np, "matmul_rows": matmul_rows, "matmul_columns": matmul_columns,
           "sigmoid": sigmoid, "elu": elu, "softplus": softplus,
           "reduce_max": reduce_max, "reduce_min": reduce_min,
           "softmax": softmax, "solve": solve, "inv": inv, "scatter": scatter,
           "assign": assign, "assign_add": assign_add, "assign_sub": assign_sub,
           "moved": moved, "zero_where_unmoved": unmoved_zeroed, "all_finite": all_finite,
           "check_finite": check_finite}


# --- one line per op type -----------------------------------------------------------
# `{0}`, `{1}`, ... are the node's inputs, `{inputs}` all of them, and any other
# `{name}` is an attribute, bound in the namespace (see `_attributes`).

LINES = {
    "AddV2": "{0} + {1}", "Sub": "{0} - {1}", "Mul": "{0} * {1}", "RealDiv": "{0} / {1}",
    "Pow": "np.where(({0} == -np.inf) & ({1} == 0.5), -{0}, {0} ** {1})", "Neg": "-{0}",
    "Maximum": "np.maximum({0}, {1})", "Minimum": "np.minimum({0}, {1})",
    "Square": "np.square({0})", "Sqrt": "np.sqrt({0})", "Exp": "np.exp({0})",
    "Log": "np.log({0})", "Sin": "np.sin({0})", "Cos": "np.cos({0})",
    "Tanh": "np.tanh({0})", "Abs": "np.abs({0})", "Sign": "np.sign({0})",
    "Round": "np.round({0})", "Floor": "np.floor({0})",
    "Equal": "np.equal({0}, {1})", "NotEqual": "np.not_equal({0}, {1})",
    "Less": "np.less({0}, {1})", "LessEqual": "np.less_equal({0}, {1})",
    "Greater": "np.greater({0}, {1})", "GreaterEqual": "np.greater_equal({0}, {1})",
    "SelectV2": "np.where({0}, {1}, {2})",
    "Sigmoid": "sigmoid({0})", "Relu": "np.maximum({0}, 0)", "Elu": "elu({0})",
    "Softplus": "softplus({0})", "Softmax": "softmax({0}, {axis})",
    "MatrixInverse": "inv({0})", "MatrixSolve": "solve({0}, {1}, {adjoint})",
    "Cast": "{0}.astype({dtype})",
    "Reshape": "np.reshape({0}, {shape})", "BroadcastTo": "np.broadcast_to({0}, {shape})",
    "Transpose": "np.transpose({0}, {perm})",
    "PadV2": "np.pad({0}, {paddings}, constant_values={fill})",
    "ConcatV2": "np.concatenate(({inputs},), {axis})",
    "Pack": "np.stack(({inputs},), {axis})",
    "StridedSlice": "{0}[{index}]",
    "StridedSliceGrad": "scatter({0}, {index}, {shape}, {batch_ndim})",
    "Sum": "np.sum({0}, {axis}, keepdims={keepdims})",
    "Mean": "np.mean({0}, {axis}, keepdims={keepdims})",
    "Max": "reduce_max({0}, {axis}, keepdims={keepdims})",
    "Min": "reduce_min({0}, {axis}, keepdims={keepdims})",
    "Prod": "np.prod({0}, {axis}, keepdims={keepdims})",
    "Einsum": "np.einsum({equation}, {inputs})",
    # a rule's zero-times-inf mask (ops.elementwise.moved; see `moved` above)
    "ZeroWhereUnmoved": "zero_where_unmoved({inputs})",
    # matmul's and einsum's masks (ops/unmoved_products.py), the attributes bound
    "UnmovedEinsum": "{unmoved}({inputs})", "AllFinite": "all_finite({inputs})",
}
# The NumPy function each line above computes, for the elementwise ops: where
# an op's forward (`ops/elementwise.py`, its `numpy_fn`) runs another function,
# the line calls that function instead, so a program computes what the op does.
_LINE_FUNCTIONS = {
    "AddV2": (ops.add, operator.add), "Sub": (ops.subtract, operator.sub),
    "Mul": (ops.multiply, operator.mul), "RealDiv": (ops.divide, operator.truediv),
    "Pow": (ops.pow, power), "Neg": (ops.negative, operator.neg),
    "Square": (ops.square, np.square), "Sqrt": (ops.sqrt, np.sqrt),
    "Exp": (ops.exp, np.exp), "Log": (ops.log, np.log), "Sin": (ops.sin, np.sin),
    "Cos": (ops.cos, np.cos), "Tanh": (ops.tanh, np.tanh), "Abs": (ops.abs, np.abs),
    "Sign": (ops.sign, np.sign), "Round": (ops.round, np.round),
    "Floor": (ops.floor, np.floor)}


def _forward_function(op_type):
    """The op's own NumPy function when its line would compute something else."""
    op, written = _LINE_FUNCTIONS.get(op_type, (None, None))
    fn = getattr(op, "numpy_fn", written)
    return None if fn is written else fn


_MATMUL = {(False, False): "{0} @ {1}", (True, False): "np.swapaxes({0}, -1, -2) @ {1}",
           (False, True): "{0} @ np.swapaxes({1}, -1, -2)",
           (True, True): "np.swapaxes({0}, -1, -2) @ np.swapaxes({1}, -1, -2)"}
_ASSIGN = {"assign": "assign({variable}, {0})", "assign_add": "assign_add({variable}, {0})",
           "assign_sub": "assign_sub({variable}, {0})"}
_FOLD_SIZE = 4096  # a stack times a matrix this large is folded into one product


def _template(node, in_shapes):
    """The line of `node`, from minitape's fixed tables only."""
    if node.op == "MatMul":
        ta, tb = bool(node.attrs["transpose_a"]), bool(node.attrs["transpose_b"])
        line = _MATMUL[ta, tb]
        if None not in in_shapes and not ta and not tb:
            (a, b) = in_shapes
            if len(a) > 2 and len(b) == 2 and math.prod(b) >= _FOLD_SIZE:
                return "matmul_rows({0}, {1})"
            if len(b) > 2 and len(a) == 2 and math.prod(a) >= _FOLD_SIZE:
                return "matmul_columns({0}, {1})"
        if None not in in_shapes and len(in_shapes[0]) != len(in_shapes[1]):
            # A transposed matrix against a stack of matrices: NumPy's matmul is
            # several times faster when the transposed one is contiguous.
            line = line.replace("np.swapaxes({0}, -1, -2)",
                                "np.ascontiguousarray(np.swapaxes({0}, -1, -2))")
            line = line.replace("np.swapaxes({1}, -1, -2)",
                                "np.ascontiguousarray(np.swapaxes({1}, -1, -2))")
        return line
    if node.op == "AssignVariableOp":
        mode = node.attrs["mode"]
        if mode not in _ASSIGN:
            raise ValueError(f"AssignVariableOp: unknown mode {mode!r}")
        return _ASSIGN[mode]
    return LINES.get(node.op)


def _attributes(node, shapes, in_dtypes):
    """The values a node's line names (bound, never pasted into the source)."""
    a, op = node.attrs, node.op
    if op in ("Reshape", "BroadcastTo"):
        return {"shape": shapes[0]}
    if op in ("Sum", "Mean", "Max", "Min", "Prod"):
        return {"axis": None if a["axis"] is None else tuple(a["axis"]),
                "keepdims": bool(a["keepdims"])}
    if op == "Cast":
        return {"dtype": np.dtype(a["DstT"])}
    if op == "PadV2":
        return {"paddings": a["paddings"],
                "fill": np.asarray(a["constant_values"], dtype=in_dtypes[0])}
    if op == "StridedSliceGrad":
        nb = int(a["batch_ndim"])
        return {"index": a["index"], "shape": tuple(shapes[0][nb:]), "batch_ndim": nb}
    if op == "MatrixSolve":
        return {"adjoint": bool(a["adjoint"])}
    if op == "UnmovedEinsum":
        return {"unmoved": functools.partial(unmoved_kernel, a["mode"], a["equation"],
                                             a["factors"], tuple(a["masks"]))}
    names = {"Softmax": ("axis",), "Transpose": ("perm",), "ConcatV2": ("axis",),
             "Pack": ("axis",), "StridedSlice": ("index",), "Einsum": ("equation",)}
    return {k: a[k] for k in names.get(op, ())}


# --- names ----------------------------------------------------------------------------

_WORD = re.compile(r"[^A-Za-z0-9_]+")


def identifier(text, fallback="v"):
    """`text` made into a Python identifier: only [A-Za-z0-9_], not starting with
    a digit, not a keyword, not a name the generated code uses."""
    word = re.sub("_+", "_", _WORD.sub("_", str(text))).strip("_")[:40]
    if not word or word[0].isdigit():
        word = f"{fallback}_{word}" if word else fallback
    if keyword.iskeyword(word) or word in HELPERS or word in ("Tensor", "self"):
        word += "_"
    return word


def _variable_name(variable):
    """`dense/kernel:0` -> `kernel`."""
    name = getattr(variable, "name", "variable").split(":")[0].split("/")[-1]
    return identifier(name, "variable")


_OP_WORDS = {"AddV2": "add", "Sub": "sub", "Mul": "mul", "RealDiv": "div", "Neg": "neg",
             "MatMul": "matmul", "BroadcastTo": "broadcast", "StridedSlice": "slice",
             "StridedSliceGrad": "scatter", "ConcatV2": "concat", "Pack": "stack",
             "PadV2": "pad", "SelectV2": "where", "MatrixInverse": "inv",
             "MatrixSolve": "solve", "ZeroWhereUnmoved": "masked",
             "UnmovedEinsum": "masked", "AllFinite": "finite"}


class _Names:
    """Hands out unique identifiers: `mul`, `mul_1`, `mul_2`, ..."""

    def __init__(self):
        self.used = set(HELPERS) | {"Tensor"}
        self.count = {}  # base -> the next suffix to try

    def new(self, base):
        name, k = base, self.count.get(base, 0)
        if k:
            name = f"{base}_{k}"
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.count[base] = k + 1
        self.used.add(name)
        return name


# --- the compiled program -------------------------------------------------------------

class Program:
    """A graph compiled for one set of input shapes: `run(arrays)` returns the
    flat output values (NumPy), `source` is the text that was compiled.
    `fallback` makes the program with matmul's and einsum's masks written out
    (compile_graph's `masks`), which runs a call whose checks fail, after the
    variables the program assigns get their values back."""

    def __init__(self, source, fn, outputs, fallback=None, assigned=()):
        self.source, self.fn, self.outputs = source, fn, outputs
        self.fallback, self.assigned, self.masked = fallback, assigned, None

    def __call__(self, arrays):
        """The outputs, as Tensors in the graph's output structure."""
        if self.fallback is None:
            values = self.fn(*arrays)
        else:
            before = [v._value for v in self.assigned]
            try:
                values = self.fn(*arrays)
            except MasksNeeded:
                for v, value in zip(self.assigned, before):
                    v._value = value
                if self.masked is None:
                    self.masked = self.fallback()
                values = self.masked.fn(*arrays)
        values = iter(values)
        return pack_outputs(self.outputs, lambda ref: Tensor(next(values)))

    def __repr__(self):
        return self.source


def _is_seed(value):
    """A constant of ones, or of one-hot rows: what a tape's backward pass (or a
    Jacobian) starts from, so lines computed from it are adjoints."""
    v = np.asarray(value)
    if v.dtype.kind not in "fc" or v.size == 0:
        return False
    if not np.all((v == 0) | (v == 1)):
        return False
    if np.all(v == 1):
        return True
    return v.ndim >= 1 and np.all(v.reshape(v.shape[0], -1).sum(axis=1) == 1)


def compile_graph(graph, input_names=None, shapes=None, name=None, masks=False):
    """Write and compile the program of `graph`.

    `input_names` name the graph's inputs (the Python parameters), `shapes` are
    the concrete output shapes of each node (default: the traced ones; a
    shape-polymorphic graph passes them for the call's sizes).

    matmul's and einsum's masks (`ops/unmoved_products.py`): unless `masks`,
    the program assumes that their AllFinite checks pass, so each mask is the
    plain product (or zeros, or the value it guards) and the values only the
    masks would read are not computed; each check is a line
    `check_finite(...)` that raises MasksNeeded where it fails, and the
    Program then runs the program written with `masks=True` instead.
    """
    from_graph = shapes is None
    shapes = shapes or [[s.shape for s in node.outputs] for node in graph.nodes]
    # The (shape, dtype) of every value; a polymorphic graph's inputs: shape None.
    specs = [(tuple(s.shape) if from_graph else None, s.dtype) for s in graph.inputs]
    for node, out in zip(graph.nodes, shapes):
        specs += [(None if o is None else tuple(o), s.dtype) for o, s in zip(out, node.outputs)]
    names = _Names()
    namespace = dict(HELPERS)
    expr = {}          # value number -> the identifier holding it
    constants = {}     # value number -> its constant array (folded or captured)
    adjoint = set()    # value numbers computed from a seed
    constant_names = {}  # small constants by value, large ones by id -> identifier
    header = []

    def bind(base, value):
        ident = names.new(base)
        namespace[ident] = value
        return ident

    # The function's own name first: exec binds it in the namespace, so it must
    # be a name nothing else (an attribute, a variable, a helper) uses.
    fname = names.new(identifier(name or graph.name, "f"))
    params = []
    for k, spec in enumerate(graph.inputs):
        given = input_names[k] if input_names and k < len(input_names) else f"x{k}"
        expr[k] = names.new(identifier(given, "x"))
        params.append(expr[k])

    def constant(array):
        array = np.asarray(array) if not isinstance(array, np.generic) else array
        key = (array.dtype.str, array.shape, array.tobytes()) if array.size <= 16 \
            else id(array)
        ident = constant_names.get(key)
        if ident is None:
            ident = constant_names[key] = bind(f"c{len(constant_names)}", array)
            keep_alive.append(array)
            if np.ndim(array) == 0 and np.asarray(array).dtype.kind in "biuf":
                header.append(f"    # {ident} = {float(array)!r} ({np.asarray(array).dtype})")
            else:
                header.append(f"    # {ident}: constant of shape {tuple(np.shape(array))}")
        return ident

    keep_alive = []
    mask_zeros = set()  # value numbers: zeros an if_masked mask gives where its check passes
    variables = {}     # id(variable) -> (bound name, current read name or None)

    # 1. Which nodes matter: walk back from the outputs and the assignments.
    live_values = set()
    for r in _flat_refs(graph.outputs):
        if r.kind == "t":
            live_values.add(r.x)
    live_nodes = [False] * len(graph.nodes)
    for i in range(len(graph.nodes) - 1, -1, -1):
        node = graph.nodes[i]
        outs = range(node.first, node.first + len(node.outputs))
        if node.op == "AssignVariableOp" or any(o in live_values for o in outs):
            live_nodes[i] = True
            refs = node.inputs if node.op != "IdentityN" else node.attrs["forward"]
            if node.op == "UnmovedEinsum" and not masks:  # the check, and what it guards
                refs = refs[:1] + (refs[1:2] if node.attrs["mode"] != "if_masked" else [])
            for r in refs:
                if r.kind == "t":
                    live_values.add(r.x)

    def bind_variable(v):
        """The name of the Variable object itself (reads and assignments use it)."""
        if id(v) not in variables:
            variables[id(v)] = (bind(_variable_name(v) + "_var", v), None)
        return variables[id(v)][0]

    lines = []
    computed = {}  # the right-hand side of each line -> its name (no line twice)

    def read(ref):
        """The expression for an input reference (emitting a variable read)."""
        if ref.kind == "t":
            if ref.x not in expr:  # a folded constant, named when first used
                expr[ref.x] = constant(constants[ref.x])
            return expr[ref.x]
        if ref.kind == "c":
            return constant(ref.x)
        v = ref.x
        bound, current = variables.get(id(v), (None, None))
        if bound is None:
            bound = bind_variable(v)
        if current is None:
            current = names.new(_variable_name(v))
            lines.append(f"    {current} = {bound}._value  # read variable")
        variables[id(v)] = (bound, current)
        return current

    for i, node in enumerate(graph.nodes):
        if not live_nodes[i]:
            continue
        out_shapes = shapes[i]
        if node.op == "IdentityN":  # the outputs are the custom gradient's forward values
            for k, r in enumerate(node.attrs["forward"]):
                _alias(node.first + k, r, expr, constants, adjoint, read)
            continue
        if node.op in ("Identity", "StopGradient") or (
                node.op == "PadV2" and not node.attrs["paddings"]) or (
                node.op in ("Reshape", "BroadcastTo")
                and out_shapes[0] is not None
                and _spec(node.inputs[0], specs)[0] == tuple(out_shapes[0])):
            _alias(node.first, node.inputs[0], expr, constants, adjoint, read)
            continue
        ins = node.inputs
        is_adjoint = any(r.kind == "t" and r.x in adjoint for r in ins) or (
            node.op not in ("AddV2", "Sub") and any(
                r.kind == "c" and _is_seed(r.x) for r in ins))
        if is_adjoint:
            adjoint.update(range(node.first, node.first + len(node.outputs)))
        folded = _fold(node, ins, constants, out_shapes) if node.op != "AssignVariableOp" \
            else None
        if folded is not None:  # computed once, here
            constants[node.first] = folded
            if node.op == "AddV2" and all(r.kind == "t" and r.x in mask_zeros for r in ins):
                mask_zeros.add(node.first)
            continue
        if node.op == "AllFinite" and not masks:  # assumed to hold; checked (see Program)
            check = f"    check_finite({', '.join(read(r) for r in ins)})  # AllFinite"
            if check not in lines:
                lines.append(check)
            constants[node.first] = np.array(True)
            continue
        if node.op == "UnmovedEinsum" and not masks and is_true(ins[0], constants):
            if node.attrs["mode"] == "if_masked":
                constants[node.first] = np.zeros(out_shapes[0], node.outputs[0].dtype)
                mask_zeros.add(node.first)
            else:  # select's z, if_plain's operand
                _alias(node.first, ins[1], expr, constants, adjoint, read)
            continue
        if node.op == "AddV2" and mask_zeros:  # y + a mask's zeros: y, as eagerly
            other = [r for r in ins if not (r.kind == "t" and r.x in mask_zeros)]
            if len(other) == 1 and out_shapes[0] is not None and \
                    _spec(other[0], specs)[0] == tuple(out_shapes[0]):
                _alias(node.first, other[0], expr, constants, adjoint, read)
                continue
        in_dtypes = [_spec(r, specs)[1] for r in ins]
        in_shapes = [_spec(r, specs)[0] for r in ins]
        known = [constants.get(r.x) if r.kind == "t" else r.x if r.kind == "c" else None
                 for r in ins]
        if node.op == "Pow" and _zeros(known[1]) and out_shapes[0] is not None:
            # x ** 0 is 1 for every x (NaN and inf too): a constant
            constants[node.first] = np.ones(out_shapes[0], in_dtypes[0])
            continue
        if node.op == "SelectV2" and out_shapes[0] is not None and all(
                _zeros(k) and np.asarray(k).dtype.kind == "f" and not np.signbit(k).any()
                for k in known[1:]):
            # where(c, 0, 0) is 0 whatever c is (a zero rule's gradient, masked)
            constants[node.first] = np.zeros(out_shapes[0], node.outputs[0].dtype)
            continue
        same = _unchanged_operand(node, known, in_shapes, out_shapes[0] if out_shapes else None)
        if node.op == "ZeroWhereUnmoved" and len(ins) == 3 and same_value(ins[1], ins[2], expr):
            same = 0  # the term is t itself (its partial derivative was 1): never NaN at t = 0
        if same is not None:  # x * 1, x ** 1: the line would copy x
            _alias(node.first, ins[same], expr, constants, adjoint, read)
            continue
        attrs = _attributes(node, out_shapes, in_dtypes)
        template = _template(node, in_shapes)
        if node.op == "Pow" and known[1] is not None and not np.any(np.asarray(known[1]) == 0.5):
            template = "{0} ** {1}"  # NumPy's ** is C's pow but for an exponent of 0.5 (sqrt)
        forward = _forward_function(node.op)
        if forward is not None:  # named as the op's function is (bound, never pasted)
            word = identifier(getattr(forward, "__name__", "forward"), "forward")
            template = f"{{{word}}}(" + ", ".join(f"{{{k}}}" for k in range(len(ins))) + ")"
            attrs = {word: forward}
        if node.op == "ZeroWhereUnmoved" and ins[0].kind == ins[1].kind == "t" \
                and ins[0].x == ins[1].x:  # moved(t, term[, factor]), as the rules write it
            template = "moved({2}, {1}" + (", {3})" if len(ins) == 4 else ")")
        if node.op == "SelectV2" and _is_mask_product(known, in_shapes, out_shapes[0]):
            template = "{1} * {0}"  # where(mask, c, 0) for a constant c >= 0: c * mask
        args = [read(r) for r in ins]
        if template is None:  # an op type without a line: run it through its op
            fn = _through_the_op(node, out_shapes)
            template = "{run}({inputs})"
            attrs = {"run": fn}
        fields = {key: bind(f"{key}", value) for key, value in attrs.items()}
        if node.op == "AssignVariableOp":
            fields["variable"] = bind_variable(node.attrs["variable"])
        fields["inputs"] = ", ".join(args)
        text = template.format(*args, **fields)
        word = _OP_WORDS.get(node.op, node.op.lower())
        comment = _WORD.sub("_", node.op) + (" (adjoint)" if is_adjoint else "")
        label = re.sub("_+", "_", _WORD.sub("_", str(node.name))).strip("_")[:40]
        if label.lower() != node.op.lower() and node.op != "AssignVariableOp":
            comment += f" {label}"
        if node.op == "AssignVariableOp":
            lines.append(f"    {text}  # {comment}")
            bound, _ = variables.get(id(node.attrs["variable"]), (None, None))
            if bound is not None:
                variables[id(node.attrs["variable"])] = (bound, None)  # read again
            continue
        if len(node.outputs) > 1:  # an op with several outputs (qr, svd, ...)
            word = identifier(word, "op")
            outs = [names.new(("grad_" if is_adjoint else "") + word) for _ in node.outputs]
            expr.update({node.first + k: o for k, o in enumerate(outs)})
            lines.append(f"    {', '.join(outs)} = {text}  # {comment}")
            continue
        if text in computed:  # the same op on the same values: computed already
            expr[node.first] = computed[text]
            continue
        word = identifier(word, "op")
        out = names.new(("grad_" if is_adjoint else "") + word)
        expr[node.first] = computed[text] = out
        lines.append(f"    {out} = {text}  # {comment}")

    flat = []
    for r in _flat_refs(graph.outputs):
        flat.append(read(r))
    header, lines = _drop_unused(header, lines, flat)
    lines, flat = masks_in_place(lines, flat)
    source = (f"def {fname}({', '.join(params)}):\n" + "\n".join(header + lines)
              + ("\n" if header or lines else "")
              + f"    return ({', '.join(flat)}{',' if len(flat) == 1 else ''})\n")
    code = compile(source, f"<minitape compiled {fname}>", "exec")
    exec(code, namespace)
    fallback = None
    if any(line.lstrip().startswith("check_finite(") for line in lines):
        def fallback():
            return compile_graph(graph, input_names, None if from_graph else shapes, name,
                                 masks=True)
    assigned = [node.attrs["variable"] for node in graph.nodes
                if node.op == "AssignVariableOp"]
    return Program(source, namespace[fname], graph.outputs, fallback, assigned)


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _drop_unused(header, lines, returned):
    """Lines whose value nothing uses (left behind by a simplification, such as
    a mask `where` on a constant condition), and their constants, dropped."""
    used, kept = set(returned), []
    for line in reversed(lines):
        code = line.split("  #", 1)[0]
        target, _, value = code.strip().partition(" = ")
        if value and not used.intersection(target.split(", ")):  # (several outputs: a, b = ...)
            continue
        used.update(_NAME.findall(value or code))
        kept.append(line)
    kept.reverse()
    return [h for h in header if h.split()[1].rstrip(":") in used], kept


def _alias(number, ref, expr, constants, adjoint, read):
    if ref.kind == "t":
        if ref.x in expr:
            expr[number] = expr[ref.x]
        if ref.x in constants:
            constants[number] = constants[ref.x]
        if ref.x in adjoint:
            adjoint.add(number)
    else:
        expr[number] = read(ref)
        if ref.kind == "c":
            constants[number] = ref.x


def _ones(value):
    return value is not None and np.asarray(value).dtype.kind in "fc" and \
        bool(np.all(np.asarray(value) == 1))


def _zeros(value):
    return value is not None and np.asarray(value).dtype.kind in "fc" and \
        not np.any(np.asarray(value))


def _unchanged_operand(node, known, in_shapes, out_shape):
    """Which input a Mul by ones, or a Pow with exponent one, returns unchanged
    (same shape, same dtype, same bits), or None."""
    if out_shape is None or None in in_shapes:
        return None  # shapes known only at run time
    if node.op == "Mul":
        for k in (0, 1):
            if _ones(known[1 - k]) and tuple(in_shapes[k]) == tuple(out_shape):
                return k
    if node.op == "Pow" and _ones(known[1]) and tuple(in_shapes[0]) == tuple(out_shape):
        return 0
    if node.op == "ZeroWhereUnmoved" and mask_is_idle(known, in_shapes, out_shape):
        return 0
    if node.op == "SelectV2" and known[0] is not None and np.asarray(known[0]).size:
        # where(c, x, y) with a constant c all True (all False) is x (y): a
        # gradient rule's zero-upstream mask against a seed of ones
        condition = np.asarray(known[0])
        pick = 1 if condition.all() else 2 if not condition.any() else None
        if pick is not None and tuple(in_shapes[pick]) == tuple(out_shape):
            return pick
    return None


def _is_mask_product(known, in_shapes, out_shape):
    """where(mask, c, 0) equals c * mask, bit for bit, when c is a constant whose
    numbers are all finite and >= 0 (no -0.0, no NaN * 0): Jacobian seeds are."""
    _, c, zero = known
    if c is None or zero is None or None in in_shapes or out_shape is None:
        return False
    c, zero = np.asarray(c), np.asarray(zero)
    return (c.dtype.kind == "f" and zero.size == 1 and not np.any(zero)
            and not np.signbit(zero).any() and bool(np.all(np.isfinite(c) & (c >= 0)))
            and np.broadcast_shapes(c.shape, tuple(in_shapes[0])) == tuple(out_shape)
            and np.broadcast_shapes(c.shape, zero.shape) == c.shape)


def _fold(node, ins, constants, out_shapes):
    """The node's value when all its inputs are constants (else None), computed
    once through the ordinary op with no tape watching."""
    if not ins or node.op not in OPS or len(node.outputs) != 1:
        return None
    values = []
    for r in ins:
        if r.kind == "c":
            values.append(r.x)
        elif r.kind == "t" and r.x in constants:
            values.append(constants[r.x])
        else:
            return None
    saved = state.tapes
    state.tapes = []
    try:
        out = OPS[node.op].run([Tensor(v) for v in values], node.attrs, out_shapes)
    finally:
        state.tapes = saved
    out = out[0] if isinstance(out, (list, tuple)) else out
    return out._value


def _through_the_op(node, out_shapes):
    """A kernel for an op type with no line of its own (one added to the
    replay table after this compiler was written): it runs the op on Tensors."""
    opdef, attrs = OPS[node.op], node.attrs

    def run(*arrays):
        out = opdef.run([Tensor(a) for a in arrays], attrs, out_shapes)
        if len(node.outputs) > 1:
            return tuple(t._value for t in out)
        return (out[0] if isinstance(out, (list, tuple)) else out)._value
    return run


def _flat_refs(structure):
    if structure is None:
        return []
    if isinstance(structure, dict):
        return [r for v in structure.values() for r in _flat_refs(v)]
    if isinstance(structure, (list, tuple)):
        return [r for v in structure for r in _flat_refs(v)]
    return [structure]


def _spec(ref, specs):
    """(shape, dtype) of a node input."""
    if ref.kind == "t":
        return specs[ref.x]
    value = ref.x._value if ref.kind == "v" else ref.x
    return tuple(np.shape(value)), np.asarray(value).dtype
