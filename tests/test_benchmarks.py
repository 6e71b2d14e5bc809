"""The benchmarks compare like with like: each NumPy-by-hand workload (and each
installed peer's) computes the same numbers as minitape. Small sizes, no timing."""
import importlib.util
import pathlib

import numpy as np
import pytest

_PATH = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"
_spec = importlib.util.spec_from_file_location("benchmarks_run", _PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

SIZES = (16, 200)  # W6: m < 2 * 64 (reverse) and m > 2 * 64 (forward, when auto)


def _value(result):
    return np.asarray(result.numpy() if hasattr(result, "numpy") else result, np.float64)


def _minitape():
    return {key: _value(fn()) for key, fn in bench.minitape_workloads(SIZES).items()}


@pytest.fixture(scope="module")
def minitape_values():
    return _minitape()


def test_w2_chain_by_hand_matches_minitape():
    np.testing.assert_allclose(_value(bench.w2_numpy(20)()), _value(bench.w2_minitape(20)()),
                               rtol=1e-5)


def test_every_numpy_workload_matches_minitape(minitape_values):
    by_hand = bench.numpy_workloads(SIZES)
    assert {w for w, _ in by_hand} == {w for w, _ in minitape_values}
    for (workload, _), fn in by_hand.items():
        expected = _value(fn())
        for (w, system), value in minitape_values.items():
            if w == workload:
                np.testing.assert_allclose(value, expected, rtol=2e-4, atol=1e-5,
                                           err_msg=f"{workload} {system}")


def test_compiled_workloads_compute_the_same_numbers(minitape_values):
    for (workload, system), fn in bench.compiled_workloads(SIZES).items():
        if workload == "W2":
            expected = _value(bench.w2_numpy()())
        else:
            expected = next(v for (w, _), v in minitape_values.items() if w == workload)
        np.testing.assert_allclose(_value(fn()), expected, rtol=2e-4, atol=1e-5,
                                   err_msg=f"{workload} {system}")


def test_w6_directions_all_run_and_the_table_and_plot_are_made(tmp_path, capsys):
    rows = [{"workload": "W6 m=4096", "system": s, "seconds": t} for s, t in
            (("minitape (auto)", 5e-4), ("minitape (reverse)", 9e-2),
             ("minitape (forward)", 5e-4), ("numpy by hand", 1e-4))]
    rows += [{"workload": "W2", "system": "minitape", "seconds": 2e-6},
             {"workload": "W2", "system": "numpy by hand", "seconds": 4e-7}]
    bench.print_table(rows)
    out = capsys.readouterr().out
    assert "W6 m=4096  minitape (auto)" in out and "ok" in out and "5.0x" in out
    bench.plot_w6(rows, tmp_path / "w6.png")
    assert (tmp_path / "w6.png").stat().st_size > 1000


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("peer", ["autograd", "jax", "torch"])
def test_installed_peers_compute_the_same_numbers(peer, minitape_values):
    pytest.importorskip(peer)
    runs = getattr(bench, f"{peer}_workloads")(SIZES)
    for (workload, system), fn in runs.items():
        if workload == "W2":
            expected = _value(bench.w2_numpy()())
        else:
            expected = next(v for (w, _), v in minitape_values.items() if w == workload)
        np.testing.assert_allclose(_value(fn()), expected, rtol=2e-4, atol=1e-5,
                                   err_msg=f"{workload} {system}")
