"""Streamable HTTP on 127.0.0.1: health, Host/Origin validation, bearer token, many concurrent clients."""

from __future__ import annotations

import subprocess
import sys

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .server_fixtures import (  # noqa: F401
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
    with pytest.raises(Exception):
        async with _client(http_server, token=None) as client:
            await client.list_tools()


def test_non_loopback_bind_without_token_refuses_to_start(vault, tmp_path) -> None:  # noqa: F811
    proc = subprocess.run(
        [sys.executable, *serve_args(vault, tmp_path / "index", "--transport", "http", "--host", "0.0.0.0",
                                     "--port", str(free_port()))],
        capture_output=True, text=True, timeout=30, env=child_env(),
    )
    assert proc.returncode != 0
    assert "token" in proc.stderr and "MCP_DOCS_TOKEN" in proc.stderr
    assert "Traceback" not in proc.stderr
