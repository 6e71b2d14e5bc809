"""TensorFlow's guides, run under both: "Advanced automatic differentiation"
(/work/shared/guide, the course's notebooks) and "Introduction to gradients and
automatic differentiation" (also tests/test_tf_examples.py), plus API docstrings.

Random inputs and Keras's random initial weights are replaced by fixed arrays, so
both libraries compute the same numbers; the layers are Keras's under TensorFlow
and mt.layers under minitape (the one place a case picks a name per module).
"""
import numpy as np

RNG = np.random.default_rng(7)
X75 = RNG.standard_normal((7, 5)).astype(np.float32)
K = {(5, 10): RNG.standard_normal((5, 10)), (5, 8): RNG.standard_normal((5, 8)),
     (8, 6): RNG.standard_normal((8, 6)), (3, 2): RNG.standard_normal((3, 2))}


def layers(m):
    return m.keras.layers if m.__name__ == "tensorflow" else m.layers


def dense(m, n_in, units, activation):
    """A Dense layer with fixed weights (kernel from K, bias 0.1 * range)."""
    layer = layers(m).Dense(units, activation=activation)
    layer.build((None, n_in))
    layer.kernel.assign(K[(n_in, units)].astype(np.float32))
    layer.bias.assign((0.1 * np.arange(units)).astype(np.float32))
    return layer


# --- Advanced automatic differentiation -------------------------------------------

def case_adv_stop_recording(m):
    x = m.Variable(2.0)
    y = m.Variable(3.0)
    with m.GradientTape() as t:
        x_sq = x * x
        with t.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq
    grad = t.gradient(z, {'x': x, 'y': y})
    return grad['x'], grad['y']


def case_adv_reset(m):
    x = m.Variable(2.0)
    y = m.Variable(3.0)
    reset = True
    with m.GradientTape() as t:
        y_sq = y * y
        if reset:
            t.reset()
        z = x * x + y_sq
    grad = t.gradient(z, {'x': x, 'y': y})
    return grad


def case_adv_stop_gradient(m):
    x = m.Variable(2.0)
    y = m.Variable(3.0)
    with m.GradientTape() as t:
        y_sq = y**2
        z = x**2 + m.stop_gradient(y_sq)
    return t.gradient(z, {'x': x, 'y': y})


def _clip_gradients(m):
    @m.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return m.clip_by_norm(dy, 0.5)
        return y, backward
    return clip_gradients


def case_adv_custom_gradient(m):
    clip_gradients = _clip_gradients(m)
    v = m.Variable(2.0)
    with m.GradientTape() as t:
        output = clip_gradients(v * v)
    return t.gradient(output, v)


def case_adv_custom_gradient_saved_model(m):
    import tempfile
    clip_gradients = _clip_gradients(m)

    class MyModule(m.Module):
        @m.function(input_signature=[m.TensorSpec(None)])
        def call_custom_grad(self, x):
            return clip_gradients(x)

    model = MyModule()
    with tempfile.TemporaryDirectory() as path:
        m.saved_model.save(model, path, options=m.saved_model.SaveOptions(
            experimental_custom_gradients=True))
        v = m.Variable(2.0)
        loaded = m.saved_model.load(path)
        with m.GradientTape() as t:
            output = loaded.call_custom_grad(v * v)
        return output, t.gradient(output, v)


def case_adv_multiple_tapes(m):
    x0 = m.constant(0.0)
    x1 = m.constant(0.0)
    with m.GradientTape() as tape0, m.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        y0 = m.math.sin(x0)
        y1 = m.nn.sigmoid(x1)
        y = y0 + y1
        ys = m.reduce_sum(y)
    return tape0.gradient(ys, x0).numpy(), tape1.gradient(ys, x1).numpy()


def case_adv_higher_order(m):
    x = m.Variable(1.0)
    with m.GradientTape() as t2:
        with m.GradientTape() as t1:
            y = x * x * x
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)
    return dy_dx.numpy(), d2y_dx2.numpy()


def case_adv_input_gradient_regularization(m):
    x = m.constant(X75)
    layer = dense(m, 5, 10, m.nn.relu)
    with m.GradientTape() as t2:
        with m.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            y = layer(x)
            out = m.reduce_sum(layer(x)**2)
        g1 = t1.gradient(out, x)
        g1_mag = m.norm(g1)
    dg1_mag = t2.gradient(g1_mag, list(layer.trainable_variables))
    return [var.shape for var in dg1_mag], dg1_mag, y


