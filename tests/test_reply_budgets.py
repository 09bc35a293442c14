"""Replies stay within their budgets whatever the documents hold, through a real in-process MCP client.

Each case is a regression: a 1 MB heading once turned a 200-character read_section error into 60 MB.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_docs.budget import fit_search
from mcp_docs.errors import ERROR_CHARS, FileTooLarge
from mcp_docs.library import Library
from mcp_docs.mcp.server import build_server
from mcp_docs.models import HEADING_PATH_CHARS, TITLE_CHARS
from mcp_docs.paths import Jail
from mcp_docs.settings import Settings
from mcp_docs.tools import DEFAULT_SEARCH_CHARS, LIST_DOCUMENTS_CHARS, DocsTools

pytestmark = pytest.mark.anyio

HUGE_HEADING = "overflow " * 120_000  # ~1 MB
MEGA = 1_000_000


def open_library(root: Path, index: Path) -> Library:
    lib = Library(Settings.load(root, index, embeddings="none", environ={}))
    lib.sync()
    return lib


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    # Few sections under the huge heading: every one repeats it in its heading path, which the index pays for.
    (root / "big.md").write_text(
        f"---\ntitle: {'T' * MEGA}\ntags: [{', '.join(f'tag{i}-' + 'x' * 500 for i in range(300))}]\n---\n"
        f"# {HUGE_HEADING}\n\nalpha intro\n\n## Nested one\n\nalpha nested\n\n## Nested two\n\nalpha\n\n"
        "# Parts\n\n" + "".join(f"## Part {i} {'y' * 300}\n\nalpha part {i}\n\n" for i in range(400))
    )
    for i in range(40):
        (root / f"doc{i:02d}.md").write_text(
            f"# Doc {i}\n\n" + "alpha beta gamma " * 40 + "\n\n## Alpha more\n\nalpha\n"
        )
    return root


@pytest.fixture
async def client(hostile: Path, tmp_path: Path) -> AsyncIterator[Client]:
    lib = open_library(hostile, tmp_path / "index")
    async with Client(build_server(lib), raise_exceptions=True) as c:
        yield c
    lib.close()


def sizes(r: Any) -> tuple[int, int]:
    structured = (
        json.dumps(r.structured_content, ensure_ascii=False, separators=(",", ":")) if r.structured_content else ""
    )
    return len(r.content[0].text), len(structured)


async def test_no_section_error_lists_a_bounded_sample_of_headings(client: Client) -> None:
    r = await client.call_tool("read_section", {"id": "big.md", "section": "nomatch", "max_chars": 200})
    text, _ = sizes(r)
    assert r.is_error and "No section 'nomatch'" in r.content[0].text
    assert text <= ERROR_CHARS
    assert "more" in r.content[0].text and "outline" in r.content[0].text  # the rest is pointed to, not dropped


async def test_ambiguous_section_error_is_bounded(client: Client) -> None:
    r = await client.call_tool("read_section", {"id": "big.md", "section": "Part", "max_chars": 200})
    assert r.is_error and "ambiguous" in r.content[0].text and "more" in r.content[0].text
    assert sizes(r)[0] <= ERROR_CHARS


async def test_a_huge_heading_is_clipped_in_results_and_still_readable(client: Client) -> None:
    r = await client.call_tool("search_documents", {"query": "overflow", "max_results": 1})
    assert not r.is_error
    text, structured = sizes(r)
    assert text < 4000 and structured < 6000
    doc = r.structured_content["results"][0]
    assert doc["id"] == "big.md" and len(doc["title"]) <= TITLE_CHARS + 1 and len(doc["tags"]) <= 20
    path = doc["sections"][0]["heading_path"]
    assert path.endswith("…") and len(path) <= HEADING_PATH_CHARS + 1
    # The clipped heading path read back: the model can use what it was shown.
    r = await client.call_tool("read_section", {"id": "big.md", "section": path, "max_chars": 200})
    assert not r.is_error, r.content[0].text[:300]
    text, structured = sizes(r)
    assert text < 200 + 1500 and structured < 200 + 1500
    r = await client.call_tool("read_document", {"id": "big.md", "mode": "outline", "max_chars": 2000})
    assert not r.is_error and "Part 0" in r.structured_content["content"]  # one heading no longer fills the outline


async def test_search_max_chars_fills_best_first_and_says_what_was_left_out(client: Client) -> None:
    full = await client.call_tool("search_documents", {"query": "alpha", "max_results": 20, "max_chars": 50_000})
    ranking = [d["id"] for d in full.structured_content["results"]]
    assert len(ranking) == 20
    for budget in (1000, 2500, 6000):
        r = await client.call_tool("search_documents", {"query": "alpha", "max_results": 20, "max_chars": budget})
        text, structured = sizes(r)
        assert structured <= budget and text <= budget
        ids = [d["id"] for d in r.structured_content["results"]]
        assert ids and ids == ranking[: len(ids)]  # rank order kept, best first
        note = r.structured_content["note"]
        assert f"{20 - len(ids)} more result" in note and "max_chars" in note and "max_results" in note
    r = await client.call_tool("search_documents", {"query": "alpha", "max_results": 20, "max_chars": 10})
    assert "max_chars 10 is out of range" in r.structured_content["note"]


async def test_search_max_chars_is_in_the_small_tool_definitions(client: Client) -> None:
    tools = (await client.list_tools()).tools
    search = next(t for t in tools if t.name == "search_documents")
    assert search.input_schema["properties"]["max_chars"]["default"] == DEFAULT_SEARCH_CHARS
    definitions = [{"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in tools]
    assert len(json.dumps(definitions)) < 4000


async def test_default_search_budget_keeps_typical_results_whole(client: Client) -> None:
    r = await client.call_tool("search_documents", {"query": "alpha beta", "max_results": 5})
    assert len(r.structured_content["results"]) == 5 and "left out" not in (r.structured_content["note"] or "")
    assert sizes(r)[1] <= DEFAULT_SEARCH_CHARS


async def test_list_documents_page_is_cut_by_size_and_continues_without_loss(tmp_path: Path) -> None:
    root = tmp_path / "many"
    for i in range(150):
        folder = root / f"{'f' * 200}{i:03d}"
        folder.mkdir(parents=True)
        (folder / f"{'n' * 200}.md").write_text(f"---\ntitle: {'t' * 5000}\nsummary: {'s ' * 5000}\n---\n# H\n\nbody\n")
    lib = open_library(root, tmp_path / "index")
    try:
        async with Client(build_server(lib), raise_exceptions=True) as c:
            seen: list[str] = []
            cursor = None
            for _ in range(20):
                args: dict[str, Any] = {"limit": 200} | ({"cursor": cursor} if cursor else {})
                r = await c.call_tool("list_documents", args)
                s = r.structured_content
                assert sizes(r)[1] <= LIST_DOCUMENTS_CHARS + 6000 + 2000
                assert len(s["folders"]) < 150 and "subfolders" in s["note"]
                seen += [d["id"] for d in s["documents"]]
                cursor = s["next_cursor"]
                if not cursor:
                    break
                assert "next_cursor" in s["note"]
            assert len(seen) == len(set(seen)) == 150
    finally:
        lib.close()


async def test_a_folder_name_over_255_bytes_gets_a_sentence(client: Client) -> None:
    for name, args in (
        ("list_documents", {"folder": "x" * 300}),
        ("search_documents", {"query": "alpha", "folder": "x" * 300}),
        ("search_documents", {"query": "alpha", "folder": "é" * 200 + "/sub"}),
    ):
        r = await client.call_tool(name, args)
        assert r.is_error and r.content[0].text.startswith("No folder"), r.content[0].text


async def test_a_vanished_root_is_said_not_blamed_on_the_id(hostile: Path, tmp_path: Path) -> None:
    lib = open_library(hostile, tmp_path / "index")
    try:
        async with Client(build_server(lib), raise_exceptions=True) as c:
            assert not (await c.call_tool("read_document", {"id": "doc01.md"})).is_error
            hostile.rename(tmp_path / "moved")
            for name, args in (
                ("read_document", {"id": "doc01.md"}),
                ("read_section", {"id": "doc01.md", "section": "Doc 1"}),
                ("list_documents", {}),
                ("search_documents", {"query": "alpha"}),
            ):
                r = await c.call_tool(name, args)
                assert r.is_error and "root folder no longer exists" in r.content[0].text, (name, r.content[0].text)
                assert "Closest ids" not in r.content[0].text
    finally:
        lib.close()


def test_size_limit_message_shows_exact_sizes_when_rounding_ties(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"x" * 5_200_010)
    jail = Jail(tmp_path)
    with pytest.raises(FileTooLarge) as info:
        jail.read_bytes(tmp_path / "a.md", 5_200_000)
    assert str(info.value) == "5,200,010 bytes is over the 5,200,000 bytes limit"
    with pytest.raises(FileTooLarge) as info:
        jail.read_bytes(tmp_path / "a.md", 1_000_000)
    assert str(info.value) == "5.2 MB is over the 1.0 MB limit"


def test_fit_search_is_what_the_cli_uses(hostile: Path, tmp_path: Path) -> None:
    lib = open_library(hostile, tmp_path / "index")
    try:
        result = lib.search("alpha", 20, "keyword")
        fit_search(result, 1500)
        assert len(result.model_dump_json()) <= 1500 and "left out" in (result.note or "")
        assert DocsTools(lib).search_documents("alpha", 20, "keyword", max_chars=1500).results == result.results
    finally:
        lib.close()


def test_cli_search_max_chars(hostile: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_docs.cli import main

    code = main(
        [
            "search",
            "alpha",
            "--root",
            str(hostile),
            "--index-dir",
            str(tmp_path / "ix"),
            "--embeddings",
            "none",
            "--max-results",
            "20",
            "--max-chars",
            "2000",
            "--json",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and len(out.strip()) <= 2000
    assert "left out" in json.loads(out)["note"]


def test_root_gone_after_open_is_said_by_the_tools(hostile: Path, tmp_path: Path) -> None:
    lib = open_library(hostile, tmp_path / "index")
    try:
        shutil.rmtree(hostile)
        with pytest.raises(Exception, match="root folder no longer exists"):
            DocsTools(lib).read_document("doc01.md")
    finally:
        lib.close()


def test_clip_looks_at_a_bounded_prefix_and_says_when_it_cut() -> None:
    from mcp_docs.snippets import clip, clip_list

    assert clip("word " * 200_000, 50).endswith("…") and len(clip("word " * 200_000, 50)) <= 51
    assert clip("a" + " " * 10_000 + "b", 50) == "a…"  # cut inside a whitespace run: still marked as cut
    assert clip("short  text", 50) == "short text"
    listed = clip_list((f"item{i}" for i in range(10_000)), 100, where=" (see the outline)")
    assert len(listed) < 160 and listed.endswith("more (see the outline)") and "… and 99" in listed
    assert clip_list(["x" * 10_000], 100, 50) == "x" * 50 + "…"  # the first item is clipped, never dropped
