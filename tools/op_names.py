"""Where each built-in op type is named: the files of `minitape/` whose code (not
docstrings, not comments) holds the op type as a string, for every op type in
the gradient registry (issue 31).

    python -m tools.op_names            # the summary: mean and worst
    python -m tools.op_names --all      # every op type named in more than one file
    python -m tools.op_names --json     # op type -> the files, as JSON

An op type named in one file only is stated once: its declaration. One named in
several has a list somewhere else (a replay table, a compiled line, a shape
rule), which is a place to forget it. `tests/test_op_names.py` holds the result.
"""
import ast
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "minitape"


def builtin_op_types():
    """The op types the gradient registry holds once minitape is imported (run
    it in a fresh process: user registrations and gradient graphs are not
    built in)."""
    import minitape  # noqa: F401  (importing it fills the registry)
    from minitape.core import registry
    return sorted(t for t in registry._rules if not t.startswith("CustomGradient-"))


def _docstrings(tree):
    """The string constants that are docstrings (of modules, classes, functions)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and \
                    isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                found.add(id(body[0].value))
    return found


def strings_in_code(path):
    """Every string constant of a Python file that is not a docstring (comments
    are not in the syntax tree at all)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    return {node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in skip}


def files_naming(op_types, package=PACKAGE):
    """op type -> the files (relative to the repository) whose code names it."""
    wanted = set(op_types)
    named = {t: [] for t in op_types}
    for path in sorted(package.rglob("*.py")):
        for s in strings_in_code(path) & wanted:
            named[s].append(str(path.relative_to(package.parent)))
    return named


def summary(named):
    counts = {t: len(files) for t, files in named.items()}
    worst = max(counts.values())
    return {"op_types": len(counts),
            "mean_files": sum(counts.values()) / len(counts),
            "in_more_than_one": sum(1 for n in counts.values() if n > 1),
            "worst_files": worst,
            "worst": sorted(t for t, n in counts.items() if n == worst)}


def main(argv):
    named = files_naming(builtin_op_types())
    if "--json" in argv:
        print(json.dumps(named))
        return
    s = summary(named)
    print(f"{s['op_types']} op types; named in {s['mean_files']:.2f} files on average; "
          f"{s['in_more_than_one']} in more than one file; worst {s['worst_files']} files "
          f"({', '.join(s['worst'])})")
    if "--all" in argv:
        for t, files in sorted(named.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            if len(files) > 1:
                print(f"  {t}: {len(files)}  {' '.join(files)}")


if __name__ == "__main__":
    main(sys.argv[1:])
