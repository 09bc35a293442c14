"""Running the MCP server: one process over stdio or Streamable HTTP, and the work it does in the background.

The MCP side (tools, resources, instructions) is built by `mcp_docs.mcp.server.build_server`; this module
checks the transport, binds the port, reconciles and watches the index, and runs uvicorn. `workers.py` runs
several of these processes behind one port.
"""

from __future__ import annotations

import errno
import functools
import logging
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp.server import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from ..errors import ExposureRefused, IndexBusy, PortUnavailable, ServeOptionsConflict
from ..language import asks_identifier, load_identifier
from ..library import Library, open_library
from ..mcp.server import ServerState, build_server
from ..settings import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_SECONDS, Settings
from ..store.registry import store_kind
from .http_security import SecurityMiddleware, allowed_hosts_for, bind_policy_error, load_token
from .http_sessions import SessionLimiter
from .stdio import run_stdio

if TYPE_CHECKING:
    import uvicorn
    from starlette.types import ASGIApp

log = logging.getLogger(__name__)

INITIAL_SYNC_WAIT_SECONDS = 3.0
INITIAL_SYNC_RETRIES = 30


def http_app(
    mcp: MCPServer,
    host: str,
    token: str | None,
    *,
    allowed_hosts: tuple[str, ...] = (),
    allowed_origins: tuple[str, ...] = (),
    session_idle_seconds: float = DEFAULT_SESSION_IDLE_SECONDS,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    stateless: bool = False,
) -> Any:
    """The Starlette app for Streamable HTTP at /mcp and /health, behind SecurityMiddleware and SessionLimiter.

    `stateless`: no server-side session, each request stands alone, so any process or replica can answer any
    request (workers, a load balancer); clients of the newest protocol never open sessions anyway."""
    app = mcp.streamable_http_app(
        stateless_http=stateless,
        host=host,
        # Host/Origin are checked by SecurityMiddleware for every route, /health included.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        session_idle_timeout=session_idle_seconds,
        max_sessions=max_sessions,
    )
    from .http_connections import quiet_client_disconnects  # uvicorn's protocol: not imported for stdio

    quiet_client_disconnects()
    from .http_messages import JsonRpcShape  # batches and malformed messages: one sentence, not pydantic's report

    sessions = SessionLimiter(JsonRpcShape(app), max_sessions=max_sessions, idle_seconds=session_idle_seconds)
    app.state.sessions = sessions  # /health reports the count
    app.state.stateless = stateless
    return SecurityMiddleware(sessions, allowed_hosts_for(host, allowed_hosts), set(allowed_origins), token)


def start_background(library: Library, state: ServerState, watch: bool) -> Callable[[], None]:
    """Reconcile the index in the background, then keep it fresh; returns a stop function."""
    from ..watch import Watcher

    watcher = Watcher(library) if watch else None
    if watcher is not None:
        watcher.start()  # before the initial sync, so nothing saved meanwhile is missed

    def initial() -> None:
        started = time.perf_counter()
        try:
            for attempt in range(INITIAL_SYNC_RETRIES + 1):
                try:
                    report = library.sync()
                    break
                except IndexBusy as exc:  # another mcp-docs process is writing: wait for it, then reconcile
                    if attempt == INITIAL_SYNC_RETRIES:
                        log.warning("%s; serving the current index", exc)
                        report = None
                    else:
                        time.sleep(1.0)
            if report is not None:
                log.info(
                    "index reconciled in %.2fs: %d added, %d updated, %d deleted",
                    time.perf_counter() - started,
                    report.added,
                    report.updated,
                    report.deleted,
                )
                empty = library.empty_note()
                if empty:
                    log.warning("%s", empty)
        except Exception as exc:
            log.exception("initial sync failed")
            state.initial_sync_error = type(exc).__name__
        finally:
            state.initial_sync_done.set()
        try:
            # A background thread embeds what is pending now, then whatever the watcher changes later.
            library.start_embedding()
        except Exception:
            log.exception("starting the embedding worker failed; keyword search still works")
        warm_query_language(library)

    thread = threading.Thread(target=initial, name="mcp-docs-initial-sync", daemon=True)
    thread.start()

    def stop() -> None:
        if watcher is not None:
            watcher.stop()

    return stop


