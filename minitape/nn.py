"""`mt.nn`: activations."""
from .ops import elu, log_softmax, relu, sigmoid, softmax, softplus, tanh  # noqa: F401
from .ops.sorting import top_k  # noqa: F401
