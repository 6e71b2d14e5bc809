"""Op-table rows for functional control flow (issue 30): programs built with
cond, while_loop, map_fn, scan and vectorized_map, so each gets the op
table's checks (finite differences to third order, pfor Jacobians and
Hessians against the loop, forward against reverse, compiled against eager,
saved and loaded)."""
import minitape as mt
from op_table import R, S, case


def _power(x):
    # s -> s * s twice: x ** 4, through a while loop with a counter and a nest
    return mt.while_loop(lambda i, p: i < 2, lambda i, p: (i + 1, (p[0] * p[0], p[1] + p[0])),
                         (mt.constant(0), (x, x)))[1]


def _recurrence(x, w):
    def step(state, t):
        h, total = state
        h = mt.tanh(w[0] * h + t)
        return h, total + h * h
    hs, totals = mt.scan(step, x, initializer=(mt.zeros((), x.dtype), mt.zeros((), x.dtype)),
                         reverse=True)
    return hs + totals


CASES = [
    # (predicates on constants: a trace whose predicate read an argument holds for
    # that value only, and cannot be saved; test_control_flow.py covers those)
    case("control_flow.cond-true",
         lambda x: mt.cond(mt.constant(0.5) > 0, lambda: mt.sin(x) * x, lambda: -x), R(3)),
    case("control_flow.cond-false",
         lambda x: mt.cond(mt.constant(False), lambda: mt.sin(x) * x,
                           lambda: {"a": mt.exp(x)})["a"], R(3)),
    case("control_flow.while_loop-nest", lambda x: _power(x)[0] + _power(x)[1], R(2, 2)),
    case("control_flow.map_fn-rows",
         lambda x: mt.map_fn(lambda r: mt.reduce_sum(mt.nn.softmax(r) * r), x), R(3, 4)),
    case("control_flow.map_fn-tuple",
         lambda x, y: mt.map_fn(lambda t: (t[0] * t[1], mt.sin(t[0])), (x, y))[0]
         + mt.map_fn(lambda t: (t[0] * t[1], mt.sin(t[0])), (x, y))[1], R(3, 2), R(3, 2)),
    case("control_flow.scan-cumprod", lambda x: mt.scan(lambda a, t: a * t, x), S(4)),
    case("control_flow.scan-recurrence-reverse", _recurrence, R(4), R(1)),
    case("control_flow.scan-rows-initializer",
         lambda x, h: mt.scan(lambda a, r: mt.tanh(a + r), x, initializer=h), R(3, 2), R(2)),
    case("control_flow.vectorized_map-rows",
         lambda x: mt.vectorized_map(lambda r: mt.reduce_sum(r * r) * r[0], x), R(3, 2)),
    case("control_flow.vectorized_map-outer",
         lambda x, y: mt.vectorized_map(lambda t: mt.sin(t) * y, x), R(3), R(2)),
]
