"""Looking inside a tape: what it recorded, as an HTML table or plain text.

Jupyter shows a `GradientTape` with `tape_html` (its `_repr_html_`) and IPython's
plain-text display with `tape_text`; a `Tensor` gets `tensor_html`. (They are
put in `tensor.html_views` and `text_views` at the bottom of this module, so
the engine below never imports this one.) Every table
lists the recorded ops in the order they ran: index, op name and type, input
tensors (watched sources marked), output tensors, and small output values.

Tensors get readable names (`tensor_names`): a variable its name (`x:0`), a
watched tensor `watched`, `watched_1`, ..., an op's output the op's name made
unique along the tape as TensorFlow does (`Mul`, `Mul_1`, ...; `IdentityN:0`,
`IdentityN:1` for an op with several outputs), and an input no tape tracks
`const` (with its value when it is small). Pass `names={'x': x, ...}` to choose
your own.

The HTML is deterministic (no ids, no addresses), so notebooks that store it
pass nbval, and it inherits the theme's text colour, so it reads in light and
dark JupyterLab alike.
"""
import html

import numpy as np

from ..tape import GradientTape
from ..core.tensor import Tensor, Variable, html_views, text_views

SMALL = 6  # tensors with at most this many elements show their values
MAX_OPS = 60  # longer tapes show their first and last MAX_OPS // 2 ops

# Tints that read on light and dark backgrounds (the text colour is inherited).
WATCHED_BG = "rgba(230, 140, 30, 0.28)"
_RULE = "rgba(127, 127, 127, 0.45)"


# --- names and formatting ----------------------------------------------------
def op_names(ops):
    """Unique, readable op names in order: 'Mul', 'Mul_1', 'Mul_2', ..."""
    counts, names = {}, []
    for op in ops:
        n = counts.get(op.name, 0)
        counts[op.name] = n + 1
        names.append(op.name if n == 0 else f"{op.name}_{n}")
    return names


def tensor_names(tape, names=None, ops=None):
    """A dict from tensor id to a readable name for everything the tape knows.

    `names` maps your names to tensors or variables ({'x': x}); `ops` names the
    outputs of these ops instead of the tape's own (used to compare tapes).
    """
    ops = tape.operations if ops is None else ops
    result = {}
    n_watched = 0
    for w in tape._watched:
        if isinstance(w, Variable):
            result[w._id] = w.name
        else:
            result[w._id] = "watched" if n_watched == 0 else f"watched_{n_watched}"
            n_watched += 1
    for op, name in zip(ops, op_names(ops)):
        many = len(op.outputs) > 1
        for i, y in enumerate(op.outputs):
            result.setdefault(y._id, f"{name}:{i}" if many else name)
    for name, t in (names or {}).items():
        result[t._id] = str(name)
    return result


def shape_text(shape):
    """'()' for a scalar, '(3,)', '(2, 3)'."""
    return str(tuple(shape))


def number_text(v):
    """A float with 4 significant digits that still reads as a float: 9.0, 0.9093."""
    text = f"{float(v):.4g}"
    return text + ".0" if text.lstrip("-").isdigit() else text


def value_text(value, small=SMALL):
    """A short text for a small value (floats to 4 significant digits), else None."""
    a = np.asarray(value)
    if a.size > small:
        return None
    if a.dtype.kind != "f":
        return str(a[()]) if a.ndim == 0 else np.array2string(a, separator=", ").replace("\n", "")
    if a.ndim == 0:
        return number_text(a[()])
    text = np.array2string(a, separator=", ", formatter={"float_kind": number_text})
    return text.replace("\n", "")


def _is_watched(tape, x):
    return x._id in tape._producer and tape._producer[x._id] is None


def input_name(x, names):
    """The name of an op input; untracked inputs are constants."""
    name = names.get(x._id)
    if name is not None:
        return name
    v = value_text(x._value, small=1)
    return "const" if v is None else f"const {v}"


def _header_text(tape):
    kind = "persistent, " if tape._persistent else ""
    used = "; used: its records were freed" if tape._used else ""
    return (f"mt.GradientTape ({kind}{len(tape._ops)} ops recorded, "
            f"{len(tape._watched)} watched{used})")


def _watched_list(tape, names):
    return [(names[w._id], shape_text(w.shape),
             "variable" if isinstance(w, Variable) else "tensor") for w in tape._watched]


def _rows(tape, names, ops=None):
    """One dict per recorded op: what both the text and the HTML table show."""
    ops = tape.operations if ops is None else ops
    rows = []
    for i, (op, name) in enumerate(zip(ops, op_names(ops))):
        inputs = [(input_name(x, names), shape_text(x.shape), _is_watched(tape, x),
                   x._id in names) for x in op.inputs]
        outputs = [(names.get(y._id, "?"), shape_text(y.shape), value_text(y._value))
                   for y in op.outputs]
        rows.append(dict(index=i, name=name, type=op.type, inputs=inputs, outputs=outputs))
    return rows


