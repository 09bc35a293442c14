"""Issue 30, second pass: backlinks from the catalog's stored resolutions (kept up to date incrementally at each
sync, paged in SQL), the linking note's language between equally near candidates, folder filters in NFC. Vaults
written here; a real MCP client over the in-memory transport, the catalog's SQLite file read directly."""

from __future__ import annotations

import sqlite3
import unicodedata
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from mcp_docs.library import Library
from mcp_docs.markdown import parse_markdown
from mcp_docs.mcp.server import build_server
from mcp_docs.outline import outline
from mcp_docs.settings import Settings
from mcp_docs.store.embedded.catalog_schema import SCHEMA_VERSION
from mcp_docs.tools import STORED_OUTLINE_BYTES, DocsTools

from .server_fixtures import write

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def catalog_file(index: Path) -> Path:
    return next(index.rglob("catalog.sqlite"))


def stored(index: Path) -> dict[tuple[str, str], str | None]:
    """(linking note, target as written) → the resolved id the catalog keeps ('' for none)."""
    with sqlite3.connect(catalog_file(index)) as conn:
        return {(r[0], r[1]): r[2] for r in conn.execute("select doc_id, target, resolved from links")}


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[Path, Path, Library, Client]]:
    root, index = tmp_path / "vault", tmp_path / "index"
    write(root, "Target.md", "# Target\n")
    write(root, "sub/a.md", "# A\n\n[[Target]] and [[Goal]]\n")
    write(root, "b.md", "# B\n\n[[Target]] [[Other]]\n")
    write(root, "Other.md", "# Other\n")
    with Library(Settings.load(root, index, embeddings="none", environ={})) as lib:
        lib.sync()
        async with Client(build_server(lib), raise_exceptions=True) as c:
            yield root, index, lib, c


async def call(client: Client, tool: str, **args: object) -> dict:
    r = await client.call_tool(tool, args)
    assert not r.is_error, r.content[0].text
    return r.structured_content  # type: ignore[return-value]


async def backlinks(client: Client, target: str) -> list[str]:
    return [d["id"] for d in (await call(client, "list_documents", linked_to=target))["documents"]]


async def test_each_link_row_stores_what_it_resolves_to_and_syncs_resolve_again_only_the_rows_of_changed_names(
    served: tuple[Path, Path, Library, Client],
) -> None:
    root, index, lib, c = served
    assert stored(index) == {
        ("sub/a.md", "Target"): "Target.md",
        ("sub/a.md", "Goal"): "",  # nothing named Goal: broken
        ("b.md", "Target"): "Target.md",
        ("b.md", "Other"): "Other.md",
    }
    # A row no name of the next changes touches keeps what is stored: mark it to see that it is not redone.
    with sqlite3.connect(catalog_file(index)) as conn:
        conn.execute("update links set resolved = 'untouched' where doc_id = 'b.md' and target = 'Other'")
    write(root, "sub/Target.md", "---\naliases: [Goal]\n---\n# Nearer target\n")  # nearer to sub/a.md
    lib.sync()
    assert stored(index) == {
        ("sub/a.md", "Target"): "sub/Target.md",
        ("sub/a.md", "Goal"): "sub/Target.md",  # its alias: the linking note was not re-read
        ("b.md", "Target"): "Target.md",
        ("b.md", "Other"): "untouched",
    }
    assert await backlinks(c, "Target.md") == ["b.md"]
    assert await backlinks(c, "sub/Target.md") == ["sub/a.md"]
    # An edit that keeps a note's names and language resolves nothing again (a hub's 20,000 backlinks).
    with sqlite3.connect(catalog_file(index)) as conn:
        conn.execute("update links set resolved = 'kept' where doc_id = 'b.md' and target = 'Target'")
    write(root, "Target.md", "# Target\n\nedited, same names\n")
    lib.sync()
    assert stored(index)[("b.md", "Target")] == "kept"
    write(root, "Target.md", "---\nlang: fr\n---\n# Target\n\nautre langue\n")  # its language: resolved again
    lib.sync()
    assert stored(index)[("b.md", "Target")] == "Target.md"  # b.md's language is undecided: the shortest path
    (root / "sub/Target.md").rename(root / "sub/Elsewhere.md")  # renamed: its old name's links fall back
    lib.sync()
    assert await backlinks(c, "Target.md") == ["b.md", "sub/a.md"]
    assert await backlinks(c, "sub/Elsewhere.md") == ["sub/a.md"]  # through the alias Goal, which it kept
    (root / "Target.md").unlink()
    lib.sync()
    assert stored(index)[("b.md", "Target")] == ""
    outline = (await call(c, "read_document", id="sub/Elsewhere.md", mode="outline"))["content"]
    assert "Linked from (1): sub/a.md." in outline


