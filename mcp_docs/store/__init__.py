"""Where an index lives. The embedded store (the default, `--store tantivy`) is the index folder: the catalog
(SQLite), the full-text index (Tantivy) and the vectors (sqlite-vec), opened together by `library.Library`.
`--store postgres` puts the same catalog, full-text sections and vector chunks in one PostgreSQL database
(`postgres.py`), written by one `mcp-docs index` or one `serve` with a root (`pg_sync.py`, under an advisory
lock) and read by any number of stateless servers without a root (`pg_library.py`).

The interface both implement is the one the tools and the CLI already use: the catalog's reads
(`index.catalog.Catalog`: documents, sections, tags, links, problems), keyword search and vector search
returning section hits (`index.hits.RankedSection`, `index.vector_store.VectorHit`) that the one fusion
(`search.hybrid`) and the one grouping (`search.ranking`) rank, and reading a document's text by id.
"""

from __future__ import annotations

from ..errors import DatabaseUnavailable, IndexBusy, IndexCannotOpen
from ..library import Library
from ..library import open_library as open_embedded
from ..settings import Settings


def open_library(settings: Settings, read_only: bool = False) -> Library:
    """The library of the store the settings choose, or one sentence saying why it cannot be opened."""
    if settings.store != "postgres":
        return open_embedded(settings, read_only)
    from .pg_library import PgLibrary  # psycopg is imported only for this store

    try:
        return PgLibrary(settings, read_only)
    except (DatabaseUnavailable, IndexBusy) as exc:  # unreachable, or another writer holds the lock
        raise IndexCannotOpen(str(exc)) from None
