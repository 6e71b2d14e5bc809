"""Keep a clone's `git status` clean of what opening and saving notebooks rewrites.

    python -m tools.clean_clone          # once, from the clone's top directory

Configures nbstripout as git's clean filter for `notebooks/*.ipynb`, with the
options `tools.rebuild_notebooks` strips the stored notebooks with (outputs and
execution counts kept). Git then compares notebooks without the metadata a
notebook front end adds or rewrites on save (widget state, a cell's
`execution`, `collapsed` and `scrolled` flags, the trust signature), so a
notebook that was opened, trusted and saved shows no diff (`git status` may
list it until `git add notebooks` refreshes git's record of its size, which
stages nothing). The stored notebooks
are fixed points of the filter (tests/test_explorer_state.py checks it), so
installing it changes nothing by itself. Running cells does change outputs,
and git shows that; `git checkout -- notebooks` brings back the stored ones.

The filter lives in the clone's own git configuration (`.git/config`, and
`.git/info/attributes`), never in a committed file: a clone without
nbstripout still works.
"""
import subprocess
import sys
from pathlib import Path

from tools.rebuild_notebooks import STRIP_OPTIONS

FILTER = "minitape-notebooks"
PATTERN = "notebooks/*.ipynb"


def filter_command(python=None):
    """The clean command git runs on each notebook (stdin to stdout)."""
    return " ".join([f'"{python or sys.executable}"', "-m", "nbstripout", *STRIP_OPTIONS])


def install(repo="."):
    """Configure the filter in the git repository `repo`; returns the
    attributes file it wrote to."""
    def git(*args):
        return subprocess.run(["git", "-C", str(repo), *args], check=True,
                              capture_output=True, text=True).stdout.strip()

    git("config", f"filter.{FILTER}.clean", filter_command())
    git("config", f"filter.{FILTER}.smudge", "cat")
    git("config", f"filter.{FILTER}.required", "true")
    attributes = Path(repo) / git("rev-parse", "--git-path", "info/attributes")
    line = f"{PATTERN} filter={FILTER}"
    existing = attributes.read_text(encoding="utf-8") if attributes.exists() else ""
    if line not in existing.splitlines():
        attributes.parent.mkdir(parents=True, exist_ok=True)
        with open(attributes, "a", encoding="utf-8") as f:
            f.write(("\n" if existing and not existing.endswith("\n") else "") + line + "\n")
    return attributes


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    where = install(argv[0] if argv else ".")
    print(f"git filter {FILTER!r} set for {PATTERN} ({where})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
