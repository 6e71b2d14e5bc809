"""Structural matrix ops: trace, diag, diag_part, set_diag, band_part,
adjoint, matvec and cross, with their gradient and JVP rules.

Each acts on the last two axes (the last one for vectors), so leading batch
dims, including the batch of upstream gradients or tangents of a vectorised
Jacobian, ride along untouched. All but `cross` are linear and only move
numbers: the gradient of "read the diagonal" is "write the diagonal into
zeros", and the reverse, so each rule is the partner op applied to `grad`,
and each JVP is the op itself applied to the tangent.
"""
import math

import numpy as np

from .. import arguments
from ..core.registry import batch_ndim
from .broadcasting import lift, reduce_sum, unbroadcast
from .complex import conj
from .operands import (attr_int, attr_number, emit, first_input_dtype, matrix_shape, tangent_batch,
                   tensor_input)
from .creation import zeros
from .declaration import declare
from .matmul_and_solve import matmul
from .shapes import expand_dims, matrix_transpose, squeeze


def _diagonal_index(rows, cols, k):
    """Row and column indices of diagonal k of a rows x cols matrix (k > 0
    above the main diagonal, k < 0 below)."""
    length = max(0, min(rows + min(k, 0), cols - max(k, 0)))
    i = np.arange(length)
    return i - min(k, 0), i + max(k, 0)


def _offset(op_name, k):
    if isinstance(k, (list, tuple)) or (isinstance(k, np.ndarray) and k.ndim):
        raise NotImplementedError(f"{op_name}: k must be one integer (bands of several "
                                  f"diagonals are not supported), got {k!r}")
    return arguments.integer(op_name, "k", k)


# --- diag_part: read diagonal k ---------------------------------------------------

def diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):
    """Diagonal k of each matrix in the last two axes: shape (..., length)."""
    x = tensor_input("linalg.diag_part", input)
    if x.ndim < 2:
        raise ValueError(f"linalg.diag_part: needs rank >= 2, got shape {x.shape}")
    k = _offset("linalg.diag_part", k)
    rows, cols = x.shape[-2:]
    if k and not -rows < k < cols:  # the main diagonal exists even when empty
        raise ValueError(f"linalg.diag_part: diagonal k={k} is outside a {rows} x {cols} "
                         "matrix")
    i, j = _diagonal_index(rows, cols, k)
    return emit("MatrixDiagPartV3", x._value[..., i, j], (x,),
                {"k": k, "rows": rows, "cols": cols}, None if name == "diag_part" else name)


def _diag_part_grad(op, grad):
    """Reading entries (i, i + k) sends their gradient back there, zeros elsewhere."""
    a = op.attrs
    return diag(grad, k=a["k"], num_rows=a["rows"], num_cols=a["cols"])


def _diag_part_jvp(op, t):
    return diag_part(t, k=op.attrs["k"])


def _diag_part_shape(shapes, attrs, declared):
    batch, rows, cols = matrix_shape(shapes[0])
    k = attr_int(attrs, "k", -rows + 1 if rows else 0, cols - 1 if cols else 0)
    return (batch + (len(_diagonal_index(rows, cols, k)[0]),),), 0


declare("MatrixDiagPartV3", _diag_part_grad, _diag_part_jvp,
        replay=lambda xs, a, o: diag_part(xs[0], k=a["k"]),
        attrs_of=lambda op: {"k": op.attrs["k"]}, shape=_diag_part_shape, dtype=first_input_dtype,
        smooth=True)


# --- diag: write a vector onto diagonal k of zeros ----------------------------------

def diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0,
         align="RIGHT_LEFT"):
    """Matrices (..., rows, cols) holding `diagonal` (..., n) on diagonal k,
    `padding_value` elsewhere; square of size n + |k| by default."""
    v = tensor_input("linalg.diag", diagonal)
    if v.ndim < 1:
        raise ValueError(f"linalg.diag: needs a vector (rank >= 1), got shape {v.shape}")
    k = _offset("linalg.diag", k)
    n = v.shape[-1]
    rows = arguments.integer("linalg.diag", "num_rows", num_rows)
    cols = arguments.integer("linalg.diag", "num_cols", num_cols)
    if rows == -1 and cols == -1:  # square, as TensorFlow
        rows = cols = n + abs(k)
    rows = n + max(-k, 0) if rows == -1 else rows
    cols = n + max(k, 0) if cols == -1 else cols
    i, j = _diagonal_index(rows, cols, k)
    if len(i) != n:
        raise ValueError(f"linalg.diag: a diagonal of length {n} does not fit diagonal "
                         f"k={k} of a {rows} x {cols} matrix (length {len(i)})")
    padding = np.asarray(padding_value, dtype=v.dtype)
    if padding.ndim:
        raise ValueError(f"linalg.diag: padding_value must be a scalar, got shape "
                         f"{padding.shape}")
    value = np.full(v.shape[:-1] + (rows, cols), padding, dtype=v.dtype)
    value[..., i, j] = v._value
    return emit("MatrixDiagV3", value, (v,),
                {"k": k, "rows": rows, "cols": cols, "padding": padding.item()},
                None if name == "diag" else name)


