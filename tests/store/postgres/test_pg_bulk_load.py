"""The PostgreSQL writer's cold load and keyword ranking, against a real PostgreSQL (tests/store/conftest.py):
a cold index is written with COPY, its secondary indexes built after the load, and gives the same catalog and the
same search results as the row-by-row incremental path; a writer killed mid-load loses nothing; without a BM25
extension on the server (the test server has none), keyword search ranks with BM25 computed in SQL."""

from __future__ import annotations

import logging
import math
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from mcp_docs.cli import main
from mcp_docs.library import open_library
from mcp_docs.settings import Settings

from ...server_fixtures import child_env, write
from .conftest import new_database
from .test_pg_hardening import _as, _too_many_words

psycopg = pytest.importorskip(
    "psycopg", reason="psycopg is not installed: pip install -e '.[test]' to run the PostgreSQL store tests"
)
from mcp_docs.store.postgres import sync as pg_sync  # noqa: E402  (it imports psycopg)
from mcp_docs.store.postgres.database import BM25_EXTENSIONS, DEFERRED_INDEXES, Database  # noqa: E402
from mcp_docs.store.postgres.store import HEAD_FIELD, HEAD_TF, PostgresStore  # noqa: E402

QUERIES = ("backup schedule", "garden tomatoes", "configuration réseau", "note 7", "Tomaten")


def _vault(root: Path) -> None:
    """Documents with links between them (some broken), tags, aliases, headings, and three languages."""
    for i in range(24):
        write(
            root,
            f"notes/n{i:02d}.md",
            f"---\ntags: [garden, t{i % 3}]\naliases: [Note {i}]\n---\n# Note {i}\n\nGarden tomatoes, note {i}. "
            f"See [[n{(i + 1) % 24:02d}]] and [[missing {i}]].\n\n## Backup schedule\n\n"
            + "Backups run nightly. " * (i % 4 + 1)
            + "\n",
        )
    write(root, "fr/reseau.md", "---\nlang: fr\n---\n# Configuration réseau\n\nLes réseaux configurés. [[n01]]\n")
    write(root, "de/garten.md", "---\nlang: de\n---\n# Garten\n\nTomaten im Garten pflanzen.\n")
    write(root, "guides/backup.md", "# Backup\n\n## Schedule\n\nA backup schedule, daily. [[Note 3]]\n")


