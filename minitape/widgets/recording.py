"""Explorers for the notebooks on how a tape records and how to control it.

Each explorer is one call in a notebook and returns an `ipywidgets.interactive`
(its `.result` is what the last move computed, so tests can check it headless):

- `usage_count_explorer()` (notebook 00b): run the backward walk of
  `b = a + a; c = b + b + ...` with and without usage counts.
- `recording_explorer()` (01): pause the tape around `y * y` or `x * x`, or
  reset it, and see which gradients become None.
- `stop_gradient_explorer()` (02): cut either factor of `z = y * y` with
  `stop_gradient` and watch dz/dy go from 2y to y to None.
- `clip_explorer()` (03): the guide's `clip_gradients` with your own
  `clip_norm`, value of `v` and upstream gradient.
- `two_tapes_explorer()` (05): choose what each of two tapes watches.

The computations are plain functions (`eager_walk`, `counted_walk`,
`controlled_recording`, `stop_gradient_paths`, `clipped_gradient`,
`two_tapes`) that return dicts; the widgets only draw them as HTML.
ipywidgets and IPython are imported inside the widget functions, so importing
this module needs only NumPy.
"""
import html

import minitape as mt
from minitape.core import registry
from minitape.inspection.display import tape_html, tapes_html
from minitape.widgets.compat import interactive

__all__ = [
    "eager_walk", "counted_walk", "usage_count_graph", "usage_count_explorer",
    "controlled_recording", "recording_explorer",
    "stop_gradient_paths", "stop_gradient_explorer",
    "clipped_gradient", "clip_explorer",
    "two_tapes", "two_tapes_explorer",
]

_BOX = ("font-family: var(--jp-code-font-family, monospace); font-size: 13px; "
        "line-height: 1.5; color: inherit;")
_GOOD = "rgba(40, 160, 70, 0.25)"
_BAD = "rgba(220, 60, 60, 0.25)"
_CHANGED = "rgba(230, 140, 30, 0.28)"  # changed on purpose (cut, clipped): not an error
_TH = "style='padding: 0 8px; text-align: left;'"
_TD = _TH


def _num(g):
    """A gradient as short text: 'None', or a float with 4 decimals."""
    return "None" if g is None else f"{float(g):.4f}"


def _value(g):
    return None if g is None else float(g)


def _mark(text, good, colour=None):
    colour = colour or (_GOOD if good else _BAD)
    return (f'<span style="background: {colour}; padding: 0 4px; border-radius: 3px;">'
            f"{text}</span>")


def _ui():
    import ipywidgets as widgets
    from IPython.display import HTML, display
    return widgets, HTML, display


# --- 00: why the backward walk waits for every use ------------------------------
def usage_count_graph(uses=2, a_value=1.0):
    """Record `b = a + a` and `c = b + b + ... (uses copies of b)` on a persistent tape.

    Returns (tape, a, c). The ops are named after their outputs: `b`, `c1`,
    `c2`, ...; c is the last of them. dc/da = 2 * uses.
    """
    if uses < 2:
        raise ValueError(f"usage_count_graph: uses must be at least 2, got {uses}")
    a = mt.constant(float(a_value))
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(a)
        b = mt.add(a, a, name="b")
        c = mt.add(b, b, name="c1")
        for k in range(2, uses):
            c = mt.add(c, b, name=f"c{k}")
    return tape, a, c


def _producers(ops):
    return {y._id: op for op in ops for y in op.outputs}


def _rule_grads(op, upstream):
    rule, _ = registry.lookup(op)
    result = rule(op, upstream)
    return list(result) if isinstance(result, (list, tuple)) else [result]


