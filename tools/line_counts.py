"""Rewrite the line counts in the engine's reading order (docs/engine.md) from the files.

    python -m tools.line_counts

tests/test_layers_contract.py checks every count; after changing a module, run
this and read the diff (a count that jumped is worth a second look).
"""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORE_ROWS = 5


def lines(path):
    files = sorted(path.glob("*.py")) if path.is_dir() else [path]
    return sum(len(f.read_text(encoding="utf-8").splitlines()) for f in files)


def main():
    readme = ROOT / "docs" / "engine.md"
    text = readme.read_text(encoding="utf-8")
    row = re.compile(r"^\| `(minitape/[^`]*)` \| (\d+) \|", re.MULTILINE)
    text = row.sub(lambda m: f"| `{m.group(1)}` | {lines(ROOT / m.group(1))} |", text)
    core = sum(lines(ROOT / path) for path in row.findall(text)[:CORE_ROWS]
               for path in [path[0]])
    text = re.sub(r"(they add\s+up to )(\d+)( lines)", lambda m: f"{m.group(1)}{core}{m.group(3)}",
                  text)
    readme.write_text(text, encoding="utf-8")
    print(f"docs/engine.md line counts rewritten; the core is {core} lines")


if __name__ == "__main__":
    main()
