"""Saved models hold every op type that traces (issue 16's families, issue 17's
promise): each op-table row of the families (tests/op_table_<family>.py),
traced with its gradient inside, saves, loads (a few in a fresh process) and
gives the original function's values and gradients; the loader checks the
new op types' shapes, dtypes, attributes and cost without running them, and
refuses hostile files quickly with a LoadError naming the place."""
import inspect
import json
import os
import random
import subprocess
import sys
import time

import numpy as np
import pytest

import minitape as mt
from minitape.graph import OPS, OpDef
from minitape.ops import operands
from minitape.ops.declaration import DECLARED, declare
from minitape.saved_model.format import GENERIC
from op_table import case, family_cases
from test_saved_model_fuzz import clear, exercise, mutate, place

_rng = np.random.default_rng(17)  # not op_table's: its rows keep their values
_X = _rng.permutation(np.linspace(-2.0, 2.0, 12)).reshape(3, 4)  # distinct, no ties
# Rows for the op types no op-table row holds (they are not differentiable);
# each is used inside a differentiable function.
EXTRA = [
    case("saved.any-all", lambda x: x * mt.cast(mt.reduce_any(x > 1.0, axis=1, keepdims=True),
                                                 x.dtype)
         * mt.cast(mt.reduce_all(x > -3.0, axis=[0, 1], keepdims=True), x.dtype), _X),
    case("saved.argmax-argmin", lambda x: mt.gather(x[0], mt.argmax(x, axis=1))
         + mt.gather(x[1], mt.math.argmin(x, axis=1, output_type=mt.int32)), _X),
    case("saved.one_hot", lambda x: mt.reduce_sum(
        x * mt.one_hot(mt.argmax(x, axis=1), 4, dtype=mt.float64), axis=1), _X),
    case("saved.logical", lambda x: x * mt.cast(mt.math.logical_or(
        mt.math.logical_and(x > 0.0, mt.math.logical_not(x > 1.0)),
        mt.math.is_finite(x) & ~mt.math.is_nan(x) & ~mt.math.is_inf(x)), x.dtype), _X),
    case("saved.bitwise", lambda x: x * mt.cast(
        (mt.argmax(x, axis=1) & 1) | (mt.argmin(x, axis=1) ^ 2) | ~mt.argmax(x, axis=1),
        x.dtype)[:, None], _X),
    case("saved.ceil-imag", lambda x: x * mt.math.ceil(x) + mt.math.imag(x), _X),
    case("saved.round-floor-minimum", lambda x: x * mt.round(x) + x * mt.floor(x)
         + mt.minimum(x, 0.5), _X),
    case("saved.linspace", lambda x: mt.linspace(x[0, 0], x[1, 1], 5), _X),
    case("saved.spectral_norm", lambda x: mt.norm(x, ord=2, axis=[0, 1]), _X),
    # the op types tests/test_saved_model.py saved before they were declared
    case("saved.identity-min-pad-einsum", lambda x: mt.identity(x) * mt.reduce_min(x, axis=0)
         + mt.pad(x, [[1, 0], [0, 1]])[1:, :-1] + mt.einsum("ij,j->ij", x, x[0]), _X),
]
ROWS = family_cases() + EXTRA


def with_gradient(fn, arity):
    """y = fn(*xs) and the gradient of sum(w sin y), taken inside: the saved
    graph then holds the gradient rules' ops too (scatters for gathers,
    diag for diag_part, ...)."""
    def run(*xs):
        with mt.GradientTape() as tape:
            tape.watch(xs)
            y = fn(*xs)
            w = mt.constant(np.linspace(0.5, 1.5, y.size).reshape(y.shape).astype(y.dtype))
            loss = mt.reduce_sum(w * mt.sin(y))
        return y, tape.gradient(loss, list(xs))
    # one parameter per input (an input_signature for *args binds them as one)
    def fixed(*xs):
        return run(*xs)
    fixed.__signature__ = inspect.Signature(
        [inspect.Parameter(f"x{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD)
         for i in range(arity)])
    return fixed


def saved_and_loaded(fn, args, path):
    """fn as an mt.function with an input signature of the inputs' shapes,
    called once (the trace save keeps), saved to `path` and loaded back."""
    f = mt.function(fn, input_signature=[mt.TensorSpec(a.shape, mt.float64) for a in args])
    try:
        f(*[mt.constant(a) for a in args])
    except NotImplementedError:
        pytest.skip("mt.primitive ops are not traced")
    module = mt.Module()
    module.f = f
    mt.saved_model.save(module, str(path))
    return mt.saved_model.load(str(path)).f


def assert_same(a, b, rtol=1e-10):
    a, b = mt.nest.flatten(a), mt.nest.flatten(b)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x is None) == (y is None)
        if x is not None:
            assert x.shape == y.shape and x.dtype == y.dtype
            np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=1e-12)


