"""The explorer of notebook 04: custom gradients in saved models.

The guide's model (`clip_gradients`, identity forward and `clip_by_norm(dy, 0.5)`
backward, called from an `mt.function` method of `MyModule`) is saved with or
without `experimental_custom_gradients`, then loaded either in this process or
in a fresh Python process, and differentiated as in the guide:

    saved_gradient(custom_gradients=True, fresh_process=False, v=2.0)  # -> dict
    saved_gradient_explorer()                                          # the widget

`saved_gradient` returns what happened: the gradient (or the error's last line)
and why. `saved_gradient_explorer()` returns an `ipywidgets.interactive`; its
`.result` is the dict of the last move, so tests can set the controls' values
and check it headless. ipywidgets and IPython are imported inside the widget
function, so importing this module needs only NumPy and minitape. Only core
widgets are used (ipywidgets 7.7 on Colab and 8).
"""
import html
import json
import os
import re
import subprocess
import sys
import tempfile

import minitape as mt
from minitape.widgets.compat import interactive

__all__ = ["clip_gradients", "MyModule", "LOAD_CODE", "saved_gradient",
           "saved_gradient_explorer"]

_BOX = ("font-family: var(--jp-code-font-family, monospace); font-size: 13px; "
        "line-height: 1.5; color: inherit;")
_GOOD = "rgba(40, 160, 70, 0.25)"
_BAD = "rgba(220, 60, 60, 0.25)"


# --- the guide's model -------------------------------------------------------------
@mt.custom_gradient
def clip_gradients(y):
    """Identity on values; on the way back the gradient is clipped to norm 0.5."""
    def backward(dy):
        return mt.clip_by_norm(dy, 0.5)
    return y, backward


class MyModule(mt.Module):

    @mt.function(input_signature=[mt.TensorSpec(None)])
    def call_custom_grad(self, x):
        return clip_gradients(x)


# What the fresh process runs, in the directory that holds `saved_model/`: it
# never defines clip_gradients, it only loads the files.
LOAD_CODE = """\
import minitape as mt
v = mt.Variable({v!r})
loaded = mt.saved_model.load('saved_model')
with mt.GradientTape() as t:
    output = loaded.call_custom_grad(v * v)
print(t.gradient(output, v))
"""

_WHY = {
    (True, False): "The gradient graph was saved, and load registered it under a fresh "
                   "key of this process; the loaded IdentityN node names that key.",
    (True, True): "The gradient graph travelled inside saved_model.json, and load "
                  "registered it in the fresh process: the model brings its own gradient.",
    (False, False): "No gradient graph was saved, but the IdentityN node names the key "
                    "clip_gradients was registered under when it was traced, and this "
                    "process's registry still holds that rule.",
    (False, True): "No gradient graph was saved, and the key the IdentityN node names "
                   "existed only in the process that traced clip_gradients. A fresh "
                   "process has only the built-in rules, and IdentityN has none.",
}

_model = None


def _the_model():
    global _model
    if _model is None:
        _model = MyModule()
    return _model


def _tensor_value(text):
    """2.0 from 'mt.Tensor(2.0, shape=(), dtype=float32)', else None."""
    m = re.match(r"mt\.Tensor\(([^,]+),", text)
    return float(m.group(1)) if m else None


