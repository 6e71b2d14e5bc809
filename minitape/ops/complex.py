"""Complex numbers: complex, real, imag, conj, angle.

Gradients through complex numbers follow TensorFlow's convention
(`conjugation.py` says what it is and where it is applied). The five ops here
are linear over the reals, so each rule is one line. They sit below the
declaration machinery, which takes the conjugates it needs with `conj` (free
for real tensors: it returns them as they are); their own rules use the
operators (`-`, `/`), which elementwise.py provides.
"""
import numpy as np

from ..core.registry import batch_ndim
from .broadcasting import full_tangent, lift, unbroadcast
from ..core.tensor import Tensor
from .operands import (REAL_SCALARS, broadcast_error, elementwise_shape, emit, operands, tangent_batch,
                   tensor_input)
from .declaration import declare

_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}


def complex(real, imag, name=None):
    """real + i * imag, elementwise with broadcasting: float32 parts make a
    complex64 tensor, float64 parts a complex128 one (as in TensorFlow)."""
    x, y = operands("complex", real, imag)
    dtype = _COMPLEX_OF.get(x.dtype)
    if dtype is None:
        raise TypeError(f"complex: the real and imag parts must be float32 or float64, "
                        f"got {x.dtype}")
    try:
        value = np.empty(np.broadcast_shapes(x.shape, y.shape), dtype)
    except ValueError:
        raise broadcast_error("complex", x, y) from None
    value.real, value.imag = x._value, y._value
    return emit("Complex", value, (x, y), None, name)


def _complex_grad(op, grad):
    # d(x + iy): the real part of the upstream gradient goes to x, the imaginary to y
    x, y = op.inputs
    nb = batch_ndim(op, grad)
    return (unbroadcast(real(grad), x.shape, nb) if op.needs[0] else None,
            unbroadcast(imag(grad), y.shape, nb) if op.needs[1] else None)


def _complex_jvp(op, tx, ty):
    x, y = op.inputs
    batch = tangent_batch(op, (tx, ty))
    ndim = op.outputs[0].ndim
    zero = np.zeros((), x.dtype)
    t = complex(zero if tx is None else lift(tx, x, ndim),
                zero if ty is None else lift(ty, y, ndim))
    return full_tangent(t, batch + op.outputs[0].shape)


declare("Complex", _complex_grad, _complex_jvp,
        replay=lambda xs, attrs, out_shapes: complex(xs[0], xs[1]), arity=2,
        shape=elementwise_shape)


def _complex_part(op_type, op_name, numpy_fn, of_real, doc):
    """real(x) or imag(x): the part as a float tensor; `of_real(x)` is what
    TensorFlow gives for an input that is not complex."""
    def op(input, name=None):
        x = tensor_input(op_name, input)
        if x.dtype.kind != "c":
            return of_real(x)
        return emit(op_type, np.array(numpy_fn(x._value)), (x,), None, name)  # a copy, not a view
    op.__name__ = op.__qualname__ = op_name
    op.__doc__ = doc
    return op


def _zeros_like(x):
    """Zeros of x's shape and dtype, recorded (TensorFlow's ZerosLike: imag of a
    real tensor), so traces replay them at the input's shape; no gradient."""
    return emit("ZerosLike", np.zeros_like(x._value), (x,))


declare("ZerosLike", differentiable=False,
        replay=lambda xs, attrs, out_shapes: _zeros_like(xs[0]), shape=elementwise_shape)

real = _complex_part("Real", "real", np.real, lambda x: x,
                     "The real part (a float tensor); a real input is returned as it is.")
imag = _complex_part("Imag", "imag", np.imag, _zeros_like,
                     "The imaginary part (a float tensor); zeros for a real input.")


def _real_grad(op, grad):
    return complex(grad, np.zeros((), grad.dtype))  # d(re z) = dx: grad + 0i


def _real_jvp(op, t):
    return real(t)


declare("Real", _real_grad, _real_jvp, replay=lambda xs, attrs, out_shapes: real(xs[0]),
        shape=elementwise_shape)


def _imag_grad(op, grad):
    return complex(np.zeros((), grad.dtype), grad)  # d(im z) = dy: 0 + grad i


def _imag_jvp(op, t):
    return imag(t)


declare("Imag", _imag_grad, _imag_jvp, replay=lambda xs, attrs, out_shapes: imag(xs[0]),
        shape=elementwise_shape)


def conj(x, name=None):
    """The complex conjugate; a real (or integer) input is returned as it is."""
    if type(x) is Tensor and (type(x._value) in REAL_SCALARS or x._value.dtype.kind != "c"):
        return x  # the common case inside gradient rules: nothing to do, nothing recorded
    x = tensor_input("conj", x)
    if x.dtype.kind != "c":
        return x
    return emit("Conj", np.conj(x._value), (x,), None, name)


def _conj_grad(op, grad):
    return conj(grad)  # conj(x + iy) = x - iy: dL/dx + i dL/dy flips its imaginary part


declare("Conj", _conj_grad, _conj_grad,  # linear: the tangent is conjugated too
        replay=lambda xs, attrs, out_shapes: conj(xs[0]), shape=elementwise_shape)


def angle(input, name=None):
    """The argument of a complex number, atan2(imag, real), in (-pi, pi]; for a
    real input, pi where it is negative and 0 elsewhere (as TensorFlow does)."""
    x = tensor_input("angle", input)
    if x.dtype.kind not in "fc":
        raise TypeError(f"angle: expected a float or complex tensor, got dtype {x.dtype}")
    if x.dtype.kind == "c":
        value = np.angle(x._value)  # complex64 -> float32
    else:
        value = np.where(x._value < 0, x.dtype.type(np.pi), x.dtype.type(0))
    return emit("Angle", value, (x,), None, name)


def _angle_grad(op, grad):
    # angle(z) = atan2(y, x): d/dx = -y / |z|^2, d/dy = x / |z|^2, which as
    # dL/dx + i dL/dy is -grad / (y + ix) (TensorFlow's _AngleGrad); NaN at z = 0.
    # The angle of a real number is 0 or pi: a step, no gradient (None).
    z = op.inputs[0]
    if z.dtype.kind != "c":
        return None
    return -complex(grad, np.zeros((), grad.dtype)) / complex(imag(z), real(z))


def _angle_jvp(op, t):
    # d angle = Im(dz / z) (angle(z) is the imaginary part of log z); NaN at z = 0.
    return imag(t / op.inputs[0]) if op.inputs[0].dtype.kind == "c" else None


declare("Angle", _angle_grad, _angle_jvp, replay=lambda xs, attrs, out_shapes: angle(xs[0]),
        shape=elementwise_shape)
