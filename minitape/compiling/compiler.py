"""Compile a traced graph into one straight-line Python function on NumPy arrays.

`mt.function(jit_compile=True)` traces as usual (`functions/function.py`), then hands the
graph to `compile_graph`, which writes the source of one Python function with
one line per node, calls `compile` on it once, and keeps the result with the
trace. A gradient taken inside the function was traced into the same graph
(its rules are minitape ops), so its adjoint lines come out too:

    def f(x):
        # c0 = 3.0 (float32)
        # c1 = 2.0 (float32)
        pow = x ** c0                     # Pow
        grad_pow = x ** c1                # Pow (adjoint)
        grad_mul = c0 * grad_pow          # Mul (adjoint)
        return (pow, grad_mul)

The program holds no Tensors, tapes or registry look-ups: only NumPy calls.
A line's name says where it came from: `grad_...` for a node the tape's
gradient or jacobian call recorded (the trace keeps each node's `role`, see
`context.state.derivative`), `tangent_...` for one a forward accumulator's JVP
rule recorded, the op's word (`mul`, `matmul`) for the function's own.

What is written into the source, and what is not. The text holds identifiers
that this module makes (sanitised variable names, op-derived names, `c0`,
`shape_3`) and the fixed line each op's declaration gives (`Declaration.line`;
`LINES` for random draws). Every attribute
(shapes, axes, einsum equations, indices, constants, variables) is passed in
as a bound value of the function's namespace and named by an identifier, never
pasted into the text, so a graph loaded from a hostile file cannot make code.
The comments at the top list each bound name and its value: numbers, shapes
and plain names only (`program.plain`: anything with a quote, a backslash or a line
break is "(not shown)").

Simplifications, each exact: Identity, StopGradient and IdentityN lines become
aliases (IdentityN's outputs are the forward values of its custom gradient);
reshapes and broadcasts to the shape the value already has are dropped; a
node whose inputs are all constants is computed once, here, through the
ordinary op; nodes whose values reach no output and no assignment are dropped;
a mask applied twice is applied once (`_mask_once`); a stack of matrices times
a matrix is one product (`matmul_rows`); a constant array of one repeated
number (a mean's 1 / n, an unconnected gradient's zeros) beside an operand of
the output's shape is that number. For speed, 0-d float constants that
only scalar lines use are NumPy scalars (`_SCALAR_DTYPES`), and lines call
methods (`x.reshape(shape)`) rather than NumPy's wrappers of them.

The rules' zero-times-inf masks have their own module, `zero_times_inf.py` here: a
product rule's mask goes into the product's line, and matmul's and einsum's
are checks, behind which a Program keeps the program with the masks. Behind
those checks, the first matmul to meet a Jacobian's one-hot seed writes its
input's numbers into zeros instead (`jacobian_seeds.py`).
"""
import functools
import keyword
import re

import numpy as np

from .. import random
from ..core.context import state
from ..graph import OPS
from ..ops.declaration import DECLARED
from ..ops.matmul_and_solve import matmul_columns, matmul_rows
from ..ops.zero_times_inf import all_finite, unmoved_zeroed
from .program import (NAME, Names, Program, assign, assign_add, assign_sub, drop_unused, plain,
                      renumber, shown)
from .zero_times_inf import (check_finite, is_true, mask_is_idle, masks_in_place, moved,
                            same_value)
from .jacobian_seeds import identity_stack, seed_of, seed_product
from ..core.tensor import Tensor, Variable

__all__ = ["compile_graph", "Program", "LINES"]


HELPERS = {"np": np, "matmul_rows": matmul_rows, "matmul_columns": matmul_columns,
           **{name: fn for d in DECLARED.values() for name, fn in d.helpers.items()},
           "assign": assign, "assign_add": assign_add, "assign_sub": assign_sub,
           "moved": moved, "zero_where_unmoved": unmoved_zeroed, "all_finite": all_finite,
           "check_finite": check_finite, "seed_product": seed_product}


