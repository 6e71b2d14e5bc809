"""Seeded random tensors: `mt.random.set_seed(1)` gives the same numbers on
every machine (NumPy's PCG64 generator, whose streams are platform independent)."""
import numpy as np

from . import arguments
from .tensor import Tensor, float32

_generator = None  # made on first use: importing numpy.random costs ~10 ms


def set_seed(seed):
    """Restart the global generator from `seed`."""
    global _generator
    _generator = np.random.Generator(np.random.PCG64(_seed("random.set_seed", seed)))


def _seed(op_name, seed):
    return arguments.size(op_name, "seed", seed)


def generator(seed=None, op_name="random"):
    """The global generator, or a fresh one for an op-level `seed`."""
    global _generator
    if seed is not None:
        return np.random.Generator(np.random.PCG64(_seed(op_name, seed)))
    if _generator is None:
        _generator = np.random.Generator(np.random.PCG64())
    return _generator


def _real(op_name, what, value):
    array = np.asarray(value)
    if array.ndim != 0 or array.dtype.kind not in "iuf":
        raise TypeError(f"{op_name}: {what} must be a real number, got "
                        f"{type(value).__name__} {value!r}")
    return array.item()


def normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    shape = arguments.shape("random.normal", shape)
    dtype = arguments.dtype("random.normal", dtype, kinds="f")
    mean = _real("random.normal", "mean", mean)
    stddev = _real("random.normal", "stddev", stddev)
    values = generator(seed, "random.normal").standard_normal(shape, dtype=dtype)
    return Tensor((values * dtype.type(stddev) + dtype.type(mean)).astype(dtype))


def uniform(shape, minval=0, maxval=None, dtype=float32, seed=None, name=None):
    shape = arguments.shape("random.uniform", shape)
    dtype = arguments.dtype("random.uniform", dtype, kinds="iuf")
    if dtype.kind in "iu":
        if maxval is None:
            raise ValueError("random.uniform: integer dtypes need a maxval")
        lo = arguments.integer("random.uniform", "minval", minval)
        hi = arguments.integer("random.uniform", "maxval", maxval)
        if lo >= hi:
            raise ValueError(f"random.uniform: needs minval < maxval, got {lo} and {hi}")
        return Tensor(generator(seed, "random.uniform").integers(lo, hi, shape, dtype=dtype))
    lo = _real("random.uniform", "minval", minval)
    hi = 1.0 if maxval is None else _real("random.uniform", "maxval", maxval)
    values = generator(seed, "random.uniform").random(shape, dtype=dtype)
    return Tensor((values * dtype.type(float(hi) - float(lo)) + dtype.type(lo)).astype(dtype))
