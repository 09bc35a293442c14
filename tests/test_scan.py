"""The scanner on a real folder tree: what it lists, what it skips silently (rules) and what it reports (links),
and the single-file look-up the watcher uses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcp_docs.paths import Jail
from mcp_docs.scan import Scanner, ScanResult, load_rules
from mcp_docs.settings import IGNORE_FILE_NAME
from tests.conftest import remove_deep_tree


def scanner(root: Path) -> Scanner:
    return Scanner(Jail(root, load_rules(root, [".md", ".markdown"])))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    for rel in ["a.md", "b/c.markdown", "b/d/e.md", "notes.txt", ".hidden/x.md", "node_modules/y.md", "drafts/z.md"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {rel}\n")
    (root / IGNORE_FILE_NAME).write_text("drafts/\n")
    (tmp_path / "outside.md").write_text("# secret\n")
    return root


def kinds(result: ScanResult) -> dict[str, str]:
    return {p.path: p.kind for p in result.problems}


def test_markdown_files_are_listed_in_name_order_and_excluded_ones_skipped_silently(tree: Path) -> None:
    result = scanner(tree).scan()
    assert [f.doc_id for f in result.files] == ["a.md", "b/c.markdown", "b/d/e.md"]
    assert result.problems == []
    first = result.files[0]
    assert (first.size, first.mtime_ns) == ((tree / "a.md").stat().st_size, (tree / "a.md").stat().st_mtime_ns)


def test_a_scan_under_a_folder_lists_only_that_folder_and_an_excluded_folder_nothing(tree: Path) -> None:
    assert [f.doc_id for f in scanner(tree).scan("b/d").files] == ["b/d/e.md"]
    assert scanner(tree).scan("drafts").files == []
    assert scanner(tree).scan(".hidden").files == []


def test_links_are_reported_never_indexed_under_their_own_name(tree: Path, tmp_path: Path) -> None:
    os.symlink(tree / "a.md", tree / "alias.md")
    os.symlink(tmp_path / "outside.md", tree / "leak.md")
    os.symlink(tree / "gone.md", tree / "dangling.md")
    os.symlink(tmp_path, tree / "up")
    os.symlink(tree / "b", tree / "b-link")
    os.symlink(tree / "drafts", tree / "drafts-link")
    result = scanner(tree).scan()
    assert [f.doc_id for f in result.files] == ["a.md", "b/c.markdown", "b/d/e.md"]  # each file once, where it is
    assert kinds(result) == {
        "alias.md": "duplicate_link",
        "leak.md": "outside_root",
        "dangling.md": "dangling_link",
        "up": "outside_root",
        "drafts-link": "excluded_link",
        "b-link": "folder_link",  # followed, b's files would be indexed twice: status says why it is not
    }


def test_stat_one_judges_a_single_path_as_the_walk_does(tree: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "outside.md", tree / "leak.md")
    scan = scanner(tree)
    result = ScanResult()
    for rel in ["b/c.markdown", "leak.md", "notes.txt", "drafts/z.md", "missing.md"]:
        scan.stat_one(rel, result)
    assert [f.doc_id for f in result.files] == ["b/c.markdown"]
    assert kinds(result) == {"leak.md": "outside_root"}


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any folder")
def test_an_unreadable_folder_is_reported_and_the_rest_still_scanned(tree: Path) -> None:
    locked = tree / "b" / "d"
    locked.chmod(0)
    try:
        result = scanner(tree).scan()
    finally:
        locked.chmod(0o755)
    assert [f.doc_id for f in result.files] == ["a.md", "b/c.markdown"]
    assert kinds(result) == {"b/d": "unreadable"}


def test_a_name_that_is_not_utf8_is_reported_and_skipped_with_what_is_under_it(tree: Path) -> None:
    # Linux allows any bytes in a name; the index (Tantivy, SQLite) only takes valid UTF-8 text.
    root = os.fsencode(tree)
    (tree / "b" / "bad").mkdir()
    for name in (b"/caf\xe9.md", b"/b/bad/dir\xff", b"/b/bad/dir\xff/x.md", b"/notes\xff.txt"):
        if name.endswith(b"\xff"):
            os.mkdir(root + name)
        else:
            with open(root + name, "wb") as fh:
                fh.write(b"# x\n")
    result = scanner(tree).scan()
    assert [f.doc_id for f in result.files] == ["a.md", "b/c.markdown", "b/d/e.md"]
    assert kinds(result) == {"caf\ufffd.md": "invalid_name", "b/bad/dir\ufffd": "invalid_name"}
    assert all(p.path.encode() for p in result.problems)  # printable and storable
    assert "UTF-8" in result.problems[0].detail
    single = ScanResult()
    scanner(tree).stat_one(os.fsdecode(b"caf\xe9.md"), single)
    assert (single.files, kinds(single)) == ([], {"caf\ufffd.md": "invalid_name"})


def test_a_tree_nested_deeper_than_the_recursion_limit_is_scanned(tree: Path) -> None:
    # `cp -r notes notes/old` repeated, or a runaway script: legal on Linux while the path fits PATH_MAX (4096).
    deep = os.fspath(tree / "b")
    try:
        for _ in range(1200):
            deep += "/n"
            os.mkdir(deep)
        with open(deep + "/bottom.md", "w") as fh:
            fh.write("# Bottom\n")
        result = scanner(tree).scan()  # was a RecursionError: nothing at all was indexed
    finally:
        remove_deep_tree(tree / "b" / "n")
    ids = [f.doc_id for f in result.files]
    assert ids == ["a.md", "b/c.markdown", "b/d/e.md", "b/" + "n/" * 1200 + "bottom.md"]  # in name order still
    assert result.problems == []


def test_a_malformed_ignore_line_is_skipped_with_a_warning_and_the_rest_applies(
    tree: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # git ignores a pattern it cannot read; here one such line stopped everything ('[z-a]' with a traceback).
    (tree / IGNORE_FILE_NAME).write_text("[z-a]\ndrafts/\n!\n\\\n")
    result = scanner(tree).scan()
    assert [f.doc_id for f in result.files] == ["a.md", "b/c.markdown", "b/d/e.md"]  # drafts/ still ignored
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "[z-a]" in warned and IGNORE_FILE_NAME in warned


def test_a_root_whose_notes_cannot_be_listed_is_not_said_to_hold_no_markdown(tmp_path: Path) -> None:
    """Before the first index, an empty catalog asks the tree whether it holds Markdown (holds_wanted_file): os.walk
    passed over a folder it could not list in silence, and status told a user whose notes sit in it, or whose whole
    root they may not read, that it 'holds no Markdown files'."""
    from mcp_docs.library import Library
    from mcp_docs.settings import Settings

    root = tmp_path / "vault"
    (root / "private").mkdir(parents=True)
    (root / "private" / "note.md").write_text("# Note\n\nText.\n")
    (root / "readme.txt").write_text("not a note\n")
    lib = Library(Settings.load(root, tmp_path / "index", embeddings="none", environ={}))
    try:
        for locked, named in ((root / "private", "private could not be"), (root, "the root itself could not be")):
            locked.chmod(0)
            try:
                if os.access(locked, os.R_OK):
                    pytest.skip("this user reads any folder (root with CAP_DAC_READ_SEARCH)")
                note = lib.empty_note()
            finally:
                locked.chmod(0o755)
            assert note is not None
            assert "holds no Markdown files" not in note and "indexed yet" not in note, note
            assert named in note and "Permission denied" in note, note
    finally:
        lib.close()
