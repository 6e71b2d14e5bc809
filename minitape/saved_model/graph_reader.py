"""Graphs read back from a saved model's JSON: each field checked as it is
read (names, references to values defined earlier, variables and constants
that exist, op types minitape has, attributes through the op's codec), then
each custom gradient's graph against the node that uses it. Nothing here runs
an op: `checks.py` works out the shapes and costs afterwards."""
from ..graph import GRADIENT_GRAPHS, OPS, Graph, Node, Ref
from ..functions.signatures import InputSlot
from ..specs import TensorSpec
from .format import (attr_codec, brief, check_dict, check_dtype, check_int, check_keys,
                     check_list, check_str, fail, gradient_key, is_literal, spec_text,
                     specs_text, tensor_spec)
from .limits import MAX_DEPTH, MAX_RANK, MAX_TENSOR_BYTES
from .loaded import leaves


class GraphReader:
    """Reads the graphs of one saved model, whose variables and constants are
    already read (a value name `v3` or `c1` must name one of them)."""

    def __init__(self, variables, constants):
        self.variables, self.constants = variables, constants

    def graph(self, j, where, name):
        check_keys(j, where, ("arguments", "dims", "inputs", "captures", "nodes", "outputs"))
        dims = check_dict(j["dims"], f"{where}.dims")
        for d, n in dims.items():
            if not d.isidentifier():
                fail(f"{where}.dims", f"{brief(d)} is not a dimension name")
            check_int(n, f"{where}.dims.{d}", 0, MAX_TENSOR_BYTES)
        pairs = [self.graph_spec(s, f"{where}.inputs[{i}]", dims)
                 for i, s in enumerate(check_list(j["inputs"], f"{where}.inputs"))]
        inputs = [p[0] for p in pairs]
        bound = {d for _, shape in pairs if shape for d in shape if isinstance(d, str)}
        if set(dims) - bound:
            fail(f"{where}.dims", f"dimension {sorted(set(dims) - bound)[0]!r} appears in "
                  "no input shape")
        captures = check_int(j["captures"], f"{where}.captures", 0, len(inputs))
        specs = list(inputs)  # the spec of every value t<k>, as they get defined
        nodes = []
        for i, n in enumerate(check_list(j["nodes"], f"{where}.nodes")):
            node = self.node(n, f"{where}.nodes[{i}]", specs, dims)
            nodes.append(node)
            specs.extend(node.outputs)
        outputs = structure(j["outputs"], lambda x, w: None if x is None
                                 else self.ref(x, w, specs), f"{where}.outputs")
        args = None
        if j["arguments"] is not None:
            if captures:
                fail(f"{where}.captures", "a function trace captures nothing")
            args = [structure(a, self.argument, f"{where}.arguments[{i}]")
                    for i, a in enumerate(check_list(j["arguments"], f"{where}.arguments"))]
            used = sorted(x.index for x in leaves(args) if isinstance(x, InputSlot))
            if used != list(range(len(inputs))):
                fail(f"{where}.arguments", f"must use each of the {len(inputs)} inputs "
                      "exactly once")
        symbolic_inputs = _symbolic(pairs)
        if None not in (symbolic_inputs or ()) and any(
                None in (node.symbolic or ()) for node in nodes):
            fail(f"{where}.nodes", "a shape may be null only in a graph with an input "
                  "of any shape")
        return Graph(name, inputs, nodes, outputs, num_captures=captures, args=args,
                         dims=dims, symbolic_inputs=symbolic_inputs)

    def argument(self, x, where):
        if isinstance(x, dict) and "input" in x:
            check_keys(x, where, ("input",))
            return InputSlot(check_int(x["input"], f"{where}.input", 0, 1 << 20))
        if isinstance(x, dict) and "value" in x:
            check_keys(x, where, ("value",))
            if not is_literal(x["value"]):
                fail(f"{where}.value", "expected null, a boolean, a number or a string")
            return x["value"]
        fail(where, f'expected {{"input": k}} or {{"value": v}}, got {brief(x)}')

    def graph_spec(self, j, where, dims):
        """A spec in a graph: (TensorSpec with the traced sizes, the declared
        shape: sizes and symbol names, or None for any shape, which a graph for
        inputs of unknown rank has and which traces as a scalar)."""
        check_keys(j, where, ("shape", "dtype"))
        if j["shape"] is None:
            return TensorSpec((), check_dtype(j["dtype"], f"{where}.dtype")), None
        dims_list = check_list(j["shape"], f"{where}.shape", MAX_RANK)
        if not any(isinstance(d, str) for d in dims_list):
            spec = tensor_spec(j, where)
            return spec, spec.shape
        for i, d in enumerate(dims_list):
            if isinstance(d, str) and d not in dims:
                fail(f"{where}.shape[{i}]", f"unknown dimension {brief(d)} (the graph's "
                      f"dims are {sorted(dims)})")
        sample = [dims[d] if isinstance(d, str) else d for d in dims_list]
        return tensor_spec({"shape": sample, "dtype": j["dtype"]}, where), tuple(dims_list)

    def ref(self, x, where, specs):
        """A value name: t<k> (defined earlier in this graph), v<k>, c<k>."""
        if type(x) is not str or not 2 <= len(x) <= 12 or x[0] not in "tvc" \
                or not x[1:].isdigit() or not x[1:].isascii():
            fail(where, f"expected a value name like 't3', 'v0' or 'c1', got {brief(x)}")
        k = int(x[1:])
        if x[0] == "t":
            if k >= len(specs):
                fail(where, f"{x} is not defined before this point of the graph "
                      f"(t0..t{len(specs) - 1} are)")
            return Ref("t", k)
        if x[0] == "v":
            if k >= len(self.variables):
                fail(where, f"{x}: there are only {len(self.variables)} variables")
            return Ref("v", self.variables[k])
        if k >= len(self.constants):
            fail(where, f"{x}: there are only {len(self.constants)} constants")
        return Ref("c", self.constants[k])

    def node(self, j, where, specs, dims):
        check_keys(j, where, ("op", "name", "inputs", "attrs", "outputs"))
        op = check_str(j["op"], f"{where}.op", 100)
        if op not in ("IdentityN", "AssignVariableOp") and op not in OPS:
            fail(f"{where}.op", f"unknown op type {op!r}: not a minitape built-in op")
        name = check_str(j["name"], f"{where}.name", 1000)
        inputs = [self.ref(x, f"{where}.inputs[{i}]", specs)
                  for i, x in enumerate(check_list(j["inputs"], f"{where}.inputs"))]
        pairs = [self.graph_spec(s, f"{where}.outputs[{i}]", dims)
                 for i, s in enumerate(check_list(j["outputs"], f"{where}.outputs"))]
        outputs = [p[0] for p in pairs]
        symbolic = _symbolic(pairs)
        w = f"{where}.attrs"
        if op == "IdentityN":
            a = check_keys(j["attrs"], w, ("num_inputs", "gradient", "forward", "captures"))
            attrs = {"num_inputs": check_int(a["num_inputs"], f"{w}.num_inputs", 0, len(inputs)),
                     "gradient": gradient_key(a["gradient"], f"{w}.gradient"),
                     "forward": [self.ref(x, f"{w}.forward[{i}]", specs)
                                 for i, x in enumerate(check_list(a["forward"], f"{w}.forward"))],
                     "captures": [self.ref(x, f"{w}.captures[{i}]", specs) for i, x in
                                  enumerate(check_list(a["captures"], f"{w}.captures"))]}
        elif op == "AssignVariableOp":
            a = check_keys(j["attrs"], w, ("variable", "mode"))
            ref = self.ref(a["variable"], f"{w}.variable", specs)
            if ref.kind != "v":
                fail(f"{w}.variable", "expected a variable name like 'v0'")
            if a["mode"] not in ("assign", "assign_add", "assign_sub"):
                fail(f"{w}.mode", f"expected assign, assign_add or assign_sub, got "
                      f"{brief(a['mode'])}")
            attrs = {"variable": ref.x, "mode": a["mode"]}
        else:
            attrs = attr_codec(op)[1](j["attrs"], w)
        return Node(op, name, inputs, attrs, outputs, symbolic=symbolic)

    def check_custom_gradients(self, graph, where, gradients):
        """Each IdentityN whose gradient graph is known (saved, or live in this
        process) must fit it: upstream specs = the node's outputs, captures =
        the node's captures, one gradient per node input with its spec. (Graphs
        for inputs of any rank are checked for dtypes here; their shapes are
        checked at each call.)"""
        for i, node in enumerate(graph.nodes):
            if node.op != "IdentityN":
                continue
            w = f"{where}.nodes[{i}]"
            key = node.attrs["gradient"]
            grad = gradients.get(key) or GRADIENT_GRAPHS.get(key)
            if grad is None:
                continue  # unknown here: differentiating it raises LookupError
            wanted = list(node.outputs) + [graph.spec_of(r) for r in node.attrs["captures"]]
            same = _same_dtypes if _any_rank(graph) or _any_rank(grad) else _same_specs
            if not same(grad.inputs, wanted) or grad.num_captures != len(node.attrs["captures"]):
                fail(w, f"the gradient graph of {key} takes {specs_text(grad.inputs)}, "
                      f"but the node gives it {specs_text(wanted)}")
            outs = grad.outputs
            if not isinstance(outs, list) or len(outs) != len(node.inputs) or \
                    any(o is not None and not isinstance(o, Ref) for o in outs):
                fail(w, f"the gradient graph of {key} must return a list of one gradient "
                      f"(or null) per input of the node ({len(node.inputs)})")
            for k, (o, r) in enumerate(zip(outs, node.inputs)):
                if o is not None and not same([grad.spec_of(o)], [graph.spec_of(r)]):
                    fail(w, f"the gradient graph of {key} returns "
                          f"{spec_text(grad.spec_of(o))} for input {k}, which is "
                          f"{spec_text(graph.spec_of(r))}")


