"""`--workers N`: the supervisor accepts every connection and hands it to the least busy live worker.

Why not let the kernel spread connections: on one listening socket shared by the workers, the worker whose
event loop woke first accepted a whole burst (asyncio accepts every waiting connection at once), 16 benchmark
clients all on one worker in 2 of 3 rounds. With a SO_REUSEPORT socket per worker, the kernel picks a socket by
a hash of the client's address and port: 16 connections over 2 workers split 12/4 or worse in about 1 burst in
13 (binomial), and a worker that hangs (stopped, or its event loop blocked) keeps its hash share of new
connections, which wait in its queue. Here the supervisor alone listens, accepts, and passes each connection's
descriptor over a Unix socket to one worker (SCM_RIGHTS, `socket.send_fds`), then closes its own copy: the
connection is the worker's alone, answered by it until it closes, as if the worker had accepted it.

Which worker: the one with the fewest open connections (sent to it minus those it closed), ties in turn, among
those that are ready (serving), whose event loop ticked within `STALL_SECONDS` of the latest tick of any (a hung
worker gets nothing new), and that took what they were sent (fewer than `MAX_PENDING` descriptors waiting in
their Unix socket). A worker
that died is noticed at once: sending to it fails (its end of the Unix socket closed with it) and the connection
goes to the next worker, so no connection waits for a dead or restarting worker. The supervisor keeps its copy
of each connection until the worker has taken it off its Unix socket (the `received` count): one sent to a
worker that dies before taking it (a kill -9 leaves a few milliseconds in which sends still succeed) is handed to
another worker, not closed with the dead one's socket. Its copy is closed as soon as the worker has taken it (the
connection ends when the worker closes it: the supervisor looks every `ACCEPT_POLL_SECONDS` at most). A worker
that hangs keeps what it was sent in the second before it was seen to stall (it cannot be taken back without
two processes serving one connection). While no worker can take a connection, the supervisor accepts
no more: new connections wait in the kernel's queue of the listening socket, and are answered once a worker is
back (at start, and when every worker is down at once) instead of being refused.

The Unix sockets are pairs made by the supervisor for each start of a worker: no name in the file system that
another program could connect to. Needs SCM_RIGHTS (`socket.send_fds`): Linux, macOS and the BSDs; elsewhere
(Windows) workers.py keeps one listening socket that every worker accepts on.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import socket
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.context import SpawnContext
from typing import Any

import uvicorn

log = logging.getLogger(__name__)

STALL_SECONDS = 1.0  # a worker whose event loop last ticked this long before another's gets no new connection
HEARTBEAT_SECONDS = 0.1
MAX_PENDING = 64  # descriptors sent to a worker and not yet taken by it: beyond this it is not given more
ACCEPT_POLL_SECONDS = 0.05  # how soon the accepting thread notices a stop, or connections to reclaim
NO_WORKER_POLL_SECONDS = 0.01  # while no worker can take a connection, look again this often
_TOKEN = b"c"  # one byte per descriptor: the payload SCM_RIGHTS rides on


def supported() -> bool:
    """Whether connections can be handed to the workers here (SCM_RIGHTS over a Unix socket)."""
    return sys.platform != "win32" and hasattr(socket, "send_fds") and hasattr(socket, "AF_UNIX")


@dataclass
class LineState:
    """What one start of a worker tells the supervisor, in shared memory (each value written by one side only,
    whole, so no lock: a lock held by a killed worker would hang the supervisor)."""

    ready: Any  # RawValue "b": the worker serves (set by the worker)
    heartbeat: Any  # RawValue "d": time.monotonic() of its event loop's last tick (the worker)
    received: Any  # RawValue "Q": descriptors the worker took off its Unix socket (the worker)
    closed: Any  # RawValue "Q": connections the worker finished (the worker)

    @classmethod
    def new(cls, ctx: SpawnContext) -> LineState:
        return cls(ctx.RawValue("b", 0), ctx.RawValue("d", 0.0), ctx.RawValue("Q", 0), ctx.RawValue("Q", 0))


@dataclass
class WorkerEnd:
    """The worker's side of its line: passed to the worker process when it starts (spawn pickles both)."""

    sock: socket.socket
    state: LineState


@dataclass
class _Line:
    """The supervisor's side of one start of a worker."""

    index: int
    sock: socket.socket
    state: LineState
    worker_sock: socket.socket | None
    sent: int = 0
    broken: bool = False  # a send failed: the worker is gone (its replacement gets a new line)
    full_at: int | None = None  # `received` when a send found its socket full: skipped until it takes more
    # Connections sent and not yet taken by the worker (sequence number, the supervisor's copy): if the worker
    # dies before taking them, they go to another worker instead of being closed with its socket.
    unacked: deque[tuple[int, socket.socket]] = field(default_factory=deque)

    def open_connections(self) -> int:
        return self.sent - int(self.state.closed.value)

    def pending(self) -> int:
        return self.sent - int(self.state.received.value)

    def can_take(self) -> bool:
        if self.broken or not self.state.ready.value or self.pending() >= MAX_PENDING:
            return False
        # After a failed send: once it has taken more, or has nothing waiting (the failure was not a full socket).
        return self.full_at is None or int(self.state.received.value) != self.full_at or self.pending() == 0

    def last_tick(self) -> float:
        return float(self.state.heartbeat.value)

    def release_taken(self) -> None:
        """Close the supervisor's copies of the connections the worker has taken: they are its alone now."""
        taken = int(self.state.received.value)
        while self.unacked and self.unacked[0][0] <= taken:
            self.unacked.popleft()[1].close()

    def reclaim(self) -> list[socket.socket]:
        """The connections a dead worker never took, to hand to another one."""
        self.release_taken()
        left = [conn for _seq, conn in self.unacked]
        self.unacked.clear()
        return left


