"""`mt.linalg`: linear algebra."""
from .ops import einsum, eye, inv, matmul, matrix_transpose, norm, solve  # noqa: F401
from .ops import tensordot  # noqa: F401
