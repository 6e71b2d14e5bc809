"""The two processes that grade one exercise (this module runs inside them).

The *answer process* runs, in a fresh `python -I` whose working directory is
an empty temporary one: the prelude, the notebook's context cells and the
student's answer cells in the notebook's order, then the check's inputs and
run parts. It sends back one thing: `got`, the plain data the run part
collected (`minitape.grading.values`). It never sees the judge part, so the
expected values and the hidden comparisons are not in it.

The *judge process* runs the prelude, the context cells, the inputs part and
the judge part with `got` bound: the answer's code never runs there.

Namespaces, in the answer process: context cells run in one dict; the
answer's cells in another, whose builtins are `Guard.builtins_for()` and
whose code is rewritten (`minitape.grading.restricted`); the check's parts in
a third. After each cell the names it binds are copied to the others: a
context cell's everywhere, an answer cell's only those the instructor's
version of that cell binds (its function, say). So an answer that rebinds
`np` or `Tensor` changes them for its own code only, and the check's parts
see the answer's function and nothing else of it.

Each report leaves on the process's original stdout as one JSON line signed
with a keyed BLAKE2b. The key comes on stdin before any answer text runs and
stays in `main`'s frame, which answer code cannot read (frames are closed to
it), so the parent can tell a report from anything an answer wrote.
"""
import builtins
import collections
import hashlib
import json
import linecache
import os
import sys
import traceback

from ..compiling import compiler
from . import audit, cells, restricted, values

_LIMIT = 4000  # characters of a message or of printed output kept in a report


class _Sink:
    """sys.stdout and sys.stderr while grading: keeps the first _LIMIT characters."""

    def __init__(self):
        self.parts, self.size = [], 0

    def write(self, text):
        if type(text) is str and self.size < _LIMIT:
            self.parts.append(text[:_LIMIT - self.size])
            self.size += len(self.parts[-1])
        return len(text) if type(text) is str else 0

    def flush(self):
        pass

    def text(self):
        return "".join(self.parts)


def _register(filename, text):
    """Make `text` the source of `filename` for tracebacks and inspect.getsource."""
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)


def _part_code(job, name):
    text, first_line = job["parts"][name]
    filename = f"<check {job['check_id']} {name}>"
    text = "\n" * (first_line - 1) + text  # line numbers as in the cell
    _register(filename, text)
    return compile(text, filename, "exec")


def _error(error, stage):
    """A report of an exception: its name, message, and the lines of the
    notebook's code it passed through (answer, context and check lines only)."""
    try:
        message = str(error)
    except Exception:
        message = "(no message)"
    lines = []
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename.startswith(("<answer", "<check", "<context")):
            lines.append([frame.filename.strip("<>"), frame.lineno, (frame.line or "").strip()])
    return {"status": "error", "stage": stage, "ename": type(error).__name__,
            "evalue": message[:_LIMIT], "lines": lines[-6:]}


def _copy(names, source, *targets):
    for name in names:
        if name in source:
            for target in targets:
                target[name] = source[name]


def _compiled(job):
    """Every step's code, compiled before anything runs (and so before the hook
    is armed): [("context", code, text) or ("answer", code, exports)], or a
    report when an answer is refused."""
    codes = []
    for step in job["steps"]:
        if step[0] == "context":
            _, index, text = step
            filename = f"<context cell {index}>"
            _register(filename, text)
            codes.append(("context", compile(text, filename, "exec"), text))
            continue
        _, grade_id, text, exports = step
        filename = f"<answer {grade_id}>"
        try:
            code = restricted.compile_answer(text, filename)
        except restricted.Refused as refused:
            return {"status": "refused", "message": f"{grade_id}: {refused}"}
        _register(filename, text)
        codes.append(("answer", code, exports))
    return codes + [("inputs", _part_code(job, "inputs"), None),
                    ("run", _part_code(job, "run"), None)]


