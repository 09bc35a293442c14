"""The server loads the language identifier in the background after its first sync, when the collection's searches
will ask it, through a real stdio server (`--verbose` logs on stderr). Found reviewing the Obsidian help vault: the
first search over stdio took 1.3-1.6 s, 0.7 s of it loading the identifier; the searches after it 10-60 ms."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import stdio_client

from ..server_fixtures import stdio_params, write

LOADED = "language identifier loaded in"


async def _wait_for_line(log: Path, text: str, timeout: float = 90) -> str:
    deadline = time.monotonic() + timeout
    while text not in (got := log.read_text(errors="replace")):
        assert time.monotonic() < deadline, f"no {text!r} on stderr:\n{got[-2000:]}"
        await anyio.sleep(0.1)
    return got


@pytest.mark.anyio
async def test_a_multilingual_collection_warms_the_identifier_before_any_search(tmp_path: Path) -> None:
    root, log = tmp_path / "vault", tmp_path / "stderr.txt"
    write(root, "en/sync.md", "# Sync\n\nKeep your notes in step across devices.\n")
    write(root, "cs/sync.md", "---\nlang: cs\n---\n# Synchronizace\n\nUdržujte své poznámky synchronizované.\n")
    write(root, "th/sync.md", "---\nlang: th\n---\n# ซิงค์\n\nซิงค์โน้ตของคุณระหว่างอุปกรณ์\n")
    params = stdio_params(root, tmp_path / "index", "--no-watch", "--verbose", cwd=tmp_path)
    with log.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            await _wait_for_line(log, LOADED)  # no search has run: the server loaded it on its own
            r = await client.call_tool("search_documents", {"query": "poznámky synchronizované", "mode": "keyword"})
            assert r.structured_content["results"][0]["id"] == "cs/sync.md"


@pytest.mark.anyio
async def test_a_collection_whose_searches_never_ask_loads_nothing(tmp_path: Path) -> None:
    root, log = tmp_path / "vault", tmp_path / "stderr.txt"
    write(root, "en/sync.md", "# Sync\n\nKeep your notes in step across devices, every day.\n")
    write(root, "fr/sync.md", "---\nlang: fr\n---\n# Synchronisation\n\nGardez vos notes à jour sur vos appareils.\n")
    params = stdio_params(root, tmp_path / "index", "--no-watch", "--verbose", cwd=tmp_path)
    with log.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            await _wait_for_line(log, "index reconciled")
            r = await client.call_tool("search_documents", {"query": "gardez vos notes", "mode": "keyword"})
            assert r.structured_content["results"][0]["id"] == "fr/sync.md"
            await anyio.sleep(1.0)  # the warm-up runs right after the sync, in the same thread
            assert LOADED not in log.read_text(errors="replace")