async def test_backlinks_are_paged_in_sql_with_the_cursor(tmp_path: Path) -> None:
    root, index = tmp_path / "vault", tmp_path / "index"
    write(root, "hub.md", "# Hub\n")
    linking = [f"notes/n{i:03}.md" for i in range(120)]
    for doc_id in linking:
        write(root, doc_id, "# N\n\n[[hub]] [[Hub#Top]] [[hub|again]]\n")
    write(root, "notes/self.md", "# Self\n\n[[self]]\n")
    with Library(Settings.load(root, index, embeddings="none", environ={})) as lib:
        lib.sync()
        async with Client(build_server(lib), raise_exceptions=True) as c:
            seen: list[str] = []
            page = await call(c, "list_documents", linked_to="hub", limit=50)
            assert page["total"] == 120 and page["folders"] == [{"path": "notes", "documents": 120}]
            seen += [d["id"] for d in page["documents"]]
            while page["next_cursor"]:
                page = await call(c, "list_documents", linked_to="hub", limit=50, cursor=page["next_cursor"])
                seen += [d["id"] for d in page["documents"]]
            assert seen == linking
            in_folder = await call(c, "list_documents", linked_to="hub", folder="notes", limit=5, cursor=None)
            assert in_folder["total"] == 120 and [d["id"] for d in in_folder["documents"]] == linking[:5]
            outline = (await call(c, "read_document", id="hub.md", mode="outline"))["content"]
            assert (
                "Linked from (120): notes/n000.md, notes/n001.md, notes/n002.md, notes/n003.md, notes/n004.md, …"
                in outline
            )
            assert (await call(c, "list_documents", linked_to="notes/self.md"))[
                "total"
            ] == 0  # itself is not a backlink


def test_a_catalog_of_schema_7_is_rebuilt_with_the_resolved_column(tmp_path: Path) -> None:
    root, index = tmp_path / "vault", tmp_path / "index"
    write(root, "Target.md", "# Target\n")
    write(root, "a.md", "# A\n\n[[Target]]\n")
    settings = Settings.load(root, index, embeddings="none", environ={})
    with Library(settings) as lib:
        lib.sync()
    with sqlite3.connect(catalog_file(index)) as conn:  # as schema 7 left it
        conn.execute("drop table links")
        conn.execute(
            "create table links (doc_id text not null, n integer not null, line integer not null, kind text not null,"
            " target text not null, heading text, key text not null, count integer not null,"
            " primary key (doc_id, n)) without rowid"
        )
        conn.execute("insert into links values ('a.md', 0, 3, 'wiki', 'Target', null, 'target', 1)")
        conn.execute("update meta set value = '7' where key = 'schema_version'")
    assert SCHEMA_VERSION == 8
    with Library(settings) as lib:
        lib.sync()
        assert lib.catalog.linking("Target.md", 5) == (["a.md"], 1)
    assert stored(index) == {("a.md", "Target"): "Target.md"}


def lang_note(lang: str, title: str, body: str = "") -> str:
    return f"---\nlang: {lang}\n---\n# {title}\n\n{body}\n"


