"""JSON-RPC batches and malformed messages get one sentence, the same on both transports: over HTTP the SDK answered
pydantic's whole report (-32602, "4 validation errors for union[...]", input values, documentation links), over
stdio a generic "not a JSON-RPC 2.0 request". Real `mcp-docs serve` subprocesses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2

from tests.server_fixtures import initialize_request, spawn_stdio

from .common import http_server, stop_process
from .test_stdio import PROTOCOL, _line, _read_until

BATCH = [{"jsonrpc": "2.0", "id": 2, "method": "ping"}, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}]
MCP_HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": PROTOCOL,
}
PYDANTIC = ("validation error", "pydantic", "input_value", "JSONRPCRequest", "union[")


def _one_sentence(error: dict[str, Any], *words: str) -> None:
    message = error["message"]
    assert error["code"] == -32600 and all(w in message for w in words), error
    assert not any(p.lower() in message.lower() for p in PYDANTIC) and "\n" not in message, message


def test_http_batches_and_malformed_messages_get_one_sentence(vault: Path, tmp_path: Path) -> None:
    with http_server(vault, tmp_path / "idx") as (port, _proc):
        url = f"http://127.0.0.1:{port}/mcp"
        with httpx2.Client(headers=MCP_HEADERS, timeout=30) as http:
            init = http.post(url, content=initialize_request(1, PROTOCOL))
            assert init.status_code == 200
            session = init.headers.get("mcp-session-id")
            if session:
                http.headers["mcp-session-id"] = session
            for body, words, request_id in (
                (BATCH, ("batches are not supported",), None),
                ([], ("batches are not supported",), None),
                ({"jsonrpc": "2.0", "id": 5, "method": 12}, ("not a JSON-RPC 2.0 request",), 5),
                ({"jsonrpc": "2.0", "id": 6, "method": "ping", "params": "x"}, ("not a JSON-RPC 2.0 request",), 6),
                ({"jsonrpc": "2.0", "method": 7}, ("not a JSON-RPC 2.0 request",), None),  # a broken notification
            ):
                reply = http.post(url, json=body)
                assert reply.status_code == 400, reply.text
                answer = reply.json()
                assert answer["id"] == request_id
                _one_sentence(answer["error"], *words)
            # what is well formed still reaches the SDK, the body replayed as sent
            ping = http.post(url, json={"jsonrpc": "2.0", "id": 9, "method": "ping"})
            assert ping.status_code == 200 and '"id":9' in ping.text.replace(" ", ""), ping.text


def test_stdio_batches_get_one_sentence(vault: Path, tmp_path: Path) -> None:
    errlog = open(tmp_path / "stderr.txt", "wb")
    proc = spawn_stdio(vault, tmp_path / "idx", errlog, "--no-watch")
    assert proc.stdin is not None
    lines: list[bytes] = []
    try:
        proc.stdin.write(
            (initialize_request("init", PROTOCOL) + "\n").encode()
            + _line({"jsonrpc": "2.0", "method": "notifications/initialized"})
            + _line(BATCH)
            + _line({"jsonrpc": "2.0", "id": "after", "method": "ping"})
        )
        proc.stdin.flush()
        _read_until(proc, lines, {"init", "after"}, timeout=60)
    finally:
        stop_process(proc)
        errlog.close()
    anonymous = [m for m in map(json.loads, lines) if m.get("id") is None]
    assert len(anonymous) == 1
    _one_sentence(anonymous[0]["error"], "batches are not supported")
