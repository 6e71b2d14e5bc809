"""The README's Python examples run as written (in order, sharing one namespace)."""
import pathlib
import re

import matplotlib

matplotlib.use("Agg")

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples():
    assert len(python_blocks()) >= 4


def test_readme_examples_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # examples that save files write here
    namespace = {"__name__": "readme"}
    for i, block in enumerate(python_blocks()):
        try:
            exec(compile(block, f"README.md python block {i}", "exec"), namespace)
        except Exception as e:
            raise AssertionError(f"README python block {i} failed:\n{block}") from e
    out = capsys.readouterr().out
    assert "mt.Tensor(27.0, shape=(), dtype=float32)" in out  # the opening example
