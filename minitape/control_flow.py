"""TensorFlow's functional control flow, run eagerly: `cond`, `while_loop`,
`map_fn`, `scan` and `vectorized_map`.

In eager TensorFlow these are Python control flow: `while_loop` is a Python
`while` around the body, `cond` calls the branch its predicate picks, `map_fn`
and `scan` loop over the entries of their inputs. minitape does the same, and
the loops are made of ordinary ops (slicing an entry out, `stack`ing the
results), so tapes, `ForwardAccumulator`, Jacobians (pfor and loop), the
backward stepper, `mt.function` and compiled programs all see ordinary ops
and nothing here needs a gradient rule of its own.

Inside `mt.function` a predicate or loop condition is read as a Python value,
so the trace holds for the values it read and a call with others traces
again (docs/differences.md, the row on Python `if`/`for`): the graph stays a
list of ops. TensorFlow's graph keeps both branches, so a branch that returns
a constant has the gradient 0 there, None here (as eagerly in both).

Arguments that only matter to TensorFlow's graphs (`parallel_iterations`,
`back_prop`, `swap_memory`, `shape_invariants`, `infer_shape`, `name`) are
accepted and change nothing, as in eager TensorFlow. A failed call (bad
arguments, or a function whose results do not fit) leaves every tape as it
was: what it recorded is undone.
"""
import contextlib

import numpy as np

from . import nest, ops
from .core.context import state
from .specs import TensorSpec
from .tape import marks, rollback
from .core.tensor import Tensor, TensorLike, Variable, as_dtype

__all__ = ["cond", "while_loop", "map_fn", "scan", "vectorized_map"]


@contextlib.contextmanager
def _as_it_was():
    """Undo what the tapes recorded if the block fails."""
    before = marks()
    try:
        yield
    except BaseException:
        rollback(before)
        raise


def _callable(what, name, fn):
    if not callable(fn):
        raise TypeError(f"{what}: {name} must be callable, got {type(fn).__name__} {fn!r:.40}")


def _read_variables(structure):
    """Variables in a nest read into tensors (as TensorFlow's
    `convert_variables_to_tensors`); everything else as it is."""
    leaves = [v.read_value() if isinstance(v, Variable) else v for v in nest.flatten(structure)]
    return nest.pack_like(structure, leaves)


def _as_tensors(structure):
    """Every leaf of a nest as a tensor (Python numbers become constants)."""
    leaves = [v if type(v) is Tensor else ops.convert_to_tensor(v)
              for v in nest.flatten(structure)]
    return nest.pack_like(structure, leaves)


# --- cond ---------------------------------------------------------------------------

def cond(pred, true_fn=None, false_fn=None, name=None):
    """`true_fn()` if `pred` is true, else `false_fn()`, returned as the branch
    returns it (eager TensorFlow: a Python number stays a number). `pred` is a
    Python bool or a tensor holding one value; only the branch taken runs, so
    only its ops are recorded."""
    if true_fn is None:
        raise TypeError("cond: the 'true_fn' argument is required")
    if false_fn is None:
        raise TypeError("cond: the 'false_fn' argument is required")
    _callable("cond", "true_fn", true_fn)
    _callable("cond", "false_fn", false_fn)
    if isinstance(pred, TensorLike) or nest.is_nested(pred):
        pred = ops.convert_to_tensor(pred)
        if pred._value.size != 1:
            raise ValueError(f"cond: pred must hold one value, got a tensor of shape "
                             f"{pred.shape}; use mt.reduce_any or mt.reduce_all")
    with _as_it_was():
        return true_fn() if pred else false_fn()


# --- while_loop ---------------------------------------------------------------------

def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, maximum_iterations=None, name=None):
    """Repeat `loop_vars = body(*loop_vars)` while `cond(*loop_vars)` is true,
    at most `maximum_iterations` times; the final loop variables, each a tensor.

    `loop_vars` is a list or tuple (or namedtuple) of tensors, numbers or
    nests of them; `body` returns a list or tuple of the same structure (its
    own outer type is kept). As in eager TensorFlow the shapes and dtypes may
    change from one pass to the next, numbers stay numbers until the end, and
    with `maximum_iterations` the inner sequence types must match too (a list
    for a list). The loop runs in Python: every pass's ops are recorded."""
    what = "while_loop"
    _callable(what, "cond", cond)
    _callable(what, "body", body)
    if not isinstance(parallel_iterations, (int, np.integer)) or parallel_iterations < 1:
        raise TypeError(f"{what}: parallel_iterations must be a positive integer, got "
                        f"{parallel_iterations!r}")
    if not isinstance(loop_vars, (list, tuple, dict)):
        raise TypeError(f"{what}: loop_vars must be a list or tuple of loop variables, got "
                        f"{nest.describe(loop_vars)}; write [x] or (x,)")
    if not loop_vars:
        raise ValueError(f"{what}: loop_vars must be provided (got {loop_vars!r})")
    loop_vars = _read_variables(loop_vars)
    limit = None
    if maximum_iterations is not None:
        limit = ops.convert_to_tensor(maximum_iterations)
        if limit.ndim != 0:
            raise ValueError(f"{what}: maximum_iterations must be a scalar, got shape "
                             f"{limit.shape}")
        limit = int(limit)  # (read as a Python value: a trace holds for this limit)
        user_cond, user_body = cond, body
        loop_vars = (0, loop_vars)  # TensorFlow's counter: the user's vars are nested now
        cond = lambda i, lv: i < limit and user_cond(*lv)  # noqa: E731
        body = lambda i, lv: (i + 1, user_body(*lv))  # noqa: E731
    structure = list(loop_vars)
    with _as_it_was():
        while _truth(what, cond(*loop_vars)):
            loop_vars = body(*loop_vars)
            if not isinstance(loop_vars, (list, tuple)):
                raise TypeError(f"{what}: body must return a list or tuple like loop_vars "
                                f"(e.g. `(i + 1,)` for one variable), got "
                                f"{nest.describe(loop_vars)}")
            nest.assert_same_structure(structure, list(loop_vars),
                                       f"{what}: body's result and loop_vars")
        loop_vars = _as_tensors(loop_vars)
    return loop_vars if limit is None else loop_vars[1]


