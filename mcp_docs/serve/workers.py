"""`mcp-docs serve --transport http --workers N`: N processes answer on one port over one index.

One Python process answers one tool call at a time on the CPU (the GIL), so a team's concurrent searches
queue behind each other. Here a supervisor holds the port and starts N worker processes that answer on it:

- worker 0 writes: it opens (creates, repairs) the index, reconciles it with the root, watches the root and
  embeds, exactly as a single `serve` does, and answers requests too;
- workers 1..N-1 only read: they open the catalog and vectors with SQLite's read-only mode and the Tantivy
  index without a writer, never write into the index folder, and see each commit of the writer (SQLite WAL
  at once, Tantivy within about a second).

Connections: the supervisor alone listens on the port; it accepts each connection and hands it to the worker
with the fewest open connections that is up and whose event loop is not stalled (handoff.py). A burst of 16
keep-alive connections is split 8/8 over 2 workers every time; a dead worker is skipped at once, and its
successor takes new connections as soon as it serves; while no worker can take one, connections wait in the
port's queue instead of being refused. (Before: on one shared listening socket the worker whose event loop woke
first accepted a whole burst, 16 benchmark clients on one worker in 2 of 3 rounds; with a SO_REUSEPORT socket
per worker, the kernel's hash split 16 connections 12/4 or worse about once in 13 bursts, and a hung worker kept
its share.) Windows, with no descriptor passing, keeps one listening socket that every worker accepts on.

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

from ..errors import IndexBusy, UserError, WorkerFailed
from ..settings import Settings, token_kept_from_children
from . import handoff
from .handoff import Dispatcher, WorkerEnd

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
    listening: SharedFlag  # a worker serves (takes connections): the supervisor prints the serving line
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


def open_front(listener: socket.socket, ctx: SpawnContext) -> tuple[Dispatcher | None, socket.socket | None]:
    """Listen on `listener`, bound by `bind_listener` (which fails if anything listens on the port), and say how
    connections reach the workers: a Dispatcher that accepts and hands them over (every system that passes
    descriptors), or, where none can, the listening socket itself, shared by every worker."""
    listener.listen(BACKLOG)  # from now connections wait in the queue until a worker takes them
    if not handoff.supported():
        return None, listener
    return Dispatcher(listener, ctx), None


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
    dispatcher, common = open_front(listener, ctx)

    def start(slot: _Slot) -> None:
        entry = dispatcher.open_line(slot.index) if dispatcher is not None else common
        slot.process = ctx.Process(
            target=_worker_main,
            args=(settings, host, entry, token, slot.index, shared, level, os.getpid()),
            name=f"mcp-docs-worker-{slot.index}",
            daemon=False,
        )
        slot.process.start()
        if dispatcher is not None:
            dispatcher.worker_started(slot.index)

    stopping = False

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt  # SIGTERM (a service manager, `docker stop`): the same clean stop as Ctrl-C

    previous = signal.signal(signal.SIGTERM, on_term)
    # The token reaches the workers through the spawn pipe (the `token` argument), never their environment,
    # which anyone who may read /proc/PID/environ sees (the supervisor's own is as it was given).
    with token_kept_from_children():
        announced = False
        try:
            if dispatcher is not None:
                dispatcher.start()
            for slot in slots:
                start(slot)
            while True:
                sentinels = {slot.process.sentinel: slot for slot in slots if slot.process is not None}
                timeout = 1.0 if announced else FLAG_POLL_SECONDS
                for ready in multiprocessing.connection.wait(list(sentinels), timeout=timeout):
                    slot = sentinels[ready]  # type: ignore[index]
                    if dispatcher is not None:
                        dispatcher.worker_gone(slot.index)
                    _handle_exit(slot, shared)
                    start(slot)
                if not announced and shared.listening.is_set():
                    print(serving_line(settings, host, listener, token), file=sys.stderr, flush=True)
                    announced = True
        except KeyboardInterrupt:
            stopping = True
        finally:
            signal.signal(signal.SIGTERM, previous)
            if dispatcher is not None:
                dispatcher.stop()  # no new connection for workers that are stopping
            listener.close()
            _stop_all(slots, quiet=stopping)


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
    entry: WorkerEnd | socket.socket | None,
    token: str | None,
    index: int,
    shared: Shared,
    log_level: int,
    parent: int,
) -> None:
    """One worker process: open the index (writing or reading), then answer HTTP on the connections the
    supervisor hands it on `entry` (a WorkerEnd), or that it accepts on `entry`, the listening socket shared by
    all (see `open_front`)."""
    _end_with_parent(parent)
    logging.basicConfig(level=log_level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from ..library import open_library
    from ..mcp.server import ServerState, build_server
    from .process import INITIAL_SYNC_WAIT_SECONDS, http_config, serve_http, start_background

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
        if isinstance(entry, WorkerEnd):
            # Ready (taking connections) only now, with the index open: until then the supervisor sends it none.
            handoff.serve_handed_off(http_config(mcp, settings, host, token), entry, shared.listening.set)
        elif entry is not None:
            shared.listening.set()
            serve_http(mcp, settings, host, entry, token)
    except KeyboardInterrupt:
        pass
    finally:
        if stop is not None:
            stop()
        library.close()
