"""The TensorFlow guide "Advanced automatic differentiation", cell by cell.

Every code cell outside the SavedModel section is translated by writing `mt.`
for `tf.` and `mt.layers.` for `tf.keras.layers.`, and run in the guide's order
(one test per section, each seeded). Each test asserts what TensorFlow printed
(/work/shared/guide/002_3d4f2cf5640ca82a.txt): the printed text where it is
deterministic, values and shapes otherwise. The plotting cells run on
matplotlib's Agg backend and the test checks the data that reached the figure.
"""
import numpy as np
import pytest

import minitape as mt

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# The Hessian section's Newton step must lower the loss (asserted in
# test_hessian_and_newton_step). With relu layers the loss is only piecewise
# quadratic in the kernel, so a full Newton step could overshoot for an unlucky
# draw; it lowers the loss for seed 1 (and for every seed 0-14 we tried).
NEWTON_SEED = 1


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# ---------------------------------------------------------------------------
# Printing (SPEC section 1: `str` and `repr` read as TensorFlow prints them)
# ---------------------------------------------------------------------------

def test_str_and_repr_of_a_scalar_tensor():
    t = mt.constant(4.0)
    assert str(t) == "mt.Tensor(4.0, shape=(), dtype=float32)"
    assert repr(t) == "<mt.Tensor: shape=(), dtype=float32, numpy=4.0>"


def test_str_and_repr_of_a_vector_and_a_matrix():
    v = mt.constant([1.0, 2.5])
    assert str(v) == "mt.Tensor([1.  2.5], shape=(2,), dtype=float32)"
    assert repr(v) == ("<mt.Tensor: shape=(2,), dtype=float32, "
                       "numpy=array([1. , 2.5], dtype=float32)>")
    m = mt.constant([[1.0, 2.0], [3.0, 4.0]])
    # TensorFlow puts a multi-line value on its own lines.
    assert str(m) == "mt.Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)"


def test_repr_of_a_matrix_starts_the_numpy_text_on_a_new_line():
    m = mt.constant([[1.0, 2.0], [3.0, 4.0]])
    assert repr(m) == ("<mt.Tensor: shape=(2, 2), dtype=float32, numpy=\n"
                       "array([[1., 2.],\n       [3., 4.]], dtype=float32)>")
    v = mt.Variable([[1.0, 2.0], [3.0, 4.0]], name="m")
    assert repr(v) == ("<mt.Variable 'm:0' shape=(2, 2) dtype=float32, numpy=\n"
                       "array([[1., 2.],\n       [3., 4.]], dtype=float32)>")


def test_str_and_repr_of_a_variable():
    v = mt.Variable(2.0, name="v")
    # TensorFlow prints a variable the same way for str and repr.
    assert repr(v) == "<mt.Variable 'v:0' shape=() dtype=float32, numpy=2.0>"
    assert str(v) == repr(v)
    w = mt.Variable([1.0, 2.0], name="w")
    assert repr(w) == ("<mt.Variable 'w:0' shape=(2,) dtype=float32, "
                       "numpy=array([1., 2.], dtype=float32)>")


def test_printing_a_float64_and_an_int_tensor():
    assert str(mt.constant(np.float64(0.5))) == "mt.Tensor(0.5, shape=(), dtype=float64)"
    assert str(mt.constant([1, 2])) == "mt.Tensor([1 2], shape=(2,), dtype=int32)"


# ---------------------------------------------------------------------------
# Controlling gradient recording
# ---------------------------------------------------------------------------

DZ_TEXT = "dz/dx: mt.Tensor(4.0, shape=(), dtype=float32)\ndz/dy: None\n"


def test_stop_recording(capsys):
    x = mt.Variable(2.0)
    y = mt.Variable(3.0)

    with mt.GradientTape() as t:
        x_sq = x * x
        with t.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq

    grad = t.gradient(z, {'x': x, 'y': y})

    print('dz/dx:', grad['x'])  # 2*x => 4
    print('dz/dy:', grad['y'])
    assert capsys.readouterr().out == DZ_TEXT


def test_reset(capsys):
    x = mt.Variable(2.0)
    y = mt.Variable(3.0)
    reset = True

    with mt.GradientTape() as t:
        y_sq = y * y
        if reset:
            # Throw out all the tape recorded so far.
            t.reset()
        z = x * x + y_sq

    grad = t.gradient(z, {'x': x, 'y': y})

    print('dz/dx:', grad['x'])  # 2*x => 4
    print('dz/dy:', grad['y'])
    assert capsys.readouterr().out == DZ_TEXT


