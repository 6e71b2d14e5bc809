"""docs/engine.md's "Adding an op" walks through a real op: each of its code
blocks (marked `py`: excerpts, not run) names a file on its first line, and must be a piece of that file as it
is (so the walkthrough a maintainer copies is the code that runs)."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _walkthrough_blocks():
    text = (ROOT / "docs" / "engine.md").read_text(encoding="utf-8")
    section = text.split("## Adding an op", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```py\n# (\S+)\n(.*?)```", section, re.DOTALL)


def test_the_walkthrough_has_its_blocks():
    blocks = _walkthrough_blocks()
    assert len(blocks) >= 5
    assert {path for path, _ in blocks} >= {"minitape/ops/activations.py", "minitape/nn.py"}


def test_each_block_of_the_walkthrough_is_in_its_file():
    for path, code in _walkthrough_blocks():
        source = (ROOT / path).read_text(encoding="utf-8")
        assert code in source, f"docs/engine.md's 'Adding an op' block is not in {path}:\n{code}"
