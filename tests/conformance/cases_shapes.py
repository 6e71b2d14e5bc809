"""The API summary's "shapes" row (docs/api.md): reshape, transpose, pad, concat, stack, squeeze,
expand_dims, indexing, einsum; each with its gradients."""
from .probes import probe

A = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]]
B = [[2.0, 1.0, -1.0], [3.0, 0.5, 2.5]]
PARTS = ("value", "grad", "grad2", "jvp")


def case_reshape(m):
    return probe(m, lambda x: [m.reshape(x, [3, 2]), m.reshape(x, [-1]),
                               m.reshape(x, (1, 6, 1)), m.reshape(x, [-1, 2])], A, parts=PARTS)


def case_reshape_bad_size(m):
    return m.reshape(m.constant(A), [4, 2])


case_reshape_bad_size.error_only = True


def case_reshape_shape_tensor(m):
    x = m.constant(A)
    return m.reshape(x, m.shape(x)[::-1]), m.shape(x)


def case_transpose(m):
    return probe(m, lambda x: [m.transpose(x), m.transpose(m.reshape(x, [1, 2, 3]), [2, 0, 1]),
                               m.transpose(x, perm=[1, 0])], A)


def case_transpose_bad_perm(m):
    return m.transpose(m.constant(A), [0, 0])


case_transpose_bad_perm.error_only = True


def case_pad(m):
    return probe(m, lambda x: [m.pad(x, [[1, 0], [2, 1]]),
                               m.pad(x, [[0, 1], [0, 0]], constant_values=2.5)], A)


def case_pad_modes(m):
    return probe(m, lambda x: [m.pad(x, [[1, 1], [1, 1]], mode="CONSTANT")], A, parts=PARTS)


def case_concat(m):
    return probe(m, lambda x, y: [m.concat([x, y], axis=0), m.concat([x, y], axis=1),
                                  m.concat([x, y, x], -1)], A, B)


def case_concat_shape_error(m):
    return m.concat([m.constant(A), m.constant([[1.0]])], axis=0)


case_concat_shape_error.error_only = True


def case_stack(m):
    return probe(m, lambda x, y: [m.stack([x, y]), m.stack([x, y], axis=1),
                                  m.stack([x, y], axis=-1)], A, B)


def case_unstack(m):
    return probe(m, lambda x: m.unstack(x), A, parts=PARTS)


def case_squeeze_expand_dims(m):
    return probe(m, lambda x: [m.squeeze(m.reshape(x, [1, 2, 1, 3])),
                               m.squeeze(m.reshape(x, [1, 2, 1, 3]), axis=2),
                               m.expand_dims(x, 0), m.expand_dims(x, -1),
                               m.expand_dims(x, axis=1)], A)


def case_squeeze_non_one(m):
    return m.squeeze(m.constant(A), axis=0)


case_squeeze_non_one.error_only = True


def case_indexing(m):
    return probe(m, lambda x: [x[0], x[:, 1], x[1, 2], x[..., ::-1], x[:, None, 1:],
                               x[-1, :2], x[:, m.newaxis]], A)


def case_indexing_strided(m):
    return probe(m, lambda x: [x[::2], x[1::-1, ::2]], A, parts=PARTS)


def case_index_out_of_range(m):
    return m.constant(A)[5]


case_index_out_of_range.error_only = True


def case_einsum(m):
    return probe(m, lambda x, y: [m.einsum("ij,kj->ik", x, y), m.einsum("ij->", x),
                                  m.einsum("ij,ij->i", x, y), m.einsum("ij->ji", x)], A, B)


def case_einsum_batch(m):
    """The guide's 'bxby->bxy' and a batched matrix product."""
    x = [[[1.0, 2.0], [3.0, 4.0]], [[0.5, -1.0], [2.0, 1.0]]]
    y = [[[2.0, 0.0], [1.0, -1.0]], [[1.0, 1.0], [0.0, 3.0]]]
    return probe(m, lambda a, b: [m.einsum("bxby->bxy", m.reshape(a, [2, 2, 1, 2]) * 0.0 +
                                           m.reshape(b, [2, 1, 2, 2])),
                                  m.einsum("bij,bjk->bik", a, b)], x, y)


def case_shape_size(m):
    x = m.constant(A)
    return [m.shape(x), m.size(x), x.shape, x.ndim if hasattr(x, "ndim") else len(x.shape),
            len(x)]


def case_broadcast_to(m):
    return probe(m, lambda x: m.broadcast_to(x, [3, 2, 3]), A, parts=PARTS)


def case_identity(m):
    return probe(m, m.identity, A, parts=PARTS)
