"""The launch badges and the Colab install cell: generated from pyproject.toml
(name, `[project.urls] Repository`) and RELEASE.sha256 (the wheel, its
version and SHA-256), the same in every notebook, a Colab form; on Colab the
cell installs only that wheel, checked by its hash, from PyPI or else the
repository's GitHub release, and stops with one short message when both fail.
(tests/test_colab_install.py runs the cell against a local index and server.)"""
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
REPOSITORY = PROJECT["urls"]["Repository"]
RELEASED, SHA256 = colab.pinned()  # the wheel the cell installs
REQUIREMENT = f"minitape=={RELEASED}"
WHEEL_URL = f"{REPOSITORY}/releases/download/v{RELEASED}/minitape-{RELEASED}-py3-none-any.whl"
PIP = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--only-binary=:all:",
       "--require-hashes", "-r"]


def test_the_cell_installs_the_pinned_wheel_by_its_hash():
    assert re.fullmatch(r"[0-9a-f]{64}", SHA256)
    source = colab.cell_source()
    assert f'SHA256 = "{SHA256}"' in source
    assert f'"PyPI": "{REQUIREMENT}"' in source
    assert "git+" not in source and "archive" not in source  # nothing built from source
    assert "[" not in REQUIREMENT  # no extras: Colab has matplotlib and ipywidgets
    from packaging.version import Version
    assert Version(RELEASED) <= Version(PROJECT["version"])  # a release of this project


def test_the_cell_is_a_colab_form_whose_title_says_what_it_does():
    first_line = colab.cell_source().splitlines()[0]
    assert first_line == (f"#@title Install minitape {RELEASED} (on Colab only: elsewhere "
                          "this cell does nothing)")
    assert colab.CODE_CELL_METADATA == {"cellView": "form", "jupyter": {"source_hidden": True}}


def test_a_wrong_pin_file_is_refused(tmp_path):
    wrong = tmp_path / "RELEASE.sha256"
    wrong.write_text("minitape-0.1.0-py3-none-any.whl\n", encoding="utf-8")
    with pytest.raises(ValueError, match="one line"):
        colab.pinned(wrong)


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
    assert 'REPOSITORY = "https://github.com/a-teacher/course"' in cell
    assert "mybinder.org/v2/gh/a-teacher/course/HEAD?urlpath=lab/tree/notebooks" in cell
    owner = REPOSITORY.removeprefix("https://github.com/")
    badge = colab.badge_cell_source("07_jacobians.ipynb", fork)
    assert owner not in cell + badge
    assert f"(https://colab.research.google.com/github/a-teacher/course/blob/v{PROJECT['version']}/notebooks/" \
           "07_jacobians.ipynb)" in badge
    assert "(https://mybinder.org/v2/gh/a-teacher/course/HEAD?urlpath=lab/tree/notebooks/" \
           "07_jacobians.ipynb)" in badge


