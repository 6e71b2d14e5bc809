"""tf.nn's activations, normalisation helpers and losses (issue 16), run under
TensorFlow and minitape by the conformance harness (harness.py). Points include
the kinks, where TensorFlow picks a side (relu6 at 0 and 6, leaky_relu, elu and
selu at 0), large logits, and the errors for mismatched shapes and bad ids.

`_probe` computes, per dtype, the value, the gradient, a second derivative
(the gradient of a weighted sum of the gradients, by an outer tape) and a JVP,
each part kept apart so that one failing part does not hide the others.
"""
import numpy as np

X = [-7.0, -1.0, -1e-5, 0.0, 0.5, 3.0, 6.0, 7.0]
LABELS = [[0.0, 1.0, 0.0], [0.3, 0.3, 0.4]]
LOGITS = [[1000.0, -1000.0, 0.0], [2.0, 1.0, -3.0]]
ALL = ("value", "grad", "grad2", "jvp")


def _weights(shape, offset):
    n = int(np.prod(shape, dtype=np.int64))
    return (0.5 + 0.25 * ((np.arange(n) + offset) % 5)).reshape(shape)


def _try(fn):
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001  (compared by category)
        return exc


def _probe_dtype(m, f, args, dtype, parts):
    xs = [m.constant(np.asarray(a, dtype=dtype)) for a in args]
    out = {}
    with m.GradientTape(persistent=True) as outer:
        outer.watch(xs)
        with m.GradientTape(persistent=True) as inner:
            inner.watch(xs)
            y = f(*xs)
        out["value"] = y
        grads = inner.gradient(y, xs)
        out["grad"] = [None if g is None else m.convert_to_tensor(g) for g in grads]
        if "grad2" in parts:
            terms = [m.reduce_sum(m.convert_to_tensor(g) * m.constant(_weights(g.shape, i),
                                                                      dtype=g.dtype))
                     for i, g in enumerate(grads) if g is not None]
            total = terms[0]
            for t in terms[1:]:
                total = total + t
    if "grad2" in parts:
        out["grad2"] = _try(lambda: outer.gradient(total, xs))
    if "jvp" in parts:
        def jvp():
            tangents = [m.constant(_weights(x.shape, i + 1), dtype=x.dtype)
                        for i, x in enumerate(xs)]
            with m.autodiff.ForwardAccumulator(xs, tangents) as acc:
                z = f(*xs)
            return acc.jvp(z)
        out["jvp"] = _try(jvp)
    return {k: v for k, v in out.items() if k in parts}


def _probe(m, f, *args, dtypes=("float32", "float64"), parts=ALL):
    return {dtype: _try(lambda dtype=dtype: _probe_dtype(m, f, args, dtype, parts))
            for dtype in dtypes}


# --- activations -------------------------------------------------------------------

def case_relu6(m):
    return _probe(m, m.nn.relu6, X)


def case_relu6_int(m):
    return m.nn.relu6(m.constant([-3, 2, 9]))


def case_leaky_relu(m):
    return _probe(m, m.nn.leaky_relu, X)


def case_leaky_relu_alpha(m):
    return [_probe(m, lambda x: m.nn.leaky_relu(x, alpha=0.3), X),
            _probe(m, lambda x: m.nn.leaky_relu(x, 2.0), X, parts=("value", "grad"))]


def case_leaky_relu_int(m):
    return m.nn.leaky_relu(m.constant([1, -2]))


def case_elu(m):
    return _probe(m, m.nn.elu, X)


def case_selu(m):
    return _probe(m, m.nn.selu, X)


def case_gelu(m):
    return _probe(m, m.nn.gelu, [-7.0, -3.0, -1.0, 0.0, 0.5, 3.0, 7.0])


case_gelu.ulps = 64


def case_gelu_approximate(m):
    # not at -3 in float32: 1 + tanh(...) cancels there, and TensorFlow's float32
    # tanh is not NumPy's in the last bit
    return _probe(m, lambda x: m.nn.gelu(x, approximate=True), [-1.5, -1.0, 0.0, 0.5, 3.0])


case_gelu_approximate.ulps = 64


def case_gelu_int_is_an_error(m):
    return m.nn.gelu(m.constant([1, 2]))


case_gelu_int_is_an_error.error_only = True


def case_silu(m):
    return [_probe(m, m.nn.silu, X), _probe(m, m.nn.swish, X, parts=("value",))]


def case_silu_beta(m):
    return [_probe(m, lambda x: m.nn.silu(x, beta=2.0), X),
            _probe(m, lambda x, b: m.nn.silu(x, b), [[-1.0, 0.5], [2.0, 3.0]], 1.5)]


# --- normalisation helpers ------------------------------------------------------------

def case_l2_normalize(m):
    x = [[3.0, 4.0], [0.0, 0.0], [1.0, -2.0]]
    return [_probe(m, lambda x: m.nn.l2_normalize(x, axis=1), x),
            _probe(m, m.math.l2_normalize, x, parts=("value", "grad"))]


def case_moments(m):
    x = [[1.0, 2.0, 4.0], [3.0, 5.0, -1.0]]
    return [_probe(m, lambda x: list(m.nn.moments(x, axes=[0])), x),
            _probe(m, lambda x: list(m.nn.moments(x, axes=1, keepdims=True)), x),
            _probe(m, lambda x: m.nn.moments(x, axes=[0, 1])[1], x)]


def case_moments_float16(m):
    mean, variance = m.nn.moments(m.constant([[1.0, 2.0], [3.0, 5.0]], m.float16), axes=[0])
    return mean, variance


