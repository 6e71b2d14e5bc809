"""A list holding tensors, passed where an op takes a tensor, keeps the tensors'
gradients (TensorFlow packs it into one tensor with a recorded Pack), or the op
raises, as TensorFlow does where it refuses one: never a silent None.

Each row states TensorFlow 2.21's gradient with respect to x0 = 2 and x1 = 3 of
the op applied to a list built from them (None where TensorFlow gives None:
ones_like, one_hot's on_value, stop_gradient)."""
import numpy as np
import pytest

import minitape as mt

ROWS = {  # name: (fn(x0, x1), TensorFlow's [d/dx0, d/dx1])
    "convert_to_tensor": (lambda a, b: mt.reduce_sum(mt.convert_to_tensor([a, b])), [1, 1]),
    "add_n of nested lists": (lambda a, b: mt.add_n([[a, b], [1., 2.]]), [1, 1]),
    "clip_by_value's lower bound": (
        lambda a, b: mt.clip_by_value(mt.constant([1., 1.]), [a, b], 5.), [1, 1]),
    "clip_by_value's tensor": (lambda a, b: mt.clip_by_value([a, b], 0., 5.), [1, 1]),
    "clip_by_norm": (lambda a, b: mt.clip_by_norm([a, b], 1.0), [0.064, -0.0427]),
    "cast": (lambda a, b: mt.cast([a, b], mt.float64), [1, 1]),
    "reshape": (lambda a, b: mt.reshape([a, b], (2, 1)), [1, 1]),
    "reduce_max": (lambda a, b: mt.reduce_max([a, b]), [0, 1]),
    "matmul": (lambda a, b: mt.matmul([[a, b]], [[1.], [2.]]), [1, 2]),
    "maximum": (lambda a, b: mt.maximum([a, b], 2.5), [0, 1]),
    "where": (lambda a, b: mt.where([True, False], [a, b], [b, a]), [2, 0]),
    "exp": (lambda a, b: mt.exp([a, b]), [7.3891, 20.0855]),
    "gather": (lambda a, b: mt.gather([a, b], [1, 1]), [0, 2]),
    "concat of nested lists": (lambda a, b: mt.concat([[a], [b, 1.]], 0), [1, 1]),
    "stack of nested lists": (lambda a, b: mt.stack([[a, 1.], [b, 2.]]), [1, 1]),
    "linalg.det": (lambda a, b: mt.linalg.det([[a, 1.], [1., b]]), [3, 2]),
    "norm": (lambda a, b: mt.norm([a, b]), [0.5547, 0.8321]),
    "l2_normalize": (lambda a, b: mt.math.l2_normalize([a, b]), [0.064, -0.0427]),
    "tensordot": (lambda a, b: mt.tensordot([a, b], [1., 2.], 1), [1, 2]),
    "pad": (lambda a, b: mt.pad([a, b], [[1, 1]]), [1, 1]),
    "cumsum": (lambda a, b: mt.math.cumsum([a, b]), [2, 1]),
    "boolean_mask": (lambda a, b: mt.boolean_mask([a, b], [True, False]), [1, 0]),
    "broadcast_to": (lambda a, b: mt.broadcast_to([a, b], (2, 2)), [2, 2]),
    "linspace": (lambda a, b: mt.linspace([a, 0.], [b, 1.], 3), [1.5, 1.5]),
    "fill": (lambda a, b: mt.fill([2], a), [2, None]),
    "ones_like": (lambda a, b: mt.ones_like([a, b]), [None, None]),
    "linalg.lstsq": (lambda a, b: mt.linalg.lstsq([[1.], [1.]], [[a], [b]]), [0.5, 0.5]),
    "linalg.solve": (lambda a, b: mt.linalg.solve([[a, 0.], [0., b]], [[1.], [1.]]),
                     [-0.25, -0.1111]),
    "segment_sum": (lambda a, b: mt.math.segment_sum([a, b], [0, 0]), [1, 1]),
    "reduce_logsumexp": (lambda a, b: mt.reduce_logsumexp([a, b]), [0.2689, 0.7311]),
    "scatter_nd": (lambda a, b: mt.scatter_nd([[0], [1]], [a, b], [3]), [1, 1]),
    "one_hot's on_value": (lambda a, b: mt.one_hot([0, 1], 2, on_value=a), [None, None]),
    "unstack": (lambda a, b: mt.unstack([a, b])[1], [0, 1]),
    "linalg.trace": (lambda a, b: mt.linalg.trace([[a, 1.], [1., b]]), [1, 1]),
    "math.xlogy": (lambda a, b: mt.math.xlogy([a, b], 2.), [0.6931, 0.6931]),
    "squared_difference": (lambda a, b: mt.math.squared_difference([a, b], 1.), [2, 4]),
    "reduce_std": (lambda a, b: mt.math.reduce_std([a, b]), [-0.5, 0.5]),
    "top_k": (lambda a, b: mt.math.top_k([a, b], 1).values, [0, 1]),
    "sparse cross entropy's logits": (
        lambda a, b: mt.nn.sparse_softmax_cross_entropy_with_logits([0], [[a, b]]),
        [-0.7311, 0.7311]),
    "softmax cross entropy's labels": (
        lambda a, b: mt.nn.softmax_cross_entropy_with_logits([[a, b]], [[1., 2.]]),
        [1.3133, 0.3133]),
    "stop_gradient": (lambda a, b: mt.stop_gradient([a, b]), [None, None]),
    "divide_no_nan": (lambda a, b: mt.math.divide_no_nan([a, b], 2.), [0.5, 0.5]),
    "complex": (lambda a, b: mt.math.real(mt.complex([a, b], [1., 1.])), [1, 1]),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_a_list_holding_tensors_keeps_their_gradients(name):
    fn, expected = ROWS[name]
    x0, x1 = mt.constant(2.0), mt.constant(3.0)
    with mt.GradientTape() as tape:
        tape.watch([x0, x1])
        y = fn(x0, x1)
    got = tape.gradient(y, [x0, x1])
    assert [g is None for g in got] == [e is None for e in expected], got
    for g, e in zip(got, expected):
        if e is not None:
            assert float(g) == pytest.approx(e, abs=1e-4)


def test_where_tensorflow_refuses_a_list_holding_tensors_so_does_minitape():
    x0 = mt.constant(2.0)
    with mt.GradientTape() as tape:
        tape.watch(x0)
        with pytest.raises(TypeError, match="batch_normalization: a list holding tensors"):
            mt.nn.batch_normalization(mt.constant([1., 2.]), [x0, x0], 1., None, None, 1e-3)
    assert len(tape.operations) == 0  # the tape is as it was


def test_list_bounds_and_epsilons_keep_their_gradients_to_second_order():
    x = mt.constant([0.5, 4.0], mt.float64)
    lo = mt.constant(1.0, mt.float64)
    with mt.GradientTape(persistent=True) as outer:
        outer.watch(lo)
        with mt.GradientTape() as inner:
            inner.watch(lo)
            y = mt.reduce_sum(mt.clip_by_value(x, [lo, lo * lo], 3.0) ** 2)
        g = inner.gradient(y, lo)
    assert float(g) == pytest.approx(2 * 1.0)  # only x[0] is clipped, to lo: d(lo^2)/dlo
    assert float(outer.gradient(g, lo)) == pytest.approx(2.0)
    eps = mt.constant(1e-3, mt.float64)
    with mt.GradientTape() as tape:
        tape.watch(eps)
        z = mt.math.l2_normalize(mt.constant([0.01, 0.0], mt.float64), epsilon=[eps])
    d = tape.gradient(z, eps)
    assert d is not None and np.isfinite(float(d)) and float(d) != 0.0


def test_a_layer_called_on_a_list_holding_tensors_keeps_their_gradients():
    # Keras converts a layer's inputs with convert_to_tensor, which packs the list
    layer = mt.layers.Dense(1)
    x0 = mt.constant(2.0)
    with mt.GradientTape() as tape:
        tape.watch(x0)
        y = layer([[x0, 1.0]])
    g = tape.gradient(y, x0)
    assert g is not None and float(g) == pytest.approx(float(layer.kernel[0, 0]))
