"""GradientTape: record the ops that touch watched values, then walk them backwards.

Recording. Every op, after computing its value, calls `record`. Each active tape
checks whether any input is something it tracks (a watched tensor or variable, or
the output of an op it recorded); if so it appends the op and starts tracking the
outputs. So a tape holds exactly the ops that lie downstream of what it watches,
in the order they ran, and nothing else.

The backward walk (`BackwardPass`) has three phases:

1. Find the ops between the sources and the target: walk back from the target
   through the ops that produced each input (an explicit stack, never
   recursion), then sweep those ops forwards in recording order keeping only
   the ones that some source flows into.
2. Count, for every such op, how many of the kept ops consume its outputs.
   That count is how many gradient contributions its outputs are still waiting
   for (TensorFlow's tape.h calls these usage counts).
3. Start from the ops whose counts are zero (the ones producing the target),
   run each op's gradient rule, add the results into the gradients of its
   inputs, and decrement the count of the op that produced each input. An op
   whose count reaches zero has received every contribution, so it is ready.

Because gradient rules are written with minitape ops, any tape that is recording
while the walk runs records the walk too, which gives higher-order gradients.

`jacobian` can also go the other way: sweep tangents forward over the same
recorded ops, running each op's JVP rule in recording order (forward mode,
`autodiff.py`). It picks the direction that needs fewer passes.
"""
import contextlib
import itertools
import math
import warnings

import numpy as np

from . import arguments, nest, registry
from .registry import _rules
from .context import state
from .tensor import Tensor, Variable, _TensorLike, is_floating

_next_seq = itertools.count().__next__


class _AllTrue:
    """`needs` of an op outside any backward walk: every input needs a gradient."""

    def __getitem__(self, i):
        return True


_ALL = _AllTrue()


class Operation:
    """One recorded call of an op: its type, inputs, outputs and attributes.

    Gradient rules read `op.inputs`, `op.outputs` and `op.get_attr(name)`.
    """

    __slots__ = ("type", "name", "inputs", "outputs", "attrs", "seq", "needs")

    def __init__(self, op_type, inputs, outputs, attrs=None, name=None):
        self.type = op_type
        self.name = name or op_type
        self.inputs = inputs
        self.outputs = outputs
        self.attrs = attrs
        self.seq = _next_seq()  # creation order: a topological order of all ops
        # Set by the backward walk just before this op's rule runs: needs[i] is
        # False when input i leads to no source, so a rule may skip that gradient
        # (TensorFlow's `skip_input_indices`). All True outside a walk.
        self.needs = _ALL

    def get_attr(self, name):
        if not self.attrs or name not in self.attrs:
            raise ValueError(f"Operation '{self.name}' (type {self.type}) has no attr "
                             f"named {name!r}; it has {sorted(self.attrs or ())}")
        return self.attrs[name]

    def __repr__(self):
        ins = ", ".join(str(x.shape) for x in self.inputs)
        outs = ", ".join(str(y.shape) for y in self.outputs)
        return f"<Operation {self.name!r} type={self.type} inputs=[{ins}] outputs=[{outs}]>"


def record(op_type, inputs, outputs, attrs=None, name=None):
    """Give a finished op to every active tape that tracks one of its inputs."""
    op = None
    for tape in state.tapes:
        producer = tape._producer
        for x in inputs:
            if x._id in producer:
                break
        else:
            continue
        if op is None:
            op = Operation(op_type, inputs, outputs, attrs, name)
        tape._ops.append(op)
        for y in outputs:
            producer[y._id] = op
    return op


class UnconnectedGradients:
    """What `gradient` returns for a source the target does not depend on:
    None (`NONE`, the default) or zeros of the source's shape (`ZERO`)."""
    NONE = "none"
    ZERO = "zero"


def _unconnected(value):
    value = getattr(value, "value", value)  # also accept an enum-like object
    if value not in (UnconnectedGradients.NONE, UnconnectedGradients.ZERO):
        raise ValueError(f"unconnected_gradients must be 'none' or 'zero', got {value!r}")
    return value