def case_batch_normalization(m):
    def bn(x, mean, variance, offset, scale):
        return m.nn.batch_normalization(x, mean, variance, offset, scale, 1e-3)
    return [_probe(m, bn, [[1.0, 2.0], [3.0, 4.0]], [2.0, 3.0], [1.0, 0.5], [0.1, -0.2],
                   [1.5, 2.0]),
            # Python numbers: float32 statistics, even for float64 x
            _probe(m, lambda x: m.nn.batch_normalization(x, 2.0, 1.0, None, None, 0.01),
                   [[1.0, 2.0]], parts=("value", "grad")),
            m.nn.batch_normalization(m.constant([1.0, 2.0], m.float64), m.constant([2.0, 1.0]),
                                     m.constant([1.0, 3.0]), None, m.constant([0.5, 2.0]), 0.1)]


def case_bias_add(m):
    return [_probe(m, m.nn.bias_add, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [0.5, -1.0, 2.0]),
            _probe(m, lambda x, b: m.nn.bias_add(x, b, data_format="NCHW"),
                   np.arange(12.0).reshape(2, 3, 2), [0.5, -1.0, 2.0])]


def case_bias_add_wrong_size(m):
    return m.nn.bias_add(m.ones((2, 3)), m.constant([1.0, 2.0]))


case_bias_add_wrong_size.error_only = True


def case_embedding_lookup(m):
    return _probe(m, lambda p: m.nn.embedding_lookup(p, [[0, 2], [1, 1]]) ** 2,
                  [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])


def case_embedding_lookup_shards_and_max_norm(m):
    table = m.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    return [m.nn.embedding_lookup([table[:2], table[2:]], [2, 0, 1]),
            m.nn.embedding_lookup(m.constant([[3.0, 4.0], [0.3, 0.4]]), [0, 1], max_norm=1.0)]


def case_embedding_lookup_id_out_of_range(m):
    return m.nn.embedding_lookup(m.constant([[1.0, 2.0], [3.0, 4.0]]), [2])


case_embedding_lookup_id_out_of_range.error_only = True


# --- losses ---------------------------------------------------------------------------

def case_l2_loss(m):
    return _probe(m, m.nn.l2_loss, [[3.0, 4.0], [-1.0, 0.5]])


def case_sigmoid_cross_entropy(m):
    return _probe(m, lambda y, z: m.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=z),
                  LABELS, LOGITS)


def case_sigmoid_cross_entropy_shape_mismatch(m):
    return m.nn.sigmoid_cross_entropy_with_logits(labels=m.ones((2, 3)), logits=m.ones((2, 2)))


case_sigmoid_cross_entropy_shape_mismatch.error_only = True


def case_weighted_cross_entropy(m):
    return _probe(m, lambda y, z, w: m.nn.weighted_cross_entropy_with_logits(y, z, w),
                  LABELS, LOGITS, [1.0, 2.0, 3.0])


def case_softmax_cross_entropy(m):
    return _probe(m, lambda y, z: m.nn.softmax_cross_entropy_with_logits(labels=y, logits=z),
                  LABELS, LOGITS)


def case_softmax_cross_entropy_axis_and_broadcast(m):
    return [_probe(m, lambda y, z: m.nn.softmax_cross_entropy_with_logits(y, z, axis=0),
                   LABELS, LOGITS, parts=("value", "grad")),
            # broadcast labels, held constant (TensorFlow 2.21's gradient for
            # broadcast labels fails in a Reshape)
            _probe(m, lambda z: m.nn.softmax_cross_entropy_with_logits(m.constant(LABELS[1],
                                                                                  z.dtype), z),
                   LOGITS)]


def case_softmax_cross_entropy_labels_cast(m):
    return m.nn.softmax_cross_entropy_with_logits(m.constant(LABELS, m.float32),
                                                  m.constant(LOGITS, m.float64))


def case_softmax_cross_entropy_empty(m):
    return [m.nn.softmax_cross_entropy_with_logits(m.zeros((2, 0)), m.zeros((2, 0))),
            m.nn.softmax_cross_entropy_with_logits(m.zeros((0, 3)), m.zeros((0, 3)))]


def case_softmax_cross_entropy_shape_mismatch(m):
    return m.nn.softmax_cross_entropy_with_logits(m.ones((2, 3)), m.ones((2, 2)))


case_softmax_cross_entropy_shape_mismatch.error_only = True


def case_sparse_softmax_cross_entropy(m):
    return _probe(m, lambda z: m.nn.sparse_softmax_cross_entropy_with_logits(
        labels=m.constant([1, 2]), logits=z), LOGITS)


def case_sparse_softmax_cross_entropy_3d(m):
    return _probe(m, lambda z: m.nn.sparse_softmax_cross_entropy_with_logits(
        m.constant([[1, 0], [2, 2]], m.int64), z), np.linspace(-2, 2, 12).reshape(2, 2, 3))


def case_sparse_softmax_cross_entropy_label_out_of_range(m):
    return m.nn.sparse_softmax_cross_entropy_with_logits(m.constant([1, 3]), m.ones((2, 3)))


case_sparse_softmax_cross_entropy_label_out_of_range.error_only = True


def case_sparse_softmax_cross_entropy_shape_mismatch(m):
    return m.nn.sparse_softmax_cross_entropy_with_logits(m.constant([1, 2, 0]), m.ones((2, 3)))


case_sparse_softmax_cross_entropy_shape_mismatch.error_only = True
