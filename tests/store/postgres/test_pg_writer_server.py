"""`serve --store postgres --root DIR` is the one writer of a PostgreSQL index, as the embedded store's server is:
it reconciles the root, watches it and embeds in the background, holding the writer lock; servers without a root
only read. Real PostgreSQL (tests/store/postgres/conftest.py), real server processes, a real MCP client, real files."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_docs.cli import main

from ...server_fixtures import BACKUPS, INSTALL, child_env, free_port, stop, write
from .conftest import new_database
from .test_postgres import _health, _serve_args, _wait_healthy

psycopg = pytest.importorskip(
    "psycopg", reason="psycopg is not installed: pip install -e '.[test]' to run the PostgreSQL store tests"
)
from mcp_docs.errors import IndexBusy  # noqa: E402
from mcp_docs.store.postgres.database import Database  # noqa: E402  (it imports psycopg)


def _start(url: str, port: int, tmp: Path, *more: str) -> subprocess.Popen[bytes]:
    env = child_env(MCP_DOCS_DATABASE_URL=url, XDG_CACHE_HOME=str(tmp / "cache"))
    return subprocess.Popen(
        _serve_args(port, "--embeddings", "local", *more), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


async def _until(c: Client, args: dict[str, Any], found: Any, seconds: float = 60) -> dict[str, Any]:
    """Search through the client until `found(result)` holds (the writer's watcher and embedder take a moment)."""
    deadline = time.monotonic() + seconds
    while True:
        result = await c.call_tool("search_documents", args)
        assert not result.is_error, result.content
        content = result.structured_content
        assert content is not None
        if found(content) or time.monotonic() > deadline:
            return content
        time.sleep(0.3)


def _ids(content: dict[str, Any]) -> list[str]:
    return [r["id"] for r in content["results"]]


@pytest.mark.anyio
async def test_a_file_saved_in_the_writers_root_is_found_through_a_reader_and_a_second_writer_is_refused(
    pg_server: tuple[str, Path], tmp_path: Path
) -> None:
    root = tmp_path / "vault"
    write(root, "guides/install.md", INSTALL)
    write(root, "notes/backups.md", BACKUPS)
    url = new_database(pg_server[0])
    writer_port, reader_port = free_port(), free_port()
    writer = _start(url, writer_port, tmp_path / "w", "--root", str(root))
    reader: subprocess.Popen[bytes] | None = None
    try:
        _wait_healthy(writer, writer_port)  # the initial sync has written the index: a reader can open it
        deadline = time.monotonic() + 60
        while _health(writer_port).json()["indexing"] and time.monotonic() < deadline:
            time.sleep(0.1)
        reader = _start(url, reader_port, tmp_path / "r")  # no --root: reads only, no lock
        _wait_healthy(reader, reader_port)

        # A second writer (another server with a root, or `index`) is refused at once, in one sentence.
        second = subprocess.run(
            _serve_args(free_port(), "--embeddings", "none", "--root", str(root)),
            env=child_env(MCP_DOCS_DATABASE_URL=url, XDG_CACHE_HOME=str(tmp_path / "s" / "cache")),
            capture_output=True,
            timeout=60,
        )
        err = second.stderr.decode(errors="replace")
        assert second.returncode == 2, err
        assert "another mcp-docs writer is indexing into" in err and "without --root only reads" in err
        assert "Traceback" not in err
        assert main(["index", "--store", "postgres", "--database-url", url, "--root", str(root)]) == 2

        async with Client(streamable_http_client(f"http://127.0.0.1:{reader_port}/mcp")) as c:
            # what the writer indexed at start, with vectors embedded in its background thread
            start = await _until(
                c,
                {"query": "copying files back from an archive", "mode": "semantic"},
                lambda r: r["mode_used"] == "semantic" and "notes/backups.md" in _ids(r),
            )
            assert start["mode_used"] == "semantic" and "notes/backups.md" in _ids(start)

            # a file saved into the root: the writer's watcher indexes it, its embedder embeds it, the reader finds it
            write(
                root,
                "animals/quokka.md",
                "# Quokka care\n\nThe zyxquokka is a small marsupial that lives on Rottnest Island.\n",
            )
            keyword = await _until(c, {"query": "zyxquokka", "mode": "keyword"}, lambda r: bool(r["results"]))
            assert _ids(keyword) == ["animals/quokka.md"]
            semantic = await _until(
                c,
                {"query": "a small marsupial from an island", "mode": "semantic"},
                lambda r: r["mode_used"] == "semantic" and "animals/quokka.md" in _ids(r) and not r.get("note"),
            )
            assert "animals/quokka.md" in _ids(semantic)
            read = await c.call_tool("read_document", {"id": "animals/quokka.md"})
            assert not read.is_error and "Rottnest" in read.structured_content["content"]  # type: ignore[index]

            # a deletion reaches the reader too
            (root / "notes/backups.md").unlink()
            gone = await _until(c, {"query": "restic", "mode": "keyword"}, lambda r: not r["results"])
            assert not gone["results"]
            assert (await c.call_tool("read_document", {"id": "notes/backups.md"})).is_error

        stop(writer)  # the writer stops; the reader answers from what was written
        assert _health(reader_port).json()["documents"] == 2
    finally:
        stop(writer)
        if reader is not None:
            stop(reader)
    # the lock went with the writer: the next writer goes ahead
    assert (
        main(["index", "--store", "postgres", "--database-url", url, "--root", str(root), "--embeddings", "none"]) == 0
    )


def test_a_writer_whose_session_was_lost_takes_the_lock_again_unless_another_writer_has_it(database: str) -> None:
    """A database restart ends the writer lock's session (and frees the lock): before its next sync the writer
    takes the lock again, or stops writing when another writer took it meanwhile."""

    def lose_session(db: Database) -> None:
        assert db._writer is not None
        with psycopg.connect(database, autocommit=True) as admin:
            admin.execute("select pg_terminate_backend(%s)", (db._writer.info.backend_pid,))

    first, second = Database(database, read_only=False), Database(database, read_only=False)
    try:
        first.lock_writer()
        lose_session(first)
        first.ensure_writer()  # took it again…
        with pytest.raises(IndexBusy):
            second.lock_writer()  # …so another writer is still refused
        lose_session(first)
        second.lock_writer()  # another writer got in while the first had lost its session
        with pytest.raises(IndexBusy):
            first.ensure_writer()
    finally:
        for db in (first, second):
            db.release_writer()
            db.close()
