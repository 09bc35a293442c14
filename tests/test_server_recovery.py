"""A real server whose index folder is deleted while it runs: it notices, recreates the index and keeps
indexing new files; without a watcher it says so on /health instead of claiming to be fine (issue 10)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_docs.store.embedded.ownership import MARKER_NAME

from .server_fixtures import child_env, free_port, make_vault, start_http, stop, write


def _until(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.2)


def _found(port: int, query: str) -> list[str]:
    async def go() -> list[str]:
        http = httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=60))
        async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client:
            r = await client.call_tool("search_documents", {"query": query, "mode": "keyword"})
            return [d["id"] for d in (r.structured_content or {}).get("results", [])]

    return anyio.run(go)


def _health(port: int) -> httpx2.Response:
    return httpx2.get(f"http://127.0.0.1:{port}/health", timeout=5)


def test_index_folder_deleted_under_a_running_server_is_rebuilt(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    index = tmp_path / "index"
    port = free_port()
    proc = start_http(vault, index, port, child_env())
    try:
        _until(lambda: _health(port).json().get("documents") == 16)
        shutil.rmtree(index)
        write(vault, "fresh.md", "# Fresh\n\nzebrafinch arrives after the index was deleted.\n")
        _until(lambda: _found(port, "zebrafinch") == ["fresh.md"])
        assert (index / MARKER_NAME).is_file() and (index / "catalog.sqlite").is_file()
        health = _health(port)
        assert health.status_code == 200 and health.json()["documents"] == 17
        assert "misc/note03.md" in _found(port, "gardening")  # the old documents are back too
        write(vault, "later.md", "# Later\n\nkingfisher comes later.\n")
        _until(lambda: _found(port, "kingfisher") == ["later.md"])
    finally:
        stop(proc)


def test_without_a_watcher_health_reports_the_missing_index(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    index = tmp_path / "index"
    port = free_port()
    proc = start_http(vault, index, port, child_env(), "--no-watch")
    try:
        assert _health(port).status_code == 200
        shutil.rmtree(index)
        health = _health(port)
        assert health.status_code == 503 and health.json()["status"] == "error"
        assert "index folder is missing" in health.json()["error"]
    finally:
        stop(proc)
