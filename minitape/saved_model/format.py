"""The saved model's format: file names, the format version, dtypes, and the
JSON fields read back with checkers that raise `LoadError("where: what")`.

Each op type's attributes go to and from JSON through a codec: an explicit
one made of the attribute kinds an op's declaration names (`ops/declaration.py`:
an axis, a dtype, an index, ...), else the generic tagged one (`encode_value`,
`decode_value`); random draws, which are not declared ops, have theirs in
`ATTR_CODECS`. FORMAT.md beside this file describes every field.
"""
import re

import numpy as np

from ..ops.declaration import DECLARED, no_attributes
from ..specs import TensorSpec
from .limits import (MAX_ATTR_ITEMS, MAX_DEPTH, MAX_INT, MAX_RANK, MAX_TENSOR_BYTES, nbytes,
                     size_of)


FORMAT = "minitape-saved-model"
FORMAT_VERSION = 1
JSON_NAME = "saved_model.json"
NPZ_NAME = "variables.npz"
INLINE_ELEMENTS = 16     # constants this small are stored in the JSON
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
          "uint64", "float16", "float32", "float64", "complex64", "complex128")
PARAMETER_KINDS = ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD", "VAR_POSITIONAL",
                    "KEYWORD_ONLY", "VAR_KEYWORD")
UNEXPECTED = "unexpected error while loading"


class LoadError(Exception):
    """`mt.saved_model.load` found something wrong in a saved model. The message
    names the file and the place in it (a path like `graphs.f_1.nodes[3].attrs`)."""


def dtype_name(dtype, what):
    name = np.dtype(dtype).name
    if name not in DTYPES:
        raise TypeError(f"save: {what} has dtype {dtype}, which a saved model cannot hold "
                        f"(allowed: {', '.join(DTYPES)})")
    return name


def is_literal(value):
    return value is None or type(value) in (bool, int, float, str)


def fail(where, message):
    raise LoadError(f"{where}: {message}")


def brief(x):
    """`x` in an error message: short, whatever it is."""
    if isinstance(x, (list, dict)):
        return f"{kind_of(x)} of {len(x)} item(s)"
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def kind_of(x):
    if x is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(x), type(x).__name__)


def check_keys(j, where, required, optional=()):
    check_dict(j, where)
    missing = [k for k in required if k not in j]
    if missing:
        fail(where, f"missing field {missing[0]!r}")
    extra = [k for k in j if k not in required and k not in optional]
    if extra:
        fail(where, f"unexpected field {brief(extra[0])}")
    return j


def check_dict(x, where):
    if type(x) is not dict:
        fail(where, f"expected an object, got {kind_of(x)}")
    return x


def check_list(x, where, max_len=None):
    if type(x) is not list:
        fail(where, f"expected a list, got {kind_of(x)}")
    if max_len is not None and len(x) > max_len:
        fail(where, f"list is longer than {max_len}")
    return x


def check_int(x, where, lo=-(1 << 62), hi=1 << 62):
    if type(x) is not int:
        fail(where, f"expected an integer, got {kind_of(x)}")
    if not lo <= x <= hi:
        fail(where, f"integer {x} is out of range [{lo}, {hi}]")
    return x


def check_bool(x, where):
    if type(x) is not bool:
        fail(where, f"expected true or false, got {kind_of(x)}")
    return x


def check_str(x, where, max_len=1 << 16):
    if type(x) is not str:
        fail(where, f"expected a string, got {kind_of(x)}")
    if len(x) > max_len:
        fail(where, f"string is longer than {max_len} characters")
    return x


def check_dtype(x, where):
    if x not in DTYPES:
        fail(where, f"unknown dtype {brief(x)} (allowed: {', '.join(DTYPES)})")
    return np.dtype(x)


def check_shape(x, where):
    check_list(x, where, MAX_RANK)
    if all(type(d) is int and 0 <= d <= MAX_TENSOR_BYTES for d in x):
        shape = tuple(x)  # the usual case, without naming each place
    else:
        shape = tuple(check_int(d, f"{where}[{i}]", 0, MAX_TENSOR_BYTES) for i, d in enumerate(x))
    if size_of(shape) > MAX_TENSOR_BYTES:
        fail(where, f"shape {list(shape)} has more than {MAX_TENSOR_BYTES} elements")
    return shape