case_adv_input_gradient_regularization.ulps = 64


def case_adv_jacobian_scalar_source(m):
    x = m.linspace(-10.0, 10.0, 200+1)
    delta = m.Variable(0.0)
    with m.GradientTape() as tape:
        y = m.nn.sigmoid(x+delta)
    dy_dx = tape.jacobian(y, delta)
    return y.shape, dy_dx.shape, dy_dx


def case_adv_jacobian_tensor_source(m):
    x = m.constant(X75)
    layer = dense(m, 5, 10, m.nn.relu)
    with m.GradientTape(persistent=True) as tape:
        y = layer(x)
    j = tape.jacobian(y, layer.kernel)
    g = tape.gradient(y, layer.kernel)
    j_sum = m.reduce_sum(j, axis=[0, 1])
    delta = m.reduce_max(abs(g - j_sum)).numpy()
    return y.shape, layer.kernel.shape, j.shape, g.shape, bool(delta < 1e-3), j


case_adv_jacobian_tensor_source.ulps = 64


def case_adv_hessian(m):
    x = m.constant(X75)
    layer1 = dense(m, 5, 8, m.nn.relu)
    layer2 = dense(m, 8, 6, m.nn.relu)
    with m.GradientTape() as t2:
        with m.GradientTape() as t1:
            x = layer1(x)
            x = layer2(x)
            loss = m.reduce_mean(x**2)
        g = t1.gradient(loss, layer1.kernel)
    h = t2.jacobian(g, layer1.kernel)
    n_params = int(m.reduce_prod(layer1.kernel.shape))  # case_adv_hessian_n_params: its dtype
    g_vec = m.reshape(g, [n_params, 1])
    h_mat = m.reshape(h, [n_params, n_params])
    eps = 1e-3
    eye_eps = m.eye(h_mat.shape[0])*eps
    update = m.linalg.solve(h_mat + eye_eps, g_vec)
    _ = layer1.kernel.assign_sub(m.reshape(update, layer1.kernel.shape))
    return layer1.kernel.shape, h.shape, n_params, h_mat, update, layer1.kernel


case_adv_hessian.ulps = 2 ** 12  # a solve with a nearly singular matrix (eps 1e-3)


def case_adv_hessian_n_params(m):
    return m.reduce_prod(dense(m, 5, 8, m.nn.relu).kernel.shape)


def case_layer_trainable_variables_type(m):
    layer = dense(m, 3, 2, None)
    return type(layer.trainable_variables).__name__, len(layer.trainable_variables)


case_layer_trainable_variables_type.xfail = ("not in issue 16: a layer's trainable_variables is "
                                             "a tuple (tf.Module's), Keras gives a list")


def case_adv_batch_jacobian(m):
    x = m.constant(X75)
    layer1 = dense(m, 5, 8, m.nn.elu)
    layer2 = dense(m, 8, 6, m.nn.elu)
    with m.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        y = layer2(y)
    j = tape.jacobian(y, x)
    j_sum = m.reduce_sum(j, axis=2)
    j_select = m.einsum('bxby->bxy', j)
    jb = tape.batch_jacobian(y, x)
    error = m.reduce_max(abs(jb - j_sum))
    return y.shape, j.shape, j_sum.shape, j_select.shape, jb.shape, bool(error < 1e-3), jb


case_adv_batch_jacobian.ulps = 64


def case_adv_plot_as_patches(m):
    j = m.reshape(m.range(7 * 6 * 7 * 5, dtype=m.float32), [7, 6, 7, 5])
    j = m.transpose(j, [1, 0, 3, 2])
    lim = m.reduce_max(abs(j))
    j = m.pad(j, [[0, 0], [1, 1], [0, 0], [1, 1]], constant_values=-lim)
    s = j.shape
    j = m.reshape(j, [s[0]*s[1], s[2]*s[3]])
    return j


