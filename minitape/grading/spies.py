"""Spies for a check's run part: what the answer called, with what, and what
each call returned.

    with Spy(mt.GradientTape, "gradient", "jacobian") as tape:
        J = jacobian_matrix(f, point)
    [call.name for call in tape.calls]     # in the order the calls started
    any(call.result is J for call in tape.calls if call.name == "jacobian")

`Spy(cls, *names)` replaces the methods `names` of `cls` while the block
runs and puts them back after it; `watch(fn)` wraps a function the check
hands to the answer. Facts are taken from identities (`call.result is J`:
the very object that call returned), not from counting calls, so a decoy call
made to satisfy a spy does not change what the answer returned.

Trusted code installs the spies, in a student's kernel and in grading alike;
in grading the answer can neither replace a class's methods nor read a
spy's records (`minitape.grading.restricted`), so what a spy saw is what
happened. `Call.exact` says whether `self` was an instance of exactly `cls`
(an answer's subclass may override what the spied method calls).
"""
import functools


class Call:
    """One call: `name`, `args` (self first, for a method), `kwargs`,
    `result` (or `error`), and `exact`."""

    def __init__(self, name, args, kwargs, exact):
        self.name, self.args, self.kwargs, self.exact = name, args, kwargs, exact
        self.result, self.error = None, None

    def argument(self, position, keyword, default=None):
        """The argument passed at `position` (counting self) or as `keyword`."""
        if keyword in self.kwargs:
            return self.kwargs[keyword]
        return self.args[position] if len(self.args) > position else default

    def __repr__(self):
        return f"<call of {self.name}>"


def _recording(original, name, calls, exact_type=None):
    @functools.wraps(original)
    def spied(*args, **kwargs):
        exact = exact_type is None or (bool(args) and type(args[0]) is exact_type)
        call = Call(name, args, kwargs, exact)
        calls.append(call)
        try:
            call.result = original(*args, **kwargs)
        except BaseException as error:
            call.error = error
            raise
        return call.result
    return spied


class Spy:
    """Records the calls of the methods `names` of `cls` while the `with`
    block runs (`.calls`, a list of Call)."""

    def __init__(self, cls, *names):
        self.cls, self.names, self.calls = cls, names, []
        self._saved = {}

    def __enter__(self):
        for name in self.names:
            self._saved[name] = self.cls.__dict__.get(name)
            original = getattr(self.cls, name)
            setattr(self.cls, name, _recording(original, name, self.calls, self.cls))
        return self

    def __exit__(self, *exc):
        for name, saved in self._saved.items():
            if saved is None:
                delattr(self.cls, name)
            else:
                setattr(self.cls, name, saved)
        return False

    def of(self, name):
        """The calls of the method `name`."""
        return [call for call in self.calls if call.name == name]


def watch(fn, name=None):
    """`(wrapped, calls)`: `wrapped` calls `fn` and records each call in the
    list `calls`."""
    calls = []
    return _recording(fn, name or getattr(fn, "__name__", "function"), calls), calls
