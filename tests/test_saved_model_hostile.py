"""Hostile saved models: tiny files that ask for huge work or memory, links and
special files in place of the model's files, and errors that must say where.

Each hostile file has a harmless twin (the same graph with small sizes) that
loads and runs, so every refusal below is the limit at work, not a typo in the
file. A guard turns a hang into a failure; time and memory are measured in
benchmarks/saved_model_fuzz.py, not asserted here (except the peak memory of
a load in a fresh process, which is the point of those tests).
"""
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import zipfile
import zlib

import numpy as np
import pytest

import minitape as mt
from minitape import saved_model as sm
from minitape.saved_model import LoadError

GUARD_SECONDS = 20


@pytest.fixture(autouse=True)
def no_hang():
    """Fail instead of hanging (a FIFO opened for reading, an endless loop)."""
    if not hasattr(signal, "setitimer"):
        yield
        return

    def hang(signum, frame):
        raise TimeoutError(f"took more than {GUARD_SECONDS} s")
    previous = signal.signal(signal.SIGALRM, hang)
    signal.setitimer(signal.ITIMER_REAL, GUARD_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def spec(shape, dtype="float32"):
    return {"shape": list(shape), "dtype": dtype}


def node(op, inputs, out_shape, dtype="float32", attrs=None):
    return {"op": op, "name": op, "inputs": inputs, "attrs": attrs or {},
            "outputs": [spec(out_shape, dtype)]}


def model(inputs, nodes, variables=(), dims=None):
    """A document with one function `f` of len(inputs) tensor parameters,
    returning the last value."""
    n = len(inputs)
    outputs = f"t{n + len(nodes) - 1}"
    graph = {"arguments": [{"input": i} for i in range(n)], "dims": dims or {},
             "inputs": list(inputs), "captures": 0, "nodes": list(nodes), "outputs": outputs}
    return {"format": sm.FORMAT, "format_version": sm.FORMAT_VERSION,
            "variables": [dict(v, name=f"v{i}", trainable=True)
                          for i, v in enumerate(variables)],
            "constants": [], "objects": [{"attributes": {"f": {"function": 0}}}],
            "functions": [{"name": "f", "parameters": [
                {"name": f"x{i}", "kind": "POSITIONAL_OR_KEYWORD"} for i in range(n)],
                "input_signature": None, "traces": ["f_1"]}],
            "graphs": {"f_1": graph}, "gradients": {}}


def write(path, document, arrays=None):
    path.mkdir(exist_ok=True)
    text = document if isinstance(document, (str, bytes)) else json.dumps(document)
    (path / sm.JSON_NAME).write_bytes(text if isinstance(text, bytes) else text.encode())
    if arrays is not None or not (path / sm.NPZ_NAME).exists():
        np.savez(path / sm.NPZ_NAME, **(arrays or {}))
    return path


def einsum_model(n):
    return model([spec([n])] * 6, [node("Einsum", [f"t{i}" for i in range(6)], [],
                                         attrs={"equation": "a,b,c,d,e,f->"})])


def matmul_chain(n):
    return model([spec([n, n])], [node("MatMul", ["t0" if i == 0 else f"t{i}", "t0"], [n, n],
                                       attrs={"transpose_a": False, "transpose_b": False})
                                  for i in range(6)])


def broadcast_chain(n):
    nodes = [node("BroadcastTo", ["t0"], [n], "float64")]
    nodes += [node("Mul", [f"t{i}", f"t{i}"], [n], "float64") for i in range(1, 12)]
    return model([spec([1], "float64")], nodes)


# --- work and memory: refused from the declared shapes, before anything runs -------

@pytest.mark.parametrize("make, small, big, message", [
    (einsum_model, 3, 100, "element operations"),
    (matmul_chain, 8, 2048, "element operations"),
    (broadcast_chain, 16, 1 << 24, "a call would hold"),
])
def test_cost_bombs_are_refused_and_their_small_twins_run(tmp_path, make, small, big, message):
    twin = mt.saved_model.load(write(tmp_path / "small", make(small)))
    inputs = [mt.ones(s["shape"], s["dtype"]) for s in make(small)["graphs"]["f_1"]["inputs"]]
    assert twin.f(*inputs).shape == tuple(make(small)["graphs"]["f_1"]["nodes"][-1]
                                          ["outputs"][0]["shape"])
    with pytest.raises(LoadError, match=rf"saved_model.json: graphs.f_1.nodes\[\d+\]: .*"
                       rf"{message}.* more than the limit"):
        mt.saved_model.load(write(tmp_path / "big", make(big)))


def test_the_issue_files_are_small(tmp_path):
    for make, n in ((einsum_model, 100), (matmul_chain, 2048)):
        assert len(json.dumps(make(n))) < 1500


def peak_rss_of_load(tmp_path, path):
    """Load `path` in a fresh process; return (its peak RSS in MiB beyond the
    peak before loading, what load raised)."""
    code = textwrap.dedent(f"""
        import resource, minitape as mt
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            mt.saved_model.load({str(path)!r})
            outcome = "loaded"
        except mt.saved_model.LoadError as e:
            outcome = str(e)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print((after - before) // 1024)
        print(outcome)
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, cwd=tmp_path, check=False)
    assert result.returncode == 0, result.stderr
    grew, outcome = result.stdout.split("\n", 1)
    return int(grew), outcome.strip()


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in KiB is Linux's")
def test_a_declared_input_allocates_nothing(tmp_path):
    # One input of 2^26 complex128 numbers (1 GiB), 400 bytes of JSON.
    doc = model([spec([1 << 26], "complex128")], [node("Neg", ["t0"], [1 << 26], "complex128")])
    grew, outcome = peak_rss_of_load(tmp_path, write(tmp_path / "m", doc))
    assert "graphs.f_1.inputs[0]: complex128[67108864] is more than the limit" in outcome
    assert grew < 50
    # Within the one-tensor limit, still nothing is allocated at load time.
    doc = model([spec([1 << 24], "complex128")], [node("Neg", ["t0"], [1 << 24], "complex128")])
    grew, outcome = peak_rss_of_load(tmp_path, write(tmp_path / "m", doc))
    assert outcome == "loaded" and grew < 50


def deflated_zeros(z, name, nbytes):
    """Write an entry of `nbytes` zero bytes, compressed as it goes (~1000:1)."""
    info = zipfile.ZipInfo(name)
    info.compress_type = zipfile.ZIP_DEFLATED
    with z.open(info, "w", force_zip64=True) as f:
        chunk = bytes(1 << 20)
        for _ in range(nbytes >> 20):
            f.write(chunk)


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in KiB is Linux's")
def test_zip_bombs_are_refused_before_decompressing(tmp_path):
    # The issue's bomb: two consistent variables of 2^25 complex128 (512 MiB
    # each) in a small npz. The JSON alone is over the limits.
    variables = [spec([1 << 25], "complex128")] * 2
    path = write(tmp_path / "m", model([spec([])], [node("Neg", ["t0"], [])], variables))
    with zipfile.ZipFile(path / sm.NPZ_NAME, "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(2):
            z.writestr(f"v{i}.npy", b"")  # the data would be zeros; never read
    grew, outcome = peak_rss_of_load(tmp_path, path)
    assert "variables[0]: complex128[33554432] is more than the limit" in outcome
    assert grew < 50
    # Under the one-tensor limit but over the total: refused from the JSON too.
    variables = [spec([1 << 24], "float64")] * 3
    path = write(tmp_path / "m", model([spec([])], [node("Neg", ["t0"], [])], variables))
    with pytest.raises(LoadError, match="declare 402653184 bytes in all, more than the limit"):
        mt.saved_model.load(path)
    # A small declared variable whose zip entry inflates to 64 MiB: the sizes
    # in the zip's directory are checked before anything is decompressed.
    path = write(tmp_path / "m", model([spec([])], [node("Neg", ["t0"], [])],
                                       [spec([4], "float64")]))
    with zipfile.ZipFile(path / sm.NPZ_NAME, "w", zipfile.ZIP_DEFLATED) as z:
        deflated_zeros(z, "v0.npy", 64 << 20)
    assert os.path.getsize(path / sm.NPZ_NAME) < 1 << 20
    grew, outcome = peak_rss_of_load(tmp_path, path)
    assert "variables.npz: array v0: its zip entry is not a stored or deflated, unencrypted " \
           ".npy of the declared float64[4]" in outcome
    assert grew < 50


def test_an_encrypted_zip_entry_is_refused(tmp_path):
    doc = model([spec([])], [node("Neg", ["t0"], [])], [spec([2])])
    path = write(tmp_path / "m", doc, {"v0": np.zeros(2, np.float32)})
    data = bytearray((path / sm.NPZ_NAME).read_bytes())
    at = data.index(b"PK\x01\x02")  # the entry in the central directory: flags at +8
    data[at + 8] |= 0x1  # "encrypted"
    (path / sm.NPZ_NAME).write_bytes(bytes(data))
    with pytest.raises(LoadError, match="array v0: its zip entry is not a stored or deflated, "
                       "unencrypted"):
        mt.saved_model.load(path)


def test_a_zip_directory_with_many_entries_is_refused_before_parsing(tmp_path):
    path = write(tmp_path / "m", model([spec([])], [node("Neg", ["t0"], [])]))
    with zipfile.ZipFile(path / sm.NPZ_NAME, "w") as z:
        for i in range(5000):
            z.writestr(f"x{i}", b"")
    with pytest.raises(LoadError, match="variables.npz: its zip directory lists 5000 entries"):
        mt.saved_model.load(path)


def test_a_polymorphic_graph_is_checked_again_at_each_call(tmp_path):
    # f(x: [n0]) = broadcast_to(x, [n0, 1000]) * 2: fine for small n0, over the
    # limit on what one call holds for a huge one, refused before computing.
    doc = model([{"shape": ["n0", 1], "dtype": "float64"}],
                [{"op": "BroadcastTo", "name": "b", "inputs": ["t0"], "attrs": {},
                  "outputs": [{"shape": ["n0", 1000], "dtype": "float64"}]},
                 {"op": "Neg", "name": "n", "inputs": ["t1"], "attrs": {},
                  "outputs": [{"shape": ["n0", 1000], "dtype": "float64"}]},
                 {"op": "Neg", "name": "n", "inputs": ["t2"], "attrs": {},
                  "outputs": [{"shape": ["n0", 1000], "dtype": "float64"}]}],
                dims={"n0": 13})
    loaded = mt.saved_model.load(write(tmp_path / "m", doc))
    assert loaded.f(mt.ones([5, 1], mt.float64)).shape == (5, 1000)
    with pytest.raises(ValueError, match=r"loaded function f, graph f_1: nodes\[2\]: a call "
                       "would hold .* more than the limit"):
        loaded.f(mt.ones([30_000, 1], mt.float64))   # 240 MB per value


def test_a_polymorphic_graph_that_only_fits_its_traced_sizes_is_refused_at_the_call(tmp_path):
    # x * c with c of shape [13]: declared [n0], true only for n0 = 13 (and 1
    # gives [13], not [1]). Nothing silently wrong: the call is refused.
    doc = model([{"shape": ["n0"], "dtype": "float32"}],
                [{"op": "Mul", "name": "m", "inputs": ["t0", "c0"], "attrs": {},
                  "outputs": [{"shape": ["n0"], "dtype": "float32"}]}], dims={"n0": 13})
    doc["constants"] = [{"shape": [13], "dtype": "float32"}]
    loaded = mt.saved_model.load(write(tmp_path / "m", doc, {"c0": np.ones(13, np.float32)}))
    assert loaded.f(mt.ones([13])).shape == (13,)
    with pytest.raises(ValueError, match=r"nodes\[0\]: op Mul on inputs \[float32\[1\], "
                       r"float32\[13\]\]: gives shape \(13,\), but the node declares \(1,\)"):
        loaded.f(mt.ones([1]))


def test_a_graph_for_inputs_of_any_shape_is_checked_at_each_call(tmp_path):
    # f(x) = x * c with c of shape [13] and x of any shape ("shape": null).
    doc = model([{"shape": None, "dtype": "float32"}],
                [{"op": "Mul", "name": "m", "inputs": ["t0", "c0"], "attrs": {},
                  "outputs": [{"shape": None, "dtype": "float32"}]}])
    doc["constants"] = [{"shape": [13], "dtype": "float32"}]
    loaded = mt.saved_model.load(write(tmp_path / "m", doc, {"c0": np.ones(13, np.float32)}))
    assert loaded.f(mt.ones([])).shape == (13,)
    assert loaded.f(mt.ones([2, 13])).shape == (2, 13)
    with pytest.raises(ValueError, match=r"nodes\[0\]: op Mul on inputs \[float32\[2\], "
                       r"float32\[13\]\]: shape mismatch"):
        loaded.f(mt.ones([2]))
    # What a call would hold is worked out from the call's shapes, before computing.
    (trace,) = loaded.f.concrete_functions()
    sm.check_graph(trace.graph, [mt.TensorSpec([1 << 20, 13])])
    with pytest.raises(ValueError, match=r"nodes\[0\].outputs\[0\]: float32\[8388608, 13\] "
                       "is more than the limit"):
        sm.check_graph(trace.graph, [mt.TensorSpec([1 << 23, 13])])


# --- links and special files ---------------------------------------------------------

@pytest.fixture
def good(tmp_path):
    """A valid model elsewhere, to link to."""
    class M(mt.Module):
        @mt.function(input_signature=[mt.TensorSpec([2])])
        def f(self, x):
            return x * 2.0
    mt.saved_model.save(M(), tmp_path / "good")
    return tmp_path / "good"


@pytest.mark.parametrize("name", [sm.JSON_NAME, sm.NPZ_NAME])
@pytest.mark.parametrize("target", ["/etc/passwd", "/dev/zero", "good", "dangling"])
def test_files_that_are_symbolic_links_are_not_followed(tmp_path, good, name, target):
    path = tmp_path / "m"
    path.mkdir()
    for other in (sm.JSON_NAME, sm.NPZ_NAME):
        if other != name:
            (path / other).write_bytes((good / other).read_bytes())
    link_to = {"good": good / name, "dangling": tmp_path / "nothing"}.get(target, target)
    os.symlink(link_to, path / name)
    with pytest.raises(LoadError, match=f"m: {name}: is a symbolic link"):
        mt.saved_model.load(path)
    mt.saved_model.load(good)  # the target itself is fine


def test_the_model_directory_must_not_be_a_link(tmp_path, good):
    os.symlink(good, tmp_path / "link")
    with pytest.raises(LoadError, match="link: no saved model here: it is a symbolic link"):
        mt.saved_model.load(tmp_path / "link")
    os.symlink(good / sm.JSON_NAME, tmp_path / "file-link")
    with pytest.raises(LoadError, match="file-link: no saved model here"):
        mt.saved_model.load(tmp_path / "file-link")
    # A link higher up the path is the user's own business.
    through = os.path.join(tmp_path, "link", ".")  # pathlib would drop the "."
    assert mt.saved_model.load(through).f(mt.ones([2])).shape == (2,)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("name", [sm.JSON_NAME, sm.NPZ_NAME])
def test_fifos_and_directories_are_refused_without_blocking(tmp_path, good, name):
    path = tmp_path / "m"
    path.mkdir()
    for other in (sm.JSON_NAME, sm.NPZ_NAME):
        if other != name:
            (path / other).write_bytes((good / other).read_bytes())
    os.mkfifo(path / name)
    with pytest.raises(LoadError, match=f"m: {name}: is not a regular file"):
        mt.saved_model.load(path)
    os.remove(path / name)
    os.mkdir(path / name)
    with pytest.raises(LoadError, match=f"m: {name}: is not a regular file"):
        mt.saved_model.load(path)
    mt.saved_model.load(good)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_as_the_directory_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "m")
    with pytest.raises(LoadError, match="m: no saved model here"):
        mt.saved_model.load(tmp_path / "m")


def test_an_oversized_json_file_is_refused_before_reading(tmp_path):
    path = write(tmp_path / "m", model([spec([])], [node("Neg", ["t0"], [])]))
    with open(path / sm.JSON_NAME, "r+b") as f:
        f.truncate(sm.MAX_JSON_BYTES + 1)  # sparse: nothing is written
    with pytest.raises(LoadError, match=f"saved_model.json: is {sm.MAX_JSON_BYTES + 1} bytes, "
                       "more than the limit"):
        mt.saved_model.load(path)


def test_too_many_items_are_refused_before_parsing(tmp_path):
    doc = model([spec([])], [node("Neg", ["t0"], [])])
    doc["graphs"]["f_1"]["outputs"] = {"list": ["t1"] * 1000}
    mt.saved_model.load(write(tmp_path / "m", doc))  # a wide structure is fine
    doc["graphs"]["f_1"]["outputs"] = {"list": ["t1"] * (sm.MAX_JSON_ITEMS + 1)}
    with pytest.raises(LoadError, match=r"saved_model.json: holds \d+ commas, more items "
                       "than the limit"):
        mt.saved_model.load(write(tmp_path / "m", doc))


# --- every error names the file and the place ---------------------------------------

def test_a_huge_integer_names_the_file_and_the_line(tmp_path):
    doc = json.dumps(model([spec([])], [node("Neg", ["t0"], [])]), indent=1)
    doc = doc.replace('"captures": 0', '"captures": ' + "7" * 5000)
    at = doc.index("7777")
    line, column = doc[:at].count("\n") + 1, at - doc.rindex("\n", 0, at)
    with pytest.raises(LoadError, match=rf"m: saved_model.json: line {line} column {column}: an "
                       "integer of 5000 digits"):
        mt.saved_model.load(write(tmp_path / "m", doc))


def test_deep_nesting_names_the_file_and_the_place(tmp_path):
    doc = '{"format": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(LoadError, match="m: saved_model.json: line 1 column 111: JSON nested "
                       "too deeply"):
        mt.saved_model.load(write(tmp_path / "m", doc))
    # Deep, but parseable: the checks name the JSON path.
    doc = model([spec([])], [node("Neg", ["t0"], [])])
    deep = "t1"
    for _ in range(200):
        deep = {"list": [deep]}
    doc["graphs"]["f_1"]["outputs"] = deep
    with pytest.raises(LoadError, match=r"m: saved_model.json: graphs.f_1.outputs(\.list\[0\])"
                       r"{33}: nested more than 32 levels deep"):
        mt.saved_model.load(write(tmp_path / "m", doc))


@pytest.mark.parametrize("document, message", [
    (b"\xff\xfe", "saved_model.json: not UTF-8 text (byte 0)"),
    ("[]", "saved_model.json: the document: expected an object, got a list"),
    ('{"format": 1e999}', "saved_model.json: the document: missing field"),
])
def test_other_json_errors_name_the_file(tmp_path, document, message):
    with pytest.raises(LoadError, match=re.escape(message)):
        mt.saved_model.load(write(tmp_path / "m", document))


def test_npz_errors_name_the_file_and_the_array(tmp_path):
    doc = model([spec([])], [node("Neg", ["t0"], [])], [spec([2])])
    with pytest.raises(LoadError, match="m: variables.npz: array v0: has shape \\(3,\\), "
                       "saved_model.json declares \\(2,\\)"):
        mt.saved_model.load(write(tmp_path / "m", doc, {"v0": np.zeros(3, np.float32)}))
    path = tmp_path / "m" / sm.NPZ_NAME
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("v0.npy", zlib.compress(b"x") * 10)
    with pytest.raises(LoadError, match="m: variables.npz: array v0: "):
        mt.saved_model.load(tmp_path / "m")
