"""Conformance with TensorFlow itself: each program is written once and run under both.

How to add a case
-----------------
Put a function ``case_<name>(m)`` in a module ``tests/conformance/cases_<family>.py``.
``m`` is the module under test, ``tensorflow`` or ``minitape``: use only names both
have (``m.constant``, ``m.GradientTape``, ``m.math.sin``, ``m.linalg.det``,
``m.nn.relu``, ``m.autodiff.ForwardAccumulator``, ``m.function`` ...). Return a nest
(lists, tuples, namedtuples, dicts) of tensors, variables, NumPy values, None,
Python numbers, strings, shapes, dtypes or exceptions (a part that raised), or
raise. probes.py computes the usual set for an op in one call: value, first and
second gradients (nested tapes), Jacobian and JVP (ForwardAccumulator), for
float32 and float64, each part kept apart so one failing part does not hide the
others: ``return probe(m, m.sin, [0.5, -1.0])``. Both results are compared:

- structure: container types (list vs tuple), dict keys, namedtuple field names;
- None in the same places (a None gradient is not a zero gradient);
- tensors: dtype by name (``tf.float32`` and NumPy's ``float32`` are both
  "float32"), shape, and values. Integers, bools and strings exactly; floats
  and complex numbers with NaN in the same places, infinities of the same sign
  and otherwise ``|a - b| <= rtol * max(|a|, |b|) + atol``, where by default
  ``rtol = atol = ulps * eps(dtype)`` with ``ulps = 16`` (eps of float32 is
  2**-23, of float64 2**-52). A shape (``tf.TensorShape``) compares as the
  tuple minitape uses; Python numbers compare by type (bool, int, float) and value;
- errors: when both raise, the category must match (see ERROR_MAP below: TF's
  ``InvalidArgumentError`` may be ``ValueError``, ``TypeError`` or, for an
  index out of bounds, ``IndexError`` in minitape;
  a built-in exception must be the same built-in class, or a subclass). One
  raising and the other not is a difference.

Optional attributes on the case function:

- ``case.ulps = 64`` (tolerance in units of the dtype's eps), or
  ``case.rtol`` / ``case.atol`` (absolute numbers, override the ulps default);
- ``case.xfail = "issue 16: ..."``: minitape is known to differ today; run as a
  strict xfail, so the case fails once minitape is fixed until the mark goes;
- ``case.needs = ["math.tan", "linalg.det"]``: names (under ``m.``) the case uses
  that minitape may not have yet; while one is missing the case is a strict
  xfail, and it runs as a normal case as soon as they all exist;
- ``case.error_only = True``: the case must raise under TensorFlow and only the
  error category is compared (a case without it may raise too, but not
  AttributeError or NameError under TensorFlow, so that a typo, AttributeError
  under both, cannot pass as agreement);
- ``case.differs = "<what>"``: a documented difference, the text of the "what"
  column of a row of docs/differences.md
  table. The results must DIFFER (a case that agrees fails), so each row is a
  measured difference. Every row of that table needs at least one such case.

Run one family quickly (prints OK / DIFF / XFAIL with both results):
``python -m tests.conformance.run cases_elementwise [case_name ...] [-v]``.
The pytest suite (tests/conformance/test_conformance.py) runs all families and
is skipped when TensorFlow is not installed (``pip install -e ".[tf]"``).
"""
import importlib
import os
import pkgutil
import traceback

import numpy as np

DEFAULT_ULPS = 16

# TensorFlow's error classes (tf.errors.*, not Python built-ins) and the
# built-in exceptions minitape raises for the same mistake. minitape has no
# error classes of its own (docs/differences.md: invalid arguments).
ERROR_MAP = {
    "InvalidArgumentError": (ValueError, TypeError, IndexError),  # IndexError: x[5]
    "UnimplementedError": (NotImplementedError, TypeError),
    "OutOfRangeError": (IndexError, ValueError),
    "NotFoundError": (LookupError, OSError),
    "AlreadyExistsError": (KeyError, ValueError, OSError),
    "FailedPreconditionError": (RuntimeError, ValueError),
    "ResourceExhaustedError": (MemoryError,),
    "InternalError": (RuntimeError,),
    "UnknownError": (RuntimeError,),
    "AbortedError": (RuntimeError,),
}

