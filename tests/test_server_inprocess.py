"""The MCP server through a real in-process `mcp.Client`: definitions, every tool, errors, resource, prompt."""

from __future__ import annotations

import json

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_docs.mcp.server import INSTRUCTIONS, build_server
from mcp_docs.mcp.tool_table import TOOL_NAMES

from .server_fixtures import vault  # noqa: F401

pytestmark = pytest.mark.anyio


@pytest.fixture
async def client(library):
    async with Client(build_server(library), raise_exceptions=True) as c:
        yield c


def model_visible(tools) -> list[dict]:
    return [{"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in tools]


async def test_tool_definitions_are_small_and_read_only(client) -> None:
    tools = (await client.list_tools()).tools
    assert [t.name for t in tools] == list(TOOL_NAMES)
    for t in tools:
        assert t.annotations.read_only_hint and t.annotations.idempotent_hint
        assert t.annotations.destructive_hint is False
        assert t.output_schema is not None
    assert len(json.dumps(model_visible(tools))) < 4000
    search = next(t for t in tools if t.name == "search_documents")
    assert search.input_schema["required"] == ["query"]
    assert search.input_schema["properties"]["mode"]["enum"] == ["hybrid", "keyword", "semantic"]


async def test_search_structured_and_text(client) -> None:
    r = await client.call_tool("search_documents", {"query": "swappiness", "max_results": 3})
    assert not r.is_error
    s = r.structured_content
    assert set(s) >= {"query", "mode_used", "results", "index"}
    top = s["results"][0]
    assert top["id"] == "guides/install.md"
    assert set(top["sections"][0]) >= {"heading", "heading_path", "line_start", "line_end", "snippet"}
    text = r.content[0].text
    assert "guides/install.md" in text and len(text) < 4000
    assert len(text) < len(json.dumps(s)) * 2


async def test_list_and_pagination(client) -> None:
    r = await client.call_tool("list_documents", {"folder": "misc", "limit": 10})
    assert r.structured_content["total"] == 12 and len(r.structured_content["documents"]) == 10
    cursor = r.structured_content["next_cursor"]
    r2 = await client.call_tool("list_documents", {"folder": "misc", "limit": 10, "cursor": cursor})
    assert [d["id"] for d in r2.structured_content["documents"]] == ["misc/note10.md", "misc/note11.md"]
    assert r2.structured_content["next_cursor"] is None


async def test_read_document_modes_and_continuation(client) -> None:
    r = await client.call_tool("read_document", {"id": "notes/long.md", "mode": "outline"})
    assert not r.is_error and r.structured_content["mode"] == "outline"
    assert r.structured_content["estimated_tokens"] < 600
    r = await client.call_tool("read_document", {"id": "notes/long.md", "max_chars": 2000})
    s = r.structured_content
    assert s["truncated"] and s["next_offset"] and "offset=" in r.content[0].text
    r2 = await client.call_tool("read_document", {"id": "notes/long.md", "max_chars": 2000, "offset": s["next_offset"]})
    assert r2.structured_content["offset"] == s["next_offset"]


async def test_read_section(client) -> None:
    section = "Installing the collector > Windows"
    r = await client.call_tool("read_section", {"id": "guides/install.md", "section": section})
    assert not r.is_error
    s = r.structured_content
    assert s["heading"] == "Windows" and "MSI" in s["content"] and s["level"] == 2
    assert set(s) >= {
        "id",
        "heading",
        "heading_path",
        "level",
        "line_start",
        "line_end",
        "content",
        "offset",
        "next_offset",
        "truncated",
        "estimated_tokens",
    }


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        ("read_document", {"id": "guides/instal.md"}, "guides/install.md"),
        ("read_document", {"id": "../../etc/passwd"}, "Refused"),
        ("read_document", {"id": ".env"}, "No document '.env'"),
        ("read_section", {"id": "guides/config.md", "section": "otlp"}, "ambiguous"),
        ("read_section", {"id": "guides/install.md", "section": "nothing"}, "Its headings are"),
        ("list_documents", {"cursor": "xyz"}, "Invalid cursor"),
        ("search_documents", {"query": ""}, "empty"),
        ("search_documents", {"query": "x", "mode": "fuzzy"}, "mode"),
    ],
)
async def test_errors_are_tool_errors_with_a_next_step(client, tool, args, expected) -> None:
    r = await client.call_tool(tool, args)
    assert r.is_error
    text = r.content[0].text
    assert expected in text and "Traceback" not in text


async def test_huge_inputs_are_bounded(client) -> None:
    r = await client.call_tool("search_documents", {"query": "note " * 2500, "max_results": 10**6})
    assert not r.is_error and len(r.content[0].text) < 20_000
    r = await client.call_tool("list_documents", {"limit": 10**6})
    assert not r.is_error and "used 200" in r.structured_content["note"]


async def test_resource_template_prompt_and_instructions(client, library) -> None:
    templates = (await client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["docs://{+id}"]
    res = await client.read_resource("docs://guides/install.md")
    assert "systemctl" in res.contents[0].text
    with pytest.raises(MCPError):
        await client.read_resource("docs://nothing/here.md")
    prompt = await client.get_prompt("answer_from_docs", {"question": "How do I restore?"})
    assert "How do I restore?" in prompt.messages[0].content.text
    server = build_server(library)
    assert server.instructions.startswith(INSTRUCTIONS) and "read_section" in INSTRUCTIONS and "outline" in INSTRUCTIONS


def test_serving_a_root_without_markdown_logs_it_plainly(tmp_path, caplog) -> None:
    from mcp_docs.library import Library
    from mcp_docs.mcp.server import ServerState
    from mcp_docs.serve.process import start_background
    from mcp_docs.settings import Settings

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.txt").write_text("plain text\n")
    with Library(Settings.load(tmp_path / "docs", tmp_path / "idx", embeddings="none", environ={})) as library:
        state = ServerState()
        with caplog.at_level("WARNING", logger="mcp_docs"):
            stop = start_background(library, state, watch=False)
            assert state.initial_sync_done.wait(30)
            stop()
    assert "holds no Markdown files (the files read end in .md, .markdown)" in caplog.text


async def test_every_listed_resource_reads_back_whatever_its_name_holds(client, library, vault) -> None:
    # '#' and '?' end a URI's path and the SDK percent-decodes the id: such listed resources were unreadable.
    names = ["hash#frag.md", "q?x.md", "50%25 done.md", "a b.md", "café.md"]
    for name in names:
        (vault / name).write_text(f"# {name}\n\nbody\n")
    library.sync()
    listed, cursor = {}, None
    while True:
        page = await client.list_resources(cursor=cursor)
        listed.update({r.name: str(r.uri) for r in page.resources})
        cursor = page.next_cursor
        if cursor is None:
            break
    for name in names:
        got = await client.read_resource(listed[name])
        assert got.contents[0].text.startswith(f"# {name}\n"), listed[name]
    assert listed["guides/install.md"] == "docs://guides/install.md"  # plain ids are as before
