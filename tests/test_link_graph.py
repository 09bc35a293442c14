"""Links through a real MCP client and the CLI: targets resolved wherever an id is accepted, the outline's links
and backlinks, `list_documents(linked_to=)` paging, broken links in `mcp-docs status`, and freshness after a sync."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from mcp import Client

from mcp_docs.cli import main
from mcp_docs.library import Library
from mcp_docs.server import build_server
from mcp_docs.settings import Settings

from .server_fixtures import write
from .test_cli import run

pytestmark = pytest.mark.anyio

NOTE_A = """# A

See [[Quokka Setup#Linux]] and [[QS]], also [the Mac part](../Quokka%20Setup.md#mac).
A neighbour: [[dup]]. Gone: [[Missing Note]].
Out: [[../../etc/passwd]], [x](/etc/passwd), [[secret]], [[escape]].
![diagram](img/d.png) [site](https://example.org)
"""
HUB_REFS = 7


def make_vault(base: Path) -> Path:
    root = base / "vault"
    write(
        root,
        "Quokka Setup.md",
        "---\naliases: [QS]\n---\n# Quokka Setup\n\n## Linux\n\nlinux steps\n\n## Mac\n\nbrew\n\n## Build (from source)\n\nmake\n",
    )
    write(root, "notes/a.md", NOTE_A)
    write(root, "notes/dup.md", "# Dup in notes\n")
    write(root, "other/dup.md", "# Dup in other\n")
    write(root, "Setup.md", "# Root setup\n")
    write(root, "guides/setup.md", "# Guide setup\n")
    write(root, "hub.md", "# Hub\n\nThe centre.\n")
    for i in range(HUB_REFS):
        write(root, f"refs/r{i}.md", f"# Ref {i}\n\nBack to the [[hub]].\n")
    write(root, ".hidden/secret.md", "# Secret\n\nhiddenmarker\n")  # a dot-folder: never served
    write(base, "outside/escape.md", "# Escape\n\noutsidemarker\n")
    if hasattr(os, "symlink"):
        os.symlink(base / "outside" / "escape.md", root / "escape.md")
    return root


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    base = tmp_path_factory.mktemp("links")
    lib = Library(Settings.load(make_vault(base), base / "index", embeddings="none", environ={}))
    lib.sync()
    yield lib
    lib.close()


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def client(library: Library) -> AsyncIterator[Client]:
    async with Client(build_server(library), raise_exceptions=True) as c:
        yield c


async def call(client: Client, tool: str, **args: object) -> dict:
    r = await client.call_tool(tool, args)
    assert not r.is_error, r.content[0].text
    return r.structured_content  # type: ignore[return-value]


async def error(client: Client, tool: str, **args: object) -> str:
    r = await client.call_tool(tool, args)
    assert r.is_error, r.structured_content
    text: str = r.content[0].text
    assert "\n" not in text and "Traceback" not in text
    return text


async def test_a_wikilink_with_a_heading_reads_that_section(client: Client) -> None:
    r = await call(client, "read_section", id="[[Quokka Setup#Linux]]")
    assert (r["id"], r["heading"]) == ("Quokka Setup.md", "Linux") and "linux steps" in r["content"]
    r = await call(client, "read_section", id="quokka setup#mac")
    assert r["heading"] == "Mac"
    r = await call(client, "read_section", id="[[Quokka Setup#Linux]]", section="Mac")  # an explicit section wins
    assert r["heading"] == "Mac"
    r = await call(client, "read_document", id="[[Quokka Setup#Linux]]")
    assert r["id"] == "Quokka Setup.md" and "read_section" in r["note"]
    assert "section is empty" in await error(client, "read_section", id="[[Quokka Setup]]")
    # a Markdown link's fragment is the heading's anchor
    r = await call(client, "read_section", id="Quokka%20Setup.md#build-from-source")
    assert r["heading"] == "Build (from source)" and "make" in r["content"]
    assert "No section 'nowhere'" in await error(client, "read_section", id="[[Quokka Setup#nowhere]]")


async def test_names_aliases_and_paths_resolve_wherever_an_id_is_accepted(client: Client) -> None:
    assert (await call(client, "read_document", id="[[QS]]"))["id"] == "Quokka Setup.md"
    assert (await call(client, "read_document", id="qs", mode="outline"))["id"] == "Quokka Setup.md"
    assert (await call(client, "read_section", id="QS", section="mac"))["heading"] == "Mac"
    assert (await call(client, "read_document", id="Quokka%20Setup.md"))["id"] == "Quokka Setup.md"
    assert (await call(client, "read_document", id="[[refs/r3]]"))["id"] == "refs/r3.md"
    resource = await client.read_resource("docs://QS")
    assert "linux steps" in resource.contents[0].text  # type: ignore[union-attr]


async def test_an_exact_id_wins_and_an_ambiguous_target_lists_the_candidates(client: Client) -> None:
    assert (await call(client, "read_document", id="Setup.md"))["id"] == "Setup.md"  # exact, though 'setup' is two
    text = await error(client, "read_document", id="[[setup]]")
    assert "Setup.md" in text and "guides/setup.md" in text and "names 2 documents" in text
    text = await error(client, "read_section", id="dup", section="x")
    assert "notes/dup.md" in text and "other/dup.md" in text


async def test_links_to_excluded_or_outside_files_resolve_to_nothing(client: Client) -> None:
    for target in ("secret", "[[secret]]", ".hidden/secret", "[[escape]]", "escape", "[[../../etc/passwd]]"):
        text = await error(client, "read_document", id=target)
        assert "hiddenmarker" not in text and "outsidemarker" not in text
        assert text.startswith(("No document", "Refused")), text
    assert "No document" in await error(client, "list_documents", linked_to="[[secret]]")


async def test_the_outline_lists_outgoing_links_and_backlinks(client: Client) -> None:
    outline = (await call(client, "read_document", id="notes/a.md", mode="outline"))["content"]
    links = next(line for line in outline.splitlines() if line.startswith("Links to"))
    assert "Quokka Setup.md#Linux" in links and "Quokka Setup.md#mac" in links
    assert links.count("Quokka Setup.md,") == 1  # [[QS]] is the same note, listed once
    assert "notes/dup.md" in links  # the 'dup' next to the note
    for unresolved in ("Missing Note", "../../etc/passwd", "/etc/passwd", "secret", "escape"):
        assert f"'{unresolved}' (unresolved)" in links
    assert "d.png" not in links and "example.org" not in links
    outline = (await call(client, "read_document", id="Quokka Setup.md", mode="outline"))["content"]
    assert "Linked from (1): notes/a.md." in outline
    outline = (await call(client, "read_document", id="hub.md", mode="outline"))["content"]
    assert f"Linked from ({HUB_REFS}): refs/r0.md, refs/r1.md, refs/r2.md, refs/r3.md, refs/r4.md, …" in outline
    assert "list_documents(linked_to='hub.md')" in outline


async def test_the_outline_links_stay_within_the_budget(client: Client) -> None:
    r = await call(client, "read_document", id="notes/a.md", mode="outline", max_chars=200)
    assert len(r["content"]) <= 200 and r["truncated"] and r["next_offset"]


async def test_linked_to_pages_through_the_backlinks(client: Client) -> None:
    seen: list[str] = []
    cursor = None
    while True:
        page = await call(client, "list_documents", linked_to="[[hub]]", limit=3, cursor=cursor)
        assert page["total"] == HUB_REFS and "link to 'hub.md'" in page["note"]
        seen += [d["id"] for d in page["documents"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [f"refs/r{i}.md" for i in range(HUB_REFS)]
    first = await call(client, "list_documents", linked_to="hub.md", limit=3)
    assert "another listing" in await error(client, "list_documents", limit=3, cursor=first["next_cursor"])
    assert (await call(client, "list_documents", linked_to="hub.md", folder="notes"))["total"] == 0
    assert (await call(client, "list_documents", linked_to="QS"))["documents"][0]["id"] == "notes/a.md"
    assert (await call(client, "list_documents", linked_to="notes/a.md"))["total"] == 0
    assert "No document 'nope.md'" in await error(client, "list_documents", linked_to="nope.md")


def test_renaming_and_deleting_notes_updates_backlinks_at_the_next_sync(tmp_path: Path) -> None:
    from mcp_docs.tools import DocsTools

    root = make_vault(tmp_path)
    with Library(Settings.load(root, tmp_path / "index", embeddings="none", environ={})) as lib:
        lib.sync()
        tools = DocsTools(lib)
        os.rename(root / "refs/r0.md", root / "refs/renamed.md")
        (root / "refs/r1.md").unlink()
        lib.sync()
        ids = [d.id for d in tools.list_documents(linked_to="hub.md").documents]
        assert ids == ["refs/r2.md", "refs/r3.md", "refs/r4.md", "refs/r5.md", "refs/r6.md", "refs/renamed.md"]
        os.rename(root / "hub.md", root / "centre.md")  # every [[hub]] is broken now
        lib.sync()
        assert tools.list_documents(linked_to="centre.md").total == 0
        assert "Linked from" not in tools.read_document("centre.md", mode="outline").content
        (root / "centre.md").write_text("---\naliases: [hub]\n---\n# Centre\n")  # ... and mended by an alias
        lib.sync()
        assert tools.list_documents(linked_to="centre.md").total == HUB_REFS - 1
        shutil.rmtree(root / "refs")
        lib.sync()
        assert tools.list_documents(linked_to="centre.md").total == 0


def test_status_lists_broken_links_with_their_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_vault(tmp_path)
    with Library(Settings.load(root, tmp_path / "index", embeddings="none", environ={})) as lib:
        lib.sync()
    argv = ("--root", str(root), "--index-dir", str(tmp_path / "index"))
    out = run("status", *argv, "--json")
    assert out.returncode == 0, out.stderr
    by_target = {b["target"]: b for b in json.loads(out.stdout)["broken_links"]}
    assert by_target["Missing Note"] == {
        "id": "notes/a.md",
        "line": 4,
        "target": "Missing Note",
        "reason": "no such document",
        "count": 1,
    }
    assert {"../../etc/passwd", "/etc/passwd", "secret", "escape"} <= set(by_target)
    assert not {"dup", "hub", "QS", "Quokka Setup#Linux", "img/d.png", "https://example.org"} & set(by_target)
    assert main(["status", *argv]) == 0
    human = capsys.readouterr().out
    assert "5 broken links" in human and "Missing Note" in human and "no such document" in human


def test_an_outline_resolves_a_bounded_number_of_link_targets(tmp_path: Path) -> None:
    from mcp_docs.link_graph import OUTLINE_LINK_TARGETS
    from mcp_docs.tools import DocsTools

    root = tmp_path / "vault"
    write(root, "hub.md", "# Hub\n\n" + "\n".join(f"[[n{i}]] [[n{i}|again]]" for i in range(OUTLINE_LINK_TARGETS + 50)))
    write(root, "n1.md", "# One\n")
    with Library(Settings.load(root, tmp_path / "index", embeddings="none", environ={})) as lib:
        lib.sync()
        r = DocsTools(lib).read_document("hub.md", mode="outline")
    links = next(line for line in r.content.splitlines() if line.startswith("Links to"))
    assert links.startswith(f"Links to (first {OUTLINE_LINK_TARGETS}): 'n0' (unresolved), n1.md, 'n2' (unresolved)")
    assert len(links) < 2000 and "more" in links  # the list itself is clipped to its share of the budget


def test_an_index_of_the_previous_schema_is_rebuilt_with_one_row_per_target(tmp_path: Path) -> None:
    """Schema 5 kept one links row per link written, without a count: opening it rebuilds the index."""
    import sqlite3

    from mcp_docs.tools import DocsTools

    root = make_vault(tmp_path)
    write(root, "refs/r0.md", "# Ref 0\n\n" + "[[hub]] " * 3 + "\n")
    index = tmp_path / "index"
    with Library(Settings.load(root, index, embeddings="none", environ={})) as lib:
        lib.sync()
    catalog = next(index.rglob("catalog.sqlite"))
    with sqlite3.connect(catalog) as conn:  # what schema 5 wrote
        conn.execute("drop table links")
        conn.execute(
            "create table links (doc_id text not null, n integer not null, line integer not null, kind text not null,"
            " target text not null, heading text, key text not null, primary key (doc_id, n)) without rowid"
        )
        conn.execute("insert into links values ('refs/r0.md', 0, 3, 'wiki', 'hub', null, 'hub')")
        conn.execute("update meta set value = '5' where key = 'schema_version'")
    with Library(Settings.load(root, index, embeddings="none", environ={})) as lib:
        lib.sync()
        assert DocsTools(lib).list_documents(linked_to="hub.md").total == HUB_REFS
    with sqlite3.connect(catalog) as conn:
        assert conn.execute("select count(*), sum(count) from links where doc_id = 'refs/r0.md'").fetchone() == (1, 3)
