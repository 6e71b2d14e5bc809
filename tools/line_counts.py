"""Rewrite the line counts in the engine's reading order (docs/engine.md), and the
core's total there, from the files.

    python -m tools.line_counts

tests/test_layers_contract.py checks every count; after changing a module, run
this and read the diff (a count that jumped is worth a second look).
"""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORE_ROWS = 5  # the walk: core/'s first five rows (not recorder.py, its interface)


def lines(path):
    files = sorted(path.glob("*.py")) if path.is_dir() else [path]
    return sum(len(f.read_text(encoding="utf-8").splitlines()) for f in files)


def main():
    row = re.compile(r"^\| `(minitape/[^`]*)` \| (\d+) \|", re.MULTILINE)
    total = re.compile(r"(they add\s+up to )(\d+)( lines)")
    engine = ROOT / "docs" / "engine.md"
    text = row.sub(lambda m: f"| `{m.group(1)}` | {lines(ROOT / m.group(1))} |",
                   engine.read_text(encoding="utf-8"))
    core = sum(lines(ROOT / path) for path, _ in row.findall(text)[:CORE_ROWS])
    engine.write_text(total.sub(lambda m: f"{m.group(1)}{core}{m.group(3)}", text),
                      encoding="utf-8")
    print(f"docs/engine.md's line counts and core total rewritten; "
          f"the core is {core} lines")


if __name__ == "__main__":
    main()