# --- plain text ---------------------------------------------------------------
def _shortened(rows, max_ops):
    """The first and last max_ops // 2 rows, with None where the rest were."""
    if max_ops is None or len(rows) <= max_ops:
        return rows
    half = max(1, max_ops // 2)
    return rows[:half] + [None] + rows[-half:]


def tape_text(tape, names=None, max_ops=MAX_OPS):
    """The tape as plain text: a header, the watched sources, one line per op
    (the first and last max_ops // 2 of a longer tape; None shows them all).

    Inputs marked `*` are watched sources (tensors or variables).
    """
    names_ = tensor_names(tape, names)
    lines = [_header_text(tape)]
    watched = _watched_list(tape, names_)
    if watched:
        lines.append("watched: " + ", ".join(f"{n}* {s}" for n, s, _ in watched))
    rows = _rows(tape, names_)
    if not rows:
        lines.append("(no ops recorded)")
        return "\n".join(lines)
    table = [("#", "op", "type", "inputs", "outputs")]
    n_ops = len(rows)
    for r in _shortened(rows, max_ops):
        if r is None:
            table.append(("...", "", "", "", f"({n_ops - 2 * (max_ops // 2)} more ops)"))
            continue
        ins = ", ".join(f"{n}{'*' if w else ''} {s}" for n, s, w, _ in r["inputs"])
        outs = ", ".join(f"{n} {s}" + (f" = {v}" if v is not None else "")
                         for n, s, v in r["outputs"])
        table.append((str(r["index"]), r["name"], r["type"], ins, outs))
    widths = [max(len(row[c]) for row in table) for c in range(4)]
    for row in table:
        cells = [row[c].ljust(widths[c]) if c else row[c].rjust(widths[c]) for c in range(4)]
        lines.append("  ".join(cells + [row[4]]).rstrip())
    lines.append("(* = watched source)")
    return "\n".join(lines)


# --- HTML ---------------------------------------------------------------------
_e = html.escape

# Inline CSS of a table cell, a header cell and the box around a table (the
# stepper's tables use them too, so both look alike).
CELL_STYLE = ("padding: 2px 8px; text-align: left; vertical-align: top; "
              f"border-bottom: 1px solid {_RULE};")
HEAD_STYLE = CELL_STYLE + " font-weight: bold;"
BOX_STYLE = ("font-family: var(--jp-code-font-family, monospace); font-size: 12px; "
             "line-height: 1.45; color: inherit;")


def _badge(text, watched):
    """An input's name: tinted when it is a watched source."""
    if watched:
        return (f'<span style="background: {WATCHED_BG}; border-radius: 3px; '
                f'padding: 0 3px;" title="watched source">{_e(text)}</span>')
    return _e(text)


def _tensor_cell(name, shape, watched=False, muted=False, value=None):
    text = _badge(name, watched)
    if muted:
        text = f'<span style="opacity: 0.7;">{text}</span>'
    text += f' <span style="opacity: 0.7;">{_e(shape)}</span>'
    if value is not None:
        text += f" = {_e(value)}"
    return text


def tape_html(tape, names=None, max_ops=MAX_OPS):
    """The tape as an HTML table (for Jupyter): one row per recorded op (the
    first and last max_ops // 2 of a longer tape; None shows them all)."""
    names_ = tensor_names(tape, names)
    parts = [f'<div style="{BOX_STYLE}">',
             f'<div style="margin-bottom: 3px;"><b>{_e(_header_text(tape))}</b></div>']
    watched = _watched_list(tape, names_)
    if watched:
        items = ", ".join(f"{_badge(n, True)} {_e(s)} ({_e(k)})" for n, s, k in watched)
        parts.append(f'<div style="margin-bottom: 3px;">watched: {items}</div>')
    rows = _rows(tape, names_)
    if not rows:
        parts.append("<div><i>no ops recorded</i></div></div>")
        return "".join(parts)
    parts.append('<table style="border-collapse: collapse; margin: 0;">')
    parts.append("<thead><tr>" + "".join(
        f'<th style="{HEAD_STYLE}">{h}</th>' for h in ("#", "op", "type", "inputs", "outputs"))
        + "</tr></thead><tbody>")
    n_ops = len(rows)
    for r in _shortened(rows, max_ops):
        if r is None:
            parts.append(f'<tr><td style="{CELL_STYLE}">&hellip;</td><td colspan="4" '
                         f'style="{CELL_STYLE}"><i>{n_ops - 2 * (max_ops // 2)} more ops '
                         "(tape_html(tape, max_ops=None) shows them all)</i></td></tr>")
            continue
        ins = "<br>".join(_tensor_cell(n, s, watched=w, muted=not known)
                          for n, s, w, known in r["inputs"])
        outs = "<br>".join(_tensor_cell(n, s, value=v) for n, s, v in r["outputs"])
        parts.append(
            f'<tr><td style="{CELL_STYLE}">{r["index"]}</td>'
            f'<td style="{CELL_STYLE}">{_e(r["name"])}</td>'
            f'<td style="{CELL_STYLE}">{_e(r["type"])}</td>'
            f'<td style="{CELL_STYLE}">{ins}</td><td style="{CELL_STYLE}">{outs}</td></tr>')
    parts.append("</tbody></table>")
    parts.append(f'<div style="opacity: 0.75; margin-top: 2px;">'
                 f'{_badge("tinted", True)} = watched source; const = a value no tape '
                 "tracks</div></div>")
    return "".join(parts)


def tensor_html(t):
    """A tensor as HTML: shape and dtype, then its values (NumPy's print options)."""
    v = t._value
    text = str(v[()]) if v.ndim == 0 else np.array2string(v, separator=" ")
    return (f'<div style="{BOX_STYLE}"><b>mt.Tensor</b> '
            f'<span style="opacity: 0.75;">shape={_e(shape_text(t.shape))} '
            f"dtype={_e(str(t.dtype))}</span>"
            f'<pre style="margin: 2px 0; padding: 0; background: transparent; '
            f'color: inherit;">{_e(text)}</pre></div>')


# --- several tapes: which tape saw which op ------------------------------------
def _union_ops(tapes):
    seen = {}
    for tape in tapes.values():
        for op in tape.operations:
            seen.setdefault(op.seq, op)
    return [seen[s] for s in sorted(seen)]


def _as_named(tapes):
    if isinstance(tapes, dict):
        return {str(k): v for k, v in tapes.items()}
    return {f"tape {i}": t for i, t in enumerate(tapes)}


def _tapes_rows(tapes, names):
    tapes = _as_named(tapes)
    ops = _union_ops(tapes)
    names_ = {}
    for tape in tapes.values():
        names_.update(tensor_names(tape, names, ops=ops))
    recorded = {k: {op.seq for op in t.operations} for k, t in tapes.items()}
    rows = []
    for op, name in zip(ops, op_names(ops)):
        ins = ", ".join(f"{input_name(x, names_)} {shape_text(x.shape)}" for x in op.inputs)
        outs = ", ".join(f"{names_.get(y._id, '?')} {shape_text(y.shape)}" for y in op.outputs)
        rows.append((name, op.type, ins, outs, [op.seq in recorded[k] for k in tapes]))
    return list(tapes), rows


def tapes_text(tapes, names=None):
    """Which tape recorded which op: one line per op, one column per tape.

    `tapes` is a dict {name: tape} (or a list). An op shared by several tapes is
    one object recorded by each of them.
    """
    keys, rows = _tapes_rows(tapes, names)
    table = [("op", "type", "inputs", "outputs")]
    table += [r[:4] for r in rows]
    widths = [max(len(t[c]) for t in table) for c in range(4)]
    marks = [" | ".join(keys)] + [" | ".join(("x" if s else "-").center(len(k))
                                             for s, k in zip(r[4], keys)) for r in rows]
    lines = ["  ".join([t[c].ljust(widths[c]) for c in range(4)] + [m]).rstrip()
             for t, m in zip(table, marks)]
    return "\n".join(lines)


def tapes_html(tapes, names=None):
    """Which tape recorded which op, as an HTML table with a check per tape."""
    keys, rows = _tapes_rows(tapes, names)
    head = ["op", "type", "inputs", "outputs"] + keys
    parts = [f'<div style="{BOX_STYLE}"><table style="border-collapse: collapse; margin: 0;">',
             "<thead><tr>" + "".join(f'<th style="{HEAD_STYLE}">{_e(h)}</th>' for h in head)
             + "</tr></thead><tbody>"]
    for name, typ, ins, outs, seen in rows:
        cells = [_e(name), _e(typ), _e(ins), _e(outs)]
        cells += ["&#10003;" if s else '<span style="opacity: 0.5;">&ndash;</span>'
                  for s in seen]
        parts.append("<tr>" + "".join(f'<td style="{CELL_STYLE}">{c}</td>' for c in cells)
                     + "</tr>")
    parts.append("</tbody></table></div>")
    return "".join(parts)


class TapesView:
    """`display(TapesView({'outer': t1, 'inner': t2}))` in a notebook: the
    which-tape-saw-which-op table as HTML, with a plain-text fallback."""

    def __init__(self, tapes, names=None):
        self.tapes, self.names = tapes, names

    def _repr_html_(self):
        return tapes_html(self.tapes, self.names)

    def __repr__(self):
        return tapes_text(self.tapes, self.names)


# Jupyter's rich display of tensors and tapes (see the module docstring).
html_views[Tensor] = tensor_html
html_views[GradientTape] = tape_html
text_views[GradientTape] = tape_text
