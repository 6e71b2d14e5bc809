"""Variables never change silently: an assign (or a construction) that would
lose a value raises a clear error naming the variable, its dtype and shape and
the offending value, and leaves the variable as it was. One table row per case.

TensorFlow's rules, which minitape follows: a float (even 2.0) or a complex
number does not convert to an integer dtype, a complex number does not convert
to a real dtype, and an integer must fit the dtype's range; assign_add and
assign_sub on integer variables must not wrap around. (Floats converted to a
narrower float dtype are rounded, as in TensorFlow, and may overflow to inf.)
"""
import numpy as np
import pytest

import minitape as mt

I32 = np.iinfo(np.int32)
I64 = np.iinfo(np.int64)

# (id, initial value, dtype, method, argument, error, fragments of the message)
ROWS = [
    ("complex-into-float32", [1.0, 2.0], mt.float32, "assign", [1j, 2j], TypeError,
     ("imaginary", "1.j")),
    ("complex-real-part-only", [1.0, 2.0], mt.float32, "assign", [1 + 0j, 2 + 0j],
     TypeError, ("imaginary",)),
    ("complex-into-int32", [1, 2], mt.int32, "assign", [1j, 2j], TypeError, ("1.j",)),
    ("complex-numpy-into-float64", [1.0, 2.0], mt.float64, "assign",
     np.array([1j, 2j]), TypeError, ("complex128",)),
    ("complex-assign-add", [1.0, 2.0], mt.float32, "assign_add", [1j, 0], TypeError,
     ("imaginary",)),
    ("int-too-big", [1, 2], mt.int32, "assign", [2**40, 1], ValueError,
     ("1099511627776", "out of range")),
    ("int-too-small", [1, 2], mt.int32, "assign", [-2**31 - 1, 1], ValueError,
     ("-2147483649",)),
    ("int64-array-into-int32", [1, 2], mt.int32, "assign", np.array([2**33, 0]),
     ValueError, ("8589934592",)),
    ("negative-into-uint8", np.array([1, 2], np.uint8), None, "assign", [-1, 0],
     ValueError, ("-1", "uint8")),
    ("too-big-for-uint8", np.array([1, 2], np.uint8), None, "assign", [256, 0],
     ValueError, ("256", "uint8")),
    ("two-into-bool", [True, False], None, "assign", np.array([2, 0]), ValueError,
     ("2", "bool")),
    ("fraction-into-int", [1, 2], mt.int32, "assign", [1.5, 2.0], TypeError,
     ("1.5", "fractional")),
    ("integral-float-into-int", [1, 2], mt.int32, "assign", [1.0, 2.0], TypeError,
     ("mt.cast",)),
    ("nan-into-int", [1, 2], mt.int32, "assign", [np.nan, 1.0], TypeError, ("nan",)),
    ("inf-into-int", [1, 2], mt.int32, "assign", [np.inf, 1.0], TypeError, ("inf",)),
    ("assign-add-wraps", [I32.max, 0], mt.int32, "assign_add", [1, 0], ValueError,
     ("2147483648", "wrap")),
    ("assign-sub-wraps", [I32.min, 0], mt.int32, "assign_sub", [1, 0], ValueError,
     ("-2147483649", "wrap")),
    ("assign-sub-of-min-wraps", [0, 0], mt.int32, "assign_sub", [I32.min, 0], ValueError,
     ("2147483648",)),
    ("int64-assign-add-wraps", np.array([I64.max], np.int64), None, "assign_add", [1],
     ValueError, ("9223372036854775808",)),
    ("uint8-assign-sub-wraps", np.array([0], np.uint8), None, "assign_sub", [1],
     ValueError, ("-1", "uint8")),
    ("wrong-shape", [1.0, 2.0], mt.float32, "assign", [1.0, 2.0, 3.0], ValueError,
     ("(3,)", "(2,)")),
    ("wrong-shape-add", [1.0, 2.0], mt.float32, "assign_add", [[1.0, 2.0]], ValueError,
     ("(1, 2)",)),
    ("string", [1.0, 2.0], mt.float32, "assign", ["a", "b"], TypeError, ("'a'",)),
    ("object-array", [1.0, 2.0], mt.float32, "assign", np.array([None, 1.0]), TypeError,
     ("object",)),
    ("none", [1.0, 2.0], mt.float32, "assign", None, TypeError, ("None",)),
    ("float64-variable", [1.0, 2.0], mt.float32, "assign",
     mt.Variable(np.array([1.0, 2.0])), TypeError, ("float64",)),
    ("float64-tensor", [1.0, 2.0], mt.float32, "assign",
     mt.constant(np.array([1.0, 2.0])), TypeError, ("float64",)),
]