def outer_gradient(f, xs):
    """The gradient of sum(sin(y)) + sum(grad^2) of a call, through the call."""
    with mt.GradientTape() as tape:
        tape.watch(xs)
        y, grads = f(*xs)
        total = mt.reduce_sum(mt.sin(y))
        for g in grads:
            if g is not None:
                total = total + mt.reduce_sum(g * g)
    return tape.gradient(total, xs)


@pytest.mark.parametrize("fn, args, check_kwargs", ROWS)
def test_every_family_row_saves_loads_and_agrees_with_eager(fn, args, check_kwargs, tmp_path):
    run = with_gradient(fn, len(args))
    loaded = saved_and_loaded(run, args, tmp_path / "m")
    xs = [mt.constant(a) for a in args]
    assert_same(loaded(*xs), run(*xs))
    if check_kwargs.get("first_order_only"):
        return
    # and differentiates again through the replay, as the eager function does
    assert_same(outer_gradient(loaded, xs), outer_gradient(run, xs), rtol=1e-8)


@pytest.mark.parametrize("fn, args, check_kwargs", ROWS[::4])
def test_a_loaded_function_compiles_and_agrees_with_eager(fn, args, check_kwargs, tmp_path):
    run = with_gradient(fn, len(args))
    loaded = saved_and_loaded(run, args, tmp_path / "m")
    xs = [mt.constant(a) for a in args]
    compiled = mt.function(lambda *a: loaded(*a), jit_compile=True)
    assert_same(compiled(*xs), run(*xs), rtol=1e-8)


def graph_op_types(fn, args):
    f = mt.function(with_gradient(fn, len(args)))
    try:
        concrete = f.get_concrete_function(*[mt.constant(a) for a in args])
    except NotImplementedError:
        return set()
    return {node.op for node in concrete.graph.nodes}


def test_the_rows_cover_every_declared_op_type():
    """Every op type the families declare is saved by some row above (or by
    the tests below: Where and SegmentSum, whose sizes are values)."""
    seen = set()
    for row in ROWS:
        fn, args, _ = row.values
        seen |= graph_op_types(fn, args)
    missing = {t for t, d in DECLARED.items() if d.shape is not None} - seen - {"Eig"}  # eig: test_eig_and_eigvals_save_...
    assert not missing, f"no op-table row saves {sorted(missing)}"


def test_every_replayed_op_type_declares_its_shape_rule():
    missing = sorted(t for t, d in DECLARED.items() if d.replay is not None and d.shape is None)
    assert not missing, missing


def test_an_op_type_without_a_shape_rule_is_refused_at_save(tmp_path):
    def twice(x):
        return operands.emit("TwiceForTest", x._value * 2, (x,))
    declare("TwiceForTest", replay=lambda xs, a, o: twice(xs[0]))
    OPS["TwiceForTest"] = OpDef(lambda xs, a, o: twice(xs[0]), 1)
    try:
        f = mt.function(lambda x: twice(mt.convert_to_tensor(x)),
                        input_signature=[mt.TensorSpec([2], mt.float64)])
        module = mt.Module()
        module.f = f
        with pytest.raises(ValueError, match="TwiceForTest.*has no shape rule: a saved model "
                                             "cannot hold this op type yet"):
            mt.saved_model.save(module, str(tmp_path / "m"))
        assert not (tmp_path / "m").exists()
    finally:
        del DECLARED["TwiceForTest"], OPS["TwiceForTest"]