@dataclass
class Dispatcher:
    """The supervisor's accepting thread and its lines to the workers (module docstring)."""

    listener: socket.socket
    ctx: SpawnContext
    _lines: dict[int, _Line] = field(default_factory=dict)
    _orphans: deque[socket.socket] = field(default_factory=deque)  # reclaimed from dead workers: handed first
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _turn: int = 0

    # -- the supervisor's main thread: a line per start of a worker ------------------------------------------

    def open_line(self, index: int) -> WorkerEnd:
        """A new line for worker `index` (replacing a dead one's): the end to give the worker process."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        ours.setblocking(False)  # a worker that does not read never blocks the accepting thread
        line = _Line(index, ours, LineState.new(self.ctx), theirs)
        self._retire(index)
        with self._lock:
            self._lines[index] = line
        return WorkerEnd(theirs, line.state)

    def worker_started(self, index: int) -> None:
        """Close the supervisor's copy of the worker's end, now that the worker has its own: otherwise sends to a
        dead worker would still succeed, into a socket nobody reads."""
        line = self._lines.get(index)
        if line is not None and line.worker_sock is not None:
            line.worker_sock.close()
            line.worker_sock = None

    def worker_gone(self, index: int) -> None:
        """Worker `index` exited: what it was sent and never took goes to the others."""
        self._retire(index)

    def _retire(self, index: int) -> None:
        with self._lock:
            line = self._lines.pop(index, None)
            if line is not None:
                self._orphans.extend(line.reclaim())
        if line is not None:
            _close_line(line)

    # -- the accepting thread -------------------------------------------------------------------------------

    def start(self) -> None:
        self.listener.settimeout(ACCEPT_POLL_SECONDS)
        self._thread = threading.Thread(target=self._run, name="mcp-docs-accept", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting; connections still in the kernel's queue are refused (reset) when the listener closes."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(5 * ACCEPT_POLL_SECONDS)
        with self._lock:
            lines = list(self._lines.values())
            self._lines.clear()
            orphans = [*self._orphans, *(conn for line in lines for _seq, conn in line.unacked)]
            self._orphans.clear()
        for conn in orphans:
            conn.close()
        for line in lines:
            _close_line(line)

    def _run(self) -> None:
        while not self._stopping.is_set():
            with self._lock:
                orphan = self._orphans.popleft() if self._orphans else None
            if orphan is not None:
                self._hand_over(orphan)
                continue
            if not self._wait_for_a_worker():
                return
            try:
                conn, _address = self.listener.accept()
            except TimeoutError:
                self._release_taken()
                continue
            except OSError as exc:
                if self._stopping.is_set():
                    return
                # Out of descriptors (EMFILE/ENFILE), or a client gone before accept(): the connection stays in
                # the queue (or is gone), so wait a moment rather than spin.
                if exc.errno not in (errno.ECONNABORTED, errno.EPROTO):
                    log.warning("accepting a connection failed: %s", exc)
                time.sleep(NO_WORKER_POLL_SECONDS)
                continue
            self._hand_over(conn)

    def _release_taken(self) -> None:
        with self._lock:
            for line in self._lines.values():
                line.release_taken()

    def _wait_for_a_worker(self) -> bool:
        """Accept nothing while no worker can take it: the kernel's queue holds new connections meanwhile."""
        while not self._stopping.is_set():
            with self._lock:
                for line in self._lines.values():
                    line.release_taken()
                if any(line.can_take() for line in self._lines.values()):
                    return True
            time.sleep(NO_WORKER_POLL_SECONDS)
        return False

    def _hand_over(self, conn: socket.socket) -> None:
        """Send `conn` to a worker, which then owns it; closed if the server stops first."""
        while not self._stopping.is_set():
            with self._lock:
                line = self._choose()
                if line is not None and self._send(line, conn):
                    return
            if line is None or not line.broken:  # none able, or its socket full: give the workers a moment
                time.sleep(NO_WORKER_POLL_SECONDS)
        conn.close()

    def _choose(self) -> _Line | None:
        """The line to send the next connection on: fewest open connections, ties in turn, among the workers
        whose event loop ticked within STALL_SECONDS of the latest tick of any: measured against each other, not
        the clock, so that a busy machine that delays every worker's ticks leaves them all in the pool, while a
        hung worker falls behind the others and gets nothing new."""
        for line in self._lines.values():
            line.release_taken()
        able = [line for line in self._lines.values() if line.can_take()]
        if not able:
            return None
        latest = max(line.last_tick() for line in able)
        pool = [line for line in able if latest - line.last_tick() <= STALL_SECONDS]
        span = max(self._lines) + 1
        best = min(pool, key=lambda line: (line.open_connections(), (line.index - self._turn) % span))
        self._turn = best.index + 1
        return best

    def _send(self, line: _Line, conn: socket.socket) -> bool:
        try:
            socket.send_fds(line.sock, [_TOKEN], [conn.fileno()])
        except (BrokenPipeError, ConnectionResetError):  # the worker died (the supervisor restarts it, new line)
            # Its end is closed, so nothing it was sent can still be taken: safe to hand those to another worker.
            line.broken = True
            self._orphans.extend(line.reclaim())
            return False
        except OSError:  # its Unix socket is full (EAGAIN), or the kernel is short of memory or in-flight slots
            # The worker lives and may still take what it holds: nothing is reclaimed, it is skipped until it
            # takes more.
            line.full_at = int(line.state.received.value)
            return False
        line.sent += 1
        line.unacked.append((line.sent, conn))
        line.full_at = None
        return True


