"""One `interactive` for ipywidgets 7 (Colab) and 8, whose output never makes
a notebook runner stall.

ipywidgets 8 runs an `interactive`'s callback as soon as the widget is made;
ipywidgets 7 runs it only when the widget is displayed. The explorers make
their widget, and tests read `widget.result` before anything is displayed, so
`interactive` here runs the callback once at once on 7 as well (7 runs it once
more when the widget is displayed, which redraws the same first state).

What the callback displays goes into the explorer's Output widget as its
`outputs`, collected here in the kernel (`outputs_of`). ipywidgets' own
`with output:` instead asks the front end to route the cell's messages into
the widget, and nbclient (under nbconvert, nbgrader and nbval) plays that
front end: for each routed output it sends the kernel a comm message on the
shell channel while it waits on that channel for the cell's reply.
jupyter_client sends it through a plain shadow of the asyncio socket, which
uses up the socket's edge-triggered wake-up when the reply has just arrived:
the runner then sleeps until the cell's timeout (forever under nbconvert's
default) with the reply waiting (docs/notebooks.md, "Explorers and notebook
runners"). With the outputs set from the kernel, the runner sends nothing.
"""
import base64
import functools

__all__ = ["interactive", "interactive_with_data", "outputs_of", "show_figure", "explorer",
           "NOTE_CLASS", "WIDGET_VIEW"]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
NOTE_CLASS = "minitape-explorer-note"
NOTE_TEXT = ("Explorer: its controls work while this notebook's kernel runs. "
             "Reopened or not yet run? Run the notebook to use this explorer.")
# A widget view whose model is gone (the notebook was saved and reopened, the
# kernel is not running it) renders as bare text: "Loading widget..." until the
# kernel has started (tens of seconds on a busy machine), then "Error
# displaying widget: model not found". The note above the explorer already
# says what to do, so the rule hides that text. It applies only where the note
# is rendered as trusted HTML (JupyterLab, Notebook 7); elsewhere the note
# alone shows. (JupyterLab 4: the output node after the note's holds the
# widget view; a live view puts elements in it, a loading or dead one only
# text. CSS allows no :has() inside another :has(), so the rule hides that
# node, not its row.)
_HIDE_DEAD_VIEW = (
    f".jp-OutputArea-child:has(.{NOTE_CLASS}) + .jp-OutputArea-child > "
    ".jp-OutputArea-output:not(:has(*)) { display: none; }")
NOTE_HTML = (f'<div class="{NOTE_CLASS}" style="font-size: 0.85em; opacity: 0.75;">'
             f"{NOTE_TEXT}</div><style>{_HIDE_DEAD_VIEW}</style>")


def explorer(widget):
    """Make `widget` display as an explorer: a one-line note (an HTML output
    kept in the saved notebook), then the widget itself. After the notebook is
    saved and reopened without a kernel, the note stays and says to run the
    notebook, and the dead widget view is hidden (trusted) or shows nothing
    (untrusted: its text is empty instead of `interactive(children=...`).
    `python -m tools.rebuild_notebooks` replaces the note with a picture of the
    explorer's first state. Returns the widget."""
    def show(**kwargs):
        import ipywidgets as widgets
        from IPython.display import HTML, display

        display(HTML(NOTE_HTML))
        own_display = getattr(type(widget), "_ipython_display_", None)
        if int(widgets.__version__.split(".")[0]) < 8 and own_display is not None:
            own_display(widget, **kwargs)  # ipywidgets 7 (Colab) displays itself
            return
        data, metadata = type(widget)._repr_mimebundle_(widget), None
        if isinstance(data, tuple):
            data, metadata = data
        data = dict(data, **{"text/plain": ""})
        display(data, metadata=metadata, raw=True)

    widget._ipython_display_ = show
    return widget


def outputs_of(run):
    """Run `run()` and return what it printed, displayed and raised, as a
    tuple of notebook outputs for an Output widget's `outputs` (printed text
    first, then the displays in order, then the error). Without IPython (a
    plain test run) an error propagates."""
    from IPython import get_ipython
    from IPython.utils.capture import capture_output

    error = None
    with capture_output() as captured:
        try:
            run()
        except Exception as e:
            if get_ipython() is None:
                raise
            error = e
    outputs = [{"output_type": "stream", "name": name, "text": text}
               for name, text in (("stdout", captured.stdout), ("stderr", captured.stderr))
               if text]
    for shown in captured.outputs:
        data = {kind: base64.b64encode(value).decode("ascii") if isinstance(value, bytes)
                else value for kind, value in shown.data.items()}  # PNG bytes as notebooks keep them
        outputs.append({"output_type": "display_data", "data": data,
                        "metadata": shown.metadata or {}})
    if error is not None:
        tb = get_ipython().InteractiveTB.structured_traceback(
            type(error), error, error.__traceback__)
        outputs.append({"output_type": "error", "ename": type(error).__name__,
                        "evalue": str(error), "traceback": tb})
    return tuple(outputs)


@functools.cache
def _interactive_class():
    """`ipywidgets.interactive` whose `update` sets its Output widget's outputs
    from the kernel (`outputs_of`), made on first use (`import minitape`
    needs only NumPy)."""
    import ipywidgets as widgets
    from IPython.display import display
    from ipywidgets.widgets.interaction import show_inline_matplotlib_plots

    class Interactive(widgets.interactive):
        def update(self, *args):
            """Run the callback with the controls' values; its output replaces
            the Output widget's (ipywidgets' `update`, without `with self.out:`)."""
            self.kwargs = {w._kwarg: w.get_interact_value() for w in self.kwargs_widgets}

            def run():
                self.result = self.f(**self.kwargs)
                show_inline_matplotlib_plots()
                if self.auto_display and self.result is not None:
                    display(self.result)

            self.out.outputs = outputs_of(run)

    return Interactive


def interactive(callback, **controls):
    """`ipywidgets.interactive(callback, **controls)` whose callback has run,
    whose output is set from the kernel, displayed as an explorer (`explorer`)."""
    import ipywidgets as widgets  # lazy: `import minitape` needs only NumPy

    widget = _interactive_class()(callback, **controls)
    if int(widgets.__version__.split(".")[0]) < 8:
        widget.update()
    return explorer(widget)


def interactive_with_data(callback, **controls):
    """An `interactive` whose callback's results land in `widget.data`."""
    data = {}

    def run(**values):
        data.clear()
        data.update(callback(**values))

    widget = interactive(run, **controls)
    widget.data = data
    return widget


def show_figure(fig):
    """Display a finished figure (inline backend), then free it. The Axes
    and their data stay readable after closing."""
    import matplotlib.pyplot as plt  # lazy: matplotlib only when a figure is drawn

    plt.show()
    plt.close(fig)