def _diag_grad(op, grad):
    """Only diagonal k came from the input; the padding is constant."""
    return diag_part(grad, k=op.attrs["k"])


def _diag_jvp(op, t):
    a = op.attrs
    return diag(t, k=a["k"], num_rows=a["rows"], num_cols=a["cols"])


def _diag_shape(shapes, attrs, declared):
    # the matrix size is the traced output's (num_rows, num_cols)
    diagonal, out = shapes[0], declared[0] if declared else None
    k, _ = attr_int(attrs, "k", -(1 << 40), 1 << 40), attr_number(attrs, "padding")
    if not diagonal or out is None or len(out) != len(diagonal) + 1 \
            or tuple(out[:-2]) != diagonal[:-1] \
            or len(_diagonal_index(out[-2], out[-1], k)[0]) != diagonal[-1]:
        raise ValueError(f"a diagonal of shape {diagonal} does not fit diagonal k={k} of "
                         f"the declared output {out}")
    return (tuple(out),), 0


declare("MatrixDiagV3", _diag_grad, _diag_jvp,
        replay=lambda xs, a, o: diag(xs[0], k=a["k"], num_rows=o[0][-2],
                                              num_cols=o[0][-1], padding_value=a["padding"]),
        attrs_of=lambda op: {"k": op.attrs["k"], "padding": op.attrs["padding"]},
        shape=_diag_shape, dtype=first_input_dtype, smooth=True)


# --- set_diag: replace diagonal k -----------------------------------------------------

def set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):
    """`input` with diagonal k replaced by `diagonal` (batch shapes must match)."""
    x = tensor_input("linalg.set_diag", input)
    v = tensor_input("linalg.set_diag", diagonal)
    if x.dtype != v.dtype:
        raise TypeError(f"linalg.set_diag: input and diagonal have different dtypes, "
                        f"{x.dtype} and {v.dtype}")
    k = _offset("linalg.set_diag", k)
    if x.ndim < 2:
        raise ValueError(f"linalg.set_diag: needs rank >= 2, got shape {x.shape}")
    i, j = _diagonal_index(x.shape[-2], x.shape[-1], k)
    if v.shape != x.shape[:-2] + (len(i),):
        raise ValueError(f"linalg.set_diag: for an input of shape {x.shape} and k={k} the "
                         f"diagonal must have shape {x.shape[:-2] + (len(i),)}, got {v.shape}")
    value = x._value.copy()
    value[..., i, j] = v._value
    return emit("MatrixSetDiagV3", value, (x, v), {"k": k},
                None if name == "set_diag" else name)


def _set_diag_grad(op, grad):
    """The input gets the gradient off the diagonal, the diagonal gets the rest."""
    k = op.attrs["k"]
    gd = diag_part(grad, k=k)
    gx = set_diag(grad, zeros(gd.shape, grad.dtype), k=k) if op.needs[0] else None
    return gx, gd


def _set_diag_jvp(op, tx, td):
    x, v = op.inputs
    batch = tangent_batch(op, (tx, td))
    k = op.attrs["k"]
    tx = zeros(batch + x.shape, x.dtype) if tx is None else tx
    td = zeros(batch + v.shape, v.dtype) if td is None else td
    return set_diag(tx, td, k=k)


def _set_diag_shape(shapes, attrs, declared):
    (batch, rows, cols), diagonal = matrix_shape(shapes[0]), shapes[1]
    k = attr_int(attrs, "k", -(1 << 40), 1 << 40)
    if diagonal != batch + (len(_diagonal_index(rows, cols, k)[0]),):
        raise ValueError(f"a diagonal of shape {diagonal} does not fit diagonal k={k} of "
                         f"{shapes[0]}")
    return (shapes[0],), 0


def _same_dtypes(dtypes, attrs):
    if dtypes[0] != dtypes[1]:
        raise ValueError(f"input and diagonal have different dtypes, {dtypes[0]} and "
                         f"{dtypes[1]}")
    return dtypes[:1]


declare("MatrixSetDiagV3", _set_diag_grad, _set_diag_jvp,
        replay=lambda xs, a, o: set_diag(xs[0], xs[1], k=a["k"]), arity=2,
        attrs_of=lambda op: {"k": op.attrs["k"]}, shape=_set_diag_shape, dtype=_same_dtypes,
        smooth=True)


# --- band_part: keep a band around the diagonal ---------------------------------

def band_part(input, num_lower, num_upper, name=None):
    """Entries (i, j) with i - j <= num_lower and j - i <= num_upper kept, the
    others zero; a negative count keeps the whole triangle."""
    x = tensor_input("linalg.band_part", input)
    if x.ndim < 2:
        raise ValueError(f"linalg.band_part: needs rank >= 2, got shape {x.shape}")
    lower = arguments.integer("linalg.band_part", "num_lower", num_lower)
    upper = arguments.integer("linalg.band_part", "num_upper", num_upper)
    mask = _band(x.shape[-2], x.shape[-1], lower, upper)
    return emit("MatrixBandPart", np.where(mask, x._value, np.zeros((), x.dtype)), (x,),
                {"num_lower": lower, "num_upper": upper}, name)


