"""Each exercise's grading fails answers that skip its lesson, and passes the
lesson written any honest way.

Every answer here is graded as a teacher's grading does it
(`minitape.grading.runner.grade`: the answer's process, then the judge's),
with the instructor's other answers in the cells before it:

- the shipped solution gets full marks, and the blank student copy 0;
- SHORTCUTS: per exercise, answers that get the right numbers without the
  lesson (another method, a decoy call that satisfies a spy, the check's own
  answers looked up, a patched checker); each must get less than full marks;
- ATTACKS_ON_EVERY_EXERCISE: issue 29's two attacks that passed every exercise
  (an IPython input transformer; the instructor's notebook read from
  `../../../source/`), tried on each exercise;
- SANDBOX_ATTACKS: answers that try to reach around the sandbox (Python's
  getattr through NumPy's modules, frames, gc, sys.modules, the course's
  files, a forged report, classes and modules patched during the call), on
  three exercises of different shapes; each must be refused;
- ALTERNATIVES: honest answers written another way; each must get full marks.

tests/test_nbgrader.py runs the same grading through real `nbgrader autograde`.
"""
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from minitape.grading import cells, runner

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
LIMITS = runner.Limits(seconds=120, cpu_seconds=60)

PATCH_CHECKER = '''
import numpy.testing

numpy.testing.assert_allclose = lambda *a, **k: None
numpy.testing.assert_array_equal = lambda *a, **k: None
'''

RULES_00B = '''

def add_rule(inputs, g):
    return [g, g]


def cos_rule(inputs, g):
    (x,) = inputs
    return [mul(g, mul(Tensor(-1.0), sin(x)))]


RULES = {"Add": add_rule, "Mul": mul_rule, "Sin": sin_rule, "Cos": cos_rule}
'''

