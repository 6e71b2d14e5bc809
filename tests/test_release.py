"""The release workflow (.github/workflows/release.yml): on a version tag it
builds the sdist and wheel, runs twine check, runs the tests against the
built wheel (not the checkout) and publishes with PyPI trusted publishing (no
token). The file is parsed and its steps checked; its tag check is run here.
What cannot run here: GitHub Actions itself and PyPI (docs/releasing.md)."""
import fnmatch
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tools import colab

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
VERSION = colab.project()["version"]


@pytest.fixture(scope="module")
def workflow():
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def _steps(workflow, job):
    return workflow["jobs"][job]["steps"]


def _step(workflow, job, words):
    """The one step of `job` whose name contains `words`."""
    (step,) = [s for s in _steps(workflow, job) if words in s.get("name", "")]
    return step


def test_it_runs_on_version_tags_only(workflow):
    trigger = workflow.get("on", workflow.get(True))  # YAML 1.1 reads `on` as True
    assert list(trigger) == ["push"] and list(trigger["push"]) == ["tags"]
    patterns = trigger["push"]["tags"]
    assert any(fnmatch.fnmatch(f"v{VERSION}", p) for p in patterns)
    assert not any(fnmatch.fnmatch("main", p) for p in patterns)


def test_the_build_job_checks_builds_twine_checks_and_tests_the_wheel_in_order(workflow):
    steps = _steps(workflow, "build")
    uses = [s.get("uses", "").split("@")[0] for s in steps]
    assert uses[:2] == ["actions/checkout", "actions/setup-python"]
    names = [s.get("name", "") for s in steps]
    order = [names.index(_step(workflow, "build", words)["name"]) for words in
             ("tag names the version", "Build the sdist and the wheel", "twine check",
              "against the built wheel")]
    assert order == sorted(order)
    assert uses[-1] == "actions/upload-artifact"
    assert "python -m build --sdist --wheel --outdir dist ." in \
        _step(workflow, "build", "Build the sdist")["run"]
    assert "twine check --strict dist/*" in _step(workflow, "build", "twine check")["run"]


def test_the_tests_import_the_wheel_not_the_checkout(workflow):
    run = _step(workflow, "build", "against the built wheel")["run"]
    lines = [line.strip() for line in run.splitlines()]
    assert 'python -m venv "$RUNNER_TEMP/wheel-env"' in lines  # a fresh environment
    assert any(line.startswith("python -m pip install") and "$wheel" in line
               and "[test]" in line for line in lines)
    start = next(i for i, line in enumerate(lines) if line.startswith("cp -r "))
    copied = " ".join(lines[start:start + 2]).replace("\\", " ").split()[2:]
    assert "minitape" not in copied  # no source package next to the tests
    # What the tests read besides the package: the tests, notebooks, tools, CI files.
    for name in ("tests", "notebooks", "tools", ".ci", ".github", "binder", "pyproject.toml",
                 "conftest.py", "README.md", "docs"):
        assert name in copied, name
    assert lines.index('cd "$RUNNER_TEMP/from-wheel"') < next(
        i for i, line in enumerate(lines) if line.startswith("python -m pytest"))
    assert any("site-packages" in line and "minitape.__file__" in line for line in lines)
    for name in ("test_layers_contract", "test_binder", "test_colab_install", "test_site"):
        assert f"--ignore=tests/{name}.py" in run
        assert (ROOT / "tests" / f"{name}.py").exists(), f"{name}: a stale --ignore"


def test_publishing_uses_trusted_publishing_and_no_token(workflow):
    publish = workflow["jobs"]["publish"]
    assert publish["needs"] == "build"
    assert publish["permissions"] == {"id-token": "write"}  # OIDC, what PyPI trusts
    assert publish["environment"]["name"] == "pypi"
    (step,) = [s for s in publish["steps"] if "gh-action-pypi-publish" in s.get("uses", "")]
    assert "password" not in step.get("with", {})
    assert workflow["permissions"] == {"contents": "read"}
    text = WORKFLOW.read_text(encoding="utf-8")
    assert "secrets" not in text and "password" not in text.lower()  # no stored credential
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            assert not any("TOKEN" in key.upper() for key in step.get("env", {}))
            assert not any("token" in key.lower() for key in step.get("with", {}))


@pytest.mark.parametrize("tag, ok", [(f"v{VERSION}", True), ("v99.0.0", False),
                                     (VERSION, False)])
def test_the_tag_check_step_passes_only_for_this_version(workflow, tmp_path, tag, ok):
    run = _step(workflow, "build", "tag names the version")["run"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    env = {**os.environ, "GITHUB_REF_NAME": tag, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run([shutil.which("bash"), "-e", "-c", run], cwd=ROOT, env=env,
                            capture_output=True, text=True)
    assert (result.returncode == 0) == ok, result.stderr
    if not ok:
        assert f"expected v{VERSION}" in result.stderr


def test_the_release_docs_name_the_steps():
    text = (ROOT / "docs" / "releasing.md").read_text(encoding="utf-8")
    for words in ("trusted publisher", "release.yml", "git tag", "pypi", "python -m tools.colab"):
        assert words.lower() in text.lower(), words
