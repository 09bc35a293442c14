"""`--store postgres` hardened (issue 26): a NUL in front matter or in a tool argument, a document the database
refuses, a role without a privilege, a sync that fails as a whole, and every credential form of a connection
string. Real PostgreSQL (tests/store/postgres/conftest.py) with real roles, the real CLI, real server processes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client

from mcp_docs.cli import main
from mcp_docs.library import open_library
from mcp_docs.mcp.server import build_server
from mcp_docs.settings import Settings

from ...server_fixtures import child_env, free_port, stop, write
from .conftest import new_database

psycopg = pytest.importorskip(
    "psycopg", reason="psycopg is not installed: pip install -e '.[test]' to run the PostgreSQL store tests"
)

NUL_NOTE = (
    '---\ntitle: "Qu\\0okka field notes"\ntags: ["mar\\x00supial", wild]\naliases: ["qu\\u0000okka"]\n'
    '"ke\\0y": "va\\0lue"\n---\n# Heading\n\nThe quokka smiles at visitors.\n'
)


def _vault(root: Path, good: int = 30) -> None:
    for i in range(good):
        write(root, f"notes/n{i:02d}.md", f"# Note {i}\n\nA plain note about wombat burrows, number {i}.\n")


def _index(root: Path, url: str, *more: str) -> int:
    return main(
        ["index", "--store", "postgres", "--database-url", url, "--root", str(root), "--embeddings", "none", *more]
    )


def _status(root: Path, url: str, capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    code = main(["status", "--store", "postgres", "--database-url", url, "--root", str(root), "--json"])
    assert code == 0
    return json.loads(capsys.readouterr().out)


# -- NULs: dropped where front matter is parsed, refused in tool arguments -------------------------------


def test_a_nul_in_front_matter_is_dropped_and_every_document_is_indexed_in_both_stores(
    database: str, tmp_path: Path
) -> None:
    root = tmp_path / "vault"
    _vault(root)
    write(root, "quokka.md", NUL_NOTE)
    assert _index(root, database) == 0  # was: psycopg.DataError, 0 of 31 indexed
    embedded = Settings.load(root=root, index_dir=tmp_path / "index", embeddings="none")
    pg = Settings.load(root=root, store="postgres", database_url=database, embeddings="none", reader=True)
    with open_library(embedded) as library:
        library.sync()
    for settings in (embedded, pg):
        with open_library(settings, read_only=settings.store == "postgres") as library:
            assert library.catalog.count() == 31
            doc = library.catalog.document("quokka.md")
            assert doc is not None
            assert doc.title == "Quokka field notes" and doc.tags == ("marsupial", "wild")
            assert "\x00" not in json.dumps(doc.front_matter) and doc.front_matter["key"] == "value"
            hits = library.search("quokka", mode="keyword", tags=["marsupial"]).results
            assert [h.id for h in hits] == ["quokka.md"]


@pytest.mark.anyio
async def test_a_nul_in_a_tag_argument_is_a_tool_error_that_says_so(database: str, tmp_path: Path) -> None:
    root = tmp_path / "vault"
    _vault(root, 3)
    assert _index(root, database) == 0
    settings = Settings.load(store="postgres", database_url=database, embeddings="none", reader=True)
    with open_library(settings, read_only=True) as library:
        async with Client(build_server(library)) as client:
            for tool, args in (
                ("search_documents", {"query": "wombat", "tags": ["wild\x00"], "mode": "keyword"}),
                ("list_documents", {"tag": "a\x00b"}),
            ):
                result = await client.call_tool(tool, args)
                text = result.content[0].text  # type: ignore[union-attr]
                assert result.is_error and "NUL" in text and "remove it" in text, (tool, text)
                assert "DataError" not in text and "nternal" not in text
            # in a query a NUL separates words, as a space does
            result = await client.call_tool("search_documents", {"query": "wombat\x00burrows", "mode": "keyword"})
            assert not result.is_error and result.structured_content["results"]  # type: ignore[index]


# -- one document the database refuses fails alone -------------------------------------------------------


def _too_many_words() -> str:
    """A section whose distinct words overflow PostgreSQL's tsvector (1 MB): a generated word list, 2.4 MB."""
    return "# Word list\n\n" + "\n".join(" ".join(f"w{i:06d}x{j}" for j in range(20)) for i in range(12_000)) + "\n"


