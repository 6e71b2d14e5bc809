"""`python -m tools.clean_clone` (docs/notebooks.md): after it, opening,
trusting and saving a notebook leaves `git status` clean; running cells does
not. And the stored notebooks are already what the filter makes of them."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools import clean_clone

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

pytestmark = [pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
              pytest.mark.tooling]


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture
def clone(tmp_path):
    repo = tmp_path / "clone"
    (repo / "notebooks").mkdir(parents=True)
    for name in ("07_jacobians.ipynb", "00a_build_a_tape.ipynb"):
        shutil.copy(ROOT / "notebooks" / name, repo / "notebooks" / name)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "course")
    return repo


def _save_as_a_front_end_does(path):
    """What JupyterLab and Notebook write on save without running anything:
    widget state, trust signature, per-cell view flags."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    nb["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {
        "state": {}, "version_major": 2, "version_minor": 0}}
    nb["metadata"]["signature"] = "sha256:" + "0" * 64
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["metadata"].update(scrolled=True, collapsed=False, execution={
                "iopub.execute_input": "2026-11-25T16:00:00.000000Z"})
    path.write_text(json.dumps(nb, indent=2), encoding="utf-8")  # another layout too


def test_saving_a_notebook_unchanged_leaves_a_clean_status(clone):
    path = clone / "notebooks" / "07_jacobians.ipynb"
    _save_as_a_front_end_does(path)
    assert _git(clone, "status", "--porcelain").split() == ["M", "notebooks/07_jacobians.ipynb"]

    out = subprocess.run([sys.executable, "-m", "tools.clean_clone", str(clone)], cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True,
                         capture_output=True, text=True).stdout
    assert "minitape-notebooks" in out
    assert _git(clone, "diff").strip() == ""  # the filter sees the stored notebook
    # git lists a file whose size changed until its record is refreshed; adding
    # it stages nothing, since the cleaned copy is the stored one
    _git(clone, "add", "notebooks")
    assert _git(clone, "status", "--porcelain").strip() == ""
    assert _git(clone, "diff", "--cached").strip() == ""
    clean_clone.install(clone)  # twice: the attribute line is written once
    attributes = Path(clone / _git(clone, "rev-parse", "--git-path",
                                   "info/attributes").strip())
    assert attributes.read_text().count("filter=minitape-notebooks") == 1

    nb = json.loads(path.read_text(encoding="utf-8"))  # a run changes outputs: shown
    code = next(c for c in nb["cells"] if c["cell_type"] == "code" and c["outputs"])
    code["outputs"] = []
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    assert _git(clone, "status", "--porcelain").split() == ["M", "notebooks/07_jacobians.ipynb"]
    assert '"outputs": []' in _git(clone, "diff")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_notebooks_are_what_the_filter_makes_of_them(path):
    """Else installing the filter would mark them changed, untouched."""
    cleaned = subprocess.run(clean_clone.filter_command(), shell=True, check=True,
                             input=path.read_bytes(), capture_output=True).stdout
    assert cleaned == path.read_bytes()