def tensor_spec(j, where):
    """A {"shape", "dtype"} spec with a known shape, within the one-tensor limit."""
    spec = TensorSpec(check_shape(j["shape"], f"{where}.shape"), check_dtype(j["dtype"], f"{where}.dtype"))
    if nbytes(spec) > MAX_TENSOR_BYTES:
        fail(where, f"{spec_text(spec)} is more than the limit of {MAX_TENSOR_BYTES} bytes "
              "for one tensor")
    return spec


def signature_spec(j, where):
    """A spec of an input signature: the shape may be null (any rank) or hold
    null sizes (any size)."""
    check_keys(j, where, ("shape", "dtype"))
    dtype = check_dtype(j["dtype"], f"{where}.dtype")
    if j["shape"] is None:
        return TensorSpec(None, dtype)
    return TensorSpec([None if d is None else check_int(d, f"{where}.shape[{i}]", 0,
                                                    MAX_TENSOR_BYTES)
                       for i, d in enumerate(check_list(j["shape"], f"{where}.shape", MAX_RANK))],
                      dtype)


def gradient_key(x, where):
    """A gradient key as `register_gradient_graph` makes them; never another
    registry entry (a built-in op type's rule would run on the wrong op)."""
    if not re.fullmatch(r"CustomGradient-[0-9a-f]+-[0-9]+", check_str(x, where, 100)):
        fail(where, f"{brief(x)} is not a custom gradient key "
              "('CustomGradient-<hex>-<number>')")
    return x


def _axes(x, where):
    return tuple(check_int(a, f"{where}[{i}]", -MAX_RANK, MAX_RANK)
                 for i, a in enumerate(check_list(x, where, MAX_RANK)))


def _encode_index(index):
    items = []
    for item in index:
        if item is None:
            items.append(None)
        elif item is Ellipsis:
            items.append("...")
        elif isinstance(item, (bool, np.bool_)):
            items.append({"bool": bool(item)})
        elif isinstance(item, (int, np.integer)):
            items.append(int(item))
        elif isinstance(item, slice):
            parts = [item.start, item.stop, item.step]
            if not all(p is None or isinstance(p, (int, np.integer)) for p in parts):
                raise TypeError(f"save: cannot save the slice {item!r}")
            items.append({"slice": [None if p is None else int(p) for p in parts]})
        elif isinstance(item, np.ndarray) and item.dtype.kind in "biu":
            items.append({"array": item.tolist(), "dtype": dtype_name(item.dtype, "an index"),
                          "shape": list(item.shape)})
        else:
            raise TypeError(f"save: cannot save the index item {item!r}")
    return items


def _decode_index(j, where):
    items = []
    for i, item in enumerate(check_list(j, where, MAX_RANK)):
        w = f"{where}[{i}]"
        if item is None:
            items.append(None)
        elif item == "...":
            items.append(Ellipsis)
        elif type(item) is int:
            items.append(check_int(item, w))
        elif isinstance(item, dict) and "slice" in item:
            check_keys(item, w, ("slice",))
            parts = check_list(item["slice"], f"{w}.slice")
            if len(parts) != 3:
                fail(f"{w}.slice", "expected [start, stop, step]")
            parts = [None if p is None else check_int(p, f"{w}.slice[{k}]")
                     for k, p in enumerate(parts)]
            if parts[2] == 0:
                fail(f"{w}.slice", "slice step cannot be zero")
            items.append(slice(*parts))
        elif isinstance(item, dict) and "bool" in item:
            check_keys(item, w, ("bool",))
            items.append(check_bool(item["bool"], f"{w}.bool"))
        elif isinstance(item, dict) and "array" in item:
            check_keys(item, w, ("array", "dtype", "shape"))
            dtype = check_dtype(item["dtype"], f"{w}.dtype")
            if dtype.kind not in "biu":
                fail(f"{w}.dtype", f"an index array must hold integers or booleans, "
                          f"not {dtype}")
            shape = check_shape(item["shape"], f"{w}.shape")
            flat = flat_numbers(item["array"], shape, f"{w}.array")
            if dtype.kind == "b":
                if not all(type(v) is bool for v in flat):
                    fail(f"{w}.array", "a bool index array must hold true/false")
            elif not all(type(v) is int and -(1 << 62) <= v <= (1 << 62) for v in flat):
                fail(f"{w}.array", "an integer index array must hold integers")
            items.append(np.array(flat, dtype=dtype).reshape(shape))
        else:
            fail(w, f"not an index item: {item!r:.80}")
    return tuple(items)