def _close_line(line: _Line) -> None:
    line.broken = True
    for sock in (line.sock, line.worker_sock):
        if sock is not None:
            sock.close()


# -- the worker's side ------------------------------------------------------------------------------------------


class HandedOffServer(uvicorn.Server):
    """uvicorn's server with no listening socket of its own: it serves the connections the supervisor sends
    on `end`, with uvicorn's protocol, connection tracking and graceful shutdown unchanged."""

    def __init__(self, config: uvicorn.Config, end: WorkerEnd, on_ready: Any = None) -> None:
        super().__init__(config)
        self._end = end
        self._on_ready = on_ready
        self._tasks: set[asyncio.Task[Any]] = set()
        self._beat: asyncio.TimerHandle | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=[])  # lifespan, state; no socket to listen on
        loop = asyncio.get_running_loop()
        closed = self._end.state.closed
        base = self.config.http_protocol_class

        def connection_lost(protocol: Any, exc: Exception | None) -> None:
            base.connection_lost(protocol, exc)
            closed.value += 1  # the supervisor's count of this worker's open connections

        counted = type(base.__name__, (base,), {"connection_lost": connection_lost})

        def protocol() -> asyncio.Protocol:
            return counted(
                config=self.config, server_state=self.server_state, app_state=self.lifespan.state, _loop=loop
            )

        self._end.sock.setblocking(False)
        loop.add_reader(self._end.sock.fileno(), self._take, loop, protocol)
        self._heartbeat(loop)
        self._end.state.ready.value = 1
        if self._on_ready is not None:
            self._on_ready()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._end.state.ready.value = 0
        self._stop_taking()
        await super().shutdown(sockets=sockets)

    def _heartbeat(self, loop: asyncio.AbstractEventLoop) -> None:
        self._end.state.heartbeat.value = time.monotonic()
        self._beat = loop.call_later(HEARTBEAT_SECONDS, self._heartbeat, loop)

    def _stop_taking(self) -> None:
        if self._beat is not None:
            self._beat.cancel()
            self._beat = None
        with contextlib.suppress(ValueError, OSError, RuntimeError):  # already removed, or closed
            asyncio.get_running_loop().remove_reader(self._end.sock.fileno())

    def _take(self, loop: asyncio.AbstractEventLoop, protocol: Any) -> None:
        """Every descriptor waiting on the line, each served as a connection accepted here."""
        state = self._end.state
        while True:
            if self.should_exit:  # stopping: what is still on the line goes to another worker once this one exits
                state.ready.value = 0
                self._stop_taking()
                return
            try:
                data, fds, _flags, _address = socket.recv_fds(self._end.sock, 1, 1)
            except BlockingIOError:
                return
            except OSError:
                data, fds = b"", []
            if not data and not fds:  # the supervisor is gone: nothing more will come
                self._stop_taking()
                return
            for fd in fds:
                state.received.value += 1
                conn = socket.socket(fileno=fd)
                task = loop.create_task(loop.connect_accepted_socket(protocol, conn))
                self._tasks.add(task)
                task.add_done_callback(self._connected(conn))

    def _connected(self, conn: socket.socket) -> Any:
        def done(task: asyncio.Task[Any]) -> None:
            self._tasks.discard(task)
            if task.cancelled() or task.exception() is not None:  # never reached the protocol
                conn.close()
                self._end.state.closed.value += 1

        return done


def serve_handed_off(config: uvicorn.Config, end: WorkerEnd, on_ready: Any = None) -> None:
    """Serve the connections the supervisor hands over on `end` until interrupted (a worker's main loop);
    `on_ready` is called once the worker takes connections."""
    import anyio

    server = HandedOffServer(config, end, on_ready)
    anyio.run(server.serve)


__all__ = ["Dispatcher", "HandedOffServer", "LineState", "WorkerEnd", "serve_handed_off", "supported"]