def _run_fresh(code, cwd):
    """Run `code` in a fresh Python process; returns (stdout, last stderr line, ok).
    The package's parent directory goes on PYTHONPATH, so the child imports the
    same minitape even when it is not installed."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(mt.__file__)))
    paths = [package_parent] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    # PYTHON_COLORS=0: plain error text (Python 3.13 colours tracebacks when FORCE_COLOR
    # is set, as Jupyter's kernel sets it)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths), PYTHON_COLORS="0")
    r = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                       text=True, timeout=120, env=env)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    return r.stdout.strip(), (lines[-1] if lines else ""), r.returncode == 0


def saved_gradient(custom_gradients=True, fresh_process=False, v=2.0):
    """Save the guide's MyModule with `experimental_custom_gradients=custom_gradients`
    into a temporary directory, load it in this process or (`fresh_process`) in a
    new Python process, and take d output / dv of `call_custom_grad(v * v)`.

    Returns a dict: custom_gradients, fresh_process, v, saved_gradient_graphs
    (how many gradient graphs saved_model.json holds), ok, gradient (a float or
    None), printed (what the loading process printed: the gradient tensor, or the
    last line of the error), expected (the clipped gradient 2v * min(1, 0.5/1) = v)
    and why (one sentence).
    """
    custom_gradients, fresh_process, v = bool(custom_gradients), bool(fresh_process), float(v)
    model = _the_model()
    options = mt.saved_model.SaveOptions(experimental_custom_gradients=custom_gradients)
    with tempfile.TemporaryDirectory() as workdir:
        path = os.path.join(workdir, "saved_model")
        mt.saved_model.save(model, path, options=options)
        with open(os.path.join(path, "saved_model.json"), encoding="utf-8") as f:
            n_graphs = len(json.load(f)["gradients"])
        if fresh_process:
            printed, error, ok = _run_fresh(LOAD_CODE.format(v=v), workdir)
            if not ok:
                printed = error
        else:
            loaded = mt.saved_model.load(path)
            var = mt.Variable(v)
            try:
                with mt.GradientTape() as t:
                    output = loaded.call_custom_grad(var * var)
                printed, ok = str(t.gradient(output, var)), True
            except LookupError as e:
                printed, ok = f"LookupError: {e}", False
    return {"custom_gradients": custom_gradients, "fresh_process": fresh_process, "v": v,
            "saved_gradient_graphs": n_graphs, "ok": ok,
            "gradient": _tensor_value(printed) if ok else None, "printed": printed,
            "expected": v, "why": _WHY[custom_gradients, fresh_process]}


# --- the widget ----------------------------------------------------------------------
def _mark(text, good):
    colour = _GOOD if good else _BAD
    return (f'<span style="background: {colour}; padding: 0 4px; border-radius: 3px;">'
            f"{html.escape(text)}</span>")


def _saved_html(r):
    flag = r["custom_gradients"]
    where = ("a fresh Python process (it never defined clip_gradients)"
             if r["fresh_process"] else "this process (where clip_gradients was traced)")
    n = r["saved_gradient_graphs"]
    if r["ok"]:
        clipped = r["gradient"] is not None and abs(r["gradient"] - r["expected"]) < 1e-5
        verdict = ("the clipped gradient, as before saving" if clipped
                   else "NOT the clipped gradient")
        result = (f"{_mark(r['printed'], clipped)} ({verdict}; "
                  f"unclipped it would be 2v = {2 * r['v']:g})")
    else:
        result = _mark(r["printed"], False)
    return (f"<div style='{_BOX}'>"
            f"<div>save(..., SaveOptions(experimental_custom_gradients={flag})): "
            f"saved_model.json holds {n} gradient graph{'' if n == 1 else 's'}</div>"
            f"<div>load and differentiate in {where}:</div>"
            f"<div style='margin: 4px 0 4px 2em;'>"
            f"print(t.gradient(output, v)) &rarr; {result}</div>"
            f"<div><i>Why:</i> {html.escape(r['why'])}</div></div>")


def saved_gradient_explorer():
    """Toggle `experimental_custom_gradients` and where the model is loaded (this
    process or a fresh one), and move `v`: the gradient of the loaded
    `call_custom_grad(v * v)`, or the LookupError, and why. Each move saves the
    model again; a fresh process takes a fraction of a second to start."""
    import ipywidgets as widgets
    from IPython.display import HTML, display

    def show(custom_gradients, process, v):
        r = saved_gradient(custom_gradients, process == "fresh process", v)
        display(HTML(_saved_html(r)))
        return r

    return interactive(
        show,
        custom_gradients=widgets.Checkbox(
            value=True, description="experimental_custom_gradients",
            style={"description_width": "initial"}),
        process=widgets.ToggleButtons(options=["same process", "fresh process"],
                                      value="same process", description="load in"),
        v=widgets.FloatSlider(value=2.0, min=-3.0, max=3.0, step=0.5, description="v",
                              continuous_update=False))