def _without_generated_text(path):
    """The file's text less what tools.colab writes (badges, the Colab cell, the
    notebooks' links to the repository's pages)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".ipynb":
        nb = json.loads(text)
        generated = {colab.badge_cell_source(path.name), colab.cell_source()}
        pages = re.escape(colab.project_url(""))  # links to the docs, as tools.colab writes them
        return "\n".join(re.sub(rf"\]\({pages}[^)\s]*\)", "]()", colab.source_text(c))
                         for c in nb["cells"] if colab.source_text(c) not in generated)
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
    for key, value in colab.CODE_CELL_METADATA.items():
        assert first["metadata"].get(key) == value, f"{path.name}: the Colab cell is not a form"


def _run_cell(monkeypatch, answers, on_colab=True):
    """Run the Colab cell with pip replaced: `answers` is one (returncode,
    stderr) per call. Returns [(pip's arguments, the requirement file's text)]."""
    calls, answers = [], iter(answers)

    def fake_run(args, **kwargs):
        calls.append((args[:-1], Path(args[-1]).read_text(encoding="utf-8")))
        code, stderr = next(answers)
        return subprocess.CompletedProcess(args, code, stdout="", stderr=stderr)

    monkeypatch.setattr(subprocess, "run", fake_run)
    if on_colab:
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    else:
        monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    exec(compile(colab.cell_source(), "<colab cell>", "exec"), {})
    return calls


def test_the_cell_does_nothing_outside_colab(monkeypatch):
    assert _run_cell(monkeypatch, [], on_colab=False) == []


def test_on_colab_the_cell_pip_installs_only_the_pinned_wheel(monkeypatch):
    calls = _run_cell(monkeypatch, [(0, "")])
    # --no-deps: nothing but minitape; --only-binary: nothing built; the hash: nothing else
    assert calls == [(PIP, f"{REQUIREMENT} --hash=sha256:{SHA256}\n")]


def test_on_colab_the_cell_falls_back_to_the_github_release(monkeypatch):
    calls = _run_cell(monkeypatch, [(1, "ERROR: No matching distribution"), (0, "")])
    assert calls == [(PIP, f"{REQUIREMENT} --hash=sha256:{SHA256}\n"),
                     (PIP, f"minitape @ {WHEEL_URL} --hash=sha256:{SHA256}\n")]
    assert WHEEL_URL == colab.release_wheel_url(REPOSITORY, RELEASED)


def _message(monkeypatch, stderrs):
    with pytest.raises(Exception) as info:
        _run_cell(monkeypatch, [(1, stderr) for stderr in stderrs])
    # IPython (Colab) prints exactly the message, no traceback, and "Run all" stops.
    assert info.value._render_traceback_() == [str(info.value)]
    return str(info.value).splitlines()


OWN_MACHINE = (f"; or on your own machine: clone {REPOSITORY} and run the README's first "
               "command.")


def test_on_colab_two_failed_installs_stop_with_one_short_message(monkeypatch):
    pip_log = "Collecting stuff\n" * 50 + "ERROR: No matching distribution found for " + REQUIREMENT
    lines = _message(monkeypatch, [pip_log, "ERROR: HTTP error 404 while getting x.whl"])
    assert lines == [
        f"minitape {RELEASED} is not installed.",
        f"From PyPI: ERROR: No matching distribution found for {REQUIREMENT}",
        f"From {REPOSITORY} (release v{RELEASED}): not found (HTTP 404)",
        "Next: open the course on Binder, which builds minitape from the repository itself: "
        f"{colab.binder_url(REPOSITORY)}" + OWN_MACHINE,
    ]


# What pip writes when a file's hash is not the pinned one (pip 23 to 26).
PIP_HASH_MISMATCH = (
    "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have "
    "updated the package versions, please update the hashes. Otherwise, examine the package "
    "contents carefully; someone may have tampered with them.\n"
    "    minitape==0.1.0 from https://files.example/minitape-0.1.0-py3-none-any.whl:\n"
    "        Expected sha256 0000\n             Got        1111\n")


def test_a_file_with_another_hash_is_refused_and_the_message_says_so(monkeypatch):
    lines = _message(monkeypatch, [PIP_HASH_MISMATCH, PIP_HASH_MISMATCH])
    assert lines[1] == "From PyPI: refused: the file there is not the wheel this course names"
    assert lines[2].endswith("): refused: the file there is not the wheel this course names")


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


def test_with_no_connection_the_message_says_so_and_suggests_a_new_runtime(monkeypatch):
    lines = _message(monkeypatch, [PIP_OFFLINE_INDEX, PIP_OFFLINE_URL])
    assert lines[1] == "From PyPI: no connection (pip could not reach the server)"
    assert lines[2].endswith("): no connection (pip could not reach the server)")
    assert lines[3] == ("Next: Runtime > Disconnect and delete runtime, then run this cell "
                        "again (a new runtime may reach what this one could not)" + OWN_MACHINE)


def test_binder_is_never_suggested_when_github_was_out_of_reach(monkeypatch):
    """Binder builds from GitHub: no help to a runtime that cannot reach it."""
    not_found = "ERROR: No matching distribution found for minitape==0.1.0\n"
    lines = _message(monkeypatch, [not_found, PIP_OFFLINE_URL])
    assert lines[2].endswith("): no connection (pip could not reach the server)")
    assert "Binder" not in lines[3] and lines[3].startswith("Next: Runtime > Disconnect")


def test_pips_drawn_errors_count_as_its_error_lines(monkeypatch):
    drawn = "\u00d7 No matching distribution found for minitape==0.1.0\nhint: see above\n"
    lines = _message(monkeypatch, [drawn, drawn])
    assert lines[1] == "From PyPI: \u00d7 No matching distribution found for minitape==0.1.0"


def test_the_site_cell_installs_the_bundled_wheel():
    assert colab.lite_cell_source().splitlines()[-1] == \
        f"%pip install -q minitape=={PROJECT['version']} ipywidgets matplotlib"


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
    del after["cells"][changed[0]]["metadata"]["cellView"]  # not a form any more
    copy.write_text(json.dumps(after), encoding="utf-8")
    assert colab.write_cell(copy, "print('other')") is True


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
    # The whole test command (docs/testing.md) on the oldest; on the newest the tests
    # but those of the course's tooling (pyproject.toml's `tooling` marker), which do
    # not depend on the Python that runs pytest; the notebooks run on the oldest, on
    # Colab's Python and at the floors.
    lines = [line.strip() for line in ci.splitlines()]
    assert "python -m pytest -q" in lines  # the oldest's environment, activated
    assert '.ci-venv-newest/bin/python -m pytest -q -m "not tooling" tests' in lines
    assert '"$python" -m pytest -q -n 1 \\' in lines  # Colab's stack
    assert "tests/test_widgets_*.py tests/test_checker.py notebooks/" in lines
    pytest_options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "tool"]["pytest"]["ini_options"]
    assert any(m.startswith("tooling: checks the course's tooling")
               for m in pytest_options["markers"])
    marked = {path.name for path in (ROOT / "tests").glob("test_*.py")
              if re.search(r"^(pytestmark = .*|@)pytest\.mark\.tooling|mark\.tooling[,\]]",
                           path.read_text(encoding="utf-8"), re.M)}
    assert marked == {"test_binder.py", "test_browser.py", "test_browser_explorers.py",
                      "test_clean_clone.py", "test_colab_install.py", "test_nbgrader.py",
                      "test_notebook_figures.py", "test_rebuild_notebooks.py",
                      "test_run_all_twice.py", "test_python_check.py"}  # not the engine