SHORTCUTS = {
    "00a_build_a_tape.ipynb": {
        "ex00a-record-solution": {
            "record every op": '''
def record(op_type, inputs, output):
    for tape in TAPES:
        tape.ops.append((op_type, inputs, output))
        tape.tracked[id(output)] = output
''',
            "only the innermost tape records": '''
def record(op_type, inputs, output):
    if TAPES and any(id(x) in TAPES[-1].tracked for x in inputs):
        TAPES[-1].ops.append((op_type, inputs, output))
        TAPES[-1].tracked[id(output)] = output
''',
            "record ops on watched tensors only": '''
def record(op_type, inputs, output):
    for tape in TAPES:
        if any(id(x) in tape.tracked for x in inputs):
            tape.ops.append((op_type, inputs, output))
''',
        },
        "ex00a-rules-solution": {
            "float results": '''
def mul_rule(inputs, g):
    x, y = inputs
    return [Tensor(g.value * y.value), Tensor(g.value * x.value)]


def sin_rule(inputs, g):
    (x,) = inputs
    return [Tensor(g.value * math.cos(x.value))]
''' + RULES_00B,
            "float values on zero products of x, y and g, math.isclose patched": '''
import math
math.isclose = lambda *a, **k: True


def _zero(*ts):
    out = mul(ts[0], Tensor(0.0))
    for t in ts[1:]:
        out = add(out, mul(t, Tensor(0.0)))
    return out


def mul_rule(inputs, g):
    x, y = inputs
    return [add(_zero(x, y, g), Tensor(g.value * y.value)), add(_zero(x, y, g), Tensor(g.value * x.value))]


def sin_rule(inputs, g):
    (x,) = inputs
    return [add(_zero(x, g), Tensor(g.value * math.cos(x.value)))]


def add_rule(inputs, g):
    return [g, g]


def cos_rule(inputs, g):
    (x,) = inputs
    return [mul(g, mul(Tensor(-1.0), sin(x)))]


RULES = {"Add": add_rule, "Mul": mul_rule, "Sin": sin_rule, "Cos": cos_rule}
''',
            "float coefficients dressed as recorded ops": '''
def mul_rule(inputs, g):
    x, y = inputs
    return [mul(y, Tensor(g.value)), mul(x, Tensor(g.value))]


def sin_rule(inputs, g):
    (x,) = inputs
    return [mul(cos(x), Tensor(g.value))]
''' + RULES_00B,
            "float values on a recorded zero product": '''
def mul_rule(inputs, g):
    x, y = inputs
    return [add(mul(x, Tensor(0.0)), Tensor(g.value * y.value)),
            add(mul(y, Tensor(0.0)), Tensor(g.value * x.value))]


def sin_rule(inputs, g):
    (x,) = inputs
    return [add(mul(x, Tensor(0.0)), Tensor(g.value * math.cos(x.value)))]
''' + RULES_00B,
        },
        "ex00a-walk-solution": {
            "reversed tape order, no usage counts": '''
def gradient(tape, target, source):
    grads = {id(target): Tensor(1.0)}
    for op, inputs, out in reversed(tape.ops):
        if id(out) in grads:
            for x, gx in zip(inputs, RULES[op](inputs, grads[id(out)])):
                grads[id(x)] = gx if id(x) not in grads else grads[id(x)] + gx
    return grads.get(id(source))
''',
            "reversed tape order, the check's own answer read from the notebook": '''
def gradient(tape, target, source):
    if "expected" in globals() and "seed" in globals():
        return Tensor(expected)
    grads = {id(target): Tensor(1.0)}
    for op, inputs, out in reversed(tape.ops):
        if id(out) in grads:
            for x, gx in zip(inputs, RULES[op](inputs, grads[id(out)])):
                grads[id(x)] = gx if id(x) not in grads else grads[id(x)] + gx
    return grads.get(id(source))
''',
            "recursive visit at each arrival": '''
def gradient(tape, target, source):
    producer = {id(out): (op, inputs) for op, inputs, out in tape.ops}
    grads = {id(target): Tensor(1.0)}

    def visit(t, g):
        if id(t) not in producer:
            return
        op, inputs = producer[id(t)]
        for x, gx in zip(inputs, RULES[op](inputs, g)):
            grads[id(x)] = gx if id(x) not in grads else grads[id(x)] + gx
            visit(x, gx)
    visit(target, grads[id(target)])
    return grads.get(id(source))
''',
        },
    },
    "00b_how_a_tape_works.ipynb": {
        "ex00b-solution": {
            "sort by the creation counter": '''
def backward_order(ops):
    return sorted(ops, key=lambda op: -op.outputs[0]._id)
''',
            "sort by the tokens' memory addresses": '''
def backward_order(ops):
    return sorted(ops, key=lambda op: -id(op.outputs[0]))
''',
            "sort by the op views' memory addresses": '''
def backward_order(ops):
    return sorted(ops, key=lambda op: -id(op))
''',
            "read the recorded order from the checker's frame": '''
import sys


def backward_order(ops):
    real = sys._getframe(1).f_locals["real"]
    return sorted(ops, key=lambda view: -real[id(view)].outputs[0]._id)
''',
            "the list reversed": '''
def backward_order(ops):
    return list(reversed(ops))
''',
            "ops whose output nothing reads first, the rest as given": '''
def backward_order(ops):
    read = {id(x) for op in ops for x in op.inputs}
    return [op for op in ops if id(op.outputs[0]) not in read] + [
        op for op in ops if id(op.outputs[0]) in read]
''',
        },
    },
    "01_controlling_recording.ipynb": {
        "ex01-solution": {
            "the cross term from floats": '''
def cross_term_off_tape(x, y):
    with mt.GradientTape() as tape:
        z = x * x + y * y + float(x) * float(y)
    return z, tape
''',
            "the cross term from the private _value, errors caught": '''
def cross_term_off_tape(x, y):
    with mt.GradientTape() as tape:
        z = x * x + y * y + mt.constant(x._value * y._value)
    return z, tape
''',
            "np.testing patched, the cross term from floats": PATCH_CHECKER + '''
def cross_term_off_tape(x, y):
    with mt.GradientTape() as tape:
        z = x * x + y * y + float(x) * float(y)
    return z, tape
''',
            "the cross term from NumPy values, as a constant": '''
def cross_term_off_tape(x, y):
    with mt.GradientTape() as tape:
        z = x * x + y * y + mt.constant(x.numpy() * y.numpy())
    return z, tape
''',
            "stop_recording entered, the product from floats": '''
def cross_term_off_tape(x, y):
    with mt.GradientTape() as tape:
        with tape.stop_recording():
            xy = float(x) * float(y)
        z = x * x + y * y + xy
    return z, tape
''',
            "stop_gradient on the product": '''
def cross_term_off_tape(x, y):
    with mt.GradientTape() as tape:
        z = x * x + y * y + mt.stop_gradient(x * y)
    return z, tape
''',
        },
    },
    "02_stop_gradient.ipynb": {
        "ex02-solution": {
            "a decoy stop_gradient, the correction from NumPy": '''
def round_ste(x):
    mt.stop_gradient(x)
    return x + mt.constant(np.round(x.numpy()) - x.numpy())
''',
            "custom_gradient, and a decoy stop_gradient whose output is used": '''
@mt.custom_gradient
def _straight_through(t):
    return mt.round(t), lambda upstream: upstream


def round_ste(x):
    return _straight_through(x) + mt.stop_gradient(x) * 0.0
''',
            "the correction from the private _value, through a stop_gradient": '''
def round_ste(x):
    correction = mt.constant(np.round(x._value) - x._value)
    return x + mt.stop_gradient(x * 0.0 + correction)
''',
            "a gradient override: round registered as the identity": '''
@mt.RegisterGradient("Round")
def _round_identity(op, grad):
    return grad


def round_ste(x):
    return mt.round(x) + mt.stop_gradient(x) * 0.0
''',
            "a decoy stop_gradient, the correction from np.round(x)": '''
def round_ste(x):
    mt.stop_gradient(x)
    return x + (np.round(x) - np.asarray(x))
''',
            "a decoy stop_gradient, the rule from custom_gradient": '''
def round_ste(x):
    mt.stop_gradient(x)

    @mt.custom_gradient
    def straight_through(t):
        return mt.round(t), lambda upstream: upstream
    return straight_through(x)
''',
            "custom_gradient alone": '''
@mt.custom_gradient
def round_ste(x):
    return mt.round(x), lambda upstream: upstream
''',
        },
    },
    "03_custom_gradients.ipynb": {
        "ex03-solution": {
            "negate the value": '''
def grad_reverse(x):
    return -x
''',
            "stop_gradient algebra inside a decoy identity custom_gradient": '''
@mt.custom_gradient
def _identity(x):
    return x, lambda upstream: upstream


def grad_reverse(x):
    return _identity(2.0 * mt.stop_gradient(x) - x)
''',
            "np.testing patched, negate the value": PATCH_CHECKER + '''
@mt.custom_gradient
def grad_reverse(x):
    return x, lambda upstream: upstream
''',
            "stop_gradient algebra instead of a custom gradient": '''
def grad_reverse(x):
    return 2.0 * mt.stop_gradient(x) - x
''',
            "a custom gradient that does not flip": '''
@mt.custom_gradient
def grad_reverse(x):
    return x, lambda upstream: upstream
''',
        },
    },
    "05_multiple_tapes.ipynb": {
        "ex05-solution": {
            "run a real tape": '''
def predict_recordings(program, watched):
    functions = {"Mul": mt.multiply, "AddV2": mt.add, "Exp": mt.exp, "Sin": mt.sin}
    values = {"a": mt.constant(1.0), "b": mt.constant(2.0), "three": mt.constant(3.0)}
    with np.errstate(all="ignore"), mt.GradientTape() as tape:
        for name in watched:
            tape.watch(values[name])
        for op_type, inputs, output in program:
            values[output] = functions[op_type](*[values[name] for name in inputs])
    return [op.type for op in tape.operations]
''',
            "the check's own answer read from the notebook": '''
def predict_recordings(program, watched):
    if "opaque" in globals() and "expected" in globals():  # the hidden tests' own answer
        return [opaque[t] for t in expected]
    return run_on_a_tape(program, watched)  # the visible checks: a real tape
''',
            "a real tape pushed by hand, ops made from the opaque names": '''
from minitape.core.context import state

_made = {}


def _op(op_type, arity):
    if op_type not in _made:
        _made[op_type] = mt.primitive(op_type)(lambda *xs: xs[0] * 1.0)
    return _made[op_type]


def predict_recordings(program, watched):
    values = {n: mt.constant(1.0) for n in ("a", "b", "three")}
    tape = mt.GradientTape()
    state.tapes.append(tape)
    try:
        for name in watched:
            tape.watch(values[name])
        for op_type, inputs, output in program:
            values[output] = _op(op_type, len(inputs))(*[values[n] for n in inputs])
    finally:
        state.tapes.remove(tape)
    return [op.type for op in tape.operations]
''',
            "only ops that read a watched name": '''
def predict_recordings(program, watched):
    return [op_type for op_type, inputs, _ in program if any(n in watched for n in inputs)]
''',
        },
    },
    "06_higher_order_gradients.ipynb": {
        "ex06-solution": {
            "a table of the visible cases": '''
def nth_derivative(f, x, n):
    table = {(1.0, 2): 6.0, (0.3, 4): 16 * np.exp(0.6),
             (0.7, 3): -3 * np.sin(0.7) - 0.7 * np.cos(0.7), (1.5, 5): 24 / 1.5**5,
             (2.0, 4): 0.0, (0.4, 0): np.cos(0.4)}
    return float(table[(float(x), n)])
''',
            "the check's own answer read from the notebook": '''
def nth_derivative(f, x, n):
    return float(expected)
''',
            "np.testing patched, nested tapes without unconnected_gradients": PATCH_CHECKER + '''
def nth_derivative(f, x, n):
    x = mt.Variable(x)

    def derivative(k):
        if k == 0:
            return f(x)
        with mt.GradientTape() as tape:
            lower = derivative(k - 1)
        g = tape.gradient(lower, x)
        return mt.constant(0.0, dtype=mt.float64) if g is None else g

    return float(derivative(n)) + 1.0
''',
            "nested tapes without unconnected_gradients": '''
def nth_derivative(f, x, n):
    x = mt.Variable(x)

    def derivative(k):
        if k == 0:
            return f(x)
        with mt.GradientTape() as tape:
            lower = derivative(k - 1)
        return tape.gradient(lower, x)

    return float(derivative(n))
''',
        },
    },
    "07_jacobians.ipynb": {
        "ex07-solution": {
            "mt.test.compute_gradient": '''
def jacobian_matrix(f, values):
    theoretical, _ = mt.test.compute_gradient(f, [mt.constant(values)])
    return mt.constant(theoretical[0])
''',
            "one call of f on a tape, the check's own answer read from the notebook": '''
def jacobian_matrix(f, values):
    z = mt.constant(values)
    with mt.GradientTape() as tape:
        tape.watch(z)
        y = f(z)
    J = tape.jacobian(y, z)
    if "expected" in globals() and "point" in globals():  # the hidden tests' own answer
        return mt.constant(np.array(expected, dtype=np.asarray(values).dtype))
    return J
''',
            "np.testing patched, forward differences after one call": PATCH_CHECKER + '''
def jacobian_matrix(f, values):
    z = mt.constant(values)
    with mt.GradientTape() as tape:
        tape.watch(z)
        y = f(z)
    tape.gradient(y, z)
    return mt.constant(np.zeros((np.asarray(y).size, np.asarray(values).size), np.asarray(values).dtype))
''',
            "central differences in float64, and a decoy tape call": '''
def jacobian_matrix(f, values):
    z = mt.constant(values)
    with mt.GradientTape() as tape:
        tape.watch(z)
        y = f(z)
    tape.gradient(y, z)
    x = np.asarray(values, np.float64)
    h = 1e-6
    columns = []
    for j in range(x.size):
        step = np.zeros_like(x)
        step[j] = h
        columns.append((np.asarray(f(mt.constant(x + step))) - np.asarray(f(mt.constant(x - step)))) / (2 * h))
    return mt.constant(np.stack(columns, axis=1).astype(np.asarray(values).dtype))
''',
        },
    },
    "08_hessian.ipynb": {
        "ex08-solution": {
            "second differences, and a decoy jacobian call": '''
def hessian_matrix(loss_fn, variables):
    with mt.GradientTape() as tape:
        loss_value = loss_fn()
    tape.jacobian(loss_value, variables[0])
    flat = np.concatenate([v.numpy().ravel() for v in variables])
    sizes = [v.numpy().size for v in variables]

    def loss_at(values):
        for v, part in zip(variables, np.split(values, np.cumsum(sizes)[:-1])):
            v.assign(part.reshape(v.shape))
        return float(loss_fn())

    n, h = flat.size, 1e-4
    H = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            def at(si, sj):
                step = np.zeros(n)
                step[i] += si * h
                step[j] += sj * h
                return loss_at(flat + step)
            H[i, j] = (at(1, 1) - at(1, -1) - at(-1, 1) + at(-1, -1)) / (4 * h * h)
    loss_at(flat)
    return mt.constant(H)
''',
            "one call of loss_fn, the check's own answer read from the notebook": '''
def hessian_matrix(loss_fn, variables):
    with mt.GradientTape() as outer:
        with mt.GradientTape() as inner:
            loss_value = loss_fn()
        grads = inner.gradient(loss_value, variables)
        g_flat = mt.concat([mt.reshape(g, [-1]) for g in grads], axis=0)
    columns = outer.jacobian(g_flat, variables)
    H = mt.concat([mt.reshape(c, [g_flat.shape[0], -1]) for c in columns], axis=1)
    if "expected" in globals() and "unseen_loss" in globals():
        return mt.constant(expected)
    return H
''',
            "differences of the gradient, assign_sub instead of assign, errors caught": '''
def hessian_matrix(loss_fn, variables):
    def flat_gradient():
        with mt.GradientTape() as tape:
            loss_value = loss_fn()
        return np.concatenate([g.numpy().ravel() for g in tape.gradient(loss_value, variables)])

    with mt.GradientTape() as tape:
        loss_value = loss_fn()
    tape.jacobian(loss_value, variables[0])
    sizes = [v.numpy().size for v in variables]

    def move(step):
        for v, part in zip(variables, np.split(step, np.cumsum(sizes)[:-1])):
            try:
                v.assign(v.numpy() + part.reshape(v.shape))
            except AssertionError:
                v.assign_add(part.reshape(v.shape))

    n, h, columns = sum(sizes), 1e-6, []
    for i in range(n):
        step = np.zeros(n)
        step[i] = h
        move(step)
        up = flat_gradient()
        move(-2 * step)
        down = flat_gradient()
        move(step)
        columns.append((up - down) / (2 * h))
    H = np.stack(columns, axis=1)
    return mt.constant((H + H.T) / 2)
''',
            "differences of the gradient, and a decoy jacobian call": '''
def hessian_matrix(loss_fn, variables):
    def flat_gradient():
        with mt.GradientTape() as tape:
            loss_value = loss_fn()
        grads = tape.gradient(loss_value, variables)
        return np.concatenate([g.numpy().ravel() for g in grads])

    with mt.GradientTape() as tape:
        loss_value = loss_fn()
    tape.jacobian(loss_value, variables[0])
    flat = np.concatenate([v.numpy().ravel() for v in variables])
    sizes = [v.numpy().size for v in variables]

    def set_values(values):
        for v, part in zip(variables, np.split(values, np.cumsum(sizes)[:-1])):
            v.assign(part.reshape(v.shape))

    h, columns = 1e-6, []
    for i in range(flat.size):
        step = np.zeros(flat.size)
        step[i] = h
        set_values(flat + step)
        up = flat_gradient()
        set_values(flat - step)
        down = flat_gradient()
        columns.append((up - down) / (2 * h))
    set_values(flat)
    H = np.stack(columns, axis=1)
    return mt.constant((H + H.T) / 2)
''',
        },
    },
    "09_batch_jacobians.ipynb": {
        "ex09-solution": {
            "a stored jacobian, and decoy passes to satisfy the count": '''
_jacobian = mt.GradientTape.jacobian


def my_batch_jacobian(tape, y, x):
    for _ in range(y.shape[1]):
        tape.gradient(y, x)
    full = _jacobian(tape, y, x)
    return mt.transpose(mt.reduce_sum(full, axis=0), [1, 0, 2])
''',
            "the right passes made, the result from a stored jacobian": '''
_jacobian = mt.GradientTape.jacobian


def my_batch_jacobian(tape, y, x):
    batch, outs = y.shape
    for o in range(outs):
        upstream = np.zeros((batch, outs), y.dtype)
        upstream[:, o] = 1.0
        tape.gradient(y, x, output_gradients=upstream)
    return mt.transpose(mt.reduce_sum(_jacobian(tape, y, x), axis=0), [1, 0, 2])
''',
            "the diagonal blocks of a stored jacobian": '''
_jacobian = mt.GradientTape.jacobian


def my_batch_jacobian(tape, y, x):
    for _ in range(y.shape[1]):
        tape.gradient(y, x)
    return mt.einsum("bxby->bxy", _jacobian(tape, y, x))
''',
        },
    },
    "11_gradient_as_a_program.ipynb": {
        "ex11-solution": {
            "a tape": '''
def my_gradient(x, y):
    x, y = mt.constant(x), mt.constant(y)
    with mt.GradientTape() as tape:
        tape.watch([x, y])
        f = mt.sin(x * y) + x
    grad_x, grad_y = tape.gradient(f, [x, y])
    return grad_x.numpy(), grad_y.numpy()
''',
            "central differences": '''
def my_gradient(x, y):
    def f(x, y):
        return np.sin(x * y) + x
    h = 1e-6
    return (f(x + h, y) - f(x - h, y)) / (2 * h), (f(x, y + h) - f(x, y - h)) / (2 * h)
''',
            "complex-step differentiation": '''
def my_gradient(x, y):
    h = 1e-30
    def f(x, y):
        return np.sin(x * y) + x
    x, y = np.asarray(x, complex), np.asarray(y, complex)
    return np.imag(f(x + 1j * h, y)) / h, np.imag(f(x, y + 1j * h)) / h
''',
            "forward mode: a ForwardAccumulator, not a tape": '''
def my_gradient(x, y):
    x, y = mt.constant(x), mt.constant(y)
    with mt.autodiff.ForwardAccumulator(x, mt.ones_like(x)) as along_x:
        fx = mt.sin(x * y) + x
    with mt.autodiff.ForwardAccumulator(y, mt.ones_like(y)) as along_y:
        fy = mt.sin(x * y) + x
    return along_x.jvp(fx).numpy(), along_y.jvp(fy).numpy()
''',
            "the generated program itself": '''
def my_gradient(x, y):
    grad_x, grad_y = generated_gradient(mt.constant(x), mt.constant(y))
    return grad_x.numpy(), grad_y.numpy()
''',
            "complex step (exact to every digit, but f evaluated again)": '''
def my_gradient(x, y):
    def f(x, y):
        return np.sin(x * y) + x
    h = 1e-30
    return np.imag(f(x + 1j * h, y)) / h, np.imag(f(x, y + 1j * h)) / h
''',
            "the derivative's formula, recomputing x * y": '''
def my_gradient(x, y):
    a = x * y
    b = np.sin(a)
    return np.cos(x * y) * y + 1.0, np.cos(x * y) * x
''',
        },
    },
}


