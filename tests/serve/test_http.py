"""Streamable HTTP on 127.0.0.1: health, Host/Origin validation, bearer token, many concurrent clients,
bounded sessions, startup errors."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ..server_fixtures import (  # noqa: F401
    child_env,
    free_port,
    make_vault,
    serve_args,
    start_http,
    stop,
    vault,
)

TOKEN = "s3cret-token-for-tests-0123456789"
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
POST_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    """One server for the module (starting a process costs seconds); the tests only read."""
    base = tmp_path_factory.mktemp("http")
    port = free_port()
    proc = start_http(make_vault(base), base / "index", port, child_env(MCP_DOCS_TOKEN=TOKEN), "--no-watch")
    # the server answers after 3 s even when its first sync is not over (a loaded machine): these tests read it
    deadline = time.monotonic() + 60
    while httpx2.get(f"http://127.0.0.1:{port}/health").json()["indexing"] and time.monotonic() < deadline:
        time.sleep(0.1)
    yield f"http://127.0.0.1:{port}"
    stop(proc)


def _client(base: str, token: str | None = TOKEN) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60))
    return Client(streamable_http_client(f"{base}/mcp", http_client=http))


def test_health_and_request_checks(http_server: str) -> None:
    base = http_server
    health = httpx2.get(f"{base}/health")
    assert health.status_code == 200 and health.json()["documents"] == 16
    auth = {"Authorization": f"Bearer {TOKEN}"}
    # no token, wrong token → 401 with a challenge
    r = httpx2.post(f"{base}/mcp", json=LIST, headers=POST_HEADERS)
    assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
    r = httpx2.post(f"{base}/mcp", json=LIST, headers={**POST_HEADERS, "Authorization": "Bearer wrong"})
    assert r.status_code == 401
    r = httpx2.post(f"{base}/mcp", json=LIST, headers={**POST_HEADERS, "Authorization": TOKEN})
    assert r.status_code == 401
    # DNS rebinding: foreign Origin → 403, foreign Host → 421, even with the right token
    r = httpx2.post(f"{base}/mcp", json=LIST, headers={**POST_HEADERS, **auth, "Origin": "http://evil.example"})
    assert r.status_code == 403
    r = httpx2.post(f"{base}/mcp", json=LIST, headers={**POST_HEADERS, **auth, "Host": "evil.example"})
    assert r.status_code == 421
    r = httpx2.get(f"{base}/health", headers={"Host": "evil.example:80"})
    assert r.status_code == 421
    # a local browser origin is fine
    r = httpx2.get(f"{base}/health", headers={"Origin": "http://localhost:3000"})
    assert r.status_code == 200


@pytest.mark.anyio
async def test_tools_over_http_with_many_clients(http_server: str) -> None:
    async with _client(http_server) as client:
        r = await client.call_tool("search_documents", {"query": "restic"})
        assert r.structured_content["results"][0]["id"] == "notes/backups.md"
        r = await client.call_tool("read_section", {"id": "guides/install.md", "section": "windows"})
        assert "MSI" in r.structured_content["content"]

    failures: list[str] = []

    async def one(i: int) -> None:
        async with _client(http_server) as c:
            for _ in range(3):
                r = await c.call_tool("search_documents", {"query": f"small note number {i}"})
                if r.is_error or not r.structured_content["results"]:
                    failures.append(str(r.content))

    async with anyio.create_task_group() as tg:
        for i in range(8):
            tg.start_soon(one, i)
    assert failures == []


@pytest.mark.anyio
async def test_client_without_token_is_refused(http_server: str) -> None:
    with pytest.raises(Exception):  # noqa: B017 - whatever the client library raises for a 401
        async with _client(http_server, token=None) as client:
            await client.list_tools()


def test_non_loopback_bind_without_token_refuses_to_start(vault, tmp_path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            *serve_args(
                vault, tmp_path / "index", "--transport", "http", "--host", "0.0.0.0", "--port", str(free_port())
            ),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=child_env(),
    )
    assert proc.returncode != 0
    assert "token" in proc.stderr and "MCP_DOCS_TOKEN" in proc.stderr
    assert "Traceback" not in proc.stderr


# -- sessions: abandoned ones are bounded ------------------------------------------------------------

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
SESSION_HEADERS = {**POST_HEADERS, "MCP-Protocol-Version": "2025-11-25"}


async def _initialize(base: str, n: int, concurrency: int = 4) -> list[str]:
    """Open `n` sessions the way a client that never says goodbye does; returns their ids in order."""
    ids: list[str] = []
    todo = iter(range(n))

    async def worker(http: httpx2.AsyncClient) -> None:
        for _ in todo:
            r = await http.post(f"{base}/mcp", json=INIT, headers=POST_HEADERS)
            assert r.status_code == 200, (r.status_code, r.text[:200])
            ids.append(r.headers["mcp-session-id"])

    async with httpx2.AsyncClient(timeout=60) as http, anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker, http)
    return ids


def _ping(base: str, session: str) -> httpx2.Response:
    return httpx2.post(
        f"{base}/mcp",
        json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
        headers={**SESSION_HEADERS, "mcp-session-id": session},
        timeout=30,
    )


CAP = 20


@pytest.fixture(scope="module")
def capped_server(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("capped")
    port = free_port()
    env = child_env(MCP_DOCS_MAX_SESSIONS=str(CAP))
    proc = start_http(make_vault(tmp_path), tmp_path / "index", port, env, "--no-watch")
    yield f"http://127.0.0.1:{port}", proc
    stop(proc)


def test_abandoned_sessions_stay_capped_and_the_least_recently_used_idle_one_goes(capped_server) -> None:
    base, _ = capped_server
    first = anyio.run(_initialize, base, 5, 1)
    assert _ping(base, first[0]).status_code == 200  # used again: now the most recently used of the five
    ids = anyio.run(_initialize, base, 10 * CAP)  # every one answered 200: room is made, never 503
    assert httpx2.get(f"{base}/health").json()["sessions"] == CAP
    # the oldest ones were ended in the SDK too (not only uncounted): their ids answer 404, which tells a client
    # to initialize again, and a session the SDK no longer holds holds no memory
    for old in [first[1], *ids[: CAP // 2]]:
        r = _ping(base, old)
        assert r.status_code == 404 and r.json()["error"]["message"] == "Session not found"
    assert _ping(base, ids[-1]).status_code == 200
    fresh = anyio.run(_initialize, base, 1, 1)[0]
    assert _ping(base, fresh).status_code == 200
    assert httpx2.get(f"{base}/health").json()["sessions"] == CAP


def test_a_busy_session_is_never_evicted(capped_server) -> None:
    """A session with an open GET stream is in use even while it sends nothing: newer idle ones go first."""
    base, _ = capped_server
    busy = anyio.run(_initialize, base, 1, 1)[0]
    with httpx2.stream(
        "GET",
        f"{base}/mcp",
        headers={"accept": "text/event-stream", "mcp-session-id": busy, "MCP-Protocol-Version": "2025-11-25"},
        timeout=60,
    ) as stream:
        assert stream.status_code == 200
        anyio.run(_initialize, base, 3 * CAP)
        assert _ping(base, busy).status_code == 200
    assert httpx2.get(f"{base}/health").json()["sessions"] == CAP


def test_an_idle_session_expires_and_a_new_one_works(tmp_path) -> None:
    port = free_port()
    proc = start_http(
        make_vault(tmp_path), tmp_path / "index", port, child_env(MCP_DOCS_SESSION_IDLE_SECONDS="1"), "--no-watch"
    )
    base = f"http://127.0.0.1:{port}"
    try:
        session = anyio.run(_initialize, base, 1, 1)[0]
        assert _ping(base, session).status_code == 200
        assert httpx2.get(f"{base}/health").json()["sessions"] == 1
        deadline = time.monotonic() + 90
        while httpx2.get(f"{base}/health").json()["sessions"] and time.monotonic() < deadline:
            time.sleep(0.2)
        r = _ping(base, session)
        assert r.status_code == 404 and r.json()["error"]["message"] == "Session not found"
        assert _ping(base, anyio.run(_initialize, base, 1, 1)[0]).status_code == 200
    finally:
        stop(proc)


@pytest.mark.parametrize("name, value", [("MCP_DOCS_MAX_SESSIONS", "0"), ("MCP_DOCS_SESSION_IDLE_SECONDS", "soon")])
def test_bad_session_settings_are_one_sentence(vault, tmp_path, name: str, value: str) -> None:
    proc = subprocess.run(
        [sys.executable, *serve_args(vault, tmp_path / "index", "--transport", "http", "--port", str(free_port()))],
        capture_output=True,
        text=True,
        timeout=60,
        env=child_env(**{name: value}),
    )
    assert proc.returncode != 0 and name in proc.stderr and "Traceback" not in proc.stderr


# -- startup ----------------------------------------------------------------------------------------


def test_port_in_use_is_reported_before_serving(vault, tmp_path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, *serve_args(vault, tmp_path / "index", "--transport", "http", "--port", str(port))],
            capture_output=True,
            text=True,
            timeout=60,
            env=child_env(),
        )
    assert proc.returncode != 0
    assert f"port {port} is already in use" in proc.stderr and "--port" in proc.stderr
    assert "serving" not in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "index").exists()  # refused before opening anything


def test_the_server_keeps_idle_connections_longer_than_clients_do() -> None:
    """With equal idle times (uvicorn's and httpx's default, 5 s) a client reuses a connection at the instant
    the server closes it, and a call fails with a connection reset under load."""
    from starlette.applications import Starlette

    from mcp_docs.serve.process import uvicorn_config

    client_expiry = httpx2.Limits().keepalive_expiry
    assert client_expiry is not None
    assert uvicorn_config(Starlette()).timeout_keep_alive > 2 * client_expiry


def test_connections_to_the_listener_send_without_nagle_delay() -> None:
    """uvicorn serves the socket `bind_listener` made through asyncio, which turns Nagle's algorithm off only
    for sockets that say TCP: with it on, a response written as headers then body waited for the client's
    delayed ACK, about 40 ms per call on a keep-alive connection."""
    import asyncio

    from mcp_docs.serve.process import bind_listener

    async def accepted_nodelay() -> int:
        listener = bind_listener("127.0.0.1", 0)
        flags: list[int] = []

        def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            flags.append(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connection, sock=listener)  # as uvicorn does with sockets=[...]
        async with server:
            reader, writer = await asyncio.open_connection(*listener.getsockname()[:2])
            await reader.read()  # the server closed it: the callback ran
            writer.close()
        return flags[0]

    assert asyncio.run(accepted_nodelay()) != 0
