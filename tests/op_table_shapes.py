"""Op-table rows for the shapes, indexing, scans, sorting and statistics ops
of issue 16 (finite differences to third order, pfor vs loop Jacobians and
Hessians, forward vs reverse, compiled vs eager: see op_table.py)."""
import minitape as mt
from op_table import D, P, R, S, case  # noqa: F401

CASES = [
    # indexing: gather/scatter are each other's gradient
    case("shapes.gather-axis1-repeats", lambda x: mt.gather(x, [2, 0, 2], axis=1), R(2, 3, 4)),
    case("shapes.gather-batch_dims", lambda x: mt.gather(x, [[1, 0], [2, 2]], axis=1,
                                                         batch_dims=1), R(2, 3, 4)),
    case("shapes.gather-batch_dims-axes-between",
         lambda x: mt.gather(x, [[2, 0, 2], [1, 1, 0]], axis=2, batch_dims=1), R(2, 2, 3, 2)),
    case("shapes.gather_nd-batch_dims-2", lambda x: mt.gather_nd(x, [[[1], [0]], [[2], [2]]],
                                                                batch_dims=2), R(2, 2, 3)),
    case("shapes.gather-matrix-indices", lambda x: mt.gather(x, [[0, 1], [1, 1]]), R(2, 3)),
    case("shapes.gather_nd", lambda x: mt.gather_nd(x, [[0, 1], [1, 2], [0, 1]]), R(2, 3, 4)),
    case("shapes.gather_nd-batch_dims", lambda x: mt.gather_nd(x, [[[1]], [[2]]], batch_dims=1),
         R(2, 3, 4)),
    case("shapes.scatter_nd", lambda u: mt.scatter_nd([[1], [3], [1]], u, [5, 2]), R(3, 2)),
    case("shapes.boolean_mask", lambda x: mt.boolean_mask(x, [[True, False, True],
                                                               [False, False, True]]),
         R(2, 3, 2)),
    case("shapes.boolean_mask-axis1", lambda x: mt.boolean_mask(x, [True, False, True], axis=1),
         R(2, 3)),
    case("shapes.gather-at-argmax", lambda x: mt.gather(x, mt.where(x > 0.0)[:, 0]), D(5)),    # statistics
    case("shapes.reduce_variance", lambda x: mt.math.reduce_variance(x, axis=1), R(3, 4)),
    case("shapes.reduce_std", lambda x: mt.math.reduce_std(x, axis=0, keepdims=True), R(3, 4)),
    case("shapes.reduce_logsumexp", lambda x: mt.reduce_logsumexp(x, axis=[0, 2]), R(2, 3, 4)),
    case("shapes.reduce_logsumexp-all", lambda x: mt.reduce_logsumexp(5.0 * x), R(3, 2)),
    case("shapes.reduce_euclidean_norm", lambda x: mt.math.reduce_euclidean_norm(x, axis=-1),
         S(3, 4)),
    case("shapes.reduce_euclidean_norm-keepdims",
         lambda x: mt.math.reduce_euclidean_norm(x, axis=0, keepdims=True), S(3, 2)),    # scans
    case("shapes.cumsum", lambda x: mt.cumsum(x, axis=1), R(2, 4)),
    case("shapes.cumsum-exclusive-reverse", lambda x: mt.cumsum(x, exclusive=True, reverse=True),
         R(4, 2)),
    case("shapes.cumprod", lambda x: mt.math.cumprod(x, axis=-1), S(2, 4)),
    case("shapes.cumprod-exclusive", lambda x: mt.math.cumprod(x, exclusive=True), S(4)),
    case("shapes.cumprod-reverse", lambda x: mt.math.cumprod(x, axis=0, reverse=True), S(3, 2)),
    case("shapes.cumprod-exclusive-reverse",
         lambda x: mt.math.cumprod(x, exclusive=True, reverse=True), S(4)),
    case("shapes.cumprod-at-a-zero", lambda x: mt.math.cumprod(x), [0.7, 0.0, -1.3, 0.9]),
    case("shapes.cumprod-at-two-zeros", lambda x: mt.math.cumprod(x, reverse=True),
         [0.0, 1.1, 0.0, 0.8]),
    case("shapes.segment_sum", lambda x: mt.math.segment_sum(x, [0, 0, 2, 2, 3]), R(5, 2)),    # sorting: each sorted value moves with the entry it came from
    case("shapes.sort", lambda x: mt.sort(x), D(6)),
    case("shapes.sort-axis0-descending", lambda x: mt.sort(x, axis=0, direction="DESCENDING"),
         D(3, 4)),
    case("shapes.top_k", lambda x: mt.math.top_k(x, k=2).values, D(3, 4)),
    case("shapes.top_k-all", lambda x: mt.nn.top_k(x, k=5)[0], D(5)),    # arrangement
    case("shapes.split-count", lambda x: mt.split(x, 2, axis=1)[1], R(2, 4)),
    case("shapes.split-sizes", lambda x: mt.concat(mt.split(x, [1, -1, 1]), axis=0) * 2.0,
         R(5, 2)),
    case("shapes.tile", lambda x: mt.tile(x, [2, 3]), R(2, 3)),
    case("shapes.tile-zero", lambda x: mt.reduce_sum(mt.tile(x, [1, 0, 1]), 1) + x[:, 0], R(2, 1, 3)),
    case("shapes.repeat", lambda x: mt.repeat(x, [1, 0, 3], axis=1), R(2, 3)),
    case("shapes.repeat-flat", lambda x: mt.repeat(x, 2), R(2, 2)),
    case("shapes.roll", lambda x: mt.roll(x, [1, -3], axis=[0, 1]), R(3, 4)),
    case("shapes.reverse", lambda x: mt.reverse(x, [0, -1]), R(3, 2, 2)),
    case("shapes.meshgrid", lambda x, y: mt.meshgrid(x, y)[0] * mt.meshgrid(x, y)[1], R(3), R(2)),
    case("shapes.meshgrid-ij", lambda x, y: mt.reduce_prod(mt.stack(mt.meshgrid(x, y, indexing="ij")), 0),
         R(3), R(2)),
    case("shapes.tensordot-int", lambda a, b: mt.tensordot(a, b, 1), R(2, 3), R(3, 4)),
    case("shapes.tensordot-pairs", lambda a, b: mt.tensordot(a, b, [[1, 2], [1, 0]]),
         R(2, 3, 2), R(2, 3, 4)),
    case("shapes.tensordot-outer", lambda a, b: mt.tensordot(a, b, 0), R(2), R(3)),    # pad's mirror modes
    case("shapes.pad-reflect", lambda x: mt.pad(x, [[1, 2], [2, 0]], mode="REFLECT"), R(3, 3)),
    case("shapes.pad-symmetric", lambda x: mt.pad(x, [[1, 3], [0, 1]], mode="symmetric"),
         R(3, 2)),    # linspace with tensor endpoints
    case("shapes.linspace-vectors", lambda s, e: mt.linspace(s, e, 4), R(3), R(3)),
    case("shapes.linspace-broadcast-axis", lambda s, e: mt.linspace(s, e, 3, axis=-1), R(2, 1),
         R(3)),
]
