"""Bad input: a clear error that names the op and the shapes or dtypes involved,
and nothing corrupted afterwards (SPEC section 5).

Each test checks the error type, the message, and that the tapes and variables
around the failed call are as they were: the number of recorded ops, the
variables' values, and that the tape still gives the right gradient.
"""
import re

import numpy as np
import pytest

import minitape as mt


class Scene:
    """A recording tape with some history: a variable `v` (2, 3) and a watched
    constant `x` (2, 3), and `y = reduce_sum(v * x)` already recorded."""

    def __init__(self, persistent=False):
        self.v = mt.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="v")
        self.x = mt.constant(np.full((2, 3), 2.0, np.float32))
        self.tape = mt.GradientTape(persistent=persistent)

    def __enter__(self):
        self.tape.__enter__()
        self.tape.watch(self.x)
        self.y = mt.reduce_sum(self.v * self.x)
        self.n_ops = len(self.tape.operations)
        self.v_before = self.v.numpy().copy()
        assert self.n_ops == 2
        return self

    def __exit__(self, *exc):
        return self.tape.__exit__(*exc)

    def assert_unchanged(self):
        assert len(self.tape.operations) == self.n_ops
        np.testing.assert_array_equal(self.v.numpy(), self.v_before)

    def assert_gradient_still_right(self):
        gv, gx = self.tape.gradient(self.y, [self.v, self.x])
        np.testing.assert_array_equal(gv.numpy(), np.full((2, 3), 2.0))
        np.testing.assert_array_equal(gx.numpy(), self.v_before)


def _raises(kind, *fragments):
    """pytest.raises(kind) whose message must contain every fragment."""
    return pytest.raises(kind, match="(?s)" + ".*".join(re.escape(f) for f in fragments))


# ---------------------------------------------------------------------------
# shapes
# ---------------------------------------------------------------------------

def test_matmul_shape_mismatch():
    with Scene() as s:
        with _raises(ValueError, "matmul", "(2, 3)", "(2, 3)"):
            mt.matmul(s.v, s.x)
        s.assert_unchanged()
    s.assert_gradient_still_right()


def test_matmul_operator_shape_mismatch_names_both_shapes():
    with Scene() as s:
        with _raises(ValueError, "matmul", "(2, 3)", "(4, 2)"):
            _ = s.v @ mt.ones([4, 2])
        s.assert_unchanged()
    s.assert_gradient_still_right()


def test_add_shape_mismatch():
    with Scene() as s:
        with _raises(ValueError, "add", "(2, 3)", "(3, 2)"):
            _ = s.v + mt.ones([3, 2])
        with _raises(ValueError, "add", "(2, 3)", "(4,)"):
            mt.add(s.x, mt.ones([4]))
        s.assert_unchanged()
    s.assert_gradient_still_right()


def test_reshape_shape_mismatch():
    with Scene() as s:
        with _raises(ValueError, "reshape", "(2, 3)", "[4, 2]"):
            mt.reshape(s.x, [4, 2])
        s.assert_unchanged()
    s.assert_gradient_still_right()


# ---------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------

def test_integer_source_to_gradient():
    """TensorFlow warns and answers None for an integer source (no error)."""
    n = mt.constant([1, 2, 3])
    with Scene(persistent=True) as s:
        pass
    with pytest.warns(UserWarning, match="gradient.*source 2.*int32"):
        assert s.tape.gradient(s.y, [s.v, s.x, n])[2] is None
    s.assert_unchanged()
    s.assert_gradient_still_right()


def test_integer_target_to_gradient():
    """TensorFlow warns and answers None for an integer target (no error)."""
    with Scene(persistent=True) as s:
        n = mt.constant(3)
    with pytest.warns(UserWarning, match="gradient.*target 0.*int32"):
        assert s.tape.gradient(n, s.x) is None
    s.assert_unchanged()
    s.assert_gradient_still_right()


def test_string_tensor_into_sin():
    text = mt.constant("abc")
    with Scene() as s:
        with _raises(TypeError, "sin", str(text.dtype)):
            mt.sin(text)
        s.assert_unchanged()
    s.assert_gradient_still_right()


def test_string_tensor_plus_a_float_tensor():
    text = mt.constant("abc")
    with Scene() as s:
        with _raises(TypeError, "add", "float32", str(text.dtype)):
            _ = s.y + text   # s.y is tracked by the tape
        s.assert_unchanged()
    s.assert_gradient_still_right()