_EPS = {
    "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23,
    "float64": 2.0 ** -52, "complex64": 2.0 ** -23, "complex128": 2.0 ** -52,
}


def setup_tensorflow_env():
    """Quiet, CPU-only TensorFlow (set before it is imported)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")


def quiet(tf):
    """No retracing warnings from TensorFlow's pfor (each jacobian call traces)."""
    tf.get_logger().setLevel("ERROR")
    return tf


# --- collecting cases ---------------------------------------------------------------

def families():
    """The names of the cases_*.py modules beside this file."""
    here = os.path.dirname(os.path.abspath(__file__))
    return sorted(name for _, name, _ in pkgutil.iter_modules([here])
                  if name.startswith("cases_"))


def collect(family_names=None):
    """[(family, name, function)] for every case_* function, in source order."""
    found = []
    for family in family_names or families():
        module = importlib.import_module(f"{__package__}.{family}")
        funcs = [(name, obj) for name, obj in vars(module).items()
                 if name.startswith("case_") and callable(obj)]
        funcs.sort(key=lambda item: item[1].__code__.co_firstlineno)
        found.extend((family, name, fn) for name, fn in funcs)
    return found


# --- running and normalising ------------------------------------------------------

class Raised:
    """A case that raised: the exception, kept for comparing its category."""

    def __init__(self, exc):
        self.exc = exc

    def __repr__(self):
        text = str(self.exc).strip().splitlines()
        first = text[0][:200] if text else ""
        return f"raised {type(self.exc).__name__}: {first}"


def run(case, module):
    """The case's result under `module`, normalised, or Raised(exc)."""
    try:
        return normalise(case(module), module)
    except Exception as exc:  # noqa: BLE001  (any error is a result to compare)
        exc.__traceback_text__ = traceback.format_exc()
        return Raised(exc)


class Value:
    """A tensor or array: dtype name, shape, NumPy values."""

    def __init__(self, array, kind="tensor"):
        self.array = np.asarray(array)
        self.dtype = dtype_name(self.array.dtype)
        self.shape = tuple(self.array.shape)
        self.kind = kind

    def __repr__(self):
        with np.printoptions(precision=9, threshold=40, edgeitems=4):
            body = np.array2string(self.array, separator=", ")
        body = " ".join(body.split())
        return f"{self.kind}({body}, dtype={self.dtype}, shape={self.shape})"


class DType:
    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, DType) and other.name == self.name

    def __repr__(self):
        return f"dtype({self.name})"


def dtype_name(dt):
    """TensorFlow's and NumPy's dtypes by one name ('float32', 'string', ...)."""
    name = getattr(dt, "name", None)
    if type(dt).__name__ == "DType" and isinstance(name, str):  # tf.DType
        return name
    try:
        dt = np.dtype(dt)
    except TypeError:
        return str(dt)
    if dt.kind in "USO":
        return "string"
    return dt.name


