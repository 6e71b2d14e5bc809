"""Every relative link in the README, the docs and the notebooks' Markdown leads
somewhere: the file exists, and a `#anchor` names a heading of that file (as
GitHub makes anchors). Text moves between the README and docs/, and notebooks
get renamed; a link left behind fails here."""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MARKDOWN = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
            ROOT / "minitape" / "saved_model" / "FORMAT.md"]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
LINK = re.compile(r"\]\(([^()\s]+)\)")


def _without_code(text):
    """Markdown text less its fenced code blocks and inline code."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def anchor(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    found, seen = set(), {}
    for heading in re.findall(r"^#{1,6} (.+)$", text, flags=re.M):
        name = anchor(heading)
        n = seen.get(name, 0)
        seen[name] = n + 1
        found.add(name if n == 0 else f"{name}-{n}")
    return found


def _links(path):
    """(where, text) pairs: each Markdown text of `path` and the file links are relative to."""
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text(encoding="utf-8"))
        return [("".join(c["source"]) if isinstance(c["source"], list) else c["source"])
                for c in nb["cells"] if c["cell_type"] == "markdown"]
    return [path.read_text(encoding="utf-8")]


def broken_links(path):
    wrong = []
    for text in _links(path):
        for target in LINK.findall(_without_code(text)):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            file, _, fragment = target.partition("#")
            where = (path.parent / file).resolve() if file else path
            if not where.exists():
                wrong.append(f"{target}: no such file")
            elif fragment and where.suffix == ".md" and fragment not in anchors(where):
                wrong.append(f"{target}: {where.name} has no heading with that anchor")
    return wrong


def test_anchors_are_githubs():
    assert anchor("Linear algebra (`mt.linalg`)") == "linear-algebra-mtlinalg"
    assert anchor("`mt.nn`: activations, normalisation and losses") == \
        "mtnn-activations-normalisation-and-losses"
    assert anchor("The API: TensorFlow's names with `mt` for `tf`") == \
        "the-api-tensorflows-names-with-mt-for-tf"


def test_a_broken_link_is_found(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n[here](#title) [gone](missing.md) [no](#nowhere)\n"
                    "```\n[in code](ignored.md)\n```\n", encoding="utf-8")
    assert broken_links(page) == ["missing.md: no such file",
                                  "#nowhere: page.md has no heading with that anchor"]


@pytest.mark.parametrize("path", MARKDOWN + NOTEBOOKS, ids=lambda p: p.name)
def test_every_relative_link_leads_somewhere(path):
    assert broken_links(path) == []
