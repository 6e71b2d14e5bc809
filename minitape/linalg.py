"""`mt.linalg`: linear algebra."""
from .ops import einsum, eye, inv, matmul, matrix_transpose, norm, solve  # noqa: F401
from .ops import tensordot  # noqa: F401
from .ops import (adjoint, band_part, cholesky_solve, cross, det, diag,  # noqa: F401
                  diag_part, matvec, set_diag, slogdet, trace, triangular_solve)
from .ops import cholesky, eigh, eigvalsh, qr, svd  # noqa: F401
from .ops import expm, logdet, lstsq, pinv  # noqa: F401
from .ops import eig, eigvals  # noqa: F401
