"""minitape: a small, readable tape-based reverse-mode autodiff engine on NumPy.

Write `mt.` where TensorFlow's guide writes `tf.` (and `mt.layers.` for
`tf.keras.layers.`). The modules form one-way layers, each importing only
those below it; the README's "reading order" lists them, bottom up.
"""
from .ops import *  # noqa: F401,F403  (first: it also binds the names ops.nn, ops.linalg)
from .ops import range  # noqa: F401
from . import linalg, math, nn, random  # noqa: F401  (the public namespaces win)
from . import jacobians  # noqa: F401  (adds jacobian and batch_jacobian to GradientTape)
from . import autodiff, layers, test  # noqa: F401
from . import display  # noqa: F401  (how Jupyter shows tensors and tapes)
from .custom import custom_gradient, primitive, stop_gradient  # noqa: F401
from .custom import no_gradient  # noqa: F401
from .recipes import grad_pass_through, recompute_grad  # noqa: F401
from .layers import Module  # noqa: F401
from .specs import TensorSpec  # noqa: F401
from .recording import Operation  # noqa: F401
from .registry import NotDifferentiable, RegisterGradient  # noqa: F401
from .tape import GradientTape, UnconnectedGradients  # noqa: F401
from .tensor import (Tensor, Variable, bool_, constant,  # noqa: F401
                     convert_to_tensor, float16, float32, float64, int32, int64, string)

from .ops.core import convert_to_tensor  # noqa: E402,F401,F811  (packs lists of tensors)

newaxis = None  # x[:, mt.newaxis], as NumPy's np.newaxis
__version__ = "0.1.0"
from . import saved_model  # noqa: E402,F401
from .function import function  # noqa: E402,F401
