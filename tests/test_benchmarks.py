"""The benchmarks compare like with like: each NumPy-by-hand workload (and each
installed peer's) computes the same numbers as minitape. Small sizes, no timing."""
import importlib.util
import pathlib
import re
import subprocess
import sys

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


def _eager(workload):
    """The eager workload computing the same numbers (eager W6 reads W as an
    argument: the compiled "W6 arg" has no eager twin of its own)."""
    return workload.replace("W6 arg", "W6")


def test_every_numpy_workload_matches_minitape(minitape_values):
    by_hand = bench.numpy_workloads(SIZES)
    assert {_eager(w) for w, _ in by_hand} == {w for w, _ in minitape_values}
    assert {w for w, _ in by_hand} - {w for w, _ in minitape_values} == \
        {f"W6 arg m={m}" for m in SIZES}
    for (workload, _), fn in by_hand.items():
        expected = _value(fn())
        for (w, system), value in minitape_values.items():
            if w == _eager(workload):
                np.testing.assert_allclose(value, expected, rtol=2e-4, atol=1e-5,
                                           err_msg=f"{workload} {system}")


def test_compiled_workloads_compute_the_same_numbers(minitape_values):
    for (workload, system), fn in bench.compiled_workloads(SIZES).items():
        if workload == "W2":
            expected = _value(bench.w2_numpy()())
        else:
            expected = next(v for (w, _), v in minitape_values.items() if w == _eager(workload))
        np.testing.assert_allclose(_value(fn()), expected, rtol=2e-4, atol=1e-5,
                                   err_msg=f"{workload} {system}")


def _rows_of_a_full_run():
    """Made-up timings with every system and workload a full run measures."""
    labels = {"W2": ["minitape", "numpy by hand", "micrograd", "autograd", "jax (jit)", "torch"],
              "W2 compile": [], "T1": ["minitape", "numpy by hand", "jax (jit)", "torch"],
              "W6 m=4096": ["minitape (auto)", "minitape (reverse)", "minitape (forward)",
                            "numpy by hand", "autograd", "jax jacfwd (jit)", "jax jacrev (jit)",
                            "torch jacfwd", "torch jacrev"],
              "W6 arg m=4096": ["numpy by hand", "jax jacfwd (jit)"]}
    for w in ("W3", "W4", "W5"):
        labels[w] = ["minitape (pfor)", "minitape (loop)", "numpy by hand", "autograd",
                     "jax (jit)", "torch (func)"]
    rows = [{"workload": w, "system": s, "seconds": 1e-4 * (i + 1)}
            for w, systems in labels.items() for i, s in enumerate(systems)]
    rows += [{"workload": w, "system": "minitape (compiled)", "seconds": 2e-4} for w in labels]
    rows += [{"workload": "chain", "system": "minitape", "seconds": 9.0, "ops": 10**6,
              "peak_mib": 250.0, "import_mib": 40.0, "gradient": 2.5, "value": 2.5},
             {"workload": "import", "system": "minitape", "repeats": 40, "numpy": 0.1,
              "minitape": 0.105, "cpu_numpy": 0.05, "cpu_minitape": 0.052,
              "importtime_repeats": 10, "importtime_numpy": 0.09,
              "importtime_minitape": 0.095, "heavy": []}]
    meta = {"date": "2026-11-28", "python": "3.11.7", "machine": "Linux x86_64, 2 cores",
            "versions": {"NumPy": "2.4.6"}, "threads": None, "rounds": 3, "quick": False,
            "systems": list(bench.SYSTEMS), "missing": []}
    return rows, meta


def _tables(text):
    """Each Markdown table in `text`: its header and its first column."""
    tables, current = [], None
    for line in text.splitlines():
        if line.startswith("| ") and current is None:
            current = ([c.strip() for c in line.strip("|").split("|")], [])
        elif line.startswith("| ") and not line.startswith("| ---"):
            current[1].append(line.strip("|").split("|")[0].strip())
        elif not line.startswith("|") and current is not None:
            tables.append(current)
            current = None
    return tables + ([current] if current else [])


