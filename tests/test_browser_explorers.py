"""Explorers render when a notebook is opened, before any cell runs (real browser).

JupyterLab on 127.0.0.1 in Debian's Chromium (as in test_browser.py) opens two
copies of notebooks/07_jacobians.ipynb as stored, and runs nothing:

- a trusted copy: the sigmoid explorer is drawn from the saved widget state
  (the `delta` slider at 0.00 and the plot inside the explorer's Output);
- an untrusted copy (a notebook someone downloaded): JupyterLab does not run
  widget views for it, so it shows the static fallback picture instead of
  `interactive(children=(FloatSlider(...`.

Needs the stored widget state that `python -m tools.rebuild_notebooks` writes.
Skipped without chromium or playwright, except under CI (`CI` set).
"""
import json
import os
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

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "07_jacobians.ipynb"
CHROMIUM = "/usr/bin/chromium"
FALLBACK = ".minitape-explorer-fallback"
WAIT = 60_000  # ms: the page, the kernel and the widget manager start on a busy machine


def _needs(reason):
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(f"{reason} (CI is set, so the browser test must run)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def lab():
    """JupyterLab serving trusted.ipynb and untrusted.ipynb (copies of 07)."""
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
        subprocess.run([sys.executable, "-m", "jupyter", "trust", str(root / "trusted.ipynb")],
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
            yield {"url": url, "token": token}
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

    page.goto(f"{lab['url']}lab/tree/{name}?token={lab['token']}")
    notebook = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook")
    expect(notebook).to_be_visible(timeout=WAIT)
    return notebook


def test_trusted_notebook_draws_the_explorer_from_saved_state(lab):
    _in_browser(_check_trusted, lab)


def test_untrusted_notebook_shows_the_static_fallback(lab):
    _in_browser(_check_untrusted, lab)


def _check_trusted(page, lab):
    from playwright.sync_api import expect

    notebook = _open(page, lab, "trusted.ipynb")
    label = page.locator(".widget-label", has_text=re.compile(r"^\s*delta\s*$"))
    slider = notebook.locator(".widget-slider").filter(has=label)
    expect(slider).to_have_count(1, timeout=WAIT)
    expect(slider.locator(".widget-readout")).to_have_text(re.compile(r"^\s*0(\.0+)?\s*$"))
    explorer = notebook.locator(".widget-interact").filter(
        has=page.locator(".widget-slider").filter(has=label))
    expect(explorer.locator(".widget-output img")).to_have_count(1, timeout=WAIT)
    assert notebook.locator(FALLBACK).count() == 0  # the live widget, not the picture
    assert "Error displaying widget" not in notebook.inner_text()


def _check_untrusted(page, lab):
    from playwright.sync_api import expect

    notebook = _open(page, lab, "untrusted.ipynb")
    fallback = notebook.locator(FALLBACK)
    expect(fallback).to_have_count(1, timeout=WAIT)
    expect(fallback).to_contain_text("delta = 0.0")
    expect(fallback.locator("img")).to_have_count(1)
    assert "interactive(children=" not in notebook.inner_text()
