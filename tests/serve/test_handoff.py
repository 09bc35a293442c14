"""The supervisor's hand-off of connections (mcp_docs/serve/handoff.py), with real sockets: a listening TCP socket
on loopback, real clients, and the test in the place of each worker, reading its end of the Unix socket pair.

What the server-level tests in test_workers.py cannot make happen on purpose: a worker that dies with a
connection sent to it and not yet taken, and the choice between workers with known loads."""

from __future__ import annotations

import multiprocessing
import socket
import time
from collections.abc import Iterator

import pytest

from mcp_docs.serve import handoff
from mcp_docs.serve.handoff import Dispatcher, WorkerEnd
from mcp_docs.serve.process import bind_listener

pytestmark = pytest.mark.skipif(not handoff.supported(), reason="no descriptor passing here (Windows)")


class FakeWorker:
    """The test as worker `index`: it holds the worker's end (as the spawned process would) and says it serves."""

    def __init__(self, dispatcher: Dispatcher, index: int, ready: bool = True) -> None:
        end: WorkerEnd = dispatcher.open_line(index)
        self.sock = end.sock.dup()  # the worker process's copy; the supervisor closes its own next
        self.state = end.state
        dispatcher.worker_started(index)
        self.sock.settimeout(5)
        if ready:
            self.serve()

    def serve(self) -> None:
        self.state.heartbeat.value = time.monotonic() + 3600  # ticking for the whole test
        self.state.ready.value = 1

    def take(self) -> socket.socket:
        """The next connection handed over, as the worker takes it."""
        _data, fds, _flags, _address = socket.recv_fds(self.sock, 1, 1)
        assert len(fds) == 1
        self.state.received.value += 1
        return socket.socket(fileno=fds[0])

    def nothing_waiting(self) -> bool:
        self.sock.settimeout(0.3)
        try:
            return not self.sock.recv(1, socket.MSG_PEEK)
        except TimeoutError:
            return True
        finally:
            self.sock.settimeout(5)


@pytest.fixture
def dispatcher() -> Iterator[Dispatcher]:
    listener = bind_listener("127.0.0.1", 0)
    listener.listen(64)
    d = Dispatcher(listener, multiprocessing.get_context("spawn"))
    d.start()
    try:
        yield d
    finally:
        d.stop()
        listener.close()


def _connect(d: Dispatcher) -> socket.socket:
    return socket.create_connection(d.listener.getsockname(), timeout=5)


def _same_connection(client: socket.socket, served: socket.socket) -> bool:
    client.sendall(b"ping")
    served.settimeout(5)
    return served.recv(4) == b"ping"


def test_a_connection_a_dead_worker_never_took_goes_to_another_worker(dispatcher: Dispatcher) -> None:
    """A kill -9 leaves a few milliseconds in which sends to the dying worker still succeed: the connection sat
    in its Unix socket and was closed with it (the client saw a reset). The supervisor keeps its copy until the
    worker takes it, and hands it to the next worker."""
    first = FakeWorker(dispatcher, 0)
    client = _connect(dispatcher)
    deadline = time.monotonic() + 5
    while first.nothing_waiting():  # sent to worker 0, which does not take it
        assert time.monotonic() < deadline, "nothing was handed to the only worker"
    second = FakeWorker(dispatcher, 1)
    first.sock.close()  # worker 0 dies with the descriptor in its socket
    dispatcher.worker_gone(0)  # the supervisor notices (its process sentinel)
    served = second.take()
    assert _same_connection(client, served)
    client.close()
    served.close()


def test_connections_wait_until_a_worker_serves(dispatcher: Dispatcher) -> None:
    """At start (and with every worker down) a connection is queued, not refused, and handed over later."""
    worker = FakeWorker(dispatcher, 0, ready=False)
    client = _connect(dispatcher)  # accepted by the kernel into the listener's queue
    assert worker.nothing_waiting()
    worker.serve()
    served = worker.take()
    assert _same_connection(client, served)
    client.close()
    served.close()


def test_the_least_busy_worker_that_ticks_gets_the_next_connection(dispatcher: Dispatcher) -> None:
    busy, idle, hung = FakeWorker(dispatcher, 0), FakeWorker(dispatcher, 1), FakeWorker(dispatcher, 2)
    hung.state.heartbeat.value = time.monotonic() - 10  # its event loop has not ticked for 10 s
    kept = []
    for _ in range(2):  # both to the busy worker: the others are not serving yet
        idle.state.ready.value = 0
        kept += [_connect(dispatcher), busy.take()]
    idle.state.ready.value = 1
    kept += [_connect(dispatcher), _connect(dispatcher)]
    kept += [idle.take(), idle.take()]  # 0 open against 2: the idle worker, twice
    kept += [_connect(dispatcher), _connect(dispatcher)]
    kept += [busy.take(), idle.take()]  # 2 and 2: one each, in turn
    assert busy.nothing_waiting() and idle.nothing_waiting()
    assert hung.nothing_waiting()  # never chosen while another worker ticks
    for sock in kept:
        sock.close()


def test_a_closed_connection_no_longer_counts(dispatcher: Dispatcher) -> None:
    a, b = FakeWorker(dispatcher, 0), FakeWorker(dispatcher, 1)
    clients = [_connect(dispatcher), _connect(dispatcher)]
    served = [a.take(), b.take()]  # ties go in turn
    served[0].close()
    a.state.closed.value += 1  # worker 0's connection ended
    clients.append(_connect(dispatcher))
    served.append(a.take())  # 0 open against 1
    for sock in (*clients, *served):
        sock.close()
