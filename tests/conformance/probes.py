"""The usual questions asked of one op, for conformance cases (see harness.py).

``probe(m, f, x, y, ...)`` runs ``f`` on float tensors made from the arguments,
once per dtype, and returns a dict per dtype:

- ``value``: ``f(*xs)``;
- ``grad``: ``tape.gradient(f(*xs), xs)`` (a list, None for an unconnected input);
- ``grad2``: the gradient of ``sum(reduce_sum(w * g))`` over those gradients, taken
  by an outer tape (second derivatives through nested tapes; ``w`` fixed weights);
- ``jacobian``: ``tape.jacobian(f(*xs), xs, experimental_use_pfor=False)`` (when the
  output is one tensor; the loop, because TensorFlow's pfor traces a function on every
  call, 30 times slower here; pfor when the output's dtype is not the inputs', which
  TensorFlow's loop refuses; cases_tape.py and the guide's cases use pfor);
- ``jvp``: ``ForwardAccumulator(xs, tangents).jvp(f(*xs))`` with fixed tangents.

Each part that raises is returned as its exception, which the harness compares
by category, so a missing JVP rule does not hide a right gradient.
"""
import numpy as np

ALL = ("value", "grad", "grad2", "jacobian", "jvp")


def _weights(shape, offset):
    n = int(np.prod(shape, dtype=np.int64))
    return (0.5 + 0.25 * ((np.arange(n) + offset) % 5)).reshape(shape)


def _sum_weighted(m, tensors):
    total = None
    for i, g in enumerate(tensors):
        if g is None:
            continue
        g = m.convert_to_tensor(g)
        term = m.reduce_sum(g * m.constant(_weights(g.shape, i), dtype=g.dtype))
        total = term if total is None else total + term
    return total


def probe_dtype(m, f, args, dtype, parts=ALL):
    """The parts for one dtype (see the module docstring)."""
    xs = [m.constant(np.asarray(a, dtype=dtype)) for a in args]
    out = {}
    try:
        with m.GradientTape(persistent=True) as outer:
            outer.watch(xs)
            with m.GradientTape(persistent=True) as inner:
                inner.watch(xs)
                y = f(*xs)
            out["value"] = y
            if "grad" in parts or "grad2" in parts:
                try:
                    grads = inner.gradient(y, xs)
                    out["grad"] = grads
                except Exception as exc:  # noqa: BLE001
                    out["grad"] = exc
                    grads = None
            if "jacobian" in parts and not isinstance(y, (list, tuple, dict)):
                try:
                    # TensorFlow's loop cannot change dtype (its TensorArray): pfor then
                    pfor = any(x.dtype != y.dtype for x in xs)
                    out["jacobian"] = inner.jacobian(y, xs, experimental_use_pfor=pfor)
                except Exception as exc:  # noqa: BLE001
                    out["jacobian"] = exc
            if "grad2" in parts and grads is not None:
                try:
                    s = _sum_weighted(m, grads)
                except Exception as exc:  # noqa: BLE001
                    s = exc
        if "grad2" in parts and grads is not None:
            try:
                if isinstance(s, Exception):
                    raise s
                out["grad2"] = None if s is None else outer.gradient(s, xs)
            except Exception as exc:  # noqa: BLE001
                out["grad2"] = exc
    except Exception as exc:  # noqa: BLE001  (the forward pass itself)
        out["value"] = exc
        return {k: v for k, v in out.items() if k in parts}
    if "jvp" in parts:
        try:
            tangents = [m.constant(_weights(x.shape, i + 1), dtype=x.dtype)
                        for i, x in enumerate(xs)]
            with m.autodiff.ForwardAccumulator(xs, tangents) as acc:
                y = f(*xs)
            out["jvp"] = acc.jvp(y)
        except Exception as exc:  # noqa: BLE001
            out["jvp"] = exc
    return {k: v for k, v in out.items() if k in parts}


def probe(m, f, *args, dtypes=("float32", "float64"), parts=ALL):
    """{dtype: parts} for f at args (lists or arrays of numbers), see the module docstring."""
    return {dtype: probe_dtype(m, f, args, dtype, parts) for dtype in dtypes}
