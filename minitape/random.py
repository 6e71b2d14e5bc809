"""Random tensors, drawn as TensorFlow draws them (NumPy's PCG64 generator, whose
numbers are the same on every machine; they are not TensorFlow's numbers).

A draw is an op with no inputs: RandomStandardNormal, RandomUniform or
RandomUniformInt. No tape records it (there is nothing to differentiate, as
TensorFlow's are not differentiable), but a trace does (`recording.record`),
so a traced function draws new numbers at each call, replayed or compiled:
each node of its graph keeps its own `Stream` (`graph.py`). `mean`, `stddev`
and float bounds are applied with ordinary ops, as TensorFlow does, so a
tensor passed there gets its gradient.

Seeds follow `tf.random.set_seed`'s rules. No seed at all: new numbers in each
process. `set_seed(s)` alone: one sequence, the same after each `set_seed(s)`.
An op `seed`: that op's own sequence (paired with the global seed, or a
default one), which goes on from call to call, so two calls with the same seed
differ, and starts over at `set_seed`. Inside a traced function each draw has
its own sequence, seeded when traced by the global seed and its op seed (or
its place among the trace's draws), which each call takes the next numbers
of, and which `set_seed` starts over.
"""
import weakref

import numpy as np

from . import arguments, ops
from .core.context import state
from .core.tape_entries import record
from .core.tensor import Tensor, TensorLike, float32

__all__ = ["normal", "uniform", "set_seed", "Stream", "OP_TYPES"]

OP_TYPES = ("RandomStandardNormal", "RandomUniform", "RandomUniformInt")
DEFAULT_SEED = 87654321  # TensorFlow's partner of an op seed before any set_seed

_global_seed = None
_epoch = 0         # set_seed calls so far: a stream made before the last one starts over
_streams = {}      # eager draws with an op seed: (op type, dtype, seeds) -> Stream
_trace_draws = weakref.WeakKeyDictionary()  # a trace -> its draws so far (the next op seed)


class Stream:
    """The numbers one random op draws, call after call: a PCG64 generator made
    from its two seeds at the first draw, and again after each `set_seed`
    (TensorFlow starts its random ops over there too). Seeds (0, 0) mean no
    seed anywhere: fresh entropy (TensorFlow's convention).

    The three draws are the kernels of the three op types: eager calls, graph
    replays and compiled programs all call them."""

    def __init__(self, *seeds):
        self.seeds = seeds
        self._generator, self._epoch = None, None

    def generator(self):
        if self._epoch != _epoch:
            entropy = None if self.seeds in ((), (0, 0)) else list(self.seeds)
            self._generator = np.random.Generator(np.random.PCG64(entropy))
            self._epoch = _epoch
        return self._generator

    def normal(self, shape, dtype):
        if dtype == np.float16:  # (NumPy draws float32 and float64 only)
            return self.generator().standard_normal(shape, dtype=np.float32).astype(dtype)
        return self.generator().standard_normal(shape, dtype=dtype)

    def uniform(self, shape, dtype):
        if dtype == np.float16:  # multiples of 2^-11 below 1, each exact in float16
            return (self.generator().integers(0, 2048, shape) * 2.0**-11).astype(dtype)
        return self.generator().random(shape, dtype=dtype)

    def integers(self, shape, dtype, minval, maxval):
        return self.generator().integers(minval, maxval, shape, dtype=dtype)

    def __repr__(self):
        return "random numbers from fresh entropy" if self.seeds in ((), (0, 0)) else \
            f"random numbers from the seeds {self.seeds}"


_global = Stream()  # the draws with no seed of their own


def set_seed(seed):
    """Set the global seed, and start every sequence over."""
    global _global_seed, _global, _epoch
    seed = _seed("random.set_seed", seed)
    _global_seed, _global, _epoch = seed, Stream(seed), _epoch + 1
    _streams.clear()


def _seed(op_name, seed):
    return arguments.size(op_name, "seed", seed)


def generator(seed=None, op_name="random"):
    """The NumPy generator of the draws with no seed (layers' initial weights),
    or of the eager op seed `seed`."""
    if seed is None:
        return _global.generator()
    return _eager_stream("Generator", None, _seed(op_name, seed)).generator()


def get_seed(op_seed, trace=None):
    """An op's two seeds, as TensorFlow's `random_seed.get_seed`: the global
    seed and the op seed; in a trace an op with no seed takes the number of
    draws the trace made before it. None for an eager op with only a global
    seed (it draws from the global sequence)."""
    if _global_seed is None:
        return (0, 0) if op_seed is None else (DEFAULT_SEED, op_seed)
    if op_seed is None:
        if trace is None:
            return None
        op_seed = _trace_draws.get(trace, 0)
        _trace_draws[trace] = op_seed + 1
    return (_global_seed, op_seed) if (_global_seed, op_seed) != (0, 0) else (0, 2**31 - 1)


def _eager_stream(op_type, dtype, op_seed):
    seeds = get_seed(op_seed)
    if seeds is None:
        return _global
    key = (op_type, dtype, seeds)
    stream = _streams.get(key)
    if stream is None:
        if len(_streams) >= 1024:  # (a loop over seeds: bounded, as a cache)
            _streams.clear()
        stream = _streams[key] = Stream(*seeds)
    return stream


def _recording_trace():
    for recorder in state.tapes:
        if recorder.is_trace:
            return recorder
    return None


