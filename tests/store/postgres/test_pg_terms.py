"""The PostgreSQL term table and the one-round-trip keyword search, against a real PostgreSQL (conftest.py): the
writer's trigger keeps `mcp_docs_terms` equal to the sections' tsvectors through a cold COPY load, edits, deletions
and additions; keyword scores read from it equal the ranking from the tsvectors; an index of the previous schema
version is upgraded in place; a keyword search costs one statement, its languages and document count included."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from mcp_docs.cli import main
from mcp_docs.errors import DatabaseUnavailable
from mcp_docs.library import Library, open_library
from mcp_docs.settings import Settings

from ...server_fixtures import write
from .conftest import Relay, unix_socket

psycopg = pytest.importorskip(
    "psycopg", reason="psycopg is not installed: pip install -e '.[test]' to run the PostgreSQL store tests"
)
from mcp_docs.store.postgres import store as pg_store  # noqa: E402  (it imports psycopg)
from mcp_docs.store.postgres.database import PG_SCHEMA_VERSION, TERMS_FROM_VERSION  # noqa: E402

# Each section's terms recomputed from its stored tsvector: what the table must hold at any time.
_EXPECTED = (
    "select s.config::text, t.lexeme, s.doc_id, s.idx, cardinality(t.positions), "
    "coalesce(cardinality(array_positions(t.weights, 'A')), 0), s.tokens "
    "from mcp_docs_sections s cross join unnest(s.tsv) t order by 1, 2, 3, 4"
)
_STORED = "select config::text, lexeme, doc_id, idx, tf, head_tf, tokens from mcp_docs_terms order by 1, 2, 3, 4"
QUERIES = (
    "zebra grazing",
    "savanna grass",
    "http/json exporter",
    "otel_sdk configuration",
    "réseaux configurés",
    "Tomaten Garten",
    "zebra zebra title",
)


def _vault(root: Path) -> None:
    write(root, "short.md", "# Alpha\n\nZebra grazing.\n")
    write(root, "long.md", "# Zebra notes\n\nZebra zebra zebra, then words about the savanna and its grass.\n")
    write(root, "none.md", "# Gamma\n\nNothing striped here at all, only grass. The http/json exporter.\n")
    write(root, "sdk.md", "# SDK\n\n## otel_sdk configuration\n\nSet otel_sdk options; the HTTP/JSON exporter too.\n")
    write(root, "fr/reseau.md", "---\nlang: fr\n---\n# Configuration réseau\n\nLes réseaux configurés.\n")
    write(root, "de/garten.md", "---\nlang: de\n---\n# Garten\n\nTomaten im Garten pflanzen, Tomaten.\n")
    for i in range(12):
        write(root, f"more/m{i:02d}.md", f"# Page {i}\n\nGrass and savanna, page {i}.\n\n## Zebra {i}\n\nZebra.\n")


def _index(root: Path, database: str) -> None:
    assert (
        main(["index", "--store", "postgres", "--database-url", database, "--root", str(root), "--embeddings", "none"])
        == 0
    )


def _table(database: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(database, autocommit=True) as conn:
        return conn.execute(sql).fetchall()


@pytest.fixture
def reader(database: str, tmp_path: Path) -> Iterator[Any]:
    """A function opening a reading library on the database (closed at the end)."""
    opened: list[Library] = []

    def open_reader() -> Library:
        settings = Settings.load(
            store="postgres", database_url=database, embeddings="none", reader=True, index_dir=tmp_path / "r"
        )
        lib = open_library(settings, read_only=True)
        opened.append(lib)
        return lib

    yield open_reader
    for lib in opened:
        lib.close()


def _scores(lib: Library) -> list[list[tuple[str, int, float]]]:
    return [[(s.doc_id, s.section_idx, round(score, 9)) for s, score in lib.keyword_sections(q, 50)] for q in QUERIES]


def test_the_term_table_follows_a_cold_load_edits_deletions_and_additions(
    database: str, tmp_path: Path, reader: Any
) -> None:
    root = tmp_path / "vault"
    _vault(root)
    _index(root, database)  # a cold load: COPY, the term index built after it
    stored = _table(database, _STORED)
    assert stored == _table(database, _EXPECTED)
    # "# Zebra notes" then "Zebra zebra zebra": four occurrences, one in the title (the head)
    assert ("english", "zebra", "long.md", 0, 4, 1) in [r[:6] for r in stored]
    assert len({r[2] for r in stored}) == 18

    write(root, "long.md", "# Notes\n\nZebra once, and okapis.\n")  # changed
    (root / "short.md").unlink()  # deleted
    write(root, "new.md", "# Okapi\n\nOkapi okapi.\n")  # added
    _index(root, database)
    stored = _table(database, _STORED)
    assert stored == _table(database, _EXPECTED)
    docs = {r[2] for r in stored}
    assert "short.md" not in docs and "new.md" in docs
    assert ("english", "zebra", "long.md", 0, 1, 0) in [r[:6] for r in stored]
    lib = reader()
    assert [s.doc_id for s, _ in lib.keyword_sections("okapi", 10)][:2] == ["new.md", "long.md"]
    assert "short.md" not in {s.doc_id for s, _ in lib.keyword_sections("grazing", 10)}


def test_keyword_scores_from_the_term_table_equal_those_ranked_from_the_tsvectors(
    database: str, tmp_path: Path, reader: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "vault"
    _vault(root)
    _index(root, database)
    lib = reader()
    from_terms = _scores(lib)
    assert all(from_terms)
    monkeypatch.setattr(pg_store, "TERM_TABLE", False)
    assert _scores(lib) == from_terms
    # the term table is what answered: emptied behind the writer's back, the same words find nothing
    monkeypatch.setattr(pg_store, "TERM_TABLE", True)
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("alter table mcp_docs_terms disable trigger all")
        conn.execute("delete from mcp_docs_terms")
    assert lib.keyword_sections("zebra", 10) == []


def test_an_index_of_the_previous_version_gets_its_term_table_in_place(
    database: str, tmp_path: Path, reader: Any
) -> None:
    root = tmp_path / "vault"
    _vault(root)
    _index(root, database)
    before = _scores(reader())
    written = _table(database, "select id, indexed_at from mcp_docs_documents order by id")
    # what an index of the version before is: no term table, no trigger
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("drop table mcp_docs_terms")
        conn.execute("drop function mcp_docs_section_terms() cascade")
        conn.execute("update mcp_docs_meta set value = %s where key = 'schema_version'", (str(TERMS_FROM_VERSION - 1),))
    with pytest.raises(Exception, match=f"schema version {TERMS_FROM_VERSION - 1}"):
        reader()
    _index(root, database)
    assert _table(database, "select value from mcp_docs_meta where key = 'schema_version'") == [
        (str(PG_SCHEMA_VERSION),)
    ]
    # upgraded, not rebuilt: the same documents (each read again for the folded tsvectors of schema 8, its
    # vectors kept), the term table filled from the stored sections and kept by the trigger as they were rewritten
    assert [row[0] for row in _table(database, "select id, indexed_at from mcp_docs_documents order by id")] == [
        row[0] for row in written
    ]
    assert _table(database, _STORED) == _table(database, _EXPECTED) != []
    # vacuumed once filled, so that searches read the term index alone (index-only scans need the visibility map)
    assert _table(database, "select last_vacuum is not null from pg_stat_user_tables where relname = 'mcp_docs_terms'")[
        0
    ] == (True,)
    assert _scores(reader()) == before
    write(root, "added.md", "# Zebra herd\n\nZebra.\n")  # and the trigger is back for what the next sync writes
    _index(root, database)
    assert _table(database, _STORED) == _table(database, _EXPECTED)
    assert "added.md" in {r[2] for r in _table(database, _STORED)}


def test_a_keyword_search_is_one_statement_with_its_languages_and_document_count(
    database: str, tmp_path: Path, reader: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "vault"
    _vault(root)
    (root / "fr" / "reseau.md").unlink()
    (root / "de" / "garten.md").unlink()  # English only, as the OpenTelemetry docs the throughput is measured on
    _index(root, database)
    lib = reader()
    lib.search("warm up", mode="keyword")
    statements: list[str] = []
    execute = psycopg.Connection.execute

    def counted(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        statements.append(str(query))
        return execute(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "execute", counted)
    result = lib.search("zebra grazing", mode="keyword")
    assert len(statements) == 1, statements
    assert result.results[0].id == "short.md" and result.index.documents == 16
    # what the search read is not kept for other callers: the next count is read from the database
    statements.clear()
    assert lib.catalog.count() == 16 and len(statements) == 1


def test_a_search_in_several_languages_reads_the_languages_with_its_ranking(
    database: str, tmp_path: Path, reader: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Several languages: the search also reads each result's document row (its front matter may name its
    translations, search/languages.py) and the language each was indexed in; they come with the ranking."""
    root = tmp_path / "vault"
    _vault(root)
    _index(root, database)
    lib = reader()
    lib.search("warm up", mode="keyword")
    statements: list[str] = []
    execute = psycopg.Connection.execute

    def counted(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        statements.append(str(query))
        return execute(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "execute", counted)
    result = lib.search("Tomaten Garten", mode="keyword")
    assert result.results[0].id == "de/garten.md" and result.results[0].language == "de"
    assert result.index.documents == 18
    assert len(statements) == 1, statements  # not 1 + a document row per result
    # each row answers the search once: a later reader of that document asks the database
    statements.clear()
    record = lib.catalog.document("de/garten.md")
    assert record is not None and record.lang == "de" and len(statements) == 1


def _prepared(lib: Library) -> int:
    """Statements prepared on the reader's connection (psycopg prepares one after its fifth execution)."""
    return int(lib.store.db.value("select count(*) from pg_prepared_statements"))  # type: ignore[attr-defined]


def test_prepared_searches_survive_a_rebuilt_schema_and_a_lost_connection(
    pg_server: tuple[str, Path], database: str, tmp_path: Path
) -> None:
    root = tmp_path / "vault"
    _vault(root)
    _index(root, database)
    relay = Relay(unix_socket(pg_server[1]))
    name = urlsplit(database).path.lstrip("/")
    settings = Settings.load(
        store="postgres",
        database_url=f"postgresql://postgres@127.0.0.1:{relay.port}/{name}",
        embeddings="none",
        reader=True,
        index_dir=tmp_path / "r",
    )
    try:
        with open_library(settings, read_only=True) as lib:
            first = _scores(lib)
            for _ in range(6):
                assert _scores(lib) == first
            assert _prepared(lib) >= 1
            # the writer rebuilds every table under the prepared statements (an older schema version)
            with psycopg.connect(database, autocommit=True) as conn:
                conn.execute("update mcp_docs_meta set value = '4' where key = 'schema_version'")
            _index(root, database)
            assert _scores(lib) == first
            relay.cut()  # the database goes away (a restart), with the connection and its prepared statements
            with pytest.raises(DatabaseUnavailable):
                lib.keyword_sections("zebra", 5)
            relay.restore()
            for _ in range(6):
                assert _scores(lib) == first
            assert _prepared(lib) >= 1
    finally:
        relay.cut()
