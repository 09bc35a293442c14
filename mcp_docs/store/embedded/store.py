"""The embedded store: one index folder with its SQLite catalog, Tantivy full-text index and sqlite-vec vectors,
opened (creating or repairing them) together; a reading worker (`read_only`) opens them as another process wrote
them and changes nothing there. It implements `store.api.Store` for `library.Library`."""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ...embedders import model_name
from ...errors import IndexBusy, IndexCannotOpen, IndexUnwritable
from ...loader import read_markdown
from ...paths import Jail
from ...render import plural
from ...scan import Scanner
from ...settings import Settings
from ..api import CommitListener
from . import ownership, sync_state
from .catalog import Catalog
from .catalog_schema import SCHEMA_VERSION
from .fulltext import FullTextIndex, KeywordHit, doc_key
from .read_only_media import writable
from .sync import Progress, Synchronizer, SyncReport, recover_interrupted_batch

if TYPE_CHECKING:
    from ...index.embedding_worker import EmbeddingWorker
    from ...search.ranking import Bonus
    from .vector_store import VectorStore

log = logging.getLogger(__name__)

_GENERATION = re.compile(r"[0-9a-f]{32}")
# SQLite's primary result codes for a file this process may not write: PERM, FULL, READONLY, CANTOPEN.
_CANNOT_WRITE = frozenset({3, 13, 8, 14})


def check_can_open(settings: Settings, read_only: bool) -> None:
    """Said before anything is opened: SQLite's "unable to open database file" read as damage ("rebuilding")."""
    if not read_only and settings.index_dir.is_dir() and not writable(settings.index_dir):
        raise IndexUnwritable(
            f"the index folder {settings.index_dir} cannot be written (a read-only file system, or another user's "
            "folder): indexing and serving keep it up to date there; search, read and status answer from it as it is."
        )


def refuse_open_error(settings: Settings, exc: BaseException) -> None:
    """One sentence for an index folder that cannot be opened; other errors go through."""
    if isinstance(exc, (OSError, sqlite3.Error)):
        raise IndexCannotOpen(f"cannot open the index in {settings.index_dir}: {exc}") from exc


class DiskFiles:
    """Documents read from the root on disk, through the jail (the embedded store's server has the root)."""

    def __init__(self, jail: Jail, max_file_bytes: int) -> None:
        self.jail = jail
        self.max_file_bytes = max_file_bytes

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
        return read_markdown(self.jail, path, self.max_file_bytes)


