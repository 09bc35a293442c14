"""The library: one documents root with its index, read, searched and kept up to date through a store
(store/api.py: the embedded index folder, PostgreSQL, or any other the registry names).

This is the narrow interface the tools and the CLI use: sync, search, and catalog reads. The library is composed
from a store, never subclassed: what differs between stores is theirs. Everything here is synchronous and
thread-safe for readers; one sync runs at a time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import IndexBusy
from .index.hits import RankedSection
from .language import describe_languages
from .models import IndexInfo, SearchMode, SearchResult
from .paths import Jail
from .rerank import make_reranker
from .scan import Scanner, holds_wanted_file, load_rules
from .search import pipeline, results
from .search.ranking import Bonus
from .search.request import search_request
from .settings import Settings
from .store.api import Progress, SyncReport

if TYPE_CHECKING:
    from .store.api import BackgroundEmbedding, CatalogReader, KeywordHit, Store, VectorSearch

log = logging.getLogger(__name__)

READER_REFRESH_SECONDS = 5.0  # how often a reader looks for languages another process's writer added


def open_library(settings: Settings, read_only: bool = False) -> Library:
    """The library of the store the settings choose, or one sentence saying why it cannot be opened."""
    from .store.registry import store_kind

    kind = store_kind(settings)
    kind.check(settings, read_only)
    try:
        return Library(settings, read_only=read_only)
    except Exception as exc:
        kind.refuse(settings, exc)
        raise


class Library:
    store: Store

    def __init__(self, settings: Settings, store: Store | None = None, *, read_only: bool = False) -> None:
        """`store`: the index to use; by default the one `settings.store` names (store/registry.py), opened here.
        `read_only`: a reader's view of an index another process writes (a reading HTTP worker, a PostgreSQL
        server without a root): nothing in the index is created, repaired or changed, and `sync` refuses."""
        self.settings = settings
        self.jail = Jail(settings.root, load_rules(settings.root, settings.extensions))
        self.scanner = Scanner(self.jail)
        self._sync_lock = threading.Lock()
        self._sync_error: str | None = None  # see `sync_error`
        self._scanned_whole = False  # a sync of the whole root ended here: an empty catalog then means no Markdown
        if store is None:
            from .store.registry import open_store

            store = open_store(settings, self.jail, self.scanner, read_only)
        self.store = store
        self._refresh_stats([], [])
        store.add_commit_listener(self._refresh_stats)
        self.reranker = make_reranker(settings)

    @property
    def read_only(self) -> bool:
        """This process only reads the index (a reading worker, a PostgreSQL server without a root, or an index
        another process is writing): nothing in it is created, repaired or changed here."""
        return self.store.read_only

    @property
    def sync_error(self) -> str | None:
        """Why the last sync failed as a whole (None once one succeeds): /health says "degraded" meanwhile, since
        searches still answer from what was committed before, but changes on disk are not reaching the index.
        A library reading an index another process writes beside it reports that writer's (the store's)."""
        return self.store.published_sync_error(self._sync_error)

    @sync_error.setter
    def sync_error(self, error: str | None) -> None:
        changed, self._sync_error = error != self._sync_error, error
        if changed:
            self.store.publish_sync_error(error)

    # What the tools, commands and fusion read, from whichever store (store/api.py).
    @property
    def catalog(self) -> CatalogReader:
        return self.store.catalog

    @property
    def vectors(self) -> VectorSearch | None:
        return self.store.vectors

    @property
    def embedding(self) -> BackgroundEmbedding | None:
        return self.store.embedding

    # -- lifecycle ---------------------------------------------------------------------
    def storage_lost(self) -> bool:
        """The index vanished under us, for example its folder deleted by hand while serving."""
        return self.store.storage_lost()

    def location(self) -> str:
        """Where the index lives, as a person reads it."""
        return self.store.location()

    def health_problem(self) -> str | None:
        """Why the index cannot answer right now (for /health), or None."""
        return self.store.health_problem()

    def close(self) -> None:
        self.store.close()
        if self.reranker is not None:
            self.reranker.close()

    def start_embedding(self) -> None:
        """Fill the vectors in the background (the server calls this); keyword search answers meanwhile."""
        self.store.start_embedding()

    def embed(self, progress: Progress | None = None) -> int:
        """Embed what is pending in the foreground (`mcp-docs index`); the number embedded."""
        return self.store.embed(progress)

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sync --------------------------------------------------------------------------------
    def sync(self, paths: Iterable[str] | None = None, progress: Progress | None = None) -> SyncReport:
        with self._sync_lock, self.recording_sync_errors():
            report = self.store.sync(paths, progress)
        if paths is None:
            self._scanned_whole = True
        return report

    @contextmanager
    def recording_sync_errors(self) -> Iterator[None]:
        """Keep why a sync failed as a whole in `sync_error` (for /health), clear it when one succeeds."""
        try:
            yield
        except IndexBusy:
            raise  # another process is writing the index: it is kept fresh, just not by this one right now
        except Exception as exc:
            self.sync_error = f"the last sync failed ({type(exc).__name__}: {str(exc)[:300]})"
            raise
        self.sync_error = None

    def _refresh_stats(self, changed: list[str], deleted: list[str]) -> None:
        """After each committed batch, so a long first sync shows its progress in every search."""
        self.language_counts = self.catalog.language_counts()
        self._languages = frozenset(self.language_counts or {self.settings.language})
        self._languages_at = time.monotonic()

    def languages_text(self) -> str:
        """'92 % English, 8 % French': what agents are told so they can phrase queries in those languages."""
        return describe_languages(self.language_counts)

    def empty_note(self) -> str | None:
        """Why nothing is indexed, in plain words, when nothing is; None otherwise."""
        if self.catalog.count():
            return None
        skipped = len(self.catalog.problems())
        if skipped:
            # what is skipped may be a folder (unreadable, a link leading outside the root), and one is not 'all 1'
            found = (
                "the one file or folder found was" if skipped == 1 else f"all {skipped:,} files and folders found were"
            )
            return f"No document is indexed: {found} skipped (`mcp-docs status` says why)."
        if not self.settings.has_root:  # a PostgreSQL reader: its root is an empty folder of its own, not the notes
            return (
                f"No document is indexed in {self.location()} yet: its writer (`mcp-docs index --store postgres --root "
                "DIR`, or `mcp-docs serve` with a root) has committed none."
            )
        extensions = ", ".join(self.settings.extensions)
        holds = False if self._scanned_whole else holds_wanted_file(self.jail)
        if holds is True:
            return (
                f"No document is indexed yet: {self.settings.root} holds Markdown files, but no sync has committed "
                "any (`mcp-docs index` builds the index; a server indexes the folder as it starts)."
            )
        if isinstance(holds, str):  # a large tree, or a folder not listed: what the last sync found is not known here
            return (
                f"No document is indexed: {holds} (the files read end in {extensions}); `mcp-docs index` looks "
                "through the whole folder."
            )
        return f"The folder {self.settings.root} holds no Markdown files (the files read end in {extensions})."

    # -- search: the pipeline is search/pipeline.py; the library is the sources it reads (search.sources) -------
    @property
    def languages(self) -> frozenset[str]:
        """The languages of the collection's documents (the configured one when it is empty)."""
        return self._languages

    def index_info(self) -> IndexInfo:
        return results.index_info(self.catalog, self.vectors)

    def keyword_sections(
        self, query: str, limit: int, folder: str | None = None, tags: Iterable[str] = ()
    ) -> list[tuple[RankedSection, float]]:
        return [(hit.section, hit.score) for hit in self.keyword_hits(query, limit, folder, tags)]

    def keyword_hits(
        self, query: str, limit: int, folder: str | None = None, tags: Iterable[str] = ()
    ) -> Sequence[KeywordHit]:
        if self.store.written_elsewhere and time.monotonic() - self._languages_at > READER_REFRESH_SECONDS:
            self._refresh_stats([], [])  # the writer may have indexed documents of another language meanwhile
        return self.store.keyword_hits(query, limit, folder or None, list(tags), self._languages)

    def document_bonus(self, query: str, by_key: bool = False, fused: bool = False) -> Bonus | None:
        """Document-level evidence for the best documents of `query` (search/document_signals.py), from the store:
        their ids (or, `by_key`, their keyword hits' keys as text) → the share of the best score each one gains;
        None where the store keeps none. `fused`: the scores are hybrid's (document_signals.coverage_weight)."""
        return self.store.document_bonus(query, self._languages, by_key, fused)

    def search(
        self,
        query: str,
        max_results: int = 5,
        mode: SearchMode = "hybrid",
        folder: str | None = None,
        tags: Iterable[str] | None = None,
    ) -> SearchResult:
        return pipeline.search(self, search_request(query, max_results, mode, folder, tags, self.jail.relative_folder))

    # -- documents (the tools read them through these: a store without the root on disk serves them itself) ------
    def resolve_id(self, doc_id: str) -> Path:
        """The file or folder an id names inside the root (see Jail.resolve_id), or FileNotFoundError."""
        return self.store.files.resolve_id(doc_id)

    def is_folder(self, path: Path) -> bool:
        return self.store.files.is_folder(path)

    def folder_exists(self, folder: str) -> bool:
        return self.store.files.folder_exists(folder)

    def has_document(self, doc_id: str) -> bool:
        return self.store.files.has_document(doc_id)

    def read_bytes(self, doc_id: str, path: Path) -> bytes:
        """The document's bytes as they are now (raises what loader.read_markdown raises)."""
        return self.store.files.read_bytes(doc_id, path)

    def wait_idle(self, timeout: float = 10.0) -> None:
        """Block until no sync is running (tests and benchmarks use it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._sync_lock.acquire(timeout=0.05):
                self._sync_lock.release()
                return
