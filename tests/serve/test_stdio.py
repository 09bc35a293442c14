"""`python -m mcp_docs serve` as a stdio subprocess, through a real MCP client; the watcher keeps it fresh."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import anyio
import pytest
from mcp import Client

from ..server_fixtures import child_env, initialize_request, serve_args, stdio_params, vault, write  # noqa: F401


async def _wait_for(client: Client, query: str, want: str | None, timeout: float = 10.0) -> float:
    """Poll search until `want` is (or, with None, no longer is) among the result ids; returns the seconds taken."""
    started = time.monotonic()
    while True:
        r = await client.call_tool("search_documents", {"query": query, "mode": "keyword"})
        ids = [d["id"] for d in r.structured_content["results"]]
        if (want in ids) if want is not None else not ids:
            return time.monotonic() - started
        if time.monotonic() - started > timeout:
            raise AssertionError(f"index did not catch up: {ids}")
        await anyio.sleep(0.1)


@pytest.mark.anyio
async def test_stdio_server_serves_and_follows_edits(vault, tmp_path) -> None:
    params = stdio_params(vault, tmp_path / "index", cwd=tmp_path)
    async with Client(params) as client:
        tools = await client.list_tools()
        assert len(tools.tools) == 4
        r = await client.call_tool("search_documents", {"query": "swappiness"})
        assert r.structured_content["results"][0]["id"] == "guides/install.md"
        r = await client.call_tool("read_section", {"id": "notes/backups.md", "section": "restore"})
        assert "Mount the snapshot" in r.structured_content["content"]
        r = await client.call_tool("read_document", {"id": "../x.md"})
        assert r.is_error

        # a file saved while the server runs: searchable about a second later, and read fresh at once
        write(vault, "notes/backups.md", "# Backups\n\nWe moved to borgmatic for deduplicated archives.\n")
        fresh = await client.call_tool("read_document", {"id": "notes/backups.md"})
        assert "borgmatic" in fresh.structured_content["content"]
        assert await _wait_for(client, "borgmatic", "notes/backups.md") < 5  # ~1 s when the machine is idle
        # created, then deleted
        write(vault, "new/zebra.md", "# Zebra\n\nStripes everywhere.\n")
        await _wait_for(client, "stripes", "new/zebra.md")
        (vault / "new/zebra.md").unlink()
        await _wait_for(client, "stripes", None)
        r = await client.call_tool("read_document", {"id": "new/zebra.md"})
        assert r.is_error


def run_with_input(vault, index, lines: list[str]) -> subprocess.CompletedProcess[str]:
    """A stdio server (no watcher) given `lines` on stdin, run until it exits at their end."""
    return subprocess.run(
        [sys.executable, *serve_args(vault, index, "--no-watch")],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        env=child_env(),
    )


def test_stdout_carries_only_protocol_messages(vault, tmp_path) -> None:
    """Malformed input gets JSON-RPC errors (or nothing) on stdout, never a traceback; the server survives."""
    lines = [
        "this is not json",
        '{"jsonrpc": "2.0", "id": 1, "method": "nope"}',
        '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read_document"}}',
        "[1, 2, 3]",
        "\x00\x01garbage",
        initialize_request(3),
    ]
    proc = run_with_input(vault, tmp_path / "index", lines)
    out = [line for line in proc.stdout.splitlines() if line.strip()]
    assert out, proc.stderr
    for line in out:
        message = json.loads(line)
        assert message.get("jsonrpc") == "2.0"
    assert any(json.loads(line).get("id") == 3 and "result" in json.loads(line) for line in out)
    assert "Traceback" not in proc.stdout


@contextlib.contextmanager
def initialized_server(vault, index, *extra: str, stderr: int = subprocess.DEVNULL) -> Iterator[subprocess.Popen]:
    """A stdio server in a child process that has answered `initialize`; killed if still running at the end."""
    proc = subprocess.Popen(
        [sys.executable, *serve_args(vault, index, *extra)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=child_env(),
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(initialize_request(1).encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


@pytest.mark.anyio
async def test_ctrl_c_stops_a_stdio_server_at_once_and_the_index_opens_again(vault, tmp_path) -> None:
    """SIGINT (Ctrl-C in the terminal that started it) while the client keeps stdin open: before, the server stopped
    answering but did not exit until the client closed stdin (the SDK's stdin reader cannot be cancelled)."""
    with initialized_server(vault, tmp_path / "index") as proc:
        proc.send_signal(signal.SIGINT)
        started = time.monotonic()
        proc.wait(10)
        assert time.monotonic() - started < 3
    async with Client(stdio_params(vault, tmp_path / "index", "--no-watch", cwd=tmp_path)) as client:
        r = await client.call_tool("search_documents", {"query": "swappiness", "mode": "keyword"})
        assert r.structured_content["results"][0]["id"] == "guides/install.md"


def test_a_client_that_closes_stdout_stops_the_server_quietly(vault, tmp_path) -> None:
    """Before: the next reply hit a broken pipe and the server died with exit status 1 and a 40-line traceback."""
    with initialized_server(vault, tmp_path / "index", "--no-watch", stderr=subprocess.PIPE) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        proc.stdin.write(b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}\n')
        proc.stdin.flush()
        assert proc.wait(20) == 0
        assert "Traceback" not in proc.stderr.read().decode()


@pytest.mark.anyio
async def test_started_without_stdin_the_server_exits_and_leaves_the_index_whole(vault, tmp_path) -> None:
    """fd 0 closed at start: the first file the server opens gets fd 0. It must not be read as the protocol nor
    pointed at the null device (SQLite writing its catalog into /dev/null)."""
    import shlex

    command = shlex.join([sys.executable, *serve_args(vault, tmp_path / "index", "--no-watch")])
    for _ in range(2):  # the second start reads what the first wrote
        done = subprocess.run(["sh", "-c", f"exec {command} 0<&-"], capture_output=True, timeout=60, env=child_env())
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        assert b"Traceback" not in done.stderr, done.stderr.decode()[-2000:]
    async with Client(stdio_params(vault, tmp_path / "index", "--no-watch", cwd=tmp_path)) as client:
        r = await client.call_tool("search_documents", {"query": "swappiness", "mode": "keyword"})
        assert r.structured_content["results"][0]["id"] == "guides/install.md"
        assert r.structured_content["index"]["documents"] > 10


def test_every_request_read_before_stdin_closes_is_answered(vault, tmp_path) -> None:
    """A client that writes its requests and closes stdin (a script, `... | mcp-docs serve`) gets every reply.
    Before: the SDK cancelled the calls still running at end of input, and their replies were lost (1-3 of 8)."""
    calls = [
        json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args}})
        for i, (name, args) in enumerate(
            [("search_documents", {"query": "collector"}), ("read_document", {"id": "notes/long.md"})] * 4, start=1
        )
    ]
    lines = [initialize_request(0), '{"jsonrpc": "2.0", "method": "notifications/initialized"}', *calls]
    done = run_with_input(vault, tmp_path / "index", lines)
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert sorted(r["id"] for r in replies) == list(range(9)), done.stderr[-2000:]
    assert not any(r.get("result", {}).get("isError") for r in replies)
