"""Shapes: transpose's `conjugate` argument, checked against TensorFlow 2.21."""
import numpy as np

import minitape as mt

Z = np.array([[1 + 2j, 3 - 1j, 0.5j], [2, -1j, 1 + 1j]])


def test_transpose_conjugate_takes_tensorflows_argument_order():
    # tf.transpose(a, perm, conjugate): the conjugate transpose of a complex tensor
    z = mt.constant(Z)
    np.testing.assert_array_equal(mt.transpose(z, [1, 0], True).numpy(), Z.conj().T)
    np.testing.assert_array_equal(mt.transpose(z, conjugate=True).numpy(), Z.conj().T)
    np.testing.assert_array_equal(mt.linalg.matrix_transpose(z, conjugate=True).numpy(),
                                  Z.conj().T)
    x = mt.constant([[1.0, 2.0]])
    np.testing.assert_array_equal(mt.transpose(x, conjugate=True).numpy(), [[1.0], [2.0]])


def test_transpose_conjugate_gradient():
    # loss = real(sum(conj(z)^T * w)): dL/dx + i dL/dy (TensorFlow's convention) is
    # w^T, as TensorFlow 2.21 gives
    w = np.arange(6.0).reshape(3, 2) + 1j * np.arange(6.0).reshape(3, 2)[::-1]
    z = mt.constant(Z)
    with mt.GradientTape() as tape:
        tape.watch(z)
        loss = mt.math.real(mt.reduce_sum(mt.transpose(z, conjugate=True) * w))
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(), w.T)