@pytest.mark.parametrize("initial, dtype, method, value, error, fragments",
                         [pytest.param(*row[1:], id=row[0]) for row in ROWS])
def test_a_lossy_assign_raises_and_changes_nothing(initial, dtype, method, value, error,
                                                   fragments):
    v = mt.Variable(initial, dtype=dtype, name="w")
    before, before_dtype = v.numpy().copy(), v.dtype
    x = mt.constant([1.0, 2.0])
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = mt.reduce_sum(x * x)
        ops = list(tape.operations)
        with pytest.raises(error) as info:
            getattr(v, method)(value)
        assert list(tape.operations) == ops
    message = str(info.value)
    for fragment in (f"Variable.{method}", "'w:0'", str(v.dtype), str(v.shape)) + fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    np.testing.assert_array_equal(v.numpy(), before)
    assert v.dtype == before_dtype
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 4.0])


# (id, call, error, fragments): constructions that would lose the value.
CONSTRUCTIONS = [
    ("constant-int32-too-big", lambda: mt.constant([2**40], dtype=mt.int32), ValueError,
     ("constant", "1099511627776", "int32")),
    ("constant-uint8-negative", lambda: mt.constant(-1, dtype=np.uint8), ValueError,
     ("constant", "-1", "uint8")),
    ("constant-complex-into-float", lambda: mt.constant(1j, dtype=mt.float32), TypeError,
     ("constant", "1.j", "complex128")),
    ("constant-float-into-int", lambda: mt.constant(2.5, dtype=mt.int32), TypeError,
     ("constant", "2.5")),
    ("variable-int32-too-big", lambda: mt.Variable([2**31], dtype=mt.int32), ValueError,
     ("Variable", "2147483648", "int32")),
    ("variable-complex-into-float", lambda: mt.Variable([1j], dtype=mt.float64), TypeError,
     ("Variable", "1.j")),
    ("convert-int8-too-big", lambda: mt.convert_to_tensor(np.array([300]), dtype=np.int8),
     ValueError, ("convert_to_tensor", "300", "int8")),
    ("operand-too-big", lambda: mt.constant([1], dtype=np.int8) + np.array([300]),
     ValueError, ("add", "300", "int8")),
    ("python-number-too-big", lambda: mt.constant([1], dtype=np.int8) * 300,
     ValueError, ("multiply", "300", "int8")),
    ("python-number-huge", lambda: mt.constant([1], dtype=np.int64) - 2**70,
     ValueError, ("subtract", "1180591620717411303424", "int64")),
    ("python-float-too-big-for-int", lambda: mt.constant([1]) + 2.0**40,
     ValueError, ("add", "1099511627776.0", "int32")),
    ("python-complex-into-float", lambda: mt.constant([1.0]) + 1j, TypeError,
     ("add", "1j", "float32")),
]


@pytest.mark.parametrize("call, error, fragments",
                         [pytest.param(*row[1:], id=row[0]) for row in CONSTRUCTIONS])
def test_a_lossy_construction_raises(call, error, fragments):
    with pytest.raises(error) as info:
        call()
    for fragment in fragments:
        assert fragment in str(info.value)


def test_values_at_the_edges_of_the_range_are_kept():
    v = mt.Variable([I32.max - 1, I32.min + 1], dtype=mt.int32)
    v.assign_add([1, 0])
    v.assign_sub([0, 1])
    assert v.numpy().tolist() == [I32.max, I32.min]
    v.assign(np.array([I32.max, I32.min], np.int64))  # an int64 array that fits
    assert v.dtype == np.int32 and v.numpy().tolist() == [I32.max, I32.min]
    assert mt.constant([I32.max], dtype=mt.int32).numpy().tolist() == [I32.max]
    assert mt.constant(255, dtype=np.uint8).numpy() == 255
    assert mt.Variable([True, False]).assign(np.array([0, 1])).numpy().tolist() == [False,
                                                                                   True]
    f = mt.Variable([1.0, 2.0])
    f.assign([3, 4])               # ints into a float variable: exact, allowed
    f.assign_add(np.array([0.5, 0.5]))  # float64 into float32: rounded, as in TF
    assert f.numpy().tolist() == [3.5, 4.5] and f.dtype == np.float32
    c = mt.Variable(np.array([1 + 1j]))
    c.assign_add([1.0])            # a real into a complex variable is exact
    assert c.numpy().tolist() == [2 + 1j]
