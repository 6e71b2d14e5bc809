"""A list holding tensors where an op takes a tensor: TensorFlow packs it, so
the tensors keep their gradients, or refuses it (batch_normalization's
statistics). Each case agrees with TensorFlow 2.21."""


def _gradients(m, fn):
    x0, x1 = m.constant(2.0), m.constant(3.0)
    with m.GradientTape() as tape:
        tape.watch([x0, x1])
        y = fn(x0, x1)
    return y, tape.gradient(y, [x0, x1])


def case_add_n_of_nested_lists(m):
    return _gradients(m, lambda a, b: m.add_n([[a, b], [1.0, 2.0]]))


def case_clip_by_value_list_bounds(m):
    return _gradients(m, lambda a, b: m.clip_by_value(m.constant([1.0, 4.0]), [a, b], [5.0, b]))


def case_clip_by_norm_list(m):
    return _gradients(m, lambda a, b: m.clip_by_norm([a, b], 1.0))


def case_batch_normalization_list_statistics(m):
    return _gradients(m, lambda a, b: m.nn.batch_normalization(
        m.constant([1.0, 2.0]), [a, a], 1.0, None, None, 1e-3))


case_batch_normalization_list_statistics.error_only = True
