"""A second process never rebuilds an index another process is writing (the report: a `status` of a newer catalog
schema rebuilt the index a running `index` of the previous release was writing). Every path that deletes,
recreates or repairs index files first takes the index folder's writer lock; while another process holds it,
`index` refuses in one sentence (exit status 2) and `status`, `search` and `read` answer from the index as it is,
or refuse when it cannot be read as it is. The writer here is a real second process on real index files."""

from __future__ import annotations

import fcntl
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_docs.errors import IndexBusy
from mcp_docs.library import Library
from mcp_docs.settings import Settings
from mcp_docs.store.embedded.catalog_schema import SCHEMA_VERSION
from mcp_docs.store.embedded.ownership import WRITER_LOCK_NAME

from ...server_fixtures import write
from ...test_cli import run

BUSY = "being written by another mcp-docs process"

# The writer: opens the index to write, as `mcp-docs index` and `serve` do, syncs, then keeps it open (and its
# writer lock held) until its stdin closes.
WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from mcp_docs.library import open_library
    from mcp_docs.settings import Settings

    library = open_library(Settings.load(Path(sys.argv[1]), Path(sys.argv[2]), embeddings="none", environ={}))
    library.sync()
    print("writing", flush=True)
    sys.stdin.read()
    library.close()
    """
)


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    write(root, "a.md", "# Alpha\n\nThe quokka sleeps in the shade.\n")
    write(root, "b.md", "# Beta\n\nSee [[a]]; the wombat digs.\n")
    return root


@pytest.fixture
def writing(tmp_path: Path) -> Iterator[tuple[Path, Path, subprocess.Popen[str]]]:
    root, index = _vault(tmp_path), tmp_path / "index"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_DOCS_")}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root), str(index)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line == "writing\n", proc.stderr.read() if proc.stderr else line
        yield root, index, proc
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(60)


def _files(folder: Path) -> dict[str, bytes]:
    """Every file of the index folder and its bytes; SQLite's shared-memory index (-shm) is left out: every
    reader writes its read marks there, by SQLite's design."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.endswith("-shm")
    }


def _set_meta(index: Path, key: str, value: str) -> None:
    with sqlite3.connect(index / "catalog.sqlite") as conn:
        conn.execute("update meta set value = ? where key = ?", (value, key))


def _documents(index: Path) -> int:
    with sqlite3.connect(index / "catalog.sqlite") as conn:
        return int(conn.execute("select count(*) from documents").fetchone()[0])


def _args(root: Path, index: Path) -> list[str]:
    return ["--root", str(root), "--index-dir", str(index)]


def test_another_schema_is_not_rebuilt_while_another_process_writes(
    writing: tuple[Path, Path, subprocess.Popen[str]],
) -> None:
    root, index, proc = writing
    _set_meta(index, "schema_version", "999")  # the catalog of another release of mcp-docs
    before = _files(index)
    for command in (["status"], ["index"], ["search", "quokka"], ["read", "a.md"]):
        out = run(*command, *_args(root, index))
        assert out.returncode == 2, (command, out.stdout, out.stderr)
        assert BUSY in out.stderr and "Traceback" not in out.stderr, (command, out.stderr)
        assert _files(index) == before, command  # nothing deleted, recreated or repaired
    assert _documents(index) == 2
    # A damaged full-text schema file: the same refusal, the folder kept as it is.
    _set_meta(index, "schema_version", str(SCHEMA_VERSION))
    (index / "fulltext" / "schema-version").write_text("0")
    before = _files(index)
    out = run("search", "quokka", *_args(root, index))
    assert out.returncode == 2 and BUSY in out.stderr, out.stderr
    assert _files(index) == before
    assert proc.poll() is None  # the writer was left alone


def test_read_only_commands_answer_from_the_index_while_another_process_writes(
    writing: tuple[Path, Path, subprocess.Popen[str]],
) -> None:
    root, index, proc = writing
    write(root, "c.md", "# Gamma\n\nThe numbat eats termites.\n")  # a change only the writer may index
    before = _files(index)
    found = run("search", "quokka", "--mode", "keyword", "--json", *_args(root, index))
    assert found.returncode == 0, found.stderr
    assert '"id":"a.md"' in found.stdout.replace(" ", "")
    status = run("status", "--json", *_args(root, index))
    assert status.returncode == 0 and '"documents": 2' in status.stdout, status.stdout
    out = run("index", *_args(root, index))
    assert out.returncode == 2 and BUSY in out.stderr, out.stderr
    assert _files(index) == before and _documents(index) == 2
    # Once the writer is gone, the next `index` takes the lock and writes.
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(60)
    out = run("index", *_args(root, index))
    assert out.returncode == 0 and "3 documents indexed" in out.stdout, out.stdout + out.stderr


def test_a_waiting_library_takes_over_once_the_writer_is_gone(
    writing: tuple[Path, Path, subprocess.Popen[str]],
) -> None:
    """A second server on the same index answers read-only meanwhile, and writes once the first one stops."""
    root, index, proc = writing
    with Library(Settings.load(root, index, embeddings="none", environ={})) as second:
        assert second.read_only and second.search("quokka", mode="keyword").results[0].id == "a.md"
        write(root, "c.md", "# Gamma\n\nThe numbat eats termites.\n")
        with pytest.raises(IndexBusy, match=BUSY):
            second.sync()
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(60)
        second.sync()
        assert not second.read_only and second.catalog.count() == 3
        assert _locked_by_another_process(index / WRITER_LOCK_NAME)  # this process holds it now


def _locked_by_another_process(path: Path) -> bool:
    """Asked from a child process: flock is per open file, and this process holds the lock."""
    probe = (
        "import fcntl, os, sys\n"
        "fd = os.open(sys.argv[1], os.O_RDWR)\n"
        "try:\n    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\nexcept BlockingIOError:\n    sys.exit(1)\n"
    )
    return subprocess.run([sys.executable, "-c", probe, str(path)], check=False).returncode == 1


def test_the_lock_is_let_go_when_the_writer_closes(tmp_path: Path) -> None:
    root, index = _vault(tmp_path), tmp_path / "index"
    with Library(Settings.load(root, index, embeddings="none", environ={})) as lib:
        lib.sync()
        assert _locked_by_another_process(index / WRITER_LOCK_NAME)
    fd = os.open(index / WRITER_LOCK_NAME, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free again
    finally:
        os.close(fd)


def test_a_lost_index_folder_is_not_rebuilt_while_another_process_writes_the_new_one(tmp_path: Path) -> None:
    """The index folder deleted under a writing library (by hand, a cache cleaner): if another process has
    recreated it and writes there by the next sync, this one leaves it to that process."""
    root, index = _vault(tmp_path), tmp_path / "index"
    first = Library(Settings.load(root, index, embeddings="none", environ={}))
    try:
        first.sync()
        shutil.rmtree(index)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_DOCS_")}
        other = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root), str(index)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            assert other.stdout is not None and other.stdout.readline() == "writing\n"
            before = _files(index)
            with pytest.raises(IndexBusy, match=BUSY):
                first.sync()
            assert _files(index) == before and _documents(index) == 2
        finally:
            assert other.stdin is not None
            other.stdin.close()
            other.wait(60)
        first.sync()  # the other one is gone: this one writes again
        assert not first.read_only and first.catalog.count() == 2
    finally:
        first.close()
