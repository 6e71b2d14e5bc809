"""Binder: the repo2docker configuration in binder/ is what repo2docker reads,
and what it installs runs a notebook.

repo2docker itself (the package mybinder.org builds with) is asked which build
pack it picks for this checkout and which commands it would run; its
Dockerfile is rendered without Docker. Then exactly the requirements it names
are installed in a fresh virtual environment, and a notebook runs there under
nbval, away from the checkout (so the installed minitape is the one tested).
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from repo2docker.app import Repo2Docker
from repo2docker.buildpacks import PythonBuildPack

from tools.package_source import copy as copy_package
from tools import colab

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"
NOTEBOOK = "01_controlling_recording.ipynb"


def _requirements():
    lines = (BINDER / "requirements.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


@pytest.fixture
def buildpack(monkeypatch):
    """The build pack repo2docker picks for this checkout: the first of its
    ordered list whose detect() is true, run in the repository's root."""
    monkeypatch.chdir(ROOT)
    app = Repo2Docker()
    packs = [cls(app.base_image) for cls in app.buildpacks]
    pack = next(p for p in packs if p.detect())
    pack.platform = "linux/amd64"
    return pack


def test_binder_holds_only_files_repo2docker_reads():
    assert sorted(os.listdir(BINDER)) == ["requirements.txt", "runtime.txt"]
    assert not (ROOT / ".binder").exists()  # repo2docker refuses both folders


def test_repo2docker_builds_with_python_from_binder(buildpack):
    assert type(buildpack) is PythonBuildPack
    assert buildpack.binder_dir == "binder"  # so the root's files are not read
    assert buildpack.runtime[:2] == ("python", "3.12")  # binder/runtime.txt
    assert buildpack.python_version == "3.12"
    requires = colab.project()["requires-python"]
    assert "3.12" in SpecifierSet(requires), f"Binder's Python is outside {requires}"


def test_repo2docker_installs_minitape_from_the_repository_with_the_notebooks_extra(buildpack):
    assert _requirements() == [".[notebooks]"]
    assert "notebooks" in colab.project()["optional-dependencies"]
    assert buildpack._get_pip_scripts() == [
        ("${NB_USER}", '${KERNEL_PYTHON_PREFIX}/bin/pip install --no-cache-dir '
                       '-r "binder/requirements.txt"')]
    # A local requirement: the whole repository is copied before pip runs, in
    # its root, so "." is this checkout.
    assert buildpack._should_preassemble_pip is False
    lines = buildpack.render().splitlines()
    copy_repo = lines.index("COPY --chown=1000:1000 src/ ${REPO_DIR}/")
    pip = next(i for i, line in enumerate(lines) if "-r \"binder/requirements.txt\"" in line)
    workdir = max(i for i, line in enumerate(lines[:pip]) if line.startswith("WORKDIR"))
    assert lines[workdir] == "WORKDIR ${REPO_DIR}" and copy_repo < pip


def test_the_binder_link_opens_jupyterlab_in_notebooks():
    url = colab.binder_url(colab.repository())
    assert url.startswith("https://mybinder.org/v2/gh/") and "/HEAD?" in url  # no release
    assert url.endswith("?urlpath=lab/tree/notebooks")
    assert (ROOT / "notebooks" / NOTEBOOK).exists()


@pytest.mark.slow
@pytest.mark.tooling
def test_what_binder_installs_runs_a_notebook_under_nbval(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # nothing from here
    python = str(venv / "bin" / "python")
    # Exactly binder/requirements.txt, run from the repository's root as repo2docker
    # does (in a copy, as repo2docker copies the repository first: a build in the
    # checkout could meet another test's), plus the test runner (pytest, nbval),
    # which Binder does not need.
    repo = copy_package(tmp_path / "repo", extra=["binder"])
    install = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-compile", "-r", "binder/requirements.txt",
         "pytest", "nbval"], cwd=repo, env=env, capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-3000:]
    work = tmp_path / "run"
    work.mkdir()
    shutil.copy(ROOT / "notebooks" / NOTEBOOK, work)
    shutil.copy(ROOT / "tests" / "nbval_sanitize.cfg", work)
    (work / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # not the checkout's
    where = subprocess.run([python, "-c", "import minitape, matplotlib, ipywidgets, jupyterlab;"
                            "print(minitape.__file__)"], cwd=work, env=env, capture_output=True, text=True)
    assert where.returncode == 0, where.stderr
    assert str(venv) in where.stdout  # installed, not imported from the checkout
    run = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval",
         "--nbval-current-env", "--nbval-sanitize-with", "nbval_sanitize.cfg", NOTEBOOK],
        cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "failed" not in run.stdout
