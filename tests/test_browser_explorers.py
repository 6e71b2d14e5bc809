"""Explorers in JupyterLab before the kernel runs, and after a save (real browser).

JupyterLab on 127.0.0.1 in Debian's Chromium (as in test_browser.py) serves
copies of notebooks/07_jacobians.ipynb:

- trusted.ipynb and untrusted.ipynb (a notebook someone downloaded), opened as
  stored, nothing run: the explorer is its static picture, with no widget
  control (no inert control with a red broken-link icon) and no error; and
  every other notebook the same way, trusted and untrusted (every/);
- run.ipynb: Run All, save, shut the kernel down, reopen: the explorer's
  one-line note ("run the notebook to use this explorer") shows, and no
  "Error displaying widget", broken widget or `interactive(children=...`.

Needs notebooks stored by `python -m tools.rebuild_notebooks` (explorers as
pictures). Skipped without chromium or playwright, except under CI (`CI` set).
"""
import json
import os
import platform
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.tooling]

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "07_jacobians.ipynb"
STEPPER = ROOT / "notebooks" / "00b_how_a_tape_works.ipynb"  # the stepper and one more
CHROMIUM = "/usr/bin/chromium"
FALLBACK = ".minitape-explorer-fallback"
NOTE = ".minitape-explorer-note"
DISCONNECTED = ".jupyter-widgets-disconnected"  # ipywidgets' broken-link icon
BROKEN_TEXT = ("Error displaying widget", "model not found", "interactive(children=",
               "Loading widget")
RUN_ALL_TIMEOUT = 180  # s, every cell of 07 on a busy machine
WAIT = 60_000  # ms: the page, the kernel and the widget manager start on a busy machine


