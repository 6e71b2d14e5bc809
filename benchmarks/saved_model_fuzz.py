"""The saved-model fuzz test at full size, in a fresh process, with its figures.

    python benchmarks/saved_model_fuzz.py [cases] [seed]

runs tests/test_saved_model_fuzz.py with MINITAPE_FUZZ_CASES cases (10,000 by
default) and prints what MINITAPE_FUZZ_REPORT records: how many damaged or
hostile copies were rejected with a LoadError and how many loaded and ran
(nothing else may happen, or the test fails), the slowest load, and the peak
resident memory (VmHWM) of the process that loaded them all.
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def main(cases=10_000, seed=None):
    with tempfile.TemporaryDirectory() as tmp:
        report = pathlib.Path(tmp) / "report.json"
        env = dict(os.environ, MINITAPE_FUZZ_CASES=str(cases),
                   MINITAPE_FUZZ_REPORT=str(report))
        if seed is not None:
            env["MINITAPE_FUZZ_SEED"] = str(seed)
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
             "-o", "addopts=", str(ROOT / "tests" / "test_saved_model_fuzz.py")],
            env=env, cwd=ROOT, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
        print(result.stdout[-2000:], result.stderr[-2000:], sep="\n")
        if result.returncode != 0 or not report.exists():
            sys.exit(f"the fuzz test failed (exit code {result.returncode})")
        figures = json.loads(report.read_text())
    figures["wall seconds"] = round(seconds, 1)
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:3]])
