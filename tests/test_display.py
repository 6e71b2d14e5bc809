"""Rich displays: a tape and a tensor as HTML (and plain text) in Jupyter."""
import re
import subprocess
import sys

import minitape as mt
from minitape.inspection.display import (TapesView, tape_html, tape_text, tapes_html, tapes_text,
                              tensor_html)


@mt.custom_gradient
def _clip_grad(x):
    return x, lambda dy: mt.clip_by_value(dy, -1.0, 1.0)  # no op inside: one op on the tape


def _example():
    """A tape with a variable, a watched tensor, a constant, a custom op and a
    multi-output custom op."""
    x = mt.Variable(3.0, name="x")
    a = mt.constant([1.0, 2.0])
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(a)
        y = x * x                       # Mul
        z = mt.reduce_sum(a * 2.0)      # Mul_1 (with a constant), Sum
        w = _clip_grad(y + z)           # AddV2, then the custom op (IdentityN)
    return tape, x, a, w


def _rows(html):
    body = html.split("<tbody>")[1].split("</tbody>")[0]
    return re.findall(r"<tr>(.*?)</tr>", body)


def test_html_lists_every_recorded_op_in_order():
    tape, *_ = _example()
    html = tape_html(tape)
    ops = tape.operations
    assert len(ops) == 5
    rows = _rows(html)
    assert len(rows) == len(ops)
    for i, (row, op) in enumerate(zip(rows, ops)):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
        assert cells[0] == str(i)
        assert cells[2] == op.type
    assert [re.findall(r"<td[^>]*>(.*?)</td>", r)[1] for r in rows] == \
        ["Mul", "Mul_1", "Sum", "AddV2", "_clip_grad"]


def test_html_marks_watched_sources_and_shows_shapes_and_small_values():
    tape, *_ = _example()
    html = tape_html(tape)
    first = _rows(html)[0]  # Mul(x, x): both inputs are the watched variable
    assert first.count('title="watched source">x:0</span>') == 2
    second = _rows(html)[1]  # Mul(a, 2.0): a is watched, 2.0 is a constant
    assert 'title="watched source">watched</span> <span style="opacity: 0.7;">(2,)' in second
    assert "const 2.0" in second and 'title="watched source">const' not in second
    assert "Mul_1 <span style=\"opacity: 0.7;\">(2,)</span> = [2.0, 4.0]" in second
    assert "= 9.0" in _rows(html)[0]


def test_repr_html_and_pretty_are_the_display_functions():
    tape, *_ = _example()
    assert tape._repr_html_() == tape_html(tape)
    from IPython.lib.pretty import pretty
    assert pretty(tape) == tape_text(tape)
    assert repr(tape).startswith("<mt.GradientTape (persistent 5 ops recorded")


def test_text_fallback_lists_every_op_with_watched_marks():
    tape, *_ = _example()
    text = tape_text(tape)
    lines = text.splitlines()
    assert lines[0] == "mt.GradientTape (persistent, 5 ops recorded, 2 watched)"
    assert lines[1] == "watched: watched* (2,), x:0* ()"  # in the order they were watched
    table = lines[3:-1]
    assert len(table) == 5
    assert table[0].split() == ["0", "Mul", "Mul", "x:0*", "(),", "x:0*", "()", "Mul", "()",
                                "=", "9.0"]
    assert "watched* (2,), const 2.0 ()" in table[1]
    assert table[4].split()[1:3] == ["_clip_grad", "IdentityN"]
    assert lines[-1] == "(* = watched source)"


def test_html_is_deterministic_and_has_no_ids_or_addresses():
    html1 = tape_html(_example()[0])
    html2 = tape_html(_example()[0])  # new tensors, new ids, same computation
    assert html1 == html2
    assert tape_text(_example()[0]) == tape_text(_example()[0])
    assert "0x" not in html1 and " id=" not in html1


def test_html_reads_in_light_and_dark_themes():
    html = tape_html(_example()[0]) + tensor_html(mt.constant([1.0]))
    assert "color: inherit" in html
    for fixed in ("color: black", "color: #000", "background: white", "background-color: white",
                  "#fff"):
        assert fixed not in html.lower()


def test_text_is_escaped():
    @mt.primitive("Weird<Op>&")
    def weird(x):
        return x + 1.0

    x = mt.constant(1.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        weird(x)
    html = tape_html(tape, names={"<b>x</b>": x})
    assert "Weird&lt;Op&gt;&amp;" in html and "Weird<Op>" not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html


def test_empty_and_used_tapes():
    with mt.GradientTape() as tape:
        pass
    assert "no ops recorded" in tape_html(tape)
    assert tape_text(tape).endswith("(no ops recorded)")
    x = mt.constant(2.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    assert "used: its records were freed" in tape_html(tape)


def test_names_argument_names_tensors():
    x = mt.constant(2.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.sin(x)
        z = y * y
    text = tape_text(tape, names={"x": x, "y": y, "z": z})
    assert "0  Sin  Sin   x* ()       y () = 0.9093" in text
    assert "1  Mul  Mul   y (), y ()  z () = 0.8268" in text


def test_long_tapes_show_their_first_and_last_ops():
    x = mt.constant(1.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(100):
            y = y * 1.0
    html = tape_html(tape)
    assert html.count("<tr>") == 1 + 60 + 1  # header, 30 + 30 ops, the gap
    assert "40 more ops" in html and ">Mul_29<" in html and ">Mul_70<" in html
    assert ">Mul_30<" not in html
    assert tape_html(tape, max_ops=None).count("<tr>") == 101
    lines = tape_text(tape, max_ops=4).splitlines()
    assert [line.split()[0] for line in lines[3:-1]] == ["0", "1", "...", "98", "99"]
    assert lines[5].endswith("(96 more ops)")


def test_tensor_html_shows_shape_dtype_and_values():
    t = mt.constant([[1.0, 2.0], [3.0, 4.0]])
    html = t._repr_html_()
    assert html == tensor_html(t)
    assert "shape=(2, 2) dtype=float32" in html
    assert "[[1. 2.]\n [3. 4.]]" in html
    # repr keeps TensorFlow's format
    assert repr(mt.constant(4.0)) == "<mt.Tensor: shape=(), dtype=float32, numpy=4.0>"
    scalar = tensor_html(mt.constant(4.0))
    assert "shape=() dtype=float32" in scalar and ">4.0<" in scalar


def test_which_tape_saw_which_op():
    x = mt.constant(3.0)
    with mt.GradientTape() as outer:
        outer.watch(x)
        with mt.GradientTape() as inner:
            inner.watch(x)
            y = x * x
        y * 2.0  # recorded by the outer tape only
    text = tapes_text({"outer": outer, "inner": inner})
    lines = text.splitlines()
    assert lines[0].split()[-3:] == ["outer", "|", "inner"]
    assert lines[1].split()[-3:] == ["x", "|", "x"]      # Mul: both tapes
    assert lines[2].split()[-3:] == ["x", "|", "-"]      # Mul_1: outer only
    html = tapes_html({"outer": outer, "inner": inner})
    assert html.count("&#10003;") == 3
    view = TapesView([outer, inner])
    assert view._repr_html_().count("<tr>") == 3 and "tape 1" in repr(view)


def test_importing_minitape_stays_numpy_only():
    code = ("import sys, minitape, minitape.inspection.display, minitape.inspection.viz, "
            "minitape.widgets.stepper; "
            "print(any(m.split('.')[0] in ('matplotlib', 'ipywidgets') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
