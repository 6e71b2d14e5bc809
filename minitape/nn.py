"""`mt.nn`: activations."""
from .ops import elu, log_softmax, relu, sigmoid, softmax, softplus, tanh  # noqa: F401
from .ops import gelu, leaky_relu, relu6, selu, silu, softsign, swish  # noqa: F401
from .ops import batch_normalization, bias_add, embedding_lookup, l2_normalize, moments  # noqa: F401