def _truth(what, value):
    """`cond`'s result as a Python bool: a tensor must hold one value."""
    if isinstance(value, TensorLike) and int(np.prod(value.shape)) != 1:
        raise ValueError(f"{what}: cond must return one boolean, got a tensor of shape "
                         f"{value.shape}; use mt.reduce_any or mt.reduce_all")
    return bool(value)


# --- map_fn, vectorized_map, scan: loops over the entries of tensors --------------------

def _entries(what, elems):
    """The leaves of `elems` as tensors of one leading size n, and each leaf's
    n entries (recorded slices): ([tensor], n, [[entry] * n per leaf])."""
    elems = _read_variables(elems)
    flat = nest.flatten(elems)
    if not flat:
        raise ValueError(f"{what}: elems must be a tensor or a nest of tensors, got "
                         f"{elems!r}, which holds none")
    tensors = []
    for i, e in enumerate(flat):
        t = e if type(e) is Tensor else ops.convert_to_tensor(e)
        if t.ndim < 1:
            which = "elems" if len(flat) == 1 else f"elems' tensor {i}"
            raise ValueError(f"{what}: {which} must have a leading axis to loop over (rank "
                             f"1 or more), got a scalar of dtype {t.dtype}")
        tensors.append(t)
    sizes = {t.shape[0] for t in tensors}
    if len(sizes) > 1:
        raise ValueError(f"{what}: the tensors in elems must have the same leading size, got "
                         f"shapes {[t.shape for t in tensors]}")
    n = tensors[0].shape[0]
    return elems, tensors, n


def _slices(tensors, i):
    return [t[i] for t in tensors]


def _result_leaves(what, result, specs, first=None, signature="fn_output_signature"):
    """`fn`'s flat results as tensors, checked against the output signature
    (`specs`: a dtype or TensorSpec per leaf, None for no signature) and the
    first entry's results (`first`): one dtype and shape for every entry."""
    leaves = []
    for k, value in enumerate(nest.flatten(result)):
        spec = specs[k] if specs is not None else None
        dtype = spec.dtype if isinstance(spec, TensorSpec) else spec
        if value is None and specs is None:  # vectorized_map: None stays None
            t = None
        elif isinstance(value, TensorLike):
            t = value if type(value) is Tensor else value.read_value()
            if dtype is not None and t.dtype != dtype:
                raise TypeError(f"{what}: fn returned a {t.dtype} tensor (result {k}) where "
                                f"{signature} has {dtype}")
        else:
            t = ops.convert_to_tensor(value, dtype=dtype)
        if isinstance(spec, TensorSpec) and not spec.is_compatible_with(t):
            raise ValueError(f"{what}: fn returned shape {t.shape} (result {k}) where "
                             f"{signature} has shape {spec.shape}")
        if first is not None and _kind_of(t) != _kind_of(first[k]):
            raise ValueError(f"{what}: fn returned {_kind_of(t)} (result {k}) for one entry "
                             f"and {_kind_of(first[k])} for the first; every entry's results "
                             "must have one shape and dtype")
        leaves.append(t)
    return leaves


def _kind_of(t):
    return "None" if t is None else f"shape {t.shape} and dtype {t.dtype}"


