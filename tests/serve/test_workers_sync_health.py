"""`serve --transport http --workers N`: the reading workers' `/health` says "degraded" with the reason while the
writing worker's syncs fail, and "ok" again once one succeeds (the review: readers said ok meanwhile, while the
single-process server says degraded). Real worker processes over one index folder on loopback."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx2

from ..server_fixtures import child_env, free_port, make_vault, serve_args, stop, write

REFUSAL = "writes refused for the test"


def _health(port: int) -> dict[str, object]:
    r = httpx2.get(f"http://127.0.0.1:{port}/health", headers={"connection": "close"}, timeout=10)
    body: dict[str, object] = r.json()
    return body


def _by_role(port: int, tries: int = 40) -> dict[str, dict[str, object]]:
    """The last /health answer of each role (each new connection may reach another worker)."""
    seen: dict[str, dict[str, object]] = {}
    for _ in range(tries):
        body = _health(port)
        worker = body["worker"]
        assert isinstance(worker, dict)
        seen[str(worker["role"])] = body
    return seen


def _wait_for(check: Callable[[], object], timeout: float, what: str) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _both_say(port: int, status: str) -> dict[str, dict[str, object]] | None:
    seen = _by_role(port)
    if {"writer", "reader"} <= set(seen) and all(b["status"] == status for b in seen.values()):
        return seen
    return None


def test_readers_report_the_writers_failed_sync_and_its_recovery(tmp_path: Path) -> None:
    root, index, port, log = make_vault(tmp_path), tmp_path / "index", free_port(), tmp_path / "server.log"
    args = serve_args(root, index, "--transport", "http", "--port", str(port), "--workers", "2")
    with log.open("wb") as err:
        proc = subprocess.Popen([sys.executable, *args], env=child_env(), stdout=subprocess.DEVNULL, stderr=err)
    try:
        _wait_for(lambda: b"mcp-docs: serving" in log.read_bytes(), 90, "the serving line")
        _wait_for(lambda: _both_say(port, "ok"), 90, "both workers healthy")
        # Every write of the catalog refused (a trigger here; a full disk, a file another user owns): the writer's
        # next sync fails as a whole, while searches still answer from the last commit.
        with sqlite3.connect(index / "catalog.sqlite") as conn:
            conn.execute(
                f"create trigger refuse before insert on documents begin select raise(abort, '{REFUSAL}'); end"
            )
        write(root, "notes/later.md", "# Later\n\nA numbat note.\n")
        seen = _wait_for(lambda: _both_say(port, "degraded"), 60, "both workers degraded")
        assert isinstance(seen, dict)
        for body in seen.values():
            assert REFUSAL in str(body["error"]) and "sync failed" in str(body["error"]), body
        # The writer's next sync succeeds: every worker says ok again.
        with sqlite3.connect(index / "catalog.sqlite") as conn:
            conn.execute("drop trigger refuse")
        write(root, "notes/later.md", "# Later\n\nA numbat note, saved again.\n")
        _wait_for(lambda: _both_say(port, "ok"), 60, "both workers healthy again")
        assert proc.poll() is None
    finally:
        stop(proc)
