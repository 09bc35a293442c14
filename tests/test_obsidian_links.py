"""Issue 30 on a vault shaped like the Obsidian help vault (written here, no third-party text): language folders
holding notes of the same name, wikilinks with escaped pipes in table cells, URLs of other schemes, a file name
in NFD, and link bombs; through a real MCP client, the catalog's SQLite file and `mcp-docs status --json`."""

from __future__ import annotations

import json
import sqlite3
import unicodedata
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from mcp import Client

from mcp_docs.library import Library
from mcp_docs.links import MAX_LINKS_PER_DOCUMENT
from mcp_docs.mcp.server import INSTRUCTIONS, build_server
from mcp_docs.settings import Settings

from .server_fixtures import write
from .test_cli import run

pytestmark = pytest.mark.anyio

CAFE_NFD = unicodedata.normalize("NFD", "en/Café.md")
CAFE_NFC = unicodedata.normalize("NFC", "Café")
BOMB_LINKS = 200_000  # `[[Target]] ` × 200,000: 1.2 MB per note, two notes


def start_here(lang: str, words: tuple[str, str, str]) -> str:
    table, missing, other = words
    return f"""# {words[0]}

Open a [[Canvas]] or read the [[Callouts]]. Also [[Missing page]] and [[{missing}]].

| view | use |
| --- | --- |
| [[Table view\\|{table}]] | [[Callouts#Kinds\\|{other}]] |

[Maps](obsidian://show-plugin?id=maps) [paper](zotero://select/items/ABC) [[x-devonthink-item://1234]]
[write](mailto:someone@example.org) [local](file:///home/me/notes/x.md) [[{CAFE_NFC}]] [site](https://obsidian.md)
"""


def make_vault(base: Path) -> Path:
    root = base / "vault"
    write(root, "en/Start here.md", start_here("en", ("Table", "Missing page", "kinds")))
    write(root, "fr/Start here.md", start_here("fr", ("Tableau", "Page absente", "types")))
    for lang in ("en", "fr"):
        write(root, f"{lang}/Plugins/Canvas.md", f"# Canvas {lang}\n\nCards. See [[Missing page]].\n")
        write(root, f"{lang}/Editing/Callouts.md", f"# Callouts {lang}\n\n## Kinds\n\nnote, tip\n")
        write(root, f"{lang}/Bases/Table view.md", f"# Table view {lang}\n\nrows\n")
    write(root, CAFE_NFD, "# Café\n\nespresso\n")
    # outside every language folder: en/ and fr/ are equally near and equally long, a real tie
    write(root, "Release notes/v1.0.md", "# v1.0\n\nNew: [[Canvas]].\n")
    return root


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    base = tmp_path_factory.mktemp("obsidian")
    root = make_vault(base)
    with Library(Settings.load(root, base / "index", embeddings="none", environ={})) as lib:
        lib.sync()
    yield root, base / "index"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def client(vault: tuple[Path, Path]) -> AsyncIterator[Client]:
    root, index = vault
    with Library(Settings.load(root, index, embeddings="none", environ={})) as lib:
        async with Client(build_server(lib), raise_exceptions=True) as c:
            yield c


async def call(client: Client, tool: str, **args: object) -> dict:
    r = await client.call_tool(tool, args)
    assert not r.is_error, r.content[0].text
    return r.structured_content  # type: ignore[return-value]


async def backlinks(client: Client, target: str) -> list[str]:
    return [d["id"] for d in (await call(client, "list_documents", linked_to=target))["documents"]]


