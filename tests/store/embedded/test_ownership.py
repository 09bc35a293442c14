"""mcp-docs deletes or rewrites only what it created: an index folder carries a marker, and a folder without
it that holds anything else is refused before a byte is written (issue 10: `--index-dir` pointed at notes)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_docs.errors import IndexFolderRefused
from mcp_docs.library import Library
from mcp_docs.settings import Settings
from mcp_docs.store.embedded import integrity, ownership
from mcp_docs.store.embedded.ownership import MARKER_NAME


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _notes(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nalphaword here\n")
    return root


def _open(root: Path, index: Path) -> Library:
    return Library(Settings.load(root, index, embeddings="none", environ={}))


def test_notes_in_a_folder_named_fulltext_survive_the_index_command(tmp_path: Path) -> None:
    """The reported loss: `--root W/fulltext --index-dir W` removed the notes and exited 0."""
    work = tmp_path / "W"
    (work / "fulltext").mkdir(parents=True)
    (work / "fulltext" / "note1.md").write_text("# note\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_DOCS_")}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcp_docs",
            "index",
            "--root",
            str(work / "fulltext"),
            "--index-dir",
            str(work),
            "--embeddings",
            "none",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and "inside the index folder" in out.stderr
    assert _tree(work) == {"fulltext/note1.md": b"# note\n"}


@pytest.mark.parametrize("entry", ["fulltext/note1.md", "catalog.sqlite", "notes.md"])
def test_a_folder_holding_other_files_is_refused_and_left_untouched(tmp_path: Path, entry: str) -> None:
    """Like `--index-dir ~/Documents` with an unrelated `fulltext/` (or a file named like ours) in it."""
    root = _notes(tmp_path)
    documents = tmp_path / "Documents"
    (documents / entry).parent.mkdir(parents=True, exist_ok=True)
    (documents / entry).write_text("my own words\n")
    (documents / "letter.txt").write_text("dear\n")
    before = _tree(documents)
    with pytest.raises(IndexFolderRefused, match="did not create"):
        _open(root, documents)
    assert _tree(documents) == before
    assert sorted(p.name for p in documents.iterdir()) == sorted({entry.split("/")[0], "letter.txt"})


def test_new_and_empty_folders_are_claimed_and_reopened(tmp_path: Path) -> None:
    root = _notes(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    for index in (tmp_path / "new" / "deep", empty):
        with _open(root, index) as lib:
            lib.sync()
        assert ownership.is_owned(index)
        with _open(root, index) as lib:  # ours now: reopening is fine
            assert lib.sync().unchanged == 1


def test_an_index_of_the_previous_release_is_adopted_without_rebuilding(tmp_path: Path) -> None:
    root = _notes(tmp_path)
    index = tmp_path / "index"
    with _open(root, index) as lib:
        lib.sync()
    (index / MARKER_NAME).unlink()  # what the previous release left: catalog.sqlite + fulltext/ with `generation`
    with _open(root, index) as lib:
        report = lib.sync()
        assert (report.added, report.unchanged) == (0, 1)
        assert [r.id for r in lib.search("alphaword", 5, "keyword").results] == ["a.md"]
    assert ownership.is_owned(index)


def test_an_index_whose_marker_was_lost_is_adopted_with_its_integrity_stamps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(integrity, "RACY_SECONDS", -1.0)  # stamps as for an index written a while ago
    root = _notes(tmp_path)
    index = tmp_path / "index"
    with _open(root, index) as lib:
        lib.sync()
    _open(root, index).close()
    assert (index / "catalog.sqlite.checked").is_file()
    (index / MARKER_NAME).unlink()
    with _open(root, index) as lib:
        assert lib.sync().unchanged == 1
    assert ownership.is_owned(index)


@pytest.mark.parametrize("intruder", ["notes.md", "fulltext/note.md", "fulltext/sub/x.idx"])
def test_a_lookalike_of_the_previous_release_with_anything_else_in_it_is_refused(tmp_path: Path, intruder: str) -> None:
    root = _notes(tmp_path)
    index = tmp_path / "index"
    with _open(root, index) as lib:
        lib.sync()
    (index / MARKER_NAME).unlink()
    (index / intruder).parent.mkdir(parents=True, exist_ok=True)
    (index / intruder).write_text("mine\n")
    before = _tree(index)
    with pytest.raises(IndexFolderRefused):
        _open(root, index)
    assert _tree(index) == before


def test_a_file_that_only_looks_like_a_catalog_is_not_adopted(tmp_path: Path) -> None:
    index = tmp_path / "index"
    (index / "fulltext").mkdir(parents=True)
    (index / "fulltext" / "generation").write_text("x")
    (index / "catalog.sqlite").write_text("my notes, not a database")
    with pytest.raises(IndexFolderRefused):
        ownership.claim(index)
    assert not (index / MARKER_NAME).exists()


def test_remove_refuses_outside_an_owned_folder_and_never_follows_links(tmp_path: Path) -> None:
    stranger = tmp_path / "stranger"
    (stranger / "fulltext").mkdir(parents=True)
    (stranger / "fulltext" / "keep.md").write_text("keep")
    with pytest.raises(IndexFolderRefused):
        ownership.remove(stranger / "fulltext")
    owned = tmp_path / "owned"
    ownership.claim(owned)
    (owned / "fulltext").symlink_to(stranger / "fulltext", target_is_directory=True)
    with pytest.raises(IndexFolderRefused):
        ownership.remove(owned / "fulltext")
    assert (stranger / "fulltext" / "keep.md").read_text() == "keep"
    (owned / "junk").mkdir()
    ownership.remove(owned / "junk")
    assert not (owned / "junk").exists()


def test_a_forged_marker_file_with_other_content_does_not_count(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / MARKER_NAME).write_text("something else\n")
    (folder / "fulltext").mkdir()
    assert not ownership.is_owned(folder)
    with pytest.raises(IndexFolderRefused):
        ownership.remove(folder / "fulltext")
