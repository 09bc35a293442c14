"""Bounds on HTTP connections, below the ASGI app: a deadline to send each request, and a cap on connections.

uvicorn closes a connection only when it sits idle after a response (`timeout_keep_alive`). A connection that
sends nothing, or sends a request head or body a byte at a time ("slowloris"), is kept for ever, and each one
holds a file descriptor. Seen against `serve --transport http` (uvicorn 0.54, RLIMIT_NOFILE 20,000): three
processes opening connections that sent half a request head took every descriptor of the server in ~15 s; a
real MCP client then timed out, every refused accept() logged a traceback (127 MB of stderr in 40 s), and
with one request body left half-sent, SIGTERM waited until that client gave up.

`GuardedH11Protocol` is uvicorn's own HTTP/1.1 protocol with two additions:
- a request (head and body) must arrive within `read_seconds` of its first byte, or of the connection's
  opening: otherwise the connection is closed. A request fully read is never timed (a response, an SSE
  stream, may take as long as it needs), nor is a connection idle between requests (keep-alive's business);
- on a stop, a request still being sent is dropped at once, not waited for;
- at most `max_connections` connections at once, well below the descriptor limit so that the index, the
  documents and the catalog can always be opened: one more gets a 503 (which clients retry) and is closed.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from typing import Any

import h11
from starlette.requests import ClientDisconnect
from uvicorn.protocols.http.h11_impl import H11Protocol

# Generous for a tool call's few KB from a slow network, short for a client that holds a connection half-sent.
REQUEST_READ_SECONDS = 30.0
MAX_CONNECTIONS = 1000
# File descriptors kept free for the server's own files (index segments, SQLite, documents, the watcher).
RESERVED_DESCRIPTORS = 128

_BUSY_BODY = b"too many connections; try again shortly\n"
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: " + str(len(_BUSY_BODY)).encode("ascii") + b"\r\nretry-after: 1\r\nconnection: close\r\n\r\n"
    b"" + _BUSY_BODY
)


def connection_cap(wanted: int = MAX_CONNECTIONS) -> int:
    """`wanted`, lowered so that the connections can never take the descriptors the server needs itself."""
    try:
        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):
        return wanted
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, soft // 2, soft - RESERVED_DESCRIPTORS))


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a per-request read deadline and a connection cap (module docstring)."""

    read_seconds: float = REQUEST_READ_SECONDS
    max_connections: int = MAX_CONNECTIONS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            transport.write(_BUSY)
            transport.close()
            return
        self._arm_read_deadline()  # a connection that never sends a byte is timed too

    def data_received(self, data: bytes) -> None:
        if self._read_deadline is None and self.conn.their_state is h11.IDLE:
            self._arm_read_deadline()  # the first bytes of the next request on a kept-alive connection
        super().data_received(data)

    def on_response_complete(self) -> None:
        self._disarm_read_deadline()
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_read_deadline()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        """uvicorn's graceful stop waits for each request being served; one still being sent will never be
        answered, so its connection is closed at once instead of holding the stop up."""
        if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
            self.transport.close()
            return
        super().shutdown()

    def _arm_read_deadline(self) -> None:
        self._disarm_read_deadline()
        self._read_deadline = self.loop.call_later(self.read_seconds, self._read_deadline_passed)

    def _disarm_read_deadline(self) -> None:
        if self._read_deadline is not None:
            self._read_deadline.cancel()
            self._read_deadline = None

    def _read_deadline_passed(self) -> None:
        self._read_deadline = None
        # IDLE: no request head yet (or part of one); SEND_BODY: the body is still coming. Any other state means
        # the request was read (the response may take its time) or the connection is ending anyway.
        if self.conn.their_state in (h11.IDLE, h11.SEND_BODY) and not self.transport.is_closing():
            self.transport.close()


class ClientGoneFilter(logging.Filter):
    """Drops the SDK's error record, with its traceback, for a request whose client left before sending it whole
    (Starlette's ClientDisconnect): the client's doing, not a server error, and with the read deadline closing
    half-sent requests, a flood of them would write ~700 bytes of traceback each."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], ClientDisconnect))


_CLIENT_GONE = ClientGoneFilter()


def quiet_client_disconnects() -> None:
    """Install ClientGoneFilter (once) on the loggers that report it: the SDK's handshake-era path catches the
    exception and logs it; its sessionless (2026) path lets it reach uvicorn, which logs "Exception in ASGI
    application" with a longer traceback."""
    for name in ("mcp.server.streamable_http", "uvicorn.error"):
        logger = logging.getLogger(name)
        if _CLIENT_GONE not in logger.filters:
            logger.addFilter(_CLIENT_GONE)


def guarded_protocol(
    read_seconds: float = REQUEST_READ_SECONDS, max_connections: int | None = None
) -> type[GuardedH11Protocol]:
    """The protocol class to give uvicorn (`Config(http=...)`), with these bounds."""
    cap = connection_cap() if max_connections is None else max_connections
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"read_seconds": read_seconds, "max_connections": cap})


__all__ = [
    "MAX_CONNECTIONS",
    "REQUEST_READ_SECONDS",
    "ClientGoneFilter",
    "GuardedH11Protocol",
    "connection_cap",
    "guarded_protocol",
    "quiet_client_disconnects",
]
