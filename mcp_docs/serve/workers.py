"""`mcp-docs serve --transport http --workers N`: N processes answer on one port over one index.

One Python process answers one tool call at a time on the CPU (the GIL), so a team's concurrent searches
queue behind each other. Here a supervisor holds the port and starts N worker processes that answer on it:

- worker 0 writes: it opens (creates, repairs) the index, reconciles it with the root, watches the root and
  embeds, exactly as a single `serve` does, and answers requests too;
- workers 1..N-1 only read: they open the catalog and vectors with SQLite's read-only mode and the Tantivy
  index without a writer, never write into the index folder, and see each commit of the writer (SQLite WAL
  at once, Tantivy within about a second).

Connections, on Linux: each worker binds its own socket on the port with SO_REUSEPORT and listens on it once
its index is open; the kernel hands each new connection to one of the listening sockets by a hash of the
client's address and port, so a burst of connections is spread over the workers. (On one shared socket the
worker whose event loop woke first accepted the whole burst, since asyncio accepts every waiting connection at
once: 16 keep-alive clients all on one worker in 2 of 3 benchmark rounds, the others idle.) The supervisor
keeps the port bound but never listens on it, so it takes no connection (see `hold_port`). A worker's socket
is its own: when the worker dies the kernel closes it, and new connections go to the live workers at once; the
connections still waiting in its queue (taken by the kernel, not yet accepted by the worker) are reset, and
their clients see a connection reset (an HTTP client may retry). While no worker listens (at start, or every
worker down at once) connections are refused until one is back; the serving line is printed once the first
worker listens, so a client that waits for it is not refused. Linux lets only sockets of the same effective
user id into a port's SO_REUSEPORT group: another user's program cannot take a share of the connections.
Elsewhere (macOS and the BSDs accept SO_REUSEPORT without spreading connections, Windows has none) the
supervisor listens on one socket that every worker accepts on; connections made while a worker starts wait
in its queue.

A connection may land on any worker, so server-side sessions cannot work: `--workers` implies `--stateless`
(clients of the newest protocol have no sessions anyway).

Faults: a worker that dies is reported on stderr and started again; while the writer is down, the readers'
`/health` says "degraded" (searches still answer from the last commit): the supervisor says so, and each reader
checks the writer's process itself, since a supervisor that is gone (or stopped) can say nothing. Workers end
with their supervisor: killed with SIGKILL, it cannot stop them, and orphaned workers kept the port (a new
supervisor could not bind it) and answered, readers saying ok while nothing was indexed. So each worker asks the
kernel for SIGTERM when its parent dies (Linux's PR_SET_PDEATHSIG) and, everywhere, watches its parent id
(`_end_with_parent`). A worker that keeps dying
(`MAX_RESTARTS` exits within `RESTART_WINDOW_SECONDS`), or a writer that cannot open the index at all,
stops the whole server with one sentence and a non-zero exit status.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace
from multiprocessing.context import SpawnContext, SpawnProcess
from pathlib import Path
from types import FrameType
from typing import Any

from ..errors import IndexBusy, PortUnavailable, UserError, WorkerFailed
from ..settings import Settings, token_kept_from_children

log = logging.getLogger(__name__)

MAX_RESTARTS = 5
RESTART_WINDOW_SECONDS = 60.0
STOP_SECONDS = 10.0  # a worker's graceful shutdown (uvicorn finishes the requests in flight), then SIGKILL
READER_WAIT_SECONDS = 0.5
FLAG_POLL_SECONDS = 0.05
EXIT_REFUSED = 3  # a worker's exit status for "cannot start with these settings": restarting would not help
PARENT_POLL_SECONDS = 0.5
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
BACKLOG = 2048  # uvicorn's default


class SharedFlag:
    """A yes/no in shared memory, with threading.Event's methods.

    Not multiprocessing.Event: its lock would stay taken forever if a worker were killed while reading it
    (every /health and search reads these), and the supervisor and every other worker would hang on it. One
    byte read or written whole needs no lock."""

    def __init__(self, ctx: SpawnContext) -> None:
        self._value = ctx.RawValue("b", 0)

    def is_set(self) -> bool:
        return bool(self._value.value)

    def set(self) -> None:
        self._value.value = 1

    def clear(self) -> None:
        self._value.value = 0

    def wait(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.is_set():
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(FLAG_POLL_SECONDS)
        return True


@dataclass
class Shared:
    """What the workers share, through the supervisor."""

    storage_ready: SharedFlag  # the writer has opened (created or repaired) the index folder: readers may open it
    initial_sync_done: SharedFlag  # the writer's first reconciliation is over (/health "indexing", search notes)
    writer_up: SharedFlag  # the writer is running; cleared by the supervisor when it dies
    listening: SharedFlag  # a worker listens: the supervisor prints the serving line
    writer_pid: Any = None  # a shared int: the writer's process id, 0 before it starts


class WriterAlive:
    """`writer_up` as the readers see it: set by the supervisor, and the writer's process really there.

    The supervisor clears `writer_up` when the writer dies; a supervisor killed or stopped (SIGSTOP) never does,
    and readers said "ok" over an index nobody kept fresh. A process that died and was not reaped yet (a
    zombie, as under a stopped supervisor) counts as dead."""

    def __init__(self, shared: Shared) -> None:
        self._shared = shared

    def is_set(self) -> bool:
        return self._shared.writer_up.is_set() and _running(int(self._shared.writer_pid.value))

    def set(self) -> None:
        self._shared.writer_up.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._shared.writer_up.wait(timeout) and self.is_set()


def _running(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process took the id: not our writer
        return False
    try:  # Linux: "pid (name) S ...": the state follows the last ')'
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def _end_with_parent(parent: int) -> None:
    """This worker gets SIGTERM (uvicorn's graceful stop) when its supervisor dies, and exits at once if it already
    has. Linux: PR_SET_PDEATHSIG, from the kernel at the parent's death; everywhere (and in case the signal is
    missed): a daemon thread that notices the parent id change, then exits the process if SIGTERM did not."""
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError, TypeError):
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # died before the request above took effect
        os._exit(0)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        log.warning("the supervisor (pid %s) is gone: this worker stops", parent)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(STOP_SECONDS)
        os._exit(0)  # the graceful stop did not end the process

    threading.Thread(target=watch, name="mcp-docs-parent-watch", daemon=True).start()


@dataclass
class _Slot:
    index: int
    process: SpawnProcess | None = None
    exits: deque[float] = field(default_factory=deque)

    @property
    def role(self) -> str:
        return "writer" if self.index == 0 else "reader"

    def name(self) -> str:
        pid = self.process.pid if self.process is not None else "?"
        return f"worker {self.index} ({self.role}, pid {pid})"


def hold_port(host: str, listener: socket.socket) -> tuple[socket.socket, socket.socket | None]:
    """The socket the supervisor holds on `listener`'s port, and the listening socket every worker shares, or
    None where each worker binds and listens on its own (Linux). `listener` comes from `bind_listener`, bound
    without SO_REUSEPORT: that bind failed if anything listened on the port, another `--workers` server of
    this user included (its SO_REUSEPORT sockets would have let ours into their group)."""
    from .process import bind_listener

    if sys.platform != "linux" or not hasattr(socket, "SO_REUSEPORT"):
        # macOS and the BSDs give every connection to one socket of a SO_REUSEPORT port (the newest): all the
        # workers accept on one socket instead, listening now so connections made while they load wait.
        listener.listen(BACKLOG)
        return listener, listener
    # The port, with SO_REUSEPORT so the workers' sockets can bind it too, held and never listened on: a TCP
    # socket enters the port's group, and the kernel's table of listening sockets that incoming connections are
    # matched against, only at listen(); bound, it takes no connection (with only this socket, a connection is
    # refused; beside one listening worker, that worker accepts them all: tests/serve/test_workers.py). It
    # keeps the port while workers restart against binds without SO_REUSEADDR; a program that sets
    # SO_REUSEADDR could still listen on it while no worker does, as in a single `serve` between binding and
    # uvicorn's start (the workers would then stop with "port in use"). Bound beside `listener` (both
    # SO_REUSEADDR, neither listening), then `listener` is closed: no instant where the port is free.
    try:
        held = bind_listener(host, listener.getsockname()[1], reuse_port=True)
    finally:
        listener.close()
    return held, None


def serve_workers(settings: Settings, host: str, listener: socket.socket, token: str | None) -> None:
    """Run `settings.workers` worker processes on `listener`'s port until interrupted; raise WorkerFailed if they
    fail. Closes `listener`."""
    from .process import serving_line

    if not settings.stateless:
        log.info("--workers implies --stateless: a session's requests could reach any worker")
        settings = replace(settings, stateless=True)
    ctx = multiprocessing.get_context("spawn")  # no fork of a process that may hold threads and open files
    shared = Shared(SharedFlag(ctx), SharedFlag(ctx), SharedFlag(ctx), SharedFlag(ctx), ctx.RawValue("i", 0))
    slots = [_Slot(i) for i in range(settings.workers)]
    level = logging.getLogger("mcp_docs").getEffectiveLevel()
    held, common = hold_port(host, listener)
    port = held.getsockname()[1]  # the one the system chose when asked for port 0

    def start(slot: _Slot) -> None:
        slot.process = ctx.Process(
            target=_worker_main,
            args=(settings, host, port, common, token, slot.index, shared, level, os.getpid()),
            name=f"mcp-docs-worker-{slot.index}",
            daemon=False,
        )
        slot.process.start()

    stopping = False

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt  # SIGTERM (a service manager, `docker stop`): the same clean stop as Ctrl-C

    previous = signal.signal(signal.SIGTERM, on_term)
    # The token reaches the workers through the spawn pipe (the `token` argument), never their environment,
    # which anyone who may read /proc/PID/environ sees (the supervisor's own is as it was given).
    with token_kept_from_children():
        announced = False
        try:
            for slot in slots:
                start(slot)
            while True:
                sentinels = {slot.process.sentinel: slot for slot in slots if slot.process is not None}
                timeout = 1.0 if announced else FLAG_POLL_SECONDS
                for ready in multiprocessing.connection.wait(list(sentinels), timeout=timeout):
                    slot = sentinels[ready]  # type: ignore[index]
                    _handle_exit(slot, shared)
                    start(slot)
                if not announced and shared.listening.is_set():
                    print(serving_line(settings, host, held, token), file=sys.stderr, flush=True)
                    announced = True
        except KeyboardInterrupt:
            stopping = True
        finally:
            signal.signal(signal.SIGTERM, previous)
            _stop_all(slots, quiet=stopping)
            held.close()


def _handle_exit(slot: _Slot, shared: Shared) -> None:
    """Report a worker's exit; raise WorkerFailed when restarting it would not help."""
    assert slot.process is not None
    slot.process.join(STOP_SECONDS)  # its sentinel closes a moment before the exit status is there to read
    code = slot.process.exitcode
    how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with status {code}"
    if slot.index == 0:
        shared.writer_up.clear()
    if code == EXIT_REFUSED:
        raise WorkerFailed(f"{slot.name()} could not start (its reason is above); stopping the server.")
    now = time.monotonic()
    slot.exits.append(now)
    while slot.exits and now - slot.exits[0] > RESTART_WINDOW_SECONDS:
        slot.exits.popleft()
    if len(slot.exits) >= MAX_RESTARTS:
        raise WorkerFailed(
            f"{slot.name()} {how}, its {len(slot.exits)}th exit within {RESTART_WINDOW_SECONDS:.0f} s: "
            "stopping the server (see the errors above)."
        )
    print(f"mcp-docs: {slot.name()} {how}; starting it again", file=sys.stderr, flush=True)


