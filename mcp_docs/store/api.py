"""What `library.Library` asks of a store: the one `Store` protocol, and the narrow reads it is made of (a
catalog, vector search, the documents' bytes). A store is one package implementing it plus one entry in
`store/registry.py`; the library is composed from a store, never subclassed.

The embedded store (`store.embedded`) answers with `store.embedded.catalog.Catalog` (SQLite), `store.embedded.fulltext`
(Tantivy) and `store.embedded.vector_store.VectorStore` (sqlite-vec); PostgreSQL (`store.postgres`) with `PgCatalog`,
SQL keyword search and `PgVectors`; the tests' in-memory store (`tests/store/memory_store.py`) with a dict.
Structural types (typing.Protocol): no store derives from another, and mypy checks each against these where the
registry returns it. How a store writes is its own: the library only asks it to `sync`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # for the annotations only
    import numpy as np

    from ..embedders import Embedder
    from ..index.hits import RankedSection, VectorHit
    from ..index.language_mix import LanguageView
    from ..index.model_choice import LanguageMix
    from ..links import Name
    from ..markdown import ParsedDocument
    from ..scan import Problem
    from ..search.ranking import Bonus
    from .embedded.catalog import DocumentRecord, Fingerprint, LinkRecord, SectionRecord

# (done, total): how far a sync or an embedding has got.
Progress = Callable[[int, int], None]


@dataclass
class SyncReport:
    """What one sync did, whichever store ran it."""

    added: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    skipped: list[Problem] = field(default_factory=list)
    changed_ids: list[str] = field(default_factory=list)
    deleted_ids: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.deleted)


# Called after each committed batch of a sync with the ids changed and deleted (the library refreshes its
# language counts, so a long first sync shows its progress in every search).
CommitListener = Callable[[list[str], list[str]], None]


class CatalogReader(Protocol):
    """The documents, sections, names, links and problems of an index (reads only)."""

    def close(self) -> None: ...

    def document(self, doc_id: str) -> DocumentRecord | None: ...

    def sections(self, doc_id: str) -> list[SectionRecord]: ...

    def section_counts(self, doc_ids: list[str]) -> dict[str, int]: ...

    def front_matters(self, doc_ids: list[str]) -> dict[str, dict[str, Any]]: ...

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


class KeywordHit(Protocol):
    """One section found by keyword search. `doc_key` groups the hits of one document (as text, it is what
    `Store.document_bonus(by_key=True)` is given); `section` may be read lazily, only for the documents shown."""

    @property
    def doc_key(self) -> object: ...

    @property
    def score(self) -> float: ...

    @property
    def section(self) -> RankedSection: ...

    @property
    def heading_path(self) -> str:
        """The section's place in its document (the grouping ranks subsections by it)."""
        ...


@dataclass(frozen=True, slots=True)
class SectionHit:
    """A keyword hit whose section is already read (a store that ranks in SQL returns its rows whole)."""

    doc_key: str  # the document's id
    score: float
    section: RankedSection

    @property
    def heading_path(self) -> str:
        return self.section.heading_path


class DocumentFiles(Protocol):
    """How the tools find and read a document by id: on disk under the root (the embedded store), or from the
    store itself when the server has no copy of the root (a PostgreSQL reader). The same refusals either way."""

    def resolve_id(self, doc_id: str) -> Path:
        """The file or folder an id names inside the root, or FileNotFoundError."""
        ...

    def is_folder(self, path: Path) -> bool: ...

    def folder_exists(self, folder: str) -> bool: ...

    def has_document(self, doc_id: str) -> bool: ...

    def read_bytes(self, doc_id: str, path: Path) -> bytes:
        """The document's bytes as they are now (raises what loader.read_markdown raises)."""
        ...


# A chunk waiting for its vector: (id, text to embed). A document's own unit (title, description and lead) has its id
# negated: one queue and one batch format for the worker, whichever table the vector goes to.
PendingChunk = tuple[int, str]


