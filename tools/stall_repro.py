"""Why stock notebook runners stalled on the course's explorers (issue 28), in
two reproductions; tools/kernels.py tells the story.

    python -m tools.stall_repro        # the mechanism, pyzmq and jupyter_client alone (10 s)
    python -m tools.stall_repro 20     # and 20 stock nbclient runs of each two-cell notebook

1. nbclient waits for a cell's reply with `await socket.poll()` on an asyncio
   socket. If the reply arrives and, before the event loop looks at the
   socket again, jupyter_client's `Session.send` sends on that socket (it
   sends through a plain shadow of it), the send takes the socket's
   edge-triggered wake-up: the poll sleeps to its timeout with the reply
   waiting. The asyncio socket's own send, for comparison, wakes it.
2. nbclient makes such a send for each output that ipywidgets' `with
   output:` routes into an Output widget. A cell doing that stalls a share of
   stock runs for the whole cell timeout; the same displays set as the
   widget's outputs from the kernel (`minitape.widgets.compat.outputs_of`)
   never do.
"""
import asyncio
import sys
import time

WAIT = 3  # s a poll is given to wake up
WITH_OUTPUT = "with out:\n    for i in range(50):\n        display(i)"
OUTPUTS_OF = ("from minitape.widgets.compat import outputs_of\n"
              "out.outputs = outputs_of(lambda: [display(i) for i in range(50)])")


async def _poll_after_a_send(send):
    """Whether a poll on a DEALER wakes for a reply that arrived just before
    `send(socket)` ran, with no turn of the event loop in between."""
    import zmq
    import zmq.asyncio

    client = zmq.asyncio.Context().socket(zmq.DEALER)
    kernel = zmq.Context.instance().socket(zmq.ROUTER)
    client.connect(f"tcp://127.0.0.1:{kernel.bind_to_random_port('tcp://127.0.0.1')}")
    client.send(b"execute_request")
    ident, _ = kernel.recv_multipart()
    waiting = asyncio.ensure_future(client.poll(timeout=WAIT * 1000))
    await asyncio.sleep(0.2)             # the poll is waiting, the loop idle
    kernel.send_multipart([ident, b"execute_reply"])
    time.sleep(0.2)                      # the reply is in the client's socket
    send(client)
    start = time.monotonic()
    await waiting
    woke = time.monotonic() - start < WAIT - 0.5
    client.close(0)
    kernel.close(0)
    return woke


def mechanism():
    import jupyter_client
    import zmq
    from jupyter_client.session import Session

    print(f"pyzmq {zmq.__version__}, libzmq {zmq.zmq_version()}, "
          f"jupyter_client {jupyter_client.__version__}")
    session = Session()
    for name, send in [("no send", lambda s: None),
                       ("the asyncio socket's send", lambda s: s.send(b"comm_msg")),
                       ("jupyter_client's Session.send", lambda s: session.send(s, "comm_msg"))]:
        woke = asyncio.run(_poll_after_a_send(send))
        print(f"  reply arrives, then {name}: the poll "
              + ("wakes" if woke else f"sleeps {WAIT} s with the reply waiting"))


def notebook_runs(n, timeout=10):
    import nbclient
    import nbformat

    for name, fill in [("with out:", WITH_OUTPUT), ("outputs_of", OUTPUTS_OF)]:
        stalls = 0
        for _ in range(n):
            nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in (
                "import ipywidgets as widgets\nfrom IPython.display import display\n"
                "out = widgets.Output()\ndisplay(out)", fill)])
            start = time.monotonic()
            nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3").execute()
            stalls += time.monotonic() - start >= timeout  # the reply came with the timeout
        print(f"  {name:10} {stalls} of {n} stock nbclient runs stalled for the {timeout} s "
              "cell timeout")


if __name__ == "__main__":
    mechanism()
    if len(sys.argv) > 1:
        notebook_runs(int(sys.argv[1]))
