"""The newest release of every NumPy minor version minitape admits, one per line.

    python -m tools.numpy_minors      # 1.24.4 1.25.2 1.26.4 2.0.2 ... (from PyPI)

From pyproject.toml's floor (`numpy>=1.24.0`) to the newest release on the
index pip uses (`pip index versions numpy`). .ci/run installs each of them
beside the built wheel and runs every graded check with its shipped solution
(`python -I -m minitape.grading check notebooks/*.ipynb`), so a right answer
passes on every NumPy the package admits, the next minor included as soon as
it is released.
"""
import re
import subprocess
import sys

from packaging.version import Version

from tools import floors


def newest_per_minor(available, floor):
    """From the versions `available` (strings), the newest final release of each
    minor version at or above `floor`, oldest minor first."""
    floor = Version(floor)
    newest = {}
    for text in available:
        version = Version(text)
        if version.is_prerelease or version.is_devrelease or version < floor:
            continue
        minor = (version.major, version.minor)
        newest[minor] = max(newest.get(minor, version), version)
    return [str(newest[minor]) for minor in sorted(newest)]


def available_on_index():
    """The versions `pip index versions numpy` lists."""
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "numpy"],
                         capture_output=True, text=True, check=True).stdout
    found = re.search(r"^Available versions: (.*)$", out, re.M)
    if not found:
        raise RuntimeError(f"pip index versions numpy printed no versions:\n{out}")
    return [v.strip() for v in found.group(1).split(",")]


def main():
    for version in newest_per_minor(available_on_index(), floors.floors()["numpy"]):
        print(version)


if __name__ == "__main__":
    main()
