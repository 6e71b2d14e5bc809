"""The Colab cell, run for real: Colab simulated by a fake `google.colab`
module, pip by a fresh virtual environment whose only index is a local folder
(in place of PyPI) and whose "repository" is an HTTP server on 127.0.0.1
serving the wheel of the GitHub release v<version> (in place of GitHub). The
cell pins the wheel built here, reproducibly, as a release pins it.

Checked: with the wheel on the index, the cell installs it from there and
nothing else; with a stranger's wheel of the same name and version on the
index, pip refuses it (its SHA-256) and the cell installs the release's wheel
from the repository; with neither, it stops with the short message (what
failed, what to try next) and installs nothing; with neither server reachable
(a closed port), the message says "no connection" for both and suggests a new
runtime. The venv's pip is the one Python bundles; test_colab.py feeds the
cell newer pips' output. Not checked here: PyPI and GitHub themselves, and
Colab's own runtime (its IPython shows the exception's `_render_traceback_`).
"""
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tools import colab, package_source, release

pytestmark = [pytest.mark.slow, pytest.mark.tooling]

ROOT = Path(__file__).resolve().parent.parent
VERSION = colab.project()["version"]
WHEEL = release.wheel_name(VERSION)
RELEASE_PATH = f"/a-teacher/course/releases/download/v{VERSION}/{WHEEL}"

RUNNER = '''\
import sys, types
sys.modules["google.colab"] = types.ModuleType("google.colab")  # what the cell looks for
source = open(sys.argv[1], encoding="utf-8").read()
try:
    exec(compile(source, "<colab cell>", "exec"), {})
except Exception as error:
    print("\\n".join(error._render_traceback_()))  # what IPython would show
    sys.exit(3)
'''


def _strangers_wheel(tmp):
    """A wheel of the same name and version that this project did not build."""
    source = package_source.copy(tmp / "stranger-source")
    init = source / "minitape" / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + "\nprint('not the course')\n",
                    encoding="utf-8")
    dist = tmp / "stranger"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist),
                    str(source)], capture_output=True, check=True)
    return dist / WHEEL


class _Server:
    """Serves one folder on 127.0.0.1 and records the paths asked for."""

    def __init__(self, folder):
        requests = self.requests = []

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=str(folder), **kwargs)

            def do_GET(self):
                requests.append(self.path)
                super().do_GET()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("colab")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PIP_") and k != "PYTHONPATH"}
    wheel = release.build(tmp / "dist", sdist=False)  # as the release builds it
    stranger = _strangers_wheel(tmp)
    assert release.sha256(stranger) != release.sha256(wheel)
    # Three indexes (PEP 503 folders): the release's wheel, a stranger's, none.
    for name, packages in (("with", [wheel]), ("stranger", [stranger]), ("without", [])):
        page = tmp / name / "minitape"
        page.mkdir(parents=True)
        for pkg in packages:
            shutil.copy(pkg, page / pkg.name)
        (page / "index.html").write_text("".join(f'<a href="{p.name}">{p.name}</a>\n'
                                                 for p in packages))
    site = tmp / "site"
    (site / RELEASE_PATH.lstrip("/")).parent.mkdir(parents=True)
    pin = (VERSION, release.sha256(wheel))
    server = _Server(site)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    cell = tmp / "cell.py"
    cell.write_text(colab.cell_source(repo=f"{server.url}/a-teacher/course", pin=pin),
                    encoding="utf-8")
    runner = tmp / "runner.py"
    runner.write_text(RUNNER, encoding="utf-8")
    python = str(venv / "bin" / "python")
    pip_env = {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_CACHE_DIR": str(tmp / "cache"),
               "PIP_DISABLE_PIP_VERSION_CHECK": "1"}

    def run(index=None, index_url=None, cell=cell):
        """Run the cell on 'Colab' with PyPI replaced by the index folder `index`
        (or the URL `index_url`)."""
        run_env = {**pip_env, "PIP_INDEX_URL": index_url or (tmp / index).as_uri()}
        return subprocess.run([python, str(runner), str(cell)], env=run_env,
                              capture_output=True, text=True, timeout=300)

    def installed():
        listed = subprocess.run([python, "-m", "pip", "list", "--format=json"], env=pip_env,
                                capture_output=True, text=True, check=True)
        return {f"{p['name']}=={p['version']}" for p in json.loads(listed.stdout)}

    def direct_url():
        """The URL pip installed minitape from, or None for an index."""
        found = list((venv / "lib").glob("python*/site-packages/minitape-*.dist-info"))
        assert len(found) == 1, found
        path = found[0] / "direct_url.json"
        return json.loads(path.read_text())["url"] if path.exists() else None

    def uninstall():
        subprocess.run([python, "-m", "pip", "uninstall", "-y", "-q", "minitape"],
                       env=pip_env, check=True)

    yield dict(run=run, installed=installed, direct_url=direct_url, uninstall=uninstall,
               server=server, site=site, url=server.url, wheel=wheel, stranger=stranger,
               pin=pin)
    server.close()


