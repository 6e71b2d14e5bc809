"""One table row makes one unary elementwise op: its forward, gradient rule,
JVP rule and replay entry.

An elementwise y = f(x) has a diagonal Jacobian, f'(x). So one derivative,
written with minitape ops (so that second derivatives work), gives both rules:

    gradient  (reverse mode):  grad * conj(f'(x))   (TensorFlow's convention for
                                                    complex x, see complex.py)
    JVP       (forward mode):  f'(x) * tangent

`derivative(x, y)` gets the input and the output (some derivatives read
better in y: asinh' = 1 / cosh(y)). The families (trigonometric.py,
special.py, exp_log.py, ...) list their ops as rows of `unary(...)` calls.
"""
import numpy as np

from ..registry import RegisterGradient, RegisterJVP
from ..tensor import Tensor
from .complex import conj
from .core import elementwise_shape, float_input, emit, replay
from .elementwise import equal, where


def zero_where_zero(upstream, term):
    """`term` (upstream times a derivative), but exactly 0 where `upstream` is 0.

    TensorFlow's C++ gradient kernels for Rsqrt and Reciprocal (RsqrtGrad,
    ReciprocalGrad) return 0 where the incoming gradient is 0, even where the
    derivative is inf or NaN: so `tf.where(x > 0, tf.math.rsqrt(x), 0.)` has the
    gradient 0 at x = -1, not NaN (measured with TensorFlow 2.21; its Python
    rules, such as Log1p's, multiply and give NaN). The mask is a comparison,
    not differentiable."""
    return where(equal(upstream, 0), np.zeros((), term.dtype), term)


def unary(name, op_type, forward, derivative, doc, complex=True, masked=False):
    """Define the op `name(x)` (a float tensor, complex too if `complex`), which
    records `op_type` and computes `forward` on the NumPy value (warnings about
    inf and NaN silenced: TensorFlow returns them quietly). `masked`: the rules
    give 0 where the upstream gradient or tangent is 0 (`zero_where_zero`)."""
    kinds = "fc" if complex else "f"

    def op(x, name=None):
        if type(x) is not Tensor or x._value.dtype.kind not in kinds:
            x = float_input(op.__name__, x)
            if x.dtype.kind not in kinds:
                raise TypeError(f"{op.__name__}: expected a real floating-point tensor, "
                                f"got dtype {x.dtype}")
        with np.errstate(all="ignore"):
            value = forward(x._value)
        return emit(op_type, value, (x,), None, name)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc

    def gradient(op, grad):
        x, y = op.inputs[0], op.outputs[0]
        term = grad * conj(derivative(x, y))
        return zero_where_zero(grad, term) if masked else term

    def jvp(op, tangent):
        x, y = op.inputs[0], op.outputs[0]
        term = derivative(x, y) * tangent
        return zero_where_zero(tangent, term) if masked else term

    gradient.__name__ = gradient.__qualname__ = f"_{name}_grad"
    jvp.__name__ = jvp.__qualname__ = f"_{name}_jvp"
    RegisterGradient(op_type, batch_safe=True)(gradient)
    RegisterJVP(op_type, batch_safe=True)(jvp)
    replay(op_type, lambda xs, attrs, out_shapes: op(xs[0]), shape=elementwise_shape)
    return op