def flat_numbers(j, shape, where):
    """The leaves of nested lists `j`, which must have exactly `shape`."""
    level = [j]
    for depth, n in enumerate(shape):
        nxt = []
        for x in level:
            if type(x) is not list or len(x) != n:
                fail(where, f"does not have shape {list(shape)}")
            nxt.extend(x)
        level = nxt
    if any(type(x) is list for x in level):
        fail(where, f"does not have shape {list(shape)}")
    return level


def _attrs_codec(fields):
    """A codec for attributes given as {name: (encode, decode)}."""
    def encode(attrs):
        return {k: enc(attrs[k]) for k, (enc, _) in fields.items()}

    def decode(j, where):
        check_keys(j, where, tuple(fields))
        return {k: dec(j[k], f"{where}.{k}") for k, (_, dec) in fields.items()}
    return encode, decode


def _same(x):
    return x


def _scalar(x, where):
    if type(x) not in (int, float, bool):
        fail(where, f"expected a number, got {kind_of(x)}")
    return x


def _no_attrs(j, where):
    check_keys(j, where, ())
    return {}


NO_ATTRS = (lambda attrs: {}, _no_attrs)
_AXIS = (int, lambda x, w: check_int(x, w, -MAX_RANK, MAX_RANK))
_FLAG = (bool, check_bool)
_PADDINGS = (lambda p: [list(x) for x in p],
             lambda x, w: tuple((check_int(a[0], w, 0, MAX_TENSOR_BYTES),
                                 check_int(a[1], w, 0, MAX_TENSOR_BYTES))
                                if type(a) is list and len(a) == 2
                                else fail(w, "expected [before, after] pairs")
                                for a in check_list(x, w, MAX_RANK)))
ATTR_CODECS = {}  # op type -> codec, for op types that are not declared (random draws)
_SEED = (int, lambda x, w: check_int(x, w, 0, MAX_INT))
for _op in ("RandomStandardNormal", "RandomUniform"):
    ATTR_CODECS[_op] = _attrs_codec({"dtype": (lambda d: dtype_name(d, "a random draw"),
                                               check_dtype), "seed": _SEED, "seed2": _SEED})
ATTR_CODECS["RandomUniformInt"] = _attrs_codec({
    "dtype": (lambda d: dtype_name(d, "RandomUniformInt"), check_dtype),
    "minval": (int, check_int), "maxval": (int, check_int), "seed": _SEED, "seed2": _SEED})


# --- the generic codec: plain data with type tags --------------------------------
# The attributes a declared op records (`attrs_of`, ops/declaration.py) are
# plain data. JSON keeps null, booleans, integers, finite floats and strings as
# they are; everything else carries a tag, an object with one field, so that
# decoding gives back exactly the Python types the replay was given:
#   {"tuple": [...]}, {"list": [...]}, {"float": "nan" | "inf" | "-inf"},
#   {"complex": [re, im]}, {"dtype": "float32"}.
# Decoding checks every value (types, integer ranges, string and list lengths,
# nesting) and evaluates nothing; what each attribute means is checked by the
# op type's shape rule (`checks.py`), which must read every attribute.
_NONFINITE = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def encode_value(x, what, depth=0):
    if depth > MAX_DEPTH:
        raise TypeError(f"save: {what} is nested more than {MAX_DEPTH} levels deep")
    if x is None or isinstance(x, (bool, np.bool_)):
        return None if x is None else bool(x)
    if isinstance(x, (int, np.integer)):
        if not -MAX_INT <= int(x) <= MAX_INT:
            raise TypeError(f"save: {what} holds the integer {x}, outside [-2^62, 2^62]")
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if np.isfinite(x) else {"float": repr(x)}
    if isinstance(x, (complex, np.complexfloating)):
        return {"complex": [encode_value(x.real, what, depth + 1),
                            encode_value(x.imag, what, depth + 1)]}
    if isinstance(x, str):
        if len(x) > 1000:
            raise TypeError(f"save: {what} holds a string longer than 1000 characters")
        return x
    if isinstance(x, np.dtype) or (isinstance(x, type) and issubclass(x, np.generic)):
        return {"dtype": dtype_name(x, what)}
    if isinstance(x, (tuple, list)):
        return {type(x).__name__ if type(x) in (tuple, list) else "tuple":
                [encode_value(v, what, depth + 1) for v in x]}
    raise TypeError(f"save: {what} is {type(x).__name__} {x!r:.60}; a saved model holds "
                    "attributes made of None, booleans, numbers, strings, dtypes, "
                    "tuples and lists")


