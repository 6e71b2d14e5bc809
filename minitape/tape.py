"""GradientTape: what TensorFlow's users call, on top of recording and the walk.

A tape is a recorder (`tape_entries.py`): while its `with` block runs it keeps
every op downstream of what it watches (`watch`, or variables read). Then
`gradient` runs one backward walk (`backward.py`) over what it recorded.
Because gradient rules are written with minitape ops, any tape that is
recording while the walk runs records the walk too, which gives higher-order
gradients.

`jacobian` and `batch_jacobian` (one walk per row, or one forward sweep per
column) are in `tape_jacobians.py`, a layer above, which also needs forward mode.
"""
import contextlib
import warnings

import numpy as np

from . import nest, ops, rules  # noqa: F401 (rules: the checked call of user rules)
from .core.backward import BackwardPass
from .core.context import state
from .core.recorder import Recorder
from .core.tensor import Tensor, TensorLike, Variable, html_views, is_floating, snapshot, text_views


class UnconnectedGradients:
    """What `gradient` returns for a source the target does not depend on:
    None (`NONE`, the default) or zeros of the source's shape (`ZERO`)."""
    NONE = "none"
    ZERO = "zero"


def check_unconnected(value):
    """`unconnected_gradients` as one of UnconnectedGradients' values."""
    value = getattr(value, "value", value)  # also accept an enum-like object
    if value not in (UnconnectedGradients.NONE, UnconnectedGradients.ZERO):
        raise ValueError(f"Unknown value for unconnected_gradients: {value!r} (use 'none' or "
                         "'zero': mt.UnconnectedGradients.NONE or ZERO)")
    return value


