"""`mt.test`: check gradients against finite differences.

- `compute_gradient(f, x)` is TensorFlow's `tf.test.compute_gradient`: the full
  Jacobians of `f`, once from the tape and once from central differences.
- `check_gradients(f, args, order=2)` is autograd's `check_grads`: for each
  order it compares ONE random directional derivative from reverse mode with
  the same directional derivative from central differences. One direction is
  enough: a wrong gradient agrees with a random direction only by accident.
"""
import warnings

import numpy as np

from . import nest, ops
from .tape_jacobians import GradientTape
from .tape import UnconnectedGradients
from .core.tensor import constant, convert_to_tensor, float64

_ZERO = UnconnectedGradients.ZERO


def compute_gradient(f, x, delta=None):
    """Theoretical and numerical Jacobians of `f` at the values in the list `x`.

    Returns `(theoretical, numerical)`, two tuples with one 2-D NumPy array per
    element of `x`, of shape `(y.size, x[i].size)` where `y = f(*x)`. Row r,
    column c is d y.flat[r] / d x[i].flat[c]. The theoretical Jacobians come
    from `GradientTape.jacobian`; the numerical ones from central differences
    (f(x + delta) - f(x - delta)) / (2 delta), one element of x at a time.

    As in TensorFlow, a complex number counts as two real ones, its real and
    imaginary parts, side by side: for `y = c * x` with `c = 5 + 7j`, both
    Jacobians are [[5, -7], [7, 5]] (rows: Re y, Im y; columns: Re x, Im x).
    The arrays have the real dtype of x[i]. When y is empty, the gradients
    are still computed once, and must have x's shape and be zero (ValueError).

    `delta` defaults to 2**-20 (about 1e-6) for float64 inputs and 2**-10
    (about 1e-3) for float32 and smaller floats: powers of two, so the step is
    exact in binary floating point.

        theoretical, numerical = mt.test.compute_gradient(mt.sin, [x])
        np.testing.assert_allclose(theoretical[0], numerical[0], atol=1e-6)
    """
    if not isinstance(x, (list, tuple)):
        raise ValueError("compute_gradient: `x` must be a list or tuple of values "
                         "convertible to a Tensor (arguments to `f`), not a "
                         f"{type(x).__name__}")
    xs = [convert_to_tensor(v) for v in x]
    with GradientTape(persistent=True) as tape:
        tape.watch(xs)
        y = convert_to_tensor(f(*xs))
        parts = [ops.real(y), ops.imag(y)] if y.dtype.kind == "c" else [y]
    if y.size == 0:
        _check_empty(tape, y, xs)
    rows = len(parts) * y.size
    theoretical, numerical = [], []
    for i, v in enumerate(xs):
        real = _real_dtype(v.dtype)
        columns = v.size * (2 if v.dtype.kind == "c" else 1)
        jacobians = [tape.jacobian(p, v, unconnected_gradients=_ZERO) for p in parts]
        pairs = [_real_view(j.numpy().reshape(y.size, v.size)) for j in jacobians]
        theoretical.append(np.stack(pairs, 1).reshape(rows, columns).astype(real))
        step = delta if delta is not None else (2.0**-20 if real == float64 else 2.0**-10)
        numeric = np.zeros((rows, columns), real)
        for c in range(columns):
            plus, minus = _nudge(xs, i, c, step), _nudge(xs, i, c, -step)
            taken = _real_view(plus[i].numpy()).reshape(-1)[c].astype(float64) - \
                _real_view(minus[i].numpy()).reshape(-1)[c].astype(float64)
            moved = _real_view(np.asarray(f(*plus))).astype(float64) - \
                _real_view(np.asarray(f(*minus))).astype(float64)
            numeric[:, c] = moved.reshape(-1) / taken
        numerical.append(numeric)
    return tuple(theoretical), tuple(numerical)


def _real_dtype(dtype):
    return np.zeros((), dtype).real.dtype


