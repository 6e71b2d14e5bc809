"""tools/kernels.py: the tests' notebook client survives a lost wake-up, needs
no free TCP port, and retries a notebook only when its kernel failed."""
import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from queue import Empty

import pytest

pytest.importorskip("nbclient")

from tools import kernels  # noqa: E402


def run(coroutine):
    """asyncio.run in a thread of its own (a test run before this one in the same
    process may have left an event loop running in this thread)."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, coroutine).result()


def test_a_poll_that_missed_its_signal_is_asked_again(monkeypatch):
    """The socket's signal was lost: a poll of the whole timeout would sleep
    to its end. Polled in slices, the waiting message comes at the next slice."""
    monkeypatch.setattr(kernels, "SLICE", 0.05)
    polls = []

    async def get_msg(timeout=None):
        polls.append(timeout)
        if len(polls) == 1:  # the first poll never hears of the message
            await asyncio.sleep(timeout)
            raise Empty
        return {"msg_type": "execute_reply"}

    start = time.monotonic()
    msg = run(kernels.in_slices(get_msg)(timeout=60))
    assert msg == {"msg_type": "execute_reply"}
    assert time.monotonic() - start < 5
    assert polls[0] == pytest.approx(0.05)


def test_a_poll_with_nothing_to_read_still_times_out(monkeypatch):
    monkeypatch.setattr(kernels, "SLICE", 0.05)

    async def get_msg(timeout=None):
        await asyncio.sleep(timeout)
        raise Empty

    start = time.monotonic()
    with pytest.raises(Empty):
        run(kernels.in_slices(get_msg)(timeout=0.3))
    assert 0.3 <= time.monotonic() - start < 5


def test_only_a_failed_kernel_runs_the_notebook_again():
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    calls = []

    def flaky(error):
        calls.append(error)
        if len(calls) == 1:
            raise error
        return "second run"

    retried = kernels.once_more_on_kernel_failure(flaky)
    for error in (CellTimeoutError("timed out"), DeadKernelError("Kernel died"),
                  RuntimeError("Kernel died before replying to kernel_info")):
        calls.clear()
        assert retried(error) == "second run" and len(calls) == 2
    for error in (CellExecutionError("traceback", "NameError", "x"),
                  RuntimeError("nbgrader failed"), AssertionError("wrong")):
        calls.clear()
        with pytest.raises(type(error)):
            retried(error)
        assert len(calls) == 1


@pytest.mark.skipif(kernels.os.name != "posix", reason="Unix sockets")
def test_the_kernel_listens_on_unix_sockets_not_tcp_ports():
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("6 * 7")])
    client = kernels.NotebookClient(nb, kernel_name="python3", timeout=60)
    with client.setup_kernel():
        info = client.km.get_connection_info()
        assert info["transport"] == "ipc" and info["ip"].startswith(kernels.tempfile.gettempdir())
        client.execute_cell(nb.cells[0], 0)
    assert nb.cells[0].outputs[0]["data"]["text/plain"] == "42"