def test_stop_gradient(capsys):
    x = mt.Variable(2.0)
    y = mt.Variable(3.0)

    with mt.GradientTape() as t:
        y_sq = y**2
        z = x**2 + mt.stop_gradient(y_sq)

    grad = t.gradient(z, {'x': x, 'y': y})

    print('dz/dx:', grad['x'])  # 2*x => 4
    print('dz/dy:', grad['y'])
    assert capsys.readouterr().out == DZ_TEXT


# ---------------------------------------------------------------------------
# Custom gradients
# ---------------------------------------------------------------------------

# Establish an identity operation, but clip during the gradient pass.
@mt.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return mt.clip_by_norm(dy, 0.5)
    return y, backward


def test_custom_gradient_clips(capsys):
    v = mt.Variable(2.0)
    with mt.GradientTape() as t:
        output = clip_gradients(v * v)
    print(t.gradient(output, v))  # calls "backward", which clips 4 to 2
    assert capsys.readouterr().out == "mt.Tensor(2.0, shape=(), dtype=float32)\n"
    assert output.numpy() == 4.0  # the forward pass is the identity


# ---------------------------------------------------------------------------
# Multiple tapes
# ---------------------------------------------------------------------------

def test_multiple_tapes():
    x0 = mt.constant(0.0)
    x1 = mt.constant(0.0)

    with mt.GradientTape() as tape0, mt.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)

        y0 = mt.math.sin(x0)
        y1 = mt.nn.sigmoid(x1)

        y = y0 + y1

        ys = mt.reduce_sum(y)
    assert tape0.gradient(ys, x0).numpy() == 1.0   # cos(x) => 1.0
    assert tape1.gradient(ys, x1).numpy() == 0.25  # sigmoid(x1)*(1-sigmoid(x1)) => 0.25


# ---------------------------------------------------------------------------
# Higher-order gradients
# ---------------------------------------------------------------------------

def test_second_derivative(capsys):
    x = mt.Variable(1.0)  # Create a minitape variable initialized to 1.0

    with mt.GradientTape() as t2:
        with mt.GradientTape() as t1:
            y = x * x * x

        # Compute the gradient inside the outer `t2` context manager
        # which means the gradient computation is differentiable as well.
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)

    print('dy_dx:', dy_dx.numpy())  # 3 * x**2 => 3.0
    print('d2y_dx2:', d2y_dx2.numpy())  # 6 * x => 6.0
    assert capsys.readouterr().out == "dy_dx: 3.0\nd2y_dx2: 6.0\n"


def test_input_gradient_regularization():
    mt.random.set_seed(0)
    x = mt.random.normal([7, 5])

    layer = mt.layers.Dense(10, activation=mt.nn.relu)
    with mt.GradientTape() as t2:
        # The inner tape only takes the gradient with respect to the input,
        # not the variables.
        with mt.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            y = layer(x)  # noqa: F841  (the guide's cell, as written)
            out = mt.reduce_sum(layer(x)**2)
        # 1. Calculate the input gradient.
        g1 = t1.gradient(out, x)
        # 2. Calculate the magnitude of the input gradient.
        g1_mag = mt.norm(g1)

    # 3. Calculate the gradient of the magnitude with respect to the model.
    dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)
    assert [var.shape for var in dg1_mag] == [(5, 10), (10,)]

    # Beyond the guide: the result is a real second-order gradient. Check the
    # kernel's entry against central finite differences of g1_mag in float64.
    assert t1.watched_variables() == ()
    kernel = layer.kernel.numpy().astype(np.float64)
    xs = x.numpy().astype(np.float64)

    def mag(k):
        pre = xs @ k  # bias is zero
        mask = pre > 0
        # out = sum(relu(x k)**2) => d out/dx = 2 (relu(xk) * mask) k^T
        g = (2 * np.where(mask, pre, 0.0)) @ k.T
        return np.linalg.norm(g)

    eps = 1e-6
    e = np.zeros_like(kernel)
    e[1, 2] = eps
    numeric = (mag(kernel + e) - mag(kernel - e)) / (2 * eps)
    np.testing.assert_allclose(dg1_mag[0].numpy()[1, 2], numeric, rtol=1e-3, atol=1e-4)


# ---------------------------------------------------------------------------
# Jacobians
# ---------------------------------------------------------------------------

def test_jacobian_scalar_source(capsys):
    x = mt.linspace(-10.0, 10.0, 200+1)
    delta = mt.Variable(0.0)

    with mt.GradientTape() as tape:
        y = mt.nn.sigmoid(x+delta)

    dy_dx = tape.jacobian(y, delta)

    print(y.shape)
    print(dy_dx.shape)
    assert capsys.readouterr().out == "(201,)\n(201,)\n"

    plt.plot(x.numpy(), y, label='y')
    plt.plot(x.numpy(), dy_dx, label='dy/dx')
    plt.legend()
    _ = plt.xlabel('x')

    lines = plt.gca().get_lines()
    assert [line.get_label() for line in lines] == ['y', 'dy/dx']
    s = 1 / (1 + np.exp(-x.numpy().astype(np.float64)))
    np.testing.assert_allclose(lines[0].get_ydata(), s, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lines[1].get_ydata(), s * (1 - s), rtol=1e-4, atol=1e-6)


