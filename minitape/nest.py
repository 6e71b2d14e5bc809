"""Nested structures of lists, tuples and dicts, as `tape.gradient` accepts them,
and nested lists that hold tensors (which ops pack, as TensorFlow does)."""
import itertools

_SEQUENCES = frozenset((list, tuple))


def flatten(structure):
    """The leaves of `structure` in order (dict values in sorted key order)."""
    leaves, stack = [], [structure]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item[k] for k in reversed(sorted(item)))
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        else:
            leaves.append(item)
    return leaves


def pack_like(structure, leaves):
    """Rebuild `structure` with its leaves replaced, in `flatten`'s order."""
    it = iter(leaves)

    def build(item):
        if isinstance(item, dict):
            built = {k: build(item[k]) for k in sorted(item)}  # flatten's order
            return type(item)((k, built[k]) for k in item)     # the caller's order
        if isinstance(item, tuple) and hasattr(item, "_fields"):
            return type(item)(*[build(x) for x in item])
        if isinstance(item, (list, tuple)):
            return type(item)(build(x) for x in item)
        return next(it)

    return build(structure)


def is_nested(structure):
    return isinstance(structure, (list, tuple, dict))


def holds(value, kind):
    """Whether the list or tuple `value` holds an instance of `kind` at any
    depth. Every list passed to an op is asked, so it goes level by level over
    the set of the entries' types (at C speed, not entry by entry)."""
    if not isinstance(value, (list, tuple)):
        return False
    level = value
    while level:
        types = set(map(type, level))
        if any(issubclass(t, kind) for t in types):
            return True
        if types <= _SEQUENCES:
            nested = level
        elif types & _SEQUENCES or any(issubclass(t, (list, tuple)) for t in types):
            nested = [v for v in level if isinstance(v, (list, tuple))]
        else:
            return False
        level = list(itertools.chain.from_iterable(nested))
    return False


def first(value, kind):
    """The first instance of `kind` in a nested list, depth first, or None."""
    for v in value:
        if isinstance(v, kind):
            return v
        if isinstance(v, (list, tuple)):
            found = first(v, kind)
            if found is not None:
                return found
    return None


def map_leaves(value, kind, fn):
    """Nested lists like `value`, with each instance of `kind` replaced by fn(it)."""
    if isinstance(value, kind):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return [map_leaves(v, kind, fn) for v in value]
    return value


class Ref:
    """Hashable wrapper (TensorFlow's `tensor.ref()`): compares by identity, so
    tensors can be dict keys and set members."""

    __slots__ = ("_obj",)

    def __init__(self, obj):
        self._obj = obj

    def deref(self):
        return self._obj

    def __hash__(self):
        return id(self._obj)

    def __eq__(self, other):
        return isinstance(other, Ref) and other._obj is self._obj


def assert_same_structure(first, second, what):
    """Raise unless `second` nests like `first` (TensorFlow's
    `nest.assert_same_structure`, types checked): ValueError naming `what` when
    the nesting or lengths differ, TypeError when only a sequence's type does
    (a list for a tuple, another namedtuple, a dict for a list)."""
    if is_nested(first) != is_nested(second):
        raise ValueError(f"{what}: the two structures don't have the same nested structure: "
                         f"{describe(first)} and {describe(second)}")
    if not is_nested(first):
        return
    if _kind(first) != _kind(second):
        raise TypeError(f"{what}: the two structures don't have the same sequence type: "
                        f"{describe(first)} and {describe(second)}")
    if isinstance(first, dict):
        if sorted(first) != sorted(second):
            raise ValueError(f"{what}: the two structures don't have the same keys: "
                             f"{sorted(first)} and {sorted(second)}")
        pairs = [(first[k], second[k]) for k in sorted(first)]
    else:
        if len(first) != len(second):
            raise ValueError(f"{what}: the two structures don't have the same nested "
                             f"structure: {describe(first)} and {describe(second)}")
        pairs = zip(first, second)
    for a, b in pairs:
        assert_same_structure(a, b, what)


def _kind(value):
    """What a sequence's type must match: a namedtuple's own type, else list,
    tuple or dict."""
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)
    return dict if isinstance(value, dict) else tuple if isinstance(value, tuple) else list


def describe(value):
    """A structure in a few words: `a tuple of 2`, `a Tensor of shape (3,)`."""
    if isinstance(value, dict):
        return f"a dict with keys {sorted(value)}"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {len(value)}"
    shape = getattr(value, "shape", None)
    if shape is not None and hasattr(value, "dtype"):
        return f"a {type(value).__name__} of shape {tuple(shape)} and dtype {value.dtype}"
    return f"{type(value).__name__} {value!r:.40}"