def normalise(x, m):
    """A comparable form of a case's result (nests kept, leaves made plain)."""
    if x is None or isinstance(x, (bool, int, float, complex, str, bytes)):
        return x
    if isinstance(x, Exception):  # a part of a probe that raised (probes.py)
        return Raised(x)
    if isinstance(x, dict):
        return {k: normalise(v, m) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # namedtuple (tf.linalg.qr, top_k)
        return ("namedtuple", tuple(x._fields), tuple(normalise(v, m) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(normalise(v, m) for v in x)
    kind = type(x).__name__
    if kind == "TensorShape":
        return None if x.rank is None else tuple(x.as_list())
    if kind in ("DType",) or isinstance(x, (np.dtype, type)):
        return DType(dtype_name(x))
    if kind == "IndexedSlices":  # TensorFlow's sparse gradient of gather: compare dense
        x = m.convert_to_tensor(x)
    if isinstance(x, (np.ndarray, np.generic)):
        return Value(x, "numpy")
    if hasattr(x, "numpy") and hasattr(x, "dtype") and hasattr(x, "shape"):
        return Value(x.numpy(), "variable" if "Variable" in kind else "tensor")
    raise TypeError(f"a case returned a {type(x).__module__}.{kind}, which the harness "
                    "cannot compare: return tensors, numbers, shapes, dtypes or nests")


# --- comparing ---------------------------------------------------------------------

def tolerances(case, dtype):
    ulps = getattr(case, "ulps", DEFAULT_ULPS)
    eps = _EPS.get(dtype, 2.0 ** -52)
    rtol = getattr(case, "rtol", ulps * eps)
    atol = getattr(case, "atol", ulps * eps)
    return rtol, atol


def error_category_matches(tf_exc, mt_exc):
    """Does minitape's exception belong to the category of TensorFlow's?"""
    name = type(tf_exc).__name__
    for klass in type(tf_exc).__mro__:
        if klass.__module__ == "builtins" and klass not in (Exception, BaseException):
            return isinstance(mt_exc, klass)
        if klass.__name__ in ERROR_MAP:
            return isinstance(mt_exc, ERROR_MAP[klass.__name__])
    return type(mt_exc).__name__ == name


def _close(a, b, rtol, atol):
    """Elementwise closeness of two float or complex arrays of one shape."""
    a = np.asarray(a)
    b = np.asarray(b)
    if np.iscomplexobj(a) or np.iscomplexobj(b):
        return (_close(a.real, b.real, rtol, atol) and _close(a.imag, b.imag, rtol, atol))
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    inf = np.isinf(a) | np.isinf(b)
    if not np.array_equal(a[inf], b[inf]):
        return False
    ok = ~(np.isnan(a) | inf)
    x, y = a[ok], b[ok]
    return bool(np.all(np.abs(x - y) <= rtol * np.maximum(np.abs(x), np.abs(y)) + atol))


def differences(tf_result, mt_result, case, path="result"):
    """A list of strings, one per difference (empty when the results agree)."""
    a, b = tf_result, mt_result
    if isinstance(a, Raised) or isinstance(b, Raised):
        if not (isinstance(a, Raised) and isinstance(b, Raised)):
            return [f"{path}: tf {a!r}, mt {b!r}"]
        if not error_category_matches(a.exc, b.exc):
            return [f"{path}: error category: tf {a!r}, mt {b!r}"]
        return []
    if a is None or b is None:
        return [] if a is b else [f"{path}: tf {a!r}, mt {b!r}"]
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)):
            return [f"{path}: tf {type(a).__name__}, mt {type(b).__name__}"]
        if set(a) != set(b):
            return [f"{path}: dict keys: tf {sorted(map(str, a))}, mt {sorted(map(str, b))}"]
        return [d for k in a for d in differences(a[k], b[k], case, f"{path}[{k!r}]")]
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        if type(a) is not type(b):
            return [f"{path}: tf {_short(a)}, mt {_short(b)}"]
        if len(a) != len(b):
            return [f"{path}: length: tf {len(a)}, mt {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b))
                for d in differences(x, y, case, f"{path}[{i}]")]
    if isinstance(a, Value) or isinstance(b, Value):
        if not (isinstance(a, Value) and isinstance(b, Value)):
            return [f"{path}: tf {a!r}, mt {b!r}"]
        return _value_differences(a, b, case, path)
    if isinstance(a, DType) or isinstance(b, DType):
        return [] if a == b else [f"{path}: tf {a!r}, mt {b!r}"]
    if type(a) is not type(b):
        return [f"{path}: tf {type(a).__name__} {a!r}, mt {type(b).__name__} {b!r}"]
    if isinstance(a, (float, complex)):
        rtol, atol = tolerances(case, "float64")
        return [] if _close(a, b, rtol, atol) else [f"{path}: tf {a!r}, mt {b!r}"]
    return [] if a == b else [f"{path}: tf {a!r}, mt {b!r}"]


def _value_differences(a, b, case, path):
    out = []
    if a.dtype != b.dtype:
        out.append(f"{path}: dtype: tf {a.dtype}, mt {b.dtype}")
    if a.shape != b.shape:
        out.append(f"{path}: shape: tf {a.shape}, mt {b.shape}")
        return out + [f"{path}: tf {a!r}, mt {b!r}"]
    x, y = a.array, b.array
    if x.dtype.kind in "fc" or y.dtype.kind in "fc":
        if x.dtype.kind in "fciub" and y.dtype.kind in "fciub":
            # the looser of the two dtypes' tolerances when they differ (already reported)
            rtol, atol = max(tolerances(case, a.dtype), tolerances(case, b.dtype))
            same = _close(x, y, rtol, atol)
        else:
            same = False
    elif x.dtype.kind in "SUO" or y.dtype.kind in "SUO":
        same = [_text(v) for v in x.ravel()] == [_text(v) for v in y.ravel()]
    else:
        same = np.array_equal(x, y)
    if not same:
        out.append(f"{path}: values: tf {a!r}, mt {b!r}")
    elif out:
        out.append(f"{path}: tf {a!r}, mt {b!r}")
    return out


def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def _short(x):
    text = repr(x)
    return text if len(text) < 300 else text[:300] + "..."


# --- one case, both modules ------------------------------------------------------------

class Outcome:
    """The verdict on one case: status OK, DIFF, XFAIL, XPASS or BAD (a broken case)."""

    def __init__(self, status, tf_result, mt_result, diffs, note=""):
        self.status = status
        self.tf_result = tf_result
        self.mt_result = mt_result
        self.diffs = diffs
        self.note = note

    @property
    def failed(self):
        return self.status in ("DIFF", "XPASS", "BAD")

    def report(self):
        lines = [f"{self.status}{': ' + self.note if self.note else ''}"]
        lines.append(f"  tf: {_short(self.tf_result)}")
        lines.append(f"  mt: {_short(self.mt_result)}")
        lines.extend(f"  - {d}" for d in self.diffs[:20])
        return "\n".join(lines)


def missing_names(case, mt):
    """The names of case.needs that minitape does not have (yet)."""
    missing = []
    for name in getattr(case, "needs", ()):
        obj = mt
        for part in name.split("."):
            obj = getattr(obj, part, None)
        if obj is None:
            missing.append(name)
    return missing


def xfail_reason(case, mt):
    """Why the case is expected to differ today (None when it is not)."""
    missing = missing_names(case, mt)
    if missing:
        return "minitape has no " + ", ".join("mt." + n for n in missing) + " yet (issue 16)"
    return getattr(case, "xfail", None)


def check(case, tf, mt):
    """Run `case` under TensorFlow and minitape and judge the two results."""
    tf_result = run(case, tf)
    mt_result = run(case, mt)
    if isinstance(tf_result, Raised) and isinstance(tf_result.exc, TypeError) and \
            "harness cannot compare" in str(tf_result.exc):
        return Outcome("BAD", tf_result, mt_result, [], str(tf_result.exc))
    if getattr(case, "error_only", False) and not isinstance(tf_result, Raised):
        return Outcome("BAD", tf_result, mt_result, [],
                       "error_only case does not raise under TensorFlow")
    if isinstance(tf_result, Raised) and isinstance(tf_result.exc, (AttributeError, NameError)) \
            and not (getattr(case, "error_only", False) or getattr(case, "differs", None)):
        # so that a typo (AttributeError under both) cannot pass as agreement
        return Outcome("BAD", tf_result, mt_result, [],
                       f"{type(tf_result.exc).__name__} under TensorFlow: a typo in the case? "
                       "(mark it error_only if that is the point)")
    diffs = differences(tf_result, mt_result, case)
    differs = getattr(case, "differs", None)
    xfail = xfail_reason(case, mt)
    if differs:
        if diffs:
            return Outcome("OK", tf_result, mt_result, diffs, f"differs as documented: {differs}")
        return Outcome("DIFF", tf_result, mt_result, [],
                       f"documented difference not seen (docs/differences.md row {differs!r})")
    if xfail:
        if diffs:
            return Outcome("XFAIL", tf_result, mt_result, diffs, xfail)
        return Outcome("XPASS", tf_result, mt_result, [],
                       f"now agrees with TensorFlow: remove the xfail ({xfail})")
    return Outcome("DIFF" if diffs else "OK", tf_result, mt_result, diffs)


def case_id(family, name):
    return f"{family[len('cases_'):]}::{name[len('case_'):]}"


# --- the differences table (docs/differences.md) --------------------------------------

def readme_difference_rows(readme_path):
    """The "what" column of the "Where minitape differs" table at `readme_path`
    (docs/differences.md; the README held it once, hence the name)."""
    rows, inside = [], False
    with open(readme_path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") and \
                    line.lstrip("#").strip() == "Where minitape differs from TensorFlow":
                inside = True
                continue
            if inside and line.startswith("#"):
                break
            if inside and line.startswith("| ") and not line.startswith("| what") \
                    and not line.startswith("| ---"):
                rows.append(line.split(" | ")[0][2:].strip())
    return rows

