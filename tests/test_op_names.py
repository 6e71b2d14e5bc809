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

# Stage 1 declared the elementwise families and matmul; these families still
# keep table entries in graph.py, compiler.py, signatures.py, saved_model/ and
# jacobians.py (Cast and Pack: ops/core.py packs lists of tensors by emitting
# them; Conj and Real: the decompositions emit them).
STILL_NAMED_ELSEWHERE = {
    "BiasAdd", "BroadcastTo", "Cast", "ConcatV2", "Conj", "Cumsum", "Einsum", "Elu",
    "GatherNd", "GatherV2", "Identity", "L2Loss", "LeakyRelu", "MatrixBandPart",
    "MatrixDiagPartV3", "MatrixDiagV3", "MatrixInverse", "MatrixSetDiagV3", "MatrixSolve",
    "Max", "Mean", "Min", "Pack", "PadV2", "Prod", "Real", "Relu6", "Reshape",
    "ScatterNd", "SegmentSum", "Selu", "Sigmoid", "Softmax", "Softplus", "StopGradient",
    "StridedSlice", "StridedSliceGrad", "Sum", "Tile", "Transpose", "UnsortedSegmentSum"}


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
    for op_type, family in [("Mul", "elementwise"), ("Sin", "elementwise"), ("Relu", "nn"),
                            ("MatMul", "linalg"), ("Tan", "trigonometric"),
                            ("Rsqrt", "exp_log"), ("ZeroWhereUnmoved", "zero_times_inf"),
                            ("UnmovedEinsum", "zero_times_inf")]:
        assert named[op_type] == [f"minitape/ops/{family}.py"], (op_type, named[op_type])


def test_the_mean_only_goes_down(named):
    s = summary(named)
    assert s["mean_files"] <= 1.98, s