class BackwardPass:
    """The backward walk of one gradient computation, as an iterator of steps.

    Each step is a tuple (op, output_grads, input_grads): the op whose rule ran,
    its upstream gradients (one per output) and what it sent to its inputs.

    `tape.gradient` runs it to the end; the stepper widget runs it one step at a
    time. `grads` maps tensor ids to the gradients accumulated so far.
    """

    def __init__(self, tape, targets, upstreams, sources):
        self.producer = tape._producer
        self.grads = {}
        for t, g in zip(targets, upstreams):
            prev = self.grads.get(t._id)
            self.grads[t._id] = g if prev is None else prev + g
        self.source_ids = {s._id for s in sources}
        self.ops, self.needs, self.pending = _ops_between(
            self.producer, [t._id for t in targets], self.source_ids)

    def steps(self):
        producer, grads, sources = self.producer, self.grads, self.source_ids
        needs, pending = self.needs, self.pending
        # Phase 3: start from the ops nobody downstream waits on (they made the
        # target); run rules latest first.
        ready = [op for op in self.ops if pending[op.seq] == 0]
        while ready:
            op = ready.pop()
            outputs = op.outputs
            if len(outputs) == 1:
                yid = outputs[0]._id
                out_grads = [grads.get(yid) if yid in sources else grads.pop(yid, None)]
            else:
                out_grads = [grads.get(y._id) if y._id in sources else grads.pop(y._id, None)
                             for y in outputs]
            flags = op.needs = needs[op.seq]
            in_grads = _run_rule(op, out_grads)
            if in_grads is not None:
                yield op, out_grads, in_grads
            for i, x in enumerate(op.inputs):
                if not flags[i]:
                    continue  # this input leads to no source
                xid = x._id
                if in_grads is not None and in_grads[i] is not None:
                    prev = grads.get(xid)
                    grads[xid] = in_grads[i] if prev is None else prev + in_grads[i]
                p = producer.get(xid)
                if p is not None and p.seq in pending:
                    pending[p.seq] -= 1          # one consumer of p is done
                    if pending[p.seq] == 0:      # all of them: p's gradient is complete
                        ready.append(p)

    def run(self):
        for _ in self.steps():
            pass
        return self.grads


def _ops_between(producer, target_ids, source_ids):
    """Phases 1 and 2: the recorded ops on some path from a source to a target
    (in recording order), for each op which inputs lie on such a path, and for
    each op how many of those ops consume its outputs (keys: op.seq)."""
    # 1a. Back from the targets: every op they depend on (an explicit stack).
    found = {}
    stack = [producer.get(i) for i in target_ids]
    while stack:
        op = stack.pop()
        if op is None or op.seq in found:
            continue
        found[op.seq] = op
        for x in op.inputs:
            p = producer.get(x._id)
            if p is not None and p.seq not in found:
                stack.append(p)
    # 1b. Forward from the sources, in recording order (seq): keep the ops that
    # some source flows into. 2. Count the kept consumers of each kept op.
    live = set(source_ids)  # ids of tensors that some source flows into
    kept, needs, pending = [], {}, {}
    for seq in sorted(found):
        op = found[seq]
        flags = [x._id in live for x in op.inputs]
        if True not in flags:
            continue
        kept.append(op)
        needs[seq] = flags
        pending[seq] = 0
        for x, flag in zip(op.inputs, flags):
            if flag:
                p = producer.get(x._id)
                if p is not None and p.seq in pending:
                    pending[p.seq] += 1
        for y in op.outputs:
            live.add(y._id)
    return kept, needs, pending


def _run_rule(op, out_grads):
    """Call the op's gradient rule: one gradient (or None) per input, or None
    when no upstream gradient reached the op."""
    if len(out_grads) == 1:  # the common case, kept fast
        if out_grads[0] is None:
            return None
    elif any(g is None for g in out_grads):
        if all(g is None for g in out_grads):
            return None
        out_grads = _fill_missing(op, out_grads)
    entry = _rules.get(op.type) if op.attrs is None else None  # the common case
    if entry is None:
        entry = registry.lookup(op)
    if entry is None:  # NotDifferentiable
        return [None] * len(op.inputs)
    rule, batch_safe = entry
    try:
        if batch_safe:  # built-in rules: trusted, any leading batch dims
            result = rule(op, *out_grads)
            return result if isinstance(result, (list, tuple)) else (result,)
        batch_shape = _batch_shape(op, out_grads)
        if not batch_shape:
            return registry.checked_result(op, rule(op, *out_grads), op.inputs, (),
                                           "gradient")
        return registry.row_by_row(op, rule, out_grads, op.outputs, op.inputs, batch_shape,
                                   "gradient")
    except Exception as e:
        if not getattr(e, "_mt_noted", False):
            e.add_note(f"(raised by the gradient of operation '{op.name}', "
                       f"op type {op.type})")
            e._mt_noted = True
        raise