# --- one line per op type -----------------------------------------------------------
# `{0}`, `{1}`, ... are the node's inputs, `{inputs}` all of them, and any other
# `{name}` is an attribute, bound in the namespace (see `_attributes`). An op's
# declaration gives its line (`Declaration.line`).

LINES = {  # op types that are not declared ops: each declaration has its own line
    # random draws: the next numbers of the node's own stream (random.Stream), each call
    "RandomStandardNormal": "{stream}.normal({shape}, {dtype})",
    "RandomUniform": "{stream}.uniform({shape}, {dtype})",
    "RandomUniformInt": "{stream}.integers({shape}, {dtype}, {minval}, {maxval})",
}


def _simplify(op_type):
    """The exact rewrites the op's declaration allows (`Declaration.simplify`)."""
    declared = DECLARED.get(op_type)
    return declared.simplify if declared is not None else {}


def _mask(op_type):
    """"elementwise", "contraction" or "check" for the ops of the rules'
    zero-times-inf masks (ops/zero_times_inf.py), else None."""
    return _simplify(op_type).get("mask")


_ASSIGN = {"assign": "assign({variable}, {0})", "assign_add": "assign_add({variable}, {0})",
           "assign_sub": "assign_sub({variable}, {0})"}
def _template(node, in_shapes, known, attrs=None):
    """The line of `node`, from minitape's fixed tables only: its declaration's
    line (a function of the attributes, here `attrs` when the compiler changed
    a transpose flag, the input shapes and the known constants), its NumPy
    function's call, or None (the op is run through minitape)."""
    if node.op == "AssignVariableOp":
        mode = node.attrs["mode"]
        if mode not in _ASSIGN:
            raise ValueError(f"AssignVariableOp: unknown mode {mode!r}")
        return _ASSIGN[mode]
    declared = DECLARED.get(node.op)
    if declared is None or declared.line is None:
        return LINES.get(node.op)
    if callable(declared.line):
        return declared.line(node.attrs if attrs is None else attrs, in_shapes, known)
    return declared.line


def _attributes(node, shapes, in_dtypes):
    """The values a node's line names (bound, never pasted into the source)."""
    a, op = node.attrs, node.op
    declared = DECLARED.get(op)
    if declared is not None and declared.line_attrs is not None:
        return declared.line_attrs(a, shapes, in_dtypes)
    if op in random.OP_TYPES:
        bounds = {k: a[k] for k in ("minval", "maxval") if k in a}
        return {"stream": node.draws(), "shape": tuple(shapes[0]), "dtype": np.dtype(a["dtype"]),
                **bounds}
    return {}


# --- names ----------------------------------------------------------------------------

_WORD = re.compile(r"[^A-Za-z0-9_]+")


def identifier(text, fallback="v", helpers=True):
    """`text` made into a Python identifier: only [A-Za-z0-9_], not starting with
    a digit, not a keyword, not a name the generated code uses (with `helpers`
    False, a helper's name is left as it is: `Names` numbers it, `elu_1`)."""
    word = re.sub("_+", "_", _WORD.sub("_", str(text))).strip("_")[:40]
    if not word or word[0].isdigit():
        word = f"{fallback}_{word}" if word else fallback
    if keyword.iskeyword(word) or (helpers and word in HELPERS) or word in ("Tensor", "self"):
        word += "_"
    return word


def _variable_name(variable):
    """`dense/kernel:0` -> `kernel`."""
    name = getattr(variable, "name", "variable").split(":")[0].split("/")[-1]
    return identifier(name, "variable")


_OP_WORDS = {"RandomStandardNormal": "normal", "RandomUniform": "uniform",
             "RandomUniformInt": "integers"}


def _word(op_type):
    """The name of an op's lines: its declaration's word, or the table's."""
    declared = DECLARED.get(op_type)
    return declared.word if declared is not None else _OP_WORDS.get(op_type, op_type.lower())


# The prefix of a line's name, and the note in its comment, by the node's role:
# lines a tape's gradient or jacobian call computed, and lines JVP rules computed.
_PREFIX = {"adjoint": "grad_", "tangent": "tangent_"}

