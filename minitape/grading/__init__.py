"""Grading the course's exercises where the answer cannot reach the grader.

A check cell has three parts (`minitape.grading.cells`): inputs, run (which
calls the answer and collects plain data in `got`) and judge. In a student's
kernel the cell runs top to bottom. A teacher's grading (`python -m
minitape.grading`, or nbgrader through `minitape.grading.autograde`) runs
each exercise in two fresh processes (`minitape.grading.processes`): the
answer's, which never sees the judge part, and the judge's, which never runs
the answer's code. In the answer's process the answer's code is checked and
rewritten (`restricted`), an audit hook and resource limits bound what the
process may do (`audit`), and only plain data leaves it (`values`).

What a check's run part uses in a student's kernel too:

- `plain(x)`: `x` as plain data, refusing look-alikes;
- `Spy(cls, *names)` and `watch(fn)`: what the answer called, with what, and
  what each call returned;
- `files_of(folder)` and `run_fresh(code, files)`: files the answer wrote, as
  plain data, and a fresh Python process that has only them.

This package sits above the rest of minitape (nothing else imports it); only
`autograde.py` imports nbgrader.
"""
from .files import files_of, run_fresh  # noqa: F401
from .spies import Call, Spy, watch  # noqa: F401
from .values import plain  # noqa: F401