def structure(j, leaf, where, depth=0):
    """A nest of {"list"|"tuple"|"dict": ...} whose leaves `leaf` decodes."""
    if depth > MAX_DEPTH:
        fail(where, f"nested more than {MAX_DEPTH} levels deep")
    if isinstance(j, dict) and len(j) == 1:
        (kind, items), = j.items()
        if kind in ("list", "tuple"):
            built = [structure(x, leaf, f"{where}.{kind}[{i}]", depth + 1)
                     for i, x in enumerate(check_list(items, f"{where}.{kind}"))]
            return built if kind == "list" else tuple(built)
        if kind == "dict":
            return {k: structure(x, leaf, f"{where}.dict.{k}", depth + 1)
                    for k, x in check_dict(items, f"{where}.dict").items()}
    return leaf(j, where)


def _any_rank(graph):
    return None in (graph.symbolic_inputs or ())


def _same_specs(a, b):
    return list(a) == list(b)


def _same_dtypes(a, b):
    return len(a) == len(b) and all(x.dtype == y.dtype for x, y in zip(a, b))


def _symbolic(pairs):
    """The declared shapes of (spec, shape) pairs when any of them names a
    symbol or is any shape (a polymorphic graph's `symbolic_inputs`, a node's
    `symbolic`), else None."""
    shapes = [shape for _, shape in pairs]
    if all(shape is not None and not any(isinstance(d, str) for d in shape)
           for shape in shapes):
        return None
    return shapes