async def test_between_equally_near_candidates_the_linking_notes_language_wins(tmp_path: Path) -> None:
    root, index = tmp_path / "vault", tmp_path / "index"
    write(root, "en/Plugins/Canvas.md", lang_note("en", "Canvas"))
    write(root, "da/Plugin/Canvas.md", lang_note("da", "Canvas"))  # one character shorter
    write(root, "fr/Plugins/Canvas.md", lang_note("fr", "Canvas"))
    write(root, "Release notes/v1.md", lang_note("en", "v1", "New: [[Canvas]]."))
    write(root, "Release notes/v1-fr.md", lang_note("fr", "v1", "Nouveau : [[Canvas]]."))
    write(root, "Release notes/v1-de.md", lang_note("de", "v1", "Neu: [[Canvas]]."))  # no German one: shortest
    write(root, "en/Start.md", lang_note("fr", "Start", "[[Canvas]]"))  # the nearest before the language
    with Library(Settings.load(root, index, embeddings="none", environ={})) as lib:
        lib.sync()
        async with Client(build_server(lib), raise_exceptions=True) as c:
            assert await backlinks(c, "en/Plugins/Canvas.md") == ["Release notes/v1.md", "en/Start.md"]
            assert await backlinks(c, "fr/Plugins/Canvas.md") == ["Release notes/v1-fr.md"]
            assert await backlinks(c, "da/Plugin/Canvas.md") == ["Release notes/v1-de.md"]
            outline = (await call(c, "read_document", id="Release notes/v1.md", mode="outline"))["content"]
            assert "Links to (1): en/Plugins/Canvas.md." in outline
        write(root, "uk/Plugins/Canvas.md", lang_note("en", "Canvas"))  # as near, as long, same language: a tie
        lib.sync()
        async with Client(build_server(lib), raise_exceptions=True) as c:
            assert await backlinks(c, "en/Plugins/Canvas.md") == ["en/Start.md"]
            outline = (await call(c, "read_document", id="Release notes/v1.md", mode="outline"))["content"]
            assert "'Canvas' (ambiguous: 4 documents)" in outline


@pytest.mark.parametrize("on_disk", ["NFD", "NFC"])
async def test_a_folder_filter_finds_a_folder_in_the_other_unicode_form(tmp_path: Path, on_disk: str) -> None:
    root, index = tmp_path / "vault", tmp_path / "index"
    folder = unicodedata.normalize(on_disk, "Café")
    asked = unicodedata.normalize("NFC" if on_disk == "NFD" else "NFD", "Café")
    assert folder != asked
    write(root, f"{folder}/menu/espresso.md", "# Espresso\n\nA short black coffee.\n")
    write(root, "tea.md", "# Tea\n\ncoffee is elsewhere\n")
    with Library(Settings.load(root, index, embeddings="none", environ={})) as lib:
        lib.sync()
        async with Client(build_server(lib), raise_exceptions=True) as c:
            listed = await call(c, "list_documents", folder=asked)
            assert [d["id"] for d in listed["documents"]] == [f"{folder}/menu/espresso.md"]
            listed = await call(c, "list_documents", folder=f"{asked}/menu")
            assert listed["total"] == 1
            found = await call(c, "search_documents", query="coffee", folder=asked, mode="keyword")
            assert [r["id"] for r in found["results"]] == [f"{folder}/menu/espresso.md"]


def test_a_large_notes_outline_comes_from_the_catalog_unless_the_file_changed_since(tmp_path: Path) -> None:
    root, index = tmp_path / "vault", tmp_path / "index"
    write(root, "Target.md", "# Target\n")
    text = "# Big\n\nintro\n\n## Part one\n\n" + "[[Target]] " * 100_000 + "\r\n\n## Part two\n\n[[Other]] end\n"
    assert len(text) > STORED_OUTLINE_BYTES
    write(root, "big.md", text)
    write(root, "c.md", "# C\n\n[[big]]\n")
    with Library(Settings.load(root, index, embeddings="none", environ={})) as lib:
        lib.sync()
        tools = DocsTools(lib)
        got = tools.read_document("big.md", mode="outline")
        assert tools.parse_cache.parses == 0  # the 1.1 MB note was not parsed
        parsed = parse_markdown(text, "big")
        assert got.content == outline(parsed) + tools.links.outline_lines("big.md", parsed.links)
        assert "## Part two (L" in got.content and "Links to (2): Target.md, 'Other' (unresolved)." in got.content
        assert "Linked from (1): c.md." in got.content and got.title == "Big"
        write(root, "big.md", text + "\n## Part three\n")  # not synced: the catalog's sections are stale
        got = tools.read_document("big.md", mode="outline")
        assert tools.parse_cache.parses == 1 and "## Part three" in got.content
