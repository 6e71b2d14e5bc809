"""Real-browser check of notebook 07's explorer: JupyterLab on 127.0.0.1 driven
in Debian's Chromium by Python playwright.

The test opens a temporary copy of `notebooks/07_jacobians.ipynb` (outputs
cleared, so every prompt and plot on the page comes from this run), runs all
cells from the Run menu, moves the `delta` slider of the sigmoid explorer with
the keyboard and checks that the explorer's plot image changed and that no
cell shows an error.

Needs `/usr/bin/chromium` (Debian package `chromium`; Playwright's own browser
download is not used) and the `playwright` package. When either is missing
the test is skipped, except under CI (`CI` set), where it fails.
"""
import base64
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
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.tooling]

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
NOTEBOOK = "07_jacobians.ipynb"
SLIDER_LABEL = "delta"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
    "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
    # Only this machine: the notebooks' launch badges (images on colab.research.google.com
    # and mybinder.org) and anything else off 127.0.0.1 fail without a DNS query.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
]

SERVER_START_TIMEOUT = 60     # s, until /api/status answers
KERNEL_TIMEOUT = 60_000       # ms, until the kernel first reads "Idle"
RUN_ALL_TIMEOUT = 90          # s, until every code cell has run
REDRAW_TIMEOUT = 30           # s, until the plot changed after the slider moved
ARROW_PRESSES = 4             # delta: 0.0 -> 2.0 with the explorer's step 0.5

STDERR_OUTPUT = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
ERROR_TEXT = re.compile(r"Traceback|\b\w*(Error|Exception)\b")