def test_the_tables_have_every_system_every_workload_and_the_goals():
    rows, meta = _rows_of_a_full_run()
    tables = _tables(bench.tables_block(rows, meta))
    times, ratios, extras, variants = tables
    assert times[0] == ["workload", "minitape eager", "minitape compiled", "NumPy by hand",
                        "micrograd", "autograd", "JAX (jit)", "PyTorch"]
    assert [row.split(":")[0] for row in times[1]] == ["W2", "W2", "W3", "W4", "W5", "W6",
                                                       "W6 arg", "T1"]
    assert ratios[0] == ["ratio of medians", "goal", "W2", "W3", "W4", "W5", "W6", "W6 arg"]
    assert len(ratios[1]) == 3 and len(extras[1]) == 7
    assert variants[1] == ["W3", "W4", "W5", "W6 m=4096", "W6 m=4096", "W6 m=4096",
                           "W6 m=4096"]  # loop Jacobians, reverse and forward, jacrev x2
    block = bench.tables_block(rows, meta)
    assert "| W2: 1,000 scalar ops, forward + backward, per op | 100 µs | 200 µs |" in block
    assert "| minitape compiled ÷ NumPy by hand | ≤ 1.5 | 1.00 ✓ | 0.67 ✓ |" in block
    assert "| minitape eager ÷ micrograd, per op | < 1 | 0.33 ✓ |" in block
    assert "| 2.5 ✓ |" in block and "1.05 (105 ms ÷ 100 ms)" in block


def test_the_docs_tables_are_what_the_harness_writes():
    """docs/benchmarks.md holds a full run's tables: the same tables, columns and
    rows as the harness writes now (`python benchmarks/run.py --write ...`)."""
    rows, meta = _rows_of_a_full_run()
    written = _tables(bench.tables_block(rows, meta))
    in_docs = _tables(bench.read_block(bench.ROOT + "/docs/benchmarks.md", "tables"))
    assert [t[0] for t in in_docs] == [t[0] for t in written]
    assert [t[1] for t in in_docs[:3]] == [t[1] for t in written[:3]]
    text = bench.read_block(bench.ROOT + "/docs/benchmarks.md", "tables")
    assert "(--quick)" not in text and "not installed" not in text
    summary = bench.read_block(bench.ROOT + "/docs/benchmarks.md", "summary")

    def heads(text):  # each line up to its first colon, the run's date left out
        return [re.sub(r"\d{4}-\d\d-\d\d", "DATE", line.split(":")[0])
                for line in text.splitlines()]
    assert heads(summary) == heads(bench.summary_block(rows, meta))


def test_a_quick_run_measures_and_writes_every_table(tmp_path):
    """The smoke configuration CI runs: every code path, in seconds."""
    docs = tmp_path / "benchmarks.md"
    docs.write_text("# x\n<!-- benchmarks:tables begin -->\nold\n<!-- benchmarks:tables end -->\n",
                    encoding="utf-8")
    done = subprocess.run([sys.executable, str(_PATH), "--quick", "--systems",
                           "minitape,compiled,numpy,chain,import", "--write", str(docs)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    text = docs.read_text(encoding="utf-8")
    assert "old" not in text and "(--quick)" in text
    times, ratios, extras, _ = _tables(text)
    assert len(times[1]) == 8 and len(extras[1]) == 7
    line = next(r for r in text.splitlines() if r.startswith("| W2: 1,000"))
    assert line.count("µs") == 3  # eager, compiled and NumPy by hand
    assert "the gradient at x = 1" in text and " ✓ |" in text.split("the gradient at x = 1")[1]
    assert "| matplotlib, ipywidgets or IPython loaded by `import minitape` | none |" in text


def test_writing_needs_the_markers(tmp_path):
    rows, meta = _rows_of_a_full_run()
    (tmp_path / "x.md").write_text("no markers\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="no <!-- benchmarks"):
        bench.write_blocks(tmp_path / "x.md", rows, meta)


def test_the_w6_plot_is_made(tmp_path):
    rows, _ = _rows_of_a_full_run()
    bench.plot_w6(rows, tmp_path / "w6.png")
    assert (tmp_path / "w6.png").stat().st_size > 1000


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("peer", ["micrograd", "autograd", "jax", "torch"])
def test_installed_peers_compute_the_same_numbers(peer, minitape_values):
    pytest.importorskip(peer)
    runs = getattr(bench, f"{peer}_workloads")(SIZES)
    for (workload, system), fn in runs.items():
        if workload == "W2":
            expected = _value(bench.w2_numpy()())
        else:
            expected = next(v for (w, _), v in minitape_values.items() if w == _eager(workload))
        np.testing.assert_allclose(_value(fn()), expected, rtol=2e-4, atol=1e-5,
                                   err_msg=f"{workload} {system}")
