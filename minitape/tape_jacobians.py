"""Jacobians: every row of a gradient at once, or every column of forward mode.

`tape.jacobian(y, x)` is the full Jacobian, shape `y.shape + x.shape`. It is
built in one of two directions, with equal results (to rounding):
- reverse: one backward walk per *row*, that is per element of the target,
  starting from an upstream gradient that is 1 at that element (`backward.py`);
- forward: one forward sweep over the recorded ops per *column*, that is per
  element of a source, starting from a tangent that is 1 there (`tangents.py`).
Rows (or columns) travel together as a leading batch dimension, in chunks, so
one walk does the work of many and memory stays bounded.

`jacobian` and `batch_jacobian` are methods of `GradientTape`, as in
TensorFlow. They are defined here, where both directions are available, and
attached to the one GradientTape class at the bottom of this module (tape.py
cannot import this module: it sits below forward mode).
"""
import math

import numpy as np

from . import arguments, nest, ops
from .core import registry
from .tangents import push_tangents
from .core.backward import ops_between
from .tape import (GradientTape, UnconnectedGradients, as_sources, as_targets,
                   check_unconnected, result_or_zeros)
from .ops.declaration import DECLARED
from .core.tensor import Tensor, TensorLike


def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
             parallel_iterations=None, experimental_use_pfor=True,
             experimental_direction="auto"):
    """The full Jacobian: for each source, shape `target.shape + source.shape`.

    It is built in one of two directions, with equal results (to rounding):
    - reverse: one backward walk per *row*, that is per element of the
      target, starting from an upstream gradient that is 1 at that element;
    - forward: one forward sweep over the recorded ops per *column*, that is
      per element of a source, starting from a tangent that is 1 there.
    `experimental_direction="auto"` (the default) takes the direction that
    computes fewer numbers, counted on the recorded ops between the sources
    and the target (`direction_costs`), but keeps reverse mode, TensorFlow's,
    wherever forward mode could give other numbers: complex values, and ops
    not declared smooth (sqrt at 0 gives NaN columns forward). "forward" or
    "reverse" forces one.

    With `experimental_use_pfor=True` the rows (or columns) travel together
    as a leading batch dimension, in chunks of `parallel_iterations` of
    them (by default as many as keep each batched tensor under
    `_CHUNK_ELEMENTS` numbers). With False it loops, one walk per row or
    column.
    """
    self._check_usable("jacobian")
    unconnected = check_unconnected(unconnected_gradients)
    _check_parallel_iterations("jacobian", parallel_iterations)
    if not isinstance(target, TensorLike):
        raise TypeError(f"jacobian: target must be a single tensor, got a "
                        f"{type(target).__name__}; call jacobian once per target "
                        "or mt.stack the targets first")
    (target,) = as_targets([target], "jacobian", "target")
    flat_sources = as_sources(sources, "jacobian")
    tshape = target.shape
    direction = _pick_direction(self, experimental_direction, target, flat_sources,
                                "jacobian")
    results = []
    with self._one_call():
        if direction == "forward":
            # Column j of source s: the tangent of the target when s moves along
            # its j-th element. Stacked: (s.size,) + tshape; move that axis last.
            for s in flat_sources:
                columns = _stacked_tangents(
                    self, target, s, _OneHot(s.shape, s.dtype), s.size, unconnected,
                    parallel_iterations, experimental_use_pfor)
                results.append(None if columns is None else ops.reshape(
                    _axis_to_end(columns), tshape + s.shape))
        else:
            rows = _stacked_gradients(
                self, target, _OneHot(tshape, target.dtype), target.size, flat_sources,
                unconnected, parallel_iterations, experimental_use_pfor)
            results = [None if r is None else ops.reshape(r, tshape + s.shape)
                       for r, s in zip(rows, flat_sources)]
    self._release()
    return nest.pack_like(sources, results)