def eager_walk(tape, target, source):
    """A WRONG backward walk, kept for teaching.

    It runs an op's gradient rule the moment the first gradient contribution
    reaches the op's output, and never runs it again, so contributions that
    arrive later (from other uses of the same tensor) are lost. Returns
    (gradient of target w.r.t. source, log), where the log lists
    (op name, upstream gradient the rule saw) in the order the rules ran.
    """
    producer = _producers(tape.operations)
    grads = {target._id: mt.ones_like(target)}
    done, log = set(), []

    def run(op):  # recursion is fine here: the toy graphs are tiny
        done.add(op.seq)
        upstream = grads[op.outputs[0]._id]
        log.append((op.name, float(upstream)))
        for x, g in zip(op.inputs, _rule_grads(op, upstream)):
            if g is None:
                continue
            grads[x._id] = g if x._id not in grads else grads[x._id] + g
            p = producer.get(x._id)
            if p is not None and p.seq not in done:
                run(p)  # too early: other uses of x may not have reported yet

    run(producer[target._id])
    return grads.get(source._id), log


def counted_walk(tape, target, source):
    """The engine's real walk (`tape.backward_pass`), with the same kind of log
    as `eager_walk`: each rule runs only after every use has reported."""
    walk = tape.backward_pass(target, source)
    log = [(op.name, float(out_grads[0])) for op, out_grads, _ in walk.steps()]
    return walk.grads.get(source._id), log


def _walk_result(uses, wait_for_all):
    tape, a, c = usage_count_graph(uses)
    b = tape.operations[0].outputs[0]
    b_uses = sum(1 for op in tape.operations for x in op.inputs if x is b)
    walk = counted_walk if wait_for_all else eager_walk
    grad, log = walk(tape, c, a)
    return dict(uses=uses, wait_for_all=wait_for_all, grad=float(grad), truth=2.0 * uses,
                b_upstream=dict(log)["b"], b_should_get=float(uses), log=log,
                b_usage_count=b_uses)


def _walk_html(r):
    ok = abs(r["grad"] - r["truth"]) < 1e-6
    steps = "".join(
        f"<tr><td {_TD}>{i + 1}</td><td {_TD}>"
        f"{html.escape(name)}</td><td {_TD}>{g:.1f}</td></tr>"
        for i, (name, g) in enumerate(r["log"]))
    how = ("waits until all uses of b have reported (usage counts)"
           if r["wait_for_all"] else "runs b's rule as soon as the first use reports")
    b_saw = _mark(f"{r['b_upstream']:.1f}", ok)
    dc_da = _mark(f"{r['grad']:.1f}", ok)
    return (
        f"<div style='{_BOX}'>"
        f"<div>c adds up <b>{r['uses']}</b> copies of b, so b is used "
        f"<b>{r['b_usage_count']}</b> times and dc/db = {r['b_should_get']:.1f}.</div>"
        f"<div>This walk {how}.</div>"
        f"<table style='border-collapse: collapse; margin: 4px 0;'><tr><th {_TH}>step</th>"
        f"<th {_TH}>rule of</th><th {_TH}>upstream it saw</th></tr>{steps}</table>"
        f"<div>b's rule saw {b_saw} (should be {r['b_should_get']:.1f}); "
        f"dc/da = {dc_da}, true value {r['truth']:.1f}.</div></div>")


def usage_count_explorer():
    """Slider: how many times c uses b. Checkbox: wait for every use (the real
    walk) or run each rule at the first contribution (a broken walk)."""
    widgets, HTML, display = _ui()

    def show(uses, wait_for_all):
        r = _walk_result(uses, wait_for_all)
        display(HTML(_walk_html(r)))
        return r

    return interactive(
        show,
        uses=widgets.IntSlider(value=2, min=2, max=6, description="uses of b"),
        wait_for_all=widgets.Checkbox(value=True, description="wait for all uses",
                                      indent=False))


