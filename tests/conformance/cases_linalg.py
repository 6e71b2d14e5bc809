"""The API summary's "linear algebra" row (docs/api.md): matmul, solve, inv (with gradients and JVPs)."""
from .probes import probe

A = [[2.0, 1.0], [-1.0, 3.0]]
B = [[1.0, 0.5, -1.0], [2.0, -2.0, 0.25]]
V = [[1.0], [-2.0]]


def case_matmul(m):
    return probe(m, m.matmul, A, B)


def case_matmul_transpose_flags(m):
    return probe(m, lambda a, b: [m.matmul(a, b, transpose_a=True),
                                  m.matmul(b, a, transpose_a=True, transpose_b=True),
                                  m.matmul(a, a, transpose_b=True)], A, B)


def case_matmul_batched(m):
    x = [[[1.0, 2.0], [3.0, 4.0]], [[0.5, -1.0], [2.0, 1.0]]]
    return probe(m, lambda a, b: m.matmul(a, b), x, A)


def case_matmul_vector_error(m):
    return m.matmul(m.constant([1.0, 2.0]), m.constant(A))


case_matmul_vector_error.error_only = True


def case_matmul_shape_error(m):
    return m.matmul(m.constant(B), m.constant(A))


case_matmul_shape_error.error_only = True


def case_matmul_int(m):
    return m.matmul(m.constant([[1, 2]]), m.constant([[3], [4]]))


def case_linalg_matmul(m):
    return probe(m, m.linalg.matmul, A, B, parts=("value", "grad"))


def case_solve(m):
    return probe(m, m.linalg.solve, A, V)


def case_solve_batched(m):
    return probe(m, m.linalg.solve, [A, [[1.0, 0.0], [0.0, 2.0]]], [V, [[3.0], [1.0]]])


def case_solve_singular(m):
    return m.linalg.solve(m.constant([[1.0, 2.0], [2.0, 4.0]]), m.constant([[1.0], [1.0]]))


case_solve_singular.error_only = True


def case_solve_shape_error(m):
    return m.linalg.solve(m.constant(A), m.constant([1.0, 2.0]))


case_solve_shape_error.error_only = True


def case_inv(m):
    return probe(m, m.linalg.inv, A)


def case_inv_batched(m):
    return probe(m, m.linalg.inv, [A, [[1.0, 0.5], [0.0, 2.0]]], parts=("value", "grad", "jvp"))


def case_inv_singular(m):
    return m.linalg.inv(m.constant([[1.0, 2.0], [2.0, 4.0]]))


case_inv_singular.error_only = True


def case_inv_not_square(m):
    return m.linalg.inv(m.constant(B))


case_inv_not_square.error_only = True


def case_matrix_transpose(m):
    return probe(m, m.linalg.matrix_transpose, B, parts=("value", "grad", "jvp"))


def case_linalg_eye_einsum(m):
    return [m.linalg.eye(2), m.linalg.einsum("ij->i", m.constant(A))]


def case_linalg_norm(m):
    return probe(m, lambda x: m.linalg.norm(x), A)