# The 0-d float constants a program may hold as NumPy scalars, when only lines
# on scalars use them: on two NumPy scalars, + - * / run NumPy's scalar
# arithmetic, several times faster than on 0-d arrays and the same IEEE
# operation. (`**` is left to the ufunc: libm's pow and a SIMD pow may differ in
# the last bit. Lines on arrays keep 0-d arrays, which ufuncs take as they are.)
_SCALAR_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def compile_graph(graph, input_names=None, shapes=None, name=None, masks=False):
    """Write and compile the program of `graph`.

    `input_names` name the graph's inputs (the Python parameters), `shapes` are
    the concrete output shapes of each node (default: the traced ones; a
    shape-polymorphic graph passes them for the call's sizes).

    matmul's and einsum's masks (`ops/zero_times_inf.py`): unless `masks`,
    the program assumes that their AllFinite checks pass, so each mask is the
    plain product (or zeros, or the value it guards) and the values only the
    masks would read are not computed; each check is a line
    `check_finite(...)` that raises MasksNeeded where it fails, and the
    Program then runs the program written with `masks=True` instead.
    """
    writer = _Writer(graph, input_names, shapes, name, masks)
    for i, node in enumerate(graph.nodes):  # 2. one line per node that matters
        if writer.live_nodes[i]:
            writer.write(node, writer.shapes[i])
    return writer.program()  # 3. the return, the simplifications, the header


