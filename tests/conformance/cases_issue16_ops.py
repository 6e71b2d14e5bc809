"""The ops issue 16 adds, as TensorFlow computes them: values, dtypes, gradients to
second order, Jacobians and JVPs (probes.py), in float32 and float64.

Each case names what it uses in ``needs``: while minitape lacks one, the case is a
strict xfail; once the op exists it runs as a normal case (harness.py).
"""
import numpy as np

from .probes import probe

X = [0.5, -1.25, 2.0]
UNIT = [0.3, -0.6, 0.9]          # inside (-1, 1)
POS = [0.5, 1.25, 3.0]
ABOVE1 = [1.5, 2.0, 3.5]
Y = [1.5, 0.75, -2.0]
A = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]]
SPD = [[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]]
SQ = [[2.0, 1.0, 0.0], [-1.0, 3.0, 1.0], [0.5, 0.0, 1.5]]
PARTS = ("value", "grad", "grad2", "jvp")


def _unary(module, name, xs):
    def case(m):
        return probe(m, getattr(getattr(m, module) if module else m, name), xs)
    case.needs = [f"{module}.{name}" if module else name]
    return case


for _name, _xs in [("tan", X), ("sinh", X), ("cosh", X), ("asin", UNIT), ("acos", UNIT),
                   ("atan", X), ("asinh", X), ("acosh", ABOVE1), ("atanh", UNIT),
                   ("expm1", X), ("log1p", POS), ("rsqrt", POS), ("reciprocal", X),
                   ("erf", X), ("erfc", X), ("lgamma", POS), ("digamma", POS),
                   ("log_sigmoid", X), ("ceil", [0.4, -1.6, 2.5])]:
    globals()[f"case_math_{_name}"] = _unary("math", _name, _xs)


def case_math_softsign(m):
    """TensorFlow 2.21 has no gradient for SoftsignGrad: no second derivative, no JVP and
    no pfor Jacobian of softsign (LookupError), so only the value and gradient compare."""
    return probe(m, m.math.softsign, X, parts=("value", "grad"))


case_math_softsign.needs = ["math.softsign"]

def case_toplevel_aliases(m):
    """The top-level names TensorFlow 2.21 has for these ops (it has no tf.ceil,
    tf.floordiv, tf.cumprod, tf.real, tf.expm1, ...: those live in tf.math only)."""
    x = m.constant(POS)
    return [m.tan(x), m.sinh(x), m.cosh(x), m.atan(x), m.asinh(x), m.acosh(x + 1.0),
            m.asin(x / 4.0), m.acos(x / 4.0), m.atanh(x / 4.0), m.truediv(x, 2.0),
            m.add_n([x, x]), m.reduce_any(x > 1.0), m.atan2(x, x + 1.0),
            m.reduce_all(x > 0.0), m.argmax(x), m.argmin(x), m.cumsum(x),
            m.split(x, 3), m.tile(x, [2]), m.repeat(x, 2), m.roll(x, 1, 0),
            m.reverse(x, [0]), m.sort(x), m.argsort(x), m.gather(x, [2, 0]),
            m.one_hot([0, 2], 3), m.rank(x), m.tensordot(x, x, 1), m.where(x > 1.0),
            m.complex(x, x)]


case_toplevel_aliases.needs = [
    "tan", "sinh", "cosh", "atan", "asinh", "acosh", "asin", "acos", "atanh", "truediv",
    "add_n", "reduce_any", "atan2", "reduce_all", "argmax", "argmin", "cumsum", "split",
    "tile", "repeat", "roll", "reverse", "sort", "argsort", "gather", "one_hot", "rank",
    "tensordot", "complex"]


def _binary(name, xs, ys, parts=PARTS + ("jacobian",)):
    def case(m):
        return probe(m, getattr(m.math, name), xs, ys, parts=parts)
    case.needs = [f"math.{name}"]
    return case


for _name, _xs, _ys in [("atan2", X, Y), ("squared_difference", X, Y), ("truediv", X, Y),
                        ("divide_no_nan", X, [1.5, 0.0, -2.0]),
                        ("multiply_no_nan", [0.5, np.inf, 2.0], [1.0, 0.0, -2.0]),
                        ("xlogy", [0.0, 1.5, 2.0], POS), ("xdivy", [0.0, 1.5, 2.0], POS),
                        ("floormod", [2.5, -3.5, 7.0], [2.0, 2.0, -3.0]),
                        ("floordiv", [2.5, -3.5, 7.0], [2.0, 2.0, -3.0])]:
    globals()[f"case_math_{_name}"] = _binary(_name, _xs, _ys)