def _real_view(array):
    """A complex array as real numbers along its last axis (a scalar as a
    vector), each real part followed by its imaginary part; a copy."""
    array = np.array(array, ndmin=1)
    return array.view(_real_dtype(array.dtype)) if array.dtype.kind == "c" else array


def _check_empty(tape, y, xs):
    """TensorFlow's check when f's result is empty: the gradients, computed
    once anyway, have the inputs' shapes and are zero."""
    upstream = constant(np.zeros(y.shape, y.dtype))
    grads = tape.gradient(y, xs, output_gradients=upstream, unconnected_gradients=_ZERO)
    for i, (v, g) in enumerate(zip(xs, grads)):
        if g.shape != v.shape:
            raise ValueError(f"compute_gradient: f's result is empty, and its gradient for "
                             f"x[{i}] has the shape {g.shape}, not x[{i}]'s {v.shape} "
                             "(Empty gradient has wrong shape)")
        if np.any(g.numpy()):
            raise ValueError(f"compute_gradient: f's result is empty, but its gradient for "
                             f"x[{i}] (shape {v.shape}) is not zero (Empty tensor with "
                             "nonzero gradients)")


def _nudge(xs, i, c, step):
    """A copy of the list `xs` with real number c of tensor i moved by `step`
    (a complex element is two real numbers, its real and imaginary parts)."""
    value = np.array(xs[i].numpy()).reshape(-1)
    parts = value.view(_real_dtype(value.dtype))  # (the same numbers)
    parts[c] = parts[c].astype(float64) + step
    moved = list(xs)
    moved[i] = constant(value.reshape(xs[i].shape))
    return moved


def check_gradients(f, args, order=2, modes=("rev",), eps=None, rtol=None, atol=None,
                    seed=0):
    """Check reverse-mode derivatives of `f` up to `order` against finite differences.

    `f(*args)` returns a tensor (or a list of tensors); `args` is a tensor, an
    array or a list of them, preferably float64. For each argument x_i, with a
    random direction v and a random output cotangent u, it compares

        reverse mode:        <tape.gradient(f, x_i, output_gradients=u), v>
        central difference:  (<u, f(x_i + eps v)> - <u, f(x_i - eps v)>) / (2 eps)

    For `order >= 2` it then does the same for the function
    `(args, u) -> tape.gradient(f(args), args, output_gradients=u)` (computed
    with nested tapes), and so on, exactly like autograd's `check_grads`. So
    order 2 checks that your gradient rule is itself differentiable.
    It raises `AssertionError` naming the order and argument that disagree.

    Check a gradient you registered for a new primitive:

        @mt.primitive("MyCube")
        def my_cube(x):
            return x ** 3

        @mt.RegisterGradient("MyCube")
        def _my_cube_grad(op, grad):
            x = op.inputs[0]
            return grad * 3.0 * x * x

        mt.test.check_gradients(my_cube, [np.array([0.5, -1.0, 2.0])])

    Defaults: eps=1e-6, rtol=1e-5, atol=1e-6 for float64. With float32 (or
    smaller) arguments it warns and uses eps=1e-3, rtol=1e-2, atol=1e-3, because
    float32 finite differences are only good to three or four digits.
    It checks reverse mode only (forward mode has its own tests), so `modes`
    must be ("rev",).
    """
    if tuple(modes) != ("rev",):
        raise ValueError(f"check_gradients: only reverse mode is checked, so modes must "
                         f"be ('rev',), got {modes!r}")
    xs = [_float_array(a, i) for i, a in enumerate(args if isinstance(args, (list, tuple))
                                                   else [args])]
    if all(x.dtype == float64 for x in xs):
        tols = (1e-6, 1e-5, 1e-6)
    else:
        warnings.warn("check_gradients: some arguments are not float64; finite "
                      "differences in lower precision are only good to ~3 digits, so "
                      "the tolerances are loose. Pass float64 arrays for a sharp check.",
                      RuntimeWarning, stacklevel=2)
        tols = (1e-3, 1e-2, 1e-3)
    eps, rtol, atol = (d if given is None else given
                       for given, d in zip((eps, rtol, atol), tols))
    rng = np.random.default_rng(seed)
    names = [f"args[{i}]" for i in range(len(xs))]
    label = getattr(f, "__name__", "f")
    for k in range(1, order + 1):
        _check_one_order(f, label, xs, names, k, rng, eps, rtol, atol)
        if k < order:  # next: differentiate the vector-Jacobian product itself
            us = [rng.standard_normal(y.shape).astype(y.dtype) for y in _outputs(f, xs)]
            names = names + [f"cotangent[{j}] of the order-{k} outputs" for j in range(len(us))]
            f, xs = _vjp_function(f, len(xs)), xs + us