class EmbeddedStore:
    catalog: Catalog
    vectors: VectorStore | None
    embedding: EmbeddingWorker | None

    def __init__(self, settings: Settings, jail: Jail, scanner: Scanner, read_only: bool = False) -> None:
        """`read_only`: a reading HTTP worker's view of the index another process writes (see workers.py):
        nothing in the index folder is created, repaired or changed, and `sync` refuses."""
        self.settings = settings
        self.jail = jail
        self.scanner = scanner
        self.read_only = read_only
        self.files = DiskFiles(jail, settings.max_file_bytes)
        self._listeners: list[CommitListener] = []
        self._embedding = False  # start_embedding() was called: a reopened vector store starts its worker too
        self._last_choice = ""  # the last sentence logged about the model (follow_languages)
        # This process's hold on the index folder's writer lock (ownership.WriterLock), None while it holds none.
        self._writer_hold: ownership.WriterLock | None = None
        # Opened to write, but another process was writing: read as it is, until a sync can take the lock.
        self._waiting_to_write = False
        self._open()

    @property
    def written_elsewhere(self) -> bool:
        """The writing process's commits reach this reader (a reading worker, or one waiting to write)."""
        return self.read_only

    # -- lifecycle ---------------------------------------------------------------------
    def _open(self) -> None:
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
        self.read_only, self._waiting_to_write = False, False
        if sync_state.last_error(settings.index_dir) is not None:  # a previous writer's: this one has not synced
            sync_state.publish(settings.index_dir, None)
        self.catalog = Catalog.open(settings.index_dir / "catalog.sqlite")
        self._check_compatibility()
        self.fulltext = FullTextIndex(settings.index_dir / "fulltext", settings.language)
        self._check_generation()
        # a kill between the two commits
        recover_interrupted_batch(self.catalog, self.fulltext, self.settings.extensions)
        self._check_fulltext_matches()
        self.synchronizer = Synchronizer(settings, self.jail, self.scanner, self.catalog, self.fulltext)
        self.synchronizer.listeners.append(self._committed)
        self.vectors = None
        self.embedding = None
        if settings.embeddings != "none":
            self._open_vectors()

    def _committed(self, changed: list[str], deleted: list[str]) -> None:
        for listener in self._listeners:
            listener(changed, deleted)

    def add_commit_listener(self, listener: CommitListener) -> None:
        self._listeners.append(listener)

    def _open_vectors(self, model: str | None = None) -> None:
        """`model`: the local model decided for this index (follow_languages); by default the one its vectors have."""
        # Opening the store is cheap: the model loads on the first embedding (worker or query).
        from ...index.embedding_worker import EmbeddingWorker
        from .vector_store import VectorStore

        store = VectorStore.open(self.settings, self.catalog, model=model)
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
        from ...index.model_choice import LanguageMix, choose

        mix = LanguageMix.of(self.catalog.language_counts(), self.catalog.language_tokens())
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
            stored = self.catalog.get_meta(key)
            if stored != expected:
                raise OSError(f"the index has {key} {stored!r}, not {expected!r}")

    def _close_reading(self) -> None:
        for part in ("vectors", "catalog"):
            opened = getattr(self, part, None)
            if opened is not None:
                opened.close()

    def _take_over_writing(self) -> bool:
        """A store that waited (`_waiting_to_write`): once the other writer is gone, take the lock and reopen the
        index to write (the checks and repairs run now, holding the lock). False while the other still writes."""
        self._writer_hold = ownership.WriterLock.take(self.settings.index_dir)
        if self._writer_hold is None:
            return False
        self._close_vectors()
        self.catalog.close()
        self.read_only = False
        self._open()
        self._committed([], [])  # the library's counts now describe the index as this writer found it
        if self._embedding:
            self.start_embedding()
        return True

    def _open_for_reading(self) -> None:
        settings = self.settings
        if not ownership.is_owned(settings.index_dir):
            raise OSError("no index there yet (the writing worker creates it)")
        self.catalog = Catalog(settings.index_dir / "catalog.sqlite", read_only=True)
        self.fulltext = FullTextIndex(settings.index_dir / "fulltext", settings.language, read_only=True)
        self.vectors = None
        self.embedding = None  # the writing worker embeds; a reader only queries the vectors it wrote
        if settings.embeddings != "none":
            from .vector_store import VectorStore

            self.vectors = VectorStore.open(settings, self.catalog, read_only=True)

    def _check_compatibility(self) -> None:
        """Rebuild from scratch when the catalog schema, the root or the root language changed."""
        expected = {
            "schema_version": str(SCHEMA_VERSION),
            "root": str(self.settings.root),
            "language": self.settings.language,
        }
        stored = {k: self.catalog.get_meta(k) for k in expected}
        if stored == expected:
            return
        if any(v is not None for v in stored.values()):
            log.info("index settings changed (%s): rebuilding", {k: v for k, v in stored.items() if v != expected[k]})
            self.catalog.clear()
            fulltext_dir = self.settings.index_dir / "fulltext"
            if fulltext_dir.exists():
                ownership.remove(fulltext_dir)
        for key, value in expected.items():
            self.catalog.set_meta(key, value)

    def _check_generation(self) -> None:
        """If the full-text folder was recreated (schema change, corruption), the catalog must forget too."""
        marker = self.fulltext.path / "generation"
        generation = marker.read_text(errors="replace").strip() if marker.exists() else ""
        if not _GENERATION.fullmatch(generation):  # missing or damaged: a new generation, so a full rebuild
            generation = uuid.uuid4().hex
            marker.write_text(generation)
        if self.catalog.get_meta("fulltext_generation") != generation:
            self.catalog.clear()
            self.catalog.set_meta("fulltext_generation", generation)

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
            self.catalog.clear()

    def storage_lost(self) -> bool:
        """The index folder (or its marker) vanished under us, for example deleted by hand while serving, or was
        recreated since (its writer lock is another file than the one this store holds)."""
        if not ownership.is_owned(self.settings.index_dir):
            return True
        return self._writer_hold is not None and not self._writer_hold.is_current()

    def location(self) -> str:
        return str(self.settings.index_dir)

    def health_problem(self) -> str | None:
        if self.storage_lost():  # deleted under us: the watcher's next sync recreates it
            return "the index folder is missing; it is being rebuilt"
        return None

    def _reopen(self) -> None:
        log.warning("the index folder %s was deleted or emptied: recreating it and reindexing", self.settings.index_dir)
        self._close_vectors()
        self.catalog.close()
        self._release_writer()  # it was the deleted folder's lock: the new folder's is taken before recreating
        self._open()
        self._committed([], [])  # the library's counts now describe an empty index
        if self._embedding:
            self.start_embedding()

    def close(self) -> None:
        self._close_vectors()
        self.catalog.close()
        self._release_writer()

    def _release_writer(self) -> None:
        hold, self._writer_hold = self._writer_hold, None
        if hold is not None:
            hold.release()

    def published_sync_error(self, own: str | None) -> str | None:
        """Read beside its writer (a reading worker, or waiting to write: every read-only store here), the writer's,
        which it publishes in the index folder (sync_state.py); this process's own otherwise."""
        if self.read_only:
            return sync_state.last_error(self.settings.index_dir)
        return own

    def publish_sync_error(self, error: str | None) -> None:
        if self._writer_hold is not None:  # the writer: readers in other processes see it too
            sync_state.publish(self.settings.index_dir, error)

    def _close_vectors(self) -> None:
        if self.embedding is not None:
            self.embedding.stop()  # before the store: the thread writes to it
        if self.vectors is not None:
            self.vectors.close()

    def start_embedding(self) -> None:
        self._embedding = True
        if self.embedding is not None:
            self.embedding.start()

    def embed(self, progress: Progress | None = None) -> int:
        return self.embedding.build(progress) if self.embedding is not None else 0

    # -- sync --------------------------------------------------------------------------------
    def sync(self, paths: Iterable[str] | None = None, progress: Progress | None = None) -> SyncReport:
        if self.read_only and not self._waiting_to_write:
            raise IndexBusy("this worker only reads the index; the writing worker keeps it up to date")
        if self.read_only and not self._take_over_writing():
            raise IndexBusy(self._busy_sentence())
        if self.storage_lost():
            self._reopen()
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

    # -- search ------------------------------------------------------------------------------
    def keyword_hits(
        self, query: str, limit: int, folder: str | None, tags: Sequence[str], languages: frozenset[str]
    ) -> list[KeywordHit]:
        if self.read_only and self.catalog.committed_elsewhere():
            # Without this, a reader answered "nothing found" for up to a second after the writer's commit
            # while its catalog (and /health) already counted the new documents.
            self.fulltext.reload()
        q = self.fulltext.build_query(query, languages, folder or None, list(tags))
        if q is None:
            return []
        return self.fulltext.search_hits(q, limit)

    def document_bonus(
        self, query: str, languages: frozenset[str], by_key: bool = False, fused: bool = False
    ) -> Bonus | None:
        """Document-level evidence for the best documents of `query` (search/document_signals.py): their ids
        (or, `by_key`, their full-text keys as text) → the share of the best score each one gains. It reads
        the catalog rows of those documents only, and analyses the query once, on first use. `fused`: the scores
        are hybrid's (document_signals.coverage_weight)."""
        fulltext, catalog = self.fulltext, self.catalog

        def bonus(ids: Sequence[str]) -> dict[str, float]:
            keys = {(int(i) if by_key else doc_key(i)): i for i in ids}
            found = catalog.document_terms(keys)
            if not found:
                return {}
            signals = fulltext.query_signals(query, languages)
            return {keys[k]: signals.bonus(terms, fused) for k, terms in found.items()}

        return bonus


def open_embedded(settings: Settings, jail: Jail, scanner: Scanner, read_only: bool) -> EmbeddedStore:
    return EmbeddedStore(settings, jail, scanner, read_only)
