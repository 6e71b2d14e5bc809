"""Complex inputs through matmul, einsum, reduce_prod, sigmoid, sign/abs,
solve, inv, eigh, eigvalsh, svd and the spectral norm: first and second
derivatives in TensorFlow's convention (the
gradient of a real loss is dL/dRe + i dL/dIm, so a rule multiplies by the
CONJUGATE of the derivative), against float64 central finite differences and
against the numbers TensorFlow 2.21 gives (measured once, written down here).
And the ops TensorFlow refuses for complex input (those that order numbers,
relu, softmax, l2_loss...) refuse it too, rather than ordering complex numbers
lexicographically as NumPy does."""
import numpy as np
import pytest

import minitape as mt
from minitape.ops.zero_times_inf import unmoved_einsum

Z = np.array([[1 + 2j, -0.5 + 0.25j], [0.3 - 1j, 2.0 + 0.5j]])   # a complex 2 x 2 matrix
B = np.array([[0.5 - 1j], [1.5 + 0.75j]])
V = np.array([1 + 2j, -0.5 + 0.25j, 0.8 - 0.6j])


Z3 = np.array([[1 + 2j, -0.5 + 0.25j], [0.3 - 1j, 2.0 + 0.5j], [-0.7 + 0.2j, 0.4 - 0.9j]])
H = np.array([[2.0, 0.5 - 1j, 0.3j], [0.5 + 1j, -1.0, 0.2 + 0.4j],    # Hermitian, with
              [-0.3j, 0.2 - 0.4j, 0.5]])                              # distinct eigenvalues
W2, W3 = np.array([1.0, 2.5]), np.array([1.0, 2.5, -0.5])


def weighed(v, w, u=None):
    """U diag(w) V^H, which does not depend on the phases the columns of U and
    V share (the only freedom of eigh's and svd's vectors), times fixed
    numbers entry by entry (its sum of squares alone would be a constant)."""
    u = v if u is None else u
    y = mt.matmul(u * mt.cast(mt.constant(w), v.dtype), v, adjoint_b=True)
    c = np.arange(1, 1 + y.shape[0] * y.shape[1]).reshape(y.shape) * (0.5 - 0.25j)
    return y * mt.constant(c.astype(y.dtype))


def loss(y):
    """A real loss of a complex y, not symmetric in Re and Im:
    sum |y|^2 + 0.3 sum Im(y)."""
    return (mt.reduce_sum(mt.math.real(y * mt.math.conj(y)))
            + 0.3 * mt.reduce_sum(mt.math.imag(y)))


CASES = {  # name: (f, z): the loss is loss(f(z)), differentiated at z
    "matmul_zz": (lambda z: mt.matmul(z, z), Z),
    "matmul_tb": (lambda z: mt.matmul(z, z, transpose_b=True), Z),
    "matmul_adj_a": (lambda z: mt.matmul(z, mt.constant(Z), adjoint_a=True), Z),
    "matmul_b": (lambda z: mt.matmul(mt.constant(Z), z), B),
    "matvec": (lambda z: mt.linalg.matvec(z, mt.constant(V[:2])), Z),
    "tensordot": (lambda z: mt.tensordot(z, z, 1), Z),
    "einsum3": (lambda z: mt.einsum("ij,jk,k->i", z, z, mt.constant(V[:2])), Z),
    "einsum_diag": (lambda z: mt.einsum("ii,ij->j", z, z), Z),
    "prod": (lambda z: mt.reduce_prod(z), V),
    "prod_axis": (lambda z: mt.reduce_prod(z, axis=0), Z),
    "sigmoid": (lambda z: mt.sigmoid(z), V),
    "silu": (lambda z: mt.nn.silu(z), V),
    "abs": (lambda z: mt.abs(z) * mt.abs(z), V),
    "sign": (lambda z: mt.sign(z), V),
    "norm": (lambda z: mt.norm(z), V),
    "solve": (lambda z: mt.linalg.solve(z, mt.constant(B)), Z),
    "solve_rhs": (lambda z: mt.linalg.solve(mt.constant(Z), z), B),
    "solve_adjoint": (lambda z: mt.linalg.solve(z, mt.constant(B), adjoint=True), Z),
    "inv": (lambda z: mt.linalg.inv(z), Z),
    "inv_adjoint": (lambda z: mt.linalg.inv(z, adjoint=True), Z),
    # Hermitian and singular-value decompositions (issue 30: they refused complex input)
    "eigh_values": (lambda z: mt.linalg.eigh(z)[0], H),
    "eigh_vectors": (lambda z: weighed(mt.linalg.eigh(z)[1], W3), H),
    "eigvalsh": (lambda z: mt.linalg.eigvalsh(z) * mt.constant(W3.astype(complex)), H),
    "svd_values": (lambda z: mt.linalg.svd(z, compute_uv=False), Z3),
    "svd_s": (lambda z: mt.linalg.svd(z)[0], Z),
    "svd_square": (lambda z: weighed(mt.linalg.svd(z)[2], W2, mt.linalg.svd(z)[1]), Z),
    "svd_deep": (lambda z: weighed(mt.linalg.svd(z)[2], W2, mt.linalg.svd(z)[1]), Z3),
    "svd_wide": (lambda z: weighed(mt.linalg.svd(z)[2], W2, mt.linalg.svd(z)[1]), Z3.T.copy()),
    "svd_u_projector": (lambda z: weighed(mt.linalg.svd(z)[1], W2), Z3),
    "svd_v_projector": (lambda z: weighed(mt.linalg.svd(z)[2], W2), Z3.T.copy()),
    "spectral_norm": (lambda z: mt.norm(z, ord=2, axis=[0, 1]), Z3),
}


