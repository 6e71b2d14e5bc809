"""The Colab install cell: one text, generated from pyproject.toml, first in
every notebook; it installs only minitape, from PyPI, and stops loudly on failure."""
import json
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import pytest

from tools import colab

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
REQUIREMENT = f"{PROJECT['name']}=={PROJECT['version']}"


def test_the_cell_installs_this_release_of_the_package_from_pyproject():
    assert colab.requirement() == REQUIREMENT == f"minitape=={PROJECT['version']}"
    source = colab.cell_source()
    assert f'"{REQUIREMENT}"' in source
    assert "git+" not in source and "github" not in source  # no source but PyPI's release
    assert "[" not in REQUIREMENT  # no extras: Colab has matplotlib and ipywidgets


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_notebook_starts_with_exactly_the_colab_cell(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    first = colab.first_code_cell(nb)
    assert colab.source_text(first) == colab.cell_source(), (
        f"{path.name}: run `python -m tools.colab` to write the Colab cell")
    assert first["outputs"] == []


def _run_cell(source, on_colab, monkeypatch, returncode=0, stderr=""):
    calls = []

    def fake_run(args, **kwargs):
        calls.append(args)
        return subprocess.CompletedProcess(args, returncode, stdout="", stderr=stderr)

    monkeypatch.setattr(subprocess, "run", fake_run)
    if on_colab:
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    else:
        monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    exec(compile(source, "<colab cell>", "exec"), {})
    return calls


def test_the_cell_does_nothing_outside_colab(monkeypatch):
    assert _run_cell(colab.cell_source(), False, monkeypatch) == []


def test_on_colab_the_cell_pip_installs_only_minitape(monkeypatch):
    calls = _run_cell(colab.cell_source(), True, monkeypatch)
    assert calls == [[sys.executable, "-m", "pip", "install", "-q", REQUIREMENT]]


def test_on_colab_a_failed_install_stops_with_what_to_do(monkeypatch):
    with pytest.raises(RuntimeError) as info:
        _run_cell(colab.cell_source(), True, monkeypatch, returncode=1,
                  stderr="ERROR: No matching distribution found for " + REQUIREMENT)
    message = str(info.value)
    assert f"Could not install {REQUIREMENT} from PyPI" in message
    assert "No matching distribution" in message  # pip's own reason
    assert "run this cell again" in message


def test_write_cell_changes_only_the_first_code_cell(tmp_path):
    original = NOTEBOOKS[0].read_text(encoding="utf-8")
    copy = tmp_path / "nb.ipynb"
    copy.write_text(original, encoding="utf-8")
    assert colab.write_cell(copy, "print('other')") is True
    before, after = json.loads(original), json.loads(copy.read_text(encoding="utf-8"))
    changed = [i for i, (a, b) in enumerate(zip(before["cells"], after["cells"])) if a != b]
    assert changed == [before["cells"].index(colab.first_code_cell(before))]
    assert colab.source_text(colab.first_code_cell(after)) == "print('other')"
    assert colab.write_cell(copy, "print('other')") is False
