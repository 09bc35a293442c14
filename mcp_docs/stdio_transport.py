"""MCP over stdio, answering every line the SDK cannot read instead of dropping it.

The SDK's stdio transport parses each line with pydantic and hands a line it rejects to the server as
an exception, which the server only logs: the client gets no reply and waits for its timeout. JSON
with an unpaired surrogate escape (`"\\ud800"`) is such a line: valid for Python's `json`, rejected by
pydantic's strict parser. Here those exceptions become JSON-RPC errors written through the same
write stream as every other reply: -32700 (parse error, id null) for text that is not JSON, and
-32600 (invalid request) with the request's id when the id can be recovered. A line without an id
(a notification) or that looks like a response gets no reply, as JSON-RPC requires.

Around the SDK's transport, also: stdin is read by a daemon thread so that a session ending for any reason ends
the server (`_stdin_lines`); every request read before stdin closes is answered before the server stops
(`_Pending`); a closed stdout is a quiet exit and Ctrl-C ends the process at once (`run_stdio`).

Back-pressure: once MAX_UNANSWERED requests wait for their replies, no further line is read until one is
answered. A client that wrote requests and never read stdout made the server hold every reply (the SDK starts a
task per request, each holding its reply until stdout takes it): 371 MB after 3,000 calls. Now the replies
stuck are at most MAX_UNANSWERED; the stdin pipe fills and the client's own writes block, as with any pipe.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import io
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, BinaryIO, Self, cast

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream
from mcp.server import MCPServer
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)
from pydantic import ValidationError

log = logging.getLogger(__name__)

_STRICT_JSON = (
    "the message is not strict JSON (an unpaired surrogate escape such as \\ud800, or NaN/Infinity); "
    "send valid UTF-8 text"
)
_TOO_DEEP = "the message is nested too deeply (arrays or objects more than about 200 levels deep)"


def error_reply(exc: Exception) -> JSONRPCError | None:
    """The JSON-RPC error a client should get for a line the SDK rejected with `exc`, or None for no reply."""
    message, strict_detail = _rejected_message(exc)
    if message is _BLANK:
        return None
    if message is _UNREADABLE:
        return JSONRPCError(
            jsonrpc="2.0",
            id=None,
            error=ErrorData(code=PARSE_ERROR, message="Parse error: the line is not valid JSON."),
        )
    if isinstance(message, list):
        # MCP dropped JSON-RPC batches (2025-06-18); the SDK reads one message per line or POST
        detail = "JSON-RPC batches are not supported; send each message on its own"
        return JSONRPCError(
            jsonrpc="2.0", id=None, error=ErrorData(code=INVALID_REQUEST, message=f"Invalid request: {detail}.")
        )
    if isinstance(message, dict):
        if "method" not in message:
            return None  # a malformed response: replying could start an error ping-pong
        if "id" not in message:
            return None  # a notification never gets a reply
        request_id = message["id"]
        if not _usable_id(request_id):
            request_id = None
    else:
        request_id = None
    detail = strict_detail or "not a JSON-RPC 2.0 request (check jsonrpc, id, method and params)"
    error = ErrorData(code=INVALID_REQUEST, message=f"Invalid request: {detail}.")
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


_UNREADABLE = object()
_BLANK = object()


def _rejected_message(exc: Exception) -> tuple[Any, str | None]:
    """The rejected message as far as it can be read, and why strict JSON parsing failed (None: it did not)."""
    if not isinstance(exc, ValidationError):
        return _UNREADABLE, None
    for error in exc.errors():
        if error["type"] == "json_invalid":
            line = error.get("input")
            if isinstance(line, str) and not line.strip():
                return _BLANK, None
            # pydantic's parser stops at a depth Python's json reads fine: say so, not "not strict JSON"
            why = _TOO_DEEP if "recursion limit" in str(error.get("msg", "")) else _STRICT_JSON
            try:
                return json.loads(line), why  # lenient: accepts lone surrogates, NaN
            except (TypeError, ValueError, RecursionError):
                return _UNREADABLE, None
        # each union member reports the whole message: as its own input (not an object) or as the
        # object a top-level field is missing from
        if len(error["loc"]) == 1 or (len(error["loc"]) == 2 and error["type"] == "missing"):
            return error.get("input"), None
    return _UNREADABLE, None


def _usable_id(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return False
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # the id itself holds the lone surrogate: it cannot be echoed
            return False
    return True


# At the end of stdin, how long the calls already read may take to be answered before the server stops.
DRAIN_SECONDS = 10.0
# Requests read and not answered yet, beyond which no more are read (see the module's docstring). Far above what
# a client keeps in flight (docs-agent: a few tool calls at once), small enough that 32 replies of the 50,000-
# character maximum are a few MB.
MAX_UNANSWERED = 32


class _Pending:
    """The requests read from the client and not answered yet, by id.

    At the end of stdin the SDK cancels the calls still running, and their replies are lost: a client that writes
    its requests and closes stdin (a script, `... | mcp-docs serve`) got 1 to 3 of 8. The end of stdin is passed
    on only once those are answered (or after DRAIN_SECONDS)."""

    def __init__(self) -> None:
        self._ids: set[tuple[str, object]] = set()
        self._changed = anyio.Event()

    @staticmethod
    def _key(request_id: object) -> tuple[str, object]:
        return (type(request_id).__name__, request_id)  # 1 and "1" are two ids

    def read(self, message: object) -> None:
        if isinstance(message, JSONRPCRequest):
            self._ids.add(self._key(message.id))
        elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            params = message.params if isinstance(message.params, dict) else {}
            self._ids.discard(self._key(params.get("requestId")))  # a cancelled request is never answered
            self._changed.set()

    def answered(self, message: object) -> None:
        if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None:
            self._ids.discard(self._key(message.id))
            self._changed.set()

    async def room(self, limit: int) -> None:
        """Return once fewer than `limit` requests wait for their replies."""
        while len(self._ids) >= limit:
            self._changed = anyio.Event()
            await self._changed.wait()

    async def drained(self, seconds: float) -> None:
        with anyio.move_on_after(seconds):
            while self._ids:
                await anyio.sleep(0.01)


class _ClosedOnExit:
    """`async with` a stream closes it (the SDK uses its streams that way)."""

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class _AnswerNotingWriteStream(_ClosedOnExit):
    """The transport's write stream, noting each reply in `_Pending`."""

    def __init__(self, inner: Any, pending: _Pending) -> None:
        self._inner = inner
        self._pending = pending

    async def send(self, item: SessionMessage) -> None:
        await self._inner.send(item)
        self._pending.answered(item.message)

    async def aclose(self) -> None:
        await self._inner.aclose()


