"""`--store postgres`: words of Thai, Khmer, Lao and Myanmar notes are found in the middle of a sentence, as in the
embedded store (issue 29 there). PostgreSQL's text-search parser cuts these scripts, written without spaces, at
each vowel sign and tone mark; their runs are stored as letter pairs in each section's tsvector and the query's
runs are searched by the same pairs. On a real PostgreSQL (pgserver); the notes are written for the tests."""

from __future__ import annotations

from pathlib import Path

from mcp_docs.library import open_library
from mcp_docs.settings import Settings

from ...index.test_southeast_asian_words import CASES, NOTES
from ...server_fixtures import write
from .conftest import new_database
from .test_postgres import _index


def test_a_word_in_the_middle_of_a_sentence_is_found_first(pg_server: tuple[str, Path], tmp_path: Path) -> None:
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        write(root, rel, text)
    url = new_database(pg_server[0])
    assert _index(root, url, "--embeddings", "none") == 0
    settings = Settings.load(
        store="postgres", database_url=url, embeddings="none", reader=True, index_dir=tmp_path / "i"
    )
    with open_library(settings, read_only=True) as library:
        found = {query: [r.id for r in library.search(query, mode="keyword").results][:1] for query, _ in CASES}
        assert found == {query: [expected] for query, expected in CASES}
        # words of spaced scripts are unchanged
        assert [r.id for r in library.search("morning notes", mode="keyword").results][:1] == ["en/notes.md"]