def _stop_all(slots: list[_Slot], quiet: bool) -> None:
    running = [s.process for s in slots if s.process is not None and s.process.is_alive()]
    for process in running:
        process.terminate()  # SIGTERM: uvicorn's graceful shutdown
    deadline = time.monotonic() + STOP_SECONDS
    for process in running:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            if not quiet:
                log.warning("worker pid %s did not stop in %.0f s: killing it", process.pid, STOP_SECONDS)
            process.kill()
            process.join()


def _worker_main(
    settings: Settings,
    host: str,
    port: int,
    common: socket.socket | None,
    token: str | None,
    index: int,
    shared: Shared,
    log_level: int,
    parent: int,
) -> None:
    """One worker process: open the index (writing or reading), then answer HTTP on its own socket on `port`,
    or on `common`, the supervisor's socket shared by all (see `hold_port`)."""
    _end_with_parent(parent)
    logging.basicConfig(level=log_level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from ..library import open_library
    from ..mcp.server import ServerState, build_server
    from .process import INITIAL_SYNC_WAIT_SECONDS, bind_listener, serve_http, start_background

    writer = index == 0
    try:
        if writer:
            library = open_library(settings)
            shared.writer_pid.value = os.getpid()
            shared.storage_ready.set()
            shared.writer_up.set()
        else:
            while not shared.storage_ready.wait(READER_WAIT_SECONDS):
                pass
            library = open_library(settings, read_only=True)
    except (UserError, ValueError, IndexBusy) as exc:  # IndexBusy: another process writes an index it cannot read
        print(f"mcp-docs: worker {index}: {exc}", file=sys.stderr, flush=True)
        sys.exit(EXIT_REFUSED)
    except KeyboardInterrupt:
        return
    state = ServerState(shared.initial_sync_done, "writer" if writer else "reader", WriterAlive(shared))
    stop = start_background(library, state, settings.watch) if writer else None
    try:
        if writer:
            state.initial_sync_done.wait(INITIAL_SYNC_WAIT_SECONDS)
        mcp = build_server(library, state)
        if common is None:
            # Listening only now, with the index open: until then the kernel gives this worker no connection.
            # The socket is this process's alone, so the kernel closes it (and takes it out of the port's group)
            # the moment the process dies.
            try:
                sock = bind_listener(host, port, reuse_port=True)
            except PortUnavailable as exc:  # taken by another program while no worker listened (see hold_port)
                print(f"mcp-docs: worker {index}: {exc}", file=sys.stderr, flush=True)
                sys.exit(EXIT_REFUSED)
            sock.listen(BACKLOG)
        else:
            sock = common
        shared.listening.set()
        serve_http(mcp, settings, host, sock, token)
    except KeyboardInterrupt:
        pass
    finally:
        if stop is not None:
            stop()
        library.close()