class _Writer:
    """The program of one graph, written a node at a time: the names it has
    given, the values it has bound (never pasted into the text), its lines."""

    def __init__(self, graph, input_names, shapes, name, masks):
        self.graph, self.input_names, self.name, self.masks = graph, input_names, name, masks
        self.from_graph = from_graph = shapes is None
        self.given_shapes = shapes
        self.shapes = shapes or [[s.shape for s in node.outputs] for node in graph.nodes]
        # The (shape, dtype) of every value; a polymorphic graph's inputs: shape None.
        self.specs = [(tuple(s.shape) if from_graph else None, s.dtype) for s in graph.inputs]
        for node, out in zip(graph.nodes, self.shapes):
            self.specs += [(None if o is None else tuple(o), s.dtype)
                           for o, s in zip(out, node.outputs)]
        self.names = Names(set(HELPERS) | {"Tensor"})
        self.namespace = dict(HELPERS)
        self.expr = {}          # value number -> the identifier holding it
        self.constants = {}     # value number -> its constant array (folded or captured)
        self.bound = {}         # identifier -> its header comment, in binding order
        self.by_value = {}      # small constants and attributes by value -> identifier
        self.arrays_of = {}     # identifier of a 0-d float constant -> its array
        self.other_constants = set()
        self.powered = set()    # identifiers a `**` line or an array's line uses (0-d arrays)
        self.keep_alive = []
        self.seeds = {}  # value number -> (n, mask): a Jacobian's seed times a mask
        self.mask_zeros = set()  # value numbers: zeros an if_masked mask gives (its check passes)
        self.variables = {}      # id(variable) -> (bound name, current read name or None)
        self.lines = []
        self.computed = {}  # the right-hand side of each line -> its name (no line twice)
        self.steps = {}     # name -> the _Step that wrote a one-value line (see _mask_once)
        self.bases = {}     # name of a line's value -> the name it was numbered from
        # The function's own name first: exec binds it in the namespace, so it must
        # be a name nothing else (an attribute, a variable, a helper) uses.
        self.fname = self.names.new(identifier(name or graph.name, "f"))
        self.params = []
        for k, spec in enumerate(graph.inputs):
            given = input_names[k] if input_names and k < len(input_names) else f"x{k}"
            self.expr[k] = self.names.new(identifier(given, "x"))
            self.params.append(self.expr[k])
        self.live_nodes = _live_nodes(graph, masks)  # 1. which nodes matter
        # The values the program's check_finite lines look at (see jacobian_seeds.py).
        self.checked = [] if masks else [r for node, live in zip(graph.nodes, self.live_nodes)
                                         if live and _mask(node.op) == "check"
                                         for r in node.inputs]

    # --- names for values --------------------------------------------------------------

    def bind(self, base, value, note=None, kind=None):
        """A name for `value` in the program's namespace (never in its text)."""
        key = _value_key(kind or base, value)
        if key is not None and key in self.by_value:
            return self.by_value[key]
        ident = self.names.new(base)
        self.namespace[ident] = value
        self.bound[ident] = f"{ident} = {shown(value)}" if note is None else f"{ident}: {note}"
        if key is not None:
            self.by_value[key] = ident
        self.keep_alive.append(value)
        return ident

    def constant(self, array):
        array = np.asarray(array)
        ident = self.bind(f"c{len(self.arrays_of) + len(self.other_constants)}", array,
                          kind="constant")
        if ident not in self.arrays_of and ident not in self.other_constants:
            if array.ndim == 0 and array.dtype in _SCALAR_DTYPES:
                self.arrays_of[ident] = array
            else:
                self.other_constants.add(ident)
        return ident

    def bind_variable(self, v):
        """The name of the Variable object itself (reads and assignments use it)."""
        if id(v) not in self.variables:
            self.variables[id(v)] = (self.bind(_variable_name(v) + "_var", v), None)
        return self.variables[id(v)][0]

    def read(self, ref):
        """The expression for an input reference (emitting a variable read)."""
        if ref.kind == "t":
            if ref.x not in self.expr:  # a folded constant, named when first used
                self.expr[ref.x] = self.constant(self.constants[ref.x])
            return self.expr[ref.x]
        if ref.kind == "c":
            return self.constant(ref.x)
        v = ref.x
        bound_name, current = self.variables.get(id(v), (None, None))
        if bound_name is None:
            bound_name = self.bind_variable(v)
        if current is None:
            current = self.names.new(_variable_name(v))
            self.bases[current] = _variable_name(v)
            self.lines.append(f"    {current} = {bound_name}._value  # read variable")
        self.variables[id(v)] = (bound_name, current)
        return current

    def alias(self, number, ref):
        _alias(number, ref, self.expr, self.constants, self.read)

    # --- one node ------------------------------------------------------------------------

    def write(self, node, out_shapes):
        """The node's line, or nothing when it is an alias or a constant."""
        if self._simplified(node, out_shapes):
            return
        ins, specs = node.inputs, self.specs
        simplify, mask = _simplify(node.op), _mask(node.op)
        in_dtypes = [_spec(r, specs)[1] for r in ins]
        in_shapes = [_spec(r, specs)[0] for r in ins]
        known = [self.constants.get(r.x) if r.kind == "t" else r.x if r.kind == "c" else None
                 for r in ins]
        if simplify.get("zero_power") and _zeros(known[1]) and out_shapes[0] is not None:
            # x ** 0 is 1 for every x (NaN and inf too): a constant
            self.constants[node.first] = np.ones(out_shapes[0], in_dtypes[0])
            return
        if simplify.get("select") and out_shapes[0] is not None and all(
                _zeros(k) and np.asarray(k).dtype.kind == "f" and not np.signbit(k).any()
                for k in known[1:]):
            # where(c, 0, 0) is 0 whatever c is (a zero rule's gradient, masked)
            self.constants[node.first] = np.zeros(out_shapes[0], node.outputs[0].dtype)
            return
        same = _unchanged_operand(node, known, in_shapes, out_shapes[0] if out_shapes else None)
        if mask == "elementwise" and len(ins) == 3 and same_value(ins[1], ins[2], self.expr):
            same = 0  # the term is t itself (its partial derivative was 1): never NaN at t = 0
        if same is not None:  # x * 1, x ** 1: the line would copy x
            self.alias(node.first, ins[same])
            return
        template, args, attrs = self._template(node, out_shapes, in_shapes, in_dtypes, known)
        fields = {key: self.bind(key, value, _note(key, value, node))
                  for key, value in attrs.items()}
        if node.op == "AssignVariableOp":
            fields["variable"] = self.bind_variable(node.attrs["variable"])
        fields["inputs"] = ", ".join(args)
        self._line(node, out_shapes, template, args, fields)

    def _simplified(self, node, out_shapes):
        """Whether the node needs no line: its outputs are other values (an
        alias), or constants computed here."""
        if node.op == "IdentityN":  # the outputs are the custom gradient's forward values
            for k, r in enumerate(node.attrs["forward"]):
                self.alias(node.first + k, r)
            return True
        unchanged = _simplify(node.op).get("unchanged")
        if unchanged is not None and unchanged(node.attrs, _spec(node.inputs[0], self.specs)[0],
                                               out_shapes[0]):
            self.alias(node.first, node.inputs[0])
            return True
        ins = node.inputs
        folded = _fold(node, ins, self.constants, out_shapes) \
            if node.op != "AssignVariableOp" else None
        if folded is not None:  # computed once, here
            self.constants[node.first] = folded
            if _simplify(node.op).get("sum") and all(r.kind == "t" and r.x in self.mask_zeros
                                                     for r in ins):
                self.mask_zeros.add(node.first)
            return True
        mask = _mask(node.op)
        if mask == "check" and not self.masks:  # assumed to hold (its line checks it)
            self.constants[node.first] = np.array(True)
        if mask == "contraction" and not self.masks and is_true(ins[0], self.constants):
            if node.attrs["mode"] == "if_masked":
                self.constants[node.first] = np.zeros(out_shapes[0], node.outputs[0].dtype)
                self.mask_zeros.add(node.first)
            else:  # select's z, if_plain's operand
                self.alias(node.first, ins[1])
            return True
        if _simplify(node.op).get("sum") and self.mask_zeros:  # y + a mask's zeros: y
            other = [r for r in ins if not (r.kind == "t" and r.x in self.mask_zeros)]
            if len(other) == 1 and out_shapes[0] is not None and \
                    _spec(other[0], self.specs)[0] == tuple(out_shapes[0]):
                self.alias(node.first, other[0])
                return True
        return False

    def _template(self, node, out_shapes, in_shapes, in_dtypes, known):
        """(template, argument names, attributes to bind) of the node's line."""
        ins, simplify, mask = node.inputs, _simplify(node.op), _mask(node.op)
        attrs = _attributes(node, out_shapes, in_dtypes)
        flags, flipped = None, {}
        transposes = simplify.get("transposes", {})
        if transposes:  # a constant that the line would transpose: transposed here
            flags = {name: bool(node.attrs[name]) for name in transposes.values()}
            for k, name in transposes.items():
                if flags[name] and known[k] is not None and np.ndim(known[k]) >= 2:
                    flipped[k] = np.ascontiguousarray(np.swapaxes(known[k], -1, -2))
                    flags[name], in_shapes[k] = False, flipped[k].shape
        if simplify.get("one_number") and out_shapes[0] is not None and None not in in_shapes:
            for k in (0, 1):  # a constant of one repeated number, as that number
                if _one_number(known[k]) and tuple(in_shapes[1 - k]) == tuple(out_shapes[0]):
                    flipped[k] = np.asarray(known[k]).reshape(-1)[0].reshape(())
        args = [self.constant(flipped[k]) if k in flipped else self.read(r)
                for k, r in enumerate(ins)]
        template = _template(node, in_shapes, known, flags)
        if simplify.get("integer_dtype") and np.dtype(in_dtypes[0]).kind in "iu":
            # NumPy adds small integers in int64; the op keeps the input's dtype (and
            # wraps around on overflow, as TensorFlow's int32 sum does)
            template = template[:-1] + ", dtype={dtype})"
            attrs["dtype"] = np.dtype(in_dtypes[0])
        if simplify.get("arrays") or not out_shapes or out_shapes[0] != ():
            self.powered.update(args)  # (a constant of an array line stays an array)
        declared = DECLARED.get(node.op)
        if template is None and declared is not None and declared.forward is not None:
            forward = declared.forward  # named as the op's function is (bound, never pasted)
            word = identifier(getattr(forward, "__name__", "forward"), "forward")
            template = f"{{{word}}}(" + ", ".join(f"{{{k}}}" for k in range(len(ins))) + ")"
            attrs = {word: forward}
        if mask == "elementwise" and ins[0].kind == ins[1].kind == "t" \
                and ins[0].x == ins[1].x:  # moved(t, term[, factor]), as the rules write it
            template = "moved({2}, {1}" + (", {3})" if len(ins) == 4 else ")")
        if simplify.get("select") and _is_mask_product(known, in_shapes, out_shapes[0]):
            template = "{1} * {0}"  # where(mask, c, 0) for a constant c >= 0: c * mask
            n = identity_stack(known[1])
            if n and tuple(in_shapes[0]) == np.shape(known[1])[1:]:
                self.seeds[node.first] = (n, ins[0])  # a Jacobian's seed, masked
        if simplify.get("seed") and self.checked:
            seed = seed_of(node, ins, known, in_shapes, self.seeds, self.checked, self.expr)
            if seed is not None:  # a Jacobian's seed times a checked `a`: no matmul
                n, seed_mask = seed
                attrs = {"n": n}
                template = ("seed_product({0}.T, {n}" if flags[transposes[0]] else
                            "seed_product({0}, {n}") + \
                    ("" if seed_mask is None else ", " + self.read(seed_mask)) + ")"
        if mask == "check" and not self.masks:
            template = "check_finite({inputs})"  # True, or MasksNeeded (see Program)
        if template is None:  # an op type without a line: run it through its op
            template, attrs = "{run}({inputs})", {"run": _through_the_op(node, out_shapes)}
        return template, args, attrs

    def _line(self, node, out_shapes, template, args, fields):
        """Write the line: its value's name (`grad_mul_2`), its text, its comment."""
        text = template.format(*args, **fields)
        word = _word(node.op)
        prefix = _PREFIX.get(node.role, "")
        comment = _WORD.sub("_", node.op) + (f" ({node.role})" if prefix else "")
        label = re.sub("_+", "_", _WORD.sub("_", str(node.name))).strip("_")[:40]
        if label.lower() != node.op.lower() and node.op != "AssignVariableOp":
            comment += f" {label}"
        lines, names = self.lines, self.names
        if node.op == "AssignVariableOp":
            lines.append(f"    {text}  # {comment}")
            bound_name, _ = self.variables.get(id(node.attrs["variable"]), (None, None))
            if bound_name is not None:
                self.variables[id(node.attrs["variable"])] = (bound_name, None)  # read again
            return
        if len(node.outputs) > 1:  # an op with several outputs (qr, svd, ...)
            word = identifier(word, "op", helpers=False)
            outs = [names.new(prefix + word) for _ in node.outputs]
            self.bases.update((o, prefix + word) for o in outs)
            self.expr.update({node.first + k: o for k, o in enumerate(outs)})
            lines.append(f"    {', '.join(outs)} = {text}  # {comment}")
            return
        if text in self.computed:  # the same op on the same values: computed already
            self.expr[node.first] = self.computed[text]
            return
        word = identifier(word, "op", helpers=False)
        out = names.new(prefix + word)
        self.bases[out] = prefix + word
        self.expr[node.first] = self.computed[text] = out
        lines.append(f"    {out} = {text}  # {comment}")
        self.steps[out] = _Step(node.op, template, args, fields, comment, len(lines) - 1,
                                out_shapes[0], node.outputs[0].dtype)

    # --- the whole program -----------------------------------------------------------------

    def program(self):
        """The return line, the program-wide simplifications, the header; compiled."""
        graph, namespace, params = self.graph, self.namespace, self.params
        flat = [self.read(r) for r in _flat_refs(graph.outputs)]
        _mask_once(self.lines, self.steps, flat, lambda name: _spec_of(
            name, self.steps, namespace, params, graph.inputs, self.from_graph))
        used, lines = drop_unused(self.lines, flat)
        lines, flat = masks_in_place(lines, flat)
        lines, flat = renumber(lines, flat, self.bases,
                                {self.fname, *params, *self.bound, *HELPERS, "Tensor"})
        for ident, array in self.arrays_of.items():
            if ident not in self.powered and ident not in flat:  # (returned: an array)
                namespace[ident] = array[()]  # a NumPy scalar (see _SCALAR_DTYPES)
        header = [f"    # {note}" for ident, note in self.bound.items() if ident in used]
        helpers = sorted(h for h in used & set(HELPERS) if h != "np")
        if "np" in used or helpers:
            header.append("    # " + ", ".join(
                (["np = numpy"] if "np" in used else [])
                + [f"{h} = {_helper_home(h)}" for h in helpers]))
        source = (f"def {self.fname}({', '.join(params)}):\n" + "\n".join(header + lines)
                  + ("\n" if header or lines else "")
                  + f"    return ({', '.join(flat)}{',' if len(flat) == 1 else ''})\n")
        code = compile(source, f"<minitape compiled {self.fname}>", "exec")
        exec(code, namespace)
        fallback = None
        if any(" = check_finite(" in line for line in lines):
            def fallback():
                return compile_graph(graph, self.input_names, self.given_shapes, self.name,
                                     masks=True)
        assigned = [node.attrs["variable"] for node in graph.nodes
                    if node.op == "AssignVariableOp"]
        streams = [node.draws() for node in graph.nodes if node.op in random.OP_TYPES]
        return Program(source, namespace[self.fname], graph.outputs, fallback, assigned,
                       streams)


