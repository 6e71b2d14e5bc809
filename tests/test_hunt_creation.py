"""linspace with tensor endpoints: dtypes and values checked against TensorFlow 2.21."""
import numpy as np

import minitape as mt


def test_linspace_python_numbers_beside_float64_tensor_are_not_rounded_to_float32():
    # TensorFlow converts stop in start's dtype: float64's 0.1, so the middle value is
    # exactly (0.5 + 0.1) / 2 = 0.3 (rounding 0.1 to float32 gave 0.30000000074505806)
    x = mt.constant([0.5, 0.25], dtype=mt.float64)
    y = mt.linspace(x, [0.1, 0.3], 3)
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y.numpy(), np.linspace([0.5, 0.25], [0.1, 0.3], 3))
    assert y.numpy()[1, 0] == 0.3


def test_linspace_lists_holding_float64_tensors_are_float64():
    # TensorFlow packs [x0, 0.1] to float64 (the tensor's dtype): float64 values and
    # gradients [1.5, 1.5] (three values of weights 1, 0.5, 0 for start and 0, .5, 1 for stop)
    x = mt.constant([0.5, 0.25], dtype=mt.float64)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = mt.linspace([x[0], 0.1], [0.3, x[1]], 3)
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y.numpy(), np.linspace([0.5, 0.1], [0.3, 0.25], 3))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [1.5, 1.5])


def test_range_of_floats_counts_and_steps_in_its_dtype():
    # TensorFlow 2.21: ceil(|(limit - start) / delta|) numbers start + i * delta, in
    # float32 arithmetic: range(1., 2.2, 0.2) has 6 numbers, the fourth 1.6 (float32);
    # NumPy's arange gave 7, the last 2.2000003, and drifted (1.4000001)
    y = mt.range(1.0, 2.2, 0.2)
    assert y.dtype == np.float32
    expected = np.float32(1.0) + np.arange(6, dtype=np.float32) * np.float32(0.2)
    np.testing.assert_array_equal(y.numpy(), expected)
    assert y.numpy()[2] == np.float32(1.4)
    # TensorFlow: range(0., 0.3, 0.1, dtype=float32) is [0, 0.1, 0.2] (0.3f / 0.1f is 3)
    np.testing.assert_array_equal(mt.range(0.0, 0.3, 0.1, dtype=mt.float32).numpy(),
                                  np.float32([0.0, 0.1, 0.2]))
    # TensorFlow: 8 numbers from 1e8 to 1e8 + 10 in float32 (1e8 + 10 rounds to 1e8 + 8)
    y = mt.range(1e8, 1e8 + 10, 1.0)
    assert y.shape == (8,)
    np.testing.assert_array_equal(y.numpy()[[0, 4, 5, 7]], np.float32([1e8, 1e8, 1e8 + 8, 1e8 + 8]))


def test_range_float64_is_start_plus_i_delta():
    # TensorFlow 2.21's float64 range(1., 2.2, 0.2): 1 + i * 0.2 (not accumulated sums)
    y = mt.range(1.0, 2.2, 0.2, dtype=mt.float64)
    np.testing.assert_array_equal(y.numpy(), 1.0 + np.arange(7) * 0.2)


def test_range_python_float_beside_float64_tensor_is_read_as_float32():
    # TensorFlow converts each argument on its own (a Python float to float32), then
    # casts to the widest: range(0.5 (float64), 1.3, 0.1) steps by float32's 0.1
    y = mt.range(mt.constant(0.5, dtype=mt.float64), 1.3, 0.1)
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y.numpy(), 0.5 + np.arange(8) * np.float64(np.float32(0.1)))