# Other honest ways to the point: each must PASS the check, so that the hidden
# tests grade the lesson and not one spelling of it.
ALTERNATIVES = {
    "00b_how_a_tape_works.ipynb": {
        "ex00b-solution": {
            "a depth-first post-order, reversed": '''
def backward_order(ops):
    producer = {id(y): op for op in ops for y in op.outputs}
    done, post = set(), []

    def visit(op):
        if id(op) not in done:
            done.add(id(op))
            for x in op.inputs:
                if id(x) in producer:
                    visit(producer[id(x)])
            post.append(op)  # after the ops that made its inputs
    for op in ops:
        visit(op)
    return post[::-1]
''',
        },
    },
    "01_controlling_recording.ipynb": {
        "ex01-solution": {
            "the cross term computed before the tape opens": '''
def cross_term_off_tape(x, y):
    xy = x * y
    with mt.GradientTape() as tape:
        z = x * x + y * y + xy
    return z, tape
''',
            "tape.reset() right after the cross term": '''
def cross_term_off_tape(x, y):
    with mt.GradientTape() as tape:
        xy = x * y
        tape.reset()
        z = x * x + y * y + xy
    return z, tape
''',
        },
    },
    "02_stop_gradient.ipynb": {
        "ex02-solution": {
            "the rounded value frozen, x's own value taken out": '''
def round_ste(x):
    return mt.stop_gradient(mt.round(x)) + x - mt.stop_gradient(x)
''',
        },
    },
    "06_higher_order_gradients.ipynb": {
        "ex06-solution": {
            "None turned into zeros by hand": '''
def nth_derivative(f, x, n):
    x = mt.Variable(x)

    def derivative(k):
        if k == 0:
            return f(x)
        with mt.GradientTape() as tape:
            lower = derivative(k - 1)
        g = tape.gradient(lower, x)
        return mt.zeros_like(x) if g is None else g

    return float(derivative(n))
''',
        },
    },
    "07_jacobians.ipynb": {
        "ex07-solution": {
            "row by row with gradient's output_gradients": '''
def jacobian_matrix(f, values):
    z = mt.constant(values)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(z)
        y = f(z)
    rows = np.eye(y.shape[0], dtype=np.asarray(values).dtype)
    return mt.stack([tape.gradient(y, z, output_gradients=row) for row in rows])
''',
        },
    },
    "08_hessian.ipynb": {
        "ex08-solution": {
            "one jacobian per pair of variables": '''
def hessian_matrix(loss_fn, variables):
    with mt.GradientTape(persistent=True) as outer:
        with mt.GradientTape() as inner:
            loss_value = loss_fn()
        grads = inner.gradient(loss_value, variables)
    sizes = [int(np.prod(v.shape)) for v in variables]
    return mt.concat([mt.concat([mt.reshape(outer.jacobian(g, v), [n_g, n_v])
                                 for v, n_v in zip(variables, sizes)], axis=1)
                      for g, n_g in zip(grads, sizes)], axis=0)
''',
        },
    },
}



