"""Run All twice in one kernel, as a student does who runs a notebook again
without restarting: every cell of every notebook runs without an error both
times. Stock nbclient (its own kernel manager on TCP ports, its own waits)
and no retry, so what a student's JupyterLab would meet is what fails here.

CPU time: each notebook runs twice (its nbval run once), about 25 s of a
core per notebook on an idle machine, 5 minutes for the course.
"""
from pathlib import Path

import nbformat
import pytest
from nbclient.exceptions import CellExecutionError

from tools.kernels import NotebookClient

pytestmark = [pytest.mark.slow, pytest.mark.tooling]

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT = 300  # s: nbval's, from pyproject.toml; no cell of the course comes near it


def run_all_twice(path):
    """Run every cell of the notebook at `path`, then every cell again, in one
    kernel started in notebooks/ (as JupyterLab starts it). Returns None, or
    "run N, cell I: the error" for the first cell that raised. The kernel is
    on Unix sockets (tools/kernels.py: with TCP ports, kernels started side by
    side by pytest-xdist can take each other's ports)."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    with client.setup_kernel():
        for run in (1, 2):
            for index, cell in enumerate(nb.cells):
                try:
                    client.execute_cell(cell, index)
                except CellExecutionError as error:
                    return f"run {run}, cell {index}:\n{error}"
    return None


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_run_all_twice_in_one_kernel(path):
    error = run_all_twice(path)
    assert error is None, f"{path.name}: {error}"


def test_a_notebook_that_fails_on_its_second_run_is_caught(tmp_path):
    """A cell that works once and fails when run again (as 03's did: a name
    the first run defines later changes what the earlier cell sees)."""
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("assert 'later' not in globals(), 'ran before'"),
        nbformat.v4.new_code_cell("later = 1"),
    ])
    path = tmp_path / "twice.ipynb"
    nbformat.write(nb, path)
    error = run_all_twice(path)
    assert error is not None and error.startswith("run 2, cell 0:") and "ran before" in error
