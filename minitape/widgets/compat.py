"""One `interactive` for ipywidgets 7 (Colab) and 8.

ipywidgets 8 runs an `interactive`'s callback as soon as the widget is made;
ipywidgets 7 runs it only when the widget is displayed. The explorers make
their widget, and tests read `widget.result` before anything is displayed, so
`interactive` here runs the callback once at once on 7 as well (7 runs it once
more when the widget is displayed, which redraws the same first state).
"""

__all__ = ["interactive", "interactive_with_data", "show_figure"]


def interactive(callback, **controls):
    """`ipywidgets.interactive(callback, **controls)` whose callback has run."""
    import ipywidgets as widgets  # lazy: `import minitape` needs only NumPy

    widget = widgets.interactive(callback, **controls)
    if int(widgets.__version__.split(".")[0]) < 8:
        widget.update()
    return widget


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
