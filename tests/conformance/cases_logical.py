"""Conformance cases for ops/logical.py (issue 16): logical_and/or/xor/not,
the `&`, `|`, `^`, `~` operators (logical on bools, bitwise on integers),
is_finite, is_nan, is_inf; errors on other dtypes."""
import numpy as np


def _bools(m):
    return m.constant([True, False, True]), m.constant([True, True, False])


def case_logical_ops(m):
    b, c = _bools(m)
    return [m.logical_and(b, c), m.logical_or(b, c), m.math.logical_xor(b, c),
            m.logical_not(b), m.math.logical_and(b, [[True], [False]])]


def case_operators_on_bools(m):
    b, c = _bools(m)
    return [b & c, b | c, b ^ c, ~b, b & True, True | b]


def case_operators_on_integers(m):
    i, j = m.constant([7, -7, 0]), m.constant([2, 2, 3])
    return [i & j, i | j, i ^ j, ~i]


def case_operators_on_floats_are_errors(m):
    return m.constant([1.0]) & m.constant([2.0])


case_operators_on_floats_are_errors.error_only = True


def case_logical_and_of_integers_is_an_error(m):
    return m.logical_and(m.constant([1]), m.constant([0]))


case_logical_and_of_integers_is_an_error.error_only = True


def case_value_tests(m):
    x = [1.0, np.nan, np.inf, -np.inf, 0.0]
    out = []
    for d in (m.float32, m.float64):
        t = m.constant(x, dtype=d)
        out += [m.math.is_finite(t), m.math.is_nan(t), m.math.is_inf(t)]
    return out + [m.math.is_nan([1.0, np.nan])]


def case_value_tests_of_integers_are_errors(m):
    return m.math.is_nan(m.constant([1, 2]))


case_value_tests_of_integers_are_errors.error_only = True