# --- values whose sizes are values: where(condition), boolean_mask, segment_sum -----

def test_where_and_segment_sum_keep_the_traced_sizes_and_say_so(tmp_path):
    def f(x, ids):
        return mt.where(x > 0.0), mt.math.segment_sum(x, ids)
    x, ids = np.array([1.0, -2.0, 3.0]), np.array([0, 0, 2])
    fn = mt.function(f, input_signature=[mt.TensorSpec([3], mt.float64),
                                         mt.TensorSpec([3], mt.int64)])
    want = fn(x, ids)
    module = mt.Module()
    module.f = fn
    mt.saved_model.save(module, str(tmp_path / "m"))
    loaded = mt.saved_model.load(str(tmp_path / "m")).f
    assert_same(loaded(x, ids), want)
    other = np.array([-1.0, 2.0, 3.0])  # two true entries again: the same shapes
    assert_same(loaded(other, ids), f(other, ids))
    with pytest.raises(ValueError, match="where: in this traced function the result had "
                                         r"shape \(2, 1\), now \(3, 1\)"):
        loaded(np.abs(x), ids)
    with pytest.raises(ValueError, match="segment_sum: in this traced function there were 3 "
                                         "segments, now the last id is 7"):
        loaded(x, np.array([0, 0, 7]))


# --- fresh processes ------------------------------------------------------------------

FRESH = ["linalg.svd", "linalg.expm", "linalg.qr", "shapes.top_k", "nn.sparse_softmax",
         "shapes.boolean_mask"]


