"""Every link in a notebook's Markdown opens its target where students open
the course, each link resolved the way each front end resolves it:

- JupyterLab started as the README says, `jupyter lab notebooks/`: the
  server's root is notebooks/, so a relative link must stay inside it (a
  `../` link is a 404) and name a file there;
- the JupyterLite site (tools/site.py): relative to the site's files/ folder,
  which holds what `site.contents()` puts there;
- Colab: relative to the notebook's own Colab URL
  (colab.research.google.com/github/OWNER/NAME/blob/main/notebooks/X.ipynb),
  where only another notebook of the repository opens.

An absolute link opens in a new tab in all three; one to this repository's
GitHub pages (tools/colab.py writes them from `[project.urls] Repository`)
must name a file of the checkout, and a heading of it for a `#fragment`.
These need the network (the README says what a student sees offline).
"""
import json
import posixpath
import re
from pathlib import Path
from urllib.parse import urljoin, urlparse

import pytest

from tools import colab, site
from test_docs_links import anchors

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
REPOSITORY = colab.repository()
# Markdown links and images, and HTML links and images, in a Markdown cell.
LINKS = re.compile(r"\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)|(?:href|src)=\"([^\"]+)\"")


def links(nb):
    """Every link target in the notebook's Markdown cells (the badge cell too)."""
    found = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            text = re.sub(r"`[^`\n]*`", "", colab.source_text(cell))
            found += [a or b for a, b in LINKS.findall(text)]
    return found


def is_absolute(target):
    return bool(urlparse(target).scheme)


def project_page(target):
    """Why an absolute link to this repository's pages would not open, or None."""
    prefix = f"{REPOSITORY}/blob/{colab.BRANCH}/"
    if not target.startswith(prefix):
        return None if not target.startswith(REPOSITORY) else f"{target}: not a file's page"
    path, _, fragment = target[len(prefix):].partition("#")
    if not (ROOT / path).is_file():
        return f"{target}: the repository has no file {path}"
    if fragment and path.endswith(".md") and fragment not in anchors(ROOT / path):
        return f"{target}: {path} has no heading with that anchor"
    return None


def in_jupyterlab(notebook, target):
    """Why the link would not open from `jupyter lab notebooks/`, or None."""
    if is_absolute(target):
        return project_page(target)
    path, _, fragment = target.partition("#")
    if not path:
        return None  # an anchor in this notebook
    served = posixpath.normpath(posixpath.join(posixpath.dirname(notebook), path))
    if served.startswith("../") or served == "..":
        return f"{target}: outside the server's root notebooks/ (404)"
    if not (ROOT / "notebooks" / served).is_file():
        return f"{target}: notebooks/{served} does not exist (404)"
    return None


def in_jupyterlite(notebook, target):
    """Why the link would not open in the JupyterLite site, or None."""
    if is_absolute(target):
        return project_page(target)
    path, _, _ = target.partition("#")
    if not path:
        return None
    served = posixpath.normpath(posixpath.join(posixpath.dirname(notebook), path))
    if served not in {p.name for p in site.contents()}:
        return f"{target}: the site's files/ has no {served}"
    return None


def in_colab(notebook, target):
    """Why the link would not open in Colab, or None."""
    page = colab.colab_url(REPOSITORY, notebook)
    url = urljoin(page, target)
    if url.split("#")[0] == page:
        return None  # an anchor in this notebook
    colab_prefix = colab.colab_url(REPOSITORY, "")
    if url.startswith(colab_prefix) or not is_absolute(target):
        name = url.split("#")[0].removeprefix(colab_prefix)
        if not url.startswith(colab_prefix) or "/" in name or not name.endswith(".ipynb") \
                or not (ROOT / "notebooks" / name).is_file():
            return f"{target}: Colab would open {url}, which is no notebook of the course"
        return None
    return project_page(url)  # opens in a new tab


FRONT_ENDS = {"JupyterLab": in_jupyterlab, "JupyterLite": in_jupyterlite, "Colab": in_colab}


def dead_links(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [f"{front}: {why}" for target in links(nb)
            for front, opens in FRONT_ENDS.items()
            if (why := opens(path.name, target))]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_link_opens_in_jupyterlab_jupyterlite_and_colab(path):
    assert dead_links(path) == [], "python -m tools.colab writes ../ links as GitHub pages"


def test_the_notebooks_link_to_the_pages_they_name():
    targets = {t for p in NOTEBOOKS for t in links(json.loads(p.read_text(encoding="utf-8")))}
    assert colab.project_url("docs/differences.md") in targets
    assert "11_gradient_as_a_program.ipynb" in targets  # a link between notebooks


@pytest.mark.parametrize("target, dead", [
    ("../README.md", {"JupyterLab", "JupyterLite", "Colab"}),
    ("../docs/engine.md", {"JupyterLab", "JupyterLite", "Colab"}),
    ("08_hessian.ipynb", set()),
    ("08_hessian.ipynb#1.-The-Hessian", set()),
    ("no_such.ipynb", {"JupyterLab", "JupyterLite", "Colab"}),
    ("#a-heading", set()),
    ("figures/x.png", {"JupyterLab", "JupyterLite", "Colab"}),
    (f"{REPOSITORY}/blob/main/docs/engine.md", set()),
    (f"{REPOSITORY}/blob/main/docs/no_such.md", {"JupyterLab", "JupyterLite", "Colab"}),
    (f"{REPOSITORY}/blob/main/docs/differences.md#no-such-heading",
     {"JupyterLab", "JupyterLite", "Colab"}),
    ("https://www.tensorflow.org/guide/advanced_autodiff", set()),
])
def test_each_front_end_resolves_links_as_it_would(target, dead):
    assert {front for front, opens in FRONT_ENDS.items()
            if opens("07_jacobians.ipynb", target)} == dead


def test_tools_colab_writes_a_dotdot_link_as_the_files_github_page():
    text = "See [the engine](../docs/engine.md#the-reading-order) and [09](09_batch_jacobians.ipynb)."
    assert colab.with_project_links(text) == (
        f"See [the engine]({REPOSITORY}/blob/main/docs/engine.md#the-reading-order) and "
        "[09](09_batch_jacobians.ipynb).")
    fork = "[a page](https://github.com/old-owner/course/blob/main/docs/engine.md)"
    assert colab.with_project_links(fork) == f"[a page]({REPOSITORY}/blob/main/docs/engine.md)"
    elsewhere = "[tf](https://github.com/tensorflow/tensorflow/blob/master/x/y.py)"
    assert colab.with_project_links(elsewhere) == elsewhere