# --- 01: stop_recording and reset ----------------------------------------------
def controlled_recording(x=2.0, y=3.0, pause_y=False, reset_after_y=False, pause_x=False):
    """Compute z = x*x + y*y on one tape, in that order: y_sq, (reset), x_sq, z.

    `pause_y` / `pause_x` wrap that product in `tape.stop_recording()`;
    `reset_after_y` calls `tape.reset()` right after y_sq. Returns z, the op
    names the tape kept, the names of the watched variables, the tape as HTML
    and dz/dx, dz/dy (None where no recorded path connects them).
    """
    xv = mt.Variable(float(x), name="x")
    yv = mt.Variable(float(y), name="y")
    with mt.GradientTape() as tape:
        if pause_y:
            with tape.stop_recording():
                y_sq = mt.multiply(yv, yv, name="y_sq")
        else:
            y_sq = mt.multiply(yv, yv, name="y_sq")
        if reset_after_y:
            tape.reset()
        if pause_x:
            with tape.stop_recording():
                x_sq = mt.multiply(xv, xv, name="x_sq")
        else:
            x_sq = mt.multiply(xv, xv, name="x_sq")
        z = mt.add(x_sq, y_sq, name="z")
    ops = [op.name for op in tape.operations]
    watched = [v.name for v in tape.watched_variables()]
    table = tape_html(tape)
    grad = tape.gradient(z, {"x": xv, "y": yv})
    return dict(z=float(z), ops=ops, watched=watched, tape_html=table,
                dz_dx=_value(grad["x"]), dz_dy=_value(grad["y"]))


def _recording_html(r, x, y):
    def cell(g, full):
        return _mark(_num(g), g is not None and abs(g - full) < 1e-6)
    return (f"<div style='{_BOX}'>"
            f"<div>z = x*x + y*y = {r['z']:.4f} (the value never changes)</div>"
            f"<div>dz/dx = {cell(r['dz_dx'], 2 * x)} (full gradient 2x = {2 * x:.4f})</div>"
            f"<div>dz/dy = {cell(r['dz_dy'], 2 * y)} (full gradient 2y = {2 * y:.4f})</div>"
            f"<div style='margin-top: 6px;'>What the tape kept:</div>{r['tape_html']}</div>")


def recording_explorer():
    """Checkboxes around z = x*x + y*y: pause the tape for y*y or x*x, or reset
    it after y*y. The tape table and the two gradients update."""
    widgets, HTML, display = _ui()

    def show(pause_y, reset_after_y, pause_x, x, y):
        r = controlled_recording(x, y, pause_y, reset_after_y, pause_x)
        display(HTML(_recording_html(r, x, y)))
        return r

    def box(text):
        return widgets.Checkbox(value=False, description=text, indent=False)

    return interactive(
        show,
        pause_y=box("stop_recording around y_sq = y * y"),
        reset_after_y=box("reset() after y_sq"),
        pause_x=box("stop_recording around x_sq = x * x"),
        x=widgets.FloatSlider(value=2.0, min=-3.0, max=3.0, step=0.5, description="x"),
        y=widgets.FloatSlider(value=3.0, min=-3.0, max=3.0, step=0.5, description="y"))


# --- 02: stop_gradient on one path ---------------------------------------------
def stop_gradient_paths(y=3.0, stop_first=False, stop_second=False):
    """z = first * second with both factors equal to y; either factor can be
    passed through `mt.stop_gradient`. Returns z and dz/dy (y per live path)."""
    yv = mt.Variable(float(y), name="y")
    with mt.GradientTape() as tape:
        first = mt.stop_gradient(yv) if stop_first else yv
        second = mt.stop_gradient(yv) if stop_second else yv
        z = first * second
    n_ops = len(tape.operations)
    grad = tape.gradient(z, yv)
    return dict(z=float(z), dz_dy=_value(grad), live_paths=2 - stop_first - stop_second,
                n_ops=n_ops)


