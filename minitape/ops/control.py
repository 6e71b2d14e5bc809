"""Ops that change how gradients flow, not values: stop_gradient."""
from .operands import elementwise_shape, emit, first_input_dtype, tensor_input
from .declaration import declare, gives_its_input


def stop_gradient(input, name=None):
    """The same value, cut off from the tape: the op is recorded, but it is
    NotDifferentiable, so no gradient flows back through it."""
    x = tensor_input("stop_gradient", input)
    return emit("StopGradient", x._value, (x,), None, name)


declare("StopGradient", differentiable=False,
        replay=lambda xs, attrs, out_shapes: stop_gradient(xs[0]), shape=elementwise_shape,
        dtype=first_input_dtype, rank_free=True,
        simplify={"unchanged": gives_its_input})
