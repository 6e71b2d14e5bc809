"""The backward stepper: watch the backward walk of a real tape, one rule at a time.

    with mt.GradientTape(persistent=True) as tape:
        y = x * x + mt.sin(x)
    backward_stepper(tape, y, [x])        # a widget: step 0 .. n

A slider over a `StepperState` (`minitape/inspection/stepping.py`, plain Python: what
each step shows), in core ipywidgets (IntSlider, Buttons, HTML), which work in
ipywidgets 7.7 and 8.
"""
from ..inspection.stepping import StepperState
from ..inspection import viz
from .compat import explorer, outputs_of


def backward_stepper(tape, target, sources, output_gradients=None, names=None,
                     graph=False):
    """A widget that steps through the backward walk of `tape` (use a persistent
    tape, or one you have not asked for a gradient yet).

    A slider and back/next buttons choose the step. `names={'x': x}` names
    tensors (when `sources` is a dict, its keys name the watched tensors); `graph=True` also draws the recorded graph with the gradients known
    at each step (`minitape.inspection.viz.draw_tape`). The returned box has `.state` (the
    `StepperState`), `.slider`, `.view` (the HTML widget) and the buttons
    `.back_button` and `.next_button`, for tests and for driving it from code.
    """
    import ipywidgets as widgets  # lazy: only when a widget is made

    state = StepperState(tape, target, sources, output_gradients, names).run_all()
    n = len(state._after) - 1
    slider = widgets.IntSlider(value=0, min=0, max=n, step=1, description="step",
                               continuous_update=True)
    # wide enough for the label and the icon JupyterLab adds to a control whose
    # kernel is gone ("\u25c0 b..." and "nex..." at 80px)
    back = widgets.Button(description="\u25c0 back",
                          layout=widgets.Layout(width="auto", min_width="96px"))
    nxt = widgets.Button(description="next \u25b6",
                         layout=widgets.Layout(width="auto", min_width="96px"))
    view = widgets.HTML(value=state.html(0))
    children = [widgets.HBox([back, slider, nxt]), view]
    out = None
    if graph:
        out = widgets.Output()
        children.append(out)

    def draw(k):
        import matplotlib.pyplot as plt  # lazy: matplotlib only when a graph is drawn

        def plot():
            ax = viz.draw_tape(tape, target, grads=state, step=k, names=names)
            ax.set_title(state.title(k), fontsize=10)
            try:
                plt.show()
            finally:
                plt.close(ax.figure)

        out.outputs = outputs_of(plot)  # set from the kernel: see compat's docstring

    def show(change=None):
        k = slider.value
        view.value = state.html(k)
        back.disabled = k <= 0
        nxt.disabled = k >= n
        if out is not None:
            draw(k)

    def step(delta):
        slider.value = max(0, min(n, slider.value + delta))

    slider.observe(show, names="value")
    back.on_click(lambda _: step(-1))
    nxt.on_click(lambda _: step(+1))
    show()
    box = widgets.VBox(children)
    box.state, box.slider, box.view = state, slider, view
    box.back_button, box.next_button, box.graph_output = back, nxt, out
    return explorer(box)
