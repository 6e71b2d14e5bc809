"""Forward mode: tangents pushed forward through the ops, beside the values.

Reverse mode (`GradientTape.gradient`) answers "how does this one output depend
on every input?" with one backward walk, so a Jacobian with m output elements
costs m walks (`jacobian` batches them, but they are still m rows of work).
Forward mode answers the transposed question, "how does every output move
when the inputs move in the direction v?": each value gets a *tangent* (its
derivative along v), and each op's JVP rule computes the tangents of its
outputs from those of its inputs: J v, a Jacobian-vector product. A Jacobian
with n input elements costs n such sweeps, one per one-hot direction. Few
inputs and many outputs: forward wins; many inputs and few outputs (a loss):
reverse wins. `GradientTape.jacobian` picks by itself (`jacobian_direction`).

Where it happens:
- `push_tangents(op, tangents)` is one step: it runs the op's JVP rule
  (`tangents.py`, with the fallback through a gradient rule).
- `ForwardAccumulator` (TensorFlow's `tf.autodiff.ForwardAccumulator`) is a
  recorder like a tape: `tape.record` hands it every op whose inputs carry its
  tangents, and it takes the step at once.
- `GradientTape.jacobian` takes the same steps over the ops a tape recorded,
  with a batch of one-hot tangents at once (`tape_jacobians.py`).

JVP rules are written with minitape ops, like gradient rules, so tapes record
them: differentiating a JVP (reverse-over-forward) just works, and so does a
JVP of a gradient (forward-over-reverse: a Hessian-vector product).
"""

from . import nest, ops
from .core.context import state
from .tape_jacobians import GradientTape, jacobian_direction  # noqa: F401  (mt.autodiff.*)
from .core.registry import RegisterJVP  # noqa: F401  (`mt.autodiff.RegisterJVP`)
from .tangents import push_tangents
from .core.recorder import Recorder
from .tape import UnconnectedGradients, check_unconnected
from .core.tensor import Tensor, TensorLike, convert_to_tensor, is_floating


class ForwardAccumulator(Recorder):
    """Forward-mode autodiff, as TensorFlow's `tf.autodiff.ForwardAccumulator`:

        with mt.autodiff.ForwardAccumulator(primals=x, tangents=v) as acc:
            y = f(x)
        acc.jvp(y)         # J v: how y moves when x moves along v

    `primals` is a tensor or variable, or a nest of them, and `tangents` a
    matching nest of values of the same shapes. Inside the block, each op that
    depends on a primal gets the tangent of its output computed at once, from
    its inputs' tangents, by the op's JVP rule: one forward pass gives J v for
    every value, at about the cost of running f again.

    It nests with GradientTape both ways. A tape around the accumulator records
    the tangent computations, so `tape.gradient(acc.jvp(y), x)` differentiates
    a JVP (reverse-over-forward). A tape inside it has its backward walk seen
    by the accumulator, so `acc.jvp(tape.gradient(loss, x))` is a
    Hessian-vector product H v (forward-over-reverse); that inner tape does
    not record the tangent computations (a tangent's gradient is None by it),
    as in TensorFlow.
    """

    pushes_tangents = True  # (recording.Recorder)

    def __init__(self, primals, tangents):
        flat_primals = nest.flatten(primals)
        flat_tangents = _flatten_like(primals, tangents)
        self._tangents = {}   # tensor id -> its tangent (a Tensor)
        self._producer = {}   # what `tape.record` checks: ids of the tensors we track
        self._ops = _TangentPusher(self)  # where `tape.record` hands us each op
        self._primals = []
        for i, (p, t) in enumerate(zip(flat_primals, flat_tangents)):
            if not isinstance(p, TensorLike):
                raise TypeError(f"ForwardAccumulator: primal {i} must be a tensor or "
                                f"variable, got {type(p).__name__} {p!r}")
            if not is_floating(p.dtype):
                raise TypeError(f"ForwardAccumulator: primal {i} has dtype {p.dtype}; "
                                "only floating-point tensors have tangents")
            if isinstance(t, TensorLike) and t.dtype != p.dtype:  # TensorFlow: ValueError
                raise ValueError(f"ForwardAccumulator: tangent {i} has dtype {t.dtype}, but "
                                 f"its primal {i} ({_brief(p)}) has dtype {p.dtype}; "
                                 "cast the tangent with mt.cast")
            try:
                t = convert_to_tensor(t, dtype=p.dtype)
            except (TypeError, ValueError) as e:
                raise type(e)(f"ForwardAccumulator: tangent {i} for primal {i} "
                              f"({_brief(p)}, dtype {p.dtype}): {e}") from None
            if t.shape != p.shape:
                raise ValueError(f"ForwardAccumulator: tangent {i} has shape {t.shape}, "
                                 f"but its primal has shape {p.shape}")
            if p._id in self._tangents:  # which of the two tangents would count?
                raise ValueError(f"ForwardAccumulator: primal {i} ({p!r}) was specified as "
                                 "a primal multiple times. This may indicate an error. If it "
                                 "was intended, please sum the corresponding tangents.")
            self._tangents[p._id] = t
            self._producer[p._id] = None
            self._primals.append(p)

    def __enter__(self):
        if any(r is self for r in state.tapes):
            raise ValueError("ForwardAccumulator: Accumulator is already recording.")
        state.tapes.append(self)
        return self

    def __exit__(self, *exc):
        state.tapes[:] = [r for r in state.tapes if r is not self]
        return False

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """The tangent of each tensor in `primals` (a tensor or a nest): how it
        moves when the accumulator's primals move along their tangents. A
        tensor that does not depend on them gets None (or zeros with
        `unconnected_gradients=mt.UnconnectedGradients.ZERO`)."""
        unconnected = check_unconnected(unconnected_gradients)

        def tangent_of(i, t):
            if not isinstance(t, TensorLike):
                raise TypeError(f"ForwardAccumulator.jvp: primal {i} must be a tensor or "
                                f"variable, got {type(t).__name__} {t!r}")
            tangent = self._tangents.get(t._id)
            if tangent is None and unconnected == UnconnectedGradients.ZERO:
                tangent = ops.zeros(t.shape, t.dtype)
            return tangent

        return nest.pack_like(primals, [tangent_of(i, t)
                                        for i, t in enumerate(nest.flatten(primals))])

    def __repr__(self):
        return (f"<mt.autodiff.ForwardAccumulator ({len(self._primals)} primal(s), "
                f"{len(self._tangents)} tangent(s) so far)>")