def _under_ci():
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _missing_or_fail(reason):
    """Skip locally; under CI a missing browser is a failure."""
    if _under_ci():
        pytest.fail(f"{reason} (CI is set, so the browser test must run)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def chromium_path():
    """Checked before JupyterLab starts, so a skip costs nothing."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _missing_or_fail("the playwright package is not installed (pip install playwright)")
    if not os.access(CHROMIUM, os.X_OK):
        _missing_or_fail(f"{CHROMIUM} is missing (apt-get install chromium)")
    return CHROMIUM


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _clear_outputs(path):
    """Clear outputs and execution counts in the temporary copy: every prompt
    number and plot the test then sees comes from its own run."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    nb.get("metadata", {}).pop("widgets", None)
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")


def _write_settings(settings_dir):
    """JupyterLab settings for the test: render every cell (no windowing, so
    all cells are in the DOM) and never fetch news or look for updates."""
    settings = {
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings":
            {"windowingMode": "none"},
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
            {"fetchNews": "false", "checkForUpdates": False},
    }
    for name, values in settings.items():
        path = settings_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")


def _stop(proc):
    if proc.poll() is not None:
        return
    proc.terminate()  # jupyter server shuts its kernels down on SIGTERM
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the server and its kernels
        proc.wait(timeout=10)


def _log_tail(log_path, lines=40):
    try:
        return "\n".join(log_path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no server log)"


@pytest.fixture(scope="session")
def jupyter_lab(chromium_path):
    """JupyterLab on 127.0.0.1 serving a temporary copy of notebooks/.

    Yields a dict with url, token, root (the copy) and log (the server log).
    Isolated from the user's Jupyter config, settings, workspaces and data
    dirs; never contacts the internet on its own (no news, no update check,
    read-only extension manager). Always terminated at the end.
    """
    if not (NOTEBOOKS / NOTEBOOK).exists():
        pytest.fail(f"{NOTEBOOKS / NOTEBOOK} does not exist")
    with tempfile.TemporaryDirectory(prefix="minitape-lab-") as tmp:
        tmp = Path(tmp)
        root = tmp / "notebooks"
        shutil.copytree(NOTEBOOKS, root,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        _clear_outputs(root / NOTEBOOK)
        settings = tmp / "lab-settings"
        _write_settings(settings)
        for name in ("config", "data", "runtime", "ipython", "workspaces"):
            (tmp / name).mkdir()

        port = _free_port()
        token = secrets.token_hex(24)
        cmd = [
            sys.executable, "-m", "jupyter", "lab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            "--ServerApp.terminals_enabled=False",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
            f"--LabApp.user_settings_dir={settings}",
            f"--LabApp.workspaces_dir={tmp / 'workspaces'}",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")
        env = dict(os.environ,
                   JUPYTER_CONFIG_DIR=str(tmp / "config"),
                   JUPYTER_DATA_DIR=str(tmp / "data"),
                   JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
                   IPYTHONDIR=str(tmp / "ipython"),
                   PYTHONUNBUFFERED="1")
        # The server's own scripts (jupyter-lab) sit next to this interpreter.
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        log = tmp / "jupyter-lab.log"
        with open(log, "wb") as log_file:
            proc = subprocess.Popen(cmd, cwd=root, env=env, stdin=subprocess.DEVNULL,
                                    stdout=log_file, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        try:
            url = f"http://127.0.0.1:{port}/"
            # No proxy for loopback, whatever the environment says.
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            request = urllib.request.Request(url + "api/status",
                                             headers={"Authorization": f"token {token}"})
            deadline = time.monotonic() + SERVER_START_TIMEOUT
            while True:
                if proc.poll() is not None:
                    pytest.fail(f"jupyter lab exited with {proc.returncode}:\n{_log_tail(log)}")
                try:
                    with opener.open(request, timeout=2) as response:
                        if response.status == 200:
                            break
                except (urllib.error.URLError, OSError):
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(f"jupyter lab did not answer within {SERVER_START_TIMEOUT} s:\n"
                                f"{_log_tail(log)}")
                time.sleep(0.25)
            yield {"url": url, "token": token, "root": root, "log": log}
        finally:
            _stop(proc)


@pytest.fixture(scope="session")
def browser_context(chromium_path):
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="minitape-chromium-") as profile:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                profile,  # a fresh --user-data-dir
                executable_path=chromium_path,
                headless=True,
                args=CHROMIUM_ARGS,
                viewport={"width": 1400, "height": 1000},
            )
            try:
                yield context
            finally:
                context.close()


def _kernel_status(page):
    """The status bar's kernel item, e.g. "Python 3 (ipykernel) | Idle"."""
    return page.locator(".jp-StatusBar-Widget").get_by_text(
        re.compile(r"\|\s*(Idle|Busy|Starting|Connecting|Restarting|Unknown|Initializing"
                   r"|Dead|Disconnected|Terminating|Autorestarting)\s*$"))


def _errors_on_page(page):
    return [t for t in page.locator(STDERR_OUTPUT).all_inner_texts() if ERROR_TEXT.search(t)]


def _wait_until(check, timeout, what, page):
    """Poll `check()` (truthy = done) every 0.2 s; fail early when a cell
    shows an error."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        errors = _errors_on_page(page)
        if errors:
            pytest.fail(f"a cell shows an error while waiting for {what}:\n" + errors[0])
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        page.wait_for_timeout(200)


def _ran(cell):
    """Whether a code cell ran in this session: its prompt shows a number. A
    folded cell (docs/notebooks.md) has no prompt on the page, only its first
    line: a check cell ran if it shows its "✓ " line; the Colab install cell
    does nothing outside Colab and shows nothing."""
    placeholder = cell.locator(".jp-InputPlaceholder")
    if placeholder.count():
        if placeholder.inner_text().strip().startswith("#@title Install minitape"):
            return True
        return "✓ " in cell.locator(".jp-OutputArea").inner_text()
    return bool(re.search(r"\[\d+\]", cell.locator(".jp-InputPrompt").inner_text()))


def _image_src(output):
    """The src of the explorer's plot (one <img> in its Output), or None."""
    images = output.locator("img")
    if images.count() != 1:
        return None
    return images.first.get_attribute("src")


def _png_bytes(src):
    assert src.startswith("data:image/png;base64,"), src[:60]
    return base64.b64decode(src.split(",", 1)[1])


def test_sigmoid_explorer_slider_redraws_plot(browser_context, jupyter_lab, tmp_path):
    page = browser_context.new_page()
    page.set_default_timeout(30_000)
    try:
        _run_explorer(page, jupyter_lab)
    except BaseException:
        shot = tmp_path / "jupyterlab-failure.png"
        try:
            page.screenshot(path=str(shot), full_page=True)
            print(f"screenshot of the failure: {shot}")
        except Exception as exc:  # the page may be gone
            print(f"no screenshot: {exc}")
        print("jupyter lab log (tail):\n" + _log_tail(jupyter_lab["log"]))
        raise
    finally:
        page.close()


def _run_explorer(page, lab):
    from playwright.sync_api import expect

    page.goto(f"{lab['url']}lab/tree/{NOTEBOOK}?token={lab['token']}")
    notebook = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook")
    expect(notebook).to_be_visible(timeout=KERNEL_TIMEOUT)
    status = _kernel_status(page)
    expect(status).to_have_text(re.compile(r"\|\s*Idle\s*$"), timeout=KERNEL_TIMEOUT)

    code_cells = notebook.locator(".jp-CodeCell")
    n_code = code_cells.count()
    assert n_code > 0, "no code cells rendered"
    last_prompt = code_cells.nth(n_code - 1).locator(".jp-InputPrompt")

    # Run -> Run All Cells, as a learner would.
    notebook.click(position={"x": 5, "y": 5})  # make the notebook the active widget
    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^\s*Run\s*$")).click()
    page.locator("#jp-mainmenu-run .lm-Menu-item").filter(
        has=page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^\s*Run All Cells\s*$"))
    ).click()

    # Cells run in order, so the last one gets its number last; then Idle.
    _wait_until(lambda: re.search(r"\[\d+\]", last_prompt.inner_text())
                and status.inner_text().rstrip().endswith("Idle"),
                RUN_ALL_TIMEOUT, "Run All Cells to finish", page)
    unrun = [i for i in range(n_code) if not _ran(code_cells.nth(i))]
    assert not unrun, f"code cells {unrun} did not run"

    # The sigmoid explorer: an ipywidgets slider labelled `delta` and the
    # Output (with the plot) of the same `interactive`.
    label = re.compile(rf"^\s*{re.escape(SLIDER_LABEL)}\s*$")
    slider = page.locator(".widget-slider").filter(
        has=page.locator(".widget-label", has_text=label))
    expect(slider).to_have_count(1, timeout=15_000)
    explorer = page.locator(".widget-interact").filter(has=slider)
    expect(explorer).to_have_count(1)
    output = explorer.locator(".widget-output")
    before = _wait_until(lambda: _image_src(output), REDRAW_TIMEOUT,
                         "the explorer's first plot", page)
    readout = slider.locator(".widget-readout")
    value_before = readout.inner_text().strip()

    # Move the slider with the keyboard (noUiSlider in ipywidgets 8, jQuery UI in 7).
    handle = slider.locator(".noUi-handle, .ui-slider-handle").first
    handle.scroll_into_view_if_needed()
    handle.focus()
    for _ in range(ARROW_PRESSES):
        handle.press("ArrowRight")
    expect(readout).not_to_have_text(value_before)
    value_after = readout.inner_text().strip()

    after = _wait_until(
        lambda: status.inner_text().rstrip().endswith("Idle")
        and (src := _image_src(output)) is not None and src != before and src,
        REDRAW_TIMEOUT, f"the plot to change after moving {SLIDER_LABEL} from "
        f"{value_before} to {value_after} (the image stayed the same or went missing)", page)
    # Let the last redraw (one per arrow press) settle, then read the final plot.
    _wait_until(lambda: status.inner_text().rstrip().endswith("Idle") and _image_src(output),
                REDRAW_TIMEOUT, "the kernel to be idle after the redraw", page)
    after = _image_src(output) or after

    assert _png_bytes(after) != _png_bytes(before), (
        f"the plot did not change when delta went from {value_before} to {value_after}")
    errors = _errors_on_page(page)
    assert not errors, "a cell shows an error:\n" + "\n---\n".join(errors)