def decode_value(j, where, budget, depth=0):
    """One attribute value from its JSON; `budget` is a one-item list counting
    down the values still allowed (MAX_ATTR_ITEMS for a node's attributes)."""
    budget[0] -= 1
    if budget[0] < 0:
        fail(where, f"the attributes hold more than {MAX_ATTR_ITEMS} values")
    if depth > MAX_DEPTH:
        fail(where, f"nested more than {MAX_DEPTH} levels deep")
    if j is None or type(j) in (bool, float):
        return j
    if type(j) is int:
        return check_int(j, where, -MAX_INT, MAX_INT)
    if type(j) is str:
        return check_str(j, where, 1000)
    if type(j) is not dict or len(j) != 1:
        fail(where, f"expected null, a boolean, a number, a string or a tagged value "
              f'like {{"tuple": [...]}}, got {kind_of(j)}')
    (tag, x), = j.items()
    w = f"{where}.{tag}"
    if tag in ("tuple", "list"):
        items = [decode_value(v, f"{w}[{i}]", budget, depth + 1)
                 for i, v in enumerate(check_list(x, w, MAX_ATTR_ITEMS))]
        return tuple(items) if tag == "tuple" else items
    if tag == "float":
        if x not in _NONFINITE:
            fail(w, f'expected "nan", "inf" or "-inf", got {brief(x)}')
        return _NONFINITE[x]
    if tag == "complex":
        parts = check_list(x, w, 2)
        if len(parts) != 2:
            fail(w, "expected [real, imaginary]")
        re_im = [decode_value(v, f"{w}[{i}]", budget, depth + 1) for i, v in enumerate(parts)]
        if any(type(v) not in (int, float) for v in re_im):
            fail(w, "expected two numbers")
        return complex(*re_im)
    if tag == "dtype":
        return check_dtype(x, w)
    fail(where, f"unknown tag {brief(tag)} (expected tuple, list, float, complex or dtype)")


def _generic_encode(attrs):
    return {str(k): encode_value(v, f"attribute {k}") for k, v in attrs.items()}


def _generic_decode(j, where):
    check_dict(j, where)
    if len(j) > 64:
        fail(where, "more than 64 attributes")
    budget = [MAX_ATTR_ITEMS]
    attrs = {}
    for k, v in j.items():
        if not (k.isidentifier() and k.isascii() and len(k) <= 100):
            fail(where, f"{brief(k)} is not an attribute name")
        attrs[k] = decode_value(v, f"{where}.{k}", budget)
    return attrs


GENERIC = (_generic_encode, _generic_decode)


def attr_codec(op):
    """The codec of an op type's attributes: none for a declared op type
    without attributes, from the attribute kinds its declaration names
    (`Declaration.attr_kinds`), explicit for random draws, else the generic one."""
    codec = ATTR_CODECS.get(op)
    if codec is None:
        declared = DECLARED.get(op)
        if declared is None or declared.attrs_of is no_attributes:
            return NO_ATTRS
        if declared.attr_kinds:
            return _attrs_codec({name: _KINDS[kind](op)
                                 for name, kind in declared.attr_kinds.items()})
        codec = GENERIC
    return codec


# Attributes that a declaration says are of a kind the format writes its own way
# (`Declaration.attr_kinds`): each kind's (encode, decode) for the op type.
_KINDS = {
    "dtype": lambda op: (lambda d: dtype_name(d, op), check_dtype),
    "axis": lambda op: _AXIS,                     # one axis
    "axes": lambda op: (list, _axes),             # a permutation, a list of axes
    "axes_or_all": lambda op: (                   # null: all axes (inputs of any rank)
        lambda a: None if a is None else list(a),
        lambda x, w: None if x is None else _axes(x, w)),
    "flag": lambda op: _FLAG,
    "rank": lambda op: (int, lambda x, w: check_int(x, w, 0, MAX_RANK)),
    "number": lambda op: (_same, _scalar),
    "paddings": lambda op: _PADDINGS,             # [before, after] per axis
    "index": lambda op: (_encode_index, _decode_index),
    "text": lambda op: (str, lambda x, w: check_str(x, w, 1000)),
}


def spec_text(s):
    return f"{s.dtype}{'[any]' if s.shape is None else list(s.shape)}"


def specs_text(specs):
    return "[" + ", ".join(spec_text(s) for s in specs) + "]"


def inputs_text(graph):
    """A trace's input specs, with the names of its symbolic sizes."""
    shapes = graph.symbolic_inputs or [s.shape for s in graph.inputs]
    return "[" + ", ".join(f"{s.dtype}{list(shape)}"
                           for s, shape in zip(graph.inputs, shapes)) + "]"