def case_adv_batch_norm_jacobian(m):
    x = m.constant(X75)
    layer1 = dense(m, 5, 8, m.nn.elu)
    bn = layers(m).BatchNormalization()
    layer2 = dense(m, 8, 6, m.nn.elu)
    with m.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        y = bn(y, training=True)
        y = layer2(y)
    j = tape.jacobian(y, x)
    jb = tape.batch_jacobian(y, x)
    return j.shape, jb.shape, jb, j


case_adv_batch_norm_jacobian.ulps = 2 ** 10  # batch statistics in float32


# --- Introduction to gradients and automatic differentiation -----------------------

def case_intro_scalar(m):
    x = m.Variable(3.0)
    with m.GradientTape() as tape:
        y = x**2
    return tape.gradient(y, x).numpy()


def case_intro_any_tensor(m):
    w = m.Variable(K[(3, 2)].astype(np.float32), name='w')
    b = m.Variable(m.zeros(2, dtype=m.float32), name='b')
    x = [[1., 2., 3.]]
    with m.GradientTape(persistent=True) as tape:
        y = x @ w + b
        loss = m.reduce_mean(y**2)
    [dl_dw, dl_db] = tape.gradient(loss, [w, b])
    grad = tape.gradient(loss, {'w': w, 'b': b})
    return w.shape, dl_dw.shape, dl_dw, dl_db, grad['b']


def case_intro_model_gradients(m):
    layer = dense(m, 3, 2, 'relu')
    x = m.constant([[1., 2., 3.]])
    with m.GradientTape() as tape:
        y = layer(x)
        loss = m.reduce_mean(y**2)
    grad = tape.gradient(loss, list(layer.trainable_variables))
    return [(var.name.split("/")[-1], g.shape) for var, g in
            zip(layer.trainable_variables, grad)], grad


case_intro_model_gradients.xfail = ("not in issue 16: Keras 3 names a layer's variables "
                                    "'kernel' and 'bias', minitape 'dense/kernel:0'")


def case_intro_watch(m):
    x0 = m.Variable(3.0, name='x0')
    x1 = m.Variable(3.0, name='x1', trainable=False)
    x2 = m.Variable(2.0, name='x2') + 1.0
    x3 = m.constant(3.0, name='x3')
    with m.GradientTape() as tape:
        y = (x0**2) + (x1**2) + (x2**2)
    grad = tape.gradient(y, [x0, x1, x2, x3])
    return grad, [var.name for var in tape.watched_variables()]


def case_intro_watch_accessed_variables_false(m):
    x0 = m.Variable(0.0)
    x1 = m.Variable(10.0)
    with m.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x1)
        y0 = m.math.sin(x0)
        y1 = m.nn.softplus(x1)
        y = y0 + y1
        ys = m.reduce_sum(y)
    grad = tape.gradient(ys, {'x0': x0, 'x1': x1})
    return grad


def case_intro_intermediate_and_persistent(m):
    x = m.constant([1, 3.0])
    with m.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    return tape.gradient(z, x), tape.gradient(y, x), tape.gradient(z, y)


def case_intro_non_scalar_targets(m):
    x = m.Variable(2.0)
    with m.GradientTape(persistent=True) as tape:
        y0 = x**2
        y1 = 1 / x
    a = tape.gradient(y0, x), tape.gradient(y1, x), tape.gradient({'y0': y0, 'y1': y1}, x)
    with m.GradientTape() as tape:
        y = x * [3., 4.]
    return a, tape.gradient(y, x)


def case_intro_sigmoid_gradient(m):
    x = m.linspace(-10.0, 10.0, 200+1)
    with m.GradientTape() as tape:
        tape.watch(x)
        y = m.nn.sigmoid(x)
    return tape.gradient(y, x)


def case_intro_control_flow(m):
    x = m.constant(1.0)
    v0 = m.Variable(2.0)
    v1 = m.Variable(2.0)
    with m.GradientTape(persistent=True) as tape:
        tape.watch(x)
        if x > 0.0:
            result = v0
        else:
            result = v1**2
    return tape.gradient(result, [v0, v1]), tape.gradient(result, x)


def case_intro_unconnected(m):
    x = m.Variable(2.)
    y = m.Variable(3.)
    with m.GradientTape() as tape:
        z = y * y
    return tape.gradient(z, x)