def case_operators_floordiv_mod(m):
    a = m.constant([7, -7, 5])
    b = m.constant([2, 2, -3])
    x = m.constant([2.5, -3.5, 7.0])
    return [a // b, a % b, x // 2.0, x % 2.0, -7 // b, 7.5 % x]




def case_operators_bool(m):
    p = m.constant([True, True, False, False])
    q = m.constant([True, False, True, False])
    return [p & q, p | q, p ^ q, ~p, m.math.logical_and(p, q), m.math.logical_not(q)]




def case_math_add_n(m):
    return probe(m, lambda x, y: m.math.add_n([x, y, x]), X, Y)


case_math_add_n.needs = ["math.add_n"]


def case_math_is_finite_nan_inf(m):
    x = m.constant([1.0, np.nan, np.inf, -np.inf])
    return [m.math.is_finite(x), m.math.is_nan(x), m.math.is_inf(x)]


case_math_is_finite_nan_inf.needs = ["math.is_finite", "math.is_nan", "math.is_inf"]


def case_math_complex_parts(m):
    z = m.constant([3.0 + 4.0j, -1.0 - 2.0j])
    return [m.math.real(z), m.math.imag(z), m.math.conj(z), m.math.angle(z),
            m.complex(m.constant([1.0]), m.constant([2.0])), m.math.real(m.constant(X))]


case_math_complex_parts.needs = ["math.real", "math.imag", "math.conj", "math.angle",
                                 "complex"]


def case_complex_gradients(m):
    """TensorFlow's convention: the gradient of a real loss is conj of the derivative."""
    z = m.constant([1.0 + 2.0j, -0.5 + 0.25j])
    with m.GradientTape() as tape:
        tape.watch(z)
        y = m.math.real(m.reduce_sum(m.sin(z) * m.math.conj(z)))
        w = m.reduce_sum(m.abs(z * z))
    return tape.gradient([y, w], z)


case_complex_gradients.needs = ["math.real", "math.conj"]


def case_complex_jvp(m):
    z = m.constant([1.0 + 2.0j, -0.5 + 0.25j])
    with m.autodiff.ForwardAccumulator(z, m.constant([1.0 + 0.0j, 0.0 + 1.0j])) as acc:
        y = m.exp(z) * z
        r = m.abs(z)
    return acc.jvp(y), acc.jvp(r)


# --- reductions and scans -----------------------------------------------------------

def _reduction(name, xs, parts=PARTS):
    def case(m):
        f = getattr(m.math, name)
        return probe(m, lambda x: [f(x), f(x, axis=0), f(x, axis=1, keepdims=True)], xs,
                     parts=parts)
    case.needs = [f"math.{name}"]
    return case


for _name in ["reduce_variance", "reduce_std", "reduce_logsumexp", "reduce_euclidean_norm"]:
    globals()[f"case_math_{_name}"] = _reduction(_name, A)


def case_reduce_any_all_count(m):
    b = m.constant([[True, False], [True, True]])
    x = m.constant([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0]])
    return [m.math.reduce_any(b), m.math.reduce_all(b, axis=1), m.math.count_nonzero(x),
            m.math.count_nonzero(x, axis=0), m.math.count_nonzero(b)]


case_reduce_any_all_count.needs = ["math.reduce_any", "math.reduce_all", "math.count_nonzero"]


def case_argmax_argmin(m):
    x = m.constant(A)
    return [m.math.argmax(x), m.math.argmax(x, axis=1), m.math.argmin(x, axis=0),
            m.math.argmax(x, output_type=m.int32), m.math.argmax(m.constant([1.0, 3.0, 3.0]))]


case_argmax_argmin.needs = ["math.argmax", "math.argmin"]


def case_cumsum(m):
    return probe(m, lambda x: [m.math.cumsum(x, axis=1), m.math.cumsum(x, axis=0,
                                                                        exclusive=True),
                               m.math.cumsum(x, axis=1, reverse=True),
                               m.math.cumsum(x, axis=1, exclusive=True, reverse=True)], A)


case_cumsum.needs = ["math.cumsum"]


def case_cumprod(m):
    return probe(m, lambda x: [m.math.cumprod(x, axis=1), m.math.cumprod(x, axis=0,
                                                                          exclusive=True),
                               m.math.cumprod(x, axis=1, reverse=True)], A)


case_cumprod.needs = ["math.cumprod"]