def _live_nodes(graph, masks):
    """Which nodes matter: walk back from the outputs and the assignments."""
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
            if _mask(node.op) == "contraction" and not masks:  # the check, and what it guards
                refs = refs[:1] + (refs[1:2] if node.attrs["mode"] != "if_masked" else [])
            for r in refs:
                if r.kind == "t":
                    live_values.add(r.x)
    return live_nodes


def _helper_home(name):
    """Where a helper a program calls lives, for its header comment: the module
    that defines it and its name there (`zero_where_unmoved` is the kernel
    `minitape.ops.zero_times_inf.unmoved_zeroed`), so the header names what exists."""
    fn = HELPERS[name]
    return f"{fn.__module__}.{fn.__qualname__}"


def _value_key(kind, value):
    """Values bound once per program however often lines use them: small numeric
    constants and attribute values (by value), large constants (by identity)."""
    if isinstance(value, (np.ndarray, np.generic)):
        v = np.asarray(value)
        if v.dtype.kind not in "biufc":
            return None
        if v.size <= 16:
            return (kind, v.dtype.str, v.shape, v.tobytes())
        return ("id", id(value))
    if callable(value) or isinstance(value, (Variable, random.Stream)):
        return ("id", id(value))  # (a stream is state: two nodes never share one)
    try:
        hash(value)
    except TypeError:
        return None
    return (kind, type(value).__name__, repr(value))


