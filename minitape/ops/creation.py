"""Tensors made from nothing: zeros, ones, eye, linspace, range (constants)."""
import numpy as np

from ..tensor import Tensor, as_dtype, float32, int32
from .shapes import _shape_arg


def zeros(shape, dtype=float32, name=None):
    return Tensor(np.zeros(_shape_arg("zeros", shape), dtype=as_dtype(dtype)))


def ones(shape, dtype=float32, name=None):
    return Tensor(np.ones(_shape_arg("ones", shape), dtype=as_dtype(dtype)))


def fill(dims, value, name=None):
    value = np.asarray(value)
    return Tensor(np.full(_shape_arg("fill", dims), value,
                          dtype=float32 if value.dtype == np.float64 else value.dtype))


def zeros_like(input, dtype=None, name=None):
    return Tensor(np.zeros(input.shape, dtype=as_dtype(dtype) or input.dtype))


def ones_like(input, dtype=None, name=None):
    return Tensor(np.ones(input.shape, dtype=as_dtype(dtype) or input.dtype))


def eye(num_rows, num_columns=None, batch_shape=None, dtype=float32, name=None):
    m = np.eye(int(num_rows), None if num_columns is None else int(num_columns),
               dtype=as_dtype(dtype))
    if batch_shape is not None:
        m = np.broadcast_to(m, _shape_arg("eye", batch_shape) + m.shape).copy()
    return Tensor(m)


def linspace(start, stop, num, name=None):
    """`num` evenly spaced values from start to stop, inclusive (float32 for
    Python floats, like TensorFlow)."""
    dtype = np.result_type(np.asarray(start).dtype, np.asarray(stop).dtype)
    if not isinstance(start, (np.ndarray, np.generic, Tensor)) and dtype == np.float64:
        dtype = float32
    start, stop = np.asarray(start, dtype=dtype), np.asarray(stop, dtype=dtype)
    return Tensor(np.linspace(start, stop, int(num), dtype=dtype))


def range(start, limit=None, delta=1, dtype=None, name="range"):
    """Like Python's range, as a tensor: int32 for ints, float32 for floats."""
    if limit is None:
        start, limit = 0, start
    values = [np.asarray(v) for v in (start, limit, delta)]
    if dtype is None:
        dtype = int32 if all(v.dtype.kind in "iu" for v in values) else float32
    return Tensor(np.arange(*[v.item() for v in values], dtype=as_dtype(dtype)))

