"""A stdio client that writes requests and never reads stdout: the server stops reading requests once a bounded
number wait for their replies, instead of holding every reply in memory (371 MB after 3,000 calls in the
review). The real `mcp-docs serve` subprocess; its memory read from /proc."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import pytest

from mcp_docs.stdio_transport import MAX_UNANSWERED
from tests.server_fixtures import initialize_request, spawn_stdio

from .common import stop_process
from .test_stdio import PROTOCOL, _line

CALLS = 1500
BIG = "# Big\n\n" + "".join(
    f"Line {i}: the quarterly backup drill restores every volume in turn.\n" for i in range(700)
)


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(sys.platform != "linux", reason="reads the server's memory from /proc")
def test_a_client_that_never_reads_stops_the_server_reading_not_its_memory(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "big.md").write_text(BIG)  # ~48 KB: each reply carries it twice (text and structured), ~100 KB
    errlog = open(tmp_path / "stderr.txt", "wb")
    proc = spawn_stdio(root, tmp_path / "idx", errlog, "--no-watch")
    assert proc.stdin is not None and proc.stdout is not None
    written = 0
    stuck = threading.Event()

    def write_calls() -> None:
        nonlocal written
        assert proc.stdin is not None
        args = {"name": "read_document", "arguments": {"id": "big.md", "max_chars": 50000}}
        try:
            for i in range(CALLS):
                proc.stdin.write(_line({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": args}))
                proc.stdin.flush()
                written += 1
        except (BrokenPipeError, ValueError, OSError):
            return
        finally:
            stuck.set()

    try:
        proc.stdin.write((initialize_request("init", PROTOCOL) + "\n").encode())
        proc.stdin.flush()
        first = json.loads(proc.stdout.readline())  # the one line this client reads
        assert first["id"] == "init"
        proc.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        proc.stdin.flush()
        time.sleep(0.5)
        before = _rss_mb(proc.pid)
        threading.Thread(target=write_calls, daemon=True).start()
        # Until the writer is blocked (the server stopped reading) or done (it read everything), and a little
        # longer, so that whatever the server took in is handled.
        deadline = time.monotonic() + 120
        last, still = -1, 0
        while time.monotonic() < deadline and not stuck.is_set():
            time.sleep(0.5)
            still = still + 1 if written == last else 0
            last = written
            if still >= 4:  # 2 s without a write going through: blocked
                break
        time.sleep(1)
        grown = _rss_mb(proc.pid) - before
        assert proc.poll() is None
        assert written < CALLS, "the server read every request although no reply was read"
        # Bounded: MAX_UNANSWERED replies of ~100 KB, the pipes' buffers, the lines in flight; without the bound,
        # every reply (~150 MB here) was held.
        assert grown < 60, (grown, written)
        # A client that starts reading gets every answer, in full.
        answered: set[int] = set()
        deadline = time.monotonic() + 120
        while len(answered) < written and time.monotonic() < deadline:
            message = json.loads(proc.stdout.readline())
            assert "result" in message and not message["result"].get("isError"), str(message)[:300]
            answered.add(message["id"])
        assert len(answered) >= written
    finally:
        stop_process(proc)
        errlog.close()
    assert MAX_UNANSWERED <= 64
