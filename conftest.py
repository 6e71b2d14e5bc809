"""Settings for the whole test command (tests/ and, through nbval, notebooks/).

`python -m pytest` runs on every core (pytest-xdist; pyproject.toml's addopts:
`-n auto --dist loadfile`). Each file goes to one worker as a whole: a
notebook's cells run there in order in one kernel (nbval compares each cell's
stored output with the fresh run), and a file's module- and session-scoped
fixtures (a JupyterLab server, nbgrader's student copies, a built wheel) are
built once. `python -m pytest -n 0` runs everything in one process.
"""
import os
import sys
from pathlib import Path

import pytest

# Tools run by name (nbgrader runs `alembic`, the browser tests `jupyter`) come
# from this interpreter's environment, also when it was not activated
# (`.venv/bin/python -m pytest`).
_BIN = str(Path(sys.executable).parent)
if _BIN not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = os.pathsep.join([_BIN, os.environ.get("PATH", "")])


@pytest.hookimpl(optionalhook=True)  # the TensorFlow environment has no pytest-xdist
def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one worker more than the cores. Much of the suite waits on
    other processes (kernels starting, JupyterLab and Chromium, pip), so with
    one worker per core the cores were idle 31% of the time: on 2 cores the
    suite took 627 s with 2 workers and 564 s with 3."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cores or 1) + 1


# The files that take longest (`--durations`), handed out first, so that no
# worker starts one of them while the other is nearly done. Then the notebooks,
# then the rest in the usual order.
LONG_FIRST = [
    "tests/test_exercise_shortcuts.py",
    "tests/test_nbgrader.py",
    "tests/test_browser_explorers.py",
    "tests/test_saved_model_fuzz.py",
    "tests/test_binder.py",
    "tests/test_clean_clone.py",
    "tests/test_browser.py",
    "tests/test_function_fuzz.py",
    "tests/test_deep.py",
    "tests/test_rebuild_notebooks.py",
    "tests/test_colab_install.py",
    "tests/test_site.py",
    "tests/test_saved_model_limits.py",
]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    if not hasattr(config, "workerinput"):  # not an xdist worker: order unchanged
        return
    root = Path(config.rootpath).resolve()

    def rank(item):
        try:
            name = Path(item.path).resolve().relative_to(root).as_posix()
        except ValueError:
            name = Path(item.path).as_posix()
        if name in LONG_FIRST:
            return LONG_FIRST.index(name)
        return len(LONG_FIRST) + (0 if name.endswith(".ipynb") else 1)

    order = {id(item): (rank(item), i) for i, item in enumerate(items)}
    items.sort(key=lambda item: order[id(item)])  # stable: a file's tests keep their order
