"""The backward walk: from a target's gradient back to the sources', over recorded ops.

`BackwardPass` has three phases:

1. Find the ops between the sources and the target: walk back from the target
   through the ops that produced each input (an explicit stack, never
   recursion); unless the sources are all the tape watches, sweep those ops
   forwards in recording order keeping only the ones some source flows into.
2. Count, for every such op, how many of them consume its outputs (on the way
   back, and again in the sweep): how many gradient contributions its outputs
   are still waiting for (TensorFlow's tape.h calls these usage counts).
3. Start from the ops whose counts are zero (the ones producing the target),
   run each op's gradient rule, add the results into the gradients of its
   inputs, and decrement the count of the op that produced each input. An op
   whose count reaches zero has received every contribution, so it is ready.

Because gradient rules are written with minitape ops, any tape that is recording
while the walk runs records the walk too, which gives higher-order gradients.
When nothing records (no tape, accumulator or trace is active: a first-order
gradient, the usual case), the walk is `plain`: gradients are NumPy values, and
each built-in elementwise op runs its rule's plain twin, the same partials with
the products on values (`ops/partials.py`); other rules get their values
wrapped as tensors. Nothing is made that nobody could record or read.

A GradientTape (`tape.py`) runs one walk per `gradient` call; the stepper
(`inspection/walk_record.py`) pulls one a step at a time.
"""
import itertools
import operator

import numpy as np

from . import registry
from .context import state
from .tensor import Tensor

ALL = itertools.repeat(True)  # every input leads to a source (zip stops at the inputs)


class BackwardPass:
    """The backward walk of one gradient computation, as an iterator of steps.

    Each step is a tuple (op, output_grads, input_grads): the op whose rule ran,
    its upstream gradients (one per output) and what it sent to its inputs.

    `tape.gradient` runs it to the end; the stepper widget runs it one step at a
    time. `grads` maps tensor ids to the gradients accumulated so far.
    """

    def __init__(self, tape, targets, upstreams, sources, plain=False):
        self.producer = tape._producer
        self.grads = {}
        # plain: gradients as NumPy values, allowed when nothing would record the walk
        self.plain = plain and not state.tapes
        for t, g in zip(targets, upstreams):
            if self.plain:
                g = g._value
            prev = self.grads.get(t._id)
            self.grads[t._id] = g if prev is None else prev + g
        self.source_ids = {s._id for s in sources}
        self.ops, self.needs, self.pending = ops_between(
            tape, [t._id for t in targets], self.source_ids)

    def steps(self):
        producer, grads, sources = self.producer, self.grads, self.source_ids
        needs, pending = self.needs, self.pending
        plain = self.plain
        # Phase 3: start from the ops nobody waits on (they made the target).
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
            flags = needs.get(op.seq)  # None: every input leads to a source
            if plain:
                in_grads = run_plain(op, out_grads, flags)
            else:
                if flags is not None:  # the rule may skip the inputs that lead nowhere
                    op = op.with_needs(flags)
                in_grads = run_rule(op, out_grads)
            if in_grads is None:  # no upstream gradient reached the op
                in_grads = (None,) * len(op.inputs)
            else:
                yield op, out_grads, in_grads
            for x, g, leads in zip(op.inputs, in_grads, flags or ALL):
                if not leads:
                    continue  # this input leads to no source
                xid = x._id
                if g is not None:
                    prev = grads.get(xid)
                    grads[xid] = g if prev is None else prev + g
                p = producer.get(xid)
                if p is not None and p.seq in pending:
                    pending[p.seq] -= 1          # one consumer of p is done
                    if pending[p.seq] == 0:      # all of them: p's gradient is complete
                        ready.append(p)

    def run(self):
        """Every step; the gradients by tensor id (as tensors)."""
        for _ in self.steps():
            pass
        if self.plain:
            return {i: g if g is None else Tensor(g) for i, g in self.grads.items()}
        return self.grads


