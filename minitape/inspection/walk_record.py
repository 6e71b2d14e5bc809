"""The backward walk of a real tape, pulled one step at a time and stored.

The steps are the ones `tape.gradient` runs: `WalkRecord` pulls them from
`tape.backward_pass(target, sources).steps()`, the very iterator `gradient`
drives to the end, and keeps each one in a list, so going back to an earlier
step reads what was stored instead of running anything twice. `backward_pass`
does not count as the tape's one use, so the tape still answers `gradient`
afterwards.

Step k is the state after k gradient rules ran: every gradient known then
(the ones the engine still holds, sources and sums still waiting for more
contributions, and the ones it has already passed to a rule and freed).
Step 0 is the start: the target's gradient seeded with ones. What a step
shows, named and as text, is `stepping.py`'s.
"""
from .. import nest


class WalkRecord:
    """The backward walk of `target` w.r.t. `sources` on `tape`, as data.

    `goto(k)` runs the walk just far enough to know step k (steps are pulled
    from the engine's iterator once and stored); `run_all()` runs it to the end.
    `steps[k - 1]` is the k-th rule that ran: (op, its upstream gradients, what
    it sent to its inputs, which inputs lead to a source). `gradients()` gives
    the final gradients, shaped like `sources` (equal to
    `tape.gradient(target, sources)`).
    """

    def __init__(self, tape, target, sources, output_gradients=None):
        self.tape = tape
        self.sources = sources
        self.flat_sources = nest.flatten(sources)
        self.targets = nest.flatten(target)
        self.backward = tape.backward_pass(target, sources, output_gradients)
        self.source_ids = [s._id for s in self.flat_sources]
        self.steps = []  # (op, upstream grads, input grads, which inputs lead to a source)
        # _after[k]: the engine's gradient dict after k rules ran; _pending[k]:
        # how many consumers each op's output still waits for (if the engine says).
        self._after = [dict(self.backward.grads)]
        self._pending = [self._pending_now()]
        self._iter = self.backward.steps()
        self.finished = False
        self.error = None

    # --- pulling steps from the engine ------------------------------------------
    def _pending_now(self):
        pending = getattr(self.backward, "pending", None)
        return None if pending is None else dict(pending)

    def _pull(self):
        """Take one step from the engine's iterator. When it yields step k+1,
        step k's gradients have been added up, so the state after step k is
        known (the engine has already taken the new op's upstream gradient out
        of its dict; it is put back here, since it is still a known gradient)."""
        try:
            op, out_grads, in_grads = next(self._iter)
        except StopIteration:
            self._finish()
            return False
        except Exception as e:  # a rule raised: show it as the last step
            self.error = e
            self._finish()
            return False
        if self.steps:
            after = dict(self.backward.grads)
            for y, g in zip(op.outputs, out_grads):
                if g is not None:
                    after.setdefault(y._id, g)
            self._after.append(after)
            self._pending.append(self._pending_now())
        needs = tuple(bool(op.needs[i]) for i in range(len(op.inputs)))
        self.steps.append((op, list(out_grads), list(in_grads), needs))
        return True

    def _finish(self):
        if self.steps and len(self._after) == len(self.steps):
            self._after.append(dict(self.backward.grads))
            self._pending.append(self._pending_now())
        self.finished = True

    def goto(self, k):
        """Run the walk until the state after step k is known; return the k used
        (k is clipped to the number of steps once the walk has ended)."""
        while len(self._after) <= k and not self.finished:
            self._pull()
        return max(0, min(k, len(self._after) - 1))

    def run_all(self):
        while not self.finished:
            self._pull()
        return self

    @property
    def n_steps(self):
        """The number of rules that ran (known once the walk has finished)."""
        return len(self.steps) if self.finished else None

    # --- the gradients known at each step ------------------------------------------
    def gradients(self):
        """The final gradients, with the structure of `sources` (the error again
        if a gradient rule raised during the walk)."""
        self.run_all()
        if self.error is not None:
            raise self.error
        final = self._after[-1]
        return nest.pack_like(self.sources, [final.get(i) for i in self.source_ids])

    def known(self, k=None):
        """Every gradient known after k steps (all steps if k is None): tensor
        id -> gradient. Includes the ones the engine passed to a rule and freed."""
        k = len(self.run_all()._after) - 1 if k is None else self.goto(k)
        known = {}
        for op, out_grads, _, _ in self.steps[:k]:
            for y, g in zip(op.outputs, out_grads):
                if g is not None:
                    known[y._id] = g
        known.update(self._after[k])
        return known

    def edge_gradients(self, k=None):
        """What each rule sent back along each edge after k steps (all steps if
        k is None): (op.seq, input index) -> gradient (for `viz.draw_tape`)."""
        k = len(self.run_all().steps) if k is None else self.goto(k)
        edges = {}
        for op, _, in_grads, needs in self.steps[:k]:
            for i, g in enumerate(in_grads):
                if needs[i] and g is not None:
                    edges[(op.seq, i)] = g
        return edges