def _band(rows, cols, lower, upper):
    i, j = np.arange(rows)[:, None], np.arange(cols)[None, :]
    return ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))


def _band_part_grad(op, grad):
    """A mask: the kept entries pass their gradient, the others get none."""
    return band_part(grad, op.attrs["num_lower"], op.attrs["num_upper"])


def _band_part_jvp(op, t):
    return band_part(t, op.attrs["num_lower"], op.attrs["num_upper"])


declare("MatrixBandPart", _band_part_grad, _band_part_jvp,
        replay=lambda xs, a, o: band_part(xs[0], a["num_lower"], a["num_upper"]),
        attrs_of=lambda op: {"num_lower": op.attrs["num_lower"],
                            "num_upper": op.attrs["num_upper"]},
        shape=lambda shapes, a, declared: _band_part_shape(shapes[0], a), smooth=True)


def _band_part_shape(shape, attrs):
    matrix_shape(shape)
    for name in ("num_lower", "num_upper"):
        attr_int(attrs, name, -(1 << 62), 1 << 62)
    return (shape,), 0


# --- compositions: trace, adjoint, matvec -------------------------------------------

def trace(x, name=None):
    """Sum of the main diagonal of each matrix (as TensorFlow: the sum of
    diag_part), so its rules are those of diag_part and reduce_sum:
    d tr(A) = tr(dA), and the gradient is grad * I."""
    x = tensor_input("linalg.trace", x)
    if x.ndim < 2:
        raise ValueError(f"linalg.trace: needs rank >= 2, got shape {x.shape}")
    return reduce_sum(diag_part(x), axis=-1, name=name)


def adjoint(matrix, name=None):
    """The conjugate transpose of the last two axes; for real matrices, the
    transpose (`conj` of a real tensor is the tensor, and records nothing)."""
    x = tensor_input("linalg.adjoint", matrix)
    if x.ndim < 2:
        raise ValueError(f"linalg.adjoint: needs rank >= 2, got shape {x.shape}")
    return matrix_transpose(conj(x), name=name)


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False,
           name=None):
    """op(a) @ b for matrices a (..., m, n) and vectors b (..., n): a matmul
    with b as a one-column matrix (so its rules are matmul's)."""
    b = tensor_input("linalg.matvec", b)
    if b.ndim < 1:
        raise ValueError(f"linalg.matvec: b must be a vector (rank >= 1), got shape "
                         f"{b.shape}")
    column = matmul(a, expand_dims(b, -1), transpose_a=transpose_a, adjoint_a=adjoint_a)
    return squeeze(column, -1, name=name)


# --- cross product ---------------------------------------------------------------------

def cross(a, b, name=None):
    """a x b of 3-vectors in the last axis (a and b of one shape, as TensorFlow)."""
    a, b = tensor_input("linalg.cross", a), tensor_input("linalg.cross", b)
    if a.shape != b.shape or a.ndim < 1 or a.shape[-1] != 3:
        raise ValueError(f"linalg.cross: needs two tensors of one shape (..., 3), got "
                         f"{a.shape} and {b.shape}")
    if a.dtype != b.dtype:
        raise TypeError(f"linalg.cross: different dtypes {a.dtype} and {b.dtype}")
    return _cross(a, b, name)


def _cross(a, b, name=None):
    """The Cross op, broadcasting (for rules, whose operands carry batch dims)."""
    return emit("Cross", np.cross(a._value, b._value), (a, b), None, name)


def _cross_grad(op, grad):
    """<g, a x b> = <b x g, a> = <g x a, b> (the scalar triple product turns)."""
    a, b = op.inputs
    nb = batch_ndim(op, grad)
    ga = unbroadcast(_cross(b, grad), a.shape, nb) if op.needs[0] else None
    gb = unbroadcast(_cross(grad, a), b.shape, nb) if op.needs[1] else None
    return ga, gb


def _cross_jvp(op, ta, tb):
    """The product rule: d(a x b) = da x b + a x db."""
    a, b = op.inputs
    ndim = op.outputs[0].ndim
    da = None if ta is None else _cross(lift(ta, a, ndim), b)
    db = None if tb is None else _cross(a, lift(tb, b, ndim))
    return da if db is None else db if da is None else da + db


def _cross_shape(shapes, attrs, declared):
    out = np.broadcast_shapes(*shapes)
    if any(not s or s[-1] != 3 for s in shapes):
        raise ValueError(f"needs vectors of 3 entries in the last axis, got {shapes}")
    return (out,), 2 * math.prod(out)


declare("Cross", _cross_grad, _cross_jvp, replay=lambda xs, a, o: _cross(xs[0], xs[1]), arity=2,
        shape=_cross_shape, dtype=first_input_dtype)
