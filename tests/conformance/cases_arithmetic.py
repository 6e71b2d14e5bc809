"""Conformance cases for ops/elementwise.py (issue 16): truediv, floordiv,
floormod and the `//`, `%` operators, divide_no_nan, multiply_no_nan,
squared_difference, add_n, ceil: values, dtypes (integers stay integers in
floordiv and floormod, become floats in truediv), gradients (None for
floordiv and ceil), zeros where TensorFlow makes them, errors."""
import numpy as np

from .probes import probe

X = [7.5, -7.5, 0.25]
Y = [2.0, 2.0, -3.0]


def _ints(m):
    return m.constant([7, -7, 0]), m.constant([2, 2, 3])


def case_integer_division(m):
    i, j = _ints(m)
    return [m.math.floordiv(i, j), m.math.floormod(i, j), i // j, i % j, i // 2, 7 // j,
            7 % j, m.math.truediv(i, j), m.math.mod(i, j)]


def case_float_division_values(m):
    f, g = m.constant(X), m.constant(Y)
    return [f // g, f % g, m.math.floordiv(f, 0.0), m.math.floormod(f, 0.0),
            m.math.floordiv(m.constant(1.0), 0.1), m.math.floormod(m.constant(1.0), 0.1),
            m.math.floormod(m.constant([0.0]), -3.0)]


def case_truediv_dtypes(m):
    return [m.math.truediv(m.constant(np.array([1, 2], d)), m.constant(np.array([2, 4], d)))
            for d in (np.int8, np.int16, np.int32, np.int64, np.uint8)]


def case_truediv(m):
    return probe(m, m.truediv, X, Y)


def case_truediv_of_integers_has_no_gradient(m):
    i, j = _ints(m)
    with m.GradientTape() as tape:
        tape.watch([i, j])
        y = m.math.truediv(i, j)
    return y, tape.gradient(y, [i, j])


def case_floordiv_has_no_gradient(m):
    return probe(m, m.math.floordiv, X, Y, parts=("value", "grad", "jvp"))


def case_floormod(m):
    return probe(m, m.math.floormod, X, Y)


def case_percent_operator(m):
    return probe(m, lambda x, y: x % y, [[3.5], [-1.25]], [1.5, 0.75])


def case_integer_division_by_zero_is_an_error(m):
    i, _ = _ints(m)
    return i // 0


case_integer_division_by_zero_is_an_error.error_only = True


def case_integer_modulo_by_zero_is_an_error(m):
    i, _ = _ints(m)
    return m.math.floormod(i, m.constant([1, 0, 2]))


case_integer_modulo_by_zero_is_an_error.error_only = True


def case_divide_no_nan(m):
    return probe(m, m.math.divide_no_nan, X, Y)


def case_divide_no_nan_at_zero(m):
    return probe(m, m.math.divide_no_nan, [7.5, 0.0, 1.0], [0.0, 0.0, 2.0],
                 parts=("value", "grad", "jvp"))


def case_divide_no_nan_of_integers(m):
    i, j = _ints(m)
    return m.math.divide_no_nan(i, m.constant([2, 0, 3]))


def case_multiply_no_nan(m):
    return probe(m, m.math.multiply_no_nan, X, Y)


def case_multiply_no_nan_where_y_is_zero(m):
    return probe(m, m.math.multiply_no_nan, [np.inf, np.nan, 2.0], [0.0, 0.0, 3.0],
                 parts=("value", "grad", "jvp"))


def case_squared_difference(m):
    return probe(m, m.math.squared_difference, X, Y)


def case_squared_difference_broadcast(m):
    return probe(m, m.math.squared_difference, [[1.0], [2.0]], [0.5, 3.0, 1.0])


def case_squared_difference_dtypes(m):
    i, j = _ints(m)
    z = m.constant(np.array([1 + 2j]))
    return [m.math.squared_difference(i, j), m.math.squared_difference(z, m.constant(
        np.array([0.5 - 1j])))]


def case_add_n(m):
    return probe(m, lambda a, b: m.add_n([a, b, a]), X, Y)


def case_add_n_forms(m):
    f, g = m.constant(X), m.constant(Y)
    i, j = _ints(m)
    return [m.add_n([f]), m.math.add_n((f, g)), m.add_n([i, j]), m.add_n([1.0, 2.0]),
            m.add_n(m.constant([[1.0, 2.0], [3.0, 4.0]]))]


def case_add_n_shapes_must_match(m):
    return m.add_n([m.constant(X), m.constant(1.0)])


case_add_n_shapes_must_match.error_only = True


def case_add_n_dtypes_must_match(m):
    return m.add_n([m.constant(X), m.constant(X, dtype=m.float64)])


case_add_n_dtypes_must_match.error_only = True


def case_add_n_of_nothing_is_an_error(m):
    return m.add_n([])


case_add_n_of_nothing_is_an_error.error_only = True


def case_ceil(m):
    return probe(m, m.math.ceil, [-1.5, -0.5, 0.2, 2.0], parts=("value", "grad", "jvp"))


def case_ceil_of_integers_is_an_error(m):
    return m.math.ceil(m.constant([1, 2]))


case_ceil_of_integers_is_an_error.error_only = True


def case_floordiv_of_complex_is_an_error(m):
    z = m.constant(np.array([1 + 2j]))
    return m.math.floormod(z, z)


case_floordiv_of_complex_is_an_error.error_only = True
