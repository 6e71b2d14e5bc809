"""Every figure a notebook draws reads without the text (issue 19).

tests/test_figures.py checks the README's figures and the explorers' first
pictures from their figure objects. This runs each notebook with a hook on
matplotlib's printing, so every figure the notebook displays (plots, tape
drawings, explorers as first drawn) is checked the same way as it is shown:
a title, labelled axes, a labelled colour bar for each image, and no title or
axis label lying on another.
"""
import inspect
import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("nbclient")

from tools import kernels  # noqa: E402
pytestmark = [pytest.mark.slow, pytest.mark.tooling]

ROOT = Path(__file__).resolve().parent.parent
# The notebooks that draw: their stored outputs hold a picture (a plot, or an
# explorer's first drawing). The others show tables and text only.
NOTEBOOKS = [p for p in sorted((ROOT / "notebooks").glob("*.ipynb"))
             if "image/png" in p.read_text(encoding="utf-8")]
MARK = "FIGURES-CHECKED "


def _hook():
    """The cell put after each notebook's setup cell: check each figure as it prints."""
    from tests.test_figures import _overlapping_labels, _renderer, unreadable
    helpers = "\n\n".join(inspect.getsource(f) for f in (unreadable, _renderer,
                                                          _overlapping_labels))
    return helpers + '''

import matplotlib.backend_bases as _backend_bases

_figures_checked, _figure_problems = [], []
_print_figure = _backend_bases.FigureCanvasBase.print_figure


def _checked_print_figure(self, *args, **kwargs):
    fig = self.figure
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    name = (fig._suptitle.get_text() if fig._suptitle is not None else "") or "; ".join(titles)
    _figures_checked.append(name)
    _figure_problems.extend(f"{name or 'a figure without any title'}: {p}"
                            for p in unreadable(fig))
    _figure_problems.extend(f"{name}: {a!r} lies on {b!r}" for a, b in _overlapping_labels(fig))
    return _print_figure(self, *args, **kwargs)


_backend_bases.FigureCanvasBase.print_figure = _checked_print_figure
'''


def _report():
    return f'import json\nprint("{MARK}" + json.dumps([_figures_checked, _figure_problems]))\n'


def check_notebook(path):
    """Run `path` with the hook; (names of the figures shown, problems found)."""
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    setup = next(i for i, c in enumerate(nb.cells)
                 if c.cell_type == "code" and "%matplotlib inline" in c.source)
    nb.cells.insert(setup + 1, nbformat.v4.new_code_cell(
        "import sys\nsys.path.insert(0, %r)\n" % str(ROOT) + _hook()))
    nb.cells.append(nbformat.v4.new_code_cell(_report()))
    kernels.NotebookClient(nb, timeout=kernels.CELL_TIMEOUT, kernel_name="python3",
                           record_timing=False,
                           resources={"metadata": {"path": str(path.parent)}}).execute()
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    return json.loads(text.split(MARK, 1)[1])


@pytest.fixture(scope="module")
def figure_reports():
    with ProcessPoolExecutor(max_workers=2,
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {p.name: pool.submit(check_notebook, p) for p in NOTEBOOKS}
        return {name: f.result() for name, f in futures.items()}


@pytest.mark.parametrize("notebook", [p.name for p in NOTEBOOKS])
def test_every_figure_the_notebook_shows_reads_without_the_text(figure_reports, notebook):
    shown, problems = figure_reports[notebook]
    assert problems == [], f"{notebook}:\n" + "\n".join(problems)


def test_the_hook_sees_the_figures(figure_reports):
    """The check above cannot pass by seeing nothing: every notebook that
    stores a picture shows its figures to the hook."""
    shown = {name: len(s) for name, (s, _) in figure_reports.items()}
    assert len(shown) >= 6, shown
    assert all(n >= 1 for n in shown.values()), shown
    for part in ("how_a_tape_works", "07_jacobians", "08_hessian", "09_batch_jacobians",
                 "10_forward_mode"):
        (name,) = [n for n in shown if part in n]
        assert shown[name] >= 2, shown
