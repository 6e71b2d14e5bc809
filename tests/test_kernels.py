"""tools/kernels.py: the tests' notebook client needs no free TCP port, and
fails a notebook whose widgets would make stock nbclient send the kernel a
comm message while a cell runs (what made nbconvert and nbgrader stall)."""
import base64
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import pytest

pytest.importorskip("nbclient")
pytest.importorskip("ipywidgets")

import nbformat  # noqa: E402

from tools import kernels  # noqa: E402

SETUP = ("%matplotlib inline\nimport matplotlib.pyplot as plt\nimport ipywidgets as widgets\n"
         "from IPython.display import HTML, display\n"
         "def draw(a):\n"
         "    display(HTML(f'<b>a = {a}</b>'))\n"
         "    fig, ax = plt.subplots(figsize=(2, 1.5))\n"
         "    ax.plot([0, 1], [0, a])\n"
         "    plt.show()\n"
         "    plt.close(fig)\n")


def execute(sources):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in (SETUP,) + sources])
    kernels.NotebookClient(nb, kernel_name="python3", timeout=60,
                           store_widget_state=True).execute()
    return nb


def run(*sources):
    """The cells `sources`, after SETUP, in a fresh kernel of kernels.NotebookClient,
    from a process of its own: nbclient stopped mid-cell leaves a task polling
    the kernel behind, whose error, collected during pytest's own parsing of a
    module, trips CPython 3.11's "AST constructor recursion depth mismatch"."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(execute, sources).result()


def output_models(nb):
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    return [m["state"]["outputs"] for m in state.values() if m["model_name"] == "OutputModel"]


@pytest.mark.parametrize("fill", [
    "widgets.interactive(draw, a=(1, 3))",  # ipywidgets' own interactive
    "out = widgets.Output()\ndisplay(out)\nwith out:\n    draw(2)",
])
def test_an_output_widget_filled_through_the_front_end_fails_the_notebook(fill):
    """nbclient answers each output routed into such a widget with a comm
    message on the shell channel: the send that stalled stock runs."""
    with pytest.raises(kernels.StallRisk, match="comm message while a cell ran"):
        run(fill)


def test_the_explorers_fill_their_outputs_from_the_kernel():
    """The course's `interactive` and the backward stepper: nbclient sends
    nothing mid-cell, and the Output widgets hold what they drew, as a front
    end and the rebuild's pictures read it (HTML, and PNG in base64)."""
    nb = run("from minitape.widgets.compat import interactive\n"
             "interactive(draw, a=(1, 3))",
             "import minitape as mt\nfrom minitape.widgets.stepper import backward_stepper\n"
             "x = mt.constant(2.0)\n"
             "with mt.GradientTape(persistent=True) as tape:\n"
             "    tape.watch(x)\n"
             "    y = x * x\n"
             "backward_stepper(tape, y, x, graph=True)")
    explorer, stepper = output_models(nb)
    assert [sorted(o["data"]) for o in explorer] == [["text/html", "text/plain"],
                                                     ["image/png", "text/plain"]]
    assert "<b>a = 2</b>" in explorer[0]["data"]["text/html"]
    for png in (explorer[1]["data"]["image/png"], stepper[0]["data"]["image/png"]):
        assert base64.b64decode(png.strip(), validate=True).startswith(b"\x89PNG")


def test_an_explorer_that_raises_shows_the_error_in_its_widget():
    nb = run("from minitape.widgets.compat import interactive\n"
             "def broken(a):\n    raise ValueError(f'no a = {a}')\n"
             "interactive(broken, a=(1, 3))")
    (outputs,) = output_models(nb)
    assert [(o["output_type"], o.get("ename"), o.get("evalue")) for o in outputs] == [
        ("error", "ValueError", "no a = 2")]
    assert all(o["output_type"] != "error" for o in nb.cells[-1].outputs)


@pytest.mark.skipif(kernels.os.name != "posix", reason="Unix sockets")
def test_the_kernel_listens_on_unix_sockets_not_tcp_ports():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("6 * 7")])
    client = kernels.NotebookClient(nb, kernel_name="python3", timeout=60)
    with client.setup_kernel():
        info = client.km.get_connection_info()
        assert info["transport"] == "ipc" and info["ip"].startswith(kernels.tempfile.gettempdir())
        client.execute_cell(nb.cells[0], 0)
    assert nb.cells[0].outputs[0]["data"]["text/plain"] == "42"