def case_segment_sum(m):
    return probe(m, lambda x: m.math.segment_sum(x, m.constant([0, 0, 1])), [1.0, 2.0, 3.0])


case_segment_sum.needs = ["math.segment_sum"]


def case_top_k(m):
    x = m.constant([[1.0, 5.0, 3.0, 4.0], [2.0, -1.0, 0.0, 7.0]])
    with m.GradientTape() as tape:
        tape.watch(x)
        r = m.math.top_k(x, k=2)
    return r, tape.gradient(r.values, x)


case_top_k.needs = ["math.top_k"]


def case_norm_orders(m):
    def f(x):
        return [m.norm(x, ord=o, axis=1) for o in (1, 2, np.inf, 3, 4, "euclidean")]
    return probe(m, f, A, parts=PARTS)


def case_norm_matrix_orders(m):
    def f(x):
        return [m.norm(x, ord=o, axis=[0, 1]) for o in (1, 2, np.inf, "fro", "euclidean")]
    return probe(m, f, SQ, parts=("value", "grad", "jvp"))


# --- shapes and indexing ------------------------------------------------------------

def case_split(m):
    return probe(m, lambda x: [m.split(x, 3, axis=1), m.split(x, [1, 2], axis=1),
                               m.split(x, 2, axis=0)], A, parts=PARTS)


case_split.needs = ["split"]


def case_tile_repeat_roll_reverse(m):
    return probe(m, lambda x: [m.tile(x, [2, 1]), m.repeat(x, 2, axis=1),
                               m.repeat(x, [1, 2], axis=0), m.roll(x, 1, axis=1),
                               m.roll(x, [1, -1], axis=[0, 1]), m.reverse(x, [0, 1])], A,
                 parts=PARTS)


case_tile_repeat_roll_reverse.needs = ["tile", "repeat", "roll", "reverse"]


def case_sort_argsort(m):
    return probe(m, lambda x: [m.sort(x), m.sort(x, direction="DESCENDING", axis=0),
                               m.cast(m.argsort(x), x.dtype)], A, parts=PARTS)


case_sort_argsort.needs = ["sort", "argsort"]


def case_gather(m):
    return probe(m, lambda x: [m.gather(x, [1, 0, 1]), m.gather(x, [2, 0], axis=1),
                               m.gather(x, [[0, 1], [1, 1]]), m.gather_nd(x, [[0, 1], [1, 2]]),
                               m.gather(x, [1, 0], axis=1, batch_dims=0)], A)


case_gather.needs = ["gather", "gather_nd"]


def case_boolean_mask(m):
    return probe(m, lambda x: [m.boolean_mask(x, [True, False]),
                               m.boolean_mask(x, [[True, False, True], [False, True, True]])],
                 A, parts=PARTS)


case_boolean_mask.needs = ["boolean_mask"]


def case_one_hot(m):
    return [m.one_hot([0, 2, -1], 3), m.one_hot([1], 4, on_value=5.0, off_value=-1.0),
            m.one_hot([[0], [1]], 2, axis=0), m.one_hot(m.constant([1, 0]), 2, dtype=m.float64)]


case_one_hot.needs = ["one_hot"]


def case_scatter_nd(m):
    return probe(m, lambda u: m.scatter_nd([[0], [2], [0]], u, [4]), [1.0, 2.0, 3.0])


case_scatter_nd.needs = ["scatter_nd"]


def case_meshgrid_rank(m):
    gx, gy = m.meshgrid(m.constant([1.0, 2.0, 3.0]), m.constant([4.0, 5.0]))
    hx, hy = m.meshgrid(m.constant([1.0, 2.0]), m.constant([4.0, 5.0, 6.0]), indexing="ij")
    return [gx, gy, hx, hy, m.rank(gx), m.rank(m.constant(1.0))]


case_meshgrid_rank.needs = ["meshgrid", "rank"]


def case_tensordot(m):
    b = [[1.0, 0.5], [-1.0, 2.0], [0.25, 1.0]]
    return probe(m, lambda x, y: [m.tensordot(x, y, 1), m.tensordot(x, y, [[1], [0]]),
                                  m.tensordot(x, x, [[0, 1], [0, 1]]),
                                  m.tensordot(x, y, 0)], A, b)


case_tensordot.needs = ["tensordot"]


def case_where_one_argument(m):
    return [m.where(m.constant([[True, False], [False, True]])), m.where(m.constant(A) > 0.6)]


def case_pad_reflect_symmetric(m):
    return probe(m, lambda x: [m.pad(x, [[1, 1], [2, 2]], mode="REFLECT"),
                               m.pad(x, [[1, 0], [3, 2]], mode="SYMMETRIC")], A)