def ops_between(tape, target_ids, source_ids):
    """Phases 1 and 2: the recorded ops on some path from a source to a target
    (in recording order); how many of them consume each one's outputs (`pending`);
    which inputs are on such a path, for the ops with one that is not (`needs`)."""
    # 1a. Back from the targets: every op they depend on, and (2) its consumers.
    producer, found, needs, shared = tape._producer, [], {}, {}
    makers = {op.seq: op for op in map(producer.get, target_ids) if op is not None}
    pending, stack = dict.fromkeys(makers, 0), list(makers.values())
    while stack:
        op = stack.pop()
        found.append(op)
        leads = True  # every input is on the tape
        for x in op.inputs:
            p = producer.get(x._id)
            if p is None:  # a watched tensor or variable, or one not on the tape
                leads = leads and x._id in producer
                continue
            left = pending.get(p.seq)
            if left is None:  # its first consumer: walk back from p too
                pending[p.seq] = 1
                stack.append(p)
            else:
                pending[p.seq] = left + 1
        if not leads:
            flags = tuple(x._id in producer for x in op.inputs)
            needs[op.seq] = shared.setdefault(flags, flags)  # one tuple per pattern
    found.sort(key=operator.attrgetter("seq"))  # recording order
    # A tape differentiates only with respect to what it tracks (TensorFlow's tape.h
    # drops the gradient of a tensor not on the tape): other sources get None.
    sources = {i for i in source_ids if i in producer}
    if all(w._id in sources for w in tape._watched):
        return found, needs, pending  # then whatever the tape tracks leads to a source
    # 1b. Forward from the sources in recording order: an input is on a path if
    # it is a source or a kept op made it; keep the ops with one. 2. Count again.
    kept, needs, pending = [], {}, dict.fromkeys(pending, 0)
    for op in found:
        flags = []
        for x in op.inputs:
            p = producer.get(x._id)
            if p is not None and p.seq in pending:  # made by a kept op (it ran before)
                pending[p.seq] += 1
                flags.append(True)
            else:
                flags.append(x._id in sources)
        if True not in flags:
            del pending[op.seq]
            continue
        kept.append(op)
        if False in flags:
            flags = tuple(flags)
            needs[op.seq] = shared.setdefault(flags, flags)
    return kept, needs, pending


def run_rule(op, out_grads):
    """Call the op's gradient rule: one gradient (or None) per input, or None
    when no upstream gradient reached the op."""
    one = len(out_grads) == 1  # the common case, kept fast
    if one:
        if out_grads[0] is None:
            return None
    elif any(g is None for g in out_grads):
        if all(g is None for g in out_grads):
            return None
        out_grads = _fill_missing(op, out_grads)
    entry = registry.lookup(op)
    if entry is None:  # NotDifferentiable
        return [None] * len(op.inputs)
    rule, batch_safe = entry
    try:
        if batch_safe:  # built-in rules: trusted, any leading batch dims
            result = rule(op, out_grads[0]) if one else rule(op, *out_grads)
            return result if type(result) is tuple or type(result) is list else (result,)
        return registry.call_user_rule(op, rule, out_grads, op.outputs, op.inputs, "gradient")
    except Exception as e:
        registry.note_rule_error(e, op, "gradient")
        raise


def run_plain(op, out_grads, flags):
    """`run_rule` on NumPy values: the op's plain rule (told which inputs lead
    to a source: `flags`, None for all), or its rule with the values wrapped
    as tensors."""
    if len(out_grads) == 1:
        if out_grads[0] is None:
            return None
        plain = registry.lookup_plain(op)
        if plain is not None:
            try:
                return plain(op, out_grads[0], flags or op.needs)
            except Exception as e:
                registry.note_rule_error(e, op, "gradient")
                raise
    if flags is not None:
        op = op.with_needs(flags)
    results = run_rule(op, [None if g is None else Tensor(g) for g in out_grads])
    return None if results is None else [None if r is None else r._value for r in results]


def _fill_missing(op, out_grads):
    """Zeros for the outputs of a multi-output op that got no gradient."""
    present = next(i for i, g in enumerate(out_grads) if g is not None)
    g, y = out_grads[present], op.outputs[present]
    batch_shape = g.shape[:g.ndim - y.ndim]
    return [g if g is not None else Tensor(np.zeros(batch_shape + y.shape, y.dtype))
            for g, y in zip(out_grads, op.outputs)]
