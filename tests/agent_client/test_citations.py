"""Citations checked against what the tools returned: a hostile scripted model on the real mcp-docs server
over the example vault (stdio), the real openai SDK talking to the loopback fake LLM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from agent_client.citations import parse_citations
from agent_client.mcp_session import DocsFolder, connect

from .fake_llm import FakeLLM, oa_text, oa_tools
from .helpers import ask

pytestmark = pytest.mark.anyio
EXAMPLES = Path(__file__).parent.parent.parent / "examples"


@pytest.fixture
async def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """mcp-docs serving examples/ over stdio, keyword search, its index in a temp folder."""
    monkeypatch.setenv("MCP_DOCS_INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.setenv("MCP_DOCS_EMBEDDINGS", "none")
    async with connect(DocsFolder(str(EXAMPLES))) as conn:
        yield conn


def search(cid: str, query: str) -> tuple[str, str, str]:
    return (cid, "search_documents", json.dumps({"query": query, "mode": "keyword"}))


def cited(result) -> list[tuple[str, str | None, bool, str | None]]:
    return [(c.id, c.heading, c.verified, c.reason) for c in result.citations]


async def test_tool_arguments_are_no_evidence(llm: FakeLLM, vault) -> None:
    """The model searches for the document it then cites; the search finds nothing. Before: verified."""
    llm.push(
        oa_tools([search("s1", "notes/ghost-licence.md Terms")]),
        oa_text("The licence allows it (notes/ghost-licence.md — Terms)."),
    )
    result = await ask("Can I redistribute it?", llm, vault)
    assert result.stopped_reason == "final", result.error
    assert cited(result) == [("notes/ghost-licence.md", "Terms", False, "no such document")]


async def test_a_heading_counts_only_for_its_own_document(llm: FakeLLM, vault) -> None:
    """One search shows install.md's Linux section and backups.md; `backups.md — Linux` mixes the two."""
    llm.push(
        oa_tools([search("s1", "Linux nightly snapshot")]),
        oa_text("Snapshots run nightly on Linux (notes/backups.md — Linux); install it (guides/install.md — Linux)."),
    )
    result = await ask("How are Linux backups done?", llm, vault)
    request = llm.requests[1].body["messages"][-1]["content"]
    assert "notes/backups.md" in request and "Linux" in request  # both were in the same search result
    assert cited(result) == [
        ("notes/backups.md", "Linux", False, "no such heading in that document"),
        ("guides/install.md", "Linux", True, None),
    ]


async def test_ids_match_exactly_never_by_substring(llm: FakeLLM, vault) -> None:
    llm.push(
        oa_tools([("r1", "read_section", json.dumps({"id": "guides/install.md", "section": "Linux"}))]),
        oa_text(
            "Use the package (install.md — Linux). Same (./Guides/Install.MD — Linux). Also (guides/install.md — macOS)."
        ),
    )
    result = await ask("How do I install on Linux?", llm, vault)
    assert cited(result) == [
        ("install.md", "Linux", False, "no such document"),  # a suffix of guides/install.md, not its id
        ("./Guides/Install.MD", "Linux", True, None),  # case, ./ and .md do not count
        ("guides/install.md", "macOS", False, "never read"),  # a real heading this run never showed
    ]


async def test_every_citation_shape_is_parsed_and_checked(llm: FakeLLM, vault) -> None:
    """Shapes that were not parsed at all, so never flagged: each real one verified, each invented one not."""
    llm.push(
        oa_tools([("r1", "read_document", json.dumps({"id": "guides/install.md", "mode": "outline"}))]),
        oa_text(
            "A (guides/install.md > Installing the collector > Linux). B (`guides/install.md` — macOS). "
            "C (**guides/install.md** — Windows). D (source: guides/install.md — Requirements). "
            "E [the guide](docs://guides/install.md#linux). F[^1] G[^2]\n\n"
            "[^1]: guides/install.md#configuration\n[^2]: notes/backups.md#daily\n"
        ),
    )
    result = await ask("How do I install it?", llm, vault)
    assert cited(result) == [
        ("guides/install.md", "Installing the collector > Linux", True, None),
        ("guides/install.md", "macOS", True, None),
        ("guides/install.md", "Windows", True, None),
        ("guides/install.md", "Requirements", False, "no such heading in that document"),
        ("guides/install.md", "linux", True, None),  # a docs:// link, its fragment a heading slug
        ("guides/install.md", "configuration", True, None),  # a footnote
        ("notes/backups.md", "daily", False, "never read"),  # a real heading, never shown in this run
    ]