def warm_query_language(library: Library) -> None:
    """Load the language identifier now, in the background, when this collection's searches will ask it (a
    language without a function-word list: Czech, Thai, Khmer ...). Loaded by the first search instead, it took
    0.7 s of that search's 1.0 s on the Obsidian help vault (1.3-1.6 s over stdio on a shared machine). A
    collection whose searches never ask (the OpenTelemetry docs, English and French) loads nothing."""
    if not asks_identifier(library.language_counts):
        return
    started = time.perf_counter()
    try:
        load_identifier()
    except Exception:
        log.exception("loading the language identifier failed; the first search will try again")
        return
    log.info("language identifier loaded in %.2fs, before the first search needs it", time.perf_counter() - started)


def open_transport(settings: Settings, transport: str, host: str, port: int) -> tuple[socket.socket | None, str | None]:
    """Check the transport and, for HTTP, the bind policy and the port, before any work: a refusal or a taken
    port is one sentence at once. Returns the bound listener (None for stdio) and the bearer token."""
    if settings.workers > 1 and store_kind(settings).shared_between_servers:
        raise ServeOptionsConflict(
            "--workers is for the index folder; over PostgreSQL, start several `serve --store postgres --stateless` "
            "processes (on one host or many) behind a load balancer instead."
        )
    if settings.workers > 1 and transport != "http":
        raise ServeOptionsConflict("--workers needs --transport http (over stdio one client talks to one process).")
    if transport == "stdio":
        return None, None
    if transport != "http":
        raise ServeOptionsConflict(f"unknown transport '{transport}': use stdio or http.")
    token = load_token(settings.token, settings.token_file)
    refusal = bind_policy_error(host, token)
    if refusal:
        raise ExposureRefused(refusal)
    return bind_listener(host, port), token


def serve_one_process(settings: Settings, host: str, listener: socket.socket | None, token: str | None) -> None:
    """One process: open the library, reconcile and watch it, and serve MCP over `listener` (Streamable HTTP)
    or, without one, over stdio; closes the listener at the end. (`mcp-docs serve --workers N` runs N of these
    through workers.py.)"""

    # Over PostgreSQL, a server without a root only reads (any number of them, stateless); one with a root is the
    # one writer, as the embedded store's server is: it reconciles, watches and embeds, holding the writer lock
    # (a second writer is refused at start with one sentence).
    reader = not store_kind(settings).needs_root and not settings.has_root
    try:
        library = open_library(settings, read_only=reader)
    except BaseException:
        if listener is not None:
            listener.close()
        raise
    state = ServerState()
    if reader:
        state.initial_sync_done.set()
    stop = _nothing if reader else start_background(library, state, settings.watch)
    # Small roots are reconciled before the first request; big ones keep indexing while we answer.
    state.initial_sync_done.wait(INITIAL_SYNC_WAIT_SECONDS)
    mcp = build_server(library, state)
    try:
        if listener is None:
            run_stdio(mcp)
        else:
            print(serving_line(settings, host, listener, token), file=sys.stderr, flush=True)
            serve_http(mcp, settings, host, listener, token)
    except KeyboardInterrupt:
        pass
    finally:
        if listener is not None:
            listener.close()
        stop()
        library.close()


def _nothing() -> None:
    return None


def serve_http(mcp: MCPServer, settings: Settings, host: str, listener: socket.socket, token: str | None) -> None:
    """Answer Streamable HTTP on `listener` until interrupted (one process, or one worker of several)."""
    import anyio
    import uvicorn

    server = uvicorn.Server(http_config(mcp, settings, host, token))
    anyio.run(functools.partial(server.serve, sockets=[listener]))


