"""The limits of what `load` accepts, and what `save` checks before writing.

A file of a few bytes must not make the loader, or a call of what it loaded,
take minutes or gigabytes; and whatever `save` writes, `load` must read back.
So both sides check the same numbers (minitape/saved_model/FORMAT.md, "Limits").
"""
import math


# Limits of what `load` accepts (minitape/saved_model/FORMAT.md, "Limits"): a file
# of a few bytes must not make the loader, or a call of what it loaded, take
# minutes or gigabytes.
# A scalar op costs about 120 bytes and 7 items of JSON, and about 20 us to
# check: a 50,000-op trace (a long Python loop of scalar ops) is 6 MB and
# loads in about 2 s; a cost or allocation bomb fails at its first node.
MAX_JSON_BYTES = 16 << 20      # saved_model.json
MAX_JSON_ITEMS = 500_000       # its list items and object fields (counted as commas)
MAX_INT_DIGITS = 20            # an integer in the JSON
MAX_NODES = 50_000             # nodes in all graphs together
MAX_RANK = 32
MAX_DEPTH = 32                 # nesting of argument, output and attribute structures
MAX_ATTR_ITEMS = 1024          # values in one node's attributes (generic codec)
MAX_INT = 1 << 62              # any integer attribute
MAX_TENSOR_BYTES = 1 << 28     # any one tensor: variable, constant, input or node output
MAX_ARRAY_BYTES = 1 << 28      # all variables and constants together (variables.npz)
MAX_GRAPH_BYTES = 1 << 29      # all values one call of a graph holds
MAX_GRAPH_WORK = 1 << 30       # element operations (multiply-adds) of one call of a graph
NPY_HEADER_BYTES = 1 << 16    # room for one .npy header in variables.npz


def size_of(shape):
    return math.prod(shape)


def size(spec):
    return math.prod(spec.shape)


def nbytes(spec):
    return math.prod(spec.shape) * spec.dtype.itemsize


# --- the checks `save` and `load` share: one message for each limit ----------------

def json_problem(text):
    """Why the text of saved_model.json is over the limits, or None."""
    size_in_bytes = len(text.encode("utf-8"))
    if size_in_bytes > MAX_JSON_BYTES:
        return f"is {size_in_bytes} bytes, more than the limit of {MAX_JSON_BYTES}"
    commas = text.count(",")
    if commas > MAX_JSON_ITEMS:  # each item costs the checks some microseconds
        return f"holds {commas} commas, more items than the limit of {MAX_JSON_ITEMS}"
    return None


def nodes_problem(count):
    """Why `count` nodes in all graphs together are too many, or None."""
    if count > MAX_NODES:
        return f"{count} nodes in all, more than the limit of {MAX_NODES}"
    return None


def arrays_problem(total_bytes):
    if total_bytes > MAX_ARRAY_BYTES:
        return (f"the variables and constants declare {total_bytes} bytes in all, more "
                f"than the limit of {MAX_ARRAY_BYTES}")
    return None
