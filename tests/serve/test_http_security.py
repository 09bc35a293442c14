"""The HTTP security policy on its own: strict Host/Origin parsing, the bind policy, the middleware's answers.

The same checks run against a real server in tests/security/test_http.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_docs.serve.http_security import (
    MIN_NETWORK_TOKEN_CHARS,
    SecurityMiddleware,
    allowed_hosts_for,
    bind_policy_error,
    parse_host_header,
)

TOKEN = "a-long-enough-test-token-0123456789"


@pytest.mark.parametrize(
    "header, host",
    [
        ("localhost", "localhost"),
        ("LocalHost:8000", "localhost"),
        ("127.0.0.1", "127.0.0.1"),
        ("127.0.0.1:65535", "127.0.0.1"),
        ("[::1]", "::1"),
        ("[::1]:8000", "::1"),
        ("[0:0:0:0:0:0:0:1]:80", "::1"),
        ("docs.example.com.", "docs.example.com"),
        ("my-host", "my-host"),
    ],
)
def test_well_formed_host_headers(header: str, host: str) -> None:
    assert parse_host_header(header) == host


@pytest.mark.parametrize(
    "header",
    [
        "127.0.0.1:8000@evil.com",
        "localhost:evil",
        "localhost:",
        "localhost:99999",
        "localhost:8000:80",
        "user@localhost",
        "localhost/evil",
        "localhost?x",
        "localhost#x",
        "::1",
        "[::1",
        "[::1]x",
        "[evil]",
        "-localhost",
        "local_host",
        "a..b",
        "",
        " ",
        "localhost\x00.evil.com",
        "lоcalhost",
    ],
)
def test_malformed_host_headers_name_no_host(header: str) -> None:
    assert parse_host_header(header) is None


def test_allowed_hosts() -> None:
    assert allowed_hosts_for("127.0.0.1") == {"127.0.0.1", "localhost", "::1"}
    assert allowed_hosts_for("192.0.2.10") == {"127.0.0.1", "localhost", "::1", "192.0.2.10"}
    assert "2001:db8::1" in (allowed_hosts_for("2001:0DB8:0::1") or set())
    assert allowed_hosts_for("0.0.0.0") is None  # any well-formed host: the token protects it
    assert "docs.lan" in (allowed_hosts_for("0.0.0.0", ("docs.lan",)) or set())


def test_bind_policy() -> None:
    assert bind_policy_error("127.0.0.1", None) is None
    assert bind_policy_error("::1", "short") is None  # loopback: the token is the user's own business
    assert "without a token" in (bind_policy_error("0.0.0.0", None) or "")
    short = "x" * (MIN_NETWORK_TOKEN_CHARS - 1)
    refusal = bind_policy_error("0.0.0.0", short) or ""
    assert f"{len(short)}-character token" in refusal and short not in refusal
    assert bind_policy_error("0.0.0.0", "x" * MIN_NETWORK_TOKEN_CHARS) is None


async def _status(mw: SecurityMiddleware, headers: dict[str, str], path: str = "/mcp") -> int:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": path,
        "query_string": b"",
        "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()],
    }
    await mw(scope, receive, send)
    return next(m["status"] for m in sent if m["type"] == "http.response.start")


async def _ok_app(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


@pytest.mark.anyio
async def test_middleware_answers() -> None:
    mw = SecurityMiddleware(_ok_app, {"127.0.0.1", "localhost", "::1"}, {"https://app.example"}, TOKEN)
    auth = {"authorization": f"Bearer {TOKEN}"}
    assert await _status(mw, {"host": "127.0.0.1:8000", **auth}) == 200
    assert await _status(mw, {"host": "[::1]:8000", **auth}) == 200
    assert await _status(mw, {"host": "127.0.0.1:8000@evil.com", **auth}) == 421
    assert await _status(mw, {"host": "localhost:evil", **auth}) == 421
    assert await _status(mw, auth) == 421  # no Host at all
    assert await _status(mw, {"host": "localhost", "origin": "http://localhost:3000", **auth}) == 200
    assert await _status(mw, {"host": "localhost", "origin": "https://app.example", **auth}) == 200
    assert await _status(mw, {"host": "localhost", "origin": "http://localhost:evil", **auth}) == 403
    assert await _status(mw, {"host": "localhost", "origin": "http://127.0.0.1:80@evil.com", **auth}) == 403
    assert await _status(mw, {"host": "localhost"}) == 401
    assert await _status(mw, {"host": "localhost"}, path="/health") == 200
    wildcard = SecurityMiddleware(_ok_app, None, set(), TOKEN)
    assert await _status(wildcard, {"host": "docs.lan:8000", **auth}) == 200
    assert await _status(wildcard, {"host": "docs.lan:8000@evil.com", **auth}) == 421