class VectorWriter(Protocol):
    """What the one embedding worker (`index.embedding_worker.EmbeddingWorker`) fills, whichever store keeps the
    vectors: the embedded store's `VectorStore` (sqlite-vec) and PostgreSQL's `PgVectors` (pgvector).

    The queue: `pending_batch` hands out every document's own unit before any section chunk (ids negated, see
    PendingChunk), the documents recent searches returned first; `store_vectors` writes a batch in one transaction
    (an interrupted run resumes where it stopped). Chunking: `dirty` names the documents whose chunks are stale,
    which the worker reads and gives to `store_documents` (a store that chunks as it syncs, PostgreSQL, has none).
    Bookkeeping kept with the vectors, so that `status` in another process sees it: the rate, the last error, the
    language mix the model was chosen for (index/model_choice.py)."""

    embedder: Embedder | None
    error: str | None
    busy: bool  # the worker is running a pass (status "running")
    last_rate: float | None  # units per second of the last run

    @property
    def catalog(self) -> CatalogReader: ...

    def refresh(self) -> None: ...

    def on_sync(self, changed_ids: list[str], deleted_ids: list[str]) -> None: ...

    def dirty(self) -> set[str]: ...

    def store_documents(self, prepared: Sequence[tuple[str, str | None, ParsedDocument | None]]) -> None: ...

    def pending(self) -> int: ...

    def pending_chunks(self) -> int: ...

    def pending_batch(
        self, limit: int, docs: Sequence[str] = (), folders: Sequence[str] = ()
    ) -> list[PendingChunk]: ...

    def store_vectors(self, pairs: Sequence[tuple[int, np.ndarray]]) -> None: ...

    def mark_failed(self, chunk_id: int) -> None: ...

    def doc_of(self, chunk_id: int) -> str: ...

    def save_rate(self) -> None: ...

    def set_error(self, error: str | None) -> None: ...

    def chosen_for(self) -> LanguageMix | None: ...

    def set_chosen_for(self, mix: LanguageMix) -> None: ...

    def close_thread_connection(self) -> None: ...


class BackgroundEmbedding(Protocol):
    """A store's embedding worker: `index.embedding_worker.EmbeddingWorker`, over the store's `VectorWriter`."""

    def searched_for(self, doc_ids: Iterable[str]) -> None:
        """While embedding is under way, what searches return is embedded first."""
        ...

    def build(self, progress: Progress | None = None, chunking: Progress | None = None) -> int:
        """Bring the vectors up to date in the foreground; the chunks embedded."""
        ...


class Store(Protocol):
    """An index: what `library.Library` reads, searches and keeps up to date through."""

    # Read-only properties, so that a store may keep each as a plain attribute of a narrower type.
    @property
    def catalog(self) -> CatalogReader: ...

    @property
    def vectors(self) -> VectorSearch | None: ...

    @property
    def files(self) -> DocumentFiles: ...

    @property
    def embedding(self) -> BackgroundEmbedding | None:
        """The store's embedding worker (what searches return is embedded first); None where nothing is embedded
        in this process (a reader, embeddings off, a store without vectors)."""
        ...

    @property
    def written_elsewhere(self) -> bool:
        """Another process may write the index while this one reads it (a reading worker, a PostgreSQL server):
        the library then re-reads the collection's languages every few seconds, not only after its own syncs."""
        ...

    @property
    def read_only(self) -> bool:
        """This process only reads the index now (a reading worker, a PostgreSQL server without a root, or an
        embedded index another process is writing): `sync` refuses or waits to take over, nothing is embedded."""
        ...

    def published_sync_error(self, own: str | None) -> str | None:
        """The sync error /health reports: `own` (this process's last sync's), or, where this process reads an
        index another one writes beside it, that writer's."""
        ...

    def publish_sync_error(self, error: str | None) -> None:
        """Where readers in other processes look, say why this writer's last sync failed (None: it succeeded)."""
        ...

    def add_commit_listener(self, listener: CommitListener) -> None: ...

    def keyword_hits(
        self, query: str, limit: int, folder: str | None, tags: Sequence[str], languages: frozenset[str]
    ) -> Sequence[KeywordHit]:
        """The sections best matching the query's words, best first."""
        ...

    def document_bonus(self, query: str, languages: frozenset[str], by_key: bool, fused: bool = False) -> Bonus | None:
        """Document-level evidence for the best documents (search/document_signals.py), or None if the store
        keeps none: sections alone then rank documents."""
        ...

    def sync(self, paths: Iterable[str] | None, progress: Progress | None) -> SyncReport:
        """Bring the index up to date with the root (all of it, or `paths`); IndexBusy where this process only
        reads. The library runs one at a time."""
        ...

    def embed(self, progress: Progress | None = None) -> int:
        """Embed what is pending now, in the foreground (`mcp-docs index`); the number embedded."""
        ...

    def start_embedding(self) -> None:
        """Embed in the background from now on (a server); keyword search answers meanwhile."""
        ...

    def close(self) -> None: ...

    def location(self) -> str:
        """Where the index lives, as a person reads it (no password)."""
        ...

    def health_problem(self) -> str | None:
        """Why the index cannot answer right now (for /health), or None."""
        ...

    def storage_lost(self) -> bool:
        """The index vanished under us (its folder deleted by hand): the next sync recreates it."""
        ...


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