def test_jacobian_tensor_source(capsys):
    mt.random.set_seed(0)
    x = mt.random.normal([7, 5])
    layer = mt.layers.Dense(10, activation=mt.nn.relu)

    with mt.GradientTape(persistent=True) as tape:
        y = layer(x)

    assert y.shape == (7, 10)
    assert layer.kernel.shape == (5, 10)

    j = tape.jacobian(y, layer.kernel)
    assert j.shape == (7, 10, 5, 10)

    g = tape.gradient(y, layer.kernel)
    print('g.shape:', g.shape)

    j_sum = mt.reduce_sum(j, axis=[0, 1])
    delta = mt.reduce_max(abs(g - j_sum)).numpy()
    assert delta < 1e-3
    print('delta:', delta)
    out = capsys.readouterr().out
    assert out.startswith("g.shape: (5, 10)\ndelta: ")
    assert float(out.split("delta: ")[1]) == delta

    # Beyond the guide: the Jacobian of relu(x @ k) w.r.t. k is
    # j[b, o, i, o'] = x[b, i] * (o == o') * (y[b, o] > 0).
    expected = np.einsum('bi,op,bo->boip', x.numpy(), np.eye(10),
                         (y.numpy() > 0).astype(np.float32))
    np.testing.assert_allclose(j.numpy(), expected, rtol=1e-6, atol=1e-7)


def imshow_zero_center(image, **kwargs):
    lim = mt.reduce_max(abs(image))
    plt.imshow(image, vmin=-lim, vmax=lim, cmap='seismic', **kwargs)
    plt.colorbar()


def plot_as_patches(j):
    # Reorder axes so the diagonals will each form a contiguous patch.
    j = mt.transpose(j, [1, 0, 3, 2])
    # Pad in between each patch.
    lim = mt.reduce_max(abs(j))
    j = mt.pad(j, [[0, 0], [1, 1], [0, 0], [1, 1]],
               constant_values=-lim)
    # Reshape to form a single image.
    s = j.shape
    j = mt.reshape(j, [s[0]*s[1], s[2]*s[3]])
    imshow_zero_center(j, extent=[-0.5, s[2]-0.5, s[0]-0.5, -0.5])


def _shown_image():
    return np.asarray(plt.gca().get_images()[-1].get_array())


def test_hessian_and_newton_step(capsys):
    mt.random.set_seed(NEWTON_SEED)
    x = mt.random.normal([7, 5])
    x_input = x  # kept to recompute the loss after the Newton step
    layer1 = mt.layers.Dense(8, activation=mt.nn.relu)
    layer2 = mt.layers.Dense(6, activation=mt.nn.relu)

    with mt.GradientTape() as t2:
        with mt.GradientTape() as t1:
            x = layer1(x)
            x = layer2(x)
            loss = mt.reduce_mean(x**2)

        g = t1.gradient(loss, layer1.kernel)

    h = t2.jacobian(g, layer1.kernel)
    print(f'layer.kernel.shape: {layer1.kernel.shape}')
    print(f'h.shape: {h.shape}')
    assert capsys.readouterr().out == "layer.kernel.shape: (5, 8)\nh.shape: (5, 8, 5, 8)\n"

    n_params = mt.reduce_prod(layer1.kernel.shape)

    g_vec = mt.reshape(g, [n_params, 1])
    h_mat = mt.reshape(h, [n_params, n_params])
    assert int(n_params) == 40
    assert g_vec.shape == (40, 1) and h_mat.shape == (40, 40)

    # The Hessian matrix should be symmetric:
    imshow_zero_center(h_mat)
    np.testing.assert_allclose(h_mat.numpy(), h_mat.numpy().T, atol=1e-5)
    assert np.abs(h_mat.numpy()).max() > 0  # not trivially symmetric
    np.testing.assert_array_equal(_shown_image(), h_mat.numpy())
    lim = float(np.abs(h_mat.numpy()).max())
    assert plt.gca().get_images()[-1].get_clim() == pytest.approx((-lim, lim))

    eps = 1e-3
    eye_eps = mt.eye(h_mat.shape[0])*eps
    # X(k+1) = X(k) - (∇²f(X(k)))^-1 @ ∇f(X(k))
    # h_mat = ∇²f(X(k))
    # g_vec = ∇f(X(k))
    update = mt.linalg.solve(h_mat + eye_eps, g_vec)

    # Reshape the update and apply it to the variable.
    kernel_before = layer1.kernel.numpy()
    _ = layer1.kernel.assign_sub(mt.reshape(update, layer1.kernel.shape))

    # Beyond the guide: the step did what Newton's method promises.
    np.testing.assert_allclose(
        (h_mat.numpy() + eps * np.eye(40)) @ update.numpy(), g_vec.numpy(), atol=1e-4)
    np.testing.assert_allclose(layer1.kernel.numpy(),
                               kernel_before - update.numpy().reshape(5, 8), atol=1e-6)
    new_loss = mt.reduce_mean(layer2(layer1(x_input))**2)
    assert float(new_loss) < float(loss)


