"""The release workflow (.github/workflows/release.yml): on a version tag it
builds the sdist and wheel reproducibly, refuses to go on unless the wheel is
the one the notebooks name (RELEASE.sha256), runs twine check, runs the tests
against the built wheel (not the checkout), and publishes it with PyPI
trusted publishing (no token) and as the tag's GitHub release, each job
checking the hash again. The file is parsed and its steps checked; its tag
and hash checks are run here, and the reproducible build is built twice.
What cannot run here: GitHub Actions itself and PyPI (docs/releasing.md)."""
import fnmatch
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml

from tools import colab, release

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
             ("tag names the version", "Build the sdist and the wheel", "the notebooks name",
              "twine check", "against the built wheel")]
    assert order == sorted(order)
    assert uses[-1] == "actions/upload-artifact"
    assert "python -m tools.release build --outdir dist" in \
        _step(workflow, "build", "Build the sdist")["run"]
    assert _step(workflow, "build", "the notebooks name")["run"] == \
        "python -m tools.release check dist"
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
                 "conftest.py", "README.md", "docs", "RELEASE.sha256"):
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
    for name, job in workflow["jobs"].items():
        for step in job["steps"]:
            tokens = {k: v for k, v in step.get("env", {}).items() if "TOKEN" in k.upper()}
            # Only gh's own: the job's short-lived token, for the GitHub release.
            assert tokens in ({}, {"GH_TOKEN": "${{ github.token }}"}), (name, tokens)
            assert not tokens or name == "github-release"
            assert not any("token" in key.lower() for key in step.get("with", {}))


def test_the_wheel_goes_to_the_tags_github_release_the_colab_cells_second_source(workflow):
    job = workflow["jobs"]["github-release"]
    assert job["needs"] == "build" and job["permissions"] == {"contents": "write"}
    run = _step(workflow, "github-release", "Create the release")["run"]
    assert run.startswith('gh release create "$GITHUB_REF_NAME" dist/* --verify-tag')
    # the URL the cell asks for: the release of tag v<version>, the wheel by its name
    version, _ = colab.pinned()
    assert colab.release_wheel_url("R", version) == \
        f"R/releases/download/v{version}/{release.wheel_name(version)}"


@pytest.mark.parametrize("job", ["publish", "github-release"])
def test_each_publishing_job_checks_the_hash_before_it_publishes(workflow, job):
    steps = workflow["jobs"][job]["steps"]
    names = [s.get("name", s.get("uses", "")) for s in steps]
    check = names.index("Check the wheel is the one the notebooks name (RELEASE.sha256)")
    publishing = [i for i, s in enumerate(steps) if "gh-action-pypi-publish" in s.get("uses", "")
                  or "gh release create" in s.get("run", "")]
    assert publishing and check < min(publishing)
    assert steps[0]["uses"].startswith("actions/checkout")  # RELEASE.sha256 is there


def _fake_dist(tmp_path, content):
    dist = tmp_path / "dist"
    dist.mkdir(exist_ok=True)
    version, _ = colab.pinned()
    (dist / release.wheel_name(version)).write_bytes(content)
    return dist


@pytest.mark.parametrize("matches", [True, False])
def test_the_publishing_jobs_hash_check_refuses_another_file(workflow, tmp_path, matches):
    run = _step(workflow, "publish", "the notebooks name")["run"]
    dist = _fake_dist(tmp_path, b"the wheel")
    release.write_pin(dist / next(p.name for p in dist.iterdir()), tmp_path / "RELEASE.sha256")
    if not matches:
        (dist / next(p.name for p in dist.iterdir())).write_bytes(b"a stranger's wheel")
    result = subprocess.run(["bash", "-e", "-c", run], cwd=tmp_path, capture_output=True,
                            text=True)
    assert (result.returncode == 0) == matches, result.stdout + result.stderr


def test_the_build_jobs_hash_check_refuses_a_wheel_the_notebooks_do_not_name(tmp_path):
    """`python -m tools.release check dist`, as the workflow runs it, on a wheel
    whose bytes are not RELEASE.sha256's: exit 1, saying why and what to do."""
    dist = _fake_dist(tmp_path, b"not the pinned wheel")
    result = subprocess.run([sys.executable, "-m", "tools.release", "check", str(dist),
                             "--version", colab.pinned()[0]], cwd=ROOT, capture_output=True,
                            text=True)
    assert result.returncode == 1
    assert "refusing to publish: " in result.stderr and "has the SHA-256" in result.stderr
    assert "python -m tools.release pin" in result.stderr


def test_the_hash_check_passes_the_pinned_wheel_and_names_each_problem(tmp_path):
    dist = _fake_dist(tmp_path, b"the wheel")
    version, _ = colab.pinned()
    pin = tmp_path / "RELEASE.sha256"
    release.write_pin(dist / release.wheel_name(version), pin)
    assert release.check(dist, version, pin) == []
    problems = release.check(dist, "99.0.0", pin)
    assert problems[0] == f"RELEASE.sha256 names minitape {version}, not 99.0.0"
    assert problems[1].endswith("minitape-99.0.0-py3-none-any.whl is missing")


@pytest.mark.slow
def test_the_wheel_builds_reproducibly(tmp_path):
    """Two builds of this checkout, each from a fresh copy: the same bytes, made
    by the setuptools pyproject.toml pins (the WHEEL file names its generator)."""
    first = release.build(tmp_path / "one", sdist=False)
    second = release.build(tmp_path / "two", sdist=False)
    assert release.sha256(first) == release.sha256(second)
    requires = tomllib.loads(
        (ROOT / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]["requires"]
    (pinned_setuptools,) = requires
    assert pinned_setuptools.startswith("setuptools==")
    with zipfile.ZipFile(first) as wheel:
        generator = [line for line in wheel.read(
            f"minitape-{colab.project()['version']}.dist-info/WHEEL").decode().splitlines()
            if line.startswith("Generator: ")]
        assert generator == [f"Generator: setuptools ({pinned_setuptools.split('==')[1]})"]
        assert {info.date_time for info in wheel.infolist()} == {(1980, 1, 1, 0, 0, 0)}


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
    for words in ("trusted publisher", "release.yml", "git tag", "pypi",
                  "python -m tools.release pin", "RELEASE.sha256", "[project.urls] Repository"):
        assert words.lower() in text.lower(), words
