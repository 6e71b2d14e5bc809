"""The launch badges and the Colab install cell: generated from pyproject.toml
(name, version, `[project.urls] Repository`), the same in every notebook; on
Colab the cell installs only minitape, from PyPI or else the repository's
archive at the version's tag, and stops with one short message when both fail.
(tests/test_colab_install.py runs the cell against a local index and archive.)"""
import json
import re
import subprocess
import sys
import tempfile
import tomllib
import types
from pathlib import Path

import pytest

from tools import colab

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
REQUIREMENT = f"{PROJECT['name']}=={PROJECT['version']}"
REPOSITORY = PROJECT["urls"]["Repository"]
ARCHIVE = f"{REPOSITORY}/archive/refs/tags/v{PROJECT['version']}.tar.gz"
PIP = [sys.executable, "-m", "pip", "install", "-q", "--no-deps"]


def test_the_cell_installs_this_release_of_the_package_from_pyproject():
    assert colab.requirement() == REQUIREMENT == f"minitape=={PROJECT['version']}"
    source = colab.cell_source()
    assert f'"{REQUIREMENT}"' in source
    assert f'"{ARCHIVE}"' in source  # the fallback: the tag of this version, as an archive
    assert "git+" not in source  # no git needed
    assert "[" not in REQUIREMENT  # no extras: Colab has matplotlib and ipywidgets


def test_the_repository_is_a_github_url_named_once_in_pyproject():
    assert colab.repository() == REPOSITORY
    assert REPOSITORY.startswith("https://github.com/") and REPOSITORY.count("/") == 4
    with pytest.raises(ValueError, match="Repository must be https://github.com/OWNER/NAME"):
        colab.repository(_pyproject_with_url("https://gitlab.com/a/b"))


def _pyproject_with_url(url):
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8").replace(REPOSITORY, url)
    path = Path(tempfile.mkdtemp()) / "pyproject.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_badges_and_cell_follow_the_repository_url():
    """A fork changes one line: every link follows."""
    fork = _pyproject_with_url("https://github.com/a-teacher/course")
    cell = colab.cell_source(fork)
    assert "https://github.com/a-teacher/course/archive/refs/tags/v" in cell
    assert "mybinder.org/v2/gh/a-teacher/course/HEAD?urlpath=lab/tree/notebooks" in cell
    owner = REPOSITORY.removeprefix("https://github.com/")
    badge = colab.badge_cell_source("07_jacobians.ipynb", fork)
    assert owner not in cell + badge
    assert "(https://colab.research.google.com/github/a-teacher/course/blob/main/notebooks/" \
           "07_jacobians.ipynb)" in badge
    assert "(https://mybinder.org/v2/gh/a-teacher/course/HEAD?urlpath=lab/tree/notebooks/" \
           "07_jacobians.ipynb)" in badge


