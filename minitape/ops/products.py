"""Matrix products declared by their adjoints: matmul's rule reads g @ bᴴ and aᴴ @ g.

z = a @ b is linear in each operand. Its gradient with respect to one operand
is the upstream gradient g carried back through the product with the other:

    da = g @ bᴴ        db = aᴴ @ g

(ᴴ, the conjugate transpose, is TensorFlow's convention for complex numbers,
`conjugation.py`; for real matrices it is the transpose.) Its JVP follows from
being linear in each: dz = da @ b + a @ db. A declaration gives the two
gradients as expressions of `Operand`s, and this module makes the rules,
applying each policy once:

- the transpose flags: the op computes op(a) @ op(b), op a transpose where
  its flag says so, and an Operand is the matrix as the op reads it. The
  gradient of an operand stored transposed is the transpose of its product,
  written by swapping the factors ((x @ y)ᵀ = yᵀ @ xᵀ): no transpose op is
  ever made, only the product's own flags;
- zero times inf (`zero_times_inf.moved_product`): the products of a zero
  upstream gradient (or tangent) count 0, even next to an inf;
- skipped inputs (`skipping.py`) and batch dimensions: a gradient is summed
  back to its operand's shape, the upstream's leading batch dims kept
  (`broadcasting.unbroadcast`), and tangents are shaped to broadcast (`lift`).

`parse_subscripts` (einsum's subscripts with `...` written out) is here too:
the masks name each product's factors by their letters.
"""
from .broadcasting import lift, unbroadcast
from .complex import conj
from .skipping import needs
from .zero_times_inf import moved_product

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"  # string.ascii_letters


class Operand:
    """A matrix of a product as the op reads it: `tensor`, read transposed if
    `transposed`; `letters` are the subscripts of the tensor as stored."""

    __slots__ = ("tensor", "transposed", "letters")

    def __init__(self, tensor, transposed, letters):
        self.tensor, self.transposed, self.letters = tensor, transposed, letters

    @property
    def H(self):
        """The conjugate transpose (for a real matrix, the transpose)."""
        return Operand(conj(self.tensor), not self.transposed, self.letters)

    @property
    def T(self):
        return Operand(self.tensor, not self.transposed, self.letters)

    def __matmul__(self, other):
        return Product(self, other)


class Product:
    """left @ right, not computed yet (so it can still be transposed for free)."""

    __slots__ = ("left", "right")

    def __init__(self, left, right):
        self.left, self.right = left, right

    @property
    def T(self):
        return Product(self.right.T, self.left.T)


def parse_subscripts(equation, ndims, op_name="einsum"):
    """Explicit subscripts for each input and the output, with '...' replaced
    by fresh letters, e.g. 'bxby->bxy' -> (['bxby'], 'bxy')."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(ndims):
        raise ValueError(f"{op_name}: equation {equation!r} names {len(ins)} operand(s), "
                         f"got {len(ndims)}")
    used = set(eq) - set(".,->")
    fresh = [c for c in LETTERS if c not in used]
    n_ell = max([nd - (len(s) - 3) for s, nd in zip(ins, ndims) if "..." in s] or [0])
    ell = "".join(fresh[:n_ell])
    expanded = []
    for s, nd in zip(ins, ndims):
        if "..." in s:
            k = nd - (len(s) - 3)
            s = s.replace("...", ell[n_ell - k:] if k else "")
        if len(s) != nd or not all(c in LETTERS for c in s):
            raise ValueError(f"{op_name}: subscripts {s!r} do not fit an operand of rank {nd} "
                             f"in {equation!r}")
        expanded.append(s)
    if not arrow:  # implicit output: the letters used once, in alphabetical order
        joined = "".join(expanded)
        out = ell + "".join(sorted(c for c in set(joined) if joined.count(c) == 1
                                   and c not in ell))
    else:
        out = out.replace("...", ell)
    return expanded, out


def _masked(z, product, letters, moving):
    """`z`, the value of `product`, with the products of the factor `moving`'s
    zeros counted as 0 (zero_times_inf.py); `letters` are z's subscripts."""
    factors = (product.left, product.right)
    xs = [f.tensor for f in factors]
    ins, out = parse_subscripts(f"{factors[0].letters},{factors[1].letters}->{letters}",
                                [x.ndim for x in xs])
    return moved_product(z, ins, out, xs, factors.index(moving))


def matrix_product_rules(gradients, matmul):
    """(gradient, jvp) of z = op(a) @ op(b) (attributes transpose_a and
    transpose_b), from `gradients`: for each operand, a function of the
    Operands (g, a, b) giving its gradient as a Product (`g @ b.H`).
    `matmul(a, b, transpose_a, transpose_b)` computes a product."""
    def operands(op):
        ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
        return (Operand(op.inputs[0], ta, "...ki" if ta else "...ik"),
                Operand(op.inputs[1], tb, "...jk" if tb else "...kj"))

    def computed(product):
        left, right = product.left, product.right
        return matmul(left.tensor, right.tensor, transpose_a=left.transposed,
                      transpose_b=right.transposed)

    def gradient(op, grad):
        a, b = operands(op)
        g = Operand(grad, False, "...ij")
        wanted = needs(op)
        nb = grad._value.ndim - op.outputs[0]._value.ndim
        products = [rule(g, a, b) if wanted[i] else None  # the gradients of op(a), op(b)
                    for i, rule in enumerate(gradients)]
        zs = [None if p is None else computed(p.T if x.transposed else p)  # of a and b
              for p, x in zip(products, (a, b))]
        return [None if z is None else
                unbroadcast(_masked(z, p, x.letters, g), x.tensor.shape, nb)
                for z, p, x in zip(zs, products, (a, b))]

    def jvp(op, ta, tb):
        a, b = operands(op)
        ndim = op.outputs[0]._value.ndim
        total = None
        for i, t in enumerate((ta, tb)):
            if t is None:
                continue
            x = (a, b)[i]
            dx = Operand(lift(t, x.tensor, ndim), x.transposed, x.letters)
            product = dx @ b if i == 0 else a @ dx  # da @ b + a @ db
            term = _masked(computed(product), product, "...ij", dx)
            total = term if total is None else total + term
        return total
    return gradient, jvp