def draw(stream, op_type, shape, attrs):
    """The NumPy numbers of one draw from `stream`."""
    if op_type == "RandomUniformInt":
        return stream.integers(shape, attrs["dtype"], attrs["minval"], attrs["maxval"])
    if op_type == "RandomStandardNormal":
        return stream.normal(shape, attrs["dtype"])
    return stream.uniform(shape, attrs["dtype"])


def _draw(op_type, shape, attrs, seed, name):
    """Eagerly, the next numbers of the op's stream. In a trace, an op the trace
    keeps, with its seeds: its value while tracing comes from a stream of its
    own, so tracing takes no numbers from any sequence."""
    trace = _recording_trace()
    if trace is None:
        stream = _global if seed is None else _eager_stream(op_type, attrs["dtype"], seed)
        return Tensor(draw(stream, op_type, shape, attrs))
    attrs["seed"], attrs["seed2"] = get_seed(seed, trace)
    return _recorded(op_type, shape, attrs, name)


def _recorded(op_type, shape, attrs, name=None):
    out = Tensor(draw(Stream(attrs["seed"], attrs["seed2"]), op_type, shape, attrs))
    record(op_type, (), (out,), attrs, name)
    return out


def replay(op_type, attrs, shape, stream=None):
    """A traced draw again (`graph.py`): the next numbers of the node's
    `stream`, or inside another trace a new op with the same seeds (as
    TensorFlow inlines a function's random ops into its caller)."""
    if _recording_trace() is not None:
        return _recorded(op_type, shape, dict(attrs))
    return Tensor(draw(stream or Stream(attrs["seed"], attrs["seed2"]), op_type, shape, attrs))


def attrs_of(op):
    return dict(op.attrs)


def _real(op_name, what, value, dtype):
    """A number argument as a Python number; a tensor (a tape differentiates
    the draw's mean, scale or bounds through the ops that apply them) or a
    list of numbers as a tensor of `dtype`, which broadcasts with the draw."""
    if isinstance(value, TensorLike):
        t = ops.convert_to_tensor(value)
        if t.dtype != dtype:
            raise TypeError(f"{op_name}: {what} has dtype {t.dtype}, the draw {dtype}")
        return t
    array = np.asarray(value) if not isinstance(value, (list, tuple)) or \
        all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value) else None
    if array is None or array.dtype.kind not in "iuf":
        raise TypeError(f"{op_name}: {what} must be a real number (or a tensor), got "
                        f"{type(value).__name__} {value!r}")
    return array.item() if array.ndim == 0 else Tensor(array.astype(dtype))


def _shape_with(op_name, shape, *params):
    """The shape of the draw once its tensor parameters broadcast with it
    (checked before anything is drawn or recorded)."""
    try:
        return np.broadcast_shapes(shape, *(p.shape for p in params if isinstance(p, Tensor)))
    except ValueError:
        raise ValueError(f"{op_name}: shape {list(shape)} and the shapes of "
                         f"{[p.shape for p in params if isinstance(p, Tensor)]} do not "
                         "broadcast together") from None


def _scaled(x, scale, shift):
    """x * scale + shift, as TensorFlow computes a draw's mean and scale (the
    ops left out where a number makes them change nothing)."""
    if isinstance(scale, Tensor) or scale != 1:
        x = ops.multiply(x, scale)
    if isinstance(shift, Tensor) or shift != 0:
        x = ops.add(x, shift)
    return x


def normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    shape = arguments.shape("random.normal", shape)
    dtype = arguments.dtype("random.normal", dtype, kinds="f")
    mean = _real("random.normal", "mean", mean, dtype)
    stddev = _real("random.normal", "stddev", stddev, dtype)
    _shape_with("random.normal", shape, mean, stddev)
    seed = None if seed is None else _seed("random.normal", seed)
    z = _draw("RandomStandardNormal", shape, {"dtype": dtype}, seed, name)
    return _scaled(z, stddev, mean)


def uniform(shape, minval=0, maxval=None, dtype=float32, seed=None, name=None):
    shape = arguments.shape("random.uniform", shape)
    dtype = arguments.dtype("random.uniform", dtype, kinds="iuf")
    seed = None if seed is None else _seed("random.uniform", seed)
    if dtype.kind in "iu":
        if maxval is None:
            raise ValueError("random.uniform: integer dtypes need a maxval")
        lo = arguments.integer("random.uniform", "minval", minval)
        hi = arguments.integer("random.uniform", "maxval", maxval)
        if lo >= hi:
            raise ValueError(f"random.uniform: needs minval < maxval, got {lo} and {hi}")
        info = np.iinfo(dtype)
        if lo < info.min or hi - 1 > info.max:
            raise ValueError(f"random.uniform: [{lo}, {hi}) does not fit {dtype}")
        return _draw("RandomUniformInt", shape, {"dtype": dtype, "minval": lo, "maxval": hi},
                     seed, name)
    lo = _real("random.uniform", "minval", minval, dtype)
    hi = 1.0 if maxval is None else _real("random.uniform", "maxval", maxval, dtype)
    _shape_with("random.uniform", shape, lo, hi)
    u = _draw("RandomUniform", shape, {"dtype": dtype}, seed, name)
    if isinstance(lo, Tensor) or isinstance(hi, Tensor):  # u * (maxval - minval) + minval
        return _scaled(u, ops.subtract(hi, lo), lo)
    return _scaled(u, (dtype.type(hi) - dtype.type(lo)).item(), lo)
