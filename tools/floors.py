"""The floors: the lowest versions pyproject.toml allows, as pip constraints.

    python -m tools.floors > constraints.txt    # numpy==1.24.0, matplotlib==3.7.0, ...
    python -m tools.floors --skip jupyterlab    # all but these

Every `>=` floor of minitape's dependencies and of its `notebooks` extra
becomes an exact pin. `.ci/run` installs a second environment with these
constraints (ipywidgets 7.7, as on Colab) and runs the widget tests and every
notebook there, so the floors in pyproject.toml are versions CI has tested.
"""
import argparse
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = ("notebooks",)


def floors(pyproject=ROOT / "pyproject.toml", extras=EXTRAS):
    """{name: floor version} for the project's dependencies and `extras`."""
    project = tomllib.loads(Path(pyproject).read_text(encoding="utf-8"))["project"]
    specs = list(project.get("dependencies", []))
    for extra in extras:
        specs += project.get("optional-dependencies", {}).get(extra, [])
    result = {}
    for text in specs:
        req = Requirement(text)
        if req.name == project["name"]:
            continue
        lows = [s.version for s in req.specifier if s.operator == ">="]
        if lows:
            result[req.name] = lows[0]
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description="pyproject.toml's floors as pip constraints")
    parser.add_argument("--skip", nargs="*", default=[], help="packages to leave out")
    args = parser.parse_args(argv)
    for name, version in floors().items():
        if name not in args.skip:
            print(f"{name}=={version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
