"""The Python examples of the README and of the docs it links to run as written
(each file's blocks in order, sharing one namespace per file)."""
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
