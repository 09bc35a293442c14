"""A server reading a PostgreSQL index without the documents (no --root) over an index that holds no document yet:
its note named its own empty stand-in folder, 'The folder ~/.cache/mcp-docs/postgres-reader-root holds no Markdown
files', to the user of status and to an agent in every search's note, a folder they never gave and that holds
nothing by design. Real PostgreSQL (pgserver), the real command line to write the index."""

from __future__ import annotations

from pathlib import Path

from mcp_docs.library import open_library

from .both_stores import postgres_reader
from .conftest import new_database
from .test_postgres import _index


def test_a_reader_of_an_empty_index_names_the_database_not_its_own_folder(
    pg_server: tuple[str, Path], tmp_path: Path
) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    url = new_database(pg_server[0])
    assert _index(root, url, "--embeddings", "none") == 0
    with open_library(postgres_reader(url, tmp_path), read_only=True) as lib:
        note = lib.empty_note()
        assert note is not None
        assert "postgres-reader-root" not in note and "holds no Markdown" not in note, note
        assert note.startswith("No document is indexed in PostgreSQL postgresql://"), note
        assert "mcp-docs index --store postgres --root DIR" in note
        found = lib.search("anything", mode="keyword")
        assert found.results == [] and found.note is not None
        assert "postgres-reader-root" not in str(found.note) and "No document is indexed in PostgreSQL" in str(
            found.note
        )
