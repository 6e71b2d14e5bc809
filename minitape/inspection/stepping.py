"""The backward walk of a real tape, one rule at a time: what each step shows.

`StepperState` is a `WalkRecord` (`walk_record.py`): the steps `tape.gradient`
runs, pulled from the very iterator `gradient` drives and stored. To that it
adds what a student sees at step k (after k gradient rules ran), as plain data
(`view`): the op whose rule ran, the upstream gradient it received for its
output(s), what it sent to each input, and every gradient known so far, each
named and with its status (a source, a sum still waiting for contributions, a
gradient already passed to a rule). `step_pages.py` lays a view out as text
or HTML.

It is plain Python (no widgets), so tests and `print(state.text(k))` need no
browser; `viz.draw_tape` labels edges with its gradients and
`widgets.stepper.backward_stepper` wraps it in a slider.
"""
from .. import nest
from ..core.tensor import Variable
from . import step_pages
from .display import input_name, op_names, shape_text, tensor_names, value_text
from .walk_record import WalkRecord

SMALL = 12  # gradients with at most this many elements show their values


def grad_text(g, small=SMALL):
    """A gradient as short text: its value when small, else its shape."""
    if g is None:
        return "None"
    v = value_text(g._value, small)
    return v if v is not None else f"shape {shape_text(g.shape)}"


class StepperState(WalkRecord):
    """The backward walk of `target` w.r.t. `sources` on `tape`, step by step.

    The walk is a `WalkRecord` (`goto`, `run_all`, `gradients`, `known`,
    `edge_gradients`); `view(k)` is what step k shows, as plain data, with
    tensors named by `names` (else by the tape's op names); `html(k)` and
    `text(k)` render it.
    """

    def __init__(self, tape, target, sources, output_gradients=None, names=None):
        super().__init__(tape, target, sources, output_gradients)
        if isinstance(sources, dict) and names is None:  # name sources by their keys
            names = {k: v for k, v in sources.items() if not isinstance(v, Variable)
                     and not nest.is_nested(v)}
        self.names = tensor_names(tape, names)
        for i, s in enumerate(self.flat_sources):
            self.names.setdefault(s._id, s.name if isinstance(s, Variable) else f"source_{i}")
        for i, t in enumerate(self.targets):
            self.names.setdefault(t._id, "target" if len(self.targets) == 1 else f"target_{i}")
        self._op_name = dict(zip((op.seq for op in tape.operations), op_names(tape.operations)))

    # --- what step k shows ---------------------------------------------------------
    def name(self, t):
        return input_name(t, self.names)

    def op_label(self, op):
        return self._op_name.get(op.seq, op.name)

    def view(self, k):
        """Step k as plain data: a dict with the op that ran, its upstream
        gradients, what it sent to its inputs, and the gradients so far."""
        k = self.goto(k)
        last = self.finished and k == len(self._after) - 1
        v = {"k": k, "n": self.n_steps, "op": None, "op_type": None,
             "upstream": [], "sent": [], "error": None, "final": last}
        if k > 0:
            op, out_grads, in_grads, needs = self.steps[k - 1]
            v["op"], v["op_type"] = self.op_label(op), op.type
            v["upstream"] = [(self.name(y), shape_text(y.shape), grad_text(g))
                             for y, g in zip(op.outputs, out_grads)]
            for i, (x, g) in enumerate(zip(op.inputs, in_grads)):
                if not needs[i]:
                    note = "not needed: leads to no source" if x._id in self.names \
                        else "not needed: a constant"
                    v["sent"].append((self.name(x), shape_text(x.shape), "-", note))
                else:
                    note = "no gradient" if g is None else ""
                    v["sent"].append((self.name(x), shape_text(x.shape), grad_text(g), note))
        if last and self.error is not None:
            v["error"] = f"{type(self.error).__name__}: {self.error}"
        known, before = self.known(k), (self.known(k - 1) if k > 0 else {})
        v["gradients"] = [(self.names.get(i, "?"), shape_text(g.shape), grad_text(g),
                           self._status(i, k, last), before.get(i) is not g)
                          for i, g in self._ordered(known)]
        return v

    def _ordered(self, known):
        """Sources first (in the order given), then the rest latest op first."""
        producer = self.tape._producer
        items = [(i, known[i]) for i in dict.fromkeys(self.source_ids) if i in known]
        rest = [i for i in known if i not in set(self.source_ids)]
        rest.sort(key=lambda i: -(producer[i].seq if producer.get(i) is not None else -1))
        return items + [(i, known[i]) for i in rest]

    def _status(self, tid, k, last):
        if tid in self.source_ids:
            return "source: final" if last and self.error is None else "source"
        op = self.tape._producer.get(tid)
        if op is None:
            return ""
        ran = {s[0].seq for s in self.steps[:k]}
        if op.seq in ran:
            return f"complete: passed to the rule of {self.op_label(op)}"
        pending = self._pending[k]
        if pending is not None and pending.get(op.seq, 0) > 0:
            n = pending[op.seq]
            return f"partial: waiting for {n} more contribution{'s' if n > 1 else ''}"
        return f"complete: {self.op_label(op)}'s rule can run"

    # --- rendering (step_pages.py) --------------------------------------------------
    def title(self, k):
        return step_pages.title(self.view(k))

    def text(self, k):
        """Step k as plain text."""
        return step_pages.text(self.view(k))

    def html(self, k):
        """Step k as HTML (deterministic; inherits the theme's text colour)."""
        return step_pages.html(self.view(k), tint_changes=k > 0)
