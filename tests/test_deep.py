"""Long chains of ops (the backward walk is iterative, never recursive) and the
cost of `import minitape`."""
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import minitape as mt


def _multiply_chain(n, factor):
    """y = x * factor * factor * ... (n multiplications), float64; returns
    (y, dy/dx, number of recorded ops)."""
    x = mt.constant(np.float64(1.0))
    c = mt.constant(np.float64(factor))
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(n):
            y = y * c
    n_ops = len(tape.operations)
    return y, tape.gradient(y, x), n_ops


def test_chain_of_ten_thousand_multiplications():
    # 10,000 nested calls would pass Python's default recursion limit (1000).
    n = 10_000
    y, g, n_ops = _multiply_chain(n, 1.0001)
    assert n_ops == n
    expected = math.exp(n * math.log1p(1e-4))  # 1.0001 ** n = e ** 0.99995...
    assert float(y) == pytest.approx(expected, rel=1e-10)
    assert float(g) == pytest.approx(expected, rel=1e-10)


def test_chain_of_ten_thousand_ops_alternating_sin():
    # y <- sin(y) * c, 5,000 times each; the derivative is the product of
    # cos(y_i) * c along the way, computed here with NumPy in the same order.
    n, c = 5_000, 1.001
    x0 = 1.2
    x = mt.constant(np.float64(x0))
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(n):
            y = mt.sin(y) * c
    assert len(tape.operations) == 2 * n
    g = tape.gradient(y, x)

    value, derivative = np.float64(x0), np.float64(1.0)
    for _ in range(n):
        derivative *= np.cos(value) * c
        value = np.sin(value) * c
    assert float(y) == pytest.approx(value, rel=1e-12)
    assert float(g) == pytest.approx(derivative, rel=1e-9)
    assert abs(float(g)) > 1e-10  # about 7e-9: small, but not zero


@pytest.mark.slow
def test_chain_of_a_million_multiplications():
    n = 1_000_000
    y, g, n_ops = _multiply_chain(n, 1.0000001)
    assert n_ops == n
    expected = math.exp(n * math.log1p(1e-7))  # about e ** 0.1 = 1.10517...
    assert float(y) == pytest.approx(expected, rel=1e-9)
    assert float(g) == pytest.approx(expected, rel=1e-9)


def test_import_minitape_does_not_import_plotting_or_widgets():
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import minitape\n"
        "heavy = sorted(m for m in set(sys.modules) - before\n"
        "               if m.split('.')[0] in ('matplotlib', 'ipywidgets', 'IPython'))\n"
        "assert 'minitape' in sys.modules\n"
        "print(repr(heavy))\n"
    )
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "MPL"))}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=env, cwd=os.path.dirname(os.path.dirname(mt.__file__)),
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
