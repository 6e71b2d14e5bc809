"""Ops that change how gradients flow, not values: stop_gradient."""
from ..registry import NotDifferentiable
from .core import emit, tensor_input


def stop_gradient(input, name=None):
    """The same value, cut off from the tape: the op is recorded, but it is
    NotDifferentiable, so no gradient flows back through it."""
    x = tensor_input("stop_gradient", input)
    return emit("StopGradient", x._value, (x,), None, name)


NotDifferentiable("StopGradient")