def test_the_cell_installs_the_pinned_wheel_from_the_index_or_the_release(world):
    before = world["installed"]()
    assert not any(line.startswith("minitape") for line in before)
    release_url = f"{world['url']}{RELEASE_PATH}"
    on_server = world["site"] / RELEASE_PATH.lstrip("/")

    # Neither: no release on the index, none in the repository.
    result = world["run"]("without")
    assert result.returncode == 3, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"minitape {VERSION} is not installed."
    assert lines[1] == f"From PyPI: ERROR: No matching distribution found for minitape=={VERSION}"
    assert lines[2] == f"From {world['url']}/a-teacher/course (release v{VERSION}): " \
                       "not found (HTTP 404)"
    assert lines[3].startswith("Next: ") and "mybinder.org" in lines[3]
    assert len(lines) == 4 and result.stderr == ""  # one short message, no pip log
    assert world["installed"]() == before

    # A stranger's wheel on the index and on the server: refused at both.
    shutil.copy(world["stranger"], on_server)
    result = world["run"]("stranger")
    assert result.returncode == 3, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    refused = "refused: the file there is not the wheel this course names"
    assert lines[1] == f"From PyPI: {refused}"
    assert lines[2].endswith(f"): {refused}")
    assert world["installed"]() == before  # nothing of the stranger's ran or stayed

    # The stranger's on the index, the release's wheel on the server: the release's.
    shutil.copy(world["wheel"], on_server)
    result = world["run"]("stranger")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""  # quiet when it works
    assert world["installed"]() == before | {f"minitape=={VERSION}"}  # and nothing else
    assert world["direct_url"]() == release_url

    # The release's wheel on the index: it comes from there; the server is not asked.
    world["uninstall"]()
    asked = len(world["server"].requests)
    result = world["run"]("with")
    assert result.returncode == 0, result.stdout + result.stderr
    assert world["installed"]() == before | {f"minitape=={VERSION}"}
    assert world["direct_url"]() is None  # from the index, not a URL
    assert len(world["server"].requests) == asked


def test_with_no_server_reachable_the_cell_says_no_connection(world, tmp_path):
    """PyPI and the repository both on a closed port of 127.0.0.1: pip cannot
    connect to either, and the message says so (not pip's "No matching
    distribution", which also means no release) and suggests a new runtime."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    cell = tmp_path / "offline_cell.py"
    cell.write_text(colab.cell_source(repo=f"{closed}/a-teacher/course", pin=world["pin"]),
                    encoding="utf-8")
    world["uninstall"]()  # an earlier test may have left it installed
    before = world["installed"]()
    result = world["run"](index_url=f"{closed}/simple", cell=cell)
    assert result.returncode == 3, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[1] == "From PyPI: no connection (pip could not reach the server)"
    assert lines[2] == (f"From {closed}/a-teacher/course (release v{VERSION}): "
                        "no connection (pip could not reach the server)")
    assert lines[3].startswith("Next: Runtime > Disconnect and delete runtime")
    assert len(lines) == 4 and result.stderr == ""
    assert world["installed"]() == before