def case_linspace_vector_endpoints(m):
    return probe(m, lambda a, b: m.linspace(a, b, 4), [0.0, 1.0], [1.0, -1.0],
                 parts=("value", "grad", "jvp"))


def case_linspace_axis(m):
    return m.linspace(m.constant([0.0, 1.0]), m.constant([1.0, -1.0]), 3, axis=1)


# --- linear algebra -----------------------------------------------------------------

def _linalg(name, xs, parts=PARTS + ("jacobian",), ulps=64):
    def case(m):
        return probe(m, getattr(m.linalg, name), xs, parts=parts)
    case.needs = [f"linalg.{name}"]
    case.ulps = ulps
    return case


for _name, _xs in [("det", SQ), ("logdet", SPD), ("cholesky", SPD), ("pinv", A),
                   ("expm", [[0.1, 0.5], [-0.3, 0.2]]), ("trace", SQ), ("diag", [1.0, 2.0]),
                   ("diag_part", SQ), ("adjoint", A), ("eigvalsh", SPD)]:
    globals()[f"case_linalg_{_name}"] = _linalg(_name, _xs)


def case_linalg_slogdet(m):
    return probe(m, lambda x: list(m.linalg.slogdet(x)), [[-2.0, 1.0], [1.0, 3.0]])


case_linalg_slogdet.needs = ["linalg.slogdet"]


def case_linalg_cholesky_solve(m):
    return probe(m, lambda a, b: m.linalg.cholesky_solve(m.linalg.cholesky(a), b), SPD,
                 [[1.0], [2.0], [-1.0]])


case_linalg_cholesky_solve.needs = ["linalg.cholesky_solve", "linalg.cholesky"]
case_linalg_cholesky_solve.ulps = 64


def case_linalg_triangular_solve(m):
    lower = [[2.0, 0.0, 0.0], [1.0, 3.0, 0.0], [0.5, -1.0, 1.5]]
    return probe(m, lambda a, b: [m.linalg.triangular_solve(a, b),
                                  m.linalg.triangular_solve(a, b, adjoint=True),
                                  m.linalg.triangular_solve(m.linalg.adjoint(a), b,
                                                            lower=False)],
                 lower, [[1.0], [2.0], [-1.0]])


case_linalg_triangular_solve.needs = ["linalg.triangular_solve", "linalg.adjoint"]
case_linalg_triangular_solve.ulps = 64


def case_linalg_qr(m):
    return probe(m, lambda x: list(m.linalg.qr(x)), [[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]],
                 parts=("value", "grad", "jvp"))


case_linalg_qr.needs = ["linalg.qr"]
case_linalg_qr.ulps = 64


def case_linalg_qr_fields(m):
    r = m.linalg.qr(m.constant(SQ))
    return r


case_linalg_qr_fields.needs = ["linalg.qr"]
case_linalg_qr_fields.ulps = 64


def case_linalg_eigh(m):
    """Eigenvector signs are a convention: compare v * sign(v[0])."""
    def f(x):
        e, v = m.linalg.eigh(x)
        return [e, v * m.sign(v[:1, :])]
    return probe(m, f, SPD, parts=("value", "grad", "jvp"))


case_linalg_eigh.needs = ["linalg.eigh"]
case_linalg_eigh.ulps = 256


def case_linalg_svd(m):
    def f(x):
        s, u, v = m.linalg.svd(x)
        return [s, m.abs(u), m.abs(v), m.linalg.svd(x, compute_uv=False)]
    return probe(m, f, A, parts=("value", "grad", "jvp"))


case_linalg_svd.needs = ["linalg.svd"]
case_linalg_svd.ulps = 256


def case_linalg_lstsq(m):
    return probe(m, m.linalg.lstsq, [[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]],
                 [[1.0], [0.0], [2.0]], parts=("value", "grad", "jvp"))


case_linalg_lstsq.needs = ["linalg.lstsq"]
case_linalg_lstsq.ulps = 256


def case_linalg_set_diag_band_part(m):
    return probe(m, lambda x, d: [m.linalg.set_diag(x, d), m.linalg.band_part(x, 1, 0),
                                  m.linalg.band_part(x, -1, 0), m.linalg.band_part(x, 0, -1)],
                 SQ, [7.0, 8.0, 9.0])


case_linalg_set_diag_band_part.needs = ["linalg.set_diag", "linalg.band_part"]


