"""Every launch link of the course, from one source: pyproject.toml's name,
version and `[project.urls] Repository`, and RELEASE.sha256.

It writes three things, and `--check` finds any that differ:

* the **Colab cell**, the first code cell of every notebook: a Colab form
  (`#@title`, folded away on Colab and in JupyterLab). On Colab it installs
  the one wheel RELEASE.sha256 names (tools/release.py writes it at a release)
  and nothing else (`--no-deps`: Colab has NumPy, matplotlib and ipywidgets),
  from PyPI or else from the repository's GitHub release of that version;
  pip checks the wheel's SHA-256 (`--require-hashes`) and refuses any other
  file, and never builds one (`--only-binary=:all:`). If both fail it stops
  "Run all" with one short message: what failed at each source (refused, no
  connection, or pip's last error line) and a path that can work (a new
  runtime when a server was out of reach, else Binder; and your own machine).
  Anywhere else it does nothing;
* the **badge cell**, the first cell of every notebook (Markdown): "Open in
  Colab" and "launch Binder" for that notebook;
* the README's badges, between the two `launch badges` comment lines;
* the **links to the repository's pages** in the notebooks' Markdown: every
  link to a file outside notebooks/ (`../docs/engine.md`, or a link already
  written as a GitHub URL of a file of this repository) becomes
  `<Repository>/blob/main/<path>`. JupyterLab started in notebooks/, the
  JupyterLite site and Colab can open no `..` (tests/test_notebook_links.py
  resolves every link as each of them does); a GitHub page opens in all three.

The JupyterLite site (tools/site.py) replaces the Colab cell with
`lite_cell_source()`, which installs the wheel bundled in the site.

    python -m tools.colab            # write the cells and the README's badges
    python -m tools.colab --check    # exit 1 if a notebook or the README differs
"""
import argparse
import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
README = ROOT / "README.md"
PYPROJECT = ROOT / "pyproject.toml"
PINNED = ROOT / "RELEASE.sha256"  # the wheel the Colab cell installs (tools/release.py)
# The branch the links to the repository's pages open. The Colab badges open the
# notebooks of the release whose wheel the Colab cell installs (tag v<version>), so a
# notebook never needs an engine newer than the one it installs; Binder builds HEAD.
BRANCH = "main"
BADGE_CELL_ID = "launch-badges"
# The Colab cell's metadata: a form (Colab shows its #@title line and folds the code away)
# whose source JupyterLab shows folded too.
CODE_CELL_METADATA = {"cellView": "form", "jupyter": {"source_hidden": True}}
README_BEGIN = "<!-- launch badges: written by `python -m tools.colab` from pyproject.toml -->"
README_END = "<!-- end of launch badges -->"

TEMPLATE = '''\
#@title Install minitape {version} (on Colab only: elsewhere this cell does nothing)
# pip installs one file, the wheel this project built, and refuses any other (SHA256);
# --no-deps: Colab has NumPy, matplotlib and ipywidgets.
import subprocess, sys, tempfile
if "google.colab" in sys.modules:
    SHA256 = "{sha256}"
    REPOSITORY = "{repository}"
    SOURCES = {{"PyPI": "minitape=={version}",
               f"{{REPOSITORY}} (release v{version})": "minitape @ " + REPOSITORY
               + "/releases/download/v{version}/minitape-{version}-py3-none-any.whl"}}
    BINDER = "{binder}"

    def pip_install(requirement):
        """Install the pinned wheel; None if it worked, else why not, in a few words."""
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as pinned:
            pinned.write(f"{{requirement}} --hash=sha256:{{SHA256}}\\n")
            pinned.flush()
            pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                                  "--only-binary=:all:", "--require-hashes", "-r", pinned.name],
                                 capture_output=True, text=True)
        if pip.returncode == 0:
            return None
        if "DO NOT MATCH THE HASHES" in pip.stderr:
            return "refused: the file there is not the wheel this course names"
        if "HTTP error 404" in pip.stderr or "404 Client Error" in pip.stderr:
            return "not found (HTTP 404)"
        if any(sign in pip.stderr for sign in ("NewConnectionError", "Failed to connect",
               "ConnectTimeoutError", "ProxyError", "Temporary failure in name resolution")):
            return "no connection (pip could not reach the server)"
        errors = [line.strip() for line in pip.stderr.splitlines()
                  if line.strip().startswith(("ERROR:", "\\u00d7"))]
        return (errors or ["pip failed"])[-1][:200]

    class InstallFailed(Exception):
        def _render_traceback_(self):  # IPython shows this message and no traceback
            return [str(self)]

    failed = {{}}
    for source, requirement in SOURCES.items():
        failed[source] = pip_install(requirement)
        if failed[source] is None:
            break
    else:
        offline = any(why.startswith("no connection") for why in failed.values())
        raise InstallFailed(
            "minitape {version} is not installed.\\n"
            + "".join(f"From {{source}}: {{why}}\\n" for source, why in failed.items())
            + "Next: " + ("Runtime > Disconnect and delete runtime, then run this cell again "
                          "(a new runtime may reach what this one could not)" if offline
                          else f"open the course on Binder, which builds minitape from the "
                          f"repository itself: {{BINDER}}")
            + f"; or on your own machine: clone {{REPOSITORY}} and run the README's first "
            "command.")'''