def _stacked(rows, empty_shapes, dtypes):
    """Each result leaf's entries stacked along a new first axis (`Pack`), or
    an empty tensor when there were no entries."""
    if rows:
        return [None if column[0] is None else ops.stack(list(column)) for column in zip(*rows)]
    return [None if shape is None else ops.zeros((0,) + shape, dtype)
            for shape, dtype in zip(empty_shapes, dtypes)]


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True,
           swap_memory=False, infer_shape=True, name=None, fn_output_signature=None):
    """`fn` applied to each entry along the first axis of `elems` (a tensor or a
    nest of tensors of one leading size, entries given to `fn` in that nest),
    the results stacked. Without `fn_output_signature` (or its old name
    `dtype`) `fn` returns the structure and dtypes of `elems`; with it, that
    structure of dtypes or `mt.TensorSpec`s. A loop of slices, calls and one
    `stack` per result."""
    what = "map_fn"
    _callable(what, "fn", fn)
    signature = dtype if fn_output_signature is None else fn_output_signature
    elems, tensors, n = _entries(what, elems)
    if signature is None:
        specs, like = [t.dtype for t in tensors], elems
    else:
        specs = [s if isinstance(s, TensorSpec) else as_dtype(s, what)
                 for s in nest.flatten(signature)]
        like = signature
    rows = []
    with _as_it_was():
        columns = [ops.unstack(t) for t in tensors]
        for i in range(n):
            result = fn(nest.pack_like(elems, [c[i] for c in columns]))
            nest.assert_same_structure(like, result, f"{what}: fn's result and "
                                       + ("fn_output_signature" if signature is not None
                                          else "elems (pass fn_output_signature=)"))
            rows.append(_result_leaves(
                what, result, specs, rows[0] if rows else None,
                "fn_output_signature" if signature is not None else
                "elems (pass fn_output_signature= for other dtypes)"))
        if n == 0 and any(isinstance(s, TensorSpec) and s.shape is not None and None in s.shape
                          for s in specs):
            raise ValueError(f"{what}: elems has no entries and fn_output_signature has a shape "
                             f"with unknown sizes ({[getattr(s, 'shape', ()) for s in specs]}), "
                             "so the result's shape is unknown; give every size")
        dtypes = [s.dtype if isinstance(s, TensorSpec) else s for s in specs]
        empty = [s.shape if isinstance(s, TensorSpec) and s.shape is not None
                 and None not in s.shape else () for s in specs]
        return nest.pack_like(like, _stacked(rows, empty, dtypes))


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """`fn` applied to each entry along the first axis of `elems`, the results
    stacked: TensorFlow's values (its pfor turns `fn` into batched ops;
    minitape calls `fn` once per entry in a loop and `stack`s, since its pfor
    batches backward passes, not arbitrary functions). Unlike `map_fn`, `fn`
    may return any nest of tensors of any dtype; with no entries, `fn` is
    called once on zeros (recorded nowhere) to learn the results' shapes."""
    what = "vectorized_map"
    _callable(what, "fn", fn)
    elems, tensors, n = _entries(what, elems)
    rows, results = [], []
    with _as_it_was():
        columns = [ops.unstack(t) for t in tensors]
        for i in range(n):
            result = fn(nest.pack_like(elems, [c[i] for c in columns]))
            if results:
                nest.assert_same_structure(results[0], result, f"{what}: fn's results")
            results.append(result)
            rows.append(_result_leaves(what, result, None, rows[0] if rows else None))
        if n == 0:
            result = _unrecorded(lambda: fn(nest.pack_like(
                elems, [ops.zeros(t.shape[1:], t.dtype) for t in tensors])))
            shapes_dtypes = [(None, None) if x is None else (x.shape, x.dtype)
                             for x in _result_leaves(what, result, None)]
            return nest.pack_like(result, _stacked([], *zip(*shapes_dtypes)) if shapes_dtypes
                                  else [])
        return nest.pack_like(results[0], _stacked(rows, None, None))


def _unrecorded(fn):
    saved, state.tapes = state.tapes, []
    try:
        return fn()
    finally:
        state.tapes = saved


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """The running results of `a = fn(a, x)` over the entries `x` of `elems`
    (first to last, or last to first with `reverse=True`), stacked in the
    entries' order. `a` starts as `initializer`; without one, as the first
    entry taken (the last with `reverse`), which is also the first result.
    `fn` returns the structure of `initializer` (or of `elems`), each leaf of
    the dtype and shape it started with."""
    what = "scan"
    _callable(what, "fn", fn)
    elems, tensors, n = _entries(what, elems)
    order = list(range(n))[::-1] if reverse else list(range(n))
    with _as_it_was():
        columns = [ops.unstack(t) for t in tensors]
        if initializer is None:
            if n == 0:
                raise ValueError(f"{what}: elems has no entries (shapes "
                                 f"{[t.shape for t in tensors]}), so there is no first "
                                 "entry to start from; pass an initializer")
            like = elems
            start = [c[order[0]] for c in columns]
            done = {order[0]: start}
            order = order[1:]
        else:
            like = _read_variables(initializer)
            start = [ops.convert_to_tensor(v) for v in nest.flatten(like)]
            done = {}
        accumulator = nest.pack_like(like, start)
        specs = [TensorSpec(a.shape, a.dtype) for a in start]
        for i in order:
            result = fn(accumulator, nest.pack_like(elems, [c[i] for c in columns]))
            nest.assert_same_structure(like, result, f"{what}: fn's result and "
                                       + ("elems" if initializer is None else "initializer"))
            done[i] = _result_leaves(what, result, specs, signature="the accumulator it started "
                                     "as (initializer, or elems' first entry)")
            accumulator = result
        rows = [done[i] for i in sorted(done)]
        return nest.pack_like(like, _stacked(rows, [s.shape for s in specs],
                                             [s.dtype for s in specs]))
