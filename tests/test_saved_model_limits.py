"""Whatever `save` writes, `load` reads back: both check the same limits
(minitape/saved_model/limits.py), and `save` refuses, before it writes
anything, what `load` would refuse, with the same message."""
import json
import time

import numpy as np
import pytest

import minitape as mt
from minitape import saved_model as sm
from minitape.saved_model import LoadError


def chain(n):
    """A traced chain of n scalar multiplications, as a student's loop makes."""
    @mt.function(input_signature=[mt.TensorSpec([], mt.float64)])
    def f(y):
        for _ in range(n):
            y = y * 1.0001
        return y
    module = mt.Module()
    module.f = f
    return module


def test_a_20000_op_chain_saves_and_loads_back_with_its_gradient(tmp_path):
    path = tmp_path / "m"
    mt.saved_model.save(chain(20_000), path)
    loaded = mt.saved_model.load(path)
    x = mt.constant(1.0, mt.float64)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = loaded.f(x)
    np.testing.assert_allclose(y.numpy(), 1.0001 ** 20_000, rtol=1e-12)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 1.0001 ** 20_000, rtol=1e-12)


@pytest.mark.parametrize("limit, value", [("MAX_NODES", 50), ("MAX_JSON_ITEMS", 200),
                                          ("MAX_JSON_BYTES", 4000)])
def test_save_refuses_what_load_refuses_with_the_same_message(tmp_path, monkeypatch,
                                                              limit, value):
    model = chain(60)
    mt.saved_model.save(model, tmp_path / "written")   # under the real limits: fine
    monkeypatch.setattr(sm.limits, limit, value)
    with pytest.raises(LoadError) as loading:
        mt.saved_model.load(tmp_path / "written")
    with pytest.raises(ValueError) as saving:
        mt.saved_model.save(model, tmp_path / "refused")
    assert not (tmp_path / "refused").exists()          # nothing written
    problem = str(loading.value).split(": ", 2)[-1]     # after "<path>: <file>: "
    assert problem in str(saving.value), (str(loading.value), str(saving.value))
    assert "load would refuse" in str(saving.value)


def test_save_refuses_a_graph_over_the_work_limit(tmp_path, monkeypatch):
    @mt.function(input_signature=[mt.TensorSpec([64, 64], mt.float64)])
    def square(a):
        return a @ a @ a
    monkeypatch.setattr(sm.checks, "MAX_GRAPH_WORK", 300_000)  # two 64^3 products: 524288
    with pytest.raises(ValueError, match=r"save: graphs\.\w+\.nodes\[1\]: a call would do "
                       r"about \d+ element operations by here, more than the limit of 300000"):
        mt.saved_model.save(square, tmp_path / "m")
    assert not (tmp_path / "m").exists()


def test_a_file_at_the_item_limit_is_still_refused_quickly(tmp_path):
    """A cost bomb dressed as a long file: just over the item limit, refused
    before the JSON is parsed (well under 2 s)."""
    mt.saved_model.save(chain(3), tmp_path / "m")
    doc = json.loads((tmp_path / "m" / sm.JSON_NAME).read_text())
    graph = next(iter(doc["graphs"].values()))
    graph["outputs"] = {"list": ["t1"] * (sm.limits.MAX_JSON_ITEMS + 1)}
    (tmp_path / "m" / sm.JSON_NAME).write_text(json.dumps(doc))
    start = time.perf_counter()
    with pytest.raises(LoadError, match="more items than the limit"):
        mt.saved_model.load(tmp_path / "m")
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize("jit_compile", [False, True])
def test_the_limit_follows_a_loaded_function_into_a_new_function(tmp_path, monkeypatch,
                                                                  jit_compile):
    """A loaded any-shape function checks each call's sizes against the limits;
    wrapped in a new any-shape mt.function, it still does: the wrapper traces
    again for new sizes (the loaded graph's cost depends on them), so every
    size passes the check."""
    @mt.function(input_signature=[mt.TensorSpec([None], mt.float32)])
    def outer(x):
        return mt.einsum("i,j->ij", x, x)
    module = mt.Module()
    module.f = outer
    mt.saved_model.save(module, tmp_path / "m")
    loaded = mt.saved_model.load(tmp_path / "m")
    monkeypatch.setattr(sm.checks, "MAX_TENSOR_BYTES", 4 * 100 * 100)  # 100 x 100 float32

    wrapped = mt.function(lambda x: loaded.f(x), jit_compile=jit_compile,
                          input_signature=[mt.TensorSpec([None], mt.float32)])
    assert wrapped(mt.ones([3])).shape == (3, 3)
    assert wrapped(mt.ones([100])).shape == (100, 100)
    with pytest.raises(ValueError, match=r"loaded function outer.*float32\[101, 101\] is "
                                         "more than the limit"):
        wrapped(mt.ones([101]))
    with pytest.raises(ValueError, match="more than the limit"):
        loaded.f(mt.ones([101]))  # called directly: the same check
