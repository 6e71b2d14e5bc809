"""A compiled program: the NumPy function `compiler.compile_graph` wrote for a
traced graph, and what its lines call at run time.

`Program` runs the function on arrays or tensors and packs its values into the
graph's output structure; where a check of matmul's or einsum's masks fails
(`zero_times_inf.py` here), it runs the program written with the masks instead,
after giving the variables it assigned their values back. The assignments'
helpers (`assign`, `assign_add`, ...) do what Variable's methods do, on the
arrays. `shown` is how a program's header comments show its bound values:
numbers, shapes and plain names only, never text that could spell code; the
last rewrites of a program's text drop the lines nothing uses and number the
names again (`drop_unused`, `renumber`).
"""
import re

import numpy as np

from .. import arguments
from ..graph import Ref, pack_outputs, show_constant
from .zero_times_inf import MasksNeeded
from ..core.tensor import Tensor, Variable, assigning, frozen

# --- what a program's assignment lines call ------------------------------------------

def assign(variable, value):
    variable._value = frozen(value, variable.dtype)


def assign_add(variable, value, sign=1):
    """As Variable.assign_add: an integer result that would wrap around raises;
    read and write as one step (another thread's assignment is never lost)."""
    delta = np.asarray(value, variable.dtype)
    with assigning:
        old = variable._value
        if old.dtype.kind in "iu":
            op = "assign_add" if sign > 0 else "assign_sub"
            new = arguments.exact_sum(variable._what(op), old, delta, sign)
        else:
            with np.errstate(over="ignore"):  # (as exact_sum: inf without a warning)
                new = old + delta if sign > 0 else old - delta
        new = np.asarray(new, variable.dtype)  # a new array: frozen without a copy
        new.flags.writeable = False
        variable._value = new


def assign_sub(variable, value):
    assign_add(variable, value, -1)



# --- the compiled program -------------------------------------------------------------

class Program:
    """A graph compiled for one set of input shapes: `run(arrays)` returns the
    flat output values (NumPy), `source` is the text that was compiled.
    `fallback` makes the program with matmul's and einsum's masks written out
    (compile_graph's `masks`), which runs a call whose checks fail, after the
    variables the program assigns get their values back (and the random
    `streams` it draws from their state: the call draws its numbers once)."""

    def __init__(self, source, fn, outputs, fallback=None, assigned=(), streams=()):
        self.source, self.fn, self.outputs = source, fn, outputs
        self.fallback, self.assigned, self.masked = fallback, assigned, None
        self.streams = streams
        # The usual output structures, one value or a tuple of values: packed without a walk.
        self._single = isinstance(outputs, Ref)
        self._flat_tuple = type(outputs) is tuple and all(isinstance(r, Ref) for r in outputs)

    def __call__(self, arrays):
        """The outputs, as Tensors in the graph's output structure."""
        if self.fallback is not None:
            return self._pack(self._checked(arrays))
        return self._pack(self.fn(*arrays))

    def run(self, tensors):
        """The same, for input Tensors (one input kept fast)."""
        if self.fallback is not None:
            return self._pack(self._checked([t._value for t in tensors]))
        return self._pack(self.fn(tensors[0]._value) if len(tensors) == 1 else
                          self.fn(*[t._value for t in tensors]))

    def _checked(self, arrays):
        """The program's values, or, where a check_finite line fails, the
        fallback's, run after the assigned variables get their values back."""
        before = [v._value for v in self.assigned]
        drawn = [s.generator().bit_generator.state for s in self.streams]
        try:
            return self.fn(*arrays)
        except MasksNeeded:
            for v, value in zip(self.assigned, before):
                v._value = value
            for s, state_ in zip(self.streams, drawn):
                s.generator().bit_generator.state = state_
            if self.masked is None:
                self.masked = self.fallback()
            return self.masked.fn(*arrays)

    def _pack(self, values):
        if self._single:
            return Tensor(values[0])
        if self._flat_tuple:
            return (Tensor(values[0]),) if len(values) == 1 else \
                tuple([Tensor(v) for v in values])
        values = iter(values)
        return pack_outputs(self.outputs, lambda ref: Tensor(next(values)))

    def __repr__(self):
        return self.source


def shown(value):
    """A bound value as a header comment shows it: one line, plain (see `plain`)."""
    if isinstance(value, (np.ndarray, np.generic)):
        v = np.asarray(value)
        text, kind = show_constant(v), f"{v.dtype.name} array of shape {tuple(v.shape)}"
        if v.ndim == 0:
            return f"{text} ({v.dtype.name})"
        if not text.startswith(v.dtype.name) and len(text) <= 60:
            return f"{text} ({v.dtype.name}, shape {tuple(v.shape)})"
        if v.size and v.dtype.kind in "biufc":
            first = v.reshape(-1)[0]
            if np.all(v == first):
                return f"{kind}, every number {show_constant(first)}"
            n = v.shape[0]
            if v.size == n * n and np.array_equal(v.reshape(n, n), np.eye(n)):
                return f"{kind}: the {n} x {n} identity, one 1 per row"
        return f"{kind} ({v.size} numbers, not shown)"
    if isinstance(value, Variable):
        return f"the variable {plain(value.name)} ({plain(np.dtype(value.dtype).name)}, " \
               f"shape {tuple(value.shape)})"
    if isinstance(value, np.dtype):
        return f"np.{plain(value.name)}"
    if isinstance(value, str):
        return plain(value)
    return plain(repr(value))


PLAIN = re.compile(r"[ !#-&(-\[\]-~]*")  # printable ASCII but quotes and backslashes


def plain(text, limit=100):
    """`text` for a header comment when it is plain (printable ASCII, no quote or
    backslash, short), else a note that it is not shown: no string that could
    spell code, and no line break that could end the comment."""
    return text if len(text) <= limit and PLAIN.fullmatch(text) else "(not shown)"


# --- rewrites of a whole program's text -------------------------------------------------

NAME = re.compile(r"(?<![.\w])[A-Za-z_]\w*")  # a name, not an attribute (`.T`)


def drop_unused(lines, returned):
    """Lines whose value nothing uses (left behind by a simplification, such as
    a mask `where` on a constant condition) dropped, but for check_finite lines
    (they may raise); returns the names the kept lines and the return use, and
    the kept lines."""
    used, kept = set(returned), []
    for line in reversed(lines):
        code = line.split("  #", 1)[0]
        target, _, value = code.strip().partition(" = ")
        if value and not used.intersection(target.split(", ")) \
                and not value.startswith("check_finite("):  # (several outputs: a, b = ...)
            continue
        used.update(NAME.findall(value or code))
        kept.append(line)
    kept.reverse()
    return used, kept


def renumber(lines, returned, bases, taken):
    """Number the names of the lines left again, in order (`mul`, `mul_1`, ...),
    so a dropped line leaves no gap in the numbering."""
    names = Names(taken)
    new = {}
    for line in lines:
        target = line.split("  #", 1)[0].strip().partition(" = ")
        if target[1]:
            for name in target[0].split(", "):
                if name in bases:
                    new[name] = names.new(bases[name])
    if all(a == b for a, b in new.items()):
        return lines, returned
    def renamed(text):
        return NAME.sub(lambda m: new.get(m.group(0), m.group(0)), text)
    return [renamed(line.split("  #", 1)[0]) + "  #" + line.split("  #", 1)[1]
            if "  #" in line else renamed(line) for line in lines], [renamed(r) for r in returned]


class Names:
    """Hands out unique identifiers: `mul`, `mul_1`, `mul_2`, ..."""

    def __init__(self, used=()):
        self.used = set(used)  # names taken already (the helpers a program calls)
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