class GradientTape(Recorder):
    """Records ops on watched values so that gradients can be computed.

        with mt.GradientTape() as tape:
            y = x * x
        dy_dx = tape.gradient(y, x)

    A tape watches trainable variables that are read inside its block
    automatically (unless `watch_accessed_variables=False`) and tensors passed to
    `watch`. A non-persistent tape allows one gradient/jacobian call and then
    frees what it recorded; a persistent one keeps its records until deleted.

    `jacobian` and `batch_jacobian` are methods of this class too, defined in
    `tape_jacobians.py` (they need forward mode, which is built on this module).
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        self._ops = []        # recorded Operations, in the order they ran
        self._producer = {}   # tracked tensor id -> the op that made it (None: watched)
        self._watched = []    # what was watched, in order (keeps it alive)
        self._entered = False
        self._used = False

    # --- recording -----------------------------------------------------------
    def __enter__(self):
        if self._is_recording():
            raise ValueError("GradientTape: Tape is still recording, This can happen if you "
                             "try to re-enter an already-active tape.")
        self._entered = True
        state.tapes.append(self)
        return self

    def __exit__(self, *exc):
        self._stop()
        return False

    def _is_recording(self):
        return any(t is self for t in state.tapes)

    def _stop(self):
        state.tapes[:] = [t for t in state.tapes if t is not self]

    def watch(self, tensor):
        """Track `tensor` (or a nest of tensors and variables) as a source.

        Anything else (a Python number, a NumPy array, a string) is a
        ValueError, as in TensorFlow; nothing is watched then. A tensor that is
        not floating-point is not watched (a warning says so)."""
        flat = nest.flatten(tensor)
        for t in flat:
            if not isinstance(t, TensorLike):
                raise ValueError(f"GradientTape.watch: passed in object {t!r} of type "
                                 f"{type(t).__name__!r}, not mt.Tensor or mt.Variable")
        for t in flat:
            if isinstance(t, Variable):
                self._watch_variable(t)
            elif not is_floating(t.dtype):
                warnings.warn(f"GradientTape.watch: the dtype of the watched tensor "
                              f"must be floating (e.g. mt.float32), got {t.dtype}; "
                              "it is not watched", stacklevel=2)
            elif t._id not in self._producer:
                self._producer[t._id] = None
                self._watched.append(t)

    def _watch_variable(self, variable):
        if variable._id not in self._producer:
            self._producer[variable._id] = None
            self._watched.append(variable)

    def watched_variables(self):
        """The variables this tape watches, in the order they were created (as
        TensorFlow documents); still known after a one-shot tape's gradient."""
        return tuple(sorted((v for v in self._watched if isinstance(v, Variable)),
                            key=lambda v: v._id))  # ids grow with creation

    @contextlib.contextmanager
    def stop_recording(self):
        """Suspend this tape inside the block: ops there are not recorded.

        Only a recording tape can stop, as in TensorFlow: a tape with no
        records to keep (never entered, or a one-shot tape already used) raises
        RuntimeError, one entered but not recording now (its block is over, or
        it is stopped already) raises ValueError."""
        index = next((i for i, t in enumerate(state.tapes) if t is self), None)
        if index is None:
            if not self._entered or self._used:
                raise RuntimeError("GradientTape.stop_recording: Trying to stop recording a "
                                   "tape which is not recording (use it inside the tape's "
                                   "`with` block)")
            raise ValueError("GradientTape.stop_recording: Tape is not recording (its `with` "
                             "block is over, or it is stopped already)")
        del state.tapes[index]
        try:
            yield
        finally:
            state.tapes.insert(min(index, len(state.tapes)), self)

    def reset(self):
        """Throw away everything recorded and watched so far, and keep recording.

        As in TensorFlow, only inside the tape's `with` block (and not inside
        its `stop_recording`): elsewhere it raises ValueError and changes
        nothing, so a finished tape keeps what it recorded."""
        if not self._is_recording():
            raise ValueError("GradientTape.reset: Tape is not recording; call reset inside "
                             "the tape's `with` block (outside its stop_recording)")
        self._ops = []
        self._producer = {}
        self._watched = []
        self._used = False

    @property
    def operations(self):
        """The recorded operations, in the order they ran (read-only view)."""
        return tuple(self._ops)

    # --- differentiating ------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """d(target)/d(sources), with the structure of `sources`.

        A list of targets is summed. `output_gradients` are the upstream
        gradients of the targets (ones by default).
        """
        self._check_usable("gradient")
        unconnected = check_unconnected(unconnected_gradients)
        targets = as_targets(nest.flatten(target), "gradient", "target", integers="warn")
        flat_sources = as_sources(sources, "gradient", integers="warn")
        seeds = upstreams(targets, output_gradients)
        # Integer targets and sources have no gradient (TensorFlow warns, then
        # answers None): they stay out of the walk.
        pairs = [(t, g) for t, g in zip(targets, seeds) if t is not None]
        floating = [s for s in flat_sources if is_floating(s.dtype)]
        with self._one_call():
            grads = self._backward([t for t, _ in pairs], [g for _, g in pairs], floating)
        results = [result_or_zeros(grads, s, unconnected, ()) if is_floating(s.dtype) else None
                   for s in flat_sources]
        self._release()
        return nest.pack_like(sources, results)

    @contextlib.contextmanager
    def _one_call(self):
        """Around one gradient or jacobian call. A one-shot tape stops recording
        here, as in TensorFlow. If the call fails, every tape is left as it
        was: what the call recorded is undone, and this tape records again."""
        index = next((i for i, t in enumerate(state.tapes) if t is self), None)
        if index is not None and not self._persistent:
            del state.tapes[index]
        else:
            index = None
        before = marks()
        outer, state.derivative = state.derivative, "adjoint"
        try:
            yield
        except BaseException:
            rollback(before)
            if index is not None:
                state.tapes.insert(min(index, len(state.tapes)), self)
            raise
        finally:
            state.derivative = outer

    def _backward(self, targets, seeds, sources):
        """One backward walk: the gradients of every source (by tensor id)."""
        return BackwardPass(self, targets, seeds, sources).run()

    def backward_pass(self, target, sources, output_gradients=None):
        """A BackwardPass to step through by hand (for teaching and debugging).

        It does not count as this tape's one use and changes nothing unless run.
        """
        self._check_usable("backward_pass")
        targets = as_targets(nest.flatten(target), "backward_pass", "target")
        flat_sources = as_sources(sources, "backward_pass")
        return BackwardPass(self, targets, upstreams(targets, output_gradients),
                            flat_sources)

    def _check_usable(self, method):
        if self._used:
            raise RuntimeError(
                "A non-persistent GradientTape can only be used to compute one set of "
                "gradients (or jacobians); create it with persistent=True to call "
                f"{method} more than once")
        if not self._entered:
            raise RuntimeError(
                f"GradientTape.{method}: this tape was never entered, so it recorded "
                "nothing; put the computation inside `with mt.GradientTape() as tape:`")

    def _release(self):
        """After a one-shot tape's call: free the records, keep the variables."""
        if not self._persistent:
            self._used = True
            self._ops, self._producer = [], {}
            self._watched = [v for v in self._watched if isinstance(v, Variable)]

    def _repr_html_(self):
        view = html_views.get(GradientTape)  # display.py's, once imported
        return None if view is None else view(self)

    def _repr_pretty_(self, p, cycle):
        view = text_views.get(GradientTape, repr)
        p.text(view(self))

    def __repr__(self):
        kind = "persistent " if self._persistent else ""
        return (f"<mt.GradientTape ({kind}{len(self._ops)} ops recorded, "
                f"{len(self._watched)} watched)>")


