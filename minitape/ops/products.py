"""Products declared by their adjoints: matmul's rule reads g @ bᴴ and aᴴ @ g,
einsum's reads as the same contraction with two subscripts swapped.

z = a @ b is linear in each operand. Its gradient with respect to one operand
is the upstream gradient g carried back through the product with the other:

    da = g @ bᴴ        db = aᴴ @ g

(ᴴ, the conjugate transpose, is TensorFlow's convention for complex numbers,
`conjugation.py`; for real matrices it is the transpose.) Its JVP follows from
being linear in each: dz = da @ b + a @ db. A declaration gives the two
gradients as expressions of `Operand`s, and this module makes the rules.

An einsum z = einsum(ins -> out, x_0, ..., x_n) is linear in each operand
too: the gradient for x_i is the contraction of g with the other operands,
the output's and x_i's subscripts swapped, and the tangent is the sum over i
of the contraction with the tangent t_i in place of x_i. A declaration gives
both as `Contraction`s of Operands (`contraction_rules`).

The rules apply each policy once:

- the transpose flags (matmul): the op computes op(a) @ op(b), op a
  transpose where its flag says so, and an Operand is the matrix as the op
  reads it. The gradient of an operand stored transposed is the transpose of
  its product, written by swapping the factors ((x @ y)ᵀ = yᵀ @ xᵀ): no
  transpose op is ever made, only the product's own flags;
- complex conjugates (`conjugation.py`): a contraction's gradient is
  evaluated at conjugated operands, as a row's partials are (a matmul's names
  its adjoint itself: bᴴ);
- zero times inf (`zero_times_inf.moved_product`): the products of a zero
  upstream gradient (or tangent) count 0, even next to an inf;
- skipped inputs (`skipping.py`) and batch dimensions: a gradient is summed
  back to its operand's shape, the upstream's leading batch dims kept
  (`broadcasting.unbroadcast`; an einsum's keeps them as leading letters),
  and tangents are shaped to broadcast (`lift`).

A contraction's swapped subscripts are written so that NumPy's einsum
computes them (`subscripts.written`), and the masks name each product's
factors by their letters (`subscripts.parse_subscripts`).
"""
from ..core.registry import batch_ndim
from .broadcasting import lift, unbroadcast
from .complex import conj
from .operands import tangent_batch
from .skipping import needs
from .subscripts import fresh_letters, parse_subscripts, written
from .zero_times_inf import moved_product


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


class Contraction:
    """einsum of `operands` (Operands, each with its subscripts) to `letters`,
    not computed yet."""

    __slots__ = ("operands", "letters")

    def __init__(self, operands, letters):
        self.operands, self.letters = list(operands), letters


def contraction_rules(gradient, tangent, einsum):
    """(gradient, jvp) of z = einsum(ins -> out, *xs) (attributes `inputs` and
    `output`), from `gradient(g, xs, i)`, operand i's gradient, and
    `tangent(z, xs, i, t)`, the tangent's term for operand i, each a
    Contraction of the Operands g (the upstream, with z's letters), xs (the
    operands) and t (operand i's tangent, with its letters). The result's
    letters get the batch letters in front. `einsum(equation, *tensors)`
    computes a contraction."""
    def operands(op):
        return [Operand(x, False, s) for x, s in zip(op.inputs, op.attrs["inputs"])]

    def computed(contraction, moving, batch, fresh, sizes, dtype):
        """The contraction, masked where `moving`'s zeros meet an inf."""
        terms, result, eyes = written([(f.letters, f.tensor) for f in contraction.operands],
                                      contraction.letters, sizes, fresh, dtype)
        ins, out = [s for s, _ in terms], batch + result
        tensors = [t for _, t in terms]
        z = einsum(",".join(ins) + "->" + out, *tensors)
        position = next(k for k, f in enumerate(contraction.operands) if f is moving)
        return moved_product(z, ins, out, tensors, position, structural=eyes)

    def gradient_rule(op, grad):
        xs = operands(op)
        out = op.attrs["output"]
        fresh = iter(fresh_letters(*op.attrs["inputs"], out))
        batch = "".join(next(fresh) for _ in range(batch_ndim(op, grad)))
        g = Operand(grad, False, batch + out)
        sizes = {c: n for x in xs for c, n in zip(x.letters, x.tensor.shape)}
        wanted = needs(op)
        grads = []
        for i in range(len(xs)):
            if not wanted[i]:
                grads.append(None)
                continue
            contraction = gradient(g, xs, i)
            contraction.operands = [f if f is g else Operand(conj(f.tensor), False, f.letters)
                                    for f in contraction.operands]  # at conjugated values
            grads.append(computed(contraction, g, batch, fresh, sizes, grad.dtype))
        return grads

    def jvp(op, *tangents):
        xs = operands(op)
        z = Operand(op.outputs[0], False, op.attrs["output"])
        batch = "".join(fresh_letters(*op.attrs["inputs"], z.letters)
                        [:len(tangent_batch(op, tangents))])
        total = None
        for i, t in enumerate(tangents):
            if t is None:
                continue
            dx = Operand(t, False, batch + xs[i].letters)
            term = computed(tangent(z, xs, i, dx), dx, batch, iter(()), {}, t.dtype)
            total = term if total is None else total + term
        return total
    return gradient_rule, jvp