def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                   parallel_iterations=None, experimental_use_pfor=True,
                   experimental_direction="reverse"):
    """Per-example Jacobians: target (b, ...), source (b, ...) ->
    (b,) + target.shape[1:] + source.shape[1:].

    Row k of the upstream is 1 at output element k of *every* example, so the
    result is d(sum over the batch of y[:, k])/dx. That equals the
    per-example Jacobian only when examples do not interact.

    `experimental_direction="forward"` (or "auto", which chooses as
    `jacobian` does, by the numbers each direction computes) sweeps tangents forward
    instead: column j is 1 at input element j of every example, which gives
    the same per-example Jacobian when examples do not interact. When they
    do (BatchNormalization in training), the two directions answer
    different questions, so the default stays TensorFlow's reverse mode.
    """
    self._check_usable("batch_jacobian")
    unconnected = check_unconnected(unconnected_gradients)
    _check_parallel_iterations("batch_jacobian", parallel_iterations)
    if not isinstance(source, TensorLike):
        raise TypeError(f"batch_jacobian: source must be a single tensor, got a "
                        f"{type(source).__name__}; call batch_jacobian once per source")
    (target,) = as_targets([target], "batch_jacobian", "target")
    (source,) = as_sources([source], "batch_jacobian")
    if target.ndim < 1 or source.ndim < 1 or target.shape[0] != source.shape[0]:
        raise ValueError(
            f"batch_jacobian: Need first dimension of target shape ({target.shape}) and "
            f"source shape ({source.shape}) to match: they are the batch")
    b, ttail, stail = target.shape[0], target.shape[1:], source.shape[1:]
    m, n = math.prod(ttail), math.prod(stail)
    direction = _pick_direction(self, experimental_direction, target, [source],
                                "batch_jacobian", m, [n])
    result = None
    with self._one_call():
        if direction == "forward":
            columns = _stacked_tangents(
                self, target, source, _OneHot(stail, source.dtype, b), n, unconnected,
                parallel_iterations, experimental_use_pfor)
            if columns is not None:  # (n, b) + ttail -> (b,) + ttail + stail
                result = ops.reshape(_axis_to_end(columns), (b,) + ttail + stail)
        else:
            (rows,) = _stacked_gradients(
                self, target, _OneHot(ttail, target.dtype, b), m, [source], unconnected,
                parallel_iterations, experimental_use_pfor)
            if rows is not None:  # (m, b) + stail -> (b,) + ttail + stail
                perm = (1, 0) + tuple(range(2, rows.ndim))
                result = ops.reshape(ops.transpose(rows, perm), (b,) + ttail + stail)
    self._release()
    return result


def _stacked_gradients(tape, target, seeds, n, sources, unconnected, chunk, use_pfor):
    """Reverse mode: for each source, the gradients of the target for the n
    upstream rows `seeds(start, stop)`, stacked to (n,) + source.shape, or
    None if the source is unconnected."""
    batched, steps = _steps(n, chunk, use_pfor, tape._ops)
    pieces = []
    for start, stop in steps:
        rows = seeds(start, stop)
        grads = tape._backward([target], [Tensor(rows if batched else rows[0])], sources)
        batch_shape = (stop - start,) if batched else ()
        pieces.append([result_or_zeros(grads, s, unconnected, batch_shape) for s in sources])
    return [_join([p[k] for p in pieces], batched) for k in range(len(sources))]


def _stacked_tangents(tape, target, source, seeds, n, unconnected, chunk, use_pfor):
    """Forward mode: the tangents of the target for the n tangents of the
    source `seeds(start, stop)`, stacked to (n,) + target.shape, or None if
    the target does not depend on the source.

    Each sweep runs the JVP rules of the recorded ops that lie between the
    source and the target, in the order they ran."""
    path, _, _ = ops_between(tape, [target._id], {source._id})
    batched, steps = _steps(n, chunk, use_pfor, path)
    pieces = []
    for start, stop in steps:
        columns = seeds(start, stop)
        seed = Tensor(columns if batched else columns[0])
        tangents = _forward_sweep(tape, path, {source._id: seed})
        t = tangents.get(target._id)
        if t is None and unconnected == UnconnectedGradients.ZERO:
            batch_shape = (stop - start,) if batched else ()
            t = ops.zeros(batch_shape + target.shape, target.dtype)
        pieces.append(t)
    return _join(pieces, batched)