def test_two_string_tensors_added():
    text = mt.constant("abc")
    with Scene() as s:
        with _raises(TypeError, "add", str(text.dtype)):
            _ = text + text
        with _raises(TypeError, "multiply", str(text.dtype)):
            mt.multiply(text, text)
        s.assert_unchanged()
    s.assert_gradient_still_right()


def test_constant_string_then_arithmetic():
    text = mt.constant("abc")
    assert text.shape == ()
    with _raises(TypeError, "add", str(text.dtype)):
        _ = text + 1
    with _raises(TypeError, "multiply", str(text.dtype)):
        _ = text * 2.0
    with _raises(TypeError, "subtract", str(text.dtype)):
        _ = 1.0 - text


def test_float32_plus_float64():
    with Scene() as s:
        d = mt.constant(np.ones((2, 3)))  # float64
        with _raises(TypeError, "add", "float32", "float64"):
            _ = s.x + d
        with _raises(TypeError, "multiply", "float32", "float64"):
            _ = s.v * d
        with _raises(TypeError, "matmul", "float32", "float64"):
            mt.matmul(s.x, mt.transpose(d))
        s.assert_unchanged()
    s.assert_gradient_still_right()


# ---------------------------------------------------------------------------
# the tape's methods
# ---------------------------------------------------------------------------

def test_jacobian_with_a_list_target():
    with Scene() as s:
        pass
    with _raises(TypeError, "jacobian", "list"):
        s.tape.jacobian([s.y, s.y], s.x)
    s.assert_unchanged()
    s.assert_gradient_still_right()


def test_batch_jacobian_with_different_first_dims():
    x = mt.ones([4, 3])
    with mt.GradientTape() as t:
        t.watch(x)
        y = x[:2] * 2.0      # (2, 3)
    n = len(t.operations)
    with _raises(ValueError, "batch_jacobian", "(2, 3)", "(4, 3)"):
        t.batch_jacobian(y, x)
    assert len(t.operations) == n
    # Still usable: the batch of 2 rows has a Jacobian with respect to x.
    j = t.jacobian(y, x)
    assert j.shape == (2, 3, 4, 3)
    assert float(mt.reduce_sum(j)) == 12.0


def test_gradient_on_a_tape_that_was_never_entered():
    x = mt.constant(1.0)
    t = mt.GradientTape()
    for call in (lambda: t.gradient(x, x), lambda: t.jacobian(x, x),
                 lambda: t.batch_jacobian(mt.ones([2]), mt.ones([2]))):
        with _raises(RuntimeError, "never entered"):
            call()
    assert t.operations == ()


def test_output_gradients_of_the_wrong_shape():
    with Scene() as s:
        pass
    with _raises(ValueError, "output_gradients", "(3,)", "()"):
        s.tape.gradient(s.y, s.x, output_gradients=mt.ones([3]))
    s.assert_unchanged()
    s.assert_gradient_still_right()


# ---------------------------------------------------------------------------
# user gradient functions that are wrong
# ---------------------------------------------------------------------------

def test_custom_gradient_returning_the_wrong_number_of_gradients():
    state = {"broken": True}

    @mt.custom_gradient
    def product(a, b):
        def grad_fn(dy):
            ga = dy * b * w_read   # recorded by the outer tape, which watches w
            if state["broken"]:
                return ga          # one gradient for two inputs
            return ga, dy * a * w_read
        return a * b, grad_fn

    w = mt.Variable(1.0, name="w")
    a, b = mt.constant(2.0), mt.constant(5.0)
    with mt.GradientTape() as outer:
        w_read = w * 1.0
        with mt.GradientTape() as inner:
            inner.watch([a, b])
            y = product(a, b)
        n_outer, n_inner = len(outer.operations), len(inner.operations)
        assert [op.type for op in inner.operations] == ["Mul", "IdentityN"]
        with _raises(ValueError, "'product'", "IdentityN", "returned 1 gradient",
                     "2 input"):
            inner.gradient(y, [a, b])
        # Nothing the failed walk recorded stays on the outer tape.
        assert len(outer.operations) == n_outer
        assert len(inner.operations) == n_inner
        assert float(w) == 1.0
        # The failed call did not count as the inner tape's one use.
        state["broken"] = False
        ga, gb = inner.gradient(y, [a, b])
        assert (float(ga), float(gb)) == (5.0, 2.0)
        assert len(outer.operations) > n_outer  # the good walk was recorded
    # ... so the outer tape differentiates it: d(ga)/dw = b = 5.
    assert float(outer.gradient(ga, w)) == 5.0