def _rows(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table the sync writes, in a stable order (indexed_at left out: when the row was written)."""
    queries = {
        "documents": "select id, folder, hash, mtime_ns, size, title, summary, tags, aliases, front_matter, lang, "
        "links, warnings, tokens, language, content from mcp_docs_documents order by id",
        "sections": "select doc_id, idx, heading, heading_path, level, line_start, line_end, subtree_end, tokens, "
        "body, config::text, tsv::text from mcp_docs_sections order by doc_id, idx",
        "tags": "select doc_id, tag from mcp_docs_doc_tags order by doc_id, tag",
        "links": "select doc_id, n, line, kind, target, heading, key, count, resolved from mcp_docs_links "
        "order by doc_id, n",
        "names": "select key, doc_id, kind, alias from mcp_docs_doc_names order by key, doc_id, kind, alias",
    }
    with psycopg.connect(url, autocommit=True) as conn:
        return {table: conn.execute(sql).fetchall() for table, sql in queries.items()}


def _indexes(url: str) -> set[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        return {r[0] for r in conn.execute("select indexname from pg_indexes where tablename like 'mcp_docs_%'")}


def _searches(url: str, tmp: Path) -> list[list[tuple[str, float]]]:
    settings = Settings.load(store="postgres", database_url=url, embeddings="none", reader=True, index_dir=tmp)
    with open_library(settings, read_only=True) as lib:
        return [[(d.id, d.score) for d in lib.search(q, max_results=10, mode="keyword").results] for q in QUERIES]


def test_a_cold_index_is_loaded_with_copy_and_matches_the_incremental_path(
    pg_server: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "vault"
    _vault(root)
    monkeypatch.setattr(pg_sync, "BATCH_DOCUMENTS", 5)  # several batches: the committer thread, links across them
    cold, incremental = new_database(pg_server[0]), new_database(pg_server[0])
    caplog.set_level(logging.INFO, logger="mcp_docs.store.postgres.sync")
    with open_library(Settings.load(root, store="postgres", database_url=cold, embeddings="none")) as lib:
        assert isinstance(lib.store, PostgresStore)
        lib.sync()
    assert "cold index: 27 of 27 documents loaded with COPY" in caplog.text
    caplog.clear()
    with open_library(Settings.load(root, store="postgres", database_url=incremental, embeddings="none")) as lib:
        lib.sync(["notes/n00.md"])  # a first partial sync: the rest then goes row by row, as a watcher's would
        lib.sync()
    assert "loaded with COPY" not in caplog.text

    assert set(DEFERRED_INDEXES) <= _indexes(cold)  # dropped for the load, built after it
    assert _indexes(cold) == _indexes(incremental)
    cold_rows, incremental_rows = _rows(cold), _rows(incremental)
    assert len(cold_rows["documents"]) == 27 and len(cold_rows["links"]) > 40
    assert any(r[8] for r in cold_rows["links"])  # links resolved across batches
    assert cold_rows == incremental_rows
    cold_hits, incremental_hits = _searches(cold, tmp_path / "a"), _searches(incremental, tmp_path / "b")
    assert all(cold_hits) and cold_hits == incremental_hits


def test_a_cold_batch_with_a_document_the_database_refuses_keeps_the_rest_of_the_batch(
    database: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """COPY writes a batch whole or not at all: one document the database refuses (a section whose words overflow
    a tsvector) sends its batch down the savepoint path, which skips that document alone."""
    root = tmp_path / "vault"
    _vault(root)
    write(root, "words.md", _too_many_words())
    caplog.set_level(logging.INFO, logger="mcp_docs.store.postgres.sync")
    with open_library(Settings.load(root, store="postgres", database_url=database, embeddings="none")) as lib:
        report = lib.sync()
    assert "COPY refused a batch" in caplog.text
    assert [p.path for p in report.skipped] == ["words.md"] and report.added == 27
    assert len(_rows(database)["documents"]) == 27
    assert set(DEFERRED_INDEXES) <= _indexes(database)


_KILL_SCRIPT = """
import sys
from mcp_docs.settings import Settings
from mcp_docs.library import open_library
with open_library(Settings.load(sys.argv[1], store="postgres", database_url=sys.argv[2], embeddings="none")) as lib:
    lib.sync()
"""


def test_a_writer_killed_mid_cold_load_loses_nothing_and_its_indexes_come_back(database: str, tmp_path: Path) -> None:
    root = tmp_path / "vault"
    for i in range(1500):
        write(root, f"d{i // 100}/n{i:04d}.md", f"# Page {i}\n\nWords about topic {i % 37} and page {i}.\n")
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILL_SCRIPT, str(root), database], env=child_env(), stderr=subprocess.PIPE
    )
    count = 0
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with psycopg.connect(database, autocommit=True) as conn:
                    count = conn.execute("select count(*) from mcp_docs_documents").fetchone()[0]
            except psycopg.errors.UndefinedTable:
                count = 0
            if count >= 500:  # a batch committed, the load under way
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.02)
    finally:
        proc.wait(60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode() if proc.stderr else ""
    assert 500 <= count < 1500
    assert "mcp_docs_sections_tsv" not in _indexes(database)  # killed mid cold load: the GIN index was not built yet
    with psycopg.connect(database, autocommit=True) as conn:  # what was committed is whole: no section lost
        assert conn.execute(
            "select count(*) from mcp_docs_documents d where not exists "
            "(select 1 from mcp_docs_sections s where s.doc_id = d.id)"
        ).fetchone() == (0,)
    assert (
        main(["index", "--store", "postgres", "--database-url", database, "--root", str(root), "--embeddings", "none"])
        == 0
    )
    assert len(_rows(database)["documents"]) == 1500
    assert set(DEFERRED_INDEXES) <= _indexes(database)
    with psycopg.connect(database, autocommit=True) as conn:
        assert conn.execute("select count(*) from mcp_docs_sections").fetchone() == (1500,)


def test_without_a_bm25_extension_keyword_search_ranks_with_bm25_computed_in_sql(
    database: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "vault"
    write(root, "short.md", "# Alpha\n\nZebra grazing.\n")
    write(root, "long.md", "# Beta\n\nZebra zebra zebra, then many other words about the savanna and its grass.\n")
    write(root, "none.md", "# Gamma\n\nNothing striped here at all, only grass.\n")
    write(root, "title.md", "# Zebra\n\nThe animal, with grass.\n")
    assert (
        main(["index", "--store", "postgres", "--database-url", database, "--root", str(root), "--embeddings", "none"])
        == 0
    )
    db = Database(database, read_only=True)
    try:
        # the detection query works on this server: it finds an extension that is there (pgvector), and no BM25 one
        assert db.installed_extensions(["vector", *BM25_EXTENSIONS]) == ["vector"]
        assert db.available_extensions(["vector"]) == ["vector"]
    finally:
        db.close()
    caplog.set_level(logging.INFO)
    settings = Settings.load(
        store="postgres", database_url=database, embeddings="none", reader=True, index_dir=tmp_path / "i"
    )
    with open_library(settings, read_only=True) as lib:
        assert isinstance(lib.store, PostgresStore)
        assert lib.store.bm25_extension is None and lib.store.keyword_ranking.startswith("BM25 in SQL")
        got = {s.doc_id: score for s, score in lib.keyword_sections("zebra", 10)}
    # BM25 computed here from the sections' stored lengths: idf · tf·(k1+1) / (tf + k1·(1 − b + b·len/avg)), a
    # title occurrence counting HEAD_TF times, plus the title and heading path as a field of their own: HEAD_FIELD ·
    # idf · h·(k1+1) / (h + k1), h the occurrences there
    with psycopg.connect(database, autocommit=True) as conn:
        sections = conn.execute("select doc_id, heading_path, body, tokens from mcp_docs_sections").fetchall()
    average = sum(r[3] for r in sections) / len(sections)
    head = {doc: len(re.findall(r"zebra", heading, re.I)) for doc, heading, _, _ in sections}
    tf = {doc: HEAD_TF * head[doc] + len(re.findall(r"zebra", body, re.I)) for doc, _, body, _ in sections}
    df = sum(1 for n in tf.values() if n)
    idf = math.log(1 + (len(sections) - df + 0.5) / (df + 0.5))
    expected = {
        doc: idf * tf[doc] * 2.2 / (tf[doc] + 1.2 * (1 - 0.75 + 0.75 * tokens / average))
        + HEAD_FIELD * idf * head[doc] * 2.2 / (head[doc] + 1.2)
        for doc, _, _, tokens in sections
        if tf[doc]
    }
    assert expected["title.md"] > expected["short.md"]  # the word in the title, once in the body: first
    assert got.keys() == expected.keys() == {"short.md", "long.md", "title.md"}
    for doc, score in expected.items():
        assert got[doc] == pytest.approx(score, rel=1e-4), doc


def test_a_writer_without_the_temporary_privilege_still_loads_a_cold_index(
    pg_server: tuple[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """COPY stages the sections in a temporary table; a database that grants no TEMPORARY privilege to the writer's
    role sends each batch down the row-by-row path instead, and the load loses nothing."""
    admin = pg_server[0]
    database = new_database(admin)
    name = urlsplit(database).path.lstrip("/")
    role = f"g_{name}"
    root = tmp_path / "vault"
    _vault(root)
    with psycopg.connect(database, autocommit=True) as conn:
        for statement in (
            "create extension vector",
            f"create role {role} login",
            f"grant create on schema public to {role}",
            f"revoke temporary on database {name} from public",
        ):
            conn.execute(statement)
    caplog.set_level(logging.INFO, logger="mcp_docs.store.postgres.sync")
    settings = Settings.load(root, store="postgres", database_url=_as(database, role), embeddings="none")
    with open_library(settings) as lib:
        report = lib.sync()
    assert report.added == 27 and not report.skipped
    assert "COPY refused a batch (InsufficientPrivilege)" in caplog.text
    assert len(_rows(database)["documents"]) == 27
    assert set(DEFERRED_INDEXES) <= _indexes(database)