def _forward_sweep(tape, path, tangents):
    """One forward sweep: the tangents of every tensor on the path (by id)."""
    for op in path:
        push_tangents(op, tangents)
    return tangents


_CHUNK_ELEMENTS = 2 ** 22  # numbers per batched tensor (16 MB of float32) in a jacobian


def jacobian_direction(n_inputs, n_outputs, sweep_numbers=1, walk_numbers=1):
    """The cheaper direction for a Jacobian with `n_outputs` rows and
    `n_inputs` columns: "forward" or "reverse".

    Forward mode runs one sweep per column, reverse mode one backward walk per
    row. A sweep computes `sweep_numbers` numbers (on each op of the path,
    one output-sized tangent term per input with a tangent), a walk
    `walk_numbers` (the gradients the rules send to the inputs on the path);
    "auto" counts both on the recorded ops (`direction_costs`). Without them,
    a sweep and a walk are taken to cost the same. On a tie, reverse mode,
    TensorFlow's.
    """
    forward, reverse = n_inputs * sweep_numbers, n_outputs * walk_numbers
    return "forward" if forward < reverse else "reverse"


def _check_parallel_iterations(method, n):
    if n is not None and arguments.size(method, "parallel_iterations", n) == 0:
        raise ValueError(f"{method}: parallel_iterations must be positive, got {n}")


def direction_costs(tape, target, sources, n_outputs=None, n_inputs=None):
    """(forward, reverse): how many numbers each direction computes for the
    Jacobian of `target` with respect to `sources`, estimated from the ops the
    tape recorded between them (rule internals not counted).

    Forward: for each source, one sweep per element; on each op between that
    source and the target, a sweep computes one term of the output's tangent
    (output-sized) per input that carries a tangent. Reverse: one walk per
    element of the target; on each op, a walk computes the gradient of every
    input that leads to a source. (batch_jacobian passes the sizes of one
    example as `n_outputs` and `n_inputs`.)

    For `jacobian` (no sizes passed) each count also holds the numbers its
    direction computes assembling the result, which are not the same in both:
    forward mode transposes every source's stacked columns (n, *target) to
    (*target, n), and reshapes them when the source is not a vector; reverse
    mode reshapes its rows when the target is not a vector. Without the
    transpose, a tanh layer with 64 inputs took forward mode for 65..87
    outputs while it computed up to 23% more numbers. (batch_jacobian's two
    directions assemble with a transpose and a reshape of the same size.)
    """
    assemble = n_outputs is None and n_inputs is None
    n_outputs = target.size if n_outputs is None else n_outputs
    n_inputs = [s.size for s in sources] if n_inputs is None else n_inputs
    forward = reverse_assembly = 0
    for s, n in zip(sources, n_inputs):
        path, needs, _ = ops_between(tape, [target._id], {s._id})
        forward += n * sum(sum(_on_path(needs, op)) * sum(y._value.size for y in op.outputs)
                           for op in path)
        if assemble and path:
            block = n * target.size  # the source's columns of the Jacobian
            forward += block * (1 + (s.shape != (n,)))  # transpose (+ reshape)
            reverse_assembly += block * (target.shape != (target.size,))  # reshape
    path, needs, _ = ops_between(tape, [target._id], {s._id for s in sources})
    walk = sum(x._value.size for op in path for x, flag in zip(op.inputs, _on_path(needs, op))
               if flag)
    return forward, n_outputs * walk + reverse_assembly


def _on_path(needs, op):
    """Which inputs of an op between the sources and the target lead to a
    source (`ops_between`'s `needs` lists only the ops where some do not)."""
    return needs.get(op.seq) or (True,) * len(op.inputs)


def _pick_direction(tape, choice, target, sources, method, n_outputs=None, n_inputs=None):
    if choice not in ("auto", "forward", "reverse"):
        raise ValueError(f"{method}: experimental_direction must be 'auto', 'forward' or "
                         f"'reverse', got {choice!r}")
    complex_dtype = next((t.dtype for t in [target, *sources] if t.dtype.kind == "c"), None)
    if choice == "forward" and complex_dtype is not None:
        raise ValueError(
            f"{method}: experimental_direction='forward' cannot take a {complex_dtype} "
            "target or source: forward mode gives the derivative f'(z), where "
            "TensorFlow's convention for complex numbers, which reverse mode follows, "
            "gives its conjugate (and two sweeps for a function that is not "
            "holomorphic); use 'reverse' or 'auto'")
    if choice == "auto":
        if complex_dtype is not None or not _forward_equals_reverse(tape, target, sources):
            return "reverse"
        forward, reverse = direction_costs(tape, target, sources, n_outputs, n_inputs)
        return jacobian_direction(1, 1, forward, reverse)
    return choice


