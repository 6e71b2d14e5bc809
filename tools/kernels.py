"""Running a notebook in a kernel from the tests and tools: no port taken by
another kernel, no lost reply, and one more try when a kernel fails anyway.

A test run starts a few hundred kernels, several at a time. Two things went
wrong now and then:

- A kernel that could not start ("Address already in use"), failing a whole
  test module. jupyter_client picks a kernel's five TCP ports by asking the
  system for free ones and letting them go; the kernel binds them a moment
  later, and by then another process may hold one. `NotebookClient` starts
  its kernels on Unix sockets instead (`transport="ipc"`, each kernel in a
  folder of its own), which need no free port.
- A cell that never finished. nbclient waits for a kernel's replies with
  `await channel.get_msg(timeout)`, which polls a ZeroMQ socket through
  asyncio. A ZeroMQ socket's file descriptor is edge-triggered: it signals a
  change, not "a message is waiting", and a read of the socket's state
  elsewhere can consume that signal. Then the poll sleeps until its timeout
  with the reply already queued (pyzmq's issue 2173 describes this; nbclient's
  issue 312 sees it with widgets). Here it happened in several runs of the
  whole suite, with ipykernel 6.31 and 7.4: a kernel idle, nbclient asleep in
  `get_msg`, every process idle, until the cell's timeout. `NotebookClient`'s
  channels wait in slices of `SLICE` seconds: each new poll first asks the
  socket whether a message is waiting, so a lost signal costs one slice.

`once_more_on_kernel_failure` is the last resort: a notebook whose kernel does
not start, dies or stops answering runs once more in a fresh kernel.
"""
import functools
import os
import shutil
import tempfile
import time
import weakref
from queue import Empty

import nbclient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

# s per cell: the slowest cell of the course takes a few seconds on a busy machine.
CELL_TIMEOUT = 90
# s per poll of a kernel's socket: at most this long after a lost signal.
SLICE = 0.5


def in_slices(get_msg):
    """An async `get_msg(timeout)` that polls at most SLICE seconds at a time
    and raises Empty only when the whole timeout has passed."""
    @functools.wraps(get_msg)
    async def get_msg_in_slices(timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = SLICE if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return await get_msg(timeout=min(SLICE, left))
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise
    return get_msg_in_slices


class NotebookClient(nbclient.NotebookClient):
    """nbclient's NotebookClient: its kernel on Unix sockets (on POSIX), its
    shell and IOPub channels polled in slices."""

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        if os.name == "posix":
            folder = tempfile.mkdtemp(prefix="minitape-kernel-")
            weakref.finalize(km, shutil.rmtree, folder, True)
            km.transport, km.ip = "ipc", os.path.join(folder, "kernel")
        return km

    async def async_start_new_kernel_client(self):
        kc = await super().async_start_new_kernel_client()
        for channel in (kc.shell_channel, kc.iopub_channel):
            channel.get_msg = in_slices(channel.get_msg)
        return kc


def kernel_failed(error):
    """Whether `error` says the kernel failed (it died, did not start, or a
    cell timed out), not the notebook."""
    return isinstance(error, (CellTimeoutError, DeadKernelError)) or (
        isinstance(error, RuntimeError) and str(error).startswith("Kernel"))


def once_more_on_kernel_failure(run):
    """`run` (a function that executes a notebook in its own kernel), run once
    more in a fresh kernel when the kernel failed. A notebook whose kernel
    fails twice fails."""
    @functools.wraps(run)
    def run_once_more_on_kernel_failure(*args, **kwargs):
        try:
            return run(*args, **kwargs)
        except Exception as error:
            if not kernel_failed(error):
                raise
        return run(*args, **kwargs)
    return run_once_more_on_kernel_failure
