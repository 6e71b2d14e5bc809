"""Seeded random tensors: `mt.random.set_seed(1)` gives the same numbers on
every machine (NumPy's PCG64 generator, whose streams are platform independent)."""
import numpy as np

from .tensor import Tensor, as_dtype, float32

_generator = None  # made on first use: importing numpy.random costs ~10 ms


def set_seed(seed):
    """Restart the global generator from `seed`."""
    global _generator
    _generator = np.random.Generator(np.random.PCG64(int(seed)))


def generator(seed=None):
    """The global generator, or a fresh one for an op-level `seed`."""
    global _generator
    if seed is not None:
        return np.random.Generator(np.random.PCG64(int(seed)))
    if _generator is None:
        _generator = np.random.Generator(np.random.PCG64())
    return _generator


def _shape(shape):
    return tuple(int(s) for s in (np.asarray(shape).reshape(-1).tolist()))


def normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    dtype = as_dtype(dtype)
    values = generator(seed).standard_normal(_shape(shape), dtype=dtype)
    return Tensor((values * dtype.type(stddev) + dtype.type(mean)).astype(dtype))


def uniform(shape, minval=0, maxval=None, dtype=float32, seed=None, name=None):
    dtype = as_dtype(dtype)
    rng = generator(seed)
    if dtype.kind in "iu":
        if maxval is None:
            raise ValueError("random.uniform: integer dtypes need a maxval")
        return Tensor(rng.integers(minval, maxval, _shape(shape), dtype=dtype))
    maxval = 1 if maxval is None else maxval
    values = rng.random(_shape(shape), dtype=dtype)
    return Tensor((values * dtype.type(float(maxval) - float(minval))
                   + dtype.type(minval)).astype(dtype))