def http_config(mcp: MCPServer, settings: Settings, host: str, token: str | None) -> uvicorn.Config:
    """uvicorn's configuration for the Streamable HTTP app with `settings`' bounds (a worker handed its
    connections by the supervisor serves the same, see handoff.py)."""
    app = http_app(
        mcp,
        host,
        token,
        allowed_hosts=settings.allowed_hosts,
        allowed_origins=settings.allowed_origins,
        session_idle_seconds=settings.session_idle_seconds,
        max_sessions=settings.max_sessions,
        stateless=settings.stateless,
    )
    return uvicorn_config(app)


def serving_line(settings: Settings, host: str, listener: socket.socket, token: str | None) -> str:
    extras = [f"{settings.workers} workers"] if settings.workers > 1 else []
    extras += ["stateless"] if settings.stateless else []
    extras += ["bearer token required"] if token else []
    where = f"http://{_url_host(host)}:{listener.getsockname()[1]}/mcp"
    kind = store_kind(settings)
    if not kind.needs_root:  # a store that serves without the root: say which index, and who writes it
        extras += [f"writing it from {settings.root}"] if settings.has_root else ["read-only"]
        return f"mcp-docs: serving {kind.describe(settings)} at {where}" + (f" ({', '.join(extras)})" if extras else "")
    return f"mcp-docs: serving {settings.root} at {where}" + (f" ({', '.join(extras)})" if extras else "")


# Longer than the idle expiry of HTTP clients' connection pools (httpx: 5 s, uvicorn's own default): with
# equal times, a client reuses a connection at the instant the server closes it and the call fails with a
# connection reset (seen under load in tests/security/test_concurrency.py).
HTTP_KEEP_ALIVE_SECONDS = 30
# On SIGTERM/Ctrl-C, requests in flight get this long to finish, then are cancelled: without a bound, one
# client holding a request half-sent (or an open stream) kept the server from exiting for as long as it liked.
# Below workers.STOP_SECONDS, so a worker stops by itself before it is killed.
HTTP_SHUTDOWN_SECONDS = 5


def uvicorn_config(app: ASGIApp, **options: Any) -> uvicorn.Config:
    import uvicorn

    from .http_connections import guarded_protocol

    defaults: dict[str, Any] = {
        "log_level": "warning",
        "lifespan": "on",
        "timeout_keep_alive": HTTP_KEEP_ALIVE_SECONDS,
        "timeout_graceful_shutdown": HTTP_SHUTDOWN_SECONDS,
        "http": guarded_protocol(),  # a deadline to send each request, a cap on connections (http_connections.py)
    }
    return uvicorn.Config(app, **{**defaults, **options})


def bind_listener(host: str, port: int) -> socket.socket:
    """The listening socket for uvicorn, bound here so that a taken port is one clear sentence, not a traceback."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on connections whose socket
    # says TCP, and with it on, a response written in several pieces can wait for the client's delayed ACK
    # (up to ~40 ms per call on Linux).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: restart over TIME_WAIT
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        where = f"{_url_host(host)}:{port}"
        if exc.errno == errno.EADDRINUSE:
            raise PortUnavailable(
                f"port {port} is already in use on {host or 'all interfaces'} (another server is "
                f"listening at {where}); stop it or choose another port with --port."
            ) from None
        raise PortUnavailable(f"cannot listen on {where}: {exc.strerror or exc}; check --host and --port.") from None
    except (socket.gaierror, OverflowError) as exc:  # an unknown host name, a port beyond 65535
        sock.close()
        raise PortUnavailable(f"cannot listen on {_url_host(host)}:{port}: {exc}; check --host and --port.") from None
    return sock


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


__all__ = [
    "INITIAL_SYNC_WAIT_SECONDS",
    "bind_listener",
    "http_app",
    "http_config",
    "open_transport",
    "serve_http",
    "serve_one_process",
    "serving_line",
    "start_background",
    "uvicorn_config",
]
