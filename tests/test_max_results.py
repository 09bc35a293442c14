"""`max_results` has one limit, the one the tool documents (1-20), applied once, where a request comes in
(`DocsTools.search_documents`, for MCP and the command line alike). Library.search used to clamp again, to a
limit of its own (100), that no caller could see."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from mcp_docs.library import Library
from mcp_docs.mcp.server import build_server
from mcp_docs.search.request import MAX_SEARCH_RESULTS
from mcp_docs.settings import Settings

pytestmark = pytest.mark.anyio

DOCUMENTS = 130  # more than the second limit was


@pytest.fixture
def many(tmp_path: Path):
    root = tmp_path / "many"
    root.mkdir()
    for i in range(DOCUMENTS):
        (root / f"note{i:03}.md").write_text(
            f"# Note {i}\n\nThe lighthouse keeper's log, entry {i}.\n", encoding="utf-8"
        )
    lib = Library(Settings.load(root, tmp_path / "index", embeddings="none", environ={}))
    lib.sync()
    yield lib
    lib.close()


async def test_the_tool_clamps_to_its_documented_limit_and_says_so(many: Library) -> None:
    async with Client(build_server(many)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        described = tools["search_documents"].input_schema["properties"]["max_results"]["description"]
        assert f"(1-{MAX_SEARCH_RESULTS})" in described
        result = await client.call_tool("search_documents", {"query": "lighthouse", "max_results": 50})
    found = result.structured_content
    assert len(found["results"]) == MAX_SEARCH_RESULTS == 20
    assert f"max_results 50 is out of range 1-{MAX_SEARCH_RESULTS}: used {MAX_SEARCH_RESULTS}." in found["note"]


def test_the_library_does_not_clamp_a_second_time(many: Library) -> None:
    """What the tools layer asked for is what the library returns (benchmarks ask it for 100 and more)."""
    assert len(many.search("lighthouse", max_results=DOCUMENTS, mode="keyword").results) == DOCUMENTS
