"""`--store postgres`: words written with combining marks are whole words, as in the embedded store
(tests/index/test_marked_words.py, whose notes and cases these are). PostgreSQL's parser (C.UTF-8) keeps a Hindi or
Tamil word whole, but the query's words were cut at each vowel sign, virama and nukta (query_text.WORD), and their
pieces matched nothing; a decomposed note ('e' + U+0301) and Hebrew niqqud kept their marks in the tsvector. On a
real PostgreSQL (pgserver); the bulk load (a cold index) and the row-by-row inserts (a note changed later) both."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import psycopg

from mcp_docs.library import open_library
from mcp_docs.settings import Settings
from mcp_docs.store.postgres.database import TERMS_OF

from ...index.test_marked_words import ABSENT, CASES, NOTES
from ...server_fixtures import write
from .conftest import new_database
from .test_postgres import _index

# PostgreSQL folds no accents ('decafeine' does not find 'décaféiné' in either form): the composed word does.
PG_CASES = [(query, expected) for query, expected in CASES if query != "decafeine"]


def _found(url: str, tmp_path: Path) -> tuple[dict[str, list[str]], list[str]]:
    settings = Settings.load(
        store="postgres", database_url=url, embeddings="none", reader=True, index_dir=tmp_path / "i"
    )
    with open_library(settings, read_only=True) as library:
        found = {query: [r.id for r in library.search(query, mode="keyword").results] for query, _ in PG_CASES}
        absent = [q for q in ABSENT if library.search(q, mode="keyword").results]
        return found, absent


def test_a_word_with_marks_finds_its_note_alone(pg_server: tuple[str, Path], tmp_path: Path) -> None:
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        write(root, rel, text)
    url = new_database(pg_server[0])
    assert _index(root, url, "--embeddings", "none") == 0  # a cold index: the bulk load
    found, absent = _found(url, tmp_path)
    assert found == {query: [expected] if expected else [] for query, expected in PG_CASES}
    assert absent == []
    assert [r for r in found.values()]  # the cases ran
    # the same notes written again one by one (an index that exists: row-by-row inserts)
    for rel, text in NOTES.items():
        write(root, rel, text + "\n" + unicodedata.normalize("NFD", "Une dernière ligne.") + "\n")
    assert _index(root, url, "--embeddings", "none") == 0
    found, absent = _found(url, tmp_path)
    assert found == {query: [expected] if expected else [] for query, expected in PG_CASES}
    assert absent == []


def test_an_index_of_the_schema_before_is_rebuilt(pg_server: tuple[str, Path], tmp_path: Path) -> None:
    """A database indexed before (schema 7) holds the decomposed note's tsvector with its marks: the writer upgrades
    it in place, every note read again."""
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        write(root, rel, text)
    url = new_database(pg_server[0])
    assert _index(root, url, "--embeddings", "none") == 0
    with psycopg.connect(url, autocommit=True) as conn:  # the tsvectors as schema 7 built them, from the body as is
        conn.execute(
            "update mcp_docs_sections set tsv = setweight(to_tsvector(config, heading_path), 'A') || "
            "setweight(to_tsvector(config, body), 'B')"
        )
        conn.execute("delete from mcp_docs_terms")  # and the term table read from them
        conn.execute(f"insert into mcp_docs_terms {TERMS_OF.format(sections='mcp_docs_sections')}")
    assert _found(url, tmp_path)[0]["décaféiné"] == []
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("update mcp_docs_meta set value = '7' where key = 'schema_version'")
    assert _index(root, url, "--embeddings", "none") == 0
    found, _ = _found(url, tmp_path)
    assert found["décaféiné"] == ["fr/coffee.md"]
    with psycopg.connect(url) as conn:
        assert conn.execute("select count(*) from mcp_docs_documents").fetchone() == (len(NOTES),)