def _batch_shape(op, out_grads):
    g, y = out_grads[0], op.outputs[0]
    return g.shape[:g.ndim - y.ndim]


def _fill_missing(op, out_grads):
    """Zeros for the outputs of a multi-output op that got no gradient."""
    present = next(i for i, g in enumerate(out_grads) if g is not None)
    g, y = out_grads[present], op.outputs[present]
    batch_shape = g.shape[:g.ndim - y.ndim]
    return [g if g is not None else ops.zeros(batch_shape + y.shape, y.dtype)
            for g, y in zip(out_grads, op.outputs)]


def _rollback(marks):
    """Undo what active tapes recorded during a failed gradient computation."""
    for tape, n in marks:
        for op in tape._ops[n:]:
            for y in op.outputs:
                tape._producer.pop(y._id, None)
        del tape._ops[n:]


class GradientTape:
    """Records ops on watched values so that gradients can be computed.

        with mt.GradientTape() as tape:
            y = x * x
        dy_dx = tape.gradient(y, x)

    A tape watches trainable variables that are read inside its block
    automatically (unless `watch_accessed_variables=False`) and tensors passed to
    `watch`. A non-persistent tape allows one gradient/jacobian call and then
    frees what it recorded; a persistent one keeps its records until deleted.
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
            raise RuntimeError("GradientTape: this tape is already recording")
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
        """Track `tensor` (or a nest of tensors and variables) as a source."""
        for t in nest.flatten(tensor):
            if isinstance(t, Variable):
                self._watch_variable(t)
            elif isinstance(t, Tensor):
                if not is_floating(t.dtype):
                    warnings.warn(f"GradientTape.watch: the dtype of the watched tensor "
                                  f"must be floating (e.g. mt.float32), got {t.dtype}; "
                                  "it is not watched", stacklevel=2)
                    continue
                if t._id not in self._producer:
                    self._producer[t._id] = None
                    self._watched.append(t)
            else:
                raise TypeError(f"GradientTape.watch: expected tensors or variables, "
                                f"got {type(t).__name__} {t!r}")

    def _watch_variable(self, variable):
        if variable._id not in self._producer:
            self._producer[variable._id] = None
            self._watched.append(variable)

    def watched_variables(self):
        """The variables this tape watches, in the order it first saw them."""
        return tuple(v for v in self._watched if isinstance(v, Variable))

    @contextlib.contextmanager
    def stop_recording(self):
        """Suspend this tape inside the block: ops there are not recorded."""
        index = next((i for i, t in enumerate(state.tapes) if t is self), None)
        if index is None:
            raise RuntimeError("GradientTape.stop_recording: this tape is not recording; "
                               "use it inside the tape's `with` block")
        del state.tapes[index]
        try:
            yield
        finally:
            state.tapes.insert(min(index, len(state.tapes)), self)

    def reset(self):
        """Throw away everything recorded and watched so far (keep recording)."""
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
        unconnected = _unconnected(unconnected_gradients)
        targets = _as_tensors(nest.flatten(target), "gradient", "target")
        flat_sources = _as_sources(sources, "gradient")
        upstreams = _upstreams(targets, output_gradients)
        grads = self._backward(targets, upstreams, flat_sources)
        results = [_result(grads, s, unconnected, ()) for s in flat_sources]
        self._release()
        return nest.pack_like(sources, results)

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True,
                 experimental_direction="auto"):
        """The full Jacobian: for each source, shape `target.shape + source.shape`.

        It is built in one of two directions, with equal results (to rounding):
        - reverse: one backward walk per *row*, that is per element of the
          target, starting from an upstream gradient that is 1 at that element;
        - forward: one forward sweep over the recorded ops per *column*, that is
          per element of a source, starting from a tangent that is 1 there.
        `experimental_direction="auto"` (the default) sweeps forward when the
        sources have clearly fewer elements than the target (twice the sum of
        their sizes is less than the target's size: `jacobian_direction`),
        else walks backward; "forward" or "reverse" forces one.

        With `experimental_use_pfor=True` the rows (or columns) travel together
        as a leading batch dimension, in chunks of `parallel_iterations` of
        them (by default as many as keep each batched tensor under
        `_CHUNK_ELEMENTS` numbers). With False it loops, one walk per row or
        column.
        """
        self._check_usable("jacobian")
        unconnected = _unconnected(unconnected_gradients)
        _check_parallel_iterations("jacobian", parallel_iterations)
        if not isinstance(target, _TensorLike):
            raise TypeError(f"jacobian: target must be a single tensor, got a "
                            f"{type(target).__name__}; call jacobian once per target "
                            "or mt.stack the targets first")
        (target,) = _as_tensors([target], "jacobian", "target")
        flat_sources = _as_sources(sources, "jacobian")
        tshape = target.shape
        n_in = sum(s.size for s in flat_sources)
        results = []
        if _pick_direction(experimental_direction, n_in, target.size, "jacobian") == "forward":
            # Column j of source s: the tangent of the target when s moves along
            # its j-th element. Stacked: (s.size,) + tshape; move that axis last.
            for s in flat_sources:
                columns = self._stacked_tangents(
                    target, s, _OneHot(s.shape, s.dtype), s.size, unconnected,
                    parallel_iterations, experimental_use_pfor)
                results.append(None if columns is None else ops.reshape(
                    _axis_to_end(columns), tshape + s.shape))
        else:
            rows = self._stacked_gradients(
                target, _OneHot(tshape, target.dtype), target.size, flat_sources,
                unconnected, parallel_iterations, experimental_use_pfor)
            results = [None if r is None else ops.reshape(r, tshape + s.shape)
                       for r, s in zip(rows, flat_sources)]
        self._release()
        return nest.pack_like(sources, results)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True,
                       experimental_direction="reverse"):
        """Per-example Jacobians: target (b, ...), source (b, ...) ->
        (b,) + target.shape[1:] + source.shape[1:].

        Row k of the upstream is 1 at output element k of *every* example, so the
        result is d(sum over the batch of y[:, k])/dx. That equals the
        per-example Jacobian only when examples do not interact.

        `experimental_direction="forward"` (or "auto", which chooses as
        `jacobian` does, by the sizes of one example) sweeps tangents forward
        instead: column j is 1 at input element j of every example, which gives
        the same per-example Jacobian when examples do not interact. When they
        do (BatchNormalization in training), the two directions answer
        different questions, so the default stays TensorFlow's reverse mode.
        """
        self._check_usable("batch_jacobian")
        unconnected = _unconnected(unconnected_gradients)
        _check_parallel_iterations("batch_jacobian", parallel_iterations)
        if not isinstance(source, _TensorLike):
            raise TypeError(f"batch_jacobian: source must be a single tensor, got a "
                            f"{type(source).__name__}; call batch_jacobian once per source")
        (target,) = _as_tensors([target], "batch_jacobian", "target")
        (source,) = _as_sources([source], "batch_jacobian")
        if target.ndim < 1 or source.ndim < 1 or target.shape[0] != source.shape[0]:
            raise ValueError(
                f"batch_jacobian: the first (batch) dimensions of the target {target.shape} "
                f"and the source {source.shape} must be equal")
        b, ttail, stail = target.shape[0], target.shape[1:], source.shape[1:]
        m, n = math.prod(ttail), math.prod(stail)
        direction = _pick_direction(experimental_direction, n, m, "batch_jacobian")
        result = None
        if direction == "forward":
            columns = self._stacked_tangents(
                target, source, _OneHot(stail, source.dtype, b), n, unconnected,
                parallel_iterations, experimental_use_pfor)
            if columns is not None:  # (n, b) + ttail -> (b,) + ttail + stail
                result = ops.reshape(_axis_to_end(columns), (b,) + ttail + stail)
        else:
            (rows,) = self._stacked_gradients(
                target, _OneHot(ttail, target.dtype, b), m, [source], unconnected,
                parallel_iterations, experimental_use_pfor)
            if rows is not None:  # (m, b) + stail -> (b,) + ttail + stail
                perm = (1, 0) + tuple(range(2, rows.ndim))
                result = ops.reshape(ops.transpose(rows, perm), (b,) + ttail + stail)
        self._release()
        return result

    def _stacked_gradients(self, target, seeds, n, sources, unconnected, chunk, use_pfor):
        """Reverse mode: for each source, the gradients of the target for the n
        upstream rows `seeds(start, stop)`, stacked to (n,) + source.shape, or
        None if the source is unconnected."""
        batched, steps = _steps(n, chunk, use_pfor, self._ops)
        pieces = []
        for start, stop in steps:
            rows = seeds(start, stop)
            grads = self._backward([target], [Tensor(rows if batched else rows[0])], sources)
            batch_shape = (stop - start,) if batched else ()
            pieces.append([_result(grads, s, unconnected, batch_shape) for s in sources])
        return [_join([p[k] for p in pieces], batched) for k in range(len(sources))]

    def _stacked_tangents(self, target, source, seeds, n, unconnected, chunk, use_pfor):
        """Forward mode: the tangents of the target for the n tangents of the
        source `seeds(start, stop)`, stacked to (n,) + target.shape, or None if
        the target does not depend on the source.

        Each sweep runs the JVP rules of the recorded ops that lie between the
        source and the target, in the order they ran."""
        path, _, _ = _ops_between(self._producer, [target._id], {source._id})
        batched, steps = _steps(n, chunk, use_pfor, path)
        pieces = []
        for start, stop in steps:
            columns = seeds(start, stop)
            tangents = self._forward(path, {source._id: Tensor(columns if batched
                                                               else columns[0])})
            t = tangents.get(target._id)
            if t is None and unconnected == UnconnectedGradients.ZERO:
                batch_shape = (stop - start,) if batched else ()
                t = ops.zeros(batch_shape + target.shape, target.dtype)
            pieces.append(t)
        return _join(pieces, batched)

    def _forward(self, path, tangents):
        """Run one forward sweep; if it fails, leave every tape as it was."""
        if not self._persistent:
            self._stop()
        from .autodiff import push_tangents  # forward mode, built on this module
        marks = [(t, len(t._ops)) for t in state.tapes]
        try:
            for op in path:
                push_tangents(op, tangents)
            return tangents
        except BaseException:
            _rollback(marks)
            raise

    def _backward(self, targets, upstreams, sources):
        """Run one backward walk; if it fails, leave every tape as it was."""
        if not self._persistent:
            self._stop()  # like TensorFlow: a one-shot tape stops recording here
        marks = [(t, len(t._ops)) for t in state.tapes]
        try:
            return BackwardPass(self, targets, upstreams, sources).run()
        except BaseException:
            _rollback(marks)
            raise

    def backward_pass(self, target, sources, output_gradients=None):
        """A BackwardPass to step through by hand (for teaching and debugging).

        It does not count as this tape's one use and changes nothing unless run.
        """
        self._check_usable("backward_pass")
        targets = _as_tensors(nest.flatten(target), "backward_pass", "target")
        flat_sources = _as_sources(sources, "backward_pass")
        return BackwardPass(self, targets, _upstreams(targets, output_gradients),
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
        if not self._persistent:
            self._used = True
            self._ops, self._producer, self._watched = [], {}, []

    def _repr_html_(self):
        from .display import tape_html
        return tape_html(self)

    def _repr_pretty_(self, p, cycle):
        from .display import tape_text
        p.text(tape_text(self))

    def __repr__(self):
        kind = "persistent " if self._persistent else ""
        return (f"<mt.GradientTape ({kind}{len(self._ops)} ops recorded, "
                f"{len(self._watched)} watched)>")


def _as_tensors(values, method, what):
    out = []
    for i, v in enumerate(values):
        if isinstance(v, Variable):
            v = _snapshot(v)
        elif not isinstance(v, Tensor):
            raise TypeError(f"{method}: {what} {i} must be a tensor or variable, got "
                            f"{type(v).__name__} {v!r}")
        if not is_floating(v.dtype):
            raise TypeError(f"{method}: {what} {i} has dtype {v.dtype}; only floating-point "
                            f"tensors can be differentiated (use mt.cast)")
        out.append(v)
    return out


def _snapshot(variable):
    """The variable's value as a Tensor with the variable's id, without counting
    as an access (asking for a gradient is not a read that tapes should watch)."""
    t = Tensor.__new__(Tensor)
    t._value, t._id = variable._value, variable._id
    return t


def _as_sources(sources, method):
    flat = nest.flatten(sources)
    for i, s in enumerate(flat):
        if not isinstance(s, _TensorLike):
            raise TypeError(f"{method}: source {i} must be a tensor or variable, got "
                            f"{type(s).__name__} {s!r}")
        if not is_floating(s.dtype):
            raise TypeError(f"{method}: source {i} has dtype {s.dtype} and shape {s.shape}; "
                            "only floating-point sources have gradients (use mt.cast)")
    return flat


def _upstreams(targets, output_gradients):
    if output_gradients is None:
        return [Tensor(np.ones(t.shape, t.dtype)) for t in targets]
    given = nest.flatten(output_gradients)
    if len(given) != len(targets):
        raise ValueError(f"gradient: {len(targets)} target(s) but {len(given)} "
                         "output_gradients")
    out = []
    for t, g in zip(targets, given):
        if g is None:
            out.append(Tensor(np.ones(t.shape, t.dtype)))
            continue
        if isinstance(g, _TensorLike) and g.dtype != t.dtype:
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


def _result(grads, source, unconnected, batch_shape):
    g = grads.get(source._id)
    if g is None and unconnected == UnconnectedGradients.ZERO:
        g = ops.zeros(batch_shape + source.shape, source.dtype)
    return g


# --- helpers of jacobian and batch_jacobian ---------------------------------------

_CHUNK_ELEMENTS = 2 ** 22  # numbers per batched tensor (16 MB of float32) in a jacobian


def jacobian_direction(n_inputs, n_outputs):
    """The direction `jacobian(..., experimental_direction="auto")` takes for a
    Jacobian with `n_outputs` rows and `n_inputs` columns.

    Reverse mode costs one backward walk per row, forward mode one sweep per
    column, and a walk and a sweep cost about the same; so forward mode wins
    when there are fewer columns. "auto" goes forward only when that clearly
    saves work (twice as many rows as columns): near the tie the better-trodden
    backward walk is kept.
    """
    return "forward" if 2 * n_inputs < n_outputs else "reverse"


def _check_parallel_iterations(method, n):
    if n is not None and arguments.size(method, "parallel_iterations", n) == 0:
        raise ValueError(f"{method}: parallel_iterations must be positive, got {n}")


def _pick_direction(choice, n_in, n_out, method):
    if choice == "auto":
        return jacobian_direction(n_in, n_out)
    if choice in ("forward", "reverse"):
        return choice
    raise ValueError(f"{method}: experimental_direction must be 'auto', 'forward' or "
                     f"'reverse', got {choice!r}")


class _OneHot:
    """Rows start..stop of an identity matrix, each reshaped to `shape`: the
    one-hot seeds of a Jacobian, made a chunk at a time so memory stays
    bounded. With `batch`, each row is repeated over a leading batch axis of
    that size (batch_jacobian: the same element of every example)."""

    def __init__(self, shape, dtype, batch=None):
        self.shape, self.dtype, self.batch = shape, dtype, batch

    def __call__(self, start, stop):
        k = stop - start
        rows = np.eye(k, math.prod(self.shape), start, self.dtype)  # 1 at (i, start + i)
        if self.batch is None:
            return rows.reshape((k,) + self.shape)
        return np.broadcast_to(rows.reshape((k, 1) + self.shape),
                               (k, self.batch) + self.shape)


def _steps(n, chunk, use_pfor, recorded):
    """How to cover the n rows (or columns) of a Jacobian: (batched, [(start,
    stop), ...]). Without pfor, one step per row and no batch axis. With pfor,
    chunks of `chunk` rows, by default as many as keep the largest batched
    tensor (one row of it as large as the largest recorded tensor) under
    _CHUNK_ELEMENTS numbers."""
    if not use_pfor and n > 0:
        return False, [(i, i + 1) for i in range(n)]
    if chunk is None:
        largest = max((y._value.size for op in recorded for y in op.outputs), default=1)
        chunk = _CHUNK_ELEMENTS // max(largest, 1)
    chunk = max(1, int(chunk))
    return True, [(start, min(start + chunk, n)) for start in range(0, n, chunk)] or [(0, 0)]


def _join(pieces, batched):
    """One result from the results of the steps: concatenated chunks, or
    stacked rows; None when the first is None (unconnected, hence all)."""
    if pieces[0] is None:
        return None
    if not batched:
        return ops.stack(pieces)
    return pieces[0] if len(pieces) == 1 else ops.concat(pieces, axis=0)


def _axis_to_end(t):
    """Move axis 0 to the end: (n,) + shape -> shape + (n,)."""
    return ops.transpose(t, tuple(range(1, t.ndim)) + (0,))


from . import ops  # noqa: E402  (the ops import this module's `record`)
