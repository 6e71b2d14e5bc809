"""`mt.nn`: activations."""
from .ops import elu, log_softmax, relu, sigmoid, softmax, softplus, tanh  # noqa: F401
from .ops import gelu, leaky_relu, relu6, selu, silu, swish  # noqa: F401
from .ops import batch_normalization, bias_add, embedding_lookup, l2_normalize, moments  # noqa: F401
from .ops import (l2_loss, sigmoid_cross_entropy_with_logits,  # noqa: F401
                  softmax_cross_entropy_with_logits, sparse_softmax_cross_entropy_with_logits,
                  weighted_cross_entropy_with_logits)
from .ops.sorting import top_k  # noqa: F401
from .ops import softsign  # noqa: F401
