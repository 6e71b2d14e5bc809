"""Random programs for the differential tests of traced functions, written once
for any module `m` that has TensorFlow's names (`minitape` or `tensorflow`):
`tests/test_function_fuzz.py` runs them eagerly, traced and compiled in
minitape, and `tests/conformance/test_function_programs.py` under
`tf.function` too.

A program is a chain of steps on a float64 value `a` of shape (n, m), from the
inputs x and y, a scalar int32 argument `i` used as an index and a slice
bound, a float64 scalar `c` used as `pad`'s fill and as clip bounds, a shape
argument `sizes` fed to `reshape`, and two variables it reads, assigns and
swaps; steps include `recompute_grad`, `grad_pass_through` and a custom
gradient.
"""
import functools


@functools.lru_cache(maxsize=None)
def steps(m):
    """{name: step(a, env)} for module m (env holds the arguments and variables)."""
    @m.custom_gradient
    def half_square(z):
        def grad(dy):
            return dy * z
        return 0.5 * z * z, grad

    def rows_then_fill(a, i, c):
        """The first i rows of a, the rest filled with c (i a slice bound, c a fill)."""
        n = a.shape[0]
        k = m.minimum(i, n)
        return m.pad(a[:i], [[0, n - k], [0, 0]], constant_values=c)

    def row(a, x, i):
        n = a.shape[0]
        if n == 0:
            return a
        return a * x[m.minimum(i, n - 1)]   # an index computed from an argument

    def assign_then_read(a, w):
        before = w.read_value()
        w.assign_add(m.reduce_sum(m.tanh(a)) * 0.01)
        return a * before + w

    def swap(a, w, u):
        first, second = w.read_value(), u.read_value()
        w.assign(second)
        u.assign(first)
        return a * first + second

    return {
        "sin": lambda a, e: m.sin(a),
        "tanh": lambda a, e: m.tanh(a),
        "sigmoid": lambda a, e: m.nn.sigmoid(a),
        "half_square": lambda a, e: a * a * 0.5,
        "mul_y": lambda a, e: a * e["y"],
        "add_x": lambda a, e: a + e["x"],
        "sub_y": lambda a, e: a - e["y"],
        "div": lambda a, e: a / (1.0 + e["y"] * e["y"]),
        "sqrt": lambda a, e: m.sqrt(a * a + 1.0),
        "exp": lambda a, e: m.exp(m.tanh(a)),
        "log": lambda a, e: m.math.log(a * a + 1.0),
        "abs": lambda a, e: m.abs(a),
        "relu": lambda a, e: m.nn.relu(a),
        "softplus": lambda a, e: m.nn.softplus(a),
        "elu": lambda a, e: m.nn.elu(a),
        "maximum": lambda a, e: m.maximum(a, e["y"]),
        "minimum": lambda a, e: m.minimum(a, e["x"]),
        "where": lambda a, e: m.where(a > 0, a, e["y"] * 0.5),
        "pow": lambda a, e: m.pow(a * a + 1.0, 0.5),
        "sum0": lambda a, e: a + m.reduce_sum(a, axis=0, keepdims=True),
        "mean1": lambda a, e: a - m.reduce_mean(a, axis=1, keepdims=True),
        "max0": lambda a, e: a * m.reduce_max(a, axis=0, keepdims=True),
        "min1": lambda a, e: a + m.reduce_min(a, axis=1, keepdims=True),
        "prod0": lambda a, e: a * m.reduce_prod(m.tanh(a), axis=0, keepdims=True),
        "softmax": lambda a, e: m.nn.softmax(a, axis=-1),
        "transpose": lambda a, e: m.transpose(m.transpose(a) * 2.0),
        "matmul": lambda a, e: m.matmul(m.matmul(a, e["y"], transpose_b=True), a) * 0.1,
        "einsum": lambda a, e: m.einsum("ik,kj->ij", m.einsum("ij,kj->ik", a, e["x"]),
                                        e["y"]) * 0.1,
        "concat": lambda a, e: m.concat([a, e["x"]], axis=1)[:, :a.shape[1]],
        "stack": lambda a, e: m.reduce_sum(m.stack([a, e["y"]]), axis=0),
        "rows_then_fill": lambda a, e: rows_then_fill(a, e["i"], e["c"]),
        "row": lambda a, e: row(a, e["x"], e["i"]),
        "reshape": lambda a, e: m.reshape(m.reshape(a, [-1]), e["sizes"]),
        "clip": lambda a, e: m.clip_by_value(a, -m.abs(e["c"]) - 0.5, m.abs(e["c"]) + 0.5),
        "read": lambda a, e: a * e["w"],
        "assign_add": lambda a, e: assign_then_read(a, e["w"]),
        "swap": lambda a, e: swap(a, e["w"], e["u"]),
        "recompute": lambda a, e: m.recompute_grad(lambda z: m.sin(z) * z * e["w"])(a),
        "pass_through": lambda a, e: m.grad_pass_through(lambda z: m.round(z))(a) + a,
        "custom": lambda a, e: half_square(a),
        "stop": lambda a, e: m.stop_gradient(a) * 0.5 + a,
    }


def make_program(m, names, w, u):
    """The chain of steps `names`, with variables w and u."""
    table = steps(m)

    def program(x, y, i, c, sizes):
        env = {"x": x, "y": y, "i": i, "c": c, "sizes": sizes, "w": w, "u": u}
        a = x
        for name in names:
            a = table[name](a, env)
        return a
    return program


NAMES = ("value", "dx", "dy", "jacobian", "hvp", "jvp")


def with_derivatives(m, program):
    """The program's value and, computed inside (so compiled with it): the
    gradient of its sum, the Jacobian, a Hessian-vector product and a JVP."""
    def f(x, y, i, c, sizes):
        zero = m.UnconnectedGradients.ZERO
        with m.GradientTape() as outer:
            outer.watch(x)
            with m.GradientTape(persistent=True) as tape:
                tape.watch([x, y])
                a = program(x, y, i, c, sizes)
                total = m.reduce_sum(a)
            gx, gy = tape.gradient(total, [x, y], unconnected_gradients=zero)
            jacobian = tape.jacobian(a, x, unconnected_gradients=zero)
        hvp = outer.gradient(gx, x, output_gradients=m.ones_like(x),
                             unconnected_gradients=zero)
        with m.autodiff.ForwardAccumulator(x, m.ones_like(x)) as acc:
            again = program(x, y, i, c, sizes)
        jvp = acc.jvp(again, unconnected_gradients=zero)
        return a, gx, gy, jacobian, hvp, jvp
    return f


def around_the_call(m, function, args):
    """Derivatives taken by tapes around a call (they record the trace's replay)."""
    x = args[0]
    zero = m.UnconnectedGradients.ZERO
    with m.GradientTape() as outer:
        outer.watch(x)
        with m.GradientTape() as tape:
            tape.watch(x)
            total = m.reduce_sum(function(*args)[0])
        g = tape.gradient(total, x, unconnected_gradients=zero)
    second = outer.gradient(g, x, unconnected_gradients=zero)
    with m.autodiff.ForwardAccumulator(x, m.ones_like(x)) as acc:
        out = function(*args)[0]
    return [g, second, acc.jvp(out, unconnected_gradients=zero)]


def arguments(m, x, y, i, c):
    """The five arguments of a program from NumPy x, y (float64) and numbers i, c."""
    return [m.constant(x, m.float64), m.constant(y, m.float64), m.constant(i, m.int32),
            m.constant(c, m.float64), m.constant(list(x.shape), m.int32)]
