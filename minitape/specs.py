"""TensorSpec: the shape and dtype a traced function accepts.

Not a value itself: `mt.function(input_signature=[...])` and saved models use
specs to say which tensors a trace serves (`None` for any size, or any shape).
"""
import numpy as np

from . import arguments
from .core.tensor import as_dtype, float32


class TensorSpec:
    """The shape and dtype a function expects (`None` means any)."""

    def __init__(self, shape=None, dtype=float32, name=None):
        if shape is not None and not isinstance(shape, (list, tuple)) and \
                not hasattr(shape, "__len__"):
            shape = [shape]  # TensorSpec(5) is shape [5], as in TensorFlow
        self.shape = None if shape is None else tuple(
            None if s is None else arguments.size("TensorSpec", "shape entry", s)
            for s in shape)
        if dtype is None:  # TensorFlow: TypeError (None is not a DType)
            raise TypeError("TensorSpec: dtype must be a dtype such as mt.float32, "
                            "got None")
        self.dtype = as_dtype(dtype, "TensorSpec")
        self.name = name

    def is_compatible_with(self, value):
        given = np.dtype(value.dtype)
        if given != self.dtype and not (
                self.dtype.kind in "US" and self.dtype.itemsize == 0
                and given.kind == self.dtype.kind):  # mt.string: any length
            return False
        if self.shape is None:
            return True
        return len(value.shape) == len(self.shape) and all(
            s is None or s == v for s, v in zip(self.shape, value.shape))

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype}, name={self.name!r})"

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))
