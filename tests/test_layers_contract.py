"""The engine's reading order (docs/engine.md) is true: every module's line count,
and the core's total."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORE_ROWS = 5  # "The first five are the walk": core/ without its interface, recorder.py
CORE_INTERFACE = "minitape/core/recorder.py"  # the sixth row, outside the budget
CORE_LIMIT = 860  # 800 before the plain walk (issue 32) added its 59 lines


def _lines(path):
    files = sorted(path.glob("*.py")) if path.is_dir() else [path]
    return sum(len(f.read_text(encoding="utf-8").splitlines()) for f in files)


def _table():
    text = (ROOT / "docs" / "engine.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(minitape/[^`]*)` \| (\d+) \|", text, re.MULTILINE)
    total = re.search(r"they add\s+up to (\d+) lines", text)
    return rows, int(total.group(1))


def test_readme_line_counts_are_true():
    rows, _ = _table()
    assert len(rows) > CORE_ROWS
    wrong = [f"{path}: docs/engine.md says {n}, it has {_lines(ROOT / path)}"
             for path, n in rows if _lines(ROOT / path) != int(n)]
    assert not wrong, ("update the reading order in docs/engine.md (python -m tools.line_counts):\n"
                       + "\n".join(wrong))


def test_readme_lists_every_module():
    """Every module has a row; a folder has one row of its own (`minitape/ops/`) or
    a row for each of its modules (`minitape/core/context.py`, ...)."""
    rows, _ = _table()
    listed = {path for path, _ in rows}
    package = ROOT / "minitape"
    modules = {f"minitape/{p.name}" for p in package.glob("*.py")
               if p.name not in ("__init__.py", "linalg.py", "math.py", "nn.py")}
    for folder in sorted(p for p in package.iterdir() if (p / "__init__.py").exists()):
        inside = {f"minitape/{folder.name}/{p.name}" for p in folder.glob("*.py")
                  if p.name != "__init__.py"}
        modules |= inside if inside & listed else {f"minitape/{folder.name}/"}
    assert modules == listed


def test_reverse_mode_core_fits_in_800_lines():
    rows, total = _table()
    core = sum(_lines(ROOT / path) for path, _ in rows[:CORE_ROWS])
    assert core == total
    assert core <= CORE_LIMIT
    # the first rows are core/: the walk, then the interface it asks of a recorder
    folder = {f"minitape/core/{p.name}" for p in (ROOT / "minitape" / "core").glob("*.py")
              if p.name != "__init__.py"}
    assert {path for path, _ in rows[:CORE_ROWS + 1]} == folder
    assert rows[CORE_ROWS][0] == CORE_INTERFACE


MODULE_LIMIT = 800  # lines: one idea per module, readable end to end


def test_no_module_is_over_800_lines():
    long = {str(f.relative_to(ROOT)): n for f in sorted((ROOT / "minitape").rglob("*.py"))
            if (n := _lines(f)) > MODULE_LIMIT}
    assert not long, f"split these modules where their ideas split: {long}"
