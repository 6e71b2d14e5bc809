"""Two custom gradients with a fixed recipe, built on `custom_gradient`.

- `recompute_grad(f)`: gradient checkpointing. The tapes keep f's inputs and
  outputs only; its intermediate values are computed again during the backward
  pass instead of being kept since the forward pass.
- `grad_pass_through(f)`: f going forward, the identity going backward (a
  straight-through estimator).
"""
import functools

from . import nest, ops
from .core.context import state, variable_accessed
from .custom import custom_gradient
from .tape import GradientTape, UnconnectedGradients
from .core.tensor import is_floating


def recompute_grad(f):
    """Gradient checkpointing: `g = recompute_grad(f)` computes what f computes,
    but the tapes keep only g's inputs and outputs, not f's intermediate values.
    During the backward pass f runs again, under a tape of its own, to get them
    back: memory for time, as TensorFlow's `tf.recompute_grad`.

    Variables f reads get gradients too, and the recomputation is done with
    minitape ops while outer tapes record, so second derivatives work.
    """
    @custom_gradient
    def recomputed(*args, **kwargs):
        if any(tape.is_trace for tape in state.tapes):
            # Inside mt.function the trace must see f's ops, or f's result would
            # be a constant of the trace: each call replays them (and its
            # gradient, traced from `grad` below, recomputes from the call's inputs).
            return f(*args, **kwargs), grad_for(args, kwargs)
        # Run f with no tape recording (that is the memory saved), but note the
        # variables it reads: the tapes must watch them as if f had been recorded.
        read = []
        tapes, state.tapes[:] = state.tapes[:], []
        state.variable_watchers.append(read)
        try:
            result = f(*args, **kwargs)
        finally:
            state.variable_watchers[:] = [w for w in state.variable_watchers if w is not read]
            state.tapes[:] = tapes
        for v in read:
            variable_accessed(v)
        return result, grad_for(args, kwargs)

    def grad_for(args, kwargs):
        def grad(*upstream, variables=None):
            # f runs on copies, one per argument, so the same tensor passed twice
            # (`g(x, x)`) gets the gradient of each use apart, as TensorFlow's
            # recompute_grad does; by x itself, each would get both (twice the sum).
            copies = [ops.identity(x) if is_floating(x.dtype) else x for x in args]
            sources = [c for c in copies if is_floating(c.dtype)] + list(variables or [])
            with GradientTape() as tape:
                tape.watch(sources)
                again = f(*copies, **kwargs)
            grads = tape.gradient(nest.flatten(again), sources, output_gradients=list(upstream),
                                  unconnected_gradients=UnconnectedGradients.ZERO)
            grads = iter(grads)
            arg_grads = [next(grads) if is_floating(x.dtype) else None for x in args]
            return arg_grads if variables is None else (arg_grads, list(grads))
        return grad

    return functools.wraps(f)(recomputed)


def grad_pass_through(f):
    """`grad_pass_through(f)(x)` is f(x) going forward and the identity going
    backward: the gradient reaches x as if f were not there (a
    straight-through estimator, e.g. for rounding or quantisation), and
    variables f reads or assigns get none. f must return one value per input.

        y = mt.grad_pass_through(x.assign)(z ** 2)   # y == 9.0, dy/dz == 6.0
    """
    @custom_gradient
    def passed(*args, **kwargs):
        def grad(*upstream, variables=None):
            if variables is not None:
                return list(upstream), [None] * len(variables)
            return list(upstream)
        return f(*args, **kwargs), grad

    return functools.wraps(f)(passed)
