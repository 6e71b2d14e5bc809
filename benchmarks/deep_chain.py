"""A chain of recorded scalar ops: its time and the memory the tape keeps.

    python benchmarks/deep_chain.py            # 10**6 ops
    python benchmarks/deep_chain.py --ops 100000

Runs `y = y * 1.000001` n times under a tape, then `tape.gradient(y, x)`, in
this process, and prints the seconds of each part, the peak resident memory
(`ru_maxrss`: at import, after the forward pass, and overall, when the
backward walk's bookkeeping sits beside the record) and the bytes per op
above the import. The gradient is checked against the product the chain
computes (float32, so not exactly 1.000001 ** n). Issue 18's goal for
10**6 ops: under 10 s and under 300 MiB at peak. Linux or macOS (`resource`).
"""
import argparse
import json
import resource
import sys
import time

import numpy as np


def peak_mib():
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (2**20 if sys.platform == "darwin" else 2**10)  # bytes on macOS, KiB on Linux


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=10**6)
    n = parser.parse_args().ops

    import minitape as mt
    at_import = peak_mib()
    start = time.perf_counter()
    x = mt.constant(1.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(n):
            y = y * 1.000001
    recorded = time.perf_counter()
    after_forward = peak_mib()
    g = tape.gradient(y, x)
    done = time.perf_counter()
    peak = peak_mib()
    # y = x * c ** n with x = 1, so dy/dx = y (up to float32 rounding of the chain)
    assert np.isclose(float(g), float(y), rtol=1e-5), (float(g), float(y))
    print(json.dumps({
        "ops": n, "forward_s": round(recorded - start, 2), "gradient_s": round(done - recorded, 2),
        "total_s": round(done - start, 2), "peak_mib": round(peak), "mib_at_import": round(at_import),
        "mib_after_forward": round(after_forward),
        "bytes_per_op": round((peak - at_import) * 2**20 / n), "gradient": float(g)}))


if __name__ == "__main__":
    main()
