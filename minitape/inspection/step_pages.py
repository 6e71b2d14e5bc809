"""One step of the backward walk shown as text or HTML.

`stepping.StepperState.view(k)` gives what step k shows as plain data (the
op whose rule ran, its upstream gradients, what it sent to each input, the
gradients so far); this module only lays that data out: a title, plain text
for `print`, and deterministic HTML that inherits the notebook theme's text
colour (the slider of `widgets.stepper` shows it).
"""
import html as _html

from .display import BOX_STYLE, CELL_STYLE, HEAD_STYLE, WATCHED_BG

_CHANGED_BG = "rgba(46, 160, 67, 0.22)"  # rows this step changed (light and dark themes)


def title(v):
    """A step's one-line title, from its view `v`."""
    of = f" of {v['n']}" if v["n"] is not None else ""
    if v["op"] is None:
        return f"Step 0{of}: start, the target's gradient is seeded"
    kind = f" ({v['op_type']})" if v["op_type"] != v["op"] else ""
    return f"Step {v['k']}{of}: the gradient rule of {v['op']}{kind} ran"


def text(v):
    """A step as plain text, from its view `v`."""
    lines = [title(v)]
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


def _table(head, rows, tints=None):
    e = _html.escape
    out = ['<table style="border-collapse: collapse; margin: 0 0 6px 0;"><thead><tr>']
    out += [f'<th style="{HEAD_STYLE}">{e(h)}</th>' for h in head]
    out.append("</tr></thead><tbody>")
    for j, row in enumerate(rows):
        bg = f" background: {tints[j]};" if tints and tints[j] else ""
        out.append("<tr>" + "".join(f'<td style="{CELL_STYLE}{bg}">{e(c)}</td>'
                                    for c in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def html(v, tint_changes=True):
    """A step as HTML, from its view `v`: the rows this step changed tinted
    (not at the start, `tint_changes` False: every gradient there is new)."""
    e = _html.escape
    parts = [f'<div style="{BOX_STYLE}">',
             f'<div style="margin-bottom: 4px;"><b>{e(title(v))}</b></div>']
    if v["upstream"]:
        parts.append("<div>upstream gradient it received (for its output):</div>")
        parts.append(_table(("tensor", "shape", "gradient"), v["upstream"]))
        parts.append("<div>what its rule sent to its inputs:</div>")
        parts.append(_table(("input", "shape", "gradient", ""), v["sent"]))
    parts.append("<div>gradients so far (tinted: changed by this step):</div>")
    rows = [(n, s, g, st) for n, s, g, st, _ in v["gradients"]]
    tints = [_CHANGED_BG if changed and tint_changes else
             (WATCHED_BG if st.startswith("source") else None)
             for _, _, _, st, changed in v["gradients"]]
    parts.append(_table(("tensor", "shape", "gradient", "status"), rows, tints))
    if v["error"]:
        parts.append(f'<div><b>the next rule raised</b> {e(v["error"])}</div>')
    parts.append("</div>")
    return "".join(parts)