LITE_TEMPLATE = '''\
# JupyterLite (Python in your browser): install minitape {version}, bundled with this site, and
# the widgets; NumPy and matplotlib come from Pyodide. The first run downloads them (a minute).
%pip install -q {requirement} ipywidgets matplotlib'''


def project(pyproject=PYPROJECT):
    """The `[project]` table of pyproject.toml."""
    return tomllib.loads(Path(pyproject).read_text(encoding="utf-8"))["project"]


def requirement(pyproject=PYPROJECT):
    """'minitape==0.1.0': the package's name and version from pyproject.toml."""
    p = project(pyproject)
    return f"{p['name']}=={p['version']}"


def repository(pyproject=PYPROJECT):
    """`[project.urls] Repository`, without a trailing slash. Binder and Colab
    open GitHub repositories, so it must be one: https://github.com/OWNER/NAME."""
    url = project(pyproject).get("urls", {}).get("Repository", "")
    url = url.rstrip("/").removesuffix(".git")
    if not re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", url):
        raise ValueError(f"pyproject.toml: [project.urls] Repository must be "
                         f"https://github.com/OWNER/NAME, not {url!r}")
    return url


def binder_url(repo, notebook=None):
    """mybinder.org building the repository's HEAD, JupyterLab open in notebooks/
    (or on one notebook)."""
    path = "notebooks" + (f"/{notebook}" if notebook else "")
    return f"https://mybinder.org/v2/gh/{repo.removeprefix('https://github.com/')}/HEAD" \
           f"?urlpath=lab/tree/{path}"


def colab_url(repo, notebook, version=None):
    """Colab opening `notebook` as released at tag v<version> (the pinned wheel's)."""
    tag = f"v{version or pinned()[0]}"
    return f"https://colab.research.google.com/github/" \
           f"{repo.removeprefix('https://github.com/')}/blob/{tag}/notebooks/{notebook}"


def badges(notebook=None, pyproject=PYPROJECT):
    """The Markdown badges: Colab (for one notebook; the README's opens the
    first) and Binder (that notebook, or the notebooks folder)."""
    repo = repository(pyproject)
    first = notebook or sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))[0]
    return (f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
            f"({colab_url(repo, first)}) "
            f"[![Binder](https://mybinder.org/badge_logo.svg)]({binder_url(repo, notebook)})")


def badge_cell_source(notebook, pyproject=PYPROJECT):
    """The first cell of a notebook: its launch badges."""
    return badges(notebook, pyproject)


def release_wheel_url(repo, version):
    """The wheel attached to the GitHub release of tag v<version> (the release
    workflow attaches it): the Colab cell's second source, as the cell spells it."""
    return f"{repo}/releases/download/v{version}/minitape-{version}-py3-none-any.whl"


def pinned(path=None):
    """(version, sha256) of the wheel the Colab cell installs: RELEASE.sha256,
    written by `python -m tools.release pin` at a release."""
    path = Path(path or PINNED)
    found = re.fullmatch(r"([0-9a-f]{64})  minitape-(\S+)-py3-none-any\.whl\n",
                         path.read_text(encoding="utf-8"))
    if not found:
        raise ValueError(f"{path}: one line, '<sha256>  minitape-<version>-py3-none-any.whl'")
    return found.group(2), found.group(1)


def cell_source(pyproject=PYPROJECT, repo=None, pin=None):
    """The exact text of the first code cell of every notebook: it installs the
    wheel RELEASE.sha256 names (`pin`: another (version, sha256)). `repo`
    replaces the repository URL (tests point it at a local server)."""
    version, digest = pin or pinned()
    repo = repository(pyproject) if repo is None else repo
    return TEMPLATE.format(version=version, sha256=digest, repository=repo,
                           binder=binder_url(repo))


def lite_cell_source(pyproject=PYPROJECT):
    """The first code cell of the notebooks in the JupyterLite site."""
    req = requirement(pyproject)
    return LITE_TEMPLATE.format(requirement=req, version=req.split("==")[1])


def first_code_cell(nb):
    """The first code cell of a notebook (a dict as read by json or nbformat)."""
    return next(c for c in nb["cells"] if c["cell_type"] == "code")


def first_markdown_cell(nb):
    return next(c for c in nb["cells"] if c["cell_type"] == "markdown")


def source_text(cell):
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


