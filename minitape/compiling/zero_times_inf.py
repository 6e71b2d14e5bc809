"""The rules' zero-times-inf masks in compiled programs (`compiler.py`).

A product rule's mask (`ops.zero_times_inf.moved`, the op ZeroWhereUnmoved) is
written into the product's own line: `grad_mul = moved(grad_cos, grad_cos *
y)` is `grad_cos * y` with its NaN entries made 0 where `grad_cos` is 0, and
`grad_cos * y` itself after one sum finds no NaN. A mask that constants prove
idle is no line at all.

matmul's and einsum's masks (`ops/zero_times_inf.py`) hang on AllFinite
checks. A program assumes that they pass: each is a line
`grad_finite = check_finite(x)` (True, named as AllFinite's line would be),
the masks are the plain products, and the values only the masks would read
are not computed; where a check fails it raises MasksNeeded, and the Program
runs the program written with the masks instead.
"""
import cmath
import collections
import re

import numpy as np

from ..ops.zero_times_inf import unmoved_zeroed

__all__ = ["moved", "MasksNeeded", "check_finite", "masks_in_place", "mask_is_idle",
           "is_true", "same_value"]


def moved(t, term, factor=None):
    """`term` with its NaN entries made 0 where `t` (or `factor`) is 0: the
    ZeroWhereUnmoved mask of a product rule (`minitape.ops.zero_times_inf.moved`).
    Where `term` has no NaN (one sum tells) it is returned as it is."""
    return unmoved_zeroed(term, term, t, factor)


_sum_all, _isfinite = np.add.reduce, cmath.isfinite  # (no ndarray.sum Python wrapper)


class MasksNeeded(Exception):
    """A check_finite line found an inf or NaN: this call needs the masks."""


def check_finite(*values):
    """True, as AllFinite's line would be; raises MasksNeeded unless every
    entry of the values is finite (as `ops.zero_times_inf.all_finite`, one
    sum each)."""
    for v in values:
        if not _isfinite(_sum_all(v, None)):
            raise MasksNeeded
    return True


_NAME = re.compile(r"(?<![.\w])[A-Za-z_]\w*")  # a name, not an attribute (`.T`)
_MOVED = re.compile(r"    (\w+) = moved\((\w+), (\w+)(, \w+)?\)  # .*")


def masks_in_place(lines, returned):
    """Each mask `m = moved(t, term)` of a product that nothing else uses is
    written into the product's own line (`grad_mul = moved(t, t * y)`), so
    masks add no lines; `t` must be ready by then, and `m` is renamed."""
    code = [line.split("  #", 1)[0] for line in lines]
    defined, uses = {}, collections.Counter(returned)
    for k, text in enumerate(code):
        target, is_line, _ = text.strip().partition(" = ")
        if is_line and "," not in target:
            defined[target] = k
        uses.update(_NAME.findall(text))
    rename, gone = {}, set()
    for j, line in enumerate(lines):
        match = _MOVED.fullmatch(line)
        if match is None:
            continue
        masked, t, term, factor = match.groups()
        i = defined.get(term)
        if i is None or uses[term] != 2 or _MOVED.fullmatch(lines[i]) or any(
                defined.get(name, -1) >= i for name in (t, (factor or ", " + t)[2:])):
            continue
        text, comment = lines[i].split("  # ", 1)
        product = text.partition(" = ")[2]
        lines[i] = f"    {term} = moved({t}, {product}{factor or ''})  # {comment}, masked"
        gone.add(j)
        rename[masked] = term
    if not rename:
        return lines, returned
    names = re.compile(r"(?<![.\w])(" + "|".join(map(re.escape, rename)) + r")\b")
    out = []
    for k, line in enumerate(lines):
        if k not in gone:
            text, sep, comment = line.partition("  #")
            out.append(names.sub(lambda m: rename[m.group(1)], text) + sep + comment)
    return out, [rename.get(r, r) for r in returned]


def is_true(ref, constants):
    """Whether a node input is the constant True (an AllFinite check)."""
    value = constants.get(ref.x) if ref.kind == "t" else ref.x if ref.kind == "c" else None
    return value is not None and np.asarray(value).dtype == np.bool_ and bool(np.all(value))


def same_value(a, b, expr):
    """Whether two node inputs name one computed value."""
    return a.kind == b.kind == "t" and a.x in expr and expr[a.x] == expr.get(b.x)


def mask_is_idle(known, in_shapes, out_shape):
    """Whether a ZeroWhereUnmoved mask (x, term, t[, factor]) is x at every call:
    its term is a constant without NaN, or its t (and factor) constants
    without a zero (a gradient's seed of ones), so nothing can be masked."""
    x, term, *unmoved = known
    if tuple(in_shapes[0]) != tuple(out_shape):
        return False
    if term is not None and np.asarray(term).dtype.kind in "fc":
        return not np.isnan(term).any()
    return all(v is not None and np.all(np.asarray(v) != 0) for v in unmoved)