def gradient(f, z0):
    z = mt.constant(z0)
    with mt.GradientTape() as tape:
        tape.watch(z)
        y = loss(f(z))
    return tape.gradient(y, z).numpy()


def first_and_second(f, z0):
    """The gradient g of loss(f(z)), and the gradient of
    sum(0.7 Re(g) + 0.3 Im(g)): a second derivative along a direction."""
    z = mt.constant(z0)
    with mt.GradientTape() as outer:
        outer.watch(z)
        with mt.GradientTape() as inner:
            inner.watch(z)
            y = loss(f(z))
        g = inner.gradient(y, z)
        s = mt.reduce_sum(0.7 * mt.math.real(g) + 0.3 * mt.math.imag(g))
    return g.numpy(), outer.gradient(s, z).numpy()


def finite_differences(fun, z0, eps=1e-6):
    """dfun/dRe + i dfun/dIm at z0 (TensorFlow's convention), central differences."""
    out = np.zeros(z0.shape, complex)
    for k in np.ndindex(z0.shape):
        e = np.zeros(z0.shape, complex)
        e[k] = eps
        out[k] = ((fun(z0 + e) - fun(z0 - e)) / (2 * eps)
                  + 1j * (fun(z0 + 1j * e) - fun(z0 - 1j * e)) / (2 * eps))
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_first_and_second_derivatives_match_finite_differences(name):
    f, z0 = CASES[name]
    g, h = first_and_second(f, z0)
    fd1 = finite_differences(lambda z: float(loss(f(mt.constant(z))).numpy()), z0)
    np.testing.assert_allclose(g, fd1, atol=1e-6)
    # the second: differences of the (checked) first derivative
    fd2 = finite_differences(
        lambda z: float(np.sum(np.array([0.7, 0.3]) @ [gradient(f, z).real.ravel(),
                                                        gradient(f, z).imag.ravel()])), z0)
    np.testing.assert_allclose(h, fd2, atol=1e-6)