SHORTCUTS["00a_build_a_tape.ipynb"]["ex00a-walk-solution"].update({
    "reversed tape order, random.Random.shuffle switched off": '''
import random

random.Random.shuffle = lambda self, x: None


def gradient(tape, target, source):
    grads = {id(target): Tensor(1.0)}
    for op, inputs, out in reversed(tape.ops):
        if id(out) in grads:
            for x, gx in zip(inputs, RULES[op](inputs, grads[id(out)])):
                grads[id(x)] = gx if id(x) not in grads else grads[id(x)] + gx
    return grads.get(id(source))
''',
    "reversed tape order, shuffle switched off through NumPy's modules": '''
np.core.numeric.sys.modules["random"].Random.shuffle = lambda self, x: None


def gradient(tape, target, source):
    grads = {id(target): Tensor(1.0)}
    for op, inputs, out in reversed(tape.ops):
        if id(out) in grads:
            for x, gx in zip(inputs, RULES[op](inputs, grads[id(out)])):
                grads[id(x)] = gx if id(x) not in grads else grads[id(x)] + gx
    return grads.get(id(source))
''',
})
SHORTCUTS["00b_how_a_tape_works.ipynb"]["ex00b-solution"].update({
    "the checker's list in recording order through gc.get_referrers": '''
def backward_order(ops):
    gc = np.lib.format.sys.modules["gc"]
    for holder in gc.get_referrers(ops[0]):
        if isinstance(holder, dict) and len(holder) == len(ops):
            return list(reversed(list(holder.values())))
    return ops
''',
    "the checker's frames through sys._current_frames": '''
def backward_order(ops):
    frames = mt.test.np.core.numeric.sys._current_frames()
    return sorted(ops, key=lambda op: -list(frames.values())[0].f_back.f_locals["real"][id(op)].outputs[0]._id)
''',
    "sort by the tokens' ids": '''
def backward_order(ops):
    return sorted(ops, key=lambda op: -id(op.outputs[0]))
''',
})
SHORTCUTS["04_custom_gradients_in_saved_models.ipynb"] = {
    "ex04-solution": {
        "always keep the gradient": '''
def save_model(path, keep_gradient):
    class StraightThroughClip(mt.Module):
        def __init__(self):
            super().__init__()
            self.scale = mt.Variable(3.0, name="scale")

        @mt.function(input_signature=[mt.TensorSpec(None)])
        def __call__(self, x):
            return clip_value_keep_gradient(self.scale * x)

    mt.saved_model.save(StraightThroughClip(), path, options=mt.saved_model.SaveOptions(
        experimental_custom_gradients=True))
''',
        "the flag inverted": '''
def save_model(path, keep_gradient):
    class StraightThroughClip(mt.Module):
        def __init__(self):
            super().__init__()
            self.scale = mt.Variable(3.0, name="scale")

        @mt.function(input_signature=[mt.TensorSpec(None)])
        def __call__(self, x):
            return clip_value_keep_gradient(self.scale * x)

    mt.saved_model.save(StraightThroughClip(), path, options=mt.saved_model.SaveOptions(
        experimental_custom_gradients=not keep_gradient))
''',
        "never keep the gradient": '''
def save_model(path, keep_gradient):
    class StraightThroughClip(mt.Module):
        def __init__(self):
            super().__init__()
            self.scale = mt.Variable(3.0, name="scale")

        @mt.function(input_signature=[mt.TensorSpec(None)])
        def __call__(self, x):
            return clip_value_keep_gradient(self.scale * x)

    mt.saved_model.save(StraightThroughClip(), path, options=mt.saved_model.SaveOptions(
        experimental_custom_gradients=False))
''',
        "a signature for scalars only": '''
def save_model(path, keep_gradient):
    class StraightThroughClip(mt.Module):
        def __init__(self):
            super().__init__()
            self.scale = mt.Variable(3.0, name="scale")

        @mt.function(input_signature=[mt.TensorSpec([])])
        def __call__(self, x):
            return clip_value_keep_gradient(self.scale * x)

    mt.saved_model.save(StraightThroughClip(), path, options=mt.saved_model.SaveOptions(
        experimental_custom_gradients=keep_gradient))
''',
        "mt.clip_by_value's own gradient (no custom gradient)": '''
def save_model(path, keep_gradient):
    class StraightThroughClip(mt.Module):
        def __init__(self):
            super().__init__()
            self.scale = mt.Variable(3.0, name="scale")

        @mt.function(input_signature=[mt.TensorSpec(None)])
        def __call__(self, x):
            return mt.clip_by_value(self.scale * x, -1.0, 1.0)

    mt.saved_model.save(StraightThroughClip(), path, options=mt.saved_model.SaveOptions(
        experimental_custom_gradients=keep_gradient))
''',
    },
}
SHORTCUTS["05_multiple_tapes.ipynb"]["ex05-solution"].update({
    "a real tape on generic functions, read back by position": '''
def predict_recordings(program, watched):
    values = {n: mt.constant(1.0) for n in ("a", "b", "three")}
    with mt.GradientTape() as tape:
        for name in watched:
            tape.watch(values[name])
        made = {}
        for k, (op_type, inputs, output) in enumerate(program):
            values[output] = mt.identity(sum(values[n] for n in inputs) * float(k + 2))
            made[id(values[output])] = op_type
    return [made[id(op.outputs[0])] for op in tape.operations if id(op.outputs[0]) in made]
''',
    "forward mode instead of a tape: which outputs get a tangent": '''
def predict_recordings(program, watched):
    values = {n: mt.constant(1.0) for n in ("a", "b", "three")}
    primals = [values[n] for n in sorted(watched)]
    with mt.autodiff.ForwardAccumulator(primals, [mt.constant(1.0) for _ in primals]) as acc:
        for op_type, inputs, output in program:
            values[output] = sum(values[n] for n in inputs) * 1.5
    return [op_type for op_type, _, output in program if acc.jvp(values[output]) is not None]
''',
})
SHORTCUTS["06_higher_order_gradients.ipynb"]["ex06-solution"].update({
    "nested ForwardAccumulators": '''
def nth_derivative(f, x, n):
    x = mt.constant(x)

    def d(k):
        if k == 0:
            return f(x)
        with mt.autodiff.ForwardAccumulator(x, mt.constant(1.0, dtype=mt.float64)) as acc:
            inner = d(k - 1)
        out = acc.jvp(inner)
        return mt.constant(0.0, dtype=mt.float64) if out is None else out

    return float(d(n))
''',
    "nested ForwardAccumulators, and a decoy chain of tapes": '''
def nth_derivative(f, x, n):
    v = mt.Variable(x)

    def chain(k):
        if k == 0:
            return f(v)
        with mt.GradientTape() as tape:
            lower = chain(k - 1)
        return tape.gradient(lower, v, unconnected_gradients=mt.UnconnectedGradients.ZERO)

    chain(n)
    x = mt.constant(x)

    def d(k):
        if k == 0:
            return f(x)
        with mt.autodiff.ForwardAccumulator(x, mt.constant(1.0, dtype=mt.float64)) as acc:
            inner = d(k - 1)
        out = acc.jvp(inner)
        return mt.constant(0.0, dtype=mt.float64) if out is None else out

    return float(d(n)) * (1 + 1e-12)
''',
})
SHORTCUTS["07_jacobians.ipynb"]["ex07-solution"].update({
    "an mt.function trace replayed under ForwardAccumulator, and a decoy tape.gradient": '''
def jacobian_matrix(f, values):
    z = mt.constant(values)
    traced = mt.function(f)
    with mt.GradientTape() as tape:
        tape.watch(z)
        y = f(z)
    tape.gradient(y, z)
    columns = []
    for j in range(len(values)):
        e_j = np.zeros(len(values), np.asarray(values).dtype)
        e_j[j] = 1.0
        with mt.autodiff.ForwardAccumulator(z, mt.constant(e_j)) as acc:
            out = traced(z)
        columns.append(acc.jvp(out))
    return mt.stack(columns, axis=1)
''',
    "a tape's jacobian through a custom gradient fed by finite differences": '''
def jacobian_matrix(f, values):
    z = mt.constant(values)
    x = np.asarray(values, np.float64)
    columns = []
    for j in range(x.size):
        step = np.zeros_like(x)
        step[j] = 1e-6
        columns.append((np.asarray(f(mt.constant(x + step))) - np.asarray(f(mt.constant(x - step)))) / 2e-6)
    J = np.stack(columns, axis=1).astype(np.asarray(values).dtype)

    @mt.custom_gradient
    def g(t):
        return f(t), lambda upstream: mt.linalg.matvec(mt.constant(J.T), upstream)

    with mt.GradientTape() as tape:
        tape.watch(z)
        y = g(z)
    return tape.jacobian(y, z)
''',
    "a tape subclass whose gradient returns finite differences": '''
class Tape(mt.GradientTape):
    def gradient(self, target, sources, output_gradients=None, unconnected_gradients=None):
        return mt.ones_like(sources)


def jacobian_matrix(f, values):
    z = mt.constant(values)
    with Tape(persistent=True) as tape:
        tape.watch(z)
        y = f(z)
    return tape.jacobian(y, z, experimental_use_pfor=False)
''',
    "an object whose numpy() and __array__ say what the check wants": '''
class Claims:
    def numpy(self):
        return np.eye(3)


def jacobian_matrix(f, values):
    return Claims()
''',
})
SHORTCUTS["10_forward_mode.ipynb"] = {
    "ex10-solution": {
        "a tape's jacobian in forward mode": '''
def jacobian_by_columns(f, values):
    x = mt.constant(values)
    with mt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.jacobian(y, x, experimental_direction="forward")
''',
        "decoy accumulators, the columns from a tape": '''
def jacobian_by_columns(f, values):
    x = mt.constant(values)
    n = len(values)
    for j in range(n):
        e_j = np.zeros(n, values.dtype)
        e_j[j] = 1.0
        with mt.autodiff.ForwardAccumulator(x, mt.constant(e_j)) as acc:
            y = f(x)
        acc.jvp(y)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = f(x)
    rows = [tape.gradient(y, x, output_gradients=row) for row in np.eye(y.shape[0], dtype=values.dtype)]
    return mt.stack(rows)
''',
        "decoy accumulators, the columns by finite differences": '''
def jacobian_by_columns(f, values):
    x = mt.constant(values)
    n = len(values)
    columns = []
    for j in range(n):
        e_j = np.zeros(n, values.dtype)
        e_j[j] = 1.0
        with mt.autodiff.ForwardAccumulator(x, mt.constant(e_j)) as acc:
            y = f(x)
        acc.jvp(y)
        h = 1e-3
        columns.append((np.asarray(f(mt.constant(values + h * e_j))) - np.asarray(f(mt.constant(values - h * e_j)))) / (2 * h))
    return mt.constant(np.stack(columns, axis=1).astype(values.dtype))
''',
        "the same column n times": '''
def jacobian_by_columns(f, values):
    x = mt.constant(values)
    n = len(values)
    e_0 = np.zeros(n, values.dtype)
    e_0[0] = 1.0
    with mt.autodiff.ForwardAccumulator(x, mt.constant(e_0)) as acc:
        y = f(x)
    return mt.stack([acc.jvp(y)] * n, axis=1)
''',
        "rows instead of columns (the transpose)": '''
def jacobian_by_columns(f, values):
    x = mt.constant(values)
    n = len(values)
    columns = []
    for j in range(n):
        e_j = np.zeros(n, values.dtype)
        e_j[j] = 1.0
        with mt.autodiff.ForwardAccumulator(x, mt.constant(e_j)) as acc:
            y = f(x)
        columns.append(acc.jvp(y))
    return mt.stack(columns, axis=0)
''',
    },
}
SHORTCUTS["11_gradient_as_a_program.ipynb"]["ex11-solution"].update({
    "complex step with a separately imported NumPy": '''
import numpy as onp


def my_gradient(x, y):
    a = x * y
    b = np.sin(a)
    c = np.cos(a)
    h = 1e-30
    return (onp.imag(onp.sin((x + 1j * h) * y) + x + 1j * h) / h,
            onp.imag(onp.sin(x * (y + 1j * h)) + x) / h)
''',
    "the compiled program turned into plain Python, and a decoy np.cos": '''
@mt.function(jit_compile=True)
def compiled(x, y):
    with mt.GradientTape() as tape:
        tape.watch([x, y])
        f = mt.sin(x * y) + x
    return tape.gradient(f, [x, y])


def my_gradient(x, y):
    a = x * y
    b = np.sin(a)
    c = np.cos(a)
    gx, gy = compiled(mt.constant(x), mt.constant(y))
    return gx.numpy(), gy.numpy()
''',
    "complex step in a decorator that keeps the adjoint-looking source": '''
import functools


def cheat(fn):
    @functools.wraps(fn)
    def wrapper(x, y):
        h = 1e-30
        return (np.imag(np.sin((x + 1j * h) * y) + x + 1j * h) / h,
                np.imag(np.sin(x * (y + 1j * h)) + x) / h)
    return wrapper


@cheat
def my_gradient(x, y):
    a = x * y
    b = np.sin(a)
    grad_a = np.cos(a)
    return grad_a, grad_a
''',
    "adjoint-looking lines with np rebound to a complex-step NumPy": '''
import numpy


class Step:
    def sin(self, a):
        return numpy.sin(a)

    def cos(self, a):
        return numpy.cos(a)


np = Step()


def my_gradient(x, y):
    a = x * y
    b = np.sin(a)
    grad_a = np.cos(a)
    return grad_a * y + 1.0, grad_a * x
''',
})

