"""Grade exercises: start the answer process and the judge process for each
check (`minitape.grading.processes`), and turn their reports into a Grade.

    grade_notebook("source/07/07_jacobians.ipynb", "submitted/ada/07/07_jacobians.ipynb")

reads the exercises, their checks and their context cells from the first
notebook (the instructor's), and only the answer cells from the second.
Needs NumPy and minitape, nothing from Jupyter.
"""
import hashlib
import hmac
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

from . import cells, restricted

# The `python -c` program each process starts with: find this minitape, then obey stdin.
_BOOT = ("import sys; sys.path.insert(0, {path!r}); "
         "from minitape.grading.processes import main; main()")
_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass
class Limits:
    """Per process: wall-clock seconds, CPU seconds, address space in bytes."""
    seconds: float = 120.0
    cpu_seconds: int = 60
    memory_bytes: int = 2 * 2**30


@dataclass
class Grade:
    check_id: str
    points: float            # what the check earned: all its points or none
    max_points: float
    passed: bool
    message: str = ""        # why it failed: what a student reads in the feedback
    printed: str = ""        # what the judge printed when it passed
    stages: dict = field(default_factory=dict)  # the raw reports, for tests and debugging


def _signal_name(code):
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def _signed(out, key):
    """The report in the process's one line of output, if the grader's key
    signed it; a report saying so if not; None if there is no such line."""
    lines = out.decode("utf-8", "replace").splitlines()
    try:
        message = json.loads(lines[-1]) if len(lines) == 1 else None
        body, mac = message["body"], message["mac"]
    except (ValueError, KeyError, TypeError):
        return None
    expected = hashlib.blake2b(body.encode(), key=key).hexdigest()
    if isinstance(mac, str) and isinstance(body, str) and hmac.compare_digest(mac, expected):
        return json.loads(body)
    return {"status": "error", "stage": "grader", "ename": "ForgedReport",
            "evalue": "the process's report does not carry the grader's signature", "lines": []}


def run_process(job, limits):
    """Run one grading process on `job` (a dict) and return its report. A
    process that ends without a signed report gives a report saying how it
    ended."""
    key = secrets.token_bytes(32)
    job = dict(job, key=key.hex(), cpu_seconds=limits.cpu_seconds,
               memory_bytes=limits.memory_bytes)
    with tempfile.TemporaryDirectory(prefix="minitape-grading-") as folder:
        env = {"TMPDIR": folder, "HOME": folder, "PATH": os.defpath, "LC_ALL": "C.UTF-8",
               "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        process = subprocess.Popen(
            [sys.executable, "-I", "-c", _BOOT.format(path=_PACKAGE_PARENT)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=folder, env=env, start_new_session=True)
        try:
            out, err = process.communicate(json.dumps(job).encode(), timeout=limits.seconds)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            return {"status": "error", "stage": "limits", "ename": "TimeoutError",
                    "evalue": f"still running after {limits.seconds:g} s (the limit): "
                              "an endless loop, or far too much work", "lines": []}
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
    report = _signed(out, key)
    if report is not None:
        return report
    code = process.returncode
    how = (f"was stopped by {_signal_name(code)}" if code < 0 else f"exited with code {code}")
    if code in (-signal.SIGXCPU, -signal.SIGKILL):
        how += f" (CPU time limit {limits.cpu_seconds} s, or memory limit)"
    tail = err.decode("utf-8", "replace").strip().splitlines()[-3:]
    return {"status": "error", "stage": "limits", "ename": "ProcessEnded",
            "evalue": f"the grading process {how} before it reported"
                      + (": " + " | ".join(tail) if tail else ""), "lines": []}


def describe(report):
    """One message for a failed report, as a student reads it."""
    if report["status"] == "refused":
        return "Refused: " + report["message"]
    where = {"answer": "while your answer cell ran", "run": "while the check ran your answer",
             "inputs": "while the check made its inputs", "judge": "in the check's judgement",
             "context": "in a cell of the notebook the exercise needs",
             "limits": "", "grader": "in the grader"}.get(report.get("stage"), "")
    lines = "".join(f"\n  {name}, line {number}: {text}"
                    for name, number, text in report.get("lines", []))
    head = f"{report.get('ename', 'Error')}: {report.get('evalue', '')}"
    return head + (f"\n({where})" if where else "") + lines


def grade(exercise, answers, limits=None):
    """Grade one exercise (a cells.Exercise) with the student's `answers`
    (solution grade id -> cell text). Returns a Grade."""
    limits = limits or Limits()
    steps, stages = [], {}
    for step in exercise.steps:
        if step[0] == "context":
            steps.append(list(step))
            continue
        grade_id = step[1]
        text = answers.get(grade_id, "")
        try:
            restricted.check(text)
        except restricted.Refused as refused:
            report = {"status": "refused", "message": f"{grade_id}: {refused}"}
            return Grade(exercise.check_id, 0.0, exercise.points, False, describe(report),
                         stages={"answer": report})
        steps.append(["answer", grade_id, text, exercise.exports[grade_id]])
    parts = {name: [part.text, part.first_line] for name, part in exercise.parts.items()}
    job = {"role": "answer", "check_id": exercise.check_id, "prelude": cells.PRELUDE,
           "steps": steps, "parts": {k: parts[k] for k in ("inputs", "run")}}  # no judge
    stages["answer"] = report = run_process(job, limits)
    if report["status"] != "ok":
        return Grade(exercise.check_id, 0.0, exercise.points, False, describe(report),
                     stages=stages)
    judge_job = dict(job, role="judge", got=report["got"],
                     steps=[s for s in steps if s[0] == "context"],
                     parts={k: parts[k] for k in ("inputs", "judge")})  # no answer
    stages["judge"] = verdict = run_process(judge_job, limits)
    if verdict["status"] != "passed":
        return Grade(exercise.check_id, 0.0, exercise.points, False, describe(verdict),
                     stages=stages)
    return Grade(exercise.check_id, exercise.points, exercise.points, True,
                 printed=verdict.get("printed", ""), stages=stages)


def grade_notebook(source, submission=None, limits=None, only=None):
    """Grade every exercise of the instructor's notebook `source` (a path or a
    loaded notebook) with the answers in `submission` (default: the
    solutions in `source` itself). `only`: grade ids of the checks to grade."""
    source = cells.load(source) if isinstance(source, (str, os.PathLike)) else source
    submission = source if submission is None else (
        cells.load(submission) if isinstance(submission, (str, os.PathLike)) else submission)
    answers = cells.answers_of(submission)
    return [grade(exercise, answers, limits) for exercise in cells.exercises(source)
            if only is None or exercise.check_id in only]