# A Markdown link's target: ](target) or ](target "title").
LINK = re.compile(r"\]\(([^()\s]+)((?:\s+\"[^\"]*\")?)\)")
GITHUB_FILE = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/blob/[\w.-]+/([^#?]+)(#.*)?")


def project_url(path, fragment="", pyproject=PYPROJECT):
    """The GitHub page of the file at `path` (relative to the repository's root)."""
    return f"{repository(pyproject)}/blob/{BRANCH}/{path}{fragment}"


def with_project_links(text, pyproject=PYPROJECT):
    """`text` (a notebook's Markdown) with every link to a file of this
    repository outside notebooks/ written as that file's GitHub page."""
    def rewrite(match):
        target, title = match.groups()
        if target.startswith("../"):
            path, _, fragment = target.partition("#")
            resolved = (NOTEBOOKS / path).resolve()
            if resolved.is_relative_to(ROOT) and resolved.exists():
                relative = resolved.relative_to(ROOT).as_posix()
                return f"]({project_url(relative, '#' + fragment if fragment else '', pyproject)}{title})"
        github = GITHUB_FILE.fullmatch(target)
        if github and (ROOT / github.group(1)).exists() and \
                not target.startswith(repository(pyproject) + "/"):  # a fork's old URL
            return f"]({project_url(github.group(1), github.group(2) or '', pyproject)}{title})"
        return match.group(0)
    return LINK.sub(rewrite, text)


def set_cells(nb, notebook, source=None, pyproject=PYPROJECT):
    """Put the badge cell first and the Colab cell as the first code cell of
    `nb` (a dict, changed in place); nothing else changes. True if it changed."""
    source = cell_source(pyproject) if source is None else source
    badge = badge_cell_source(notebook, pyproject)
    code = first_code_cell(nb)
    # Sources as the notebook keeps them: a list of lines (JSON) or one str (nbformat).
    as_lines = isinstance(code["source"], list)

    def set_source(cell, text):
        cell["source"] = text.splitlines(keepends=True) if as_lines else text

    changed = False
    first = nb["cells"][0] if nb["cells"] else None
    if first is not None and first.get("cell_type") == "markdown" and \
            source_text(first).startswith("[![Open In Colab]"):
        if first.get("id") not in (None, BADGE_CELL_ID):  # renumbered by an older strip
            first["id"] = BADGE_CELL_ID
            changed = True
    elif first is None or first.get("id") != BADGE_CELL_ID:
        cell = {"cell_type": "markdown", "metadata": {}, "source": []}
        if nb.get("nbformat", 4) * 100 + nb.get("nbformat_minor", 0) >= 405:
            cell["id"] = BADGE_CELL_ID
        nb["cells"].insert(0, cell)
        first, changed = cell, True
    if source_text(first) != badge:
        set_source(first, badge)
        changed = True
    if source_text(code) != source:
        set_source(code, source)
        changed = True
    for cell in nb["cells"][1:]:
        if cell.get("cell_type") == "markdown":
            text = source_text(cell)
            linked = with_project_links(text, pyproject)
            if linked != text:
                set_source(cell, linked)
                changed = True
    metadata = code.setdefault("metadata", {})
    if any(metadata.get(key) != value for key, value in CODE_CELL_METADATA.items()):
        metadata.update(CODE_CELL_METADATA)
        changed = True
    return changed


def write_cell(path, source=None):
    """Write the badge cell and the Colab cell into the notebook at `path`;
    nothing else in the file changes. Returns True if the file changed."""
    path = Path(path)
    nb = json.loads(path.read_text(encoding="utf-8"))
    if not set_cells(nb, path.name, source):
        return False
    # The same layout as nbformat.write (and nbstripout): indent 1, trailing newline.
    path.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    return True


def readme_with_badges(text, pyproject=PYPROJECT):
    """`text` (the README) with the lines between the two markers replaced."""
    pattern = re.compile(re.escape(README_BEGIN) + r"\n.*?" + re.escape(README_END), re.S)
    if not pattern.search(text):
        raise ValueError(f"README.md has no {README_BEGIN!r} ... {README_END!r} block")
    block = f"{README_BEGIN}\n{badges(None, pyproject)}\n{README_END}"
    return pattern.sub(lambda m: block, text)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to update (default: notebooks/*.ipynb)")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a notebook or the README differs")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    source = cell_source()
    wrong = []
    for path in paths:
        if args.check:
            nb = json.loads(path.read_text(encoding="utf-8"))
            if set_cells(nb, path.name, source):
                wrong.append(path)
        elif write_cell(path, source):
            print(f"updated {path}")
    readme = README.read_text(encoding="utf-8")
    if readme_with_badges(readme) != readme:
        if args.check:
            wrong.append(README)
        else:
            README.write_text(readme_with_badges(readme), encoding="utf-8")
            print(f"updated {README}")
    for path in wrong:
        print(f"{path}: its badges or Colab cell are not the generated ones (python -m tools.colab)")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
