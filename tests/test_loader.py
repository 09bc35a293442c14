"""The one way a Markdown file is read (loader.py): the sync, the embedding worker and the tools agree on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_docs.errors import BinaryContent, ParseTimeout
from mcp_docs.library import Library
from mcp_docs.loader import INVALID_UTF8, WINDOWS_1252, file_stem, parse_file, read_markdown
from mcp_docs.paths import Jail
from mcp_docs.settings import Settings
from mcp_docs.tools import DocsTools


def test_read_markdown_refuses_binary_content(tmp_path: Path) -> None:
    (tmp_path / "bin.md").write_bytes(b"# Title\n" + b"x" * 100 + b"\x00rest")
    (tmp_path / "late.md").write_bytes(b"# Title\n" + b"x" * 9000 + b"\x00")  # past the sniffed prefix: text
    jail = Jail(tmp_path)
    with pytest.raises(BinaryContent):
        read_markdown(jail, tmp_path / "bin.md", 1 << 20)
    assert read_markdown(jail, tmp_path / "late.md", 1 << 20).startswith(b"# Title")


def test_parse_file_decodes_normalises_and_warns() -> None:
    loaded = parse_file("\ufeffno heading\r\ncaf\u00e9\r\n".encode() + b"\xff", "my-note", None)
    assert loaded.text.startswith("no heading\ncafé\n") and "\r" not in loaded.text
    assert loaded.parsed.title == "my-note" and loaded.warnings == [INVALID_UTF8]
    assert parse_file(b"# Fine\n", "x", None).warnings == []
    assert file_stem("a/b.c/note.v2.md") == "note.v2" and file_stem("README") == "README"


def test_parse_file_keeps_the_time_budget() -> None:
    with pytest.raises(ParseTimeout):
        parse_file(("- " * 2000 + "x\n").encode() * 200, "slow", 1e-6)


def test_the_sync_and_the_tools_read_a_file_the_same_way(library: Library) -> None:
    tools = DocsTools(library)
    listed = {d.id: d for d in tools.list_documents(limit=200).documents}
    for doc_id in ("latin1.md", "windows.md", "guides/setup/install.md"):
        assert listed[doc_id].title == tools.load(doc_id).parsed.title, doc_id
    warned = dict(library.catalog.documents_with_warnings())
    assert warned["latin1.md"] == [WINDOWS_1252]  # no UTF-8 letter in it: read as Windows-1252, not replaced


def test_utf16_with_a_bom_is_read_as_text(tmp_path: Path) -> None:
    # Notepad's "Unicode" and Windows PowerShell's `>` save UTF-16 with a BOM: its NUL bytes made it "binary".
    root = tmp_path / "root"
    root.mkdir()
    note = "\ufeff# Café notes\r\n\r\nutfsixteenword in a Windows note\r\n"
    (root / "le.md").write_bytes(note.encode("utf-16-le"))
    (root / "be.md").write_bytes(note.encode("utf-16-be"))
    (root / "odd.md").write_bytes(note.encode("utf-16-le") + b"\x00")  # not UTF-16 after all
    jail = Jail(root)
    for name in ("le.md", "be.md"):
        assert read_markdown(jail, root / name, 1 << 20) == note[1:].encode()
    with pytest.raises(BinaryContent):
        read_markdown(jail, root / "odd.md", 1 << 20)
    with Library(Settings.load(root, tmp_path / "index", embeddings="none", environ={})) as library:
        library.sync()
        assert {p.path: p.kind for p in library.catalog.problems()} == {"odd.md": "binary"}
        hits = library.search("utfsixteenword", mode="keyword").results
        assert sorted(r.id for r in hits) == ["be.md", "le.md"]
        doc = DocsTools(library).read_document("le.md")
        assert doc.title == "Café notes" and doc.content.startswith("# Café notes\n")