def _float_array(a, i):
    value = np.asarray(a)  # tensors and variables convert through __array__
    if value.dtype.kind != "f":
        raise TypeError(f"check_gradients: args[{i}] has dtype {value.dtype}; only "
                        "floating-point arguments can be checked (close over the others: "
                        "lambda x: f(x, indices))")
    return value


def _float_outputs(result):
    """The floating-point tensors among f's outputs (others have no gradient)."""
    return [t for t in (convert_to_tensor(y) for y in nest.flatten(result) if y is not None)
            if t.dtype.kind == "f"]


def _outputs(f, xs):
    return [np.asarray(y) for y in _float_outputs(f(*[constant(x) for x in xs]))]


def _vjp_function(f, n):
    """(x_1..x_n, u_1..u_m) -> the gradients of <u, f(x)> with respect to each x."""
    def vjp(*args):
        xs, us = list(args[:n]), list(args[n:])
        with GradientTape() as tape:
            tape.watch(xs)
            ys = _float_outputs(f(*xs))
        return tape.gradient(ys, xs, output_gradients=us, unconnected_gradients=_ZERO)
    return vjp


def _check_one_order(f, label, xs, names, order, rng, eps, rtol, atol):
    tensors = [constant(x) for x in xs]
    with GradientTape() as tape:
        tape.watch(tensors)
        ys = _float_outputs(f(*tensors))
    us = [rng.standard_normal(y.shape).astype(y.dtype) for y in ys]
    grads = tape.gradient(ys, tensors, output_gradients=[constant(u) for u in us],
                          unconnected_gradients=_ZERO)

    def u_dot_f(inputs):  # <u, f(inputs)>, accumulated in float64
        outs = _outputs(f, inputs)
        return sum(np.vdot(u.astype(float64), y.astype(float64)) for u, y in zip(us, outs))

    for i, (x, g) in enumerate(zip(xs, grads)):
        v = rng.standard_normal(x.shape)
        plus, minus = list(xs), list(xs)
        plus[i] = np.asarray(x + eps * v).astype(x.dtype)
        minus[i] = np.asarray(x - eps * v).astype(x.dtype)
        taken = plus[i].astype(float64) - minus[i].astype(float64)  # the step after rounding
        exact = np.vdot(np.asarray(g, dtype=float64), taken) / (2 * eps)
        numeric = (u_dot_f(plus) - u_dot_f(minus)) / (2 * eps)
        allowed = atol + rtol * max(abs(exact), abs(numeric))
        if not abs(exact - numeric) <= allowed:  # also catches NaN
            hint = "" if order == 1 else (
                f" At order {order} the function checked is the order-{order - 1} "
                "vector-Jacobian product (args, cotangents) -> gradients: a rule that uses "
                "raw NumPy or a constant where an input belongs fails here.")
            raise AssertionError(
                f"check_gradients: the order-{order} derivative of {label} is wrong "
                f"with respect to {names[i]} (shape {x.shape}, {x.dtype}). In a random "
                f"direction: expected {numeric:.10g} (central differences), got "
                f"{exact:.10g} (reverse mode); difference {abs(exact - numeric):.3g}, "
                f"allowed {allowed:.3g} (rtol={rtol:g}, atol={atol:g}, eps={eps:g}).{hint}")

