"""What the library, the tools, the commands and the fusion ask of an index's catalog and vectors: the narrow
interface both stores implement. The embedded store answers with `index.catalog.Catalog` (SQLite) and
`index.vector_store.VectorStore` (sqlite-vec), PostgreSQL with `store.pg_catalog.PgCatalog` and
`store.pg_library.PgVectors`. Structural types (typing.Protocol): neither store derives from the other, and mypy
checks each against these where a library assigns them. Writing is not part of it: each store's writer has its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # for the annotations only
    import numpy as np

    from ..embedders import Embedder
    from ..links import Name
    from ..scan import Problem
    from .catalog import DocumentRecord, Fingerprint, LinkRecord, SectionRecord
    from .hits import VectorHit
    from .language_mix import LanguageView


class CatalogReader(Protocol):
    """The documents, sections, names, links and problems of an index (reads only)."""

    def close(self) -> None: ...

    def document(self, doc_id: str) -> DocumentRecord | None: ...

    def sections(self, doc_id: str) -> list[SectionRecord]: ...

    def section_counts(self, doc_ids: list[str]) -> dict[str, int]: ...

    def ids(self) -> list[str]: ...

    def fingerprints(self, paths: Iterable[str] | None = None) -> dict[str, Fingerprint]: ...

    def count(self) -> int: ...

    def section_total(self) -> int: ...

    def language_counts(self) -> dict[str, int]: ...

    def languages_of(self, doc_ids: list[str]) -> dict[str, str]: ...
    def named_languages(self, doc_ids: list[str]) -> dict[str, str | None]: ...

    def problems(self) -> list[Problem]: ...

    def documents_with_warnings(self) -> list[tuple[str, list[str]]]: ...

    def names(self, keys: Iterable[str]) -> list[Name]: ...

    def names_of(self, doc_id: str) -> list[Name]: ...

    def all_names(self) -> list[Name]: ...

    def links(self, keys: Iterable[str] | None = None, *, unresolved: bool = False) -> list[LinkRecord]: ...

    def folders(self) -> list[str]: ...

    def linking(self, doc_id: str, limit: int) -> tuple[list[str], int]: ...

    def list_documents(
        self,
        folder: str,
        tag: str | None,
        limit: int,
        offset: int,
        ids: list[str] | None = None,
        linked_to: str | None = None,
    ) -> tuple[list[DocumentRecord], int]: ...

    def subfolders(
        self, folder: str, tag: str | None, ids: list[str] | None = None, linked_to: str | None = None
    ) -> list[tuple[str, int]]: ...


class VectorSearch(Protocol):
    """Vector search over an index's chunks, and how far embedding has got (for notes, `status`, /health)."""

    @property
    def embedder(self) -> Embedder | None: ...

    @property
    def error(self) -> str | None: ...

    def close(self) -> None: ...

    def pending(self) -> int: ...

    def embedded_chunks(self) -> int: ...

    def ready(self) -> bool: ...

    def coverage(self) -> float: ...

    def coverage_note(self, mode: str, covered: float | None = None) -> str | None: ...

    def unavailable_reason(self) -> str | None: ...

    def waiting_sections(self, keys: Iterable[tuple[str, int]]) -> set[tuple[str, int]]: ...

    def status(self) -> dict[str, Any]: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def language_view(self, query: np.ndarray) -> LanguageView | None: ...

    def section_hits(
        self,
        query: np.ndarray,
        limit: int,
        folder: str | None = None,
        tags: Sequence[str] = (),
        view: LanguageView | None = None,
    ) -> list[VectorHit]: ...


def coverage(store: VectorSearch) -> float:
    """The fraction of the collection's chunks that have vectors (1.0 when none is waiting), counting a document
    not chunked yet as `pending` does; either store."""
    pending = store.pending()
    if pending == 0:
        return 1.0
    embedded = store.embedded_chunks()
    return embedded / (embedded + pending)


def coverage_note(store: VectorSearch, mode: str, covered: float | None = None) -> str | None:
    """One sentence while vectors cover only part of the collection (and why, if embedding failed); either store.
    `covered`: the store's `coverage()` when the caller already has it (a search uses it for the fusion too)."""
    if covered is None:
        covered = coverage(store)
    if covered >= 1.0:
        return None
    share = 100 * covered
    percent = "<1" if 0 < share < 1 else str(min(99, int(share)))
    why = f" ({store.error})" if store.error else ""
    rest = "ranked by keyword alone" if mode == "hybrid" else "not found by semantic search yet"
    return f"Vectors cover {percent}% of the collection so far{why}; the rest is {rest}."


def unavailable_reason(store: VectorSearch) -> str | None:
    """Why vector search cannot answer (no embedder, no vectors yet), or None; either store."""
    if store.embedder is None:
        return store.error or "embeddings are off"
    if not store.ready():
        return "vectors are not built yet" + (f" ({store.error})" if store.error else "")
    return None
