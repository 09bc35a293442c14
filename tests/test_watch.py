"""The watcher watches real folders only: never through folder links, dot-folders or ignored folders."""

import os
import shutil
import time
from pathlib import Path

import pytest

from mcp_docs.library import Library
from mcp_docs.watch import Watcher
from tests.conftest import remove_deep_tree


def wait_for(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_watched_folders_skip_links_dot_folders_and_ignored(library: Library, vault: Path) -> None:
    watched = {p.relative_to(vault).as_posix() for p in Watcher(library).watched_folders()}
    assert {".", "guides", "guides/setup", "notes", "fr"} <= watched
    assert "outside-folder" not in watched  # a folder link out of the root
    assert not any(w.startswith((".obsidian", "node_modules", "drafts")) for w in watched)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_new_folders_are_watched_and_their_files_indexed(library: Library, vault: Path) -> None:
    watcher = Watcher(library, debounce_ms=50, step_ms=20)
    watcher.start()
    try:
        assert watcher.ready.wait(10)
        (vault / "newdir" / "deeper").mkdir(parents=True)
        (vault / "newdir" / "deeper" / "a.md").write_text("# A\n\nfreshfolderword here\n")
        found = lambda: [r.id for r in library.search("freshfolderword", mode="keyword").results]  # noqa: E731
        assert wait_for(lambda: found() == ["newdir/deeper/a.md"])
        # a file added later in the new folder is seen through the re-armed watch
        (vault / "newdir" / "deeper" / "b.md").write_text("# B\n\nsecondfolderword\n")
        assert wait_for(
            lambda: [r.id for r in library.search("secondfolderword", mode="keyword").results] == ["newdir/deeper/b.md"]
        )
    finally:
        watcher.stop()


def test_atomic_saves_do_not_rearm_but_folder_changes_do(library: Library, vault: Path) -> None:
    watcher = Watcher(library, debounce_ms=50, step_ms=20)
    watcher.start()
    try:
        assert watcher.ready.wait(10)
        target = vault / "notes" / "meeting-2026-01.md"
        tmp = vault / "notes" / "meeting-2026-01.md.tmp4913"
        tmp.write_text("# Meeting\n\natomicsaveword\n")
        os.replace(tmp, target)  # how editors save: write a temporary file, rename it over the note
        assert wait_for(
            lambda: (
                [r.id for r in library.search("atomicsaveword", mode="keyword").results]
                == [target.relative_to(vault).as_posix()]
            )
        )
        time.sleep(0.3)
        assert watcher.arms == 1
        (vault / "archive").mkdir()
        assert wait_for(lambda: watcher.arms == 2)
    finally:
        watcher.stop()


def test_changes_seen_with_a_name_that_is_not_utf8_are_not_lost(
    library: Library, vault: Path, caplog: pytest.LogCaptureFixture
) -> None:
    watcher = Watcher(library, debounce_ms=50, step_ms=20)
    watcher.start()
    try:
        assert watcher.ready.wait(10)
        (vault / "first.md").write_text("# First\n\nfirstword\n")  # after the full sync that follows the start
        assert wait_for(lambda: [r.id for r in library.search("firstword", mode="keyword").results] == ["first.md"])
        # watchfiles cannot decode this name and fails the whole batch of changes, the note beside it too
        with open(os.fsencode(vault) + b"/caf\xe9.md", "wb") as fh:
            fh.write(b"# Latin-1 name\n")
        (vault / "beside.md").write_text("# Beside\n\nbesideword\n")
        assert wait_for(lambda: [r.id for r in library.search("besideword", mode="keyword").results] == ["beside.md"])
        assert wait_for(lambda: "caf\ufffd.md" in {p.path for p in library.catalog.problems()})
        assert not [r for r in caplog.records if r.levelname == "ERROR"]  # a user's file name, not a fault
        assert watcher._thread is not None and watcher._thread.is_alive()
    finally:
        watcher.stop()


def test_a_folder_replaced_by_a_file_while_watching_leaves_the_index(library: Library, vault: Path) -> None:
    watcher = Watcher(library, debounce_ms=50, step_ms=20)
    watcher.start()
    try:
        assert watcher.ready.wait(10)
        (vault / "doomed").mkdir()
        (vault / "doomed" / "d.md").write_text("# D\n\ndoomedword\n")
        found = lambda: [r.id for r in library.search("doomedword", mode="keyword").results]  # noqa: E731
        assert wait_for(lambda: found() == ["doomed/d.md"])
        shutil.rmtree(vault / "doomed")
        (vault / "doomed").write_text("not a note\n")  # the event names 'doomed', now a file of no interest
        assert wait_for(lambda: found() == [])
    finally:
        watcher.stop()


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_root_deleted_or_replaced_while_watching_is_watched_again(library: Library, vault: Path, how: str) -> None:
    watcher = Watcher(library, debounce_ms=50, step_ms=20, delete_settle_seconds=2.0)
    watcher.start()
    try:
        assert watcher.ready.wait(10)
        before = set(library.catalog.ids())
        copy = vault.parent / "vault-copy"
        shutil.copytree(vault, copy, symlinks=True)
        if how == "deleted":
            shutil.rmtree(vault)
            time.sleep(1.5)  # the watcher sees the root gone
            assert set(library.catalog.ids()) == before  # nothing is dropped while it is gone
        else:  # `mv vault vault.old && mv vault.new vault`: the old watch followed the old folder
            vault.rename(vault.parent / "vault-old")
        copy.rename(vault)
        time.sleep(1.5)
        (vault / "after.md").write_text("# After\n\nreturnedword\n")  # was never seen: the watch was on the old folder
        assert wait_for(lambda: [r.id for r in library.search("returnedword", mode="keyword").results] == ["after.md"])
        assert set(library.catalog.ids()) == before | {"after.md"}
    finally:
        watcher.stop()


def test_notes_deleted_just_before_their_root_are_kept_until_the_root_comes_back(library: Library, vault: Path) -> None:
    """`rm -rf vault` deletes note by note: a batch of those deletions seen before the root itself goes must not
    drop the notes (a restored vault would embed them all again)."""
    # A wide settle time: on a loaded machine the root's deletion may come seconds after the first batch is seen.
    watcher = Watcher(library, debounce_ms=50, step_ms=20, delete_settle_seconds=4.0)
    watcher.start()
    try:
        assert watcher.ready.wait(10)
        before = set(library.catalog.ids())
        (vault / "notes" / "releases.md").unlink()
        time.sleep(0.1)  # longer than the watcher's step: that deletion is a batch of its own
        shutil.rmtree(vault)
        time.sleep(5.0)  # past the settle time: the batch was looked at again, the root found gone
        assert set(library.catalog.ids()) == before
    finally:
        watcher.stop()


def test_a_tree_nested_deeper_than_the_recursion_limit_is_watched(library: Library, vault: Path) -> None:
    deep = os.fspath(vault / "deep")
    watcher = Watcher(library, debounce_ms=50, step_ms=20)
    try:
        for _ in range(1100):
            os.mkdir(deep)
            deep += "/n"
        os.mkdir(deep)
        # os.walk (Python 3.11) recursed: a RecursionError every second, and the watcher never watched anything
        assert len(watcher.watched_folders()) > 1100
        watcher.start()
        assert watcher.ready.wait(10)
        (vault / "deep" / "n" / "new.md").write_text("# New\n\ndeepwatchword\n")
        found = lambda: [r.id for r in library.search("deepwatchword", mode="keyword").results]  # noqa: E731
        assert wait_for(lambda: found() == ["deep/n/new.md"])
    finally:
        watcher.stop()
        remove_deep_tree(vault / "deep")


def test_an_event_on_a_file_where_indexed_notes_were_is_relevant(library: Library, vault: Path) -> None:
    # A folder made and replaced by a file before any watch was put on it: its one event names a plain file.
    shutil.rmtree(vault / "guides")
    (vault / "guides").write_text("not a note\n")
    watcher = Watcher(library)
    assert watcher.relevant(str(vault / "guides")) == "guides"  # was None: its notes stayed indexed
    (vault / "picture.png").write_bytes(b"\x89PNG")
    assert watcher.relevant(str(vault / "picture.png")) is None  # other files still never matter
