"""The JupyterLite site (tools/site.py, `pip install ".[site]"`): built from
this checkout, it holds the minitape wheel, the notebooks and a Pyodide
kernel configured to install the wheel; served on 127.0.0.1, JupyterLite
opens a notebook in Chromium.

Not checked here (docs/site.md): running a notebook in the browser. Pyodide
and its NumPy come from Pyodide's CDN when a student opens the site, and this
machine reaches no CDN, so Chromium is kept to 127.0.0.1 and the kernel never
starts. Needs the `site` extra (skipped without it, as under the README's
test command: .ci/run runs this file in its own environment) and, for the
browser part, /usr/bin/chromium and playwright (skipped without them, except
under CI, where that fails).
"""
import hashlib
import http.server
import json
import os
import threading
import zipfile
from pathlib import Path

import pytest

from tools import colab

pytest.importorskip("jupyterlite_core", reason='the site extra: pip install ".[site]"')
pytest.importorskip("jupyterlite_pyodide_kernel", reason='the site extra: pip install ".[site]"')

from tools import site  # noqa: E402  (after the skip: it needs nothing, but reads as part of it)

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
VERSION = colab.project()["version"]
NOTEBOOK = "07_jacobians.ipynb"
CHROMIUM = "/usr/bin/chromium"
LOAD_TIMEOUT = 90_000  # ms: JupyterLite loads its JavaScript and the notebook
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 # only this machine: Pyodide's CDN (and the badges' images) fail at once
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The site, built by the documented command (`python -m tools.site`)."""
    output = tmp_path_factory.mktemp("site") / "_site"
    assert site.main(["--output", str(output)]) == 0  # 1 if site.check found a problem
    return output


def test_the_site_holds_what_a_student_needs(built):
    assert site.check(built) == []


def test_the_bundled_wheel_is_this_checkout(built):
    wheel = built / "pypi" / f"minitape-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as zf:
        packaged = {n: zf.read(n) for n in zf.namelist() if n.startswith("minitape/")}
    source = {p.relative_to(ROOT).as_posix(): p.read_bytes()
              for p in (ROOT / "minitape").rglob("*.py")}
    assert {n: b for n, b in packaged.items() if n.endswith(".py")} == source
    index = json.loads((built / "pypi" / "all.json").read_text(encoding="utf-8"))
    (release,) = index["minitape"]["releases"][VERSION]
    assert release["filename"] == wheel.name
    assert release["digests"]["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()


def test_the_kernel_installs_the_wheel_from_the_site(built):
    data = json.loads((built / "jupyter-lite.json").read_text())["jupyter-config-data"]
    urls = data["litePluginSettings"][site.KERNEL_SETTINGS]["pipliteUrls"]
    assert urls[0].split("?")[0] == "./pypi/all.json"  # the site's index before PyPI
    assert data["defaultKernelName"] == "python"  # the Pyodide kernel


@pytest.mark.parametrize("path", sorted(colab.NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_each_notebook_installs_the_wheel_first_and_is_otherwise_as_stored(built, path):
    served = json.loads((built / "files" / path.name).read_text(encoding="utf-8"))
    stored = json.loads(path.read_text(encoding="utf-8"))
    first = colab.first_code_cell(served)
    assert colab.source_text(first) == colab.lite_cell_source()
    assert f"%pip install -q minitape=={VERSION} " in colab.source_text(first)
    index = served["cells"].index(first)
    assert served["cells"][:index] + served["cells"][index + 1:] == \
        stored["cells"][:index] + stored["cells"][index + 1:]


class _Server:
    def __init__(self, folder):
        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=str(folder), **kwargs)

            def log_message(self, *args):
                pass

        Handler.extensions_map = {**Handler.extensions_map, ".wasm": "application/wasm",
                                  ".js": "application/javascript", ".mjs": "text/javascript"}
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def _chromium_or_skip():
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        reason = "the playwright package is not installed"
    else:
        if os.access(CHROMIUM, os.X_OK):
            return
        reason = f"{CHROMIUM} is missing (apt-get install chromium)"
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(f"{reason} (CI is set, so the browser test must run)")
    pytest.skip(reason)


@pytest.mark.browser
def test_jupyterlite_opens_a_notebook_in_chromium(built, tmp_path):
    _chromium_or_skip()
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=LOAD_TIMEOUT)

    server = _Server(built)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                         args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(LOAD_TIMEOUT)
            try:
                page.goto(f"{server.url}/lab/index.html?path={NOTEBOOK}")
                notebook = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook")
                expect(notebook).to_be_visible()
                # The stored notebook, rendered: its title, and the site's install
                # cell folded as the Colab cell it replaces (docs/notebooks.md), so
                # the page shows its first line only; its whole text is checked
                # above, in the served file.
                stored = json.loads((colab.NOTEBOOKS / NOTEBOOK).read_text(encoding="utf-8"))
                title = colab.source_text(stored["cells"][1]).splitlines()[0].lstrip("# ")
                expect(notebook.locator(".jp-MarkdownCell h1").first).to_have_text(
                    title + "¶")
                first_line = colab.lite_cell_source().splitlines()[0]
                assert f"install minitape {VERSION}, bundled with this site" in first_line
                expect(notebook.locator(".jp-CodeCell .jp-InputPlaceholder").first
                       ).to_contain_text(first_line)
                # The notebook's kernel is the Pyodide one (it cannot start here: no CDN).
                expect(page.locator(".jp-Toolbar-kernelName").first).to_contain_text(
                    "Python (Pyodide)")
            except BaseException:
                page.screenshot(path=str(tmp_path / "jupyterlite-failure.png"))
                print(f"screenshot: {tmp_path / 'jupyterlite-failure.png'}")
                raise
            finally:
                browser.close()
    finally:
        server.close()
