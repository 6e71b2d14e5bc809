"""Losses: numbers checked against TensorFlow 2.21 (values stated from its output)."""
import numpy as np
import pytest

import minitape as mt


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sparse_softmax_cross_entropy_ignores_minus_inf_of_other_classes(dtype):
    # TensorFlow reads only the label's logit: a -inf logit of another class adds
    # nothing to logsumexp, so the loss stays finite: log(e^2 + e^0.5) - 2 = 0.2014133
    # (a one-hot product gave 0 * inf = NaN)
    z = mt.constant([[2.0, -np.inf, 0.5], [-np.inf, 1.0, 0.0]], dtype=dtype)
    with mt.GradientTape() as tape:
        tape.watch(z)
        loss = mt.nn.sparse_softmax_cross_entropy_with_logits([0, 0], z)
    np.testing.assert_allclose(loss.numpy(), [np.log(np.exp(2.0) + np.exp(0.5)) - 2.0, np.inf],
                               rtol=1e-6)
    assert loss.dtype == dtype
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(),
                               [[-0.18242552, 0.0, 0.18242552], [-1.0, 0.73105858, 0.26894142]],
                               rtol=1e-6)


def test_sparse_softmax_cross_entropy_scalar_label():
    z = mt.constant([1.0, -np.inf, 3.0])
    loss = mt.nn.sparse_softmax_cross_entropy_with_logits(mt.constant(2), z)
    np.testing.assert_allclose(loss.numpy(), np.log1p(np.exp(-2.0)), rtol=1e-6)


def test_sigmoid_cross_entropy_labels_list_of_tensors_keeps_gradient():
    # TensorFlow packs the list [[x0, 2], [x1, x0 x1]] into one tensor, so the labels'
    # gradient (-logits) reaches x: TensorFlow 2.21 gives [-0.5, -1.0] (it was None)
    x = mt.constant([1.5, 0.7])
    with mt.GradientTape() as tape:
        tape.watch(x)
        loss = mt.nn.sigmoid_cross_entropy_with_logits(
            labels=[[x[0], 2.0], [x[1], x[0] * x[1]]], logits=[[0.5, 0.5], [1.0, 0.0]])
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), [-0.5, -1.0], rtol=1e-6)


def test_weighted_cross_entropy_pos_weight_list_of_tensors_keeps_gradient():
    # (TensorFlow 2.21 refuses a list pos_weight; minitape packs it, and must not
    # drop its gradient.) loss_0 = w * log(1 + e^-1) for labels 1, logits 1
    w = mt.constant(2.0)
    with mt.GradientTape() as tape:
        tape.watch(w)
        loss = mt.reduce_sum(
            mt.nn.weighted_cross_entropy_with_logits([1.0, 0.0], [1.0, 1.0], [w, 3.0]))
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), np.log1p(np.exp(-1.0)),
                               rtol=1e-6)


def test_sigmoid_cross_entropy_labels_list_of_float64_tensors_refuses_float32_logits():
    # TensorFlow: the packed float64 labels do not match the float32 logits: an error,
    # not a float32 loss computed from rounded labels
    x = mt.constant([1.5, 0.7], dtype=mt.float64)
    with pytest.raises(TypeError):
        mt.nn.sigmoid_cross_entropy_with_logits(labels=[x[0], x[1]], logits=[0.5, 0.5])


def test_l2_loss_of_float16_does_not_overflow_on_the_way():
    # sum(t^2) = 71,200 is past float16's 65504, its half is not: TensorFlow 2.21
    # gives 35600 (float16), not inf
    t = mt.constant(np.full(712, 10.0, np.float16))
    loss = mt.nn.l2_loss(t)
    assert loss.dtype == np.float16
    assert loss.numpy() == np.float16(35600.0)