# TensorFlow 2.21's gradient g and second derivative h (as first_and_second
# computes them, with tf in the place of mt), rounded to 10 decimals.
TF = {
    "matmul_zz": ([34.39 + 49.0525j, -28.83 + 14.895j, 12.675 - 37.525j, 44.44 + 21.0525j],
                  [20.937 + 24.143j, 9.392 + 33.348j, 33.365 - 8.935j, 37.087 + 6.813j]),
    "matmul_tb": ([21.36 + 42.8j, 18.925 - 7.3375j, 1.908 + 3.82j, 23.47 + 5.545j],
                  [18.557 + 40.103j, 20.455 + 20.285j, 36.866 + 11.198j, 41.817 - 7.643j]),
    "matmul_adj_a": ([14.455 + 27.66j, -17.2875 + 9.33125j, 7.304 - 26.37j, 24.96 + 5.7125j],
                     [2.4225 + 4.9325j, 2.4225 + 4.9325j, 5.281 - 1.631j, 5.281 - 1.631j]),
    "matmul_b": ([1.59 - 1.44j, 7.2125 + 3.69375j], [6.626 + 8.474j, 8.5675 - 1.9625j]),
    "matvec": ([9.975 + 19.05j, 4.7625 - 2.49375j, 2.35 - 4.7j, -1.175 - 0.5875j],
               [6.25 + 4.75j, 1.1875 - 1.5625j, 6.25 + 4.75j, 1.1875 - 1.5625j]),
    "tensordot": ([34.39 + 49.0525j, -28.83 + 14.895j, 12.675 - 37.525j, 44.44 + 21.0525j],
                  [20.937 + 24.143j, 9.392 + 33.348j, 33.365 - 8.935j, 37.087 + 6.813j]),
    "einsum3": ([126.2784375 + 208.52515625j, 4.736875 - 25.283125j,
                 76.62109375 - 117.40625j, -1.9871875 - 6.56859375j],
                [103.2690625 + 156.4834375j, 7.811875 + 29.1975j,
                 139.35859375 - 3.04140625j, 14.0703125 - 24.8128125j]),
    "einsum_diag": ([8.75 + 21.625j, 11.1 - 8.2j, -5.3 + 11.1j, 19.06 + 3.28j],
                    [39.5275 + 3.5975j, 23.54 - 1.14j, 10.3 + 17.36j, 26.446 + 35.794j]),
    # reduce_prod over a whole vector: TensorFlow's second derivative (-0.714-1.798j, ...)
    # disagrees with finite differences, so only its gradient is stated
    "prod": ([0.775 + 1.175j, -4.7 + 3.1j, 2.275 - 2.175j], None),
    "prod_axis": ([1.88 + 4.45j, -4.1 + 2.725j, 3.6 - 9.7j, 1.325 + 0.1625j],
                  [1.256 + 0.144j, 2.94 + 4.31j, 8.65 - 1.99j, -1.6725 - 0.1525j]),
    "sigmoid": ([-0.1778715753 + 1.0154028685j, 0.1850029935 + 0.0884807268j,
                 0.3193167336 - 0.0668599569j],
                [-0.5288002091 - 0.533432884j, 0.1176532988 + 0.0541399818j,
                 -0.045952265 + 0.0375039609j]),
    # silu: TensorFlow's custom gradient does not conjugate (its numbers disagree
    # with finite differences); minitape's silu is x * sigmoid(x), whose rules do
    "abs": ([20 + 40j, -0.625 + 0.3125j, 3.2 - 2.4j],
            [24.4 + 26.8j, 1.975 - 0.175j, 5.232 - 0.624j]),
    "sign": ([-0.0536656315 + 0.0268328157j, 0.2146625258 + 0.4293250517j, 0.144 + 0.192j],
             [-0.0037565942 + 0.0166363458j, 0.523776563 - 0.0686920083j, -0.11016 + 0.11712j]),
    "norm": ([2 + 4j, -1 + 0.5j, 1.6 - 1.2j], [1.4 + 0.6j, 1.4 + 0.6j, 1.4 + 0.6j]),
    "solve": ([-0.2267635812 - 0.8423201161j, -1.0283346176 + 0.8678513955j,
               0.7132013475 - 0.7930591348j, -1.5744720374 - 0.4774729561j],
              [0.1298501095 + 1.6907921621j, 2.6009806424 - 0.7330740749j,
               -0.7138715385 + 1.9574148962j, 2.8482063203 + 0.4179084257j]),
    "solve_rhs": ([0.92461746 - 0.7179649258j, 1.3517055309 + 0.470803623j],
                  [0.7703064174 + 0.089974947j, 0.5940258239 + 0.4947388707j]),
    "solve_adjoint": ([-0.7904861378 - 1.1283361883j, -1.5234661638 + 1.0630738631j,
                       0.1743778746 - 1.4762481198j, -1.990172668 - 0.238848943j],
                      [1.535988292 + 2.6378596556j, 3.9275808385 - 1.1112135727j,
                       0.3308745832 + 3.4440625947j, 4.2551755818 + 0.5934191751j]),
    "inv": ([-0.0807568466 - 0.3220274859j, -0.2820802655 + 0.0944700535j,
             0.1858449027 - 0.2837047149j, -0.4008045987 - 0.2265941031j],
            [0.1274653115 + 0.6307354899j, 0.8234686396 + 0.0297596117j,
             -0.1191716125 + 0.7581639993j, 0.8467897672 + 0.3637360159j]),
    "inv_adjoint": ([-0.282273759 - 0.3837777031j, -0.4335436511 + 0.303853949j,
                     -0.0257541107 - 0.3174513321j, -0.5237656292 + 0.0055795572j],
                    [0.4557105713 + 0.7871535688j, 1.1349736816 - 0.2891871338j,
                     0.2333716418 + 0.8693479964j, 1.1154283279 - 0.001320514j]),
    # Through the singular vectors of a complex matrix (the svd rows below
    # svd_s, and the spectral norm), TensorFlow's second derivatives disagree
    # with finite differences (by up to 28 here): only its gradients are stated.
    "eigh_values": (
        [4, 0, 0, 2 + 4j, -2, 0, -1.2j, 0.8 - 1.6j, 1],
        [1.4, 0, 0, 2.8 + 1.2j, 1.4, 0, 2.8 + 1.2j, 2.8 + 1.2j, 1.4]),
    "eigh_vectors": (
        [5.3530772288, 0, 0, -0.3348291794 + 5.1564548445j, -4.425792471, 0,
         -10.1674593774 + 26.969641578j, -5.2911301057 + 26.2705657749j, -0.9272847578],
        [-4.3297770722, 0, 0, 4.3615055917 - 6.8272449842j, 0.9504535887, 0,
         -64.1631662265 - 52.1257053597j, -56.0525602452 - 4.1900825637j, 3.3793234835]),
    "eigvalsh": (
        [1.0259374059, 0, 0, 0.4972477069 + 2.1973911609j, -2.1298114983, 0,
         -2.004826245 + 1.2173000171j, 2.7971538963 - 2.5870684251j, 6.1742550059],
        [0.5959029398, 0, 0, 1.0056934183 - 0.3273481274j, 0.8491223758, 0,
         -5.5772996799 - 2.227111517j, 5.0127450117 + 4.3231404016j, 8.4812956671]),
    "svd_values": (
        [2 + 4j, -1 + 0.5j, 0.6 - 2j, 4 + 1j, -1.4 + 0.4j, 0.8 - 1.8j],
        [1.4 + 0.6j, 1.4 + 0.6j, 1.4 + 0.6j, 1.4 + 0.6j, 1.4 + 0.6j, 1.4 + 0.6j]),
    "svd_s": (
        [2 + 4j, -1 + 0.5j, 0.6 - 2j, 4 + 1j],
        [1.4 + 0.6j, 1.4 + 0.6j, 1.4 + 0.6j, 1.4 + 0.6j]),
    "svd_square": (
        [3.1481770116 + 6.9965047319j, -0.3204760892 + 0.7605844431j,
         -1.0415704644 + 2.0838931999j, -7.2996827199 - 0.9916817036j],
        None),
    "svd_deep": (
        [1.7119393462 + 6.0881385517j, -1.4116744364 + 5.1339145062j,
         5.1819121763 - 0.2594174956j, -9.5564427658 - 4.3599703382j,
         1.7427296749 + 9.8576715827j, 8.2907300307 + 0.5184092206j],
        None),
    "svd_wide": (
        [3.921694405 + 9.7045637438j, 2.8099084008 - 1.9060075458j,
         -0.9741205535 + 5.5488038536j, 1.3697387246 + 1.6817277393j,
         -11.8407180361 - 3.3932548882j, 2.8350931084 + 3.7366482402j],
        None),
    "svd_u_projector": (
        [3.1052916274 + 10.3983843755j, -4.4564408769 + 11.9033298929j,
         12.4525336605 - 0.0280136817j, -19.3298273359 - 10.6850470317j,
         7.1605982317 + 21.7140157575j, 20.2156951564 - 4.1284762954j],
        None),
    "svd_v_projector": (
        [2.9091539411 + 10.902937032j, 11.92906201 - 0.5083287883j,
         8.2768953894 + 21.7225906364j, -4.3600445894 + 11.8152890024j,
         -20.067904884 - 10.6292336161j, 20.2303705582 - 5.4129633961j],
        None),
    "spectral_norm": (
        [1.4274418007 + 2.7424810826j, -2.4953008236 + 1.0228453742j,
         0.6542240489 - 3.1540693814j, 2.6880283068 + 0.8180054595j,
         -1.7190225018 - 0.0865639771j, 0.2112886601 - 1.4863976961j],
        None),
}