def _flatten_like(primals, tangents):
    """The tangents, one per leaf of the nest `primals` (so the tangent of one
    tensor may be given as a list of numbers)."""
    if isinstance(primals, dict):
        if not isinstance(tangents, dict) or set(tangents) != set(primals):
            raise ValueError(f"ForwardAccumulator: the tangents {tangents!r} do not have "
                             f"the structure of the primals (keys {sorted(primals)})")
        return [t for k in sorted(primals) for t in _flatten_like(primals[k], tangents[k])]
    if isinstance(primals, (list, tuple)):
        if not isinstance(tangents, (list, tuple)) or len(tangents) != len(primals):
            raise ValueError(f"ForwardAccumulator: {len(primals)} primal(s) but the "
                             f"tangents {tangents!r} do not match them")
        return [t for p, v in zip(primals, tangents) for t in _flatten_like(p, v)]
    return [tangents]


class _TangentPusher(list):
    """A ForwardAccumulator's `_ops`. `tape.record` appends each op whose
    inputs the accumulator tracks, as it does for a tape; instead of keeping the
    op, the accumulator pushes its tangents through the op right away."""

    def __init__(self, accumulator):
        super().__init__()
        self.accumulator = accumulator

    def append(self, op):
        acc = self.accumulator
        # While the JVP rule runs, its ops are ours to compute, not to record,
        # and tapes and accumulators entered after us must not record them
        # either, as TensorFlow does: a tape inside the accumulator gives None
        # for the gradient of a tangent (forward-over-reverse keeps no tangent
        # computation on the inner tape). We pause them by letting them track
        # nothing for a moment: `record` skips a recorder whose `_producer` is
        # empty. Tapes and accumulators entered before us do record them: that
        # is how tangents get derivatives (reverse-over-forward).
        index = next((i for i, r in enumerate(state.tapes) if r is acc), 0)
        paused = [r for r in state.tapes[index:]
                  if isinstance(r, (GradientTape, ForwardAccumulator))]
        tracked = [r._producer for r in paused]
        for r in paused:
            r._producer = {}
        outer, state.derivative = state.derivative, "tangent"
        try:
            # A custom_gradient call: as in TensorFlow, an output moves as f's
            # own result moved through f's ops (the custom rule is ignored);
            # only an output whose result has no tangent that way (a constant,
            # a round, a recompute_grad that recorded nothing) takes the rule's.
            forward = op.attrs.get("_forward_outputs") if op.attrs else None
            found = [] if forward is None else [acc._tangents.get(y._id) for y in forward]
            if forward is None or None in found:
                push_tangents(op, acc._tangents)
            for y, t in zip(op.outputs, found):
                if t is not None:
                    acc._tangents[y._id] = t
        finally:
            state.derivative = outer
            for r, producer in zip(paused, tracked):
                r._producer = producer


def _brief(p):
    """A primal named in a message: a variable by name, a tensor by shape."""
    name = getattr(p, "name", None) if not isinstance(p, Tensor) else None
    return f"variable {name!r}" if name else f"a tensor of shape {p.shape}"
