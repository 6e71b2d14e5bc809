"""The op table's rows for the tf.nn family (activations, normalisation helpers,
losses): each row gets finite differences to third order, pfor vs loop
Jacobians and Hessians, forward vs reverse and compiled vs eager. Inputs stay
away from the kinks (0 and 6 for relu6, 0 for leaky_relu, selu, elu, softsign)."""

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
    case("nn.softsign", mt.nn.softsign, S(2, 3)),
    case("nn.activations-chain",
         lambda x: mt.nn.selu(mt.nn.leaky_relu(x, 0.1) + mt.nn.gelu(x)), S(2, 3)),
]

CASES = ACTIVATION_CASES
