"""The backward walk of a real tape, one rule at a time, as data and HTML.

The steps are the ones `tape.gradient` runs: `StepperState` pulls them from
`tape.backward_pass(target, sources).steps()`, the very iterator `gradient`
drives to the end, and keeps each one in a list, so stepping back replays what
was stored instead of running anything twice. `backward_pass` does not count as
the tape's one use, so the tape still answers `gradient` afterwards.

At step k (after k gradient rules ran) the state shows the op whose rule ran,
the upstream gradient it received for its output(s), what it sent to each input,
and every gradient known so far: the ones the engine still holds (sources, and
sums still waiting for more contributions) and the ones it has already passed to
a rule and freed. Step 0 is the start: the target's gradient seeded with ones.

It is plain Python (no widgets), so tests and `print(state.text(k))` need no
browser; `viz.draw_tape` labels edges with its gradients and
`widgets.stepper.backward_stepper` wraps it in a slider.
"""
import html

from .. import nest
from .display import (BOX_STYLE, CELL_STYLE, HEAD_STYLE, WATCHED_BG, input_name, op_names,
                      shape_text, tensor_names, value_text)
from ..core.tensor import Variable

SMALL = 12  # gradients with at most this many elements show their values

_CHANGED_BG = "rgba(46, 160, 67, 0.22)"  # rows this step changed (light and dark themes)


def grad_text(g, small=SMALL):
    """A gradient as short text: its value when small, else its shape."""
    if g is None:
        return "None"
    v = value_text(g._value, small)
    return v if v is not None else f"shape {shape_text(g.shape)}"


class StepperState:
    """The backward walk of `target` w.r.t. `sources` on `tape`, step by step.

    `goto(k)` runs the walk just far enough to know step k (steps are pulled
    from the engine's iterator once and stored); `run_all()` runs it to the end.
    `view(k)` is what step k shows, as plain data; `html(k)` and `text(k)`
    render it. `gradients()` gives the final gradients, shaped like `sources`
    (equal to `tape.gradient(target, sources)`).
    """

    def __init__(self, tape, target, sources, output_gradients=None, names=None):
        self.tape = tape
        self.sources = sources
        self.flat_sources = nest.flatten(sources)
        self.targets = nest.flatten(target)
        self.backward = tape.backward_pass(target, sources, output_gradients)
        if isinstance(sources, dict) and names is None:  # name sources by their keys
            names = {k: v for k, v in sources.items() if not isinstance(v, Variable)
                     and not nest.is_nested(v)}
        self.names = tensor_names(tape, names)
        for i, s in enumerate(self.flat_sources):
            self.names.setdefault(s._id, s.name if isinstance(s, Variable) else f"source_{i}")
        for i, t in enumerate(self.targets):
            self.names.setdefault(t._id, "target" if len(self.targets) == 1 else f"target_{i}")
        self._op_name = dict(zip((op.seq for op in tape.operations), op_names(tape.operations)))
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

    def gradients(self):
        """The final gradients, with the structure of `sources` (the error again
        if a gradient rule raised during the walk)."""
        self.run_all()
        if self.error is not None:
            raise self.error
        final = self._after[-1]
        return nest.pack_like(self.sources, [final.get(i) for i in self.source_ids])

    # --- what step k shows ---------------------------------------------------------
    def name(self, t):
        return input_name(t, self.names)

    def op_label(self, op):
        return self._op_name.get(op.seq, op.name)

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

    # --- rendering --------------------------------------------------------------
    def title(self, k):
        v = self.view(k)
        of = f" of {v['n']}" if v["n"] is not None else ""
        if v["op"] is None:
            return f"Step 0{of}: start, the target's gradient is seeded"
        kind = f" ({v['op_type']})" if v["op_type"] != v["op"] else ""
        return f"Step {v['k']}{of}: the gradient rule of {v['op']}{kind} ran"

    def text(self, k):
        """Step k as plain text."""
        v = self.view(k)
        lines = [self.title(k)]
        if v["upstream"]:
            lines.append("  upstream gradient (of its output):")
            lines += [f"    {n} {s}: {g}" for n, s, g in v["upstream"]]
            lines.append("  sent to its inputs:")
            lines += [f"    {n} {s}: {g}" + (f"  ({note})" if note else "")
                      for n, s, g, note in v["sent"]]
        lines.append("  gradients so far:")
        lines += [f"  {'*' if changed else ' '} {n} {s}: {g}" + (f"  [{st}]" if st else "")
                  for n, s, g, st, changed in v["gradients"]]
        if v["error"]:
            lines.append(f"  the next rule raised {v['error']}")
        return "\n".join(lines)

    def html(self, k):
        """Step k as HTML (deterministic; inherits the theme's text colour)."""
        e = html.escape
        v = self.view(k)
        parts = [f'<div style="{BOX_STYLE}">',
                 f'<div style="margin-bottom: 4px;"><b>{e(self.title(k))}</b></div>']

        def table(head, rows, tints=None):
            out = ['<table style="border-collapse: collapse; margin: 0 0 6px 0;"><thead><tr>']
            out += [f'<th style="{HEAD_STYLE}">{e(h)}</th>' for h in head]
            out.append("</tr></thead><tbody>")
            for j, row in enumerate(rows):
                bg = f" background: {tints[j]};" if tints and tints[j] else ""
                out.append("<tr>" + "".join(f'<td style="{CELL_STYLE}{bg}">{e(c)}</td>'
                                            for c in row) + "</tr>")
            out.append("</tbody></table>")
            return "".join(out)

        if v["upstream"]:
            parts.append("<div>upstream gradient it received (for its output):</div>")
            parts.append(table(("tensor", "shape", "gradient"), v["upstream"]))
            parts.append("<div>what its rule sent to its inputs:</div>")
            parts.append(table(("input", "shape", "gradient", ""), v["sent"]))
        parts.append("<div>gradients so far (tinted: changed by this step):</div>")
        rows = [(n, s, g, st) for n, s, g, st, _ in v["gradients"]]
        tints = [_CHANGED_BG if changed and k > 0 else
                 (WATCHED_BG if st.startswith("source") else None)
                 for _, _, _, st, changed in v["gradients"]]
        parts.append(table(("tensor", "shape", "gradient", "status"), rows, tints))
        if v["error"]:
            parts.append(f'<div><b>the next rule raised</b> {e(v["error"])}</div>')
        parts.append("</div>")
        return "".join(parts)