def status(root: Path, index: Path) -> dict:
    out = run("status", "--root", str(root), "--index-dir", str(index), "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_status_lists_only_the_links_that_are_really_broken_most_notes_first(vault: tuple[Path, Path]) -> None:
    targets = status(*vault)["broken_link_targets"]
    assert [(t["target"], t["notes"], t["reason"].split(":")[0]) for t in targets] == [
        ("Missing page", 4, "no such document"),  # en and fr 'Start here', both 'Canvas' notes
        ("Canvas", 1, "ambiguous"),  # from Release notes/: en/ and fr/ tie
        ("Page absente", 1, "no such document"),
    ]
    assert targets[0]["links"] == 5  # written twice in en/Start here.md ([[Missing page]] and its own word)


async def test_a_shared_name_links_to_the_note_of_the_same_language(client: Client) -> None:
    assert await backlinks(client, "en/Plugins/Canvas.md") == ["en/Start here.md"]
    assert await backlinks(client, "fr/Plugins/Canvas.md") == ["fr/Start here.md"]
    assert await backlinks(client, "fr/Editing/Callouts.md") == ["fr/Start here.md"]
    outline = (await call(client, "read_document", id="fr/Start here.md", mode="outline"))["content"]
    assert "fr/Plugins/Canvas.md" in outline and "en/Plugins/Canvas.md" not in outline


async def test_an_escaped_table_pipe_keeps_the_backlink(client: Client) -> None:
    assert await backlinks(client, "en/Bases/Table view.md") == ["en/Start here.md"]
    assert await backlinks(client, "fr/Bases/Table view.md") == ["fr/Start here.md"]
    outline = (await call(client, "read_document", id="en/Start here.md", mode="outline"))["content"]
    assert "en/Editing/Callouts.md#Kinds" in outline and "Table view\\" not in outline


async def test_urls_of_any_scheme_are_neither_links_nor_broken(client: Client, vault: tuple[Path, Path]) -> None:
    outline = (await call(client, "read_document", id="en/Start here.md", mode="outline"))["content"]
    for url in ("obsidian:", "zotero:", "x-devonthink-item:", "mailto:", "file:", "https:"):
        assert url not in outline
    shown = json.dumps(status(*vault)["broken_links"])
    for url in ("obsidian:", "zotero:", "x-devonthink-item:", "mailto:", "file:"):
        assert url not in shown


async def test_a_name_written_in_nfc_reaches_a_file_named_in_nfd(client: Client) -> None:
    assert unicodedata.normalize("NFC", CAFE_NFD) != CAFE_NFD
    assert sorted(await backlinks(client, CAFE_NFD)) == ["en/Start here.md", "fr/Start here.md"]
    for given in (unicodedata.normalize("NFC", CAFE_NFD), CAFE_NFC, f"[[{CAFE_NFC}]]"):
        r = await call(client, "read_document", id=given)
        assert r["id"] == CAFE_NFD and "espresso" in r["content"]
    assert sorted(await backlinks(client, CAFE_NFC)) == ["en/Start here.md", "fr/Start here.md"]


async def test_the_tool_definitions_say_linked_to_answers_what_links_to_a_note(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    listing = tools["list_documents"]
    assert "links to" in (listing.description or "")
    assert "which notes link to" in listing.input_schema["properties"]["linked_to"]["description"]
    assert "list_documents(linked_to=id), not a search" in INSTRUCTIONS
    definitions = [
        {"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in tools.values()
    ]
    assert len(json.dumps(definitions)) <= 4000


@pytest.fixture(scope="module")
def bombed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("bomb")
    root = base / "vault"
    write(root, "Target.md", "# Target\n\nwhat the bombs link to\n")
    for i in range(2):
        write(root, f"bomb{i}.md", "# Bomb\n\n" + "[[Target]] " * BOMB_LINKS + "\n")
    write(root, "many.md", "# Many\n\n" + " ".join(f"[[n{i}]]" for i in range(MAX_LINKS_PER_DOCUMENT + 10)) + "\n")
    with Library(Settings.load(root, base / "index", embeddings="none", environ={})) as lib:
        lib.sync()
    return root, base / "index"


def test_a_link_bomb_is_stored_as_one_row_per_target_and_a_bounded_number_of_targets(
    bombed: tuple[Path, Path],
) -> None:
    catalog = next(bombed[1].rglob("catalog.sqlite*"))
    with sqlite3.connect(catalog) as conn:
        rows = dict(conn.execute("select doc_id, count(*) from links group by doc_id"))
        counts = dict(conn.execute("select doc_id, sum(count) from links group by doc_id"))
    assert rows == {"bomb0.md": 1, "bomb1.md": 1, "many.md": MAX_LINKS_PER_DOCUMENT}
    assert counts["bomb0.md"] == BOMB_LINKS
    warnings = {w["path"]: w["warnings"] for w in status(*bombed)["warnings"]}
    assert warnings["many.md"] == [f"10 more link targets not indexed (first {MAX_LINKS_PER_DOCUMENT:,} kept)"]


async def test_every_tool_answers_a_link_bomb(bombed: tuple[Path, Path]) -> None:
    # How fast (under a second each, 4.9 MB bombs) is measured in benchmarks/broken_links.py, not asserted here:
    # a timed assertion fails on a loaded 2-core machine. What made them slow (a row per link) is asserted above.
    root, index = bombed
    with Library(Settings.load(root, index, embeddings="none", environ={})) as lib:
        async with Client(build_server(lib), raise_exceptions=True) as c:
            await call(c, "read_document", id="bomb0.md", mode="outline")  # parsed once: the parse cache's share
            for tool, args in (
                ("list_documents", {"linked_to": "Target"}),
                ("read_document", {"id": "Target.md", "mode": "outline"}),
                ("read_document", {"id": "bomb0.md", "mode": "outline"}),
                ("search_documents", {"query": "Target", "mode": "keyword"}),
                ("read_section", {"id": "bomb1.md", "section": "Bomb", "max_chars": 1000}),
            ):
                r = await call(c, tool, **args)
                if args.get("linked_to"):
                    assert r["total"] == 2 and [d["id"] for d in r["documents"]] == ["bomb0.md", "bomb1.md"]
                if args.get("id") == "Target.md":
                    assert "Linked from (2): bomb0.md, bomb1.md." in r["content"]
    assert status(root, index)["broken_link_targets"][0]["notes"] == 1  # n0 … n4999, one note each
