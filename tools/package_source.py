"""A private copy of what the minitape package is built from, for whatever
builds or installs it while other things run (tools.site, tests, .ci/run).

setuptools builds in the source folder (`build/`, `minitape.egg-info/`), so two
builds of one checkout at the same time (test files on two pytest-xdist
workers, or a test while .ci/run installs an environment) can spoil each
other's wheel. Each such build works on its own copy instead.
"""
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ("pyproject.toml", "README.md", "MANIFEST.in", "minitape",
           "tools/build_backend.py")  # what the build reads


def copy(dest, extra=()):
    """Copy the package's sources (and the files or folders `extra`, relative to
    the checkout) into `dest`; returns `dest`."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for name in (*PACKAGE, *extra):
        source = ROOT / name
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, dest / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, dest / name)
    return dest
