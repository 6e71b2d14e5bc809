"""minitape: a small, readable tape-based reverse-mode autodiff engine on NumPy.

Write `mt.` where TensorFlow's guide writes `tf.` (and `mt.layers.` for
`tf.keras.layers.`). The modules form one-way layers, each importing only
those below it; docs/engine.md's reading order lists them, bottom up.

`import minitape` loads the engine and every op (so every gradient rule is
registered before a tape needs it). The rest is loaded on first use
(`__getattr__` below, the table `_LAZY`): `mt.function` (tracing, graphs and,
for `jit_compile=True`, the compiler), `mt.saved_model`, `mt.autodiff`
(forward mode), `mt.layers` and `mt.Module`, `mt.test` (the gradient checker),
the namespaces `mt.math`,
`mt.linalg`, `mt.nn` and `mt.random`, `mt.custom_gradient` and its kin,
`mt.TensorSpec`, the control flow (`mt.cond`, `mt.while_loop`, `mt.map_fn`,
`mt.scan`, `mt.vectorized_map`), and `inspection/display.py`, the HTML tables
Jupyter shows for tensors and tapes. So importing minitape costs little more than importing NumPy
(issue 18; each module costs about 0.1% of `import numpy` just to be found and
read, so a module most scripts never use waits).
"""
import importlib as _importlib

import numpy as _np

from .ops import *  # noqa: F401,F403  (every op; not the modules of ops)
from .ops import range  # noqa: F401
from . import tape_jacobians  # noqa: F401  (adds jacobian and batch_jacobian to GradientTape)
from .core.tape_entries import Operation  # noqa: F401
from .core.registry import NotDifferentiable, RegisterGradient  # noqa: F401
from .core import registry  # noqa: F401  (mt.registry: lookup, unregister, is_registered)
from .tape import GradientTape, UnconnectedGradients  # noqa: F401
from .core.tensor import (Tensor, Variable, bool_, constant,  # noqa: F401
                     convert_to_tensor, float16, float32, float64, int32, int64, string)
from .core.tensor import html_views as _html_views, text_views as _text_views

from .ops.operands import convert_to_tensor  # noqa: E402,F401,F811  (packs lists of tensors)

newaxis = None  # x[:, mt.newaxis], as NumPy's np.newaxis
# TensorFlow's other dtype names (the engine needs only those tensor.py defines)
int8, int16, uint8, complex64, complex128 = map(
    _np.dtype, ("int8", "int16", "uint8", "complex64", "complex128"))
__version__ = "0.1.0"


# --- loaded on first use ------------------------------------------------------------

# name -> (submodule, attribute of it, or None for the submodule itself)
_LAZY = {"function": ("functions.function", "function"), "saved_model": ("saved_model", None),
         "display": ("inspection.display", None), "autodiff": ("autodiff", None),
         "layers": ("layers", None), "Module": ("layers", "Module"), "test": ("test", None),
         "math": ("math", None), "linalg": ("linalg", None), "nn": ("nn", None),
         "random": ("random", None), "TensorSpec": ("specs", "TensorSpec"),
         "custom_gradient": ("custom", "custom_gradient"), "primitive": ("custom", "primitive"),
         "no_gradient": ("custom", "no_gradient"),
         "grad_pass_through": ("recipes", "grad_pass_through"),
         "recompute_grad": ("recipes", "recompute_grad"),
         "cond": ("control_flow", "cond"), "while_loop": ("control_flow", "while_loop"),
         "map_fn": ("control_flow", "map_fn"), "scan": ("control_flow", "scan"),
         "vectorized_map": ("control_flow", "vectorized_map"),
         "custom": ("custom", None), "recipes": ("recipes", None), "specs": ("specs", None)}


def __getattr__(name):
    """The names in `_LAZY` (`mt.function` the decorator, `mt.saved_model`,
    `mt.layers`, `mt.Module`, ...), imported the first time they are used (PEP
    562: Python calls this for a name the package does not have yet)."""
    if name not in _LAZY:
        if name in ("keras", "optimizers", "losses"):  # Keras: the error says what to write
            raise _importlib.import_module(f"{__name__}.layers").beyond_the_guide(
                "minitape", name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module_name, attribute = _LAZY[name]
    module = _importlib.import_module(f"{__name__}.{module_name}")
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value  # the next use finds it at once
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))  # tab completion offers the lazy names too


def _display_on_first_use(table, cls):
    """A stand-in for inspection/display.py's view of `cls` in `table` (tensor.py's
    `html_views` or `text_views`): the first time Jupyter shows a tensor or a
    tape, it imports inspection/display.py, whose import puts its own views in the tables,
    and shows `obj` with them."""
    def view(obj):
        _importlib.import_module(f"{__name__}.inspection.display")
        return table[cls](obj)
    return view


_html_views[Tensor] = _display_on_first_use(_html_views, Tensor)
_html_views[GradientTape] = _display_on_first_use(_html_views, GradientTape)
_text_views[GradientTape] = _display_on_first_use(_text_views, GradientTape)
