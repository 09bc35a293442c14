"""`mcp-docs search --json` / `mcp-docs read --json` and the MCP tools answer the same arguments the same way:
same results, notes, limits, token estimates, and the same one-sentence errors (the CLI exits 2 with it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_docs.cli import main
from mcp_docs.library import Library
from mcp_docs.mcp.server import build_server

pytestmark = pytest.mark.anyio

SEARCHES: list[dict[str, Any]] = [
    {"query": "install"},
    {"query": "install", "mode": "keyword", "max_results": 50},
    {"query": "install", "mode": "keyword", "max_results": 0},
    {"query": "install guide", "mode": "keyword", "tags": ["guide"], "max_chars": 1000},
    {"query": "install", "folder": "guides"},
    {"query": "install", "folder": "nosuch"},
    {"query": "install", "mode": "fuzzy"},
    {"query": "   "},
    {"query": "install", "folder": "../outside"},
]

READS: list[tuple[str, dict[str, Any]]] = [
    ("read_document", {"id": "guides/setup/install.md", "mode": "outline"}),
    ("read_document", {"id": "guides/setup/install.md", "max_chars": 300, "offset": 10}),
    ("read_document", {"id": "guides/setup/instal.md"}),
    ("read_document", {"id": "guides/setup/install.md", "mode": "bogus"}),
    ("read_document", {"id": "guides/setup/install.md", "offset": -1}),
    ("read_section", {"id": "guides/setup/install.md", "section": "Build > Linux"}),
    ("read_section", {"id": "guides/setup/install.md", "section": "nothing here"}),
    ("read_document", {"id": "../outside/secret.md"}),
    # link targets (issue 15): a wikilink, a file name, a heading in the id, and what they link to in the outline
    ("read_document", {"id": "[[guides/setup/install]]", "mode": "outline"}),
    ("read_document", {"id": "[[index#How this vault is organised]]"}),
    ("read_section", {"id": "install", "section": "Linux"}),
]


def search_argv(args: dict[str, Any]) -> list[str]:
    argv = ["search", args["query"]]
    for key, flag in (
        ("mode", "--mode"),
        ("max_results", "--max-results"),
        ("folder", "--folder"),
        ("max_chars", "--max-chars"),
    ):
        if key in args:
            argv += [flag, str(args[key])]
    for tag in args.get("tags", []):
        argv += ["--tag", tag]
    return argv


def read_argv(tool: str, args: dict[str, Any]) -> list[str]:
    argv = ["read", args["id"]]
    if tool == "read_section":
        argv += ["--section", args["section"]]
    elif "mode" not in args:  # without --mode, `read` of a link to a heading prints that section
        argv += ["--mode", "full"]
    for key, flag in (("mode", "--mode"), ("max_chars", "--max-chars"), ("offset", "--offset")):
        if key in args:
            argv += [flag, str(args[key])]
    return argv


def cli_answer(argv: list[str], root: Path, index_dir: Path, capsys: pytest.CaptureFixture[str]) -> tuple[bool, Any]:
    """(is_error, the result as JSON or the error sentence), as the MCP client sees a tool's answer.

    The CLI's own entry point runs in this process (a subprocess per case cost a minute of the suite; the
    subprocess path is covered in tests/test_cli.py)."""
    code = main([*argv, "--root", str(root), "--index-dir", str(index_dir), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    if code != 0:
        assert code == 2
        message = json.loads(out)["error"]
        assert err.strip() == f"error: {message}"  # one sentence on stderr too
        return True, message
    return False, json.loads(out)


async def mcp_answer(client: Client, tool: str, args: dict[str, Any]) -> tuple[bool, Any]:
    r = await client.call_tool(tool, args)
    return (True, r.content[0].text) if r.is_error else (False, r.structured_content)


async def test_cli_search_and_read_answer_exactly_as_the_mcp_tools(
    library: Library, vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_DOCS_EMBEDDINGS", "none")
    async with Client(build_server(library), raise_exceptions=True) as client:
        for args in SEARCHES:
            expected = await mcp_answer(client, "search_documents", args)
            assert cli_answer(search_argv(args), vault, tmp_path / "cli-index", capsys) == expected, args
        for tool, args in READS:
            expected = await mcp_answer(client, tool, args)
            assert cli_answer(read_argv(tool, args), vault, tmp_path / "cli-index", capsys) == expected, (tool, args)


async def test_the_cases_cover_what_the_cli_used_to_get_wrong(library: Library) -> None:
    """The CLI once skipped the tools: an unknown folder gave empty results, 50 results passed unclamped,
    and estimated_tokens was 0. Here the tools' answers to those arguments are what the CLI must now match."""
    async with Client(build_server(library), raise_exceptions=True) as client:
        error, text = await mcp_answer(client, "search_documents", {"query": "install", "folder": "nosuch"})
        assert error and text.startswith("No folder 'nosuch'")
        _, result = await mcp_answer(
            client, "search_documents", {"query": "install", "mode": "keyword", "max_results": 50}
        )
        assert "used 20" in result["note"] and result["estimated_tokens"] > 0
        error, text = await mcp_answer(client, "search_documents", {"query": "install", "mode": "fuzzy"})
        assert (
            error
            and text
            == 'search_documents: argument \'mode\' must be one of "hybrid", "keyword", "semantic", not "fuzzy".'
        )
