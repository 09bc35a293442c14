"""One vault written for a test, indexed by the embedded store or by PostgreSQL: the tests that check both stores
answer alike parametrize a module fixture over the two and call `library_on`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_docs.library import Library, open_library
from mcp_docs.settings import Settings

from ...server_fixtures import write
from .conftest import new_database
from .test_postgres import _index

STORES = ["embedded", "postgres"]


def postgres_reader(url: str, base: Path) -> Settings:
    """A stateless reader's settings for the database at `url` (its index folder, for the parse cache, in `base`)."""
    return Settings.load(store="postgres", database_url=url, embeddings="none", reader=True, index_dir=base / "i")


def library_on(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, name: str, notes: dict[str, str]
) -> Iterator[Library]:
    """`notes` (path → text) indexed with no embeddings by the store `request.param` names, opened as a server
    would: the embedded store's writer, or a PostgreSQL reader after `mcp-docs index` loaded the database."""
    base = tmp_path_factory.mktemp(f"{name}-{request.param}")
    root = base / "vault"
    for rel, text in notes.items():
        write(root, rel, text)
    if request.param == "embedded":
        lib = Library(Settings.load(root, base / "index", embeddings="none", environ={}))
        lib.sync()
        yield lib
        lib.close()
        return
    url = new_database(request.getfixturevalue("pg_server")[0])
    assert _index(root, url, "--embeddings", "none") == 0
    with open_library(postgres_reader(url, base), read_only=True) as lib:
        yield lib
