"""Notebook 11's explorer, driven headless: change a control and read what the
callback printed and stored (`widget.data`)."""
import pytest

from minitape.widgets import program as pg

pytest.importorskip("ipywidgets")


def _control(widget, description):
    return next(c for c in widget.children if getattr(c, "description", None) == description)


def test_every_example_compiles_and_splits_into_forward_and_backward_lines():
    for name in pg.EXAMPLES:
        for kind in pg.KINDS:
            whole = pg.program_source(name, "whole", kind)
            forward = pg.program_source(name, "forward", kind)
            backward = pg.program_source(name, "backward", kind)
            assert whole.startswith("def ")
            assert backward and all(line.strip().startswith("grad_")
                                    for line in backward.splitlines())
            assert not any(line.strip().startswith("grad_") for line in forward.splitlines())
            n_forward, n_adjoint = pg.count_lines(whole)
            assert n_adjoint == len(backward.splitlines())


def test_count_lines_skips_comments_reads_and_return():
    source = ("def f(x):\n    # c0 = 1.0\n    w = w_var._value  # read variable\n"
              "    y = x * w  # Mul\n    grad_y = c0 * w  # Mul (adjoint)\n    return (y,)\n")
    assert pg.count_lines(source) == (1, 1)


def test_the_explorer_shows_the_chosen_program(capsys):
    widget = pg.program_explorer()
    _control(widget, "f(x)").value = "sin(x) * x"
    _control(widget, "lines").value = "backward"
    assert "grad_" in widget.data["source"] and "np.sin" not in widget.data["source"]
    _control(widget, "lines").value = "forward"
    assert "np.sin(x)" in widget.data["source"]
    gradient_lines = widget.data["adjoint"]
    _control(widget, "program").value = "hessian"
    assert widget.data["adjoint"] > gradient_lines    # adjoints of adjoints


def test_the_counts_read_as_english():
    widget = pg.program_explorer()
    _control(widget, "f(x)").value = "sin(x) * x"
    _control(widget, "f(x)").value = "x ** 3"
    shown = "".join(o["text"] for o in widget.out.outputs if o["output_type"] == "stream")
    assert shown.rstrip().endswith("1 forward line, 2 adjoint lines")
    assert (widget.data["forward"], widget.data["adjoint"]) == (1, 2)


def test_the_forward_lines_of_a_gradient_are_the_functions_own_program():
    """Lines are labelled by where they were computed (the gradient call, or
    the function), not by what they read: without its grad_ lines, each
    example's gradient program is the program of the function alone."""
    from minitape.functions.function import function

    for name in pg.EXAMPLES:
        f, x = pg._example(name)
        alone = function(f, jit_compile=True).experimental_get_compiler_ir(x)()
        forward = pg.program_source(name, "forward")

        def body(source):
            return [line.strip() for line in source.splitlines()
                    if line.strip() and not line.strip().startswith(("def ", "#", "return"))]
        assert body(forward) == body(alone), name
