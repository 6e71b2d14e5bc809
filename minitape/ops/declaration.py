"""One declaration per op: everything the engine knows about an op type, in one place.

An op's family declares it once, next to its forward: its gradient and JVP
rules (registered in the registry), and the traits the rest of the engine
looks up instead of keeping lists of op names:

    the tracer (graph.py)       `replay`, `arity`, `attrs_of`: run a traced node again
    saved models (checks.py)    `shape`, `dtype`: a node's outputs, and its cost, unrun;
                                `singular`: a singular matrix is a fact about values
    the file format (format.py) `attr_kinds`: attributes with a format of their own
    the compiler (compiling/)   `line`, `word`, `line_attrs`, `helpers`, `forward`,
                                `simplify`
    functions/signatures.py     `rank_free`, `reduces`: a trace for an input of any rank
                                holds it
    tape_jacobians.py           `smooth`: forward mode may take the place of reverse

Most ops are declared by a row of partial derivatives (`partials.py`), which
fills in the rules and the traits an elementwise op has; ops whose rule is not
a list of partials call `declare` with their own rules and traits.
"""
from ..core.registry import NotDifferentiable, RegisterGradient, RegisterJVP

DECLARED = {}  # op type -> its Declaration


class Declaration:
    """The facts about one op type that the engine outside its family needs.

    replay(inputs, attrs, out_shapes)  the op run again on new input tensors,
        with the attributes `attrs_of(operation)` took from a recorded call
        (plain data: None, bools, numbers, strings, dtypes, tuples, lists);
        `arity` is its number of inputs (None: any).
    shape(in_shapes, attrs, declared)  (output shapes, work): what a call gives
        and the element operations beyond reading inputs and writing outputs,
        without running it; `declared` holds the shapes the graph declares
        (None: any), for the few ops whose output shape is an attribute of the
        trace. It raises ValueError for shapes or attributes the op refuses.
    dtype(in_dtypes, attrs)  the output dtypes (None: the loader runs the op
        once on one-element inputs to find them).
    forward  the NumPy function of the values, when one call of it is the op.
    line  the op's line in a compiled program: a template (`"{0} * {1}"`;
        `{k}` is input k, `{inputs}` all of them, any other field a value
        `line_attrs(attrs, out_shapes, in_dtypes)` binds), or a function of
        (attrs, in_shapes, known constants) giving one. None: the program calls
        `forward`, or, without one, runs the op itself.
    word  the name of its lines in a compiled program (`mul`).
    helpers  {name: function} the line calls (`sigmoid({0})`): bound in every
        compiled program's namespace.
    simplify  the compiler's exact rewrites for this op (compiling/compiler.py reads
        the keys it knows: "unit", "one_number", "transposes", "zero_power",
        "integer_dtype" (NumPy's dtype= for integer inputs), "unchanged" (a
        function of (attrs, in_shape, out_shape): the line would copy its
        input, so the program names the input instead)).
    rank_free  its result does not depend on knowing its inputs' rank.
    reduces  a reduction (attributes `axis`, `keepdims`): over all axes it
        holds for an input of any rank.
    singular  the loader's dry run may meet a singular matrix: zeros then.
    smooth  its partial derivatives are finite wherever its values are (or
        its JVP gives 0 for a zero tangent), so forward mode's columns equal
        reverse mode's rows.
    attr_kinds  {attribute: kind} for attributes the file format writes its
        own way ("dtype": a dtype's name).
    """

    __slots__ = ("op_type", "replay", "arity", "attrs_of", "shape", "dtype", "forward",
                 "line", "word", "line_attrs", "helpers", "simplify", "rank_free", "reduces",
                 "smooth", "singular", "attr_kinds")

    def __init__(self, op_type, replay=None, arity=1, attrs_of=None, shape=None, dtype=None,
                 forward=None, line=None, word=None, line_attrs=None, helpers=None,
                 simplify=None, rank_free=False, reduces=False, smooth=False, singular=False,
                 attr_kinds=None):
        self.op_type, self.replay, self.arity = op_type, replay, arity
        self.attrs_of = attrs_of or no_attributes
        self.shape, self.dtype, self.forward = shape, dtype, forward
        self.line, self.word, self.line_attrs = line, word or op_type.lower(), line_attrs
        self.helpers, self.simplify = helpers or {}, simplify or {}
        self.rank_free, self.reduces, self.smooth = rank_free, reduces, smooth
        self.singular, self.attr_kinds = singular, attr_kinds or {}


def no_attributes(op):
    """`attrs_of` of an op type that has no attributes."""
    return {}


def gives_its_input(attrs, in_shape, out_shape):
    """The compiler's "unchanged" for an op whose output is its input's value
    (identity, stop_gradient): a program names the input."""
    return True


def attributes(*names):
    """`attrs_of` taking these attributes of the recorded op as they are."""
    return lambda op: {n: op.attrs[n] for n in names}


def declare(op_type, gradient=None, jvp=None, differentiable=True, **traits):
    """Declare `op_type`: register its gradient and JVP rules (built-in rules
    take batched upstream gradients and tangents), or no gradient at all, and
    keep its traits (see Declaration) for the rest of the engine."""
    if gradient is not None:
        RegisterGradient(op_type, batch_safe=True)(gradient)
    elif not differentiable:
        NotDifferentiable(op_type)
    if jvp is not None:
        RegisterJVP(op_type, batch_safe=True)(jvp)
    declaration = DECLARED[op_type] = Declaration(op_type, **traits)
    return declaration
