"""The course as a static JupyterLite site: Python in the browser, no server.

    pip install ".[site]" && python -m tools.site           # writes _site/
    python -m tools.site --output public                    # elsewhere

The site holds JupyterLite with the Pyodide kernel and the widget manager,
the minitape wheel built from this checkout (under pypi/, the kernel's first
package index), and the notebooks (under files/), each with its Colab cell
replaced by `tools.colab.lite_cell_source()`, which installs that wheel with
`%pip`. NumPy and matplotlib come from Pyodide's own distribution (a CDN)
when a student opens a notebook. Serve the folder from any static host
(docs/site.md).
"""
import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tools import colab, package_source

ROOT = colab.ROOT
OUTPUT = ROOT / "_site"
WIDGETS_EXTENSION = "@jupyter-widgets/jupyterlab-manager"
KERNEL_SETTINGS = "@jupyterlite/pyodide-kernel-extension:kernel"


def build_wheel(outdir):
    """The minitape wheel of this checkout, built into `outdir` (from a copy of
    its sources, so that nothing is written in the checkout)."""
    with tempfile.TemporaryDirectory(prefix="minitape-source-") as source:
        package_source.copy(source)
        subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(outdir), source],
                       check=True, capture_output=True)
    (wheel,) = Path(outdir).glob("minitape-*.whl")
    return wheel


def contents():
    """The files the site serves to the kernel and the file browser (its
    files/ folder, flat): the notebooks."""
    return sorted(colab.NOTEBOOKS.glob("*.ipynb"))


def site_notebook(path):
    """The notebook at `path` as the site serves it: its Colab cell replaced by
    the JupyterLite install cell, every other cell as stored."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    cell = colab.first_code_cell(nb)
    cell["source"] = colab.lite_cell_source().splitlines(keepends=True)
    return nb


def build(output=OUTPUT):
    """Build the site into `output` (replaced if it exists); returns its path."""
    output = Path(output).resolve()
    with tempfile.TemporaryDirectory(prefix="minitape-site-") as tmp:
        tmp = Path(tmp)
        wheel = build_wheel(tmp / "dist")
        contents_dir = tmp / "contents"
        contents_dir.mkdir()
        for path in contents():
            (contents_dir / path.name).write_text(
                json.dumps(site_notebook(path), indent=1, ensure_ascii=False) + "\n",
                encoding="utf-8")
        lite_dir = tmp / "lite"  # no jupyter_lite_config.json: the defaults
        lite_dir.mkdir()
        if output.exists():
            shutil.rmtree(output)
        result = subprocess.run(
            [sys.executable, "-m", "jupyter", "lite", "build", "--lite-dir", str(lite_dir),
             "--contents", str(contents_dir), "--piplite-wheels", str(wheel),
             "--output-dir", str(output)],
            cwd=lite_dir, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError("jupyter lite build failed:\n" + result.stdout[-3000:]
                               + result.stderr[-3000:])
    return output


def check(output=OUTPUT):
    """What a built site must hold; returns a list of what is missing."""
    output = Path(output)
    problems = []
    version = colab.project()["version"]
    if not (output / "pypi" / f"minitape-{version}-py3-none-any.whl").exists():
        problems.append(f"pypi/minitape-{version}-py3-none-any.whl is missing")
    names = sorted(p.name for p in colab.NOTEBOOKS.glob("*.ipynb"))
    if sorted(p.name for p in (output / "files").glob("*.ipynb")) != names:
        problems.append("files/ does not hold exactly the notebooks")
    config = json.loads((output / "jupyter-lite.json").read_text(encoding="utf-8"))
    data = config["jupyter-config-data"]
    urls = data.get("litePluginSettings", {}).get(KERNEL_SETTINGS, {}).get("pipliteUrls", [])
    if not urls or not urls[0].startswith("./pypi/all.json"):
        problems.append("the Pyodide kernel does not look in ./pypi/all.json first")
    extensions = {e["name"] for e in data.get("federated_extensions", [])}
    for name in ("@jupyterlite/pyodide-kernel-extension", WIDGETS_EXTENSION):
        if name not in extensions:
            problems.append(f"the extension {name} is missing")
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=OUTPUT,
                        help="the folder to write (default: _site/ in the checkout)")
    args = parser.parse_args(argv)
    output = build(args.output)
    problems = check(output)
    for problem in problems:
        print(f"{output}: {problem}", file=sys.stderr)
    if not problems:
        print(f"built {output}: serve this folder from any static host "
              f"(try: python -m http.server -d {output})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
