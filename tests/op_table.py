"""The op table's building blocks, shared by test_ops_gradients.py (the
original ops) and by each family's rows in `op_table_<family>.py`.

One table row is one op call: `case(id, fn, *float64 inputs)`. A family
module defines `CASES = [case(...), ...]`; `family_cases()` collects them all,
so every row gets the checks of test_ops_gradients.py (finite differences to
third order, vectorised Jacobians and Hessians), test_forward.py (forward vs
reverse) and test_compiler.py (compiled vs eager).
"""
import importlib
import pathlib

import numpy as np
import pytest

_rng = np.random.default_rng(1234)


def R(*shape):
    """Uniform in [-1, 1)."""
    return _rng.uniform(-1.0, 1.0, shape)


def P(*shape):
    """Positive: uniform in [0.5, 2)."""
    return _rng.uniform(0.5, 2.0, shape)


def S(*shape):
    """Away from zero: +-[0.3, 1.5), random signs."""
    return _rng.choice([-1.0, 1.0], shape) * _rng.uniform(0.3, 1.5, shape)


def D(*shape):
    """Distinct values, well apart (no ties for max/min), none near 0."""
    n = int(np.prod(shape))
    values = np.concatenate([np.linspace(-2.0, -0.2, n - n // 2), np.linspace(0.25, 2.0, n // 2)])
    return _rng.permutation(values).reshape(shape)


def M(*shape):
    """Well-conditioned square matrices (batch allowed): 3 I + small noise."""
    return 3.0 * np.eye(shape[-1]) + 0.3 * _rng.standard_normal(shape)


def case(name, fn, *args, marks=(), **check_kwargs):
    return pytest.param(fn, [np.asarray(a, dtype=np.float64) for a in args], check_kwargs,
                        id=name, marks=marks)




def family_cases():
    """The CASES of every tests/op_table_<family>.py, in file-name order."""
    rows = []
    for path in sorted(pathlib.Path(__file__).parent.glob("op_table_*.py")):
        rows += importlib.import_module(path.stem).CASES
    return rows