def run_answer(job, hook, guard):
    """The answer process's work; returns its report (a dict)."""
    context = {"__name__": "__main__", "__builtins__": builtins}
    answer = {"__name__": "answer", "__builtins__": guard.builtins_for()}
    check = {"__name__": "__main__", "__builtins__": builtins}
    exec(compile(job["prelude"], "<prelude>", "exec"), context)
    _copy(cells.bound_names(job["prelude"]), context, answer, check)
    codes = _compiled(job)
    if isinstance(codes, dict):
        return codes
    for kind, code, extra in codes:
        if kind == "context":
            try:
                exec(code, context)
            except BaseException as error:
                return _error(error, "context")
            names = cells.bound_names(extra)
            _copy(names, context, answer, check)
            guard.classes.update(context[n] for n in names if isinstance(context.get(n), type))
            continue
        hook.armed = True  # from the answer's first line to the end of the process
        try:
            exec(code, answer if kind == "answer" else check)
        except BaseException as error:
            return _error(error, kind)
        if kind == "answer":
            _copy(extra, answer, context, check)
    if "got" not in check:
        return {"status": "error", "stage": "run", "ename": "NameError",
                "evalue": "the run part did not define `got`", "lines": []}
    try:
        got = values.encode(check["got"])
    except (TypeError, ValueError) as error:
        return {"status": "error", "stage": "run", "ename": type(error).__name__,
                "evalue": f"what the run part collected is not plain data: {error}",
                "lines": []}
    return {"status": "ok", "got": got}


def run_judge(job, sink):
    """The judge process's work; returns its report."""
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    exec(compile(job["prelude"], "<prelude>", "exec"), namespace)
    for step in job["steps"]:
        if step[0] == "context":
            _, index, text = step
            filename = f"<context cell {index}>"
            _register(filename, text)
            try:
                exec(compile(text, filename, "exec"), namespace)
            except BaseException as error:
                return _error(error, "context")
    try:
        exec(_part_code(job, "inputs"), namespace)
    except BaseException as error:
        return _error(error, "inputs")
    namespace["got"] = values.decode(job["got"])
    try:
        exec(_part_code(job, "judge"), namespace)
    except BaseException as error:
        return _error(error, "judge")
    return {"status": "passed", "printed": sink.text()}


def _preload():
    """Modules the check parts and minitape load on first use, loaded now,
    before any answer runs (so no import of them happens under the hook)."""
    import tempfile  # noqa: F401
    import unittest.mock  # noqa: F401

    import minitape
    for name in minitape._LAZY:
        getattr(minitape, name)
    from . import spies  # noqa: F401


def main():
    """Read the job from stdin, do it, write the signed report, exit."""
    job = json.loads(sys.stdin.buffer.read())
    key = bytes.fromhex(job.pop("key"))
    sign, write, leave, out = hashlib.blake2b, os.write, os._exit, os.dup(1)
    dumps = json.dumps
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    sink = _Sink()
    sys.stdout = sys.stderr = sink
    try:
        audit.limit_resources(job["cpu_seconds"], job["memory_bytes"])
        # A module first imported while the answer runs (NumPy loads some on first use)
        # must not try to write its .pyc: the hook refuses writes outside the answer's
        # folder, and a right answer would be refused where no .pyc was compiled yet.
        sys.dont_write_bytecode = True
        _preload()
        if job["role"] == "answer":
            guard = restricted.Guard()
            hook = audit.Hook(os.path.realpath(os.getcwd()), audit.read_roots(),
                              compilers={__file__, compiler.__file__, collections.__file__})
            sys.addaudithook(hook)
            report = run_answer(job, hook, guard)
            problems = guard.problems + hook.problems  # even those the answer caught
            if problems:
                report = {"status": "refused", "message": "not allowed while grading: "
                          + "; ".join(dict.fromkeys(problems[:5]))}
        else:
            report = run_judge(job, sink)
    except BaseException as error:  # the harness itself failed (or memory ran out)
        report = _error(error, "grader")
    try:
        body = dumps(report)
    except Exception as error:
        body = dumps({"status": "error", "stage": "grader", "ename": type(error).__name__,
                      "evalue": str(error)[:_LIMIT], "lines": []})
    line = dumps({"mac": sign(body.encode(), key=key).hexdigest(), "body": body})
    write(out, line.encode() + b"\n")
    leave(0)
