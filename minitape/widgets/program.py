"""Notebook 11's explorer: pick a function, read the program minitape compiles
for it and its gradient (or its Hessian).

    program_source(name, part="whole")   # the generated source, or its forward /
                                         #   backward lines only
    count_lines(source)                  # (forward lines, adjoint lines)
    program_explorer()                   # a dropdown of functions and a toggle

Lines whose value is named `grad_...` are adjoint lines: the tape's gradient
(or jacobian) call computed them, in the backward walk, whatever they read
(`grad_pow = x ** c1` reads only x). The others are forward lines: the
function's own. The computations need only minitape; ipywidgets is imported
when the explorer is made (core widgets only, so it works with ipywidgets 7.7
on Colab and 8).
"""
import numpy as np

from .. import nn, ops
from ..functions.function import function
from ..layers import Dense
from ..random import set_seed
from ..tape import GradientTape
from .compat import interactive

__all__ = ["EXAMPLES", "program_source", "count_lines", "program_explorer"]


def _gradient_of(f):
    def value_and_gradient(x):
        with GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return y, tape.gradient(y, x)
    return value_and_gradient


def _hessian_of(f):
    def hessian(x):
        with GradientTape() as outer:
            outer.watch(x)
            with GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            g = inner.gradient(y, x)
        return outer.jacobian(g, x)
    return hessian


def _dense_loss():
    set_seed(0)
    layer = Dense(3, activation=nn.relu)
    layer(ops.zeros([4, 2]))
    return lambda x: ops.reduce_mean(layer(x) ** 2)


# name -> (the function of x, an example x)
EXAMPLES = {
    "x ** 3": (lambda x: x ** 3, 2.0),
    "sin(x) * x": (lambda x: ops.sin(x) * x, 1.0),
    "sum(tanh(x) ** 2)": (lambda x: ops.reduce_sum(ops.tanh(x) ** 2), [0.5, -1.0, 2.0]),
    "mean(relu(Dense(3)(x)) ** 2)": (None, np.linspace(-1, 1, 8).reshape(4, 2)),
}
PARTS = ("whole", "forward", "backward")
KINDS = ("gradient", "hessian")


def _example(name):
    f, x = EXAMPLES[name]
    if f is None:
        f = _dense_loss()
    return f, ops.convert_to_tensor(np.asarray(x, np.float32))


def program_source(name, part="whole", kind="gradient"):
    """The compiled program of the value and gradient (or the Hessian) of the
    example `name`: all of it, or only its forward or its adjoint lines."""
    f, x = _example(name)
    wrapped = _gradient_of(f) if kind == "gradient" else _hessian_of(f)
    source = function(wrapped, jit_compile=True).experimental_get_compiler_ir(x)()
    if part == "whole":
        return source
    lines = source.splitlines()
    body = [line for line in lines[1:-1] if not line.lstrip().startswith("#")]
    keep = [line for line in body if _is_adjoint(line) == (part == "backward")]
    return "\n".join(keep)


def _is_adjoint(line):
    return line.lstrip().startswith("grad_")


def count_lines(source):
    """(forward lines, adjoint lines) of a program: comments, the `def` line,
    variable reads and the `return` line are not counted."""
    body = [line.strip() for line in source.splitlines()[1:]]
    body = [line for line in body if line and not line.startswith(("#", "return"))
            and "# read variable" not in line]
    adjoint = sum(line.startswith("grad_") for line in body)
    return len(body) - adjoint, adjoint


def _lines(n, kind):
    return f"{n} {kind} line{'' if n == 1 else 's'}"


def program_explorer():
    """A dropdown of example functions, a toggle for the part and one for the
    gradient or the Hessian; prints the program and its line counts."""
    import ipywidgets as widgets

    data = {}

    def show(name, part, kind):
        source = program_source(name, part, kind)
        forward, adjoint = count_lines(program_source(name, "whole", kind))
        data.clear()
        data.update(source=source, forward=forward, adjoint=adjoint)
        print(source)
        print(f"\n{_lines(forward, 'forward')}, {_lines(adjoint, 'adjoint')}")

    widget = interactive(
        show, name=widgets.Dropdown(options=list(EXAMPLES), description="f(x)"),
        part=widgets.ToggleButtons(options=PARTS, description="lines"),
        kind=widgets.ToggleButtons(options=KINDS, description="program"))
    widget.data = data
    return widget
