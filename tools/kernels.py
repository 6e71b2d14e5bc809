"""Running a notebook in a kernel from the tests and tools: no port taken by
another kernel, and no widget that would make a stock runner stall.

A test run starts a few hundred kernels, several at a time. Two things went
wrong now and then:

- A kernel that could not start ("Address already in use"), failing a whole
  test module. jupyter_client picks a kernel's five TCP ports by asking the
  system for free ones and letting them go; the kernel binds them a moment
  later, and by then another process may hold one. `NotebookClient` starts
  its kernels on Unix sockets instead (`transport="ipc"`, each kernel in a
  folder of its own), which need no free port.
- A cell that never finished, the kernel idle, nbclient asleep in
  `get_msg` with the cell's reply already in its socket, until the cell's
  timeout (nbconvert's default has none). The cause was the explorers:
  ipywidgets fills an Output widget by asking the front end to route the
  cell's messages into it, and nbclient, playing that front end, sends the
  kernel a comm message on the shell channel for each routed output, while
  it waits on that channel for the reply. jupyter_client's `Session.send`
  sends through a plain shadow of the asyncio socket, which takes the
  socket's edge-triggered wake-up when the reply has just arrived; the
  asyncio socket never hears of it. (nbclient issue 312 and jupyter_client
  pull requests 1010 and 1059, all open; `python -m tools.stall_repro` shows
  it.) The explorers now set their Output widget's outputs from the kernel
  (`minitape.widgets.compat`), so nbclient sends nothing while a cell runs.
  `NotebookClient` fails a notebook at once if it would: an explorer that
  brings the stall back fails every test that runs its notebook, instead
  of stalling a teacher's `nbgrader autograde` now and then.

Nothing is retried: a kernel that dies or a cell that times out fails the test.
"""
import os
import shutil
import tempfile
import weakref

import nbclient

# s per cell: the slowest cell of the course takes about 4 s on 2 busy cores (docs/teaching.md).
CELL_TIMEOUT = 90


class StallRisk(RuntimeError):
    """nbclient sent the kernel a comm message while a cell ran."""


def requests_only(send):
    """The shell channel's `send`, refusing the comm messages nbclient sends
    for an Output widget filled with `with output:` (see the module's doc)."""
    def send_requests_only(msg):
        if msg["header"]["msg_type"] == "comm_msg":
            raise StallRisk(
                "nbclient sent the kernel a comm message while a cell ran: an Output widget "
                "is filled with `with output:` (ipywidgets' interactive, interact or "
                "Output.capture). Under nbconvert and nbgrader this can stall the run until "
                "the cell's timeout; set the widget's outputs from the kernel with "
                "minitape.widgets.compat.outputs_of (tools/kernels.py says why).")
        return send(msg)
    return send_requests_only


class NotebookClient(nbclient.NotebookClient):
    """nbclient's NotebookClient: its kernel on Unix sockets (on POSIX), and
    a `StallRisk` where stock nbclient would send a comm message mid-cell."""

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        if os.name == "posix":
            folder = tempfile.mkdtemp(prefix="minitape-kernel-")
            weakref.finalize(km, shutil.rmtree, folder, True)
            km.transport, km.ip = "ipc", os.path.join(folder, "kernel")
        return km

    async def async_start_new_kernel_client(self):
        kc = await super().async_start_new_kernel_client()
        kc.shell_channel.send = requests_only(kc.shell_channel.send)
        return kc
