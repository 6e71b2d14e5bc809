"""The API summary's "creation" row (docs/api.md): zeros, ones, *_like, eye, linspace, range, fill."""
from .probes import probe


def case_zeros_ones(m):
    return [m.zeros([2, 3]), m.ones([2]), m.zeros((2, 0)), m.ones([2, 2], dtype=m.float64),
            m.zeros([3], dtype=m.int32), m.ones(3), m.zeros([])]


def case_zeros_like_ones_like(m):
    x = m.constant([[1, 2]])
    y = m.constant([1.0], dtype=m.float64)
    return [m.zeros_like(x), m.ones_like(x), m.zeros_like(y), m.ones_like(y, dtype=m.float32)]


def case_like_gradients(m):
    return probe(m, lambda x: [m.zeros_like(x) + x, m.ones_like(x) * x], [1.0, 2.0])


def case_eye(m):
    return [m.eye(3), m.eye(2, 3), m.eye(2, dtype=m.float64), m.eye(2, batch_shape=[2])]


def case_linspace(m):
    return [m.linspace(0.0, 1.0, 5), m.linspace(-1.0, 1.0, 1),
            m.linspace(m.constant(0.0, dtype=m.float64), 2.0, 3)]


def case_linspace_endpoint_gradients(m):
    return probe(m, lambda a, b: m.linspace(a, b, 4), 0.5, 2.0)


def case_range(m):
    return [m.range(5), m.range(1, 7, 2), m.range(5.0), m.range(0.0, 1.0, 0.25),
            m.range(3, dtype=m.float64), m.range(10, 0, -3)]


def case_fill(m):
    return [m.fill([2, 2], 3.0), m.fill([3], 7)]


def case_zeros_negative_shape(m):
    return m.zeros([-1, 2])


case_zeros_negative_shape.error_only = True
