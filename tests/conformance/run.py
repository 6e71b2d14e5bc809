"""Run conformance cases quickly, printing each verdict with both results.

    python -m tests.conformance.run                      # every family
    python -m tests.conformance.run cases_elementwise    # one family
    python -m tests.conformance.run cases_elementwise case_sin case_tan -v

Exit status 1 when a case differs unexpectedly (DIFF, XPASS or BAD).
"""
import sys

from .harness import case_id, check, collect, families, quiet, setup_tensorflow_env


def main(argv):
    verbose = "-v" in argv
    args = [a for a in argv if a != "-v"]
    wanted_families = [a for a in args if a.startswith("cases_")] or families()
    wanted_cases = {a if a.startswith("case_") else "case_" + a
                    for a in args if not a.startswith("cases_")}
    setup_tensorflow_env()
    import tensorflow as tf
    import minitape as mt
    quiet(tf)
    counts = {}
    for family, name, case in collect(wanted_families):
        if wanted_cases and name not in wanted_cases:
            continue
        outcome = check(case, tf, mt)
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
        if verbose or outcome.status != "OK":
            print(f"{case_id(family, name)}: {outcome.report()}")
        else:
            print(f"{case_id(family, name)}: OK")
    print(", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no cases")
    return 1 if any(counts.get(s) for s in ("DIFF", "XPASS", "BAD")) or not counts else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