def _stop_gradient_html(r, y):
    live = r["live_paths"]
    expected = {2: 2 * y, 1: y, 0: None}[live]
    formula = {2: "y + y = 2y", 1: "y (one path cut)", 0: "None (both paths cut)"}[live]
    if expected is not None:
        formula += f", here {expected:.4f}"
    grad = _mark(_num(r["dz_dy"]), True, None if live == 2 else _CHANGED)
    return (f"<div style='{_BOX}'>"
            f"<div>z = y * y = {r['z']:.4f} (stop_gradient never changes a value)</div>"
            f"<div>paths from y to z that still carry gradient: <b>{live}</b></div>"
            f"<div>dz/dy = {grad} = {formula}</div>"
            f"<div>ops the tape recorded: {r['n_ops']}</div></div>")


def stop_gradient_explorer():
    """Slider for y and a checkbox per factor of z = y * y: stop_gradient cuts
    just that path, so dz/dy drops from 2y to y, then to None."""
    widgets, HTML, display = _ui()

    def show(y, stop_first, stop_second):
        r = stop_gradient_paths(y, stop_first, stop_second)
        display(HTML(_stop_gradient_html(r, y)))
        return r

    return interactive(
        show,
        y=widgets.FloatSlider(value=3.0, min=-4.0, max=4.0, step=0.25, description="y"),
        stop_first=widgets.Checkbox(value=False, indent=False,
                                    description="stop_gradient on the first factor"),
        stop_second=widgets.Checkbox(value=False, indent=False,
                                     description="stop_gradient on the second factor"))


# --- 03: clip_by_norm on the upstream gradient ---------------------------------
def clipped_gradient(v=2.0, clip_norm=0.5, upstream=1.0):
    """The guide's clip_gradients with a chosen clip_norm: identity forward,
    `clip_by_norm(dy, clip_norm)` backward, applied to `v * v`.

    `upstream` is the gradient arriving at the output (1.0 for plain
    `tape.gradient`). Returns what backward received and sent, and d/dv.
    """
    seen = {}

    @mt.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            clipped = mt.clip_by_norm(dy, clip_norm)
            seen["received"], seen["sent"] = float(dy), float(clipped)
            return clipped
        return y, backward

    vv = mt.Variable(float(v), name="v")
    with mt.GradientTape() as tape:
        output = clip_gradients(vv * vv)
    types = [op.type for op in tape.operations]
    grad = tape.gradient(output, vv, output_gradients=mt.constant(float(upstream)))
    return dict(output=float(output), received=seen.get("received"), sent=seen.get("sent"),
                local=2.0 * float(v), grad=_value(grad), unclipped=2.0 * float(v) * upstream,
                op_types=types)


def _clip_html(r, clip_norm):
    clipped = r["received"] is not None and abs(r["sent"]) < abs(r["received"]) - 1e-9
    sent = _mark(_num(r["sent"]), True, _CHANGED if clipped else None)
    why = f"clipped to norm {clip_norm:.2f}" if clipped else "norm within clip_norm: unchanged"
    return (f"<div style='{_BOX}'>"
            f"<div>forward: output = v*v = {r['output']:.4f} (unchanged)</div>"
            f"<div>backward of clip_gradients received dy = {_num(r['received'])} and sent "
            f"{sent} ({why})</div>"
            f"<div>then the Mul rule multiplies by 2v = {r['local']:.4f}</div>"
            f"<div>d output / dv = <b>{_num(r['grad'])}</b> (without clipping: "
            f"{r['unclipped']:.4f})</div></div>")


def clip_explorer():
    """Sliders for clip_norm, v and the upstream gradient of the guide's
    clip_gradients(v * v): the clip acts on the gradient arriving at the custom
    op, before the chain rule multiplies by 2v."""
    widgets, HTML, display = _ui()

    def show(clip_norm, v, upstream):
        r = clipped_gradient(v, clip_norm, upstream)
        display(HTML(_clip_html(r, clip_norm)))
        return r

    return interactive(
        show,
        clip_norm=widgets.FloatSlider(value=0.5, min=0.05, max=3.0, step=0.05,
                                      description="clip_norm"),
        v=widgets.FloatSlider(value=2.0, min=-3.0, max=3.0, step=0.25, description="v"),
        upstream=widgets.FloatSlider(value=1.0, min=-3.0, max=3.0, step=0.25,
                                     description="upstream"))


