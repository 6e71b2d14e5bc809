"""Files as plain data, and a fresh Python process that has only them.

A check whose answer writes files (a saved model, notebook 04) reads them in
its run part with `files_of(folder)`, so they reach the judge as plain data,
and the judge gives them to `run_fresh(code, files)`: a new Python process,
in an empty temporary folder holding just those files, with the minitape the
caller uses. It is what "restart the runtime and load the model" means.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

LIMIT = 16 * 2**20  # bytes of files one check may collect (16 MiB)


def files_of(folder):
    """{relative path: the file's bytes as a uint8 array} for every file under
    `folder` (no links followed; ValueError past LIMIT)."""
    found, total = {}, 0
    for root, dirs, names in os.walk(folder, followlinks=False):
        for name in sorted(names):
            path = os.path.join(root, name)
            if os.path.islink(path):
                continue
            with open(path, "rb") as file:
                data = file.read(LIMIT - total + 1)
            total += len(data)
            if total > LIMIT:
                raise ValueError(f"the files under {folder} hold more than {LIMIT:,} bytes")
            found[os.path.relpath(path, folder)] = np.frombuffer(data, np.uint8).copy()
    return found


def run_fresh(code, files=(), timeout=120):
    """Run `code` in a new Python process whose working folder holds only
    `files` (as `files_of` gives them); return what it printed, or the last
    line of its error."""
    import minitape
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(minitape.__file__)))
    with tempfile.TemporaryDirectory(prefix="minitape-fresh-") as folder:
        for name, data in dict(files).items():
            path = os.path.realpath(os.path.join(folder, name))
            if not path.startswith(os.path.realpath(folder) + os.sep):
                raise ValueError(f"{name!r} is not a path inside the folder")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as file:
                file.write(np.asarray(data, np.uint8).tobytes())
        # PYTHON_COLORS=0: plain error text (Python 3.13 colours it, as Jupyter's kernel asks)
        env = dict(os.environ, PYTHONPATH=package_parent, PYTHON_COLORS="0")
        result = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True,
                                text=True, env=env, timeout=timeout)
    if result.returncode == 0:
        return result.stdout.strip()
    lines = result.stderr.strip().splitlines()
    return lines[-1] if lines else f"exit code {result.returncode}"
