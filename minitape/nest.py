"""Nested structures of lists, tuples and dicts, as `tape.gradient` accepts them."""


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
