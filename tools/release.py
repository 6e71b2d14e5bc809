"""The wheel the notebooks install, and the SHA-256 that pins it.

Every notebook's Colab cell (tools/colab.py) installs one wheel and names its
SHA-256; pip refuses any other file. That hash lives in RELEASE.sha256 (one
line in `sha256sum` format: the hash, two spaces, the wheel's file name), and
it is written at one moment only: the last step of a release commit.

    python -m tools.release build [--outdir dist]   # the sdist and the wheel, reproducibly
    python -m tools.release pin                     # build, write RELEASE.sha256 and every cell
    python -m tools.release check dist              # exit 1 unless dist/'s wheel is the pinned one

A build is reproducible: sources copied afresh (tools/package_source.py), the
exact setuptools pyproject.toml names, and SOURCE_DATE_EPOCH fixed, so the
same commit gives the same bytes on any machine. The release workflow
(.github/workflows/release.yml) builds the tagged commit the same way and
runs `check`: a wheel whose hash is not the one the notebooks name is not
published. Between releases main moves on and RELEASE.sha256 goes on naming
the last release, which is what Colab installs (docs/releasing.md).
"""
import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tools import colab, package_source

ROOT = colab.ROOT
PINNED = colab.PINNED
# 1980-01-01, the oldest time a zip file can hold: every file of the wheel gets it.
SOURCE_DATE_EPOCH = "315532800"


def wheel_name(version):
    return f"minitape-{version}-py3-none-any.whl"


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def build(outdir, sdist=True):
    """Build the wheel (and the sdist) of this checkout into `outdir`, from a
    fresh copy of its sources, with SOURCE_DATE_EPOCH fixed; returns the wheel."""
    outdir = Path(outdir).resolve()
    env = {**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH}
    with tempfile.TemporaryDirectory(prefix="minitape-release-") as source:
        package_source.copy(source)
        kinds = ["--sdist", "--wheel"] if sdist else ["--wheel"]
        result = subprocess.run([sys.executable, "-m", "build", *kinds, "--outdir", str(outdir),
                                 source], env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("python -m build failed:\n" + result.stdout[-3000:]
                           + result.stderr[-3000:])
    return outdir / wheel_name(colab.project()["version"])


def write_pin(wheel, path=PINNED):
    Path(path).write_text(f"{sha256(wheel)}  {Path(wheel).name}\n", encoding="utf-8")


def check(dist, version=None, path=PINNED):
    """What is wrong with publishing `dist` (a list of lines; empty if nothing):
    its wheel must be the one RELEASE.sha256 names, byte for byte, for
    `version` (pyproject.toml's by default), and every notebook must name it."""
    version = version or colab.project()["version"]
    pinned_version, pinned_hash = colab.pinned(path)
    problems = []
    if pinned_version != version:
        problems.append(f"RELEASE.sha256 names minitape {pinned_version}, not {version}")
    wheel = Path(dist) / wheel_name(version)
    if not wheel.exists():
        problems.append(f"{wheel} is missing")
    elif sha256(wheel) != pinned_hash:
        problems.append(f"{wheel.name} has the SHA-256 {sha256(wheel)}, but RELEASE.sha256 and "
                        f"the notebooks name {pinned_hash}: the package changed after "
                        f"`python -m tools.release pin`, or another setuptools built it")
    if colab.main(["--check"]) != 0:
        problems.append("the notebooks' Colab cells do not name RELEASE.sha256's wheel")
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build the sdist and the wheel reproducibly")
    b.add_argument("--outdir", type=Path, default=ROOT / "dist")
    sub.add_parser("pin", help="build the wheel, write RELEASE.sha256 and every Colab cell")
    c = sub.add_parser("check", help="exit 1 unless DIST's wheel is the one the notebooks name")
    c.add_argument("dist", type=Path)
    c.add_argument("--version", help="the version being released (default: pyproject.toml's)")
    args = parser.parse_args(argv)
    if args.command == "build":
        wheel = build(args.outdir)
        print(f"{sha256(wheel)}  {wheel}")
        return 0
    if args.command == "pin":
        with tempfile.TemporaryDirectory() as outdir:
            wheel = build(outdir, sdist=False)
            write_pin(wheel)
        colab.main([])
        print(f"RELEASE.sha256: {PINNED.read_text(encoding='utf-8').strip()}")
        return 0
    problems = check(args.dist, args.version)
    for problem in problems:
        print(f"refusing to publish: {problem}", file=sys.stderr)
    if problems:
        print("Fix: in the release commit, run `python -m tools.release pin` last, commit "
              "RELEASE.sha256 and the notebooks, and tag that commit (docs/releasing.md).",
              file=sys.stderr)
    else:
        print(f"{wheel_name(args.version or colab.project()['version'])}: the SHA-256 the "
              f"notebooks name")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