@pytest.mark.parametrize("name", list(TF))
def test_derivatives_are_tensorflows(name):
    f, z0 = CASES[name]
    g, h = first_and_second(f, z0)
    tf_g, tf_h = TF[name]
    np.testing.assert_allclose(g.ravel(), tf_g, atol=1e-9)
    if tf_h is not None:
        np.testing.assert_allclose(h.ravel(), tf_h, atol=1e-9)


def test_values_are_tensorflows():
    """Forward values TensorFlow 2.21 gives for complex inputs."""
    z, v = mt.constant(Z), mt.constant(V)
    np.testing.assert_allclose(  # 1 / (1 + exp(-z)) as it stands (not the real-only formula)
        mt.sigmoid(v).numpy(), [1.0214153642 + 0.4034387061j, 0.3757248356 + 0.0590029643j,
                                0.7053167354 - 0.1305368409j], atol=1e-9)
    np.testing.assert_allclose(
        mt.nn.silu(v).numpy(), [0.214537952 + 2.4462694344j, -0.2026131589 + 0.0644297267j,
                                0.4859312838 - 0.527619514j], atol=1e-9)
    np.testing.assert_allclose(  # adjoint: the conjugate transpose
        mt.linalg.solve(z, mt.constant(B), adjoint=True).numpy().ravel(),
        [1.0065523222 - 0.0269801503j, 0.8296396223 + 0.7014839083j], atol=1e-9)
    np.testing.assert_allclose(
        mt.linalg.inv(z, adjoint=True).numpy().ravel(),
        [0.2320292927 + 0.4563499711j, 0.2253998844 - 0.1281171709j,
         -0.0327616111 + 0.1349007516j, 0.5396030064 + 0.1310464444j], atol=1e-9)
    np.testing.assert_allclose(
        mt.matmul(z, z, adjoint_b=True).numpy().ravel(),
        [5.3125, -2.575 + 2.35j, -2.575 - 2.35j, 5.34], atol=1e-9)
    np.testing.assert_allclose(
        mt.linalg.matvec(z, V[:2], adjoint_a=True).numpy(), [4.6 - 0.425j, -0.875 - 0.5j],
        atol=1e-9)
    np.testing.assert_allclose(
        mt.sign(v).numpy(), [0.4472135955 + 0.894427191j, -0.894427191 + 0.4472135955j,
                             0.8 - 0.6j], atol=1e-9)
    assert mt.sign(mt.constant([0j])).numpy()[0] == 0  # 0 at 0, not NaN


