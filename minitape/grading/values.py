"""What crosses from the answer's process to the judge: plain data only.

`plain(x)` is what a check's run part stores in `got`: `x` as plain data,
built only from values of exactly these types (a subclass is refused, so an
answer's own class cannot say what it is): None, bool, int, float, str, a
NumPy scalar or array of booleans or numbers, a minitape Tensor or Variable
(as a NumPy array of its value), and lists, tuples and dicts with str keys of
them. Anything else raises TypeError naming what was found. No method of the
value is called: a tensor's value is read, not asked for (`.numpy()` and
`__array__` of a look-alike could say anything).

`encode` and `decode` carry such a value through JSON without losing a bit
(floats as their hex form, arrays as their dtype, shape and bytes).
"""
import base64
import json

import numpy as np

from ..core.tensor import Tensor, Variable

LIMIT = 64 * 2**20  # bytes of encoded data one answer may send (64 MiB)
_SCALARS = (bool, int, float, str, type(None))
_KINDS = "biufc"  # NumPy dtype kinds: bool, signed, unsigned, float, complex
_NUMPY_SCALARS = frozenset(np.dtype(code).type for code in "?bhilqpBHILQPefdgFDG")


def _numpy_ok(dtype):
    return dtype.kind in _KINDS and not dtype.fields and not dtype.hasobject


def plain(x, _depth=0):
    """`x` as plain data (see the module's docstring); raises TypeError."""
    if _depth > 20:
        raise TypeError("nested more than 20 levels deep")
    kind = type(x)
    if kind in _SCALARS:
        return x
    if kind is Tensor or kind is Variable:
        value = x._value  # the stored value, not what a method says
        if type(value) in _NUMPY_SCALARS:
            value = np.array(value)
        if type(value) is not np.ndarray or not _numpy_ok(value.dtype):
            raise TypeError(f"a tensor of dtype {value.dtype} is not plain data")
        return value.copy()
    if kind is np.ndarray:
        if not _numpy_ok(x.dtype):
            raise TypeError(f"an array of dtype {x.dtype} is not plain data")
        return x.copy()
    if kind in _NUMPY_SCALARS:
        return x
    if kind is list or kind is tuple:
        return kind(plain(item, _depth + 1) for item in x)
    if kind is dict:
        if any(type(key) is not str for key in x):
            raise TypeError("a dict whose keys are not all str is not plain data")
        return {key: plain(value, _depth + 1) for key, value in x.items()}
    raise TypeError(f"a {kind.__module__}.{kind.__qualname__} is not plain data (expected "
                    "numbers, bools, strings, tensors, NumPy arrays, or lists, tuples and "
                    "dicts of them)")


def _to_json(x):
    kind = type(x)
    if x is None or kind is bool or kind is str:
        return x
    if kind is int:
        return {"int": str(x)}
    if kind is float:
        return {"float": x.hex()}
    if kind is np.ndarray or kind in _NUMPY_SCALARS:
        array = np.asarray(x)  # a NumPy scalar: a 0-d array
        return {"array": array.dtype.str, "shape": list(array.shape),
                "scalar": kind is not np.ndarray,
                "data": base64.b64encode(array.tobytes(order="C")).decode("ascii")}
    if kind is list or kind is tuple:
        return {kind.__name__: [_to_json(item) for item in x]}
    if kind is dict:
        return {"dict": [[key, _to_json(value)] for key, value in x.items()]}
    raise TypeError(f"cannot encode a {kind.__name__}")


def encode(x):
    """JSON text for `plain(x)` (raises TypeError, or ValueError past LIMIT)."""
    text = json.dumps(_to_json(plain(x)), separators=(",", ":"))
    if len(text) > LIMIT:
        raise ValueError(f"what the run part collected is {len(text):,} bytes encoded, "
                         f"more than the {LIMIT:,} allowed")
    return text


def _from_json(x):
    if x is None or type(x) in (bool, str):
        return x
    if type(x) is not dict or len(x) == 0:
        raise ValueError(f"not an encoded value: {x!r:.80}")
    if "int" in x:
        return int(x["int"])
    if "float" in x:
        return float.fromhex(x["float"])
    if "array" in x:
        dtype = np.dtype(x["array"])
        if not _numpy_ok(dtype):
            raise ValueError(f"dtype {dtype} is not plain data")
        shape = tuple(int(n) for n in x["shape"])
        data = base64.b64decode(x["data"], validate=True)
        if len(data) != dtype.itemsize * int(np.prod(shape, dtype=np.int64)):
            raise ValueError("the array's bytes do not match its shape")
        array = np.frombuffer(data, dtype=dtype).reshape(shape).copy()
        return array[()] if x.get("scalar") else array
    if "list" in x:
        return [_from_json(item) for item in x["list"]]
    if "tuple" in x:
        return tuple(_from_json(item) for item in x["tuple"])
    if "dict" in x:
        if any(type(key) is not str for key, _ in x["dict"]):
            raise ValueError("a dict key that is not a str")
        return {key: _from_json(value) for key, value in x["dict"]}
    raise ValueError(f"not an encoded value: {x!r:.80}")


def decode(text):
    """The value `encode` wrote (raises ValueError on anything else)."""
    if len(text) > LIMIT:
        raise ValueError("encoded value too large")
    return _from_json(json.loads(text))
