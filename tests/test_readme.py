"""The Python examples of the README and of the docs it links to run as written
(each file's blocks in order, sharing one namespace per file)."""
import json
import pathlib
import re

import matplotlib
import pytest

matplotlib.use("Agg")

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# Every Markdown file with Python examples (docs/notebooks.md's setup cell is
# IPython, run by every notebook).
FILES = [README, ROOT / "docs" / "api.md", ROOT / "docs" / "engine.md"]


def python_blocks(path=README):
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


def test_the_examples_are_where_they_were_put():
    assert len(python_blocks(README)) >= 1  # the opening example
    assert len(python_blocks(ROOT / "docs" / "api.md")) >= 5
    assert len(python_blocks(ROOT / "docs" / "engine.md")) >= 1


def _run(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that save files write here
    namespace = {"__name__": "readme"}
    name = path.relative_to(ROOT)
    for i, block in enumerate(python_blocks(path)):
        try:
            exec(compile(block, f"{name} python block {i}", "exec"), namespace)
        except Exception as e:
            raise AssertionError(f"{name} python block {i} failed:\n{block}") from e
    return namespace


def test_readme_examples_run(tmp_path, monkeypatch, capsys):
    _run(README, tmp_path, monkeypatch)
    out = capsys.readouterr().out
    assert "mt.Tensor(27.0, shape=(), dtype=float32)" in out  # the opening example


@pytest.mark.parametrize("path", FILES[1:], ids=lambda p: p.name)
def test_docs_examples_run(path, tmp_path, monkeypatch):
    _run(path, tmp_path, monkeypatch)


NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXPLORER_PICTURE = "minitape-explorer-fallback"  # tools.rebuild_notebooks' stored picture


def _course_table():
    """The notebooks the README's course table links, in its order."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## The course\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| \[[^\]]+\]\(notebooks/([^)]+\.ipynb)\) \|", section, flags=re.M)


def test_the_course_table_lists_every_notebook_in_reading_order():
    # Reading order is file-name order: the README's Colab badge, tools/ and
    # the site all take the notebooks sorted.
    assert _course_table() == [p.name for p in NOTEBOOKS]
    assert NOTEBOOKS[0].name.startswith("00a_") and NOTEBOOKS[1].name.startswith("00b_")
    assert "Start with 00a." in README.read_text(encoding="utf-8")


def test_every_notebook_but_00a_has_an_explorer():
    """The README: "Every notebook but 00a has an explorer ... 00a has none,
    because it is all exercise"."""
    def explorers(path):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        return sum(EXPLORER_PICTURE in "".join(out.get("data", {}).get("text/html", ""))
                   for c in cells if c["cell_type"] == "code" for out in c["outputs"])

    counts = {p.name: explorers(p) for p in NOTEBOOKS}
    assert counts.pop("00a_build_a_tape.ipynb") == 0
    assert all(n >= 1 for n in counts.values()), counts
