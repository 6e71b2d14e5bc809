"""The API summary's "nn and clipping" row (docs/api.md)."""
from .probes import probe

X = [[-2.0, -0.5, 0.0, 0.5, 3.0], [1.0, 2.0, -1.0, 0.25, -4.0]]
PARTS = ("value", "grad", "grad2", "jvp")


def case_sigmoid(m):
    return probe(m, m.nn.sigmoid, X)


def case_relu(m):
    return probe(m, m.nn.relu, X, parts=("value", "grad", "jacobian", "jvp"))


def case_relu_second_derivative(m):
    return probe(m, m.nn.relu, X, parts=("grad2",))


def case_elu(m):
    return probe(m, m.nn.elu, [[-2.0, -0.5, 0.5, 3.0], [1.0, -1.0, 0.25, -4.0]])


def case_elu_at_zero(m):
    return probe(m, m.nn.elu, [0.0])


def case_tanh(m):
    return probe(m, m.nn.tanh, X)


def case_softplus(m):
    return probe(m, m.nn.softplus, [[-30.0, -1.0, 0.0, 2.0, 40.0]])


def case_softmax(m):
    return probe(m, lambda x: [m.nn.softmax(x), m.nn.softmax(x, axis=0)], X, parts=PARTS)


def case_softmax_jacobian(m):
    return probe(m, m.nn.softmax, [[1.0, 2.0, 3.0]])


def case_log_softmax(m):
    return probe(m, m.nn.log_softmax, X)


def case_softmax_large(m):
    return probe(m, m.nn.softmax, [[1000.0, 0.0, -1000.0]], parts=("value", "grad"))


def case_toplevel_activations(m):
    return probe(m, lambda x: [m.sigmoid(x), m.nn.relu(x), m.tanh(x), m.nn.softmax(x)], X,
                 parts=("value", "grad"))


def case_clip_by_value(m):
    return probe(m, lambda x: m.clip_by_value(x, -1.0, 2.0), X)


def case_clip_by_value_tensor_bounds(m):
    return probe(m, lambda x, lo: m.clip_by_value(x, lo, 1.0), X, [[-1.0], [0.0]])


def case_clip_by_value_at_bounds(m):
    return probe(m, lambda x: m.clip_by_value(x, -0.5, 0.5), [-0.5, 0.5, 0.0, 1.0],
                 parts=("value", "grad"))


def case_clip_by_norm(m):
    return probe(m, lambda x: m.clip_by_norm(x, 2.0), [3.0, -4.0])


def case_clip_by_norm_inactive(m):
    return probe(m, lambda x: m.clip_by_norm(x, 10.0), [3.0, -4.0])


def case_clip_by_norm_axes(m):
    return probe(m, lambda x: m.clip_by_norm(x, 1.5, axes=[1]), X, parts=PARTS)


def case_clip_by_norm_zero(m):
    return probe(m, lambda x: m.clip_by_norm(x, 1.0), [0.0, 0.0], parts=("value", "grad"))
