"""The op table's rows for the tf.nn family (activations, normalisation helpers,
losses): each row gets finite differences to third order, pfor vs loop
Jacobians and Hessians, forward vs reverse and compiled vs eager. Inputs stay
away from the kinks (0 and 6 for relu6, 0 for leaky_relu, selu and elu)."""

import numpy as np

import minitape as mt
from op_table import P, R, S, case

ACTIVATION_CASES = [
    case("nn.relu6", mt.nn.relu6, S(2, 3)),
    case("nn.relu6-near-6", mt.nn.relu6, 6.0 + S(2, 3)),
    case("nn.leaky_relu", mt.nn.leaky_relu, S(2, 3)),
    case("nn.leaky_relu-alpha", lambda x: mt.nn.leaky_relu(x, alpha=0.3), S(2, 3)),
    case("nn.leaky_relu-alpha-above-1", lambda x: mt.nn.leaky_relu(x, alpha=2.5), S(2, 3)),
    case("nn.elu", mt.nn.elu, S(2, 3)),
    case("nn.selu", mt.nn.selu, S(2, 3)),
    case("nn.gelu", mt.nn.gelu, 3 * R(2, 3)),
    case("nn.gelu-approximate", lambda x: mt.nn.gelu(x, approximate=True), 3 * R(2, 3)),
    case("nn.silu", mt.nn.silu, 3 * R(2, 3)),
    case("nn.silu-beta", lambda x: mt.nn.silu(x, beta=1.7), 3 * R(2, 3)),
    case("nn.silu-beta-tensor", lambda x, b: mt.nn.silu(x, beta=b), 3 * R(2, 3), P(3)),
    case("nn.swish", mt.nn.swish, 3 * R(2, 3)),
    case("nn.activations-chain",
         lambda x: mt.nn.selu(mt.nn.leaky_relu(x, 0.1) + mt.nn.gelu(x)), S(2, 3)),
]

NORMALIZATION_CASES = [
    case("nn.l2_normalize", mt.nn.l2_normalize, R(2, 3)),
    case("nn.l2_normalize-axis1", lambda x: mt.nn.l2_normalize(x, axis=1), R(2, 3)),
    case("nn.l2_normalize-axes", lambda x: mt.math.l2_normalize(x, axis=[0, 2]), R(2, 3, 2)),
    # the variance's second derivative is TensorFlow's (not the true one: see
    # test_ops_nn_more.py), so only the mean is here, and the variance of a
    # sum in which the stopped mean is constant (a linear function of x)
    case("nn.moments-mean", lambda x: mt.nn.moments(x, axes=[0])[0], R(3, 2)),
    case("nn.moments-mean-keepdims",
         lambda x: mt.nn.moments(x, axes=[0, 2], keepdims=True)[0], R(2, 3, 2)),
    case("nn.batch_normalization",
         lambda x, m, v, o, s: mt.nn.batch_normalization(x, m, v, o, s, 1e-3),
         R(4, 3), R(3), P(3), R(3), P(3)),
    case("nn.batch_normalization-no-offset-scale",
         lambda x, m, v: mt.nn.batch_normalization(x, m, v, None, None, 0.01),
         R(4, 3), R(3), P(3)),
    case("nn.bias_add", mt.nn.bias_add, R(4, 3), R(3)),
    case("nn.bias_add-NCHW", lambda x, b: mt.nn.bias_add(x, b, data_format="NCHW"),
         R(2, 3, 2, 2), R(3)),
    case("nn.bias_add-NHWC", lambda x, b: mt.nn.bias_add(x, b, data_format="NHWC"),
         R(2, 2, 3), R(3)),
    case("nn.embedding_lookup", lambda p: mt.nn.embedding_lookup(p, [[0, 2], [1, 1]]), R(3, 2)),
    case("nn.embedding_lookup-1d", lambda p: mt.nn.embedding_lookup(p, [2, 0, 2]), R(3)),
    case("nn.embedding_lookup-shards",
         lambda a, b: mt.nn.embedding_lookup([a, b], [2, 0, 1, 2]), R(2, 2), R(1, 2)),
    case("nn.embedding_lookup-max_norm",
         lambda p: mt.nn.embedding_lookup(p, [0, 1, 1, 2], max_norm=0.8),
         [[0.3, -0.2], [0.9, 0.7], [-0.1, 0.4]]),
]

# Labels that sum to 1 along the classes: there TensorFlow's logits rule,
# softmax - labels, is the derivative (and its mixed labels/logits second
# derivative is 0 by TensorFlow's rule, so the labels stay constants here).
DIST = np.array([[0.2, 0.5, 0.3], [1.0, 0.0, 0.0]])
LOSS_CASES = [
    case("nn.l2_loss", mt.nn.l2_loss, R(2, 3)),
    case("nn.sigmoid_cross_entropy_with_logits",
         lambda y, z: mt.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=z),
         R(2, 3) / 2 + 0.5, 3 * S(2, 3)),
    case("nn.weighted_cross_entropy_with_logits",
         lambda y, z, w: mt.nn.weighted_cross_entropy_with_logits(y, z, w),
         R(2, 3) / 2 + 0.5, 3 * S(2, 3), P(3)),
    case("nn.softmax_cross_entropy_with_logits",
         lambda z: mt.nn.softmax_cross_entropy_with_logits(labels=DIST, logits=z), 3 * R(2, 3)),
    case("nn.softmax_cross_entropy_with_logits-axis0",
         lambda z: mt.nn.softmax_cross_entropy_with_logits(DIST.T, z, axis=0), 3 * R(3, 2)),
    case("nn.softmax_cross_entropy_with_logits-3d",
         lambda z: mt.nn.softmax_cross_entropy_with_logits(DIST[0], z), 3 * R(2, 2, 3)),
    case("nn.sparse_softmax_cross_entropy_with_logits",
         lambda z: mt.nn.sparse_softmax_cross_entropy_with_logits(labels=[2, 0], logits=z),
         3 * R(2, 3)),
    case("nn.sparse_softmax_cross_entropy_with_logits-3d",
         lambda z: mt.nn.sparse_softmax_cross_entropy_with_logits([[1, 0], [3, 3]], z),
         3 * R(2, 2, 4)),
]

CASES = ACTIVATION_CASES + NORMALIZATION_CASES + LOSS_CASES
