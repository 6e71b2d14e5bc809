"""Every built-in op type is named, as a string in code, in one file only: its
declaration (issue 31). `tools/op_names.py` counts the files; the op types
some other file still lists by name are written down here, so the list can
only shrink: a new name in a consumer's list fails, and so does a name that
no longer needs to be here."""
import json
import os
import subprocess
import sys

import pytest

from tools.op_names import ROOT, summary

# Every op type is declared once (issue 31): no other file names one. Keep it so.
STILL_NAMED_ELSEWHERE = set()


@pytest.fixture(scope="module")
def named():
    """op type -> files, from a fresh process (other tests register op types)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "tools.op_names", "--json"], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_op_types_named_in_more_than_one_file_are_only_the_known_ones(named):
    several = {t for t, files in named.items() if len(files) > 1}
    new = sorted(several - STILL_NAMED_ELSEWHERE)
    assert not new, "declare them once (ops/declaration.py): " + "; ".join(
        f"{t} in {named[t]}" for t in new)
    fixed = sorted(STILL_NAMED_ELSEWHERE - several)
    assert not fixed, f"named in one file now, take them off the list: {fixed}"


def test_every_built_in_op_type_is_named_somewhere(named):
    assert all(named.values()), sorted(t for t, files in named.items() if not files)


def test_the_declared_elementwise_ops_and_matmul_are_named_in_their_family_only(named):
    for op_type, family in [("Mul", "elementwise"), ("Sin", "elementwise"), ("Relu", "activations"),
                            ("MatMul", "matmul_and_solve"), ("Tan", "trigonometric"),
                            ("Rsqrt", "exp_log"), ("ZeroWhereUnmoved", "zero_times_inf"),
                            ("UnmovedEinsum", "zero_times_inf"), ("Max", "reductions"),
                            ("Prod", "reductions"), ("Cast", "operands"), ("Pack", "operands"),
                            ("Identity", "shapes"), ("Conj", "complex")]:
        assert named[op_type] == [f"minitape/ops/{family}.py"], (op_type, named[op_type])


def test_the_mean_only_goes_down(named):
    s = summary(named)
    assert s["mean_files"] == 1.0 and s["worst_files"] == 1, s