def test_a_few_models_load_and_differentiate_in_a_fresh_process(tmp_path):
    rows = [r for r in ROWS if any(r.id.startswith(p) for p in FRESH)]
    assert len(rows) >= 4, [r.id for r in ROWS][:20]
    wanted = {}
    for k, row in enumerate(rows):
        fn, args, _ = row.values
        run = with_gradient(fn, len(args))
        saved_and_loaded(run, args, tmp_path / f"m{k}")
        xs = [mt.constant(a) for a in args]
        wanted[k] = (run(*xs), outer_gradient(run, xs))
        np.savez(tmp_path / f"in{k}.npz", *args)
    script = f"""
import numpy as np, minitape as mt, sys
sys.path.insert(0, {os.path.dirname(__file__)!r})
from test_saved_model_ops import outer_gradient
for k in range({len(rows)}):
    f = mt.saved_model.load({str(tmp_path)!r} + f"/m{{k}}").f
    data = np.load({str(tmp_path)!r} + f"/in{{k}}.npz")
    xs = [mt.constant(data[f"arr_{{i}}"]) for i in range(len(data.files))]
    y, grads = f(*xs)
    outer = outer_gradient(f, xs)
    np.savez({str(tmp_path)!r} + f"/out{{k}}.npz", y=y.numpy(),
             *[np.asarray(g) for g in list(grads) + list(outer)])
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(mt.__file__)), os.environ.get("PYTHONPATH", "")]))
    subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=300)
    for k in wanted:
        (y, grads), outer = wanted[k]
        got = np.load(tmp_path / f"out{k}.npz")
        np.testing.assert_allclose(got["y"], y.numpy(), rtol=1e-10)
        expected = list(grads) + list(outer)
        for i, g in enumerate(expected):
            np.testing.assert_allclose(got[f"arr_{i}"], np.asarray(g), rtol=1e-8, atol=1e-12)


# --- hostile files -----------------------------------------------------------------

def saved_json(tmp_path, fn, specs, *example):
    f = mt.function(fn, input_signature=specs)
    if example:
        f(*example)
    module = mt.Module()
    module.f = f
    path = tmp_path / "m"
    mt.saved_model.save(module, str(path))
    return path, json.loads((path / "saved_model.json").read_text())


def rewrite(path, doc):
    (path / "saved_model.json").write_text(json.dumps(doc))


def refused(path, match):
    start = time.perf_counter()
    with pytest.raises(mt.saved_model.LoadError, match=match):
        mt.saved_model.load(str(path))
    assert time.perf_counter() - start < 2.0


def resized(doc, old, new):
    """Every shape `old` in the document (inputs, signature, outputs) made `new`."""
    text = json.dumps(doc).replace(json.dumps(old), json.dumps(new))
    return json.loads(text)


@pytest.mark.parametrize("op, n", [(mt.linalg.cholesky, 2048), (mt.linalg.expm, 160),
                                   (lambda x: mt.linalg.svd(x)[0], 1024)])
def test_a_declared_huge_matrix_is_refused_by_cost(tmp_path, op, n):
    path, doc = saved_json(tmp_path, op, [mt.TensorSpec([3, 3], mt.float64)],
                           mt.constant(np.eye(3) * 2.0))
    doc = resized(doc, [3, 3], [n, n])
    doc = resized(doc, [3], [n])
    rewrite(path, doc)
    refused(path, r"graphs\.\S+_1\.nodes\[0\]: a call would do about \d+ element "
                  "operations by here, more than the limit of 1073741824")


def test_a_declared_huge_one_hot_or_tile_is_refused_without_allocating(tmp_path):
    path, doc = saved_json(tmp_path, lambda i: mt.tile(mt.one_hot(i, 3), [1, 2]),
                           [mt.TensorSpec([2], mt.int32)])
    node = doc["graphs"]["<lambda>_1"]["nodes"][0]
    assert node["op"] == "OneHot"
    node["attrs"]["depth"] = 1 << 27
    node["outputs"][0]["shape"] = [2, 1 << 27]
    rewrite(path, doc)
    refused(path, r"nodes\[0\]\.outputs\[0\]: float32\[2, 134217728\] is more than the "
                  "limit of 268435456 bytes")
    node["outputs"][0]["shape"] = [2, 3]
    rewrite(path, doc)
    refused(path, r"nodes\[0\]: op OneHot .*gives shape \(2, 134217728\), but the "
                  r"node declares \(2, 3\)")
    node["outputs"][0]["shape"] = [2, 3]
    node["attrs"]["depth"] = 3
    doc["graphs"]["<lambda>_1"]["nodes"][1]["attrs"]["multiples"] = {"tuple": [1 << 20, 1 << 20]}
    rewrite(path, doc)
    refused(path, r"nodes\[1\]: op Tile .* gives shape \(2097152, 3145728\), but the "
                  r"node declares \(2, 6\)")


def test_wrong_declared_shapes_and_dtypes_are_refused(tmp_path):
    path, doc = saved_json(tmp_path, lambda x: mt.linalg.svd(x),
                           [mt.TensorSpec([4, 3], mt.float64)], mt.constant(np.ones((4, 3))))
    node = doc["graphs"]["<lambda>_1"]["nodes"][0]
    assert node["op"] == "Svd" and [o["shape"] for o in node["outputs"]] == \
        [[3], [4, 3], [3, 3]]
    node["outputs"][1]["shape"] = [4, 4]
    rewrite(path, doc)
    refused(path, r"nodes\[0\]: op Svd on inputs \[float64\[4, 3\]\]: output 1 has shape "
                  r"\(4, 3\), but the node declares \(4, 4\)")
    node["outputs"][1]["shape"] = [4, 3]
    node["outputs"].append({"shape": [3, 3], "dtype": "float64"})
    rewrite(path, doc)
    refused(path, "has 3 output\\(s\\), 4 declared")
    node["outputs"].pop()
    node["outputs"][2]["dtype"] = "float32"
    rewrite(path, doc)
    refused(path, "output 2 has dtype float64, but the node declares float32")


def test_a_where_count_beyond_the_condition_is_refused(tmp_path):
    path, doc = saved_json(tmp_path, lambda x: mt.where(x > 0.0),
                           [mt.TensorSpec([3], mt.float64)], mt.constant(np.array([1.0, -1.0, 2.0])))
    node = doc["graphs"]["<lambda>_1"]["nodes"][1]
    assert node["op"] == "Where" and node["outputs"][0]["shape"] == [2, 1]
    node["outputs"][0]["shape"] = [4, 1]
    rewrite(path, doc)
    refused(path, r"nodes\[1\]: op Where .*needs a declared output shape \(count <= size")


BAD_ATTRS = [
    ({"multiples": "1, 2"}, r"nodes\[0\]: op Tile on inputs \[float64\[2, 3\]\]: attribute "
                            "multiples = '1, 2' is not a list of 2 integers"),
    ({"multiples": [1, 2]}, r"nodes\[0\]\.attrs\.multiples: expected null, a boolean, a number,"
                            " a string or a tagged value"),
    ({"multiples": {"tuple": [1, 2]}, "evil": 1}, "has no attribute 'evil'"),
    ({}, r"nodes\[0\]\.attrs: op Tile needs the attribute 'multiples'"),
    ({"multiples": {"tuple": [1, -2]}}, "is not a list of 2 integers in \\[0, 1099511627776\\]"),
    ({"multiples": {"tuple": [1, 2.0]}}, "is not a list of 2 integers"),
    ({"multiples": {"eval": "__import__('os')"}}, r"attrs\.multiples: unknown tag 'eval'"),
    ({"multiples": {"dtype": "object"}}, r"attrs\.multiples\.dtype: unknown dtype 'object'"),
    ({"multiples": {"tuple": [1, 10 ** 19]}}, r"attrs\.multiples\.tuple\[1\]: integer "
                                              r"\d+ is out of range"),
    ({"multiples": {"float": "1e999"}}, r"attrs\.multiples\.float: expected \"nan\""),
    ({"multiples": {"list": list(range(2000))}}, "list is longer than 1024"),
    ({"multiples": json.loads("[" * 40 + "]" * 40)}, "expected null, a boolean"),
    ({"multiples": json.loads('{"tuple": [' * 40 + "]}" * 40)}, "nested more than 32 levels"),
    ({"os.system": 1}, r"attrs: 'os.system' is not an attribute name"),
]


@pytest.mark.parametrize("attrs, match", BAD_ATTRS)
def test_bad_attributes_are_refused_naming_the_place(tmp_path, attrs, match):
    path, doc = saved_json(tmp_path, lambda x: mt.tile(x, [1, 2]),
                           [mt.TensorSpec([2, 3], mt.float64)])
    node = doc["graphs"]["<lambda>_1"]["nodes"][0]
    assert node["op"] == "Tile" and node["attrs"] == {"multiples": {"tuple": [1, 2]}}
    node["attrs"] = attrs
    rewrite(path, doc)
    refused(path, match)


def test_attribute_values_come_back_with_their_python_types(tmp_path):
    encode, decode = GENERIC
    attrs = {"a": (1, 2.0, None, True, "s"), "b": [np.float32, np.dtype("int64")],
             "c": float("inf"), "d": complex(1.0, -2.0), "e": np.int64(3), "f": ()}
    back = decode(json.loads(json.dumps(encode(attrs))), "attrs")
    assert back == {"a": (1, 2.0, None, True, "s"), "b": [np.dtype("float32"),
                    np.dtype("int64")], "c": float("inf"), "d": complex(1.0, -2.0),
                    "e": 3, "f": ()}
    assert [type(v) for v in back["a"]] == [int, float, type(None), bool, str]
    assert type(back["e"]) is int and type(back["f"]) is tuple
    nan = decode(json.loads(json.dumps(encode({"x": float("nan")}))), "attrs")["x"]
    assert nan != nan
    with pytest.raises(TypeError, match="save: attribute x is ndarray"):
        encode({"x": np.zeros(2)})


def test_hostile_segment_ids_are_refused_before_allocating(tmp_path):
    """A constant of segment ids edited to a huge last id would make
    segment_sum allocate that many rows: the replay checks the traced count
    first."""
    ids = mt.constant(np.array([0, 1, 1], np.int64))
    path, doc = saved_json(tmp_path, lambda x: mt.math.segment_sum(x, ids),
                           [mt.TensorSpec([3], mt.float64)])
    const, = doc["constants"]
    assert const["value"] == [0, 1, 1]
    const["value"] = [0, 1, 1 << 40]
    rewrite(path, doc)
    f = mt.saved_model.load(str(path)).f
    start = time.perf_counter()
    with pytest.raises(ValueError, match="there were 2 segments, now the last id is "
                                         "1099511627776"):
        f(np.ones(3))
    assert time.perf_counter() - start < 2.0


# --- fuzzing the new op types ----------------------------------------------------------

class OpsModel(mt.Module):
    """Most declared op types, in functions of fixed shapes (values from
    linspace(-1, 1) keep every op defined: matrices are made well-conditioned
    and positive definite inside)."""

    def __init__(self):
        super().__init__()
        self.ids = mt.Variable(np.array([0, 2, 1], np.int64), trainable=False, name="ids")

    @mt.function(input_signature=[mt.TensorSpec([3, 3], mt.float64)])
    def linalg(self, x):
        a = mt.matmul(x, x, transpose_a=True) + 3.0 * mt.eye(3, dtype=mt.float64)
        s, u, v = mt.linalg.svd(a)
        q, r = mt.linalg.qr(x)
        e, w = mt.linalg.eigh(a)
        sign, logdet = mt.linalg.slogdet(a)
        return {"chol": mt.linalg.cholesky(a), "svd": s + mt.reduce_sum(u * v, axis=0),
                "qr": q + r, "eigh": e + w[0], "det": mt.linalg.det(a) + sign * logdet,
                "expm": mt.linalg.expm(0.1 * x), "pinv": mt.linalg.pinv(x[:, :2]),
                "tri": mt.linalg.triangular_solve(a, x),
                "diag": mt.linalg.diag(mt.linalg.diag_part(x, k=1), k=-1)
                + mt.linalg.set_diag(x, mt.linalg.diag_part(x)),
                "band": mt.linalg.band_part(x, 0, 1), "cross": mt.linalg.cross(x, a)}

    @staticmethod
    def gather_gradient(x, ids):
        """The gradient of a gather is an UnsortedSegmentSum."""
        with mt.GradientTape() as tape:
            tape.watch(x)
            y = mt.reduce_sum(mt.sin(mt.gather(x, ids, axis=1)))
        return tape.gradient(y, x)

    @mt.function(input_signature=[mt.TensorSpec([3, 4], mt.float64)])
    def rest(self, x):
        ids = mt.cast(self.ids.read_value(), mt.int32)
        y = mt.nn.selu(x) + mt.nn.leaky_relu(x, 0.3) + mt.nn.relu6(x) + mt.nn.gelu(x)
        return {"y": y, "bias": mt.nn.bias_add(x, x[0]),
                "gather": mt.gather(x, ids) + mt.gather_nd(x, [[0, 1], [2, 3], [1, 1]])[0],
                "scatter": mt.scatter_nd([[1], [0]], x[:2], [3, 4]),
                "segment": self.gather_gradient(x, ids),
                "xent": mt.nn.softmax_cross_entropy_with_logits(mt.nn.softmax(x), x)
                + mt.nn.sparse_softmax_cross_entropy_with_logits(ids, x),
                "l2": mt.nn.l2_loss(x), "norm": mt.math.reduce_euclidean_norm(x, axis=1),
                "scan": mt.cumsum(x, axis=1, exclusive=True) + mt.math.cumprod(x, reverse=True),
                "sort": mt.sort(x) + mt.math.top_k(x, 4).values,
                "tile": mt.tile(x, [2, 1]),
                "mask": mt.boolean_mask(x, x > 0.0),
                "sum": mt.math.segment_sum(x, [0, 0, 2]),
                "hot": mt.one_hot(mt.argmax(x, axis=1), 4, dtype=mt.float64)
                * mt.cast(mt.reduce_any(x > 0.0), mt.float64)}


def test_damaged_copies_of_a_model_of_the_new_op_types_load_or_raise_load_error(tmp_path):
    """test_saved_model_fuzz.py's mutations on a model of the declared op
    types: every copy raises a LoadError from the loader's own checks, or loads,
    and then every node gives exactly the spec the loader worked out, or the
    op itself refuses the values (an index out of range, say)."""
    model_ = OpsModel()
    # traced with the values `exercise` calls with (the count of boolean_mask's
    # entries is a value, kept from the trace)
    model_.linalg(np.linspace(-1, 1, 9).reshape(3, 3))
    model_.rest(np.linspace(-1, 1, 12).reshape(3, 4))
    base_dir = tmp_path / "base"
    mt.saved_model.save(model_, str(base_dir))
    json_bytes = (base_dir / "saved_model.json").read_bytes()
    npz_bytes = (base_dir / "variables.npz").read_bytes()
    with np.load(base_dir / "variables.npz", allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    base = (json_bytes, npz_bytes, arrays, base_dir)
    exercise(mt.saved_model.load(str(base_dir)))
    rng = random.Random(int(os.environ.get("MINITAPE_FUZZ_SEED", "17")))
    path = tmp_path / "m"
    path.mkdir()
    outcomes = {"loaded": 0, "rejected": 0, "refused by an op": 0}
    cases = int(os.environ.get("MINITAPE_FUZZ_CASES", "300"))
    try:
        with np.errstate(all="ignore"):
            for case_number in range(cases):
                json_b, npz_b, kind = mutate(base, rng)
                kind = place(path, json_b, npz_b, kind, base_dir, rng)
                where = f"case {case_number} ({kind})"
                start = time.perf_counter()
                try:
                    loaded = mt.saved_model.load(str(path))
                except mt.saved_model.LoadError as e:
                    assert "unexpected error" not in str(e), f"{where}: {e}"
                    outcomes["rejected"] += 1
                    continue
                assert time.perf_counter() - start < 2.0, where
                if kind.startswith("bomb"):
                    continue
                try:
                    exercise(loaded)
                    outcomes["loaded"] += 1
                except (ValueError, TypeError, IndexError, np.linalg.LinAlgError) as e:
                    assert "declares" not in str(e), f"{where}: {type(e).__name__}: {e}"
                    outcomes["refused by an op"] += 1
                    if os.environ.get("MINITAPE_FUZZ_VERBOSE"):
                        print(where, type(e).__name__, str(e)[:200])
                except Exception as e:
                    cause = getattr(e, "error", None)
                    if not isinstance(cause, (ValueError, TypeError, IndexError)) \
                            or "declares" in str(e):
                        raise AssertionError(f"{where}: {type(e).__name__}: {e}") from e
                    outcomes["refused by an op"] += 1
                    if os.environ.get("MINITAPE_FUZZ_VERBOSE"):
                        print(where, type(e).__name__, str(e)[:200])
    finally:
        clear(path)
    print(outcomes)
    assert outcomes["rejected"] > cases // 2 and outcomes["loaded"] > cases // 50, outcomes


def test_eig_and_eigvals_save_with_their_complex_outputs(tmp_path):
    """Eig's gradient needs the complex family's ops (Conj, Real) to trace; its
    forward saves and loads on its own."""
    x = np.array([[0.0, -2.0], [1.0, 0.5]])  # complex eigenvalues

    def f(a):
        e, v = mt.linalg.eig(a)
        return e, v, mt.linalg.eigvals(a)
    loaded = saved_and_loaded(f, [x], tmp_path / "m")
    want = f(mt.constant(x))
    got = loaded(mt.constant(x))
    assert got[0].dtype == np.complex128 and got[1].shape == (2, 2)
    assert_same(got, want)


def test_an_attribute_a_saved_model_cannot_hold_is_refused_at_save(tmp_path):
    def odd(x):
        return operands.emit("OddAttrForTest", x._value + 1, (x,), {"table": np.zeros(2)})
    declare("OddAttrForTest", replay=lambda xs, a, o: odd(xs[0]),
            attrs_of=lambda op: {"table": op.attrs["table"]}, shape=operands.elementwise_shape)
    OPS["OddAttrForTest"] = OpDef(lambda xs, a, o: odd(xs[0]), 1,
                                  lambda op: {"table": op.attrs["table"]})
    try:
        f = mt.function(lambda x: odd(mt.convert_to_tensor(x)),
                        input_signature=[mt.TensorSpec([2], mt.float64)])
        module = mt.Module()
        module.f = f
        with pytest.raises(TypeError, match=r"save: attribute table is ndarray .*\(graph "
                                            r"<lambda>.*, nodes\[0\], op OddAttrForTest\)"):
            mt.saved_model.save(module, str(tmp_path / "m"))
        assert not (tmp_path / "m").exists()
    finally:
        del DECLARED["OddAttrForTest"]
        del OPS["OddAttrForTest"]