class _AnsweringReadStream(_ClosedOnExit):
    """The transport's read stream with rejected lines answered on the write stream and not passed on, and the
    end of stdin held back until the requests already read are answered (`_Pending`)."""

    def __init__(self, inner: Any, write_stream: Any, pending: _Pending | None = None) -> None:
        self._inner = inner
        self._write = write_stream
        self._pending = pending

    @property
    def last_context(self) -> contextvars.Context | None:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            if self._pending is not None:
                await self._pending.room(MAX_UNANSWERED)
            try:
                item = await self._inner.receive()
            except anyio.EndOfStream:
                if self._pending is not None:
                    await self._pending.drained(DRAIN_SECONDS)
                raise
            if not isinstance(item, Exception):
                if self._pending is not None:
                    self._pending.read(item.message)
                return item
            reply = error_reply(item)
            why = reply.error.message if reply else "no reply due (not a request)"
            log.warning("unreadable message on stdin: %s", why)
            if reply is not None:
                await self._write.send(SessionMessage(reply))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


def lowlevel_server(mcp: MCPServer) -> Server[Any]:
    """MCPServer's low-level server, to run it on our own streams.

    The SDK's one private attribute we use: `MCPServer.run_stdio_async` takes no streams, and MCPServer has no
    public accessor for its low-level server (mcp 2.3; the SDK's own in-process client reads it the same way).
    tests/test_server_middleware.py fails loudly if a release renames it.
    """
    server = getattr(mcp, "_lowlevel_server", None)
    if not isinstance(server, Server):
        raise RuntimeError("this mcp SDK release has no MCPServer._lowlevel_server: stdio_transport needs updating")
    return server