def test_a_document_the_database_refuses_is_skipped_alone_and_listed_by_status(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "vault"
    _vault(root)
    write(root, "words.md", _too_many_words())
    assert _index(root, database) == 0  # was: the batch rolled back, 0 of 31, "cannot be reached"
    status = _status(root, database, capsys)
    assert status["documents"] == 30
    skipped = {p["path"]: p for p in status["skipped"]}
    assert skipped["words.md"]["kind"] == "unstorable" and "tsvector" in skipped["words.md"]["detail"]
    # it stays listed (and out of the index) until it changes; then it is indexed
    assert _index(root, database) == 0
    assert _status(root, database, capsys)["skipped"][0]["path"] == "words.md"
    write(root, "words.md", "# Word list\n\nShort now.\n")
    assert _index(root, database) == 0
    status = _status(root, database, capsys)
    assert status["documents"] == 31 and status["skipped"] == []


# -- a writing server: one bad file of a watcher batch, and a sync that fails as a whole --------------------


def _health(port: int) -> dict:
    response = httpx2.get(f"http://127.0.0.1:{port}/health", headers={"connection": "close"}, timeout=10)
    body = response.json()
    body["http"] = response.status_code
    return body


def _wait(port: int, proc: subprocess.Popen[bytes], check, seconds: float = 90) -> dict:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    body: dict = {}
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(
                f"server exited {proc.returncode}: {proc.stderr.read().decode() if proc.stderr else ''}"
            )
        try:
            body = _health(port)
            if check(body):
                return body
        except httpx2.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"health never matched: {body}")