def test_registered_gradient_returning_the_wrong_shape():
    @mt.primitive("TestErrorsBadShape")
    def double(x):
        return 2.0 * x

    @mt.RegisterGradient("TestErrorsBadShape")
    def _grad(op, grad):
        return mt.reduce_sum(grad) * 2.0  # a scalar, not the input's shape

    try:
        with Scene() as s:
            z = double(s.x)
            n = len(s.tape.operations)
        with _raises(ValueError, "TestErrorsBadShape", "shape ()", "(2, 3)"):
            s.tape.gradient(z, s.x)
        assert len(s.tape.operations) == n
        np.testing.assert_array_equal(s.v.numpy(), s.v_before)
        s.n_ops = n
        s.assert_gradient_still_right()
    finally:
        mt.registry.unregister("TestErrorsBadShape")


def test_missing_gradient_leaves_the_tape_usable():
    @mt.primitive("TestErrorsNoGrad")
    def plus_one(x):
        return x + 1.0

    with Scene() as s:
        z = plus_one(s.x)
    with pytest.raises(LookupError) as info:
        s.tape.gradient(z, s.x)
    assert str(info.value) == ("No gradient defined for operation 'TestErrorsNoGrad' "
                               "(op type: TestErrorsNoGrad)")
    assert len(s.tape.operations) == s.n_ops + 1
    s.n_ops += 1
    s.assert_gradient_still_right()


# ---------------------------------------------------------------------------
# variables
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["assign", "assign_add", "assign_sub"])
def test_variable_assign_with_the_wrong_shape(method):
    with Scene() as s:
        with _raises(ValueError, f"Variable.{method}", "(3, 2)", "(2, 3)"):
            getattr(s.v, method)(np.ones((3, 2), np.float32))
        s.assert_unchanged()
    s.assert_gradient_still_right()


def test_variable_assign_with_the_wrong_dtype():
    with Scene() as s:
        with _raises(TypeError, "Variable.assign", "float64", "float32"):
            s.v.assign(mt.constant(np.ones((2, 3))))
        with _raises(TypeError, "Variable.assign", "float32"):
            s.v.assign("abc")
        s.assert_unchanged()
    s.assert_gradient_still_right()


def test_int_variable_assign_of_a_fraction():
    n = mt.Variable([1, 2])
    with _raises(TypeError, "Variable.assign", "int32"):
        n.assign([1.5, 2.5])
    np.testing.assert_array_equal(n.numpy(), [1, 2])
    assert n.dtype == np.int32


# ---------------------------------------------------------------------------
# bad arguments to the tape's methods do not use up a non-persistent tape
# (tests/test_bad_arguments.py has one row per bad argument of every op)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("call, kind, fragments", [
    pytest.param(lambda s: s.tape.gradient(s.y, s.x, output_gradients=mt.constant(
        np.float64(1.0))), TypeError, ("gradient", "output_gradients", "float64"),
        id="output-gradients-float64"),
    pytest.param(lambda s: s.tape.gradient(s.y, s.x, output_gradients="a"), TypeError,
                 ("gradient", "output_gradients", "'a'"), id="output-gradients-string"),
    pytest.param(lambda s: s.tape.jacobian(s.y, s.x, parallel_iterations="a"), TypeError,
                 ("jacobian", "parallel_iterations", "'a'"), id="parallel-iterations"),
    pytest.param(lambda s: s.tape.batch_jacobian(s.v * s.x, [s.x, s.x]), TypeError,
                 ("batch_jacobian", "list"), id="batch-jacobian-of-a-list"),
])
def test_bad_tape_arguments_leave_a_non_persistent_tape_usable(call, kind, fragments):
    with Scene() as s:
        pass
    with _raises(kind, *fragments):
        call(s)
    s.assert_unchanged()
    s.assert_gradient_still_right()


def test_get_attr_of_a_missing_attribute_names_the_op():
    with Scene() as s:
        pass
    add, total = s.tape.operations
    with _raises(ValueError, "Operation 'Sum'", "'missing'", "axis"):
        total.get_attr("missing")
    assert total.get_attr("keepdims") is False
    with _raises(ValueError, "'Mul'", "'kernel'"):
        add.get_attr("kernel")
    s.assert_gradient_still_right()