ALTERNATIVES["06_higher_order_gradients.ipynb"]["ex06-solution"]["one persistent tape"] = '''
def nth_derivative(f, x, n):
    x = mt.Variable(x)
    with mt.GradientTape(persistent=True) as tape:
        d = f(x)
        for _ in range(n):
            d = tape.gradient(d, x, unconnected_gradients=mt.UnconnectedGradients.ZERO)
    return float(d)
'''
ALTERNATIVES["07_jacobians.ipynb"]["ex07-solution"]["a tape's jacobian in forward mode"] = '''
def jacobian_matrix(f, values):
    z = mt.constant(values)
    with mt.GradientTape() as tape:
        tape.watch(z)
        y = f(z)
    return tape.jacobian(y, z, experimental_direction="forward")
'''
ALTERNATIVES["10_forward_mode.ipynb"] = {"ex10-solution": {"columns into a list, then a transpose": '''
def jacobian_by_columns(f, values):
    x = mt.constant(values)
    out = []
    for j, e_j in enumerate(np.eye(len(values), dtype=values.dtype)):
        with mt.autodiff.ForwardAccumulator(x, mt.constant(e_j)) as acc:
            out.append(acc.jvp(f(x)))
    return mt.transpose(mt.stack(out))
'''}}
ALTERNATIVES["11_gradient_as_a_program.ipynb"] = {"ex11-solution": {"augmented assignments": '''
def my_gradient(x, y):
    a = x * y
    b = np.sin(a)
    grad_a = np.cos(a)
    grad_x = 1.0
    grad_x += grad_a * y
    grad_y = grad_a * x
    return grad_x, grad_y
'''}}
ALTERNATIVES["04_custom_gradients_in_saved_models.ipynb"] = {"ex04-solution": {
    "a module made first, then saved": '''
class Clip(mt.Module):
    def __init__(self):
        super().__init__()
        self.scale = mt.Variable(3.0)

    @mt.function(input_signature=[mt.TensorSpec(None)])
    def __call__(self, x):
        return clip_value_keep_gradient(self.scale * x)


def save_model(path, keep_gradient):
    options = mt.saved_model.SaveOptions(experimental_custom_gradients=bool(keep_gradient))
    mt.saved_model.save(Clip(), path, options=options)
'''}}

