"""A third store in one module (tests/store/memory_store.py): `Library(settings, store)` composes the library
from it, and the real tools, and a real in-memory MCP client, answer through it. The documents live only in the
store's dict: the root folder on disk is empty."""

from __future__ import annotations

import pytest
from mcp import Client

from mcp_docs.errors import ToolInputError
from mcp_docs.library import Library
from mcp_docs.mcp.server import build_server
from mcp_docs.settings import Settings
from mcp_docs.store.api import Store
from mcp_docs.tools import DocsTools

from .memory_store import MemoryStore

TEXTS = {
    "guides/install.md": "---\ntags: [setup]\n---\n# Installing\n\nRun the installer.\n\n"
    "## Swap\n\nSet vm.swappiness to 10 before the first start.\n",
    "guides/upgrade.md": "# Upgrading\n\nStop the service, then run the installer again.\n",
    "faq.md": "# Questions\n\n## Why is it slow?\n\nThe cache is cold after a restart.\n",
}


@pytest.fixture
def library(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()  # empty: every byte comes from the store
    settings = Settings.load(root, tmp_path / "index", embeddings="none", environ={})
    store = MemoryStore(settings, dict(TEXTS))
    with Library(settings, store) as lib:
        lib.sync()
        yield lib
    assert store.closed


def test_the_memory_store_has_every_member_of_the_protocol() -> None:
    members = {n for n in vars(Store) if not n.startswith("_")}
    assert {"catalog", "vectors", "files", "keyword_hits", "sync", "close"} <= members
    assert not sorted(n for n in members if not hasattr(MemoryStore, n) and n not in ("catalog", "files"))


def test_the_library_is_composed_from_the_store_it_is_given(library: Library) -> None:
    assert isinstance(library.store, MemoryStore)
    assert library.catalog is library.store.catalog and library.vectors is None
    assert library.location() == "memory (3 documents)"
    assert library.index_info().documents == 3
    assert not list((library.settings.index_dir.parent / "index").glob("*"))  # no embedded index was opened


def test_the_tools_answer_through_the_store(library: Library) -> None:
    tools = DocsTools(library)
    found = tools.search_documents("swappiness installer", mode="keyword")
    assert [r.id for r in found.results][:2] == ["guides/install.md", "guides/upgrade.md"]
    assert tools.search_documents("swappiness", mode="keyword").results[0].sections[0].heading == "Swap"
    semantic = tools.search_documents("swappiness", mode="semantic")
    assert semantic.mode_used == "keyword" and "embeddings are off" in (semantic.note or "")
    tagged = tools.search_documents("installer", tags=["setup"])
    assert [r.id for r in tagged.results] == ["guides/install.md"]

    listed = tools.list_documents()
    assert [d.id for d in listed.documents] == sorted(TEXTS) and listed.total == 3
    assert [(f.path, f.documents) for f in listed.folders] == [("guides", 2)]
    assert [d.id for d in tools.list_documents("guides").documents] == ["guides/install.md", "guides/upgrade.md"]

    doc = tools.read_document("guides/install.md")
    assert "vm.swappiness to 10" in doc.content and doc.title == "Installing"
    section = tools.read_section("faq.md", "Why is it slow?")
    assert "cache is cold" in section.content
    with pytest.raises(ToolInputError, match=r"No document 'guides/instal\.md'"):
        tools.read_document("guides/instal.md")


def test_a_change_in_the_store_reaches_the_tools_after_a_sync(library: Library) -> None:
    store = library.store
    assert isinstance(store, MemoryStore)
    store.texts["faq.md"] = "# Questions\n\n## Where are the logs?\n\nUnder /var/log/telescope.\n"
    del store.texts["guides/upgrade.md"]
    report = library.sync()
    assert (report.updated, report.deleted, report.unchanged) == (1, 1, 1)
    tools = DocsTools(library)
    assert [r.id for r in tools.search_documents("telescope").results] == ["faq.md"]
    assert tools.list_documents("guides").total == 1


@pytest.mark.anyio
async def test_an_mcp_client_searches_and_reads_through_the_store(library: Library) -> None:
    async with Client(build_server(library), raise_exceptions=True) as client:
        found = await client.call_tool("search_documents", {"query": "swappiness", "max_results": 3})
        assert not found.is_error and found.structured_content["results"][0]["id"] == "guides/install.md"
        read = await client.call_tool("read_section", {"id": "guides/install.md", "section": "Swap"})
        assert not read.is_error and "vm.swappiness" in read.structured_content["content"]
