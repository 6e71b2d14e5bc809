"""Values, dtypes, shapes and the tape's basic contract (docs/api.md: "values", "the tape")."""


def case_constant_dtypes(m):
    return [m.constant(1.0), m.constant(1), m.constant([1.5, 2.0]), m.constant(True),
            m.constant([[1, 2], [3, 4]], dtype=m.float64)]


def case_constant_shape_and_dtype(m):
    x = m.constant([[1.0, 2.0, 3.0]])
    return x.shape, x.dtype, x.numpy()


def case_gradient_square(m):
    x = m.constant(3.0)
    with m.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    return tape.gradient(y, x)


def case_second_derivative_sin(m):
    x = m.constant([0.5, 1.0, 2.0], dtype=m.float64)
    with m.GradientTape() as outer:
        outer.watch(x)
        with m.GradientTape() as inner:
            inner.watch(x)
            y = m.sin(x) * x
        dy = inner.gradient(y, x)
    return dy, outer.gradient(dy, x)


def case_unconnected_is_none(m):
    x = m.constant(1.0)
    z = m.constant(2.0)
    with m.GradientTape() as tape:
        tape.watch([x, z])
        y = x * 2.0
    return tape.gradient(y, [x, z])


def case_add_mismatched_dtypes(m):
    return m.add(m.constant(1.0), m.constant(1.0, dtype=m.float64))


case_add_mismatched_dtypes.error_only = True