def marks():
    """Where every active tape's record ends now (for `rollback`)."""
    return [(tape, len(tape._ops)) for tape in state.tapes]


def rollback(marks):
    """Undo what the tapes recorded after `marks()`: a failed computation
    leaves every tape as it was."""
    for tape, n in marks:
        for op in tape._ops[n:]:
            for y in op.outputs:
                tape._producer.pop(y._id, None)
        del tape._ops[n:]


def as_targets(values, method, what, integers="raise"):
    """The targets as tensors. One that is not floating-point raises a
    TypeError, or with `integers="warn"` gives a warning and None."""
    out = []
    for i, v in enumerate(values):
        if isinstance(v, Variable):
            v = snapshot(v)
        elif not isinstance(v, Tensor):
            raise TypeError(f"{method}: {what} {i} must be a tensor or variable, got "
                            f"{type(v).__name__} {v!r}")
        if not is_floating(v.dtype):
            v = _not_floating(method, what, i, v, integers)
        out.append(v)
    return out


def as_sources(sources, method, integers="raise"):
    """The leaves of `sources`, each a tensor or variable (see `as_targets`)."""
    flat = nest.flatten(sources)
    for i, s in enumerate(flat):
        if not isinstance(s, TensorLike):
            raise TypeError(f"{method}: source {i} must be a tensor or variable, got "
                            f"{type(s).__name__} {s!r}")
        if not is_floating(s.dtype):
            _not_floating(method, "source", i, s, integers)
    return flat


def _not_floating(method, what, i, x, integers):
    message = (f"{method}: the dtype of {what} {i} must be floating (e.g. mt.float32), "
               f"got {x.dtype}")
    if integers != "warn":
        raise TypeError(f"{message}; only floating-point tensors can be differentiated "
                        "(use mt.cast)")
    warnings.warn(f"{message}; it has no gradient (None)", stacklevel=4)
    return None


def upstreams(targets, output_gradients):
    """The upstream gradient of each target: ones, or the `output_gradients`
    (None for a target that is None)."""
    if output_gradients is None:
        return [None if t is None else Tensor(np.ones(t.shape, t.dtype)) for t in targets]
    given = nest.flatten(output_gradients)
    if len(given) != len(targets):
        raise ValueError(f"gradient: {len(targets)} target(s) but {len(given)} "
                         "output_gradients")
    out = []
    for t, g in zip(targets, given):
        if t is None:
            out.append(None)
            continue
        if g is None:
            out.append(Tensor(np.ones(t.shape, t.dtype)))
            continue
        if isinstance(g, TensorLike) and g.dtype != t.dtype:
            raise TypeError(f"gradient: output_gradients has dtype {g.dtype} but the "
                            f"target of shape {t.shape} has dtype {t.dtype}; use mt.cast")
        try:
            g = ops.convert_to_tensor(g, dtype=t.dtype)
        except (TypeError, ValueError) as e:
            raise type(e)(f"gradient: output_gradients {e}") from None
        if g.shape != t.shape:
            raise ValueError(f"gradient: output_gradients of shape {g.shape} do not match "
                             f"the target's shape {t.shape}")
        out.append(g)
    return out


def result_or_zeros(grads, source, unconnected, batch_shape):
    """The source's gradient from the walk's `grads`: None when unconnected,
    or zeros with `UnconnectedGradients.ZERO`."""
    g = grads.get(source._id)
    if g is None and unconnected == UnconnectedGradients.ZERO:
        g = ops.zeros(batch_shape + source.shape, source.dtype)
    return g