def test_complex_sign_differentiates():
    """d/dz sum Re(sign z): TensorFlow 2.21's numbers (sign's gradient was zero)."""
    z = mt.constant(np.array([1 + 2j, -0.5 + 0.25j]))
    with mt.GradientTape() as tape:
        tape.watch(z)
        s = mt.reduce_sum(mt.math.real(mt.sign(z)))
    np.testing.assert_allclose(tape.gradient(s, z).numpy(),
                               [0.3577708764 - 0.1788854382j, 0.3577708764 + 0.7155417528j],
                               atol=1e-9)


def test_masked_products_conjugate_too():
    """The masked contraction (UnmovedEinsum, which matmul's rules record when a
    factor is not finite) conjugates the other factors in its gradient, as
    matmul's gradient does: forced here with the check's answer False."""
    a, b = mt.constant(Z), mt.constant(B)
    with mt.GradientTape() as tape:
        tape.watch(a)
        y = unmoved_einsum("select", "ij,jk->ik", 2, (0,), mt.constant(False), [a, b],
                           z=mt.matmul(a, b))
        L = loss(y)
    np.testing.assert_allclose(y.numpy(), Z @ B)
    # dL/dy = 2y + 0.3i, and dL/da = dL/dy @ B^H
    np.testing.assert_allclose(tape.gradient(L, a).numpy(),
                               (2 * (Z @ B) + 0.3j) @ B.conj().T, atol=1e-12)


@pytest.mark.parametrize("name,f,x", [
    ("matmul", lambda a: mt.matmul(a, a, transpose_a=True), np.array([[1., 2.], [3., 4.]])),
    ("einsum", lambda a: mt.einsum("ij,jk->ik", a, a), np.array([[1., 2.], [3., 4.]])),
    ("prod", lambda a: mt.reduce_prod(a, axis=0), np.array([[1., 2.], [3., 4.]])),
    ("sigmoid", lambda a: mt.sigmoid(a), np.array([0.5, -2.0])),
    ("solve", lambda a: mt.linalg.solve(a, a, adjoint=True), np.array([[2., 1.], [1., 3.]])),
    ("inv", lambda a: mt.linalg.inv(a, adjoint=True), np.array([[2., 1.], [1., 3.]])),
    ("abs", lambda a: mt.abs(a), np.array([0.5, -2.0])),
    ("eigh", lambda a: mt.linalg.eigh(a)[1] * mt.linalg.eigh(a)[0],
     np.array([[2., 1.], [1., 3.]])),
    ("svd", lambda a: mt.linalg.svd(a)[1] * mt.linalg.svd(a)[0] + mt.linalg.svd(a)[2][0],
     np.array([[2., 1.], [0.5, 3.], [1., 1.]])),
    ("spectral_norm", lambda a: mt.norm(a, ord=2, axis=[0, 1]), np.array([[2., 1.], [0.5, 3.]])),
])
def test_real_inputs_record_no_conjugate(name, f, x):
    """conj of a real tensor is the tensor itself: real gradients (of any
    order) record the ops they recorded before, with no Conj among them."""
    a = mt.constant(x)
    with mt.GradientTape(persistent=True) as outer:
        outer.watch(a)
        with mt.GradientTape() as inner:
            inner.watch(a)
            y = mt.reduce_sum(f(a))
        g = inner.gradient(y, a)
    outer.gradient(mt.reduce_sum(g), a)
    assert "Conj" not in {op.type for op in outer.operations}