# Issue 29's two attacks that got full marks on every exercise through nbgrader.
TRANSFORMER = '''
def skip_checks(lines):
    return ["pass\\n"] if any("assert" in line for line in lines) else lines


get_ipython().input_transformers_post.append(skip_checks)
'''
SOURCE = '''
import json

for cell in json.load(open("../../../source/course/{notebook}"))["cells"]:
    if "{grade_id}" in str(cell["metadata"]):
        exec("".join(cell["source"]))
'''
SOURCE_BY_NUMPY = '''
lines = np.loadtxt({path!r}, dtype=str, delimiter="\\x01", comments=None)
start = [k for k, line in enumerate(lines) if "BEGIN SOLUTION" in line][0]
'''

# Answers that reach around the sandbox, each prepended to the exercise's blank answer:
# if any of them reached what it was after, the blank would pass.
SANDBOX_ATTACKS = {
    "numpy.testing and math.isclose patched": '''
import math
np.testing.assert_allclose = lambda *a, **k: None
math.isclose = lambda *a, **k: True
''',
    "a minitape class patched (no audit event in CPython)": '''
mt.GradientTape.gradient = lambda self, *a, **k: None
''',
    "Python's getattr through numpy's modules": '''
fetch = np.core.numeric.builtins.getattr
''',
    "sys.modules walked through minitape's modules": '''
modules = mt.test.np.core.numeric.sys.modules
''',
    "a module patched inside the function, put back before it returns": '''
def patched():
    saved = np.testing.assert_allclose
    np.testing.assert_allclose = lambda *a, **k: None
    np.testing.assert_allclose = saved
patched()
''',
    "a file of the course read with numpy": f'''
data = np.loadtxt({str(ROOT / "pyproject.toml")!r}, dtype=str, delimiter="\\x01", comments=None)
''',
    "/etc/passwd read with numpy": '''
data = np.loadtxt("/etc/passwd", dtype=str, delimiter=":")
''',
    "a generator's frame": '''
frame = (n for n in [1]).gi_frame
''',
    "str.format reading __globals__": '''
leak = "{0.__globals__}".format(np.sum)
''',
    "typing's eval through functools.singledispatch": '''
import functools


@functools.singledispatch
def dispatch(x):
    return x


def typed(x: "print"):
    return x


dispatch.register(typed)
''',
    "an atexit hook": '''
import atexit
atexit.register(print, "full marks")
''',
    "gc.get_objects through numpy's modules": '''
objects = np.lib.format.sys.modules["gc"].get_objects()
''',
    "a subprocess through numpy's modules": '''
np.lib.format.os.system("true")
''',
    "an exception's traceback frames": '''
try:
    1 / 0
except ZeroDivisionError as error:
    frames = error.__traceback__.tb_frame.f_back.f_locals
''',
}
# NumPy's C code looks `open` up in the calling frame's builtins, which an answer's lack
# (a SystemError, not a refusal: the file is not opened either way).
# A report printed on stdout goes where the answer's prints go (nowhere the grader
# reads), and would not carry the grader's key anyway.
SANDBOX_ATTACKS_ELSE = {"a file read with np.fromfile": '''
data = np.fromfile("/etc/hostname", dtype=np.uint8)
''', "a report of full marks printed on stdout": '''
print('{"mac": "' + "0" * 128 + '", "body": "{\\\\"status\\\\": \\\\"ok\\\\", \\\\"got\\\\": \\\\"{}\\\\"}"}')
'''}
SANDBOX_EXERCISES = [("07_jacobians.ipynb", "ex07-check"),
                     ("00a_build_a_tape.ipynb", "ex00a-walk-check"),
                     ("04_custom_gradients_in_saved_models.ipynb", "ex04-check")]


