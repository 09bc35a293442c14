"""Links on PostgreSQL answer as on the embedded store (issue 30): the same broken links in `status`, the same
backlinks, and a link bomb stored as one row per (note, target) with its count."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from mcp_docs.library import Library, open_library
from mcp_docs.settings import Settings
from mcp_docs.tools import DocsTools

from ...server_fixtures import write
from ...test_cli import run
from ...test_obsidian_links import CAFE_NFC, CAFE_NFD, make_vault
from .conftest import new_database

psycopg = pytest.importorskip(
    "psycopg", reason="psycopg is not installed: pip install -e '.[test]' to run the PostgreSQL store tests"
)

BOMB_LINKS = 50_000
LINKED = ("en/Plugins/Canvas.md", "fr/Bases/Table view.md", "fr/Editing/Callouts.md", CAFE_NFC, "Target")


def test_both_stores_give_the_same_broken_links_and_backlinks(pg_server: tuple[str, Path], tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    write(root, "Target.md", "# Target\n")
    write(root, "bomb.md", "# Bomb\n\n" + "[[Target]] " * BOMB_LINKS + "\n")
    url = new_database(pg_server[0])
    out = run("index", "--store", "postgres", "--database-url", url, "--root", str(root))
    assert out.returncode == 0, out.stderr
    with psycopg.connect(url) as conn:
        rows = conn.execute("select count(*), sum(count) from mcp_docs_links where doc_id = 'bomb.md'").fetchone()
    assert rows == (1, BOMB_LINKS)

    embedded = tmp_path / "index"
    with Library(Settings.load(root, embedded, embeddings="none", environ={})) as lib:
        lib.sync()
        tools = DocsTools(lib)
        expected = {target: [d.id for d in tools.list_documents(linked_to=target).documents] for target in LINKED}
    assert expected["Target"] == ["bomb.md"] and expected[CAFE_NFC] == ["en/Start here.md", "fr/Start here.md"]
    reader = Settings.load(
        store="postgres", database_url=url, embeddings="none", reader=True, index_dir=tmp_path / "reader"
    )
    with open_library(reader, read_only=True) as library:
        tools = DocsTools(library)
        assert {t: [d.id for d in tools.list_documents(linked_to=t).documents] for t in LINKED} == expected
        assert tools.read_document(CAFE_NFC).id == CAFE_NFD
        assert "Linked from (1): bomb.md." in tools.read_document("Target.md", mode="outline").content

    def broken(*store: str) -> list[dict]:
        out = run("status", "--root", str(root), *store, "--json")
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)["broken_link_targets"]  # type: ignore[no-any-return]

    on_sqlite = broken("--index-dir", str(embedded))
    assert [t["target"] for t in on_sqlite] == ["Missing page", "Canvas", "Page absente"]
    assert broken("--store", "postgres", "--database-url", url) == on_sqlite


def test_postgres_stores_each_links_resolution_updates_it_incrementally_and_finds_folders_in_nfc(
    pg_server: tuple[str, Path], tmp_path: Path
) -> None:
    root = tmp_path / "vault"
    cafe_nfd = unicodedata.normalize("NFD", "Café")
    write(root, "Target.md", "# Target\n")
    write(root, f"{cafe_nfd}/a.md", "# A\n\n[[Target]] [[Canvas]]\n")
    write(root, "b.md", "# B\n\n[[Target]] [[Other]]\n")
    write(root, "Other.md", "# Other\n")
    write(root, "en/Canvas.md", "---\nlang: en\n---\n# Canvas\n")
    write(root, "da/Canvas.md", "---\nlang: da\n---\n# Canvas\n")
    write(root, "Release notes/v1.md", "---\nlang: en\n---\n# v1\n\n[[Canvas]]\n")
    url = new_database(pg_server[0])

    def index() -> None:
        out = run("index", "--store", "postgres", "--database-url", url, "--root", str(root), "--embeddings", "none")
        assert out.returncode == 0, out.stderr

    def stored() -> dict[tuple[str, str], str]:
        with psycopg.connect(url) as conn:
            return {(r[0], r[1]): r[2] for r in conn.execute("select doc_id, target, resolved from mcp_docs_links")}

    index()
    a = f"{cafe_nfd}/a.md"
    assert stored() == {
        (a, "Target"): "Target.md",
        (a, "Canvas"): "",  # en/ and da/ as near and as long, and a.md's language undecided: ambiguous
        ("b.md", "Target"): "Target.md",
        ("b.md", "Other"): "Other.md",
        ("Release notes/v1.md", "Canvas"): "en/Canvas.md",  # its own language
    }
    with psycopg.connect(url) as conn:  # a row no changed name touches is not resolved again
        conn.execute("update mcp_docs_links set resolved = 'untouched' where doc_id = 'b.md' and target = 'Other'")
    write(root, "Other.md", "# Other\n\nedited, same names\n")  # names and language kept: nothing to redo
    (root / "Target.md").rename(root / "Moved.md")
    index()
    assert stored()[("b.md", "Target")] == "" and stored()[("b.md", "Other")] == "untouched"
    reader = Settings.load(
        store="postgres", database_url=url, embeddings="none", reader=True, index_dir=tmp_path / "reader"
    )
    with open_library(reader, read_only=True) as library:
        tools = DocsTools(library)
        assert [d.id for d in tools.list_documents(linked_to="en/Canvas.md").documents] == ["Release notes/v1.md"]
        listed = tools.list_documents(folder=unicodedata.normalize("NFC", "Café"))
        assert [d.id for d in listed.documents] == [a]
