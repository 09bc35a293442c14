"""Requirement 5: over stdio, stdout carries only JSON-RPC — under malformed and fuzzed input — and no
traceback ever reaches the client. The server is the real `python -m mcp_docs serve` subprocess."""

from __future__ import annotations

import json
import random
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_docs.library import Library
from mcp_docs.settings import Settings
from tests.conftest import OUTSIDE_MARKER
from tests.server_fixtures import initialize_request, spawn_stdio, stdio_params

from .common import TRAVERSALS, result_text, stop_process

PROTOCOL = "2025-11-25"


def _line(obj: Any) -> bytes:
    return (json.dumps(obj) + "\n").encode()


def _malformed() -> list[bytes]:
    rng = random.Random(1234)
    junk = [
        bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))).replace(b"\n", b" ") + b"\n" for _ in range(20)
    ]
    return [
        b"\n",
        b"not json at all\n",
        b"{\n",
        b'{"jsonrpc": "2.0", "id": 1, "method": \n',
        b"[]\n",
        b"[1, 2, 3]\n",
        b"null\n",
        b"42\n",
        b'"a string"\n',
        b'{"jsonrpc": "1.0", "id": 2, "method": "ping"}\n',
        b'{"id": 3, "method": "ping"}\n',
        b'{"jsonrpc": "2.0", "id": {"nested": true}, "method": "ping"}\n',
        b'{"jsonrpc": "2.0", "id": 4, "method": 12}\n',
        b'{"jsonrpc": "2.0", "id": 5}\n',
        b'{"jsonrpc": "2.0", "id": 6, "method": "no/such/method"}\n',
        b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": "not an object"}\n',
        b'{"jsonrpc": "2.0", "result": {}, "id": 999}\n',  # a response nobody asked for
        b'{"jsonrpc": "2.0", "error": {"code": 1, "message": "x"}, "id": 998}\n',
        b'{"jsonrpc": "2.0", "method": "notifications/unknown"}\n',
        b"\xff\xfe\x00\x01 invalid utf-8\n",
        b'{"jsonrpc": "2.0", "id": 8, "method": "ping", "params": {"_meta": ' + b"[" * 5000 + b"]" * 5000 + b"}}\n",
        b'{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"pad": "' + b"A" * 2_000_000 + b'"}}\n',
        *junk,
    ]


# ids of calls in _calls() whose input is odd but servable (clamped limits, a query of control characters)
MAY_SUCCEED = {112, 113, 114}


def _calls() -> list[bytes]:
    out = []
    n = 100
    bad_args: list[tuple[str, Any]] = [
        ("read_document", {"id": "../outside/secret.md"}),
        ("read_document", {"id": "leak.md"}),
        ("read_document", {"id": 12}),
        ("read_document", {"id": None}),
        ("read_document", {}),
        ("read_document", {"id": "guides/writing.md", "max_chars": "many"}),
        ("read_document", {"id": "guides/writing.md", "mode": "raw"}),
        ("read_section", {"id": ["a"], "section": {"b": 1}}),
        ("list_documents", {"limit": 1.5}),
        ("list_documents", {"cursor": "!!!"}),
        ("search_documents", {"query": {"$ne": 1}}),
        ("search_documents", {"query": "x", "tags": "not-a-list"}),
        ("search_documents", {"query": "x", "max_results": 10**40}),
        ("search_documents", {"query": "\x00\x1b[31m" * 100}),
        ("no_such_tool", {}),
        ("read_document", "not an object"),
    ]
    bad_args += [("read_document", {"id": a}) for a in TRAVERSALS]
    for name, args in bad_args:
        n += 1
        out.append(
            _line({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name, "arguments": args}})
        )
    return out


def _read_until(proc: subprocess.Popen[bytes], lines: list[bytes], wanted: set[Any], timeout: float) -> None:
    """Collect stdout lines until every wanted id is answered (requests are served concurrently)."""
    assert proc.stdout is not None
    done = threading.Event()
    pending = set(wanted)

    def reader() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            try:
                pending.discard(json.loads(line).get("id"))
            except (ValueError, AttributeError, TypeError):
                continue
            if not pending:
                break
        done.set()

    threading.Thread(target=reader, daemon=True).start()
    assert done.wait(timeout), f"no answer to {sorted(map(str, pending))[:10]}"