def case_linalg_matvec_cross(m):
    return probe(m, lambda a, v: [m.linalg.matvec(a, v), m.linalg.cross(v, v[::-1] * 2.0),
                                  m.linalg.matvec(a, v, transpose_a=True)], SQ, X)


case_linalg_matvec_cross.needs = ["linalg.matvec", "linalg.cross"]


def case_matmul_adjoint_flags(m):
    return probe(m, lambda a, b: [m.matmul(a, b, adjoint_a=True),
                                  m.matmul(a, b, adjoint_b=True)], SQ, SQ)


def case_linalg_eig(m):
    e, v = m.linalg.eig(m.constant([[2.0, 1.0], [0.0, 3.0]]))
    return m.math.real(e), m.abs(v)


case_linalg_eig.needs = ["linalg.eig", "math.real"]


def case_linalg_det_singular_gradient(m):
    """TensorFlow's gradient of det inverts the matrix: InvalidArgumentError when singular."""
    return probe(m, m.linalg.det, [[1.0, 2.0], [2.0, 4.0]], parts=("value", "grad"))


case_linalg_det_singular_gradient.needs = ["linalg.det"]


# --- tf.nn ----------------------------------------------------------------------

NN = [[-2.0, -0.5, 0.25, 0.5, 3.0, 7.0]]


def _nn(name, xs, **kwargs):
    def case(m):
        f = getattr(m.nn, name)
        return probe(m, lambda x: f(x, **kwargs), xs)
    case.needs = [f"nn.{name}"]
    return case


for _name, _kw in [("relu6", {}), ("leaky_relu", {}), ("leaky_relu", {"alpha": 0.1}),
                   ("selu", {}), ("gelu", {}), ("gelu", {"approximate": True}), ("silu", {}),
                   ("l2_loss", {}), ("l2_normalize", {"axis": -1})]:
    _suffix = "_" + "_".join(f"{k}" for k in _kw) if _kw else ""
    globals()[f"case_nn_{_name}{_suffix}"] = _nn(_name, NN, **_kw)


def case_nn_moments(m):
    return probe(m, lambda x: list(m.nn.moments(x, axes=[0])) +
                 list(m.nn.moments(x, axes=[1], keepdims=True)), A)


case_nn_moments.needs = ["nn.moments"]


def case_nn_bias_add(m):
    return probe(m, lambda x, b: m.nn.bias_add(x, b), A, [1.0, -1.0, 0.5])


case_nn_bias_add.needs = ["nn.bias_add"]


def case_nn_batch_normalization(m):
    return probe(m, lambda x, mean, var: m.nn.batch_normalization(x, mean, var, 0.5, 2.0,
                                                                    1e-3),
                 A, [0.5, 1.0, 0.0], [1.0, 2.0, 0.5])


case_nn_batch_normalization.needs = ["nn.batch_normalization"]


def case_nn_embedding_lookup(m):
    return probe(m, lambda p: m.nn.embedding_lookup(p, [1, 0, 1]), A, parts=PARTS)


case_nn_embedding_lookup.needs = ["nn.embedding_lookup"]


def case_nn_sigmoid_cross_entropy(m):
    return probe(m, lambda z: m.nn.sigmoid_cross_entropy_with_logits(
        labels=m.constant([[1.0, 0.0, 0.5], [0.0, 1.0, 1.0]], dtype=z.dtype), logits=z), A)


case_nn_sigmoid_cross_entropy.needs = ["nn.sigmoid_cross_entropy_with_logits"]


def case_nn_softmax_cross_entropy(m):
    return probe(m, lambda z, y: m.nn.softmax_cross_entropy_with_logits(labels=y, logits=z),
                 A, [[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]])


case_nn_softmax_cross_entropy.needs = ["nn.softmax_cross_entropy_with_logits"]


def case_nn_sparse_softmax_cross_entropy(m):
    return probe(m, lambda z: m.nn.sparse_softmax_cross_entropy_with_logits(
        labels=m.constant([2, 0]), logits=z), A)


case_nn_sparse_softmax_cross_entropy.needs = ["nn.sparse_softmax_cross_entropy_with_logits"]


def case_nn_weighted_cross_entropy(m):
    return probe(m, lambda z: m.nn.weighted_cross_entropy_with_logits(
        labels=m.constant([[1.0, 0.0, 0.5], [0.0, 1.0, 1.0]], dtype=z.dtype), logits=z,
        pos_weight=2.0), A)


case_nn_weighted_cross_entropy.needs = ["nn.weighted_cross_entropy_with_logits"]