def test_parse_covers_the_common_shapes() -> None:
    assert parse_citations(
        "(a/b.md — H1; c.md § H2) [d/e.md — H3] (source: f.md: H4) <docs://Release%20notes/v1.md> "
        "(in en/Getting started/Vault.md — Steps) (see below — it is long) (e.g. the config)"
    ) == [
        ("a/b.md", "H1"),
        ("c.md", "H2"),
        ("d/e.md", "H3"),
        ("f.md", "H4"),
        ("Release notes/v1.md", None),
        ("in en/Getting started/Vault.md", "Steps"),  # the id is found among what the run showed
    ]


def test_parse_headings_with_parentheses_dots_and_quotes() -> None:
    """Found by benchmarks/citation_eval on the OTel docs (recall 0.907 before): each was cut or lost."""
    assert parse_citations(
        "(a/r.md — Persistent storage (write-ahead log - WAL)) (b.md — (top)) "
        "(source: c/s.md — OpenTelemetry.io word list) (`d/c.md` — Runtime .NET) "
        "(e/t.md — Could not install 'Runtime.Native') (f.md — H1, g/h.md — H2) (i.md and j/k.md)"
    ) == [
        ("a/r.md", "Persistent storage (write-ahead log - WAL)"),
        ("b.md", "(top)"),
        ("c/s.md", "OpenTelemetry.io word list"),
        ("d/c.md", "Runtime .NET"),
        ("e/t.md", "Could not install 'Runtime.Native'"),
        ("f.md", "H1"),
        ("g/h.md", "H2"),
        ("i.md", None),
        ("j/k.md", None),
    ]


text_only = MCPServer("text-only-docs")


@text_only.tool()
def search_documents(query: str) -> str:
    """Search; plain text lines `id — Heading: snippet`, no structured content."""
    return "No results." if "ghost" in query else "guides/setup.md — Installation: Run pip install widget."


@text_only.tool()
def read_section(id: str, section: str) -> str:
    """Read a section; plain text."""
    if id != "ops/backup.md":
        raise ToolError(f"No document {id!r}.")
    return "# Schedule\nBackups run nightly at 02:00 UTC."


async def test_a_server_without_structured_results_is_read_from_its_text(llm: FakeLLM) -> None:
    """A search line names its document and heading; a read that succeeded is the document it was asked for,
    with the headings of the text it returned; a search's arguments still count for nothing."""
    llm.push(
        oa_tools(
            [
                ("s1", "search_documents", '{"query": "install"}'),
                ("s2", "search_documents", '{"query": "ghost/licence.md Terms"}'),
                ("r1", "read_section", '{"id": "ops/backup.md", "section": "Schedule"}'),
                ("r2", "read_section", '{"id": "ghost/licence.md", "section": "Terms"}'),
            ]
        ),
        oa_text(
            "(guides/setup.md — Installation) (guides/setup.md — Configuration) (ops/backup.md — Schedule) "
            "(ghost/licence.md — Terms)"
        ),
    )
    async with connect(text_only) as conn:
        result = await ask("?", llm, conn)
    assert cited(result) == [
        ("guides/setup.md", "Installation", True, None),
        ("guides/setup.md", "Configuration", False, "never read"),
        ("ops/backup.md", "Schedule", True, None),
        ("ghost/licence.md", "Terms", False, "never read"),  # no read_document tool to tell more
    ]
