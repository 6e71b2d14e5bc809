"""A Jacobian's one-hot seed in compiled programs (`compiler.py`).

`tape.jacobian` runs one backward pass for every row of the Jacobian at once,
seeded with the identity: row r of the seed is a matrix E_r of the target's
shape (m, n) with a single 1, at entry r = (p, q). (In forward mode the
tangents of the source are such an identity, one per column.) The first
matmul that meets them, `a @ E` (or `a @ (E * mask)`, once a relu's `where`
has masked them), multiplies by matrices that are almost all zeros, so each
entry of the product has at most one nonzero term:

    (a @ (E * mask))[(p, q), i, l] = a[i, p] * mask[p, q] * [q == l]

So `seed_product` writes a's numbers into zeros at those places, with no
multiplication at all: the same numbers as the matmul's for a finite `a`, in
a fraction of its time (a zero may be 0.0 where the matmul's sum of zeros
gives -0.0; they compare equal). An inf or NaN in `a` would spread along the
matmul's rows, as 0 * inf is NaN, but not here, so the program writes this
line only where `a` has a check_finite line: where a check fails, the program
with the masks runs instead, and it never writes this line.

    grad_matmul = seed_product(x.T, n, grad_greater)  # MatMul (adjoint)
"""
import numpy as np

__all__ = ["seed_product", "identity_stack", "is_checked", "seed_of"]


def seed_product(a, n, mask=None):
    """`a @ E` (or `a @ (E * mask)`) for the identity stack E of shape
    (m * n, m, n): zeros but for the entries [(p, q), i, q], which are a[i, p]
    (where mask[p, q]). `a` is (i, m), `mask` (m, n) bool or None."""
    i, m = a.shape
    out = np.zeros((m, n, i, n), a.dtype)
    s0, s1, s2, s3 = out.strides
    # out[p, q, :, q] for every p and q: one view, whose step in q is both of q's steps
    diagonal = np.ndarray((m, n, i), a.dtype, out, 0, (s0, s1 + s3, s2))
    if mask is None:
        diagonal[...] = a.T[:, None, :]
    else:
        np.copyto(diagonal, a.T[:, None, :], where=mask[:, :, None])
    return out.reshape(m * n, i, n)


def identity_stack(value):
    """n when `value` is the identity reshaped to (m * n, m, n) (a Jacobian's
    seed: one 1 per matrix, at a new place each time), else None."""
    if value is None:
        return None
    value = np.asarray(value)
    rows = value.shape[0] if value.ndim == 3 else 0
    if not rows or value.dtype.kind != "f" or rows != value.shape[1] * value.shape[2]:
        return None
    square = value.reshape(rows, rows)  # (no second array of its size: count, then look)
    if np.count_nonzero(square) != rows or not np.all(np.diagonal(square) == 1):
        return None
    return value.shape[2]


def is_checked(ref, checked, expr):
    """Whether the node input `ref` is a computed value (not a variable, which
    an assignment may change between two reads) that a check_finite line
    looks at: `checked` are the inputs of the program's live AllFinite nodes."""
    return ref.kind == "t" and any(
        r.kind == "t" and (r.x == ref.x or r.x in expr and expr[r.x] == expr.get(ref.x))
        for r in checked)


def seed_of(node, ins, known, in_shapes, seeds, checked, expr):
    """(n, mask ref or None) when a MatMul is `a @ E` or `a @ (E * mask)` for a
    Jacobian's seed E (the module docstring) and a 2-D `a` that a check_finite
    line looks at; else None."""
    if node.attrs["transpose_b"] or None in in_shapes or len(in_shapes[0]) != 2 \
            or known[0] is not None or node.outputs[0].dtype.kind != "f" \
            or not is_checked(ins[0], checked, expr):
        return None
    n = identity_stack(known[1])
    if n:
        return n, None
    if ins[1].kind == "t" and ins[1].x in seeds:
        return seeds[ins[1].x]
    return None