def _smooth(op_type):
    """Whether the op type's partial derivatives are finite wherever its inputs
    and outputs are, or its JVP rule gives 0 for a zero tangent (the products'
    masks): along it a one-hot column's zero entries stay zero. Elsewhere (sqrt
    at 0, asin at 1, log, division, pow) a zero tangent times an infinite
    partial derivative is NaN, and the next product spreads it over the whole
    column, while the reverse walk, TensorFlow's, keeps the inf to one column.
    Each op's declaration says it (`Declaration.smooth`); one not declared
    smooth costs only speed."""
    declared = DECLARED.get(op_type)
    return declared is not None and declared.smooth


def _forward_equals_reverse(tape, target, sources):
    """Whether forward mode's columns equal reverse mode's rows (to rounding)
    whatever the values, so that "auto" may take the cheaper direction: every
    differentiable op between the sources and the target is smooth (`_smooth`) and has
    a JVP rule of its own. (A JVP borrowed from a user's gradient function, a
    custom_gradient's or a primitive's, need not be linear in its upstream: one
    that clips it is not, and the directions then differ.)"""
    path, _, _ = ops_between(tape, [target._id], {s._id for s in sources})
    for op in path:
        if registry.lookup(op) is None:
            continue  # not differentiable: its outputs do not move
        if not _smooth(op.type) or registry.lookup_jvp(op) is None:
            return False
    return True


class _OneHot:
    """Rows start..stop of an identity matrix, each reshaped to `shape`: the
    one-hot seeds of a Jacobian, made a chunk at a time so memory stays
    bounded. With `batch`, each row is repeated over a leading batch axis of
    that size (batch_jacobian: the same element of every example)."""

    def __init__(self, shape, dtype, batch=None):
        self.shape, self.dtype, self.batch = shape, dtype, batch

    def __call__(self, start, stop):
        k = stop - start
        rows = np.eye(k, math.prod(self.shape), start, self.dtype)  # 1 at (i, start + i)
        if self.batch is None:
            return rows.reshape((k,) + self.shape)
        return np.broadcast_to(rows.reshape((k, 1) + self.shape),
                               (k, self.batch) + self.shape)


def _steps(n, chunk, use_pfor, recorded):
    """How to cover the n rows (or columns) of a Jacobian: (batched, [(start,
    stop), ...]). Without pfor, one step per row and no batch axis. With pfor,
    chunks of `chunk` rows, by default as many as keep the largest batched
    tensor (one row of it as large as the largest recorded tensor) under
    _CHUNK_ELEMENTS numbers."""
    if not use_pfor and n > 0:
        return False, [(i, i + 1) for i in range(n)]
    if chunk is None:
        largest = max((y._value.size for op in recorded for y in op.outputs), default=1)
        chunk = _CHUNK_ELEMENTS // max(largest, 1)
    chunk = max(1, int(chunk))
    return True, [(start, min(start + chunk, n)) for start in range(0, n, chunk)] or [(0, 0)]


def _join(pieces, batched):
    """One result from the results of the steps: concatenated chunks, or
    stacked rows; None when the first is None (unconnected, hence all)."""
    if pieces[0] is None:
        return None
    if not batched:
        return ops.stack(pieces)
    return pieces[0] if len(pieces) == 1 else ops.concat(pieces, axis=0)


def _axis_to_end(t):
    """Move axis 0 to the end: (n,) + shape -> shape + (n,)."""
    return ops.transpose(t, tuple(range(1, t.ndim)) + (0,))


# The two methods of GradientTape that need both directions (see the docstring).
GradientTape.jacobian = jacobian
GradientTape.batch_jacobian = batch_jacobian
