"""The backward walk: from a target's gradient back to the sources', over recorded ops.

`BackwardPass` has three phases:

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

A GradientTape (`tape.py`) runs one walk per `gradient` call; the stepper
(`stepping.py`) runs one a step at a time.
"""
from . import ops, registry
from .rules import call_user_rule, note_rule_error


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
        self.ops, self.needs, self.pending = ops_between(
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
            flags = needs[op.seq]
            if False in flags:  # the rule may skip the inputs that lead nowhere
                op = op.with_needs(flags)
            in_grads = run_rule(op, out_grads)
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


def ops_between(producer, target_ids, source_ids):
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
    # A tape differentiates only with respect to what it tracks (TensorFlow's
    # tape.h drops the gradient of a tensor that is not on the tape): a source
    # that another tape watched, or that no tape watched, gets None here.
    live = {i for i in source_ids if i in producer}  # ids some source flows into
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


def run_rule(op, out_grads):
    """Call the op's gradient rule: one gradient (or None) per input, or None
    when no upstream gradient reached the op."""
    if len(out_grads) == 1:  # the common case, kept fast
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
            result = rule(op, *out_grads)
            return result if isinstance(result, (list, tuple)) else (result,)
        return call_user_rule(op, rule, out_grads, op.outputs, op.inputs, "gradient")
    except Exception as e:
        note_rule_error(e, op, "gradient")
        raise


def _fill_missing(op, out_grads):
    """Zeros for the outputs of a multi-output op that got no gradient."""
    present = next(i for i, g in enumerate(out_grads) if g is not None)
    g, y = out_grads[present], op.outputs[present]
    batch_shape = g.shape[:g.ndim - y.ndim]
    return [g if g is not None else ops.zeros(batch_shape + y.shape, y.dtype)
            for g, y in zip(out_grads, op.outputs)]