def _catalogued(url: str) -> set[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        return {r[0] for r in conn.execute("select id from mcp_docs_documents").fetchall()}


def _writing_server(root: Path, database: str, tmp_path: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = child_env(MCP_DOCS_DATABASE_URL=database, XDG_CACHE_HOME=str(tmp_path / "cache"))
    serve = ["serve", "--store", "postgres", "--root", str(root), "--transport", "http", "--port", str(port)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_docs", *serve, "--embeddings", "none"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    return proc, port


def test_a_writing_server_keeps_the_rest_of_a_batch_and_says_degraded_while_syncs_fail(
    database: str, tmp_path: Path
) -> None:
    root = tmp_path / "vault"
    _vault(root, 3)
    proc, port = _writing_server(root, database, tmp_path)
    try:
        _wait(port, proc, lambda b: b["http"] == 200 and b.get("documents") == 3 and not b.get("indexing"))
        # one watcher batch: a good file, a NUL title, a file the database refuses
        write(root, "fresh.md", "# Fresh\n\nNew numbat note.\n")
        write(root, "quokka.md", NUL_NOTE)
        write(root, "words.md", _too_many_words())
        deadline = time.monotonic() + 60
        while {"fresh.md", "quokka.md"} - _catalogued(database) and time.monotonic() < deadline:
            time.sleep(0.3)
        assert {"fresh.md", "quokka.md"} <= _catalogued(database) and "words.md" not in _catalogued(database)
        assert _health(port)["status"] == "ok"  # a skipped file is not a failed sync
        # now every write is refused (a trigger here; a read-only standby, a full disk): not one document's fault,
        # so the batch rolls back whole and the sync fails; searches still answer, and /health says so
        with psycopg.connect(database, autocommit=True) as conn:
            conn.execute(
                "create function mcp_docs_test_refuse() returns trigger language plpgsql as "
                "$$ begin raise exception 'writes refused for the test'; end $$"
            )
            conn.execute(
                "create trigger refuse before insert on mcp_docs_documents "
                "for each statement execute function mcp_docs_test_refuse()"
            )
        write(root, "later.md", "# Later\n\nA later note.\n")
        body = _wait(port, proc, lambda b: b["status"] != "ok")
        assert body["http"] == 200 and body["status"] == "degraded"  # was: "ok" while nothing reached the index
        assert "sync failed" in body["error"] and "writes refused for the test" in body["error"]
    finally:
        stop(proc)
    # restarted meanwhile: its first sync fails as a whole, and /health says so (was: "ok")
    proc, port = _writing_server(root, database, tmp_path)
    try:
        body = _wait(port, proc, lambda b: not b.get("indexing") and b["status"] != "ok")
        assert body["status"] == "degraded" and "writes refused for the test" in body["error"]
        with psycopg.connect(database, autocommit=True) as conn:
            conn.execute("drop trigger refuse on mcp_docs_documents")
        write(root, "later.md", "# Later\n\nA later note, saved again.\n")
        body = _wait(port, proc, lambda b: b["status"] == "ok")
        assert "later.md" in _catalogued(database) and "error" not in body
        assert {"fresh.md", "quokka.md"} <= _catalogued(database)  # nothing of the earlier batches was lost
    finally:
        stop(proc)


# -- privileges: one sentence, exit 2 ------------------------------------------------------------------------


def _as(url: str, role: str) -> str:
    assert "postgres:@" in url, url  # pgserver's URL: the superuser, no password, a Unix socket
    return url.replace("postgres:@", f"{role}:@", 1)


def _admin(url: str, *statements: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)


def test_a_role_without_the_privileges_to_write_or_read_gets_one_sentence(
    pg_server: tuple[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    admin = pg_server[0]
    database = new_database(admin)
    suffix = database.rsplit("/", 1)[1].split("?")[0]
    writer, reader = f"w_{suffix}", f"r_{suffix}"
    _admin(admin, f"create role {writer} login", f"create role {reader} login")
    root = tmp_path / "vault"
    _vault(root, 2)
    capsys.readouterr()
    none = ("--embeddings", "none")

    def refused(*args: str) -> str:
        assert main(list(args)) == 2
        out = capsys.readouterr()
        text = out.out + out.err
        assert "Traceback" not in text and "psycopg" not in text
        return " ".join(text.split())

    # a fresh database without pgvector, a role that is no superuser
    text = refused("index", "--store", "postgres", "--database-url", _as(database, writer), "--root", str(root), *none)
    assert f"role '{writer}' may not create the pgvector extension" in text and "CREATE EXTENSION vector;" in text
    # the extension is there, but PostgreSQL 15+ lets nobody but the owner create tables in `public`
    _admin(database, "create extension vector")
    text = refused("index", "--store", "postgres", "--database-url", _as(database, writer), "--root", str(root), *none)
    assert "may not create the index's tables" in text and f"GRANT CREATE ON SCHEMA public TO {writer};" in text
    _admin(database, f"grant create on schema public to {writer}")
    assert _index(root, _as(database, writer)) == 0
    # a reader that was granted nothing
    url = _as(database, reader)
    text = refused("search", "wombat", "--store", "postgres", "--database-url", url, "--mode", "keyword", *none)
    assert f"role '{reader}' may not read the mcp-docs index" in text
    assert f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {reader};" in text
    done = subprocess.run(  # a server refuses to start with the same sentence
        [
            sys.executable,
            "-m",
            "mcp_docs",
            "serve",
            "--store",
            "postgres",
            "--transport",
            "http",
            "--port",
            str(free_port()),
            *none,
        ],
        env=child_env(MCP_DOCS_DATABASE_URL=url, XDG_CACHE_HOME=str(tmp_path / "cache")),
        capture_output=True,
        timeout=60,
    )
    err = " ".join(done.stderr.decode().split())
    assert done.returncode == 2 and "may not read the mcp-docs index" in err and "Traceback" not in err
    _admin(database, f"grant select on all tables in schema public to {reader}")
    assert main(["search", "wombat", "--store", "postgres", "--database-url", url, "--mode", "keyword", *none]) == 0
    # revoked while a server reads: each tool call is the same sentence as a tool error, the server goes on
    settings = Settings.load(store="postgres", database_url=url, embeddings="none", reader=True)
    with open_library(settings, read_only=True) as library:

        async def calls() -> list[tuple[bool, str]]:
            async with Client(build_server(library)) as client:
                out = []
                for tool, args in (
                    ("search_documents", {"query": "wombat", "mode": "keyword"}),
                    ("list_documents", {}),
                    ("search_documents", {"query": "wombat", "mode": "keyword"}),
                ):
                    result = await client.call_tool(tool, args)
                    out.append((result.is_error, " ".join(getattr(c, "text", "") for c in result.content)))
                    if tool == "search_documents" and len(out) == 1:
                        _admin(database, f"revoke select on all tables in schema public from {reader}")
                    elif tool == "list_documents":
                        _admin(database, f"grant select on all tables in schema public to {reader}")
                return out

        (ok, _), (refused_call, text), (again, _) = anyio.run(calls)
    assert not ok and refused_call and not again
    assert f"role '{reader}' may not read the mcp-docs index" in text and "nternal" not in text