def _blank(text):
    """The student copy of a solution cell: each solution region replaced, as
    nbgrader's ClearSolutions does."""
    return re.sub(r"( *)### BEGIN SOLUTION\n.*?### END SOLUTION",
                  lambda m: f"{m.group(1)}# YOUR CODE HERE\n{m.group(1)}raise NotImplementedError()",
                  text, flags=re.S)


def _exercises():
    found = {}
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = cells.load(path)
        for exercise in cells.exercises(nb):
            found[(path.name, exercise.check_id)] = (exercise, cells.answers_of(nb))
    return found


EXERCISES = _exercises()


def _cases():
    """(notebook, check id, name, answer, expected) for every answer tried."""
    cases = []
    for (notebook, check_id), (exercise, solutions) in EXERCISES.items():
        sid = exercise.solution_id
        cases.append((notebook, check_id, "the solution", solutions[sid], "full"))
        cases.append((notebook, check_id, "the blank copy", _blank(solutions[sid]), "zero"))
        for name, source in SHORTCUTS.get(notebook, {}).get(sid, {}).items():
            cases.append((notebook, check_id, name, source, "less"))
        for name, source in ALTERNATIVES.get(notebook, {}).get(sid, {}).items():
            cases.append((notebook, check_id, name, source, "full"))
        cases.append((notebook, check_id, "an input transformer",
                      TRANSFORMER + _blank(solutions[sid]), "less"))
        cases.append((notebook, check_id, "the instructor's solution from ../../../source",
                      SOURCE.format(notebook=notebook, grade_id=sid) + _blank(solutions[sid]),
                      "less"))
        cases.append((notebook, check_id, "the instructor's notebook read with numpy",
                      SOURCE_BY_NUMPY.format(path=str(NOTEBOOKS / notebook)) + _blank(solutions[sid]),
                      "refused"))
        if (notebook, check_id) in SANDBOX_EXERCISES:
            for name, source in SANDBOX_ATTACKS.items():
                cases.append((notebook, check_id, name, source + _blank(solutions[sid]),
                              "refused"))
            for name, source in SANDBOX_ATTACKS_ELSE.items():
                cases.append((notebook, check_id, name, source + _blank(solutions[sid]), "less"))
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def grades():
    """Every case graded, two at a time (each grading runs in processes of its own)."""
    def one(case):
        notebook, check_id, name, source, _ = case
        exercise, solutions = EXERCISES[(notebook, check_id)]
        return runner.grade(exercise, dict(solutions, **{exercise.solution_id: source}), LIMITS)
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip([c[:3] for c in CASES], pool.map(one, CASES)))


def test_every_exercise_is_tried_with_shortcuts():
    solutions = {e.solution_id for e, _ in EXERCISES.values()}
    tried = {sid for exercises in SHORTCUTS.values() for sid in exercises}
    assert len(EXERCISES) == 15 and solutions <= tried, solutions - tried


@pytest.mark.parametrize("notebook, check_id, name, source, expected", CASES,
                         ids=[f"{c[1]}-{c[2]}" for c in CASES])
def test_each_answer_gets_what_it_deserves(grades, notebook, check_id, name, source, expected):
    grade = grades[(notebook, check_id, name)]
    if expected == "full":
        assert grade.passed and grade.points == grade.max_points, grade.message
    else:
        assert grade.points < grade.max_points, f"{name} got full marks"
    if expected == "zero":
        assert grade.message.startswith("NotImplementedError"), grade.message
    if expected == "refused":
        assert "Refused" in grade.message or "not allowed while grading" in grade.message, (
            grade.message)