# --- 05: two tapes, each watching what you choose ------------------------------
def two_tapes(x0=0.0, x1=0.0, tape0_watches=("x0",), tape1_watches=("x1",)):
    """The guide's computation (y0 = sin(x0), y1 = sigmoid(x1), ys = sum(y0 + y1))
    under two persistent tapes that watch the chosen tensors.

    Returns each tape's recorded op types, its gradients of ys with respect to
    x0 and x1 (None where it saw no path), and the which-tape-saw-which-op
    table as HTML.
    """
    xs = {"x0": mt.constant(float(x0)), "x1": mt.constant(float(x1))}
    with mt.GradientTape(persistent=True) as tape0, \
            mt.GradientTape(persistent=True) as tape1:
        for name in tape0_watches:
            tape0.watch(xs[name])
        for name in tape1_watches:
            tape1.watch(xs[name])
        y0 = mt.math.sin(xs["x0"], name="y0")
        y1 = mt.nn.sigmoid(xs["x1"], name="y1")
        y = mt.add(y0, y1, name="y")
        ys = mt.reduce_sum(y, name="ys")
    result = {"table_html": tapes_html({"tape0": tape0, "tape1": tape1},
                                       names={"x0": xs["x0"], "x1": xs["x1"]})}
    for key, tape in (("tape0", tape0), ("tape1", tape1)):
        grads = tape.gradient(ys, [xs["x0"], xs["x1"]])
        result[key] = dict(ops=[op.type for op in tape.operations],
                           d_x0=_value(grads[0]), d_x1=_value(grads[1]))
    result["ys"] = float(ys)
    return result


def _two_tapes_html(r):
    rows = "".join(
        f"<tr><td {_TD}>{k}</td>"
        f"<td {_TD}>{', '.join(r[k]['ops']) or '(nothing)'}</td>"
        f"<td {_TD}>{_num(r[k]['d_x0'])}</td>"
        f"<td {_TD}>{_num(r[k]['d_x1'])}</td></tr>"
        for k in ("tape0", "tape1"))
    return (f"<div style='{_BOX}'><div>ys = sin(x0) + sigmoid(x1) = {r['ys']:.4f}</div>"
            f"<table style='border-collapse: collapse; margin: 4px 0;'><tr><th {_TH}>tape</th>"
            f"<th {_TH}>recorded</th><th {_TH}>d ys / d x0</th><th {_TH}>d ys / d x1</th></tr>"
            f"{rows}</table><div>Which tape saw which op:</div>{r['table_html']}</div>")


def two_tapes_explorer():
    """Checkboxes: which of x0, x1 each tape watches; sliders: their values.
    A tape records an op only if it touches something that tape watches."""
    widgets, HTML, display = _ui()

    def show(tape0_x0, tape0_x1, tape1_x0, tape1_x1, x0, x1):
        r = two_tapes(x0, x1,
                      [n for n, w in (("x0", tape0_x0), ("x1", tape0_x1)) if w],
                      [n for n, w in (("x0", tape1_x0), ("x1", tape1_x1)) if w])
        display(HTML(_two_tapes_html(r)))
        return r

    def box(text, value):
        return widgets.Checkbox(value=value, description=text, indent=False)

    return interactive(
        show,
        tape0_x0=box("tape0 watches x0", True), tape0_x1=box("tape0 watches x1", False),
        tape1_x0=box("tape1 watches x0", False), tape1_x1=box("tape1 watches x1", True),
        x0=widgets.FloatSlider(value=0.0, min=-3.0, max=3.0, step=0.25, description="x0"),
        x1=widgets.FloatSlider(value=0.0, min=-3.0, max=3.0, step=0.25, description="x1"))