def run_stdio(mcp: MCPServer) -> None:
    """Serve MCP over stdin/stdout until the client closes stdin or stdout, or a signal ends the process.

    Ctrl-C (SIGINT) ends the process at once, as SIGTERM does: a clean stop would wait for a reply being written
    to a client that does not read it (the SDK writes in a worker thread that no cancellation reaches), and before
    stdin was read here, for the client to close stdin (a server that no longer answered yet never exited).
    Ending mid-way is safe: every index write is committed whole or rolled back (tests/security/test_crash.py)."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_DFL) if main else None
    try:
        anyio.run(serve_stdio, mcp)
    except* BrokenPipeError:  # the client closed our stdout: it is gone, there is nobody left to answer
        log.info("the client closed the server's stdout: stopping")
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


async def serve_stdio(mcp: MCPServer) -> None:
    """What `MCPServer.run_stdio_async` does, with unreadable lines answered and stdin read by `_stdin_lines`."""
    server = lowlevel_server(mcp)
    pending = _Pending()
    async with _stdin_lines() as lines, stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
        writer = _AnswerNotingWriteStream(write_stream, pending)
        reader = _AnsweringReadStream(read_stream, writer, pending)
        await server.run(reader, writer, server.create_initialization_options())


@asynccontextmanager
async def _stdin_lines() -> AsyncIterator[MemoryObjectReceiveStream[str]]:
    """The lines of stdin, as the SDK's transport reads them (UTF-8, bad bytes replaced), from a daemon thread.

    The SDK reads stdin in an AnyIO worker thread that cancellation cannot reach, so when anything else ended the
    session (the client closed stdout, an error), the server stopped answering yet waited for one more line
    before it could exit: for ever, with a client that keeps stdin open. Here waiting for a line is an ordinary
    receive, which a stop cancels; the thread left blocked on the pipe is a daemon and does not hold the process.
    While serving, fd 0 points at the null device, as the SDK does, so nothing else reads the protocol stream."""
    send, receive = anyio.create_memory_object_stream[str](0)
    loop = asyncio.get_running_loop()
    source, restore = _claim_stdin()

    def pump() -> None:
        try:
            for raw in source:
                line = raw.decode("utf-8", errors="replace")
                asyncio.run_coroutine_threadsafe(send.send(line), loop).result()  # one line at a time
        except Exception:  # the server stopped (loop closed, stream closed): nobody wants the rest
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(send.aclose(), loop).result()  # end of stdin

    threading.Thread(target=pump, name="mcp-docs-stdin", daemon=True).start()
    try:
        async with receive:
            yield receive
    finally:
        restore()


def _claim_stdin() -> tuple[BinaryIO, Callable[[], None]]:
    """A private duplicate of fd 0 to read the protocol from, with fd 0 pointed at the null device meanwhile;
    the function that points it back. The duplicate is never closed: the reading thread may still block on it."""
    stdin = sys.stdin
    try:
        # Started with fd 0 closed, Python has no sys.stdin and fd 0 is whatever file the process opened first
        # (the catalog, say): never read it, nor point it elsewhere.
        claimable = stdin is not None and stdin.fileno() == 0
        private = os.dup(0) if claimable else -1
    except (AttributeError, OSError, ValueError):
        claimable = False
    if not claimable:
        buffer = getattr(stdin, "buffer", None)  # a replaced sys.stdin (tests), or none at all: end of input
        return (buffer if buffer is not None else io.BytesIO()), lambda: None
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(devnull, 0)
        finally:
            os.close(devnull)

    def restore() -> None:
        with contextlib.suppress(OSError):
            os.dup2(private, 0)

    return os.fdopen(private, "rb", closefd=False), restore


__all__ = ["MAX_UNANSWERED", "error_reply", "lowlevel_server", "run_stdio", "serve_stdio"]