def _note(key, value, node):
    """How the header shows an attribute that is not a plain value."""
    if key == "run":
        return f"runs the op {node.op} through minitape (it has no NumPy line of its own)"
    if isinstance(value, functools.partial):  # matmul's and einsum's masks (UnmovedEinsum)
        where = f"{value.func.__module__}.{value.func.__qualname__}"
        return f"{plain(where)}, mode {plain(str(value.args[0]))}, " \
               f"equation {plain(str(value.args[1]))} (a mask of the product)"
    if callable(value) and not isinstance(value, np.dtype):
        where = f"{getattr(value, '__module__', '?')}.{getattr(value, '__qualname__', '?')}"
        return f"{plain(where)} (the op's NumPy function)"
    return None


class _Step:
    """How a line of one value was written, for `_mask_once`."""

    __slots__ = ("op", "template", "args", "fields", "comment", "line", "shape", "dtype")

    def __init__(self, op, template, args, fields, comment, line, shape, dtype):
        self.op, self.template, self.args, self.fields = op, template, args, fields
        self.comment, self.line, self.shape, self.dtype = comment, line, shape, dtype


_WHERE = "np.where({0}, {1}, {2})"


def _mask_once(lines, steps, returned, spec):
    """where(m, f(where(m, a, b)), c) is where(m, f(a), c) for an elementwise f:
    where m holds, both take f(a); elsewhere both take c. So the inner `where`
    goes (when nothing else uses it), exactly: a ReLU's Hessian masks twice."""
    uses = {}
    for line in lines + ["= " + ", ".join(returned)]:
        for name in NAME.findall(line.split("  #", 1)[0].partition(" = ")[2]):
            uses[name] = uses.get(name, 0) + 1
    for outer in steps.values():
        if outer.template != _WHERE:
            continue
        mask, middle_name, other = outer.args
        middle = steps.get(middle_name)
        if middle is None or not _simplify(middle.op).get("one_number") \
                or uses.get(middle_name) != 1:
            continue
        for k, inner_name in enumerate(middle.args):
            inner = steps.get(inner_name)
            if inner is None or inner.template != _WHERE or inner.args[0] != mask \
                    or uses.get(inner_name) != 1:
                continue
            kept = inner.args[1]
            shapes = [spec(name)[0] for name in (kept, middle.args[1 - k], mask, other)]
            if None in shapes or outer.shape is None or spec(kept)[1] != inner.dtype or \
                    np.broadcast_shapes(*shapes) != tuple(outer.shape):
                continue  # (f(a) must come out as f(where(...)) did, where m holds)
            middle.args = middle.args[:k] + [kept] + middle.args[k + 1:]
            target = lines[middle.line].split(" = ", 1)[0]
            lines[middle.line] = f"{target} = " \
                f"{middle.template.format(*middle.args, **middle.fields)}  # {middle.comment}"
            uses[inner_name] -= 1
            uses[kept] = uses.get(kept, 0) + 1
            break