def _needs(reason):
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(f"{reason} (CI is set, so the browser test must run)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def lab():
    """JupyterLab serving trusted.ipynb, untrusted.ipynb and run.ipynb (copies of 07)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _needs("the playwright package is not installed")
    if not os.access(CHROMIUM, os.X_OK):
        _needs(f"{CHROMIUM} is missing (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="minitape-explorers-") as tmp:
        tmp = Path(tmp)
        root = tmp / "notebooks"
        root.mkdir()
        shutil.copy(NOTEBOOK, root / "trusted.ipynb")
        shutil.copy(NOTEBOOK, root / "run.ipynb")  # same digest: trusted too
        shutil.copy(STEPPER, root / "stepper.ipynb")
        # Trust goes by a digest of the content: the untrusted copy must differ.
        nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
        nb["metadata"]["title"] = "an untrusted copy"
        (root / "untrusted.ipynb").write_text(json.dumps(nb), encoding="utf-8")
        settings = tmp / "settings" / "@jupyterlab" / "notebook-extension"
        settings.mkdir(parents=True)
        (settings / "tracker.jupyterlab-settings").write_text(
            json.dumps({"windowingMode": "none"}), encoding="utf-8")  # every cell in the DOM
        env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp / "config"),
                   JUPYTER_DATA_DIR=str(tmp / "data"), JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
                   IPYTHONDIR=str(tmp / "ipython"))
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        # every notebook, as a student meets it: trusted, and downloaded (untrusted)
        every = root / "every"
        every.mkdir()
        for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
            shutil.copy(path, every / path.name)
            nb = json.loads(path.read_text(encoding="utf-8"))
            nb["metadata"]["title"] = "an untrusted copy"
            (every / f"untrusted-{path.name}").write_text(json.dumps(nb), encoding="utf-8")
        trusted = [str(root / "trusted.ipynb"), str(root / "stepper.ipynb")] + [
            str(p) for p in sorted(every.glob("*.ipynb")) if not p.name.startswith("untrusted-")]
        subprocess.run([sys.executable, "-m", "jupyter", "trust", *trusted],
                       env=env, check=True, capture_output=True)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        token = secrets.token_hex(24)
        cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
               "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={root}", "--ServerApp.terminals_enabled=False",
               "--LabApp.news_url=None",
               "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
               "--LabApp.extension_manager=readonly",
               # window.jupyterapp: the every-notebook test opens documents with
               # JupyterLab's own commands, one page load for all of them
               "--LabApp.expose_app_in_browser=True",
               f"--LabApp.user_settings_dir={tmp / 'settings'}",
               f"--LabApp.workspaces_dir={tmp / 'workspaces'}"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")
        log = tmp / "lab.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(cmd, cwd=root, env=env, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            url = f"http://127.0.0.1:{port}/"
            deadline = time.monotonic() + 60
            while True:
                try:
                    opener.open(f"{url}api/status?token={token}", timeout=2)
                    break
                except (urllib.error.URLError, OSError):
                    if proc.poll() is not None or time.monotonic() > deadline:
                        pytest.fail("jupyter lab did not start:\n" + log.read_text(errors="replace"))
                    time.sleep(0.25)
            yield {"url": url, "token": token, "root": root, "opener": opener}
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def _in_browser(check, lab):
    """Run `check(page)` in Chromium, in a thread of its own: Playwright's sync
    API refuses to start inside a running asyncio loop, and test_browser.py's
    session-wide browser keeps one running in this thread."""
    def run():
        from playwright.sync_api import sync_playwright

        with tempfile.TemporaryDirectory(prefix="minitape-chromium-") as profile:
            with sync_playwright() as pw:
                context = pw.chromium.launch_persistent_context(
                    profile, executable_path=CHROMIUM, headless=True,
                    args=["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update",
                          # no request leaves 127.0.0.1 (the launch badges' images)
                          "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"],
                    viewport={"width": 1400, "height": 1000})
                try:
                    page = context.new_page()
                    page.set_default_timeout(WAIT)
                    check(page, lab)
                finally:
                    context.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(run).result()  # re-raises the check's AssertionError here


def _open(page, lab, name):
    from playwright.sync_api import expect

    # ?reset: a fresh workspace, or the server's saved one reopens the tabs an
    # earlier test left (another notebook's panel then answers the locator)
    page.goto(f"{lab['url']}lab/tree/{name}?reset&token={lab['token']}")
    tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current")
    expect(tab).to_contain_text(name, timeout=WAIT)
    notebook = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook")
    expect(notebook).to_be_visible(timeout=WAIT)
    return notebook


def _assert_nothing_broken(page, notebook):
    text = notebook.inner_text()
    for broken in BROKEN_TEXT:
        assert broken not in text, f"the notebook shows {broken!r}"
    assert page.locator(DISCONNECTED).count() == 0, "a widget drawn without its kernel"


def _assert_the_picture_shows(page, notebook):
    from playwright.sync_api import expect

    fallback = notebook.locator(FALLBACK)
    expect(fallback).to_have_count(1, timeout=WAIT)
    expect(fallback).to_contain_text("delta = 0.0")
    expect(fallback).to_contain_text("run the notebook")
    expect(fallback.locator("img")).to_have_count(1)
    expect(fallback.locator("img")).to_be_visible()
    assert notebook.locator(".widget-interact, .jupyter-widgets").count() == 0
    _assert_nothing_broken(page, notebook)


def test_trusted_notebook_shows_the_picture_before_running(lab):
    _in_browser(lambda page, lab: _assert_the_picture_shows(
        page, _open(page, lab, "trusted.ipynb")), lab)


def test_the_stepper_notebook_shows_pictures_not_clipped_buttons(lab):
    """Issue 19: trusted, before running, the stepper's buttons were clipped
    ("\u25c0 b..", "nex..") beside red broken-link icons."""
    def check(page, lab):
        from playwright.sync_api import expect
        notebook = _open(page, lab, "stepper.ipynb")
        expect(notebook.locator(FALLBACK)).to_have_count(2, timeout=WAIT)
        expect(notebook.locator(FALLBACK).first).to_contain_text("step = 0")
        assert notebook.locator(".jupyter-widgets, .widget-button").count() == 0
        _assert_nothing_broken(page, notebook)
    _in_browser(check, lab)


def _pictures_stored(path):
    """How many explorers `path` stores as pictures (tools.rebuild_notebooks)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return sum("minitape-explorer-fallback" in "".join(o.get("data", {}).get("text/html", ""))
               for c in cells if c["cell_type"] == "code" for o in c["outputs"])


def test_every_notebook_before_running_shows_pictures_not_controls(lab):
    """Issue 19: each notebook, trusted and untrusted, opened before its kernel
    ran: every explorer is its picture, and no widget control, broken-link icon
    or widget error shows (test_the_stepper... and the 07 tests look closer)."""
    paths = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert sum(map(_pictures_stored, paths)) >= 12  # one explorer or more in 00 to 11

    def check(page, lab):
        from playwright.sync_api import expect
        page.goto(f"{lab['url']}lab?reset&token={lab['token']}")
        page.wait_for_function("() => window.jupyterapp", timeout=WAIT)
        page.evaluate("async () => { await window.jupyterapp.restored; }")
        for path in paths:
            for name in (path.name, f"untrusted-{path.name}"):
                # as a student opens one from the file browser, the others closed
                # (a panel still loading can outlive close-all: disposed then)
                page.evaluate("""async () => {
                    const app = window.jupyterapp;
                    await app.commands.execute("application:close-all");
                    for (const widget of Array.from(app.shell.widgets("main"))) {
                        widget.dispose();
                    }
                }""")
                expect(page.locator(".jp-NotebookPanel")).to_have_count(0, timeout=WAIT)
                # the command's result (the panel) is not sent back: Playwright
                # cannot always serialize a widget ("reference chain is too long")
                page.evaluate("""async path => {
                    await window.jupyterapp.commands.execute("docmanager:open", {path});
                }""", f"every/{name}")
                tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current")
                expect(tab).to_contain_text(name, timeout=WAIT)
                expect(page.locator(".jp-NotebookPanel")).to_have_count(1, timeout=WAIT)
                notebook = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook")
                expect(notebook).to_be_visible(timeout=WAIT)
                expect(notebook.locator(FALLBACK)).to_have_count(_pictures_stored(path),
                                                                 timeout=WAIT)
                assert notebook.locator(".jupyter-widgets, .widget-button").count() == 0, name
                _assert_nothing_broken(page, notebook)
    _in_browser(check, lab)


def test_saving_an_unchanged_notebook_rewrites_nothing(lab):
    """Issue 19: trusting or saving rewrote 12 notebooks (a dirty `git status`
    for a student who only read them)."""
    def check(page, lab):
        from playwright.sync_api import expect

        path = lab["root"] / "trusted.ipynb"
        stored = NOTEBOOK.read_bytes()
        assert path.read_bytes() == stored
        notebook = _open(page, lab, "trusted.ipynb")
        _assert_the_picture_shows(page, notebook)
        # Save once the kernel is connected, as a student would: JupyterLab then
        # writes the kernel's language_info, whose Python version is the one
        # field that changes where the kernel's Python is not the one the
        # notebooks were rebuilt with (3.11.7); before, the save raced the kernel.
        expect(_kernel_idle(page)).to_have_count(1, timeout=WAIT)
        stored = _with_python_version(stored, platform.python_version())
        written = path.stat().st_mtime_ns
        notebook.click(position={"x": 5, "y": 5})
        page.keyboard.press("Control+s")
        deadline = time.monotonic() + 20
        while path.stat().st_mtime_ns == written and time.monotonic() < deadline:
            page.wait_for_timeout(250)
        assert path.stat().st_mtime_ns != written, "JupyterLab did not save"
        saved = _settled(path)
        if saved != stored:
            import difflib
            diff = difflib.unified_diff(stored.decode().splitlines(), saved.decode().splitlines(),
                                        lineterm="", n=2)
            pytest.fail("saving an unchanged notebook changed it:\n" + "\n".join(
                line[:200] for line in list(diff)[:60]))
    _in_browser(check, lab)


def test_untrusted_notebook_shows_the_picture_before_running(lab):
    _in_browser(lambda page, lab: _assert_the_picture_shows(
        page, _open(page, lab, "untrusted.ipynb")), lab)


def test_after_run_all_save_and_reopen_no_widget_is_broken(lab):
    _in_browser(_run_save_reopen, lab)


def _with_python_version(notebook_bytes, version):
    """The stored notebook as JupyterLab saves it with a kernel of this Python
    version: its `metadata.language_info.version` replaced, nothing else."""
    stored = json.loads(notebook_bytes)["metadata"]["language_info"]["version"]
    old, new = (f'"version": "{v}"'.encode() for v in (stored, version))
    assert notebook_bytes.count(old) == 1, "the notebook's language_info.version, once"
    return notebook_bytes.replace(old, new)


def _settled(path, seconds=20):
    """The file's bytes once a save has finished: the server writes in steps,
    so a read right after the modification time moves can see an empty or
    half-written file. Settled = parses as JSON and is unchanged 0.5 s later."""
    deadline = time.monotonic() + seconds
    while True:
        data = path.read_bytes()
        time.sleep(0.5)
        try:
            json.loads(data)
            if path.read_bytes() == data:
                return data
        except ValueError:
            pass
        assert time.monotonic() < deadline, f"{path.name} did not settle after the save"


def _kernel_idle(page):
    status = page.locator(".jp-StatusBar-Widget").get_by_text(re.compile(r"\|\s*Idle\s*$"))
    return status


def _shut_down_kernels(lab):
    """Every session's kernel, through the server's REST API."""
    def call(method, path):
        request = urllib.request.Request(f"{lab['url']}{path}", method=method,
                                         headers={"Authorization": f"token {lab['token']}"})
        with lab["opener"].open(request, timeout=30) as response:
            body = response.read()
        return json.loads(body) if body else None

    for session in call("GET", "api/sessions"):
        call("DELETE", f"api/sessions/{session['id']}")


def _run_save_reopen(page, lab):
    from playwright.sync_api import expect

    notebook = _open(page, lab, "run.ipynb")
    expect(_kernel_idle(page)).to_have_count(1, timeout=WAIT)
    code_cells = notebook.locator(".jp-CodeCell")
    last_prompt = code_cells.nth(code_cells.count() - 1).locator(".jp-InputPrompt")
    notebook.click(position={"x": 5, "y": 5})
    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^\s*Run\s*$")).click()
    page.locator("#jp-mainmenu-run .lm-Menu-item").filter(
        has=page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^\s*Run All Cells\s*$"))
    ).click()
    deadline = time.monotonic() + RUN_ALL_TIMEOUT
    while not (re.search(r"\[\d+\]", last_prompt.inner_text())
               and _kernel_idle(page).count() == 1):
        assert time.monotonic() < deadline, "Run All Cells did not finish"
        page.wait_for_timeout(500)
    live = notebook.locator(".widget-interact")
    expect(live).to_have_count(1, timeout=WAIT)  # the live explorer
    expect(live.locator(".widget-output img")).to_have_count(1, timeout=WAIT)
    expect(notebook.locator(NOTE)).to_have_count(1)
    assert notebook.locator(FALLBACK).count() == 0  # the picture gave way to the explorer

    saved = lab["root"] / "run.ipynb"
    before = saved.read_bytes()
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 60
    while saved.read_bytes() == before:
        assert time.monotonic() < deadline, "the notebook was not saved"
        page.wait_for_timeout(250)
    stored = json.loads(_settled(saved))
    outputs = [o for c in stored["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert any("minitape-explorer-note" in "".join(o.get("data", {}).get("text/html", ""))
               for o in outputs), "the note was not saved"

    _shut_down_kernels(lab)
    page.goto("about:blank")
    notebook = _open(page, lab, "run.ipynb")  # reopened: a new kernel, no widget models
    note = notebook.locator(NOTE)
    expect(note).to_have_count(1, timeout=WAIT)
    expect(note).to_be_visible()
    expect(note).to_contain_text("Run the notebook to use this explorer")
    _assert_nothing_broken(page, notebook)  # while the kernel starts: no "Loading widget..."
    expect(_kernel_idle(page)).to_have_count(1, timeout=WAIT)  # the kernel connected
    page.wait_for_timeout(5000)  # the widget manager gives up on a model after 2 s
    _assert_nothing_broken(page, notebook)  # no "Error displaying widget: model not found"
    assert notebook.locator(".widget-interact").count() == 0
