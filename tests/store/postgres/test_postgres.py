"""`--store postgres` end to end against a real PostgreSQL with pgvector (started by tests/store/postgres/conftest.py):
`mcp-docs index` writes the index, stateless `mcp-docs serve` processes without the documents answer a real MCP
client from it, one writer at a time, and a database that goes away is one sentence, `/health` 503, then service
again when it is back; the URL's password never shows."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_docs.cli import main
from mcp_docs.library import open_library
from mcp_docs.settings import Settings

from ...serve.test_workers import Alternating
from ...server_fixtures import BACKUPS, CONFIG, INSTALL, child_env, free_port, stop, write
from .conftest import Relay, new_database, unix_socket

psycopg = pytest.importorskip(
    "psycopg", reason="psycopg is not installed: pip install -e '.[test]' to run the PostgreSQL store tests"
)
from mcp_docs.store.postgres.database import PG_SCHEMA_VERSION, Database  # noqa: E402  (it imports psycopg)

PASSWORD = "S3cret-pw-4711"


def _database_name(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def _relay_url(relay: Relay, database: str) -> str:
    """A TCP URL with a password in it (the relay's PostgreSQL trusts local connections and ignores it)."""
    return f"postgresql://postgres:{PASSWORD}@127.0.0.1:{relay.port}/{_database_name(database)}"


def _index(root: Path, url: str, *more: str) -> int:
    return main(["index", "--store", "postgres", "--database-url", url, "--root", str(root), *more])


@pytest.fixture(scope="module")
def indexed(pg_server: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The test vault indexed once, with vectors (the offline MiniLM), into a database of its own."""
    root = tmp_path_factory.mktemp("pgvault") / "vault"
    for rel, text in (("guides/install.md", INSTALL), ("guides/config.md", CONFIG), ("notes/backups.md", BACKUPS)):
        write(root, rel, text)
    for i in range(12):
        write(root, f"misc/note{i:02d}.md", f"# Note {i}\n\nSmall note number {i} about gardening. #misc\n")
    write(root, "binary.md", b"# Bin\x00\x01\x02\n")
    write(root.parent, "vault_evil/leak.md", "# Leak\n\nprivate\n")
    url = new_database(pg_server[0])
    assert _index(root, url, "--embeddings", "local") == 0
    return root, url


def _reader(url: str, tmp: Path) -> Settings:
    return Settings.load(store="postgres", database_url=url, embeddings="local", reader=True, index_dir=tmp / "i")


def _serve_args(port: int, *more: str) -> list[str]:
    """`mcp-docs serve --store postgres --stateless` without --root: no copy of the documents on this 'host'."""
    serve = ["serve", "--store", "postgres", "--stateless", "--transport", "http", "--port", str(port)]
    return [sys.executable, "-m", "mcp_docs", *serve, *more]


def _serve(url: str, port: int, tmp: Path, *more: str) -> subprocess.Popen[bytes]:
    """`mcp-docs serve --store postgres --stateless` without --root: no copy of the documents on this 'host'."""
    env = child_env(MCP_DOCS_DATABASE_URL=url, XDG_CACHE_HOME=str(tmp / "cache"))
    return subprocess.Popen(
        _serve_args(port, "--embeddings", "local", *more),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _health(port: int) -> httpx2.Response:
    return httpx2.get(f"http://127.0.0.1:{port}/health", headers={"connection": "close"}, timeout=10)


def _wait_healthy(proc: subprocess.Popen[bytes], port: int, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else "(see its log)"
            raise AssertionError(f"server exited {proc.returncode}: {err}")
        try:
            if _health(port).status_code == 200:
                return
        except httpx2.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError("server did not start")


# -- search and read from the database --------------------------------------------------------------


def test_keyword_semantic_and_hybrid_search_answer_from_the_database(indexed: tuple[Path, str], tmp_path: Path) -> None:
    _root, url = indexed
    with open_library(_reader(url, tmp_path), read_only=True) as library:
        assert library.index_info().documents == 15
        keyword = library.search("restic snapshots", mode="keyword")
        assert keyword.mode_used == "keyword" and keyword.results[0].id == "notes/backups.md"
        assert "**restic**" in keyword.results[0].sections[0].snippet
        semantic = library.search("copying files back from an archive", mode="semantic")
        assert semantic.mode_used == "semantic" and "notes/backups.md" in [r.id for r in semantic.results[:3]]
        hybrid = library.search("journalctl service fails", mode="hybrid")
        assert hybrid.mode_used == "hybrid" and hybrid.results[0].id == "guides/install.md"
        assert hybrid.results[0].sections[0].heading == "Troubleshooting"
        # filters apply on both sides
        only_notes = library.search("restore the files", mode="hybrid", folder="notes")
        assert only_notes.results and all(r.id.startswith("notes/") for r in only_notes.results)
        tagged = library.search("note", mode="hybrid", tags=["misc"])
        assert tagged.results and all(r.id.startswith("misc/") for r in tagged.results)


def test_a_french_section_is_stemmed_with_the_french_configuration(pg_server: tuple[str, Path], tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "fr.md", "---\nlang: fr\n---\n# Réunions\n\nLes réunions hebdomadaires commencent le lundi.\n")
    write(root, "en.md", "# Meetings\n\nWeekly meetings start on Monday.\n")
    url = new_database(pg_server[0])
    assert _index(root, url, "--embeddings", "none") == 0
    with psycopg.connect(url) as conn:
        configs = dict(conn.execute("select doc_id, config::text from mcp_docs_sections").fetchall())
    assert configs == {"fr.md": "french", "en.md": "english"}
    settings = Settings.load(
        store="postgres", database_url=url, embeddings="none", reader=True, index_dir=tmp_path / "i"
    )
    with open_library(settings, read_only=True) as library:
        # 'réunion' (singular) matches 'réunions' only through the French stemmer
        assert [r.id for r in library.search("réunion", mode="keyword").results] == ["fr.md"]
        assert [r.id for r in library.search("meeting", mode="keyword").results] == ["en.md"]
        # each document's language reaches agents from the database too (issue 29)
        assert [(r.id, r.language) for r in library.search("réunion", mode="keyword").results] == [("fr.md", "fr")]
        assert library.catalog.named_languages(["fr.md", "en.md"]) == {"fr.md": "fr", "en.md": "en"}


@pytest.mark.anyio
async def test_two_stateless_servers_without_the_documents_answer_one_client_alternately(
    indexed: tuple[Path, str], tmp_path: Path
) -> None:
    _root, url = indexed
    ports = [free_port(), free_port()]
    servers = [_serve(url, port, tmp_path / str(port)) for port in ports]
    try:
        for proc, port in zip(servers, ports, strict=True):
            _wait_healthy(proc, port)
        balancer = Alternating(ports)
        http = httpx2.AsyncClient(transport=balancer, timeout=httpx2.Timeout(30, read=60))
        async with Client(
            streamable_http_client(f"http://127.0.0.1:{ports[0]}/mcp", http_client=http), mode="legacy"
        ) as c:
            for query, mode, expected in (
                ("collector", "keyword", "guides/install.md"),
                ("restic snapshots", "hybrid", "notes/backups.md"),
                ("copying files back from an archive", "semantic", "notes/backups.md"),
            ):
                result = await c.call_tool("search_documents", {"query": query, "mode": mode})
                assert not result.is_error, result.content
                content = result.structured_content
                assert content and content["mode_used"] == mode and expected in [r["id"] for r in content["results"]]
            section = await c.call_tool("read_section", {"id": "guides/install.md", "section": "Linux"})
            assert not section.is_error and "systemctl" in section.structured_content["content"]  # type: ignore[index]
            outline = await c.call_tool("read_document", {"id": "guides/install.md", "mode": "outline"})
            assert not outline.is_error and "Troubleshooting" in outline.structured_content["content"]  # type: ignore[index]
            listing = await c.call_tool("list_documents", {"folder": "misc"})
            assert not listing.is_error and listing.structured_content["total"] == 12  # type: ignore[index]
            missing = await c.call_tool("read_document", {"id": "guides/instal.md"})
            assert missing.is_error and "guides/install.md" in missing.content[0].text  # type: ignore[union-attr]
            escape = await c.call_tool("read_document", {"id": "../vault_evil/leak.md"})
            assert escape.is_error and "outside" in escape.content[0].text  # type: ignore[union-attr]
        calls = [port for port, method in balancer.sent if method == "tools/call"]
        assert set(calls) == set(ports), balancer.sent
        assert all(_health(p).json()["stateless"] is True for p in ports)
    finally:
        for proc in servers:
            stop(proc)


def test_the_command_line_reads_the_database_without_the_documents(
    indexed: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _root, url = indexed
    db = ["--store", "postgres", "--database-url", url]
    assert main(["search", "restic", "--mode", "keyword", "--json", *db]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["id"] == "notes/backups.md"
    assert main(["read", "notes/backups.md", "--section", "Restore", *db]) == 0
    assert "Mount the snapshot" in capsys.readouterr().out
    assert main(["status", "--json", *db]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["documents"] == 15 and status["index_dir"].startswith("PostgreSQL postgresql://")
    assert status["vectors"]["embedded"] == status["vectors"]["chunks"] > 0


# -- one writer, schema versions ---------------------------------------------------------------------


def test_a_second_writer_is_refused_with_one_sentence(
    indexed: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    root, url = indexed
    first = Database(url, read_only=False)
    first.lock_writer()
    try:
        assert _index(root, url, "--embeddings", "none") == 2
        err = capsys.readouterr().err
        assert "another mcp-docs writer is indexing into" in err and "one writer at a time" in err
        assert "Traceback" not in err
    finally:
        first.release_writer()
        first.close()
    assert _index(root, url, "--embeddings", "local") == 0  # released: the next writer goes ahead


def test_an_index_of_another_schema_version_is_refused_or_rebuilt(
    pg_server: tuple[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "vault"
    write(root, "a.md", "# Alpha\n\nquokka text\n")
    url = new_database(pg_server[0])
    assert _index(root, url, "--embeddings", "none") == 0

    def set_version(version: int) -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("update mcp_docs_meta set value = %s where key = 'schema_version'", (str(version),))

    set_version(PG_SCHEMA_VERSION + 1)  # written by a newer mcp-docs: neither read nor overwritten
    settings = Settings.load(
        store="postgres", database_url=url, embeddings="none", reader=True, index_dir=tmp_path / "i"
    )
    assert main(["status", "--store", "postgres", "--database-url", url, "--root", str(root)]) == 2
    assert _index(root, url, "--embeddings", "none") == 2
    err = capsys.readouterr().err
    assert f"schema version {PG_SCHEMA_VERSION + 1}" in err and "upgrade mcp-docs" in err
    set_version(0)  # an older one: a reader says what to run, the writer rebuilds it
    with pytest.raises(Exception, match="run `mcp-docs index --store postgres`"):
        open_library(settings, read_only=True)
    assert _index(root, url, "--embeddings", "none") == 0
    with open_library(settings, read_only=True) as library:
        assert [r.id for r in library.search("quokka", mode="keyword").results] == ["a.md"]


def test_an_edit_and_a_deletion_reach_the_database_on_the_next_index(
    pg_server: tuple[str, Path], tmp_path: Path
) -> None:
    root = tmp_path / "vault"
    write(root, "a.md", "# Alpha\n\nquokka text\n")
    write(root, "b.md", "# Beta\n\nwombat text\n")
    url = new_database(pg_server[0])
    assert _index(root, url, "--embeddings", "none") == 0
    write(root, "a.md", "# Alpha\n\nnumbat text\n")
    (root / "b.md").unlink()
    assert _index(root, url, "--embeddings", "none") == 0
    settings = Settings.load(
        store="postgres", database_url=url, embeddings="none", reader=True, index_dir=tmp_path / "i"
    )
    with open_library(settings, read_only=True) as library:
        assert library.catalog.ids() == ["a.md"]
        assert library.search("quokka", mode="keyword").results == []
        assert [r.id for r in library.search("numbat", mode="keyword").results] == ["a.md"]


# -- faults: the database away, at start and mid-service; the password never shown ---------------------


def test_an_unreachable_database_is_one_sentence_without_the_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "vault"
    write(root, "a.md", "# Alpha\n")
    url = f"postgresql://postgres:{PASSWORD}@127.0.0.1:{free_port()}/nowhere"
    assert _index(root, url, "-v") == 2
    written = capsys.readouterr()
    done = subprocess.run(  # a server, in its own process with debug logging: exits with the sentence
        _serve_args(free_port(), "-v"),
        env=child_env(MCP_DOCS_DATABASE_URL=url, XDG_CACHE_HOME=str(tmp_path / "cache")),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 2
    for out in (written.out + written.err, (done.stdout + done.stderr).decode()):
        assert "cannot be reached" in out and "MCP_DOCS_DATABASE_URL" in out and "Traceback" not in out
        assert PASSWORD not in out and "postgres:***@127.0.0.1" in out


def test_bad_store_settings_are_one_sentence_without_the_url() -> None:
    with pytest.raises(ValueError, match="needs the database: set MCP_DOCS_DATABASE_URL"):
        Settings.load(store="postgres", reader=True, environ={})
    with pytest.raises(ValueError, match="must be a PostgreSQL URL") as caught:
        Settings.load(store="postgres", reader=True, environ={"MCP_DOCS_DATABASE_URL": f"mysql://u:{PASSWORD}@h/d"})
    assert PASSWORD not in str(caught.value)
    with pytest.raises(ValueError, match="Unknown store 'opensearch'"):
        Settings.load(store="opensearch", reader=True, environ={})


@pytest.mark.anyio
async def test_a_database_lost_mid_service_is_a_tool_error_and_health_503_then_service_resumes(
    indexed: tuple[Path, str], pg_server: tuple[str, Path], tmp_path: Path
) -> None:
    _root, url = indexed
    relay = Relay(unix_socket(pg_server[1]))
    port = free_port()
    log = tmp_path / "server.log"
    env_url = _relay_url(relay, url)
    with log.open("wb") as stderr:
        proc = subprocess.Popen(
            _serve_args(port, "-v", "--embeddings", "local"),
            env=child_env(MCP_DOCS_DATABASE_URL=env_url, XDG_CACHE_HOME=str(tmp_path / "cache")),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            try:
                _wait_healthy(proc, port)
            except AssertionError as exc:
                raise AssertionError(f"{exc}: {log.read_text(errors='replace')}") from None
            async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp")) as c:
                ok = await c.call_tool("search_documents", {"query": "collector", "mode": "keyword"})
                assert not ok.is_error
                relay.cut()
                for tool, args in (
                    ("search_documents", {"query": "collector"}),
                    ("read_document", {"id": "guides/install.md"}),
                ):
                    failed = await c.call_tool(tool, args)
                    assert failed.is_error, tool
                    text = failed.content[0].text  # type: ignore[union-attr]
                    assert "cannot be reached" in text and "try again" in text and PASSWORD not in text
                health = _health(port)
                assert health.status_code == 503 and "cannot be reached" in health.json()["error"]
                assert PASSWORD not in health.text
                relay.restore()
                deadline = time.monotonic() + 30
                while _health(port).status_code != 200 and time.monotonic() < deadline:
                    time.sleep(0.2)
                back = await c.call_tool("search_documents", {"query": "collector", "mode": "hybrid"})
                assert not back.is_error and back.structured_content["results"]  # type: ignore[index]
        finally:
            stop(proc)
            relay.cut()
    logged = log.read_text(errors="replace")
    assert "postgres:***@127.0.0.1" in logged  # the serving line names the database…
    assert PASSWORD not in logged  # …and nothing anywhere shows its password, debug logging included
    assert json.dumps(PASSWORD) not in logged