def test_batch_jacobian(capsys):
    mt.random.set_seed(0)
    x = mt.random.normal([7, 5])

    layer1 = mt.layers.Dense(8, activation=mt.nn.elu)
    layer2 = mt.layers.Dense(6, activation=mt.nn.elu)

    with mt.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        y = layer2(y)

    assert y.shape == (7, 6)

    j = tape.jacobian(y, x)
    assert j.shape == (7, 6, 7, 5)

    # If the gradients of each item in the stack are independent, then every
    # (batch, batch) slice of this tensor is a diagonal matrix:
    imshow_zero_center(j[:, 0, :, 0])
    _ = plt.title('A (batch, batch) slice')
    shown = _shown_image()
    np.testing.assert_array_equal(shown, j.numpy()[:, 0, :, 0])
    assert np.all(np.diag(shown) != 0)
    jn = j.numpy()
    for b in range(7):
        for c in range(7):
            if b != c:
                assert np.all(jn[b, :, c, :] == 0), (b, c)  # exactly zero
    assert np.all(np.abs(np.einsum('bxby->bxy', jn)).sum(axis=(1, 2)) > 0)

    plot_as_patches(j)
    _ = plt.title('All (batch, batch) slices are diagonal')
    patches = _shown_image()
    # (x, b, y, c) padded to (6, 9, 5, 9): patch (x, y) is j[:, x, :, y].
    assert patches.shape == (6 * 9, 5 * 9)
    lim = np.abs(jn).max()
    assert patches[0, 0] == pytest.approx(-lim)  # the padding
    np.testing.assert_array_equal(patches[1:8, 1:8], jn[:, 0, :, 0])
    np.testing.assert_array_equal(patches[9 + 1:9 + 8, 2 * 9 + 1:2 * 9 + 8], jn[:, 1, :, 2])

    j_sum = mt.reduce_sum(j, axis=2)
    print(j_sum.shape)
    j_select = mt.einsum('bxby->bxy', j)
    print(j_select.shape)
    assert capsys.readouterr().out == "(7, 6, 5)\n(7, 6, 5)\n"
    np.testing.assert_array_equal(j_sum.numpy(), j_select.numpy())

    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (7, 6, 5)

    error = mt.reduce_max(abs(jb - j_sum))
    assert error < 1e-3
    print(error.numpy())
    assert float(capsys.readouterr().out) < 1e-6


def test_batch_jacobian_with_batch_normalization(capsys):
    mt.random.set_seed(0)
    x = mt.random.normal([7, 5])

    layer1 = mt.layers.Dense(8, activation=mt.nn.elu)
    bn = mt.layers.BatchNormalization()
    layer2 = mt.layers.Dense(6, activation=mt.nn.elu)

    with mt.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        y = bn(y, training=True)
        y = layer2(y)

    j = tape.jacobian(y, x)
    print(f'j.shape: {j.shape}')
    assert capsys.readouterr().out == "j.shape: (7, 6, 7, 5)\n"

    plot_as_patches(j)

    _ = plt.title('These slices are not diagonal')
    _ = plt.xlabel("Don't use `batch_jacobian`")
    assert plt.gca().get_title() == 'These slices are not diagonal'

    # The examples interact through the batch statistics, so the
    # off-diagonal blocks are not zero.
    jn = j.numpy()
    for b in range(7):
        for c in range(7):
            if b != c:
                assert np.abs(jn[b, :, c, :]).max() > 1e-6, (b, c)

    jb = tape.batch_jacobian(y, x)
    print(f'jb.shape: {jb.shape}')
    assert capsys.readouterr().out == "jb.shape: (7, 6, 5)\n"
    assert jb.shape == (7, 6, 5)
    # What batch_jacobian returns here: jb[b, k, i] = d(sum over b' of
    # y[b', k]) / dx[b, i], the full Jacobian summed over the target's batch
    # axis, not the per-example diagonal.
    np.testing.assert_allclose(jb.numpy(), jn.sum(axis=0).transpose(1, 0, 2),
                               rtol=1e-4, atol=1e-5)
    assert np.abs(jb.numpy() - np.einsum('bxby->bxy', jn)).max() > 1e-4
