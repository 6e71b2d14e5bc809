"""Special functions: TensorFlow's erf, erfc, lgamma, digamma and polygamma.

NumPy has none of them (and SciPy is not a dependency), so the forwards are:

- erf, erfc, lgamma: Python's `math.erf`, `math.erfc`, `math.lgamma` (the C
  library's, correct to float64 rounding) applied to each element. Exact but
  slow, about 0.1 microsecond an element: fine for teaching-sized tensors.
  lgamma is log|Gamma(x)|, inf at the poles 0, -1, -2, ... (as in TensorFlow).
- digamma and polygamma: vectorised NumPy below (`_polygamma`), from the
  recurrence psi(x) = psi(x + 1) - 1/x, the asymptotic series for large x and
  the reflection formula for negative x; within a few float64 ulps of SciPy
  except near digamma's root at 1.4616 (there the error is absolute, ~1e-16).

float32 inputs are computed in float64 and rounded. The derivatives chain into
each other: lgamma' = digamma, digamma' = polygamma(1, x), and
d polygamma(n, x)/dx = polygamma(n + 1, x), so every order is differentiable.
"""
import math

import numpy as np

from .elementwise import exp, square
from .partials import binary, unary


def _elementwise(scalar_fn):
    """A NumPy function from a Python float -> float function (float64 inside)."""
    vectorised = np.vectorize(scalar_fn, otypes=[np.float64])

    def run(v):
        return vectorised(v.astype(np.float64)).astype(v.dtype, copy=False)
    return run


def _lgamma(v):
    try:
        return math.lgamma(v)
    except ValueError:     # a pole: 0, -1, -2, ...
        return math.inf
    except OverflowError:  # x > 2.5e305: log Gamma(x) overflows float64
        return math.inf


# B_2, B_4, ..., B_20: the Bernoulli numbers of the asymptotic series
_BERNOULLI = np.array([1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6,
                       -3617 / 510, 43867 / 798, -174611 / 330])


def _psi_positive(n, x):
    """polygamma(n, x) for x > 0: shift x up with the recurrence
    psi_n(x) = psi_n(x + 1) - (-1)**n n! / x**(n + 1), then the asymptotic series
    psi(x) ~ log x - 1/(2x) - sum B_2k / (2k x**2k) (n = 0), or
    psi_n(x) ~ (-1)**(n + 1) [(n-1)!/x**n + n!/(2 x**(n+1))
                              + sum B_2k (2k+n-1)!/(2k)! / x**(2k+n)]  (n >= 1)."""
    polynomial = np.polynomial.polynomial  # NumPy loads it on first use, not at import
    x = x.copy()
    shift = np.zeros_like(x)
    step = (-1) ** n * math.factorial(n)
    small = x < 12 + 2 * n  # there the series' tenth term is below 1e-17 of the sum
    while small.any():
        shift[small] -= step * x[small] ** (-n - 1.0)
        x[small] += 1
        small = x < 12 + 2 * n
    inv = 1 / x
    k = np.arange(1, len(_BERNOULLI) + 1)
    if n == 0:
        coefficients = _BERNOULLI / (2 * k)
        series = polynomial.polyval(inv * inv, np.concatenate([[0], coefficients]))
        main = np.log(x) - 0.5 * inv - series
    else:
        coefficients = _BERNOULLI * np.array([math.factorial(2 * j + n - 1) / math.factorial(2 * j)
                                             for j in k])
        series = polynomial.polyval(inv * inv, np.concatenate([[0], coefficients]))
        main = (-1) ** (n + 1) * inv ** n * (math.factorial(n - 1) + 0.5 * math.factorial(n) * inv
                                             + series)
    return np.where(shift == 0, main, main + shift)  # keeps -0.0 at x = inf


def _cot_derivative(n, x):
    """d^n/dx^n cot(pi x), as a polynomial in c = cot(pi x): P_0 = c and
    P_(k+1) = -pi (1 + c^2) P_k'(c), since dc/dx = -pi (1 + c^2)."""
    polynomial = np.polynomial.polynomial  # NumPy loads it on first use, not at import
    p = np.array([0.0, 1.0])
    for _ in range(n):
        p = polynomial.polymul(-np.pi * np.array([1.0, 0.0, 1.0]), polynomial.polyder(p))
    r = x - np.round(x)  # cot(pi x) has period 1: reduce first, for accuracy
    return polynomial.polyval(np.cos(np.pi * r) / np.sin(np.pi * r), p)


def _psi(n, x):
    """polygamma(n, x) for one integer n >= 0 (float64 array x)."""
    out = np.full(x.shape, np.nan)
    pole = (x <= 0) & (x == np.floor(x))  # 0, -1, -2, ... and -inf
    if n % 2:
        out[pole] = np.inf  # TensorFlow: inf for odd n, NaN for even n
    positive = x > 0
    out[positive] = _psi_positive(n, x[positive])
    negative = (x < 0) & ~pole
    xn = x[negative]
    # reflection: psi_n(x) = (-1)**n psi_n(1 - x) - pi d^n/dx^n cot(pi x)
    out[negative] = (-1) ** n * _psi_positive(n, 1 - xn) - np.pi * _cot_derivative(n, xn)
    return out


def _polygamma(a, x):
    """polygamma(a, x) elementwise; NaN where a is not a non-negative integer."""
    dtype = np.result_type(a, x)
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    out = np.full(x.shape, np.nan)
    valid = (a >= 0) & (a == np.floor(a)) & np.isfinite(a)
    for n in np.unique(a[valid]):
        chosen = valid & (a == n)
        out[chosen] = _psi(int(n), x[chosen])
    return out.astype(dtype, copy=False)


_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)

# name, op type, forward, derivative f'(x) (y = f(x)), doc
erf = unary("erf", "Erf", _elementwise(math.erf),
            lambda x, y: _TWO_OVER_SQRT_PI * exp(-square(x)),
            "The error function, 2/sqrt(pi) times the integral of exp(-t^2) from 0 to x.",
            kinds="f", smooth=True)
erfc = unary("erfc", "Erfc", _elementwise(math.erfc),
             lambda x, y: -_TWO_OVER_SQRT_PI * exp(-square(x)),
             "1 - erf(x), accurate where erf(x) is close to 1.", kinds="f", smooth=True)
lgamma = unary("lgamma", "Lgamma", _elementwise(_lgamma),
               lambda x, y: digamma(x),                # NaN at the poles, as TensorFlow
               "log |Gamma(x)|; inf at 0, -1, -2, ...", kinds="f")
digamma = unary("digamma", "Digamma", lambda v: _polygamma(np.zeros((), v.dtype), v),
                lambda x, y: polygamma(np.ones((), x.dtype), x),  # trigamma; inf at poles
                "psi(x), the derivative of lgamma; NaN at 0, -1, -2, ...", kinds="f")

# d/dx psi^(a)(x) = psi^(a+1)(x); a is a whole number: no gradient (None), as in TensorFlow
_polygamma_op = binary("polygamma", "Polygamma", _polygamma, kinds="f",
                       partials=(None, lambda a, x, z: polygamma(a + 1, x)))


def polygamma(a, x, name=None):
    """The a-th derivative of digamma, psi^(a)(x), for a whole number a >= 0 (a
    float tensor like x, as in TensorFlow; NaN for any other a)."""
    return _polygamma_op(a, x, name=name)
