"""The watcher in-process: renamed folders and ignored paths; the 'still indexing' note of the server."""

from __future__ import annotations

import time

import pytest
from mcp import Client

from mcp_docs.mcp.server import ServerState, build_server
from mcp_docs.watch import FULL_SYNC, Watcher

from .server_fixtures import vault, write  # noqa: F401


def _ids(library, query: str) -> list[str]:
    return [d.id for d in library.search(query, 10, "keyword").results]


def _until(predicate, timeout: float = 8.0) -> float:
    started = time.monotonic()
    while not predicate():
        if time.monotonic() - started > timeout:
            raise AssertionError("the watcher did not catch up")
        time.sleep(0.05)
    return time.monotonic() - started


def test_watcher_follows_a_renamed_folder(library, vault) -> None:
    watcher = Watcher(library)
    watcher.start()
    try:
        assert watcher.ready.wait(5)
        (vault / "guides").rename(vault / "manuals")
        _until(lambda: "manuals/install.md" in _ids(library, "swappiness"))
        assert "guides/install.md" not in _ids(library, "swappiness")
        write(vault, ".obsidian/workspace.md", "# swappiness in a dot-folder\n")
        write(vault, "manuals/extra.md", "# Extra\n\nkiwifruit\n")
        _until(lambda: _ids(library, "kiwifruit") == ["manuals/extra.md"])
        assert all(not i.startswith(".") for i in _ids(library, "swappiness"))
    finally:
        watcher.stop()


def test_relevant_paths(library, vault) -> None:
    watcher = Watcher(library)
    assert watcher.relevant(str(vault / "notes/a.md")) == "notes/a.md"
    assert watcher.relevant(str(vault / ".git/index")) is None
    assert watcher.relevant(str(vault / "secret.txt")) is None  # an existing non-Markdown file
    assert watcher.relevant(str(vault / "gone-folder")) == "gone-folder"  # deleted: maybe a folder
    assert watcher.relevant(str(vault / ".mcpdocsignore")) == FULL_SYNC
    assert watcher.relevant("/elsewhere/x.md") is None


@pytest.mark.anyio
async def test_search_says_when_the_index_is_still_being_built(library) -> None:
    state = ServerState()  # initial sync not finished
    async with Client(build_server(library, state)) as client:
        r = await client.call_tool("search_documents", {"query": "swappiness"})
        assert "still being built" in r.structured_content["note"]
        state.initial_sync_done.set()
        r = await client.call_tool("search_documents", {"query": "swappiness"})
        assert "still being built" not in (r.structured_content["note"] or "")
