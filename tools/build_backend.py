"""minitape's build backend: setuptools' own, after one check that the Python
building it is one minitape supports.

pip reads `requires-python` only after it has resolved the dependencies, and
the pip that a Python 3.10 venv ships (23.0) backtracks through matplotlib's
and ipykernel's releases for over ten minutes before it gets there, without
saying why. pip imports this module a few seconds into `pip install -e .`, so
an unsupported Python stops here at once, with the versions that work.

pyproject.toml names it (`build-backend`, `backend-path = ["tools"]`); it
must run on any Python, so it reads pyproject.toml with a regular expression
(tomllib is 3.11's).
"""
import re
import sys
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def oldest_supported(pyproject=PYPROJECT):
    """(3, 11) from `requires-python = ">=3.11"`."""
    text = Path(pyproject).read_text(encoding="utf-8")
    found = re.search(r'^requires-python\s*=\s*">=\s*(\d+)\.(\d+)"\s*$', text, re.M)
    if not found:
        raise ValueError(f"{pyproject}: requires-python must read \">=3.N\"")
    return int(found.group(1)), int(found.group(2))


def refusal(version=sys.version_info, executable=sys.executable, pyproject=PYPROJECT):
    """The message for a Python older than requires-python, or None."""
    oldest = oldest_supported(pyproject)
    if tuple(version[:2]) >= oldest:
        return None
    return (f"minitape needs Python {oldest[0]}.{oldest[1]} or newer; this is "
            f"Python {version[0]}.{version[1]}.{version[2]} ({executable}).\n"
            f"Make the virtual environment with a newer Python, for example:\n"
            f"    rm -rf .venv && python3.12 -m venv .venv && . .venv/bin/activate\n"
            f"then run the same pip command again.")


_refusal = refusal()
if _refusal:
    raise SystemExit("\n" + _refusal + "\n")

from setuptools.build_meta import *  # noqa: E402,F401,F403  (the backend itself)