def _without_generated_text(path):
    """The file's text less what tools.colab writes (badges, the Colab cell)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".ipynb":
        nb = json.loads(text)
        generated = {colab.badge_cell_source(path.name), colab.cell_source()}
        return "\n".join(colab.source_text(c) for c in nb["cells"]
                         if colab.source_text(c) not in generated)
    if path == colab.README:
        return colab.readme_with_badges(text).replace(colab.badges(), "")
    return text


def test_no_file_names_the_repository_but_pyproject_and_generated_text():
    owner = REPOSITORY.removeprefix("https://github.com/")
    folders = ["minitape", "tools", "tests", "docs", "notebooks", "binder", ".github", ".ci",
               "benchmarks"]
    paths = [ROOT / "README.md"] + [p for f in folders for p in sorted((ROOT / f).rglob("*"))
                                    if p.is_file() and "__pycache__" not in p.parts
                                    and p.suffix not in (".png", ".pyc")]
    named = [str(p.relative_to(ROOT)) for p in paths if owner in _without_generated_text(p)]
    assert named == []
    assert (ROOT / "pyproject.toml").read_text(encoding="utf-8").count(REPOSITORY) == 1


def test_the_readme_carries_the_generated_badges():
    text = colab.README.read_text(encoding="utf-8")
    assert colab.readme_with_badges(text) == text, "run `python -m tools.colab`"
    assert colab.badges() in text
    assert colab.main(["--check"]) == 0


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_notebook_starts_with_its_badges_and_exactly_the_colab_cell(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    badge = colab.first_markdown_cell(nb)
    assert badge is nb["cells"][0] and badge["id"] == colab.BADGE_CELL_ID
    assert colab.source_text(badge) == colab.badge_cell_source(path.name), (
        f"{path.name}: run `python -m tools.colab` to write the badges")
    assert f"notebooks/{path.name})" in colab.source_text(badge)
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
    assert calls == [PIP + [REQUIREMENT]]  # --no-deps: nothing but minitape


def test_on_colab_the_cell_falls_back_to_the_archive_of_the_tag(monkeypatch):
    answers = iter([1, 0])  # PyPI fails, the archive works

    def fake_run(args, **kwargs):
        calls.append(args)
        return subprocess.CompletedProcess(args, next(answers), stdout="",
                                           stderr="ERROR: No matching distribution")
    calls = []
    monkeypatch.setattr(subprocess, "run", fake_run)
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    exec(compile(colab.cell_source(), "<colab cell>", "exec"), {})
    assert calls == [PIP + [REQUIREMENT], PIP + [ARCHIVE]]


def test_on_colab_two_failed_installs_stop_with_one_short_message(monkeypatch):
    pip_log = "Collecting stuff\n" * 50 + "ERROR: No matching distribution found for " + REQUIREMENT
    with pytest.raises(Exception) as info:
        _run_cell(colab.cell_source(), True, monkeypatch, returncode=1, stderr=pip_log)
    message = str(info.value)
    version = PROJECT["version"]
    assert message.splitlines() == [
        f"minitape {version} is not installed.",
        f"From PyPI: ERROR: No matching distribution found for {REQUIREMENT}",
        f"From {REPOSITORY} (tag v{version}): "
        f"ERROR: No matching distribution found for {REQUIREMENT}",
        "Next: open the course on Binder, which installs minitape from the repository itself: "
        f"{colab.binder_url(REPOSITORY)}",
    ]
    assert "Collecting" not in message  # pip's last line, not its log
    # IPython (Colab) prints exactly the message, no traceback, and "Run all" stops.
    assert info.value._render_traceback_() == [message]


# What pip (23 to 26) writes when it cannot reach an index or a URL: retries
# warnings, then an error that does not name the connection (index), or the
# error itself (a URL; pip 25+ draws it with "x" and "hint:" lines, no "ERROR:").
PIP_OFFLINE_INDEX = (
    "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) "
    "after connection broken by 'NewConnectionError(\"HTTPSConnection(host='pypi.org', "
    "port=443): Failed to establish a new connection: [Errno -3] Temporary failure in name "
    "resolution\")': /simple/minitape/\n"
    "ERROR: Could not find a version that satisfies the requirement minitape==0.1.0 "
    "(from versions: none)\n"
    "ERROR: No matching distribution found for minitape==0.1.0\n")
PIP_OFFLINE_URL = (
    "\n\u00d7 Failed to connect to github.com while fetching https://github.com/x.tar.gz\n"
    "\u2570\u2500> [Errno -3] Temporary failure in name resolution\n\n"
    "hint: Are you connected to the Internet? If so, check whether your system can connect "
    "to github.com before trying again.\n")


def _message(monkeypatch, stderrs):
    answers = iter(stderrs)

    def fake_run(args, **kwargs):
        return subprocess.CompletedProcess(args, 1, stdout="", stderr=next(answers))

    monkeypatch.setattr(subprocess, "run", fake_run)
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    with pytest.raises(Exception) as info:
        exec(compile(colab.cell_source(), "<colab cell>", "exec"), {})
    return str(info.value).splitlines()


def test_with_no_connection_the_message_says_so_and_suggests_a_new_runtime(monkeypatch):
    lines = _message(monkeypatch, [PIP_OFFLINE_INDEX, PIP_OFFLINE_URL])
    assert lines[1] == "From PyPI: no connection (pip could not reach the server)"
    assert lines[2].endswith("): no connection (pip could not reach the server)")
    assert lines[3] == ("Next: this runtime reached neither server. Run Runtime > Disconnect "
                        "and delete runtime, then run this cell again.")


def test_one_server_reached_the_message_suggests_binder(monkeypatch):
    not_found = "ERROR: HTTP error 404 while getting https://github.com/x.tar.gz\n"
    lines = _message(monkeypatch, [PIP_OFFLINE_INDEX, not_found])
    assert lines[1] == "From PyPI: no connection (pip could not reach the server)"
    assert lines[2].endswith("): ERROR: HTTP error 404 while getting https://github.com/x.tar.gz")
    assert lines[3].startswith("Next: open the course on Binder") and "mybinder.org" in lines[3]


def test_pips_drawn_errors_count_as_its_error_lines(monkeypatch):
    drawn = "\u00d7 No matching distribution found for minitape==0.1.0\nhint: see above\n"
    lines = _message(monkeypatch, [drawn, drawn])
    assert lines[1] == "From PyPI: \u00d7 No matching distribution found for minitape==0.1.0"


def test_the_site_cell_installs_the_bundled_wheel():
    assert colab.lite_cell_source().splitlines()[-1] == \
        f"%pip install -q {REQUIREMENT} ipywidgets matplotlib"


def test_write_cell_changes_only_the_first_code_cell(tmp_path):
    original = NOTEBOOKS[0].read_text(encoding="utf-8")
    copy = tmp_path / NOTEBOOKS[0].name
    copy.write_text(original, encoding="utf-8")
    assert colab.write_cell(copy, "print('other')") is True
    before, after = json.loads(original), json.loads(copy.read_text(encoding="utf-8"))
    changed = [i for i, (a, b) in enumerate(zip(before["cells"], after["cells"])) if a != b]
    assert changed == [before["cells"].index(colab.first_code_cell(before))]
    assert colab.source_text(colab.first_code_cell(after)) == "print('other')"
    assert colab.write_cell(copy, "print('other')") is False


def test_write_cell_adds_the_badge_cell_once_before_the_title(tmp_path):
    nb = json.loads(NOTEBOOKS[0].read_text(encoding="utf-8"))
    del nb["cells"][0]  # as before the badges existed
    copy = tmp_path / NOTEBOOKS[0].name
    copy.write_text(json.dumps(nb), encoding="utf-8")
    assert colab.write_cell(copy) is True
    after = json.loads(copy.read_text(encoding="utf-8"))
    assert after["cells"][1:] == nb["cells"]  # the notebook as it was, after the badges
    assert colab.source_text(after["cells"][0]) == colab.badge_cell_source(copy.name)
    assert colab.write_cell(copy) is False  # a second run adds nothing


def test_the_python_range_holds_colab_and_ci_runs_its_two_ends():
    """requires-python covers Colab's Python (3.12); .ci/run runs the README's
    test command on the oldest it allows and on the newest this CI has (3.13)."""
    from packaging.specifiers import SpecifierSet

    allowed = SpecifierSet(PROJECT["requires-python"])
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    oldest = re.search(r'PYTHON_OLDEST="\$\(python_for ([\d.]+)\)"', ci).group(1)
    newest = re.search(r'PYTHON_NEWEST="\$\(python_for ([\d.]+)\)"', ci).group(1)
    assert "3.12" in allowed  # Colab
    assert oldest in allowed and newest in allowed
    older = f"3.{int(oldest.split('.')[1]) - 1}"
    assert older not in allowed, f"requires-python allows {older}, which CI does not run"
    assert sys.version_info >= (3, 11)  # the oldest allowed, so tomllib is there
    # The whole README test command on the oldest; on the newest all of it but
    # the tests of the course's tooling (pyproject.toml's `tooling` marker), which
    # do not depend on the Python that runs pytest.
    lines = [line.strip() for line in ci.splitlines()]
    assert "python -m pytest -q" in lines  # the oldest's environment, activated
    assert '.ci-venv-newest/bin/python -m pytest -q -m "not tooling"' in lines
    pytest_options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "tool"]["pytest"]["ini_options"]
    assert any(m.startswith("tooling: checks the course's tooling")
               for m in pytest_options["markers"])
    marked = {path.name for path in (ROOT / "tests").glob("test_*.py")
              if re.search(r"^(pytestmark = .*|@)pytest\.mark\.tooling|mark\.tooling[,\]]",
                           path.read_text(encoding="utf-8"), re.M)}
    assert marked == {"test_binder.py", "test_browser.py", "test_browser_explorers.py",
                      "test_clean_clone.py", "test_colab_install.py", "test_nbgrader.py",
                      "test_notebook_figures.py", "test_rebuild_notebooks.py"}  # not the engine
