"""The Colab install cell: the first code cell of every notebook, generated
from pyproject.toml's name and version (the one place the source is defined).

On Colab the cell installs exactly this release of minitape from PyPI, and
nothing else: Colab already has NumPy, matplotlib and ipywidgets. Anywhere
else it does nothing. If pip fails, the cell raises with pip's message and
what to do, so "Run all" stops there instead of failing later at the import.

    python -m tools.colab            # write the cell into every notebook
    python -m tools.colab --check    # exit 1 if a notebook's cell differs
"""
import argparse
import json
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

TEMPLATE = '''\
# On Colab only: install minitape {version} from PyPI (Colab has NumPy, matplotlib, ipywidgets).
import subprocess, sys
if "google.colab" in sys.modules:
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "{requirement}"],
                         capture_output=True, text=True)
    if pip.returncode != 0:
        raise RuntimeError("Could not install {requirement} from PyPI:\\n" + pip.stderr[-1500:]
                           + "\\nCheck that this runtime is connected to the internet, then run "
                           "this cell again (or run: !pip install {requirement}).")'''


def requirement(pyproject=ROOT / "pyproject.toml"):
    """'minitape==0.1.0': the package's name and version from pyproject.toml."""
    project = tomllib.loads(Path(pyproject).read_text(encoding="utf-8"))["project"]
    return f"{project['name']}=={project['version']}"


def cell_source(pyproject=ROOT / "pyproject.toml"):
    """The exact text of the first code cell of every notebook."""
    req = requirement(pyproject)
    return TEMPLATE.format(requirement=req, version=req.split("==")[1])


def first_code_cell(nb):
    """The first code cell of a notebook (a dict as read by json or nbformat)."""
    return next(c for c in nb["cells"] if c["cell_type"] == "code")


def source_text(cell):
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def write_cell(path, source=None):
    """Set the first code cell's source in the notebook at `path`; nothing else
    in the file changes. Returns True if the file changed."""
    source = cell_source() if source is None else source
    text = Path(path).read_text(encoding="utf-8")
    nb = json.loads(text)
    cell = first_code_cell(nb)
    if source_text(cell) == source:
        return False
    cell["source"] = source.splitlines(keepends=True)
    # The same layout as nbformat.write (and nbstripout): indent 1, trailing newline.
    Path(path).write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                          encoding="utf-8")
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to update (default: notebooks/*.ipynb)")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a notebook's first code cell differs")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    source = cell_source()
    wrong = []
    for path in paths:
        if args.check:
            nb = json.loads(path.read_text(encoding="utf-8"))
            if source_text(first_code_cell(nb)) != source:
                wrong.append(path)
        elif write_cell(path, source):
            print(f"updated {path}")
    for path in wrong:
        print(f"{path}: the first code cell is not the Colab cell (python -m tools.colab)")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