def test_r5_stdout_is_only_json_rpc_under_malformed_input(vault: Path, tmp_path: Path) -> None:
    errlog = open(tmp_path / "stderr.txt", "wb")
    proc = spawn_stdio(vault, tmp_path / "idx", errlog, "--no-watch")
    assert proc.stdin is not None
    lines: list[bytes] = []
    try:
        stream = [*_malformed()[:10]]
        stream.append((initialize_request("init", PROTOCOL) + "\n").encode())
        stream.append(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        stream += _malformed()[10:]
        stream.append(_line({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}))
        stream += _calls()
        stream.append(_line({"jsonrpc": "2.0", "id": "final", "method": "ping"}))
        writer = threading.Thread(
            target=lambda: [proc.stdin.write(chunk) for chunk in stream] and proc.stdin.flush(),  # type: ignore[union-attr]
            daemon=True,
        )
        writer.start()
        _read_until(proc, lines, {"init", "list", "final", *range(101, 101 + len(_calls()))}, timeout=60)
        assert proc.poll() is None, "the server died on malformed input"
    finally:
        stop_process(proc)
        errlog.close()
    responses = []
    for raw in lines:
        text = raw.decode("utf-8")  # stdout is valid UTF-8 …
        msg = json.loads(text)  # … and every line is one JSON-RPC message
        assert isinstance(msg, dict) and msg.get("jsonrpc") == "2.0", text[:200]
        assert "Traceback" not in text and 'File "/' not in text, text[:500]
        assert OUTSIDE_MARKER not in text
        responses.append(msg)
    by_id = {m.get("id"): m for m in responses}
    assert "result" in by_id["init"]
    assert {t["name"] for t in by_id["list"]["result"]["tools"]} >= {"search_documents", "read_document"}
    assert "result" in by_id["final"]
    tool_answers = [m for m in responses if isinstance(m.get("id"), int) and m["id"] > 100]
    missing = set(range(101, 101 + len(_calls()))) - {m["id"] for m in tool_answers}
    assert not missing, f"calls never answered: {sorted(missing)}"  # each gets a result with is_error, or an error
    for m in tool_answers:
        if m["id"] in MAY_SUCCEED:
            assert "error" in m or m["result"]["content"], json.dumps(m)[:300]
        else:
            assert "error" in m or m["result"].get("isError") is True, json.dumps(m)[:300]


@pytest.mark.anyio
async def test_r5_real_stdio_client_attacks_get_tool_errors(vault: Path, tmp_path: Path) -> None:
    params = stdio_params(vault, tmp_path / "idx", "--no-watch")
    errlog = open(tmp_path / "stderr.txt", "w")
    started = time.perf_counter()
    try:
        async with Client(params) as c:
            for attack in TRAVERSALS:
                r = await c.call_tool("read_document", {"id": attack})
                text = result_text(r)
                assert r.is_error and OUTSIDE_MARKER not in text and "Traceback" not in text
            r = await c.call_tool("search_documents", {"query": "setup", "max_results": 10**9})
            assert not r.is_error and len(r.structured_content["results"]) <= 20
    finally:
        errlog.close()
    assert time.perf_counter() - started < 30


def test_r5_unreadable_requests_get_an_error_and_the_server_keeps_serving(vault: Path, tmp_path: Path) -> None:
    """The SDK drops a line it cannot parse without a reply; a lone surrogate escape is such a line (valid
    for Python's json, rejected by pydantic's), so its client waited forever. Each now gets a JSON-RPC error."""
    lone = [
        '{"jsonrpc": "2.0", "id": 201, "method": "tools/call", "params": {"name": "search_documents", '
        '"arguments": {"query": "\\ud800"}}}',
        '{"jsonrpc": "2.0", "id": 202, "method": "tools/call", "params": {"name": "read_document", '
        '"arguments": {"id": "a\\udfff.md"}}}',
        '{"jsonrpc": "2.0", "id": 203, "method": "\\udbff"}',
        '{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}',  # the id itself cannot be echoed: id null
        '{"jsonrpc": "2.0", "method": "notifications/\\ud800"}',  # a notification: no reply
    ]
    stream = [
        (initialize_request("init", PROTOCOL) + "\n").encode(),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        *[(text + "\n").encode() for text in lone],
        b"not json at all\n",
        b'{"id": 204, "method": "ping"}\n',  # JSON, but not JSON-RPC 2.0
        # strict JSON nested deeper than pydantic's parser goes (Python's json reads it): it was called "not strict"
        _line({"jsonrpc": "2.0", "id": 205, "method": "ping", "params": {"a": json.loads("[" * 300 + "]" * 300)}}),
        b"\n",
        _line(
            {
                "jsonrpc": "2.0",
                "id": "after",
                "method": "tools/call",
                "params": {"name": "search_documents", "arguments": {"query": "setup"}},
            }
        ),
    ]
    # Indexed first: the server answers while its first sync runs, and on a loaded machine "after" came before it.
    with Library(Settings.load(vault, tmp_path / "idx", embeddings="none", environ={})) as library:
        library.sync()
    errlog = open(tmp_path / "stderr.txt", "wb")
    proc = spawn_stdio(vault, tmp_path / "idx", errlog, "--no-watch")
    assert proc.stdin is not None
    lines: list[bytes] = []
    try:
        proc.stdin.write(b"".join(stream))
        proc.stdin.flush()
        _read_until(proc, lines, {"init", 201, 202, 203, 204, 205, "after"}, timeout=60)
        time.sleep(0.5)  # let anything unexpected arrive too
        assert proc.poll() is None
    finally:
        stop_process(proc)
        errlog.close()
    messages = [json.loads(raw.decode("utf-8")) for raw in lines]
    by_id = {m["id"]: m for m in messages if m.get("id") is not None}
    for request_id in (201, 202, 203):
        assert by_id[request_id]["error"]["code"] == -32600, by_id[request_id]
        assert "surrogate" in by_id[request_id]["error"]["message"]
    assert by_id[204]["error"]["code"] == -32600
    assert by_id[205]["error"]["code"] == -32600 and "nested" in by_id[205]["error"]["message"], by_id[205]
    anonymous = [m["error"]["code"] for m in messages if m.get("id") is None]
    assert sorted(anonymous) == [-32700, -32600]  # "not json at all", and the request whose id was unreadable
    assert by_id["after"]["result"]["structuredContent"]["results"], by_id["after"]  # and it serves on
