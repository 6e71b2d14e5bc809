"""`mt.nn`: activations."""
from .ops import elu, log_softmax, relu, sigmoid, softmax, softplus, tanh  # noqa: F401
from .ops import softsign  # noqa: F401
