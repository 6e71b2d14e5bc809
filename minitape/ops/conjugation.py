"""Complex numbers in gradient rules: the partial derivative at conjugated values.

TensorFlow's convention: for a real loss L of a complex z = x + iy, the
gradient a tape returns is dL/dx + i dL/dy. For a holomorphic f, that is the
upstream gradient times the CONJUGATE of f'(z), which is f' evaluated at the
conjugated values (TensorFlow's _SinGrad is `grad * cos(conj(z))`). JAX and
autograd return the conjugate of this (their `grad` of a real loss is
dL/dx - i dL/dy); docs/differences.md says so. Forward mode is
plain calculus in all three: f'(z) times the tangent.

The declaration machinery applies it, so a row's partials are plain calculus
(`partials.py` evaluates a partial at `conjugated` inputs and output in
reverse mode; a few of TensorFlow's own rules skip it, and their rows say
`conjugate=False`). A product's rule names the adjoint of the other operand,
`g @ bᴴ` (`products.py`): the conjugate transpose is that same convention,
written as the mathematics. `conj` returns a real tensor as it is and records
nothing, so real inputs pay nothing for any of this.
"""
from .complex import conj


def conjugated(*tensors):
    """The complex conjugates of the tensors (real ones as they are)."""
    return tuple(conj(t) for t in tensors)
