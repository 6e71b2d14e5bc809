"""Every conformance case, run under TensorFlow and minitape (harness.py says how).

Skipped when TensorFlow is not installed (`pip install -e ".[tf]"`); CI runs it in
its own environment (.ci/run). Set MINITAPE_REQUIRE_TF=1 to fail instead of skipping.
"""
import os

import pytest

from .harness import case_id, check, collect, quiet, readme_difference_rows, setup_tensorflow_env

setup_tensorflow_env()
if os.environ.get("MINITAPE_REQUIRE_TF"):
    import tensorflow as tf  # noqa: F401  (an ImportError fails the run)
else:
    tf = pytest.importorskip("tensorflow")
import minitape as mt  # noqa: E402

quiet(tf)

CASES = collect()
DIFFERENCES = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "differences.md")


def _param(family, name, case):
    return pytest.param(case, id=case_id(family, name))


@pytest.mark.parametrize("case", [_param(*c) for c in CASES])
def test_case(case):
    outcome = check(case, tf, mt)
    if outcome.status == "XFAIL":  # a known difference (strict: XPASS below fails)
        pytest.xfail(outcome.note)
    assert not outcome.failed, outcome.report()  # DIFF, XPASS and BAD fail


def test_every_difference_row_is_measured():
    """Each row of the differences table (docs/differences.md) has a case that measures it."""
    rows = readme_difference_rows(DIFFERENCES)
    assert rows, "no rows found in docs/differences.md's table"
    measured = {getattr(case, "differs") for _, _, case in CASES if getattr(case, "differs", None)}
    unknown = sorted(measured - set(rows))
    assert not unknown, f"cases name differences docs/differences.md does not list: {unknown}"
    missing = [row for row in rows if row not in measured]
    assert not missing, f"docs/differences.md rows without a conformance case: {missing}"