def case_intro_replaced_variable(m):
    x = m.Variable(2.0)
    out = []
    for epoch in range(2):
        with m.GradientTape() as tape:
            y = x+1
        out.append(tape.gradient(y, x))
        x = x + 1
    return out


def case_intro_numpy_detour(m):
    x = m.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=m.float32)
    with m.GradientTape() as tape:
        x2 = x**2
        y = np.mean(x2, axis=0)
        y = m.reduce_mean(y, axis=0)
    return tape.gradient(y, x)


def case_intro_integer(m):
    x = m.constant(10)
    with m.GradientTape() as g:
        g.watch(x)
        y = x * x
    return g.gradient(y, x)


def case_intro_stateful(m):
    x0 = m.Variable(3.0)
    x1 = m.Variable(0.0)
    with m.GradientTape() as tape:
        x1.assign_add(x0)
        y = x1**2
    return tape.gradient(y, x0)


def case_intro_zeros_instead_of_none(m):
    x = m.Variable([2., 2.])
    y = m.Variable(3.)
    with m.GradientTape() as tape:
        z = y**2
    return tape.gradient(z, x, unconnected_gradients=m.UnconnectedGradients.ZERO)


# --- API docstrings -------------------------------------------------------------

def case_doc_custom_gradient_two_inputs(m):
    @m.custom_gradient
    def bar(x, y):
        def grad(upstream):
            dz_dx = y
            dz_dy = x
            return upstream * dz_dx, upstream * dz_dy
        z = x * y
        return z, grad

    x = m.constant(2.0, dtype=m.float32)
    y = m.constant(3.0, dtype=m.float32)
    with m.GradientTape(persistent=True) as tape:
        tape.watch(x)
        tape.watch(y)
        z = bar(x, y)
    return z, tape.gradient(z, x), tape.gradient(z, y)


def case_doc_custom_gradient_nested_second_order(m):
    @m.custom_gradient
    def op_with_fused_backprop(x):
        y, x_grad = x ** 2, 2 * x

        def first_order_gradient(dy):
            @m.custom_gradient
            def first_order_custom(unused_x):
                def second_order_and_transpose(ddy):
                    return ddy * 18.0
                return x_grad, second_order_and_transpose
            return dy * first_order_custom(x)
        return y, first_order_gradient

    x = m.constant(3.0)
    with m.GradientTape() as t2:
        t2.watch(x)
        with m.GradientTape() as t1:
            t1.watch(x)
            y = op_with_fused_backprop(x)
        z = t1.gradient(y, x)
    return y, z, t2.gradient(z, x)


def case_doc_forward_accumulator_linear_regression(m):
    v = m.Variable([1., 2.])
    with m.autodiff.ForwardAccumulator(v, m.constant([1., 0.])) as acc:
        y = m.reduce_sum(v ** 3.)
    return acc.jvp(y)


def case_doc_forward_accumulator_hvp(m):
    v = m.Variable([1., 2.])
    with m.autodiff.ForwardAccumulator(v, m.constant([1., 0.])) as acc:
        with m.GradientTape() as tape:
            y = m.reduce_sum(v ** 3.)
        backward = tape.gradient(y, v)
    return backward, acc.jvp(backward)


def case_doc_forward_accumulator_primal_twice(m):
    x = m.constant(1.0)
    m.autodiff.ForwardAccumulator([x, x], [m.constant(1.0), m.constant(2.0)])


case_doc_forward_accumulator_primal_twice.error_only = True


def case_doc_stop_gradient_softmax(m):
    def stable_softmax(x):
        z = x - m.stop_gradient(m.reduce_max(x))
        numerator = m.exp(z)
        denominator = m.reduce_sum(numerator)
        return numerator / denominator

    x = m.constant([1.0, 2.0, 3.0, 90.0])
    with m.GradientTape() as tape:
        tape.watch(x)
        y = stable_softmax(x)
    return y, tape.jacobian(y, x)


def case_doc_jacobian(m):
    with m.GradientTape() as g:
        x = m.constant([1.0, 2.0])
        g.watch(x)
        y = x * x
    return g.jacobian(y, x)


def case_doc_batch_jacobian(m):
    with m.GradientTape() as g:
        x = m.constant([[1., 2.], [3., 4.]], dtype=m.float32)
        g.watch(x)
        y = x * x
    return g.batch_jacobian(y, x)