def _spec_of(name, steps, namespace, params, inputs, from_graph):
    """(shape, dtype) of a name of the program, (None, None) if unknown."""
    if name in steps:
        step = steps[name]
        return (None if step.shape is None else tuple(step.shape)), step.dtype
    if name in params:
        spec = inputs[params.index(name)]
        return (tuple(spec.shape) if from_graph else None), spec.dtype
    value = namespace.get(name)
    if isinstance(value, (np.ndarray, np.generic)):
        return tuple(np.shape(value)), np.asarray(value).dtype
    return None, None  # (a variable's read: not needed so far)


def _alias(number, ref, expr, constants, read):
    if ref.kind == "t":
        if ref.x in expr:
            expr[number] = expr[ref.x]
        if ref.x in constants:
            constants[number] = constants[ref.x]
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


def _one_number(value):
    """Whether `value` is an array of more than one entry, all with the same bits
    (the zeros of an unconnected gradient, a mean's 1 / n): broadcast against an
    operand of the output's shape, its one number gives the same values."""
    if value is None or np.ndim(value) == 0:
        return False
    v = np.ascontiguousarray(value).reshape(-1)
    return v.size > 1 and v.dtype.kind in "fc" and bool(np.all(
        v.view(np.uint8).reshape(v.size, -1) == v[:1].view(np.uint8)))


def _unchanged_operand(node, known, in_shapes, out_shape):
    """Which input a Mul by ones, or a Pow with exponent one, returns unchanged
    (same shape, same dtype, same bits), or None."""
    if out_shape is None or None in in_shapes:
        return None  # shapes known only at run time
    simplify = _simplify(node.op)
    for k, other in simplify.get("unit", {}).items():  # x * 1, x ** 1
        if _ones(known[k]) and tuple(in_shapes[other]) == tuple(out_shape):
            return other
    if simplify.get("mask") == "elementwise" and mask_is_idle(known, in_shapes, out_shape):
        return 0
    if simplify.get("select") and known[0] is not None and np.asarray(known[0]).size:
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