REFUSED = {  # TensorFlow 2.21 refuses each of these for complex128 input
    "maximum": lambda z: mt.maximum(z, z), "minimum": lambda z: mt.minimum(z, z),
    "reduce_max": lambda z: mt.reduce_max(z), "reduce_min": lambda z: mt.reduce_min(z),
    "greater": lambda z: mt.greater(z, z), "greater_equal": lambda z: mt.greater_equal(z, z),
    "less": lambda z: mt.less(z, z), "less_equal": lambda z: mt.less_equal(z, z),
    "round": lambda z: mt.round(z), "floor": lambda z: mt.floor(z),
    "relu": lambda z: mt.nn.relu(z), "elu": lambda z: mt.nn.elu(z),
    "selu": lambda z: mt.nn.selu(z), "softplus": lambda z: mt.nn.softplus(z),
    "softmax": lambda z: mt.nn.softmax(z), "log_softmax": lambda z: mt.nn.log_softmax(z),
    "l2_loss": lambda z: mt.nn.l2_loss(z),
    "softmax_cross_entropy_with_logits":
        lambda z: mt.nn.softmax_cross_entropy_with_logits(labels=z, logits=z),
    "sparse_softmax_cross_entropy_with_logits":
        lambda z: mt.nn.sparse_softmax_cross_entropy_with_logits(labels=[0], logits=z),
    "sigmoid_cross_entropy_with_logits":
        lambda z: mt.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=z),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_ops_that_order_numbers_refuse_complex(name):
    z = mt.constant(np.array([[1 + 2j, -0.5 + 0.25j]]))
    with pytest.raises(TypeError, match=rf"^{name}: .*complex128"):
        REFUSED[name](z)


def test_comparisons_still_take_real_and_equality_complex():
    z = mt.constant(np.array([1 + 2j, -0.5 + 0.25j]))
    assert mt.equal(z, z).numpy().all() and not mt.not_equal(z, z).numpy().any()
    assert mt.greater(mt.constant([2.0]), 1.0).numpy().all()
    assert mt.maximum(mt.constant([2, -3]), 0).numpy().tolist() == [2, 0]
    assert mt.round(mt.constant(2.5)).numpy() == 2.0
    assert mt.round(np.float64(3.5)).numpy() == 4.0


def test_adjoint_conjugates_and_transposes():
    """TensorFlow's linalg.adjoint: the conjugate transpose, differentiable."""
    a = mt.constant(np.array([[1 + 2j, 3 - 1j], [0.5j, 2 + 0j]]))
    np.testing.assert_array_equal(mt.linalg.adjoint(a).numpy(), a.numpy().conj().T)
    with mt.GradientTape() as tape:
        tape.watch(a)
        loss = mt.reduce_sum(mt.math.real(mt.linalg.adjoint(a) * mt.constant([[1j, 2], [3, 4j]])))
    # Re(conj(a_ji) w_ij): d/d(re a_ji) = Re w_ij, d/d(im a_ji) = Im w_ij
    np.testing.assert_allclose(tape.gradient(loss, a).numpy(), [[1j, 3], [2, 4j]])


def test_tensorflows_dtype_names_exist():
    assert (mt.complex64, mt.complex128) == (np.dtype(np.complex64), np.dtype(np.complex128))
    assert (mt.int8, mt.int16, mt.uint8) == (np.dtype(np.int8), np.dtype(np.int16),
                                             np.dtype(np.uint8))
    z = mt.cast(mt.constant([1.0, 2.0]), mt.complex64)
    assert z.dtype == np.complex64 and mt.constant([1, 2], dtype=mt.uint8).dtype == np.uint8
