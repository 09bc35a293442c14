"""The library: one documents root with its index (catalog, full-text and optional vectors), opened together.

This is the narrow storage interface the tools and the CLI use: sync, search,
and catalog reads. Everything here is synchronous and thread-safe for readers;
one sync runs at a time.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from .embedders import model_name
from .errors import IndexBusy, IndexCannotOpen, IndexUnwritable
from .index import ownership, sync_state
from .index.catalog import SCHEMA_VERSION, Catalog
from .index.fulltext import FullTextIndex, KeywordHit, doc_key
from .index.hits import RankedSection
from .index.read_only_media import writable
from .index.sync import Progress, Synchronizer, SyncReport, recover_interrupted_batch
from .language import describe_languages
from .loader import read_markdown
from .models import IndexInfo, SearchMode, SearchResult
from .paths import Jail
from .render import plural
from .rerank import make_reranker
from .scan import Scanner, load_rules
from .search import pipeline, results
from .search.ranking import Bonus
from .search.request import search_request
from .settings import Settings

if TYPE_CHECKING:
    from .index.embedding_worker import EmbeddingWorker
    from .index.store_api import CatalogReader, VectorSearch

log = logging.getLogger(__name__)

READER_REFRESH_SECONDS = 5.0  # how often a reading worker looks for languages the writer added
_GENERATION = re.compile(r"[0-9a-f]{32}")
# SQLite's primary result codes for a file this process may not write: PERM, FULL, READONLY, CANTOPEN.
_CANNOT_WRITE = frozenset({3, 13, 8, 14})


def open_library(settings: Settings, read_only: bool = False) -> Library:
    """The library of `settings`, or one sentence saying why its index cannot be opened."""
    if not read_only and settings.index_dir.is_dir() and not writable(settings.index_dir):
        # Said before anything is opened: SQLite's "unable to open database file" read as damage ("rebuilding").
        raise IndexUnwritable(
            f"the index folder {settings.index_dir} cannot be written (a read-only file system, or another user's "
            "folder): indexing and serving keep it up to date there; search, read and status answer from it as it is."
        )
    try:
        return Library(settings, read_only)
    except (OSError, sqlite3.Error) as exc:
        raise IndexCannotOpen(f"cannot open the index in {settings.index_dir}: {exc}") from exc


class Library:
    # What the tools, commands and fusion use, from either store (index.store_api); the embedded store keeps its
    # own SQLite catalog as `sqlite_catalog` too, for what only it does (schema checks, rebuilds, the sync).
    catalog: CatalogReader
    vectors: VectorSearch | None

    def __init__(self, settings: Settings, read_only: bool = False) -> None:
        """`read_only`: a reading HTTP worker's view of the index another process writes (see workers.py):
        nothing in the index folder is created, repaired or changed, and `sync` refuses."""
        self.settings = settings
        self.read_only = read_only
        self.jail = Jail(settings.root, load_rules(settings.root, settings.extensions))
        self.scanner = Scanner(self.jail)
        self._sync_lock = threading.Lock()
        self._embedding = False  # start_embedding() was called: a reopened vector store starts its worker too
        # This process's hold on the index folder's writer lock (index/ownership.py), None while it holds none.
        self._writer_hold: ownership.WriterLock | None = None
        self._sync_error: str | None = None  # see `sync_error`
        self._reads_writers_state = False  # an embedded index read beside its writer: sync_error is the writer's
        self._last_choice = ""  # the last sentence logged about the model (follow_languages)
        # Opened to write, but another process was writing: read as it is, until a sync can take the lock.
        self._waiting_to_write = False
        self._open_storage()
        self.reranker = make_reranker(settings)

    # -- lifecycle ---------------------------------------------------------------------
    def _open_storage(self) -> None:
        """Open (creating or repairing) the catalog, full-text and vector stores of the index folder."""
        settings = self.settings
        if self.read_only:
            self._open_for_reading()
            return
        ownership.claim(settings.index_dir)  # before anything is written or deleted there
        if self._writer_hold is None:
            self._writer_hold = ownership.WriterLock.take(settings.index_dir)
        if self._writer_hold is None:  # another process writes: no repair, no rebuild, nothing changed here
            self._read_while_another_writes()
            return
        self.read_only, self._waiting_to_write, self._reads_writers_state = False, False, False
        if sync_state.last_error(settings.index_dir) is not None:  # a previous writer's: this one has not synced
            sync_state.publish(settings.index_dir, None)
        self.sqlite_catalog = Catalog.open(settings.index_dir / "catalog.sqlite")
        self.catalog = self.sqlite_catalog
        self._check_compatibility()
        self.fulltext = FullTextIndex(settings.index_dir / "fulltext", settings.language)
        self._check_generation()
        # a kill between the two commits
        recover_interrupted_batch(self.sqlite_catalog, self.fulltext, self.settings.extensions)
        self._check_fulltext_matches()
        self.synchronizer = Synchronizer(settings, self.jail, self.scanner, self.sqlite_catalog, self.fulltext)
        self._refresh_stats([], [])
        self.synchronizer.listeners.append(self._refresh_stats)
        self.vectors = None
        self.embedding: EmbeddingWorker | None = None
        if settings.embeddings != "none":
            self._open_vectors()

    def _open_vectors(self, model: str | None = None) -> None:
        """`model`: the local model decided for this index (follow_languages); by default the one its vectors have."""
        # Opening the store is cheap: the model loads on the first embedding (worker or query).
        from .index.embedding_worker import EmbeddingWorker
        from .index.vector_store import VectorStore

        store = VectorStore.open(self.settings, self.sqlite_catalog, model=model)
        self.vectors = store
        self.embedding = EmbeddingWorker(store, self.jail, self.settings)
        self.synchronizer.listeners.append(self.embedding.on_sync)

    def follow_languages(self) -> None:
        """After a sync: the model is decided once per index from the collection's language mix, and changed only
        when that mix clearly changed (index/model_choice.py); the decision and any refusal to change are logged.
        A new model's vectors replace the old ones (a store holds one model's), so everything is embedded again,
        in the background; keyword search answers meanwhile and `status` shows the progress."""
        vectors, worker = self.vectors, self.embedding
        if vectors is None or worker is None or vectors.embedder is None:
            return
        from .index.model_choice import LanguageMix, choose

        mix = LanguageMix.of(self.language_counts, self.sqlite_catalog.language_tokens())
        current = model_name(vectors.embedder.model_id)
        store = worker.store  # the embedded store's own: the decision is kept with its vectors
        choice = choose(self.settings, mix, current, store.chosen_for(), vectors.embedded_chunks() > 0)
        if choice.why and choice.why != self._last_choice:
            log.info("%s", choice.why)  # once per reason, not after every sync of the watcher
            self._last_choice = choice.why
        if choice.model is None or choice.model == current:
            if choice.record:
                store.set_chosen_for(mix)
            return
        chunks = vectors.status()["chunks"]
        if chunks:
            log.info("its %s will be embedded again", plural(chunks, "chunk"))
        worker.stop()  # before the new store empties the old vectors: the thread writes them
        self.synchronizer.listeners.remove(worker.on_sync)
        self._open_vectors(choice.model)  # searches running meanwhile finish on the old store, closed next
        vectors.close()
        assert self.embedding is not None
        self.embedding.store.set_chosen_for(mix)
        if self._embedding:
            self.start_embedding()

    def _busy_sentence(self) -> str:
        return (
            f"the index in {self.settings.index_dir} is being written by another mcp-docs process (an `index`, or "
            "a `serve` that keeps it up to date): try again once it has finished, or stop it"
        )

    def _read_while_another_writes(self) -> None:
        """Open the index as it is, read-only, when another process holds the writer lock; when it cannot be read
        as it is (none yet, another schema, root or language), refuse with IndexBusy and change nothing."""
        import apsw  # the vector store's SQLite binding: its errors are the vectors' "cannot read as it is"

        try:
            self._open_for_reading()
            self._check_readable()
        except (OSError, ValueError, sqlite3.Error, apsw.Error) as exc:
            self._close_reading()
            raise IndexBusy(self._busy_sentence()) from exc
        self.read_only, self._waiting_to_write = True, True
        log.info("%s; answering from it as it is meanwhile", self._busy_sentence())

    def _check_readable(self) -> None:
        """What `_check_compatibility` would rebuild for, refused instead: a reader never rebuilds."""
        for key, expected in (
            ("schema_version", str(SCHEMA_VERSION)),
            ("root", str(self.settings.root)),
            ("language", self.settings.language),
        ):
            stored = self.sqlite_catalog.get_meta(key)
            if stored != expected:
                raise OSError(f"the index has {key} {stored!r}, not {expected!r}")

    def _close_reading(self) -> None:
        for part in ("vectors", "catalog"):
            opened = getattr(self, part, None)
            if opened is not None:
                opened.close()

    def _take_over_writing(self) -> bool:
        """A library that waited (`_waiting_to_write`): once the other writer is gone, take the lock and reopen the
        index to write (the checks and repairs run now, holding the lock). False while the other still writes."""
        self._writer_hold = ownership.WriterLock.take(self.settings.index_dir)
        if self._writer_hold is None:
            return False
        self._close_vectors()
        self.catalog.close()
        self.read_only = False
        self._open_storage()
        if self._embedding:
            self.start_embedding()
        return True

    def _open_for_reading(self) -> None:
        settings = self.settings
        if not ownership.is_owned(settings.index_dir):
            raise OSError("no index there yet (the writing worker creates it)")
        self.sqlite_catalog = Catalog(settings.index_dir / "catalog.sqlite", read_only=True)
        self.catalog = self.sqlite_catalog
        self._reads_writers_state = True
        self.fulltext = FullTextIndex(settings.index_dir / "fulltext", settings.language, read_only=True)
        self._refresh_stats([], [])
        self.vectors = None
        self.embedding = None  # the writing worker embeds; a reader only queries the vectors it wrote
        if settings.embeddings != "none":
            from .index.vector_store import VectorStore

            self.vectors = VectorStore.open(settings, self.sqlite_catalog, read_only=True)

    def _check_compatibility(self) -> None:
        """Rebuild from scratch when the catalog schema, the root or the root language changed."""
        expected = {
            "schema_version": str(SCHEMA_VERSION),
            "root": str(self.settings.root),
            "language": self.settings.language,
        }
        stored = {k: self.sqlite_catalog.get_meta(k) for k in expected}
        if stored == expected:
            return
        if any(v is not None for v in stored.values()):
            log.info("index settings changed (%s): rebuilding", {k: v for k, v in stored.items() if v != expected[k]})
            self.sqlite_catalog.clear()
            fulltext_dir = self.settings.index_dir / "fulltext"
            if fulltext_dir.exists():
                ownership.remove(fulltext_dir)
        for key, value in expected.items():
            self.sqlite_catalog.set_meta(key, value)

    def _check_generation(self) -> None:
        """If the full-text folder was recreated (schema change, corruption), the catalog must forget too."""
        marker = self.fulltext.path / "generation"
        generation = marker.read_text(errors="replace").strip() if marker.exists() else ""
        if not _GENERATION.fullmatch(generation):  # missing or damaged: a new generation, so a full rebuild
            generation = uuid.uuid4().hex
            marker.write_text(generation)
        if self.sqlite_catalog.get_meta("fulltext_generation") != generation:
            self.sqlite_catalog.clear()
            self.sqlite_catalog.set_meta("fulltext_generation", generation)

    def _check_fulltext_matches(self) -> None:
        """Tantivy silently starts an empty index when its meta.json is lost: if the full-text index holds
        far fewer sections than the catalog lists, the catalog forgets everything and the next sync re-adds it.
        (A crash leaves at most one batch of difference, which the next sync repairs by itself; should that
        batch exceed half the index, this rebuild is only slower than needed, never wrong.)"""
        catalogued = self.catalog.section_total()
        if catalogued and self.fulltext.num_sections() < catalogued // 2:
            log.warning(
                "the full-text index holds %d sections but the catalog lists %d: rebuilding the index",
                self.fulltext.num_sections(),
                catalogued,
            )
            self.sqlite_catalog.clear()

    def storage_lost(self) -> bool:
        """The index folder (or its marker) vanished under us, for example deleted by hand while serving, or was
        recreated since (its writer lock is another file than the one this library holds)."""
        if not ownership.is_owned(self.settings.index_dir):
            return True
        return self._writer_hold is not None and not self._writer_hold.is_current()

    def location(self) -> str:
        """Where the index lives, as a person reads it."""
        return str(self.settings.index_dir)

    def health_problem(self) -> str | None:
        """Why the index cannot answer right now (for /health), or None."""
        if self.storage_lost():  # deleted under us: the watcher's next sync recreates it
            return "the index folder is missing; it is being rebuilt"
        return None

    def _reopen_storage(self) -> None:
        log.warning("the index folder %s was deleted or emptied: recreating it and reindexing", self.settings.index_dir)
        self._close_vectors()
        self.catalog.close()
        self._release_writer()  # it was the deleted folder's lock: the new folder's is taken before recreating
        self._open_storage()
        if self._embedding:
            self.start_embedding()

    def close(self) -> None:
        self._close_vectors()
        if self.reranker is not None:
            self.reranker.close()
        self.catalog.close()
        self._release_writer()

    def _release_writer(self) -> None:
        hold, self._writer_hold = self._writer_hold, None
        if hold is not None:
            hold.release()

    def _close_vectors(self) -> None:
        if self.embedding is not None:
            self.embedding.stop()  # before the store: the thread writes to it
        if self.vectors is not None:
            self.vectors.close()

    def start_embedding(self) -> None:
        """Fill the vectors in a background thread (the server calls this); keyword search answers meanwhile."""
        self._embedding = True
        if self.embedding is not None:
            self.embedding.start()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sync --------------------------------------------------------------------------------
    def sync(self, paths: Iterable[str] | None = None, progress: Progress | None = None) -> SyncReport:
        if self.read_only and not self._waiting_to_write:
            raise IndexBusy("this worker only reads the index; the writing worker keeps it up to date")
        with self._sync_lock, self.recording_sync_errors():
            if self.read_only and not self._take_over_writing():
                raise IndexBusy(self._busy_sentence())
            if self.storage_lost():
                self._reopen_storage()
                if self.read_only:  # another process took the new folder's lock first: it rebuilds, not us
                    raise IndexBusy(self._busy_sentence())
                paths = None  # everything must be indexed again
            try:
                report = self.synchronizer.run(paths, progress)
            except sqlite3.OperationalError as exc:
                if getattr(exc, "sqlite_errorcode", 0) & 0xFF not in _CANNOT_WRITE:
                    raise
                raise IndexUnwritable(
                    f"cannot write the index in {self.settings.index_dir} ({exc}): check that this user may "
                    "write that folder and its files, or choose another --index-dir"
                ) from exc
            self.follow_languages()
            return report

    @property
    def sync_error(self) -> str | None:
        """Why the last sync failed as a whole (None once one succeeds): /health says "degraded" meanwhile, since
        searches still answer from what was committed before, but changes on disk are not reaching the index.
        A library that reads the index another process writes (a reading worker) reports that writer's, which
        it publishes in the index folder (index/sync_state.py)."""
        if self.read_only and self._reads_writers_state:
            return sync_state.last_error(self.settings.index_dir)
        return self._sync_error

    @sync_error.setter
    def sync_error(self, error: str | None) -> None:
        changed, self._sync_error = error != self._sync_error, error
        if changed and self._writer_hold is not None:  # the embedded store's writer: readers see it too
            sync_state.publish(self.settings.index_dir, error)

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
            return f"No document is indexed: all {plural(skipped, 'Markdown file')} were skipped (`mcp-docs status` says why)."
        extensions = ", ".join(self.settings.extensions)
        return f"The folder {self.settings.root} holds no Markdown files (the files read end in {extensions})."

    # -- search: the pipeline is search/pipeline.py; the library is the sources it reads (search.sources) -------
    @property
    def languages(self) -> frozenset[str]:
        """The languages of the collection's documents (the configured one when it is empty)."""
        return self._languages

    def index_info(self) -> IndexInfo:
        return results.index_info(self.catalog, self.vectors)

    def search(
        self,
        query: str,
        max_results: int = 5,
        mode: SearchMode = "hybrid",
        folder: str | None = None,
        tags: Iterable[str] | None = None,
    ) -> SearchResult:
        return pipeline.search(self, search_request(query, max_results, mode, folder, tags, self.jail.relative_folder))

    def keyword_sections(
        self, query: str, limit: int, folder: str | None = None, tags: Iterable[str] = ()
    ) -> list[tuple[RankedSection, float]]:
        return [(hit.section, hit.score) for hit in self.keyword_hits(query, limit, folder, tags)]

    def keyword_hits(
        self, query: str, limit: int, folder: str | None = None, tags: Iterable[str] = ()
    ) -> list[KeywordHit]:
        if self.read_only:
            if self.sqlite_catalog.committed_elsewhere():
                # Without this, a reader answered "nothing found" for up to a second after the writer's commit
                # while its catalog (and /health) already counted the new documents.
                self.fulltext.reload()
            if time.monotonic() - self._languages_at > READER_REFRESH_SECONDS:
                self._refresh_stats([], [])  # the writer may have indexed documents of another language meanwhile
        q = self.fulltext.build_query(query, self._languages, folder or None, list(tags))
        if q is None:
            return []
        return self.fulltext.search_hits(q, limit)

    def document_bonus(self, query: str, by_key: bool = False, fused: bool = False) -> Bonus | None:
        """Document-level evidence for the best documents of `query` (search/document_signals.py): their ids
        (or, `by_key`, their full-text keys as text) → the share of the best score each one gains. It reads
        the catalog rows of those documents only, and analyses the query once, on first use. `fused`: the
        scores are hybrid's (document_signals.coverage_weight)."""
        fulltext, catalog, languages = self.fulltext, self.sqlite_catalog, self._languages

        def bonus(ids: Sequence[str]) -> dict[str, float]:
            keys = {(int(i) if by_key else doc_key(i)): i for i in ids}
            found = catalog.document_terms(keys)
            if not found:
                return {}
            signals = fulltext.query_signals(query, languages)
            return {keys[k]: signals.bonus(terms, fused) for k, terms in found.items()}

        return bonus

    # -- documents (the tools read them through these, so another store may serve them) ---------------------
    def resolve_id(self, doc_id: str) -> Path:
        """The file or folder an id names inside the root (see Jail.resolve_id), or FileNotFoundError."""
        return self.jail.resolve_id(doc_id)

    def is_folder(self, path: Path) -> bool:
        return path.is_dir()

    def folder_exists(self, folder: str) -> bool:
        jail = self.jail
        try:
            return os.path.isdir(jail.check_servable(jail.root / folder, folder=True))
        except (OSError, ValueError):  # outside, excluded (told apart from missing in no way), or unreadable
            return False

    def has_document(self, doc_id: str) -> bool:
        try:
            return os.path.isfile(os.path.join(self.jail.root, doc_id))  # per result: no Path objects
        except (OSError, ValueError):
            return False

    def read_bytes(self, doc_id: str, path: Path) -> bytes:
        """The document's bytes as they are now (raises what loader.read_markdown raises)."""
        return read_markdown(self.jail, path, self.settings.max_file_bytes)

    def wait_idle(self, timeout: float = 10.0) -> None:
        """Block until no sync is running (tests and benchmarks use it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._sync_lock.acquire(timeout=0.05):
                self._sync_lock.release()
                return
