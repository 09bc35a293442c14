"""What server_middleware adds to the SDK, through real MCP clients: one-sentence argument errors for the four
tools, documents listed as paginated resources, compact tool definitions; and the one SDK internal still used."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp.server import MCPServer
from mcp.shared.exceptions import MCPError

from mcp_docs.library import Library
from mcp_docs.mcp.server import build_server
from mcp_docs.serve.stdio import lowlevel_server
from mcp_docs.settings import Settings
from mcp_docs.tools import MAX_LIST_LIMIT

from ..server_fixtures import child_env, serve_args, stdio_params, vault, write  # noqa: F401

pytestmark = pytest.mark.anyio

BAD_ARGUMENTS = [
    ("search_documents", {"query": "x", "mode": "fuzzy"}, ["'mode'", '"fuzzy"', '"hybrid", "keyword", "semantic"']),
    ("search_documents", {}, ["'query' is required", "a string"]),
    ("search_documents", {"query": "x", "max_results": "lots"}, ["'max_results'", "an integer", '"lots"']),
    ("search_documents", {"query": "x", "tags": "guide"}, ["'tags'", "a list of strings", '"guide"']),
    ("list_documents", {"limit": "many"}, ["'limit'", "an integer", '"many"']),
    ("read_document", {"id": 3}, ["'id'", "a string", "not 3"]),
    ("read_document", {"id": "a.md", "mode": "everything"}, ["'mode'", '"full", "outline", "summary"']),
    ("read_section", {"section": "Linux"}, ["'id' is required"]),  # section may be in the id: '[[Doc#Heading]]'
    (
        "read_section",
        {"id": "x", "section": "y", "include_subsections": "perhaps"},
        ["'include_subsections'", "true or false"],
    ),
]


@pytest.fixture
async def client(library: Library):
    async with Client(build_server(library), raise_exceptions=True) as c:
        yield c


@pytest.mark.parametrize(("tool", "arguments", "expected"), BAD_ARGUMENTS)
async def test_a_bad_argument_is_one_sentence_naming_it(
    client: Client, tool: str, arguments: dict, expected: list[str]
) -> None:
    r = await client.call_tool(tool, arguments)
    assert r.is_error
    text = r.content[0].text
    assert text.startswith(f"{tool}: argument ") and text.endswith(".") and "\n" not in text, text
    assert "pydantic" not in text and "validation error" not in text and "Arguments" not in text
    for part in expected:
        assert part in text, (part, text)


async def test_several_bad_arguments_are_all_named(client: Client) -> None:
    r = await client.call_tool("list_documents", {"tag": 5, "limit": "x"})
    assert r.is_error and "'tag'" in r.content[0].text and "also invalid: limit" in r.content[0].text


async def test_what_the_sdk_accepts_is_still_accepted(client: Client) -> None:
    # numbers and lists sent as strings (some clients send every argument so) still work
    r = await client.call_tool("search_documents", {"query": "swappiness", "max_results": "2", "tags": '["guide"]'})
    assert not r.is_error and r.structured_content["results"][0]["id"] == "guides/install.md"
    # a tool's own error (not an argument type) keeps its own message
    r = await client.call_tool("read_document", {"id": "no/such.md"})
    assert r.is_error and not r.content[0].text.startswith("read_document: argument")


def _titles(schema: object) -> list[str]:
    if isinstance(schema, dict):
        own = [v for k, v in schema.items() if k == "title" and isinstance(v, str)]
        return (
            own
            + [t for k, v in schema.items() if k != "properties" for t in _titles(v)]
            + [t for v in (schema.get("properties") or {}).values() for t in _titles(v)]
        )
    if isinstance(schema, list):
        return [t for v in schema for t in _titles(v)]
    return []


async def test_tool_definitions_carry_no_generated_titles(client: Client) -> None:
    for tool in (await client.list_tools()).tools:
        assert _titles(tool.input_schema) == [] and _titles(tool.output_schema) == [], tool.name


async def test_resources_list_pages_through_every_document(tmp_path: Path) -> None:
    root = tmp_path / "root"
    total = MAX_LIST_LIMIT + 5
    for i in range(total):
        write(root, f"notes/n{i:03d}.md", f"# Note {i}\n\nBody {i}.\n")
    library = Library(Settings.load(root, tmp_path / "index", embeddings="none", environ={}))
    library.sync()
    try:
        async with Client(build_server(library), raise_exceptions=True) as c:
            first = await c.list_resources()
            assert first.next_cursor is not None and 0 < len(first.resources) < total
            second = await c.list_resources(cursor=first.next_cursor)
            assert second.next_cursor is None
            uris = [r.uri for r in first.resources + second.resources]
            assert uris == [f"docs://notes/n{i:03d}.md" for i in range(total)]
            assert first.resources[1].title == "Note 1" and first.resources[1].mime_type == "text/markdown"
            contents = await c.read_resource(str(second.resources[-1].uri))
            assert contents.contents[0].text == f"# Note {total - 1}\n\nBody {total - 1}.\n"
            with pytest.raises(MCPError, match="Invalid cursor"):
                await c.list_resources(cursor="bogus")
    finally:
        library.close()


async def test_stdio_server_lists_resources_and_explains_bad_arguments(vault: Path, tmp_path: Path) -> None:
    params = stdio_params(vault, tmp_path / "index", cwd=tmp_path)
    async with Client(params) as c:
        listed = await c.list_resources()
        uris = {str(r.uri) for r in listed.resources}
        assert {"docs://guides/install.md", "docs://notes/backups.md"} <= uris and listed.next_cursor is None
        read = await c.read_resource("docs://notes/backups.md")
        assert "restic" in read.contents[0].text
        r = await c.call_tool("search_documents", {"query": "x", "mode": "fuzzy"})
        assert r.is_error and r.content[0].text.startswith("search_documents: argument 'mode' must be one of")


def test_the_sdk_still_has_the_lowlevel_server_stdio_relies_on() -> None:
    """stdio_transport reaches MCPServer's low-level server (no public accessor exists in mcp 2.3): if an SDK
    release renames or removes it, this fails with a message instead of stdio failing at run time."""
    server = lowlevel_server(MCPServer("probe"))
    assert callable(server.run) and callable(server.create_initialization_options)
