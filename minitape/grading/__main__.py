"""python -m minitape.grading: grade exercises in fresh processes.

    python -m minitape.grading check NOTEBOOK...          # each exercise, its own solution
    python -m minitape.grading check NOTEBOOK --answers SUBMISSION.ipynb
    python -m minitape.grading config COURSE_DIR          # nbgrader_config.py for autograde

`check` needs only NumPy and minitape (no Jupyter): it grades every exercise
of each instructor notebook with the answers in the notebook itself (the
shipped solutions) or in `--answers`, prints one line per check, and exits
with 1 if any check failed. `config` writes the nbgrader configuration that
makes `nbgrader autograde` grade the same way (`minitape.grading.autograde`).
"""
import argparse
import sys
import time

from . import runner


def _check(args):
    failed = 0
    limits = runner.Limits(seconds=args.timeout)
    started = time.perf_counter()
    for path in args.notebooks:
        began = time.perf_counter()
        grades = runner.grade_notebook(path, args.answers, limits, only=args.only or None)
        for grade in grades:
            failed += not grade.passed
            status = "passed" if grade.passed else "FAILED"
            print(f"{path}: {grade.check_id} {grade.points:g}/{grade.max_points:g} {status}")
            if not grade.passed:
                print("    " + grade.message.replace("\n", "\n    "))
        print(f"{path}: {len(grades)} checks in {time.perf_counter() - began:.1f} s")
    print(f"{failed} failed, {time.perf_counter() - started:.1f} s in all")
    return 1 if failed else 0


def _config(args):
    from .autograde import write_config  # nbgrader: the `teach` extra
    try:
        print(f"wrote {write_config(args.course_dir)}")
    except FileExistsError as exists:
        print(exists)
        return 1
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m minitape.grading", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="grade the exercises of instructor notebooks")
    check.add_argument("notebooks", nargs="+")
    check.add_argument("--answers", help="a student's notebook (one instructor notebook only)")
    check.add_argument("--only", action="append", help="a check's grade id (repeatable)")
    check.add_argument("--timeout", type=float, default=120.0,
                       help="wall-clock seconds per grading process")
    config = sub.add_parser("config", help="write nbgrader_config.py into a course folder")
    config.add_argument("course_dir")
    args = parser.parse_args(argv)
    if args.command == "check" and args.answers and len(args.notebooks) != 1:
        parser.error("--answers goes with one instructor notebook")
    return _check(args) if args.command == "check" else _config(args)


if __name__ == "__main__":
    sys.exit(main())
