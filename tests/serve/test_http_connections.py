"""Connections that hold the HTTP server without finishing a request (slowloris) are closed, their number is capped,
and a stop is not held up by them: real sockets against the real app served by uvicorn on 127.0.0.1 (in a thread,
with a short deadline and a small cap; the defaults are checked on the config serve_http uses, and the stop on a
real `serve` process)."""

from __future__ import annotations

import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
import uvicorn
from mcp import Client
from starlette.applications import Starlette

from mcp_docs.library import Library
from mcp_docs.mcp.server import build_server
from mcp_docs.serve.http_connections import MAX_CONNECTIONS, REQUEST_READ_SECONDS, connection_cap, guarded_protocol
from mcp_docs.serve.process import HTTP_SHUTDOWN_SECONDS, http_app, uvicorn_config
from tests.server_fixtures import child_env, free_port, start_http, stop

READ_SECONDS = 0.5
CAP = 4
HALF_HEAD = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
HALF_BODY = (
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"
)


@pytest.fixture
def port(library: Library) -> Iterator[int]:
    app = http_app(build_server(library), "127.0.0.1", None)
    port = free_port()
    config = uvicorn_config(app, host="127.0.0.1", port=port, http=guarded_protocol(READ_SECONDS, CAP))
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started
    yield port
    server.should_exit = True
    thread.join(10)


def closed_within(sock: socket.socket, seconds: float) -> bytes | None:
    """What the server sent before closing `sock`, or None if it was still open after `seconds`."""
    sock.settimeout(seconds)
    received = b""
    try:
        while chunk := sock.recv(4096):
            received += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return received


def test_connections_that_never_finish_a_request_are_closed(port: int, caplog: pytest.LogCaptureFixture) -> None:
    idle = socket.create_connection(("127.0.0.1", port))
    half_head = socket.create_connection(("127.0.0.1", port))
    half_head.sendall(HALF_HEAD)
    half_body = socket.create_connection(("127.0.0.1", port))
    half_body.sendall(HALF_BODY)
    half_modern = socket.create_connection(("127.0.0.1", port))  # the sessionless protocol: another SDK path
    half_modern.sendall(HALF_BODY.replace(b"Content-Length", b"MCP-Protocol-Version: 2026-07-28\r\nContent-Length"))
    trickle = socket.create_connection(("127.0.0.1", port))
    for _ in range(3):  # a byte now and then: every byte is news, yet the request never comes
        try:
            trickle.sendall(b"P")
        except OSError:  # already closed by the server
            break
        time.sleep(READ_SECONDS / 4)
    for sock in (idle, half_head, half_body, half_modern, trickle):
        assert closed_within(sock, 5) is not None
        sock.close()
    time.sleep(0.2)
    # a client that goes away mid-request is not a server error: no traceback per closed connection (a flood of
    # half-sent bodies logged ~700 bytes each, every read deadline)
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]


def test_a_request_sent_in_time_and_a_kept_alive_connection_are_served(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(5)
        for _ in range(2):  # one kept-alive connection, idle longer than the read deadline between requests
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            reply = sock.recv(4096)
            assert reply.startswith(b"HTTP/1.1 200 "), reply[:100]
            while not reply.endswith(b"}"):  # the rest of the JSON body
                reply += sock.recv(4096)
            time.sleep(READ_SECONDS * 1.5)


def test_beyond_the_cap_a_connection_gets_503_and_room_comes_back(port: int) -> None:
    held = [socket.create_connection(("127.0.0.1", port)) for _ in range(CAP)]
    time.sleep(0.1)
    extra = socket.create_connection(("127.0.0.1", port))
    reply = closed_within(extra, 5)
    assert reply is not None and reply.startswith(b"HTTP/1.1 503 ")
    for sock in held:
        assert closed_within(sock, 5) is not None  # the read deadline frees the slots
        sock.close()

    async def call() -> bool:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            result = await client.call_tool("list_documents", {})
            return not result.is_error and bool(result.structured_content and result.structured_content["total"])

    assert anyio.run(call)


def test_serve_uses_the_bounds_by_default() -> None:
    config = uvicorn_config(Starlette())
    config.load()
    protocol = config.http_protocol_class
    assert getattr(protocol, "read_seconds", None) == REQUEST_READ_SECONDS
    assert getattr(protocol, "max_connections", None) == connection_cap()
    assert 0 < connection_cap() <= MAX_CONNECTIONS
    assert config.timeout_graceful_shutdown == HTTP_SHUTDOWN_SECONDS


def test_sigterm_is_not_held_up_by_a_half_sent_request(vault: Path, tmp_path: Path) -> None:
    port = free_port()
    proc = start_http(vault, tmp_path / "index", port, child_env())
    try:
        half_body = socket.create_connection(("127.0.0.1", port))
        half_body.sendall(HALF_BODY)
        time.sleep(0.3)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(HTTP_SHUTDOWN_SECONDS + 5)  # before: waited for the client to give up
        assert time.monotonic() - started < HTTP_SHUTDOWN_SECONDS  # the half-sent request is not waited for
        half_body.close()
    finally:
        stop(proc)
