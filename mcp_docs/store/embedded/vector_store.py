"""The vector store: chunks of sections and their vectors in one sqlite-vec file (through apsw), and search over them.

Why apsw: the default Python on many machines (pyenv builds, some distributions)
has a `sqlite3` module that cannot load extensions; apsw ships its own SQLite with
extension loading on Linux, macOS and Windows wheels.

Layout of `vectors.sqlite` (next to the catalog, in the index folder):
- `meta`: the embedding model id and dimension the vectors were made with. A different
  model id empties the store: vectors of two models are never mixed.
- `docs` / `sections` / `doc_tags`: what each chunked document looked like when it was
  chunked (its content hash, title, folder, tags, section headings and line ranges). Not a
  second catalog: the catalog describes the file as last indexed, these the text the vectors
  were made from, which lags behind while the worker catches up; a vector hit must show the
  lines its chunk came from, and the folder and tag filters must apply inside the KNN query.
- `chunks`: one row per chunk (text embedded = title and heading path + a piece of the
  section), its content hash and whether it is embedded yet (1, 0, or FAILED).
- `vec`: the sqlite-vec `vec0` table, one float32 vector per embedded chunk.
- `doc_chunks` / `doc_vec`: one unit per document (title, description and lead, chunking.document_chunk) and its
  vector. Every document's is embedded before any section's, so semantic search covers the whole collection in a
  tenth of the time; a document's vector stands in for its sections in search only while they wait for theirs.

Freshness: the store keeps the set of documents whose chunks are stale (`dirty`). The synchronizer's
`on_sync` marks changed documents and drops deleted ones at once; `refresh()` compares the catalog's
content hashes with `docs.hash` and marks the difference, so whatever happened (crash, kill, another
process) the next run redoes it. Filling the store is the embedding worker's job (`index/embedding_worker.py`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar, cast

import apsw
import numpy as np
import sqlite_vec

from ...embedders import Embedder, EmbedderError, local_model, make_embedder, model_name
from ...index.language_mix import CentroidCache
from ...settings import Settings
from ..api import PendingChunk as PendingChunk
from ..api import coverage, coverage_note, unavailable_reason
from . import integrity, ownership
from .catalog import SQLITE_SUFFIXES, Catalog
from .catalog_schema import SCHEMA_VERSION
from .read_only_media import sqlite_reading_uri
from .sqlite_tx import immediate_transaction
from .vector_matrices import ChunkVectors, DocumentVectors
from .vector_schema import VECTOR_SCHEMA
from .vector_search import EXACT_FILTER_MAX as EXACT_FILTER_MAX  # re-exported: tests and the PostgreSQL store
from .vector_search import MAX_K as MAX_K
from .vector_search import QUERY_CACHE_SIZE as QUERY_CACHE_SIZE
from .vector_search import READER_REFRESH_SECONDS, VectorQueries
from .vector_search import DocFilter as DocFilter
from .vector_writes import FAILED as FAILED  # re-exported: the worker and the tests name them here
from .vector_writes import VectorWrites

log = logging.getLogger(__name__)
T = TypeVar("T")

VECTORS_SCHEMA_VERSION = "1"
# Bump when chunking changes; the catalog schema is part of it (a parser change shows there).
CHUNKER_VERSION = f"2/{SCHEMA_VERSION}"  # 2: a document-level unit per document (doc_chunks)


def _count(conn: apsw.Connection, sql: str, params: Sequence[str] = ()) -> int:
    """The number a `select count(*)` returns (apsw types every column as any SQLite value)."""
    row = conn.execute(sql, params).fetchone()
    return int(row[0]) if row is not None else 0


def stored_model(path: Path) -> str | None:
    """The model id the vectors in `path` were made with; None without a readable store."""
    if not path.exists():
        return None
    try:
        conn = apsw.Connection(sqlite_reading_uri(path), flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        try:
            row = conn.execute("select value from meta where key = 'model_id'").fetchone()
        finally:
            conn.close()
    except (apsw.Error, UnicodeDecodeError):
        return None  # no meta table yet, or damage the store repairs when it opens
    return str(row[0]) if row else None


def choose_embedder(
    settings: Settings, language_counts: dict[str, int] | None, current_id: str | None, model: str | None = None
) -> tuple[Embedder | None, str | None]:
    """The embedder for these settings: `model` when given (the local model decided for the index,
    index/model_choice.py), else the one the vectors have (`current_id`), else the one the collection's languages
    call for (embedders.local_model); or None and why."""
    model = model or local_model(settings, language_counts, current_id)
    try:
        return make_embedder(replace(settings, embeddings_model=model) if model else settings), None
    except EmbedderError as exc:
        log.warning("embeddings unavailable: %s", exc)
        return None, str(exc)


class VectorStore(VectorWrites, VectorQueries):
    def __init__(
        self,
        path: Path,
        catalog: Catalog,
        embedder: Embedder | None,
        error: str | None = None,
        read_only: bool = False,
    ) -> None:
        self.path = path
        # A reading HTTP worker: opens what the writing worker made, never writes (SQLite refuses it), never embeds.
        self.read_only = read_only
        self._refreshed_at = 0.0
        self.catalog = catalog
        self.embedder = embedder
        self.error = error
        self._local = threading.local()
        self._connections: list[apsw.Connection] = []
        self._write_lock = threading.RLock()
        self._state_lock = threading.Lock()
        self._dirty: set[str] = set()
        self._chunk_stats: tuple[int, int] | None = None  # (chunks, documents chunked), for pending()
        self._refreshed = False
        self._has_vectors = False
        self._closed = False
        self.busy = False  # set by the embedding worker while it runs, for status()
        self.settings: Settings | None = None  # a reader's, to follow the writer's model (follow_writer)
        self._query_cache: dict[str, np.ndarray] = {}
        self._centroids = CentroidCache(READER_REFRESH_SECONDS)  # each language's mean (language_centroids)
        # Bumped by every write of this process and whenever a connection sees another's commit (generation()):
        # what search keeps between searches (vector_search.DocumentVectors, the counts) is keyed by it.
        self._generation = 0
        self._by_generation: dict[str, tuple[int, Any]] = {}
        self._last_document_vectors: DocumentVectors | None = None  # the matrix again while the same units
        self._last_chunk_vectors: ChunkVectors | None = None  # its rows again for the chunks still there
        self.last_rate: float | None = None  # chunks/s of the last embedding run
        conn = self._conn()
        # A damaged page would otherwise surface later, as a raw error in the middle of a search.
        if read_only:  # damage is the writing worker's to find and repair; a reader writes nothing, not even a stamp
            dim = self._meta("dim")
            if embedder is not None and dim and embedder.dim is None:
                embedder.dim = int(dim)
            return
        integrity.check_if_changed(path, self._check)
        with self._write():
            conn.execute(VECTOR_SCHEMA)
        self._check_model()

    @classmethod
    def open(
        cls, settings: Settings, catalog: Catalog, read_only: bool = False, model: str | None = None
    ) -> VectorStore:
        """Never raises for embedder problems: the store then reports the reason and search falls back to keyword.

        With no model named, `model` (the library's decision, index/model_choice.py), else the model the stored
        vectors were made with: reopening an index never changes its model (the library decides that after a
        sync); a new store starts with the one the collection's languages suit (embedders.local_model)."""
        path = settings.index_dir / "vectors.sqlite"
        stored = stored_model(path)
        embedder, error = choose_embedder(
            settings, None if read_only or model_name(stored) else catalog.language_counts(), stored, model
        )
        if read_only:  # damage is the writing worker's to repair
            reader = cls(path, catalog, embedder, error, read_only=True)
            reader.settings = settings
            return reader
        try:
            return cls(path, catalog, embedder, error)
        except (apsw.Error, UnicodeDecodeError) as exc:  # a damaged file: vectors are a cache, rebuild them
            log.warning("vector store %s unreadable (%s): rebuilding it", path, exc)
            for suffix in SQLITE_SUFFIXES:
                ownership.remove(Path(f"{path}{suffix}"))
            return cls(path, catalog, embedder, error)

    def follow_writer(self) -> None:
        """A reader's embedder is the model the writer's vectors are made with, which changes when the collection's
        languages do (Library.follow_languages): query vectors of another model would match at random."""
        if not self.read_only or self.embedder is None:
            return
        stored = self._meta("model_id")
        if stored and stored != self.embedder.model_id and model_name(stored):
            embedder, _ = choose_embedder(self.settings, None, stored) if self.settings else (None, None)
            if embedder is not None:
                log.info("the writer now embeds with %s: queries follow", stored)
                self.embedder, self._query_cache, self._has_vectors = embedder, {}, False

    def _check(self) -> None:
        problems = [r[0] for r in self._conn().execute("pragma quick_check")]
        if problems != ["ok"]:
            raise apsw.CorruptError("; ".join(problems[:3]))

    # -- connections ---------------------------------------------------------------------
    def _conn(self) -> apsw.Connection:
        conn: apsw.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            if self.read_only:  # immutable on read-only media (store/embedded/read_only_media.py)
                conn = apsw.Connection(
                    sqlite_reading_uri(self.path), flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
                )
            else:
                conn = apsw.Connection(str(self.path), flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE)
            conn.enable_load_extension(True)
            conn.load_extension(sqlite_vec.loadable_path())
            conn.enable_load_extension(False)
            conn.set_busy_timeout(30000)
            if not self.read_only:
                conn.execute("pragma journal_mode=wal")
                conn.execute("pragma synchronous=normal")
            conn.execute("pragma mmap_size=268435456")
            self._local.conn = conn
            with self._state_lock:
                self._connections.append(conn)
        return conn

    @contextlib.contextmanager
    def _write(self) -> Iterator[apsw.Connection]:
        try:
            with immediate_transaction(self._write_lock, self._conn()) as conn:
                yield conn
        finally:
            # after the commit: a search on this thread's connection (whose data_version does not move for its
            # own writes) must not keep what it read before
            with self._state_lock:
                self._generation += 1

    def generation(self) -> int:
        """A number that changes whenever the vectors file may have changed: a write of this process (`_write`), a
        commit another connection made (another thread's or another process's: SQLite's data_version, per
        connection), or any row this thread's connection changed by another path (its total_changes). The first
        look of each thread counts as a change; a cache keyed by it is at worst rebuilt once too often."""
        conn = self._conn()
        row = conn.execute("pragma data_version").fetchone()
        seen = (int(row[0]) if row else 0, conn.total_changes())
        if getattr(self._local, "seen", None) != seen:
            self._local.seen = seen
            with self._state_lock:
                self._generation += 1
        return self._generation

    def _kept(self, name: str, compute: Callable[[], T]) -> T:
        """`compute()`, kept until the file changes (generation): counts and matrices search would otherwise read
        again on every search (a full scan of 52k chunks for a count; 6k document vectors)."""
        generation = self.generation()
        kept = self._by_generation.get(name)
        if kept is not None and kept[0] == generation:
            return cast(T, kept[1])
        value = compute()
        with self._state_lock:
            if self._generation == generation:  # nothing was written while it was read
                self._by_generation[name] = (generation, value)
        return value

    def _meta(self, key: str) -> str | None:
        row = self._conn().execute("select value from meta where key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: str | None) -> None:
        with self._write() as conn:
            if value is None:
                conn.execute("delete from meta where key = ?", (key,))
            else:
                conn.execute("insert or replace into meta(key, value) values (?, ?)", (key, value))

    def _vec_exists(self, conn: apsw.Connection | None = None) -> bool:
        conn = conn or self._conn()
        return conn.execute("select 1 from sqlite_master where name = 'vec'").fetchone() is not None

    def _check_model(self) -> None:
        """Vectors belong to one model: another model id (or schema) empties the store."""
        if self.embedder is None:
            return
        expected = {"schema": VECTORS_SCHEMA_VERSION, "model_id": self.embedder.model_id}
        stored = {k: self._meta(k) for k in expected}
        if stored == expected:
            dim = self._meta("dim")
            if dim and self.embedder.dim is None:
                self.embedder.dim = int(dim)  # an endpoint's dimension, learnt on an earlier run
            if self._meta("chunker") != CHUNKER_VERSION:
                # Chunking or parsing changed: re-chunk everything; unchanged chunk texts keep their vectors.
                with self._write() as conn:
                    conn.execute("update docs set hash = ''")
                    conn.execute("insert or replace into meta(key, value) values ('chunker', ?)", (CHUNKER_VERSION,))
            return
        with self._write() as conn:
            if any(v is not None for v in stored.values()):
                log.info(
                    "embedding model changed (%s → %s): vectors will be rebuilt",
                    stored["model_id"],
                    expected["model_id"],
                )
            conn.execute("drop table if exists vec")
            conn.execute("drop table if exists doc_vec")
            for table in ("docs", "doc_tags", "sections", "chunks", "doc_chunks"):
                conn.execute(f"delete from {table}")
            conn.execute("delete from meta")
            for key, value in {**expected, "chunker": CHUNKER_VERSION}.items():
                conn.execute("insert into meta(key, value) values (?, ?)", (key, value))

    def _doc_vec_exists(self, conn: apsw.Connection | None = None) -> bool:
        conn = conn or self._conn()
        return conn.execute("select 1 from sqlite_master where name = 'doc_vec'").fetchone() is not None

    def _ensure_vec_table(self, conn: apsw.Connection, dim: int) -> None:
        stored = self._meta("dim")
        if stored is not None and int(stored) != dim:
            raise EmbedderError(f"the embedder returned {dim}-dimensional vectors, the store holds {stored}")
        if not self._vec_exists(conn):
            conn.execute(
                f"create virtual table vec using vec0(chunk_id integer primary key, embedding float[{int(dim)}] distance_metric=cosine)"
            )
            conn.execute("insert or replace into meta(key, value) values ('dim', ?)", (str(dim),))
        if not self._doc_vec_exists(conn):
            conn.execute(
                f"create virtual table doc_vec using vec0(chunk_id integer primary key, embedding float[{int(dim)}] distance_metric=cosine)"
            )

    def close_thread_connection(self) -> None:
        """A worker thread's connection, closed when the thread ends (the others close with the store)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            self._local.conn = None
            with self._state_lock:
                if conn in self._connections:
                    self._connections.remove(conn)
            conn.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with self._state_lock:
            conns, self._connections = self._connections, []
        for conn in conns:
            with contextlib.suppress(apsw.Error):
                conn.close()
        self._local = threading.local()
        if self.embedder is not None:
            self.embedder.close()

    # -- freshness ---------------------------------------------------------------------------
    def on_sync(self, changed_ids: list[str], deleted_ids: list[str]) -> None:
        """After a synchronizer batch: deleted documents lose their vectors now; changed ones are marked stale."""
        if deleted_ids:
            with self._write() as conn:
                for doc_id in deleted_ids:
                    self._delete_doc(conn, doc_id)
        with self._state_lock:
            self._dirty.update(changed_ids)
            self._dirty.difference_update(deleted_ids)

    def _delete_doc(self, conn: apsw.Connection, doc_id: str) -> None:
        if self._vec_exists(conn):
            conn.execute("delete from vec where chunk_id in (select id from chunks where doc_id = ?)", (doc_id,))
        if self._doc_vec_exists(conn):
            conn.execute(
                "delete from doc_vec where chunk_id in (select id from doc_chunks where doc_id = ?)", (doc_id,)
            )
        tables = ("chunks", "doc_chunks", "sections", "doc_tags", "docs")
        for table, col in ((t, "doc_id") for t in tables):
            conn.execute(f"delete from {table} where {col} = ?", (doc_id,))

    def refresh(self) -> None:
        """Compare with the catalog: forget documents it no longer has, mark those whose content changed."""
        if self.embedder is None:
            return
        catalog = {doc_id: fp.hash for doc_id, fp in self.catalog.fingerprints().items()}
        mine = {str(doc_id): str(digest) for doc_id, digest in self._conn().execute("select doc_id, hash from docs")}
        gone = [d for d in mine if d not in catalog]
        if gone and not self.read_only:
            with self._write() as conn:
                for doc_id in gone:
                    self._delete_doc(conn, doc_id)
        with self._state_lock:
            self._dirty = {d for d, h in catalog.items() if mine.get(d) != h} | {d for d in self._dirty if d in catalog}
            self._refreshed = True
            self._refreshed_at = time.monotonic()

    def _ensure_refreshed(self) -> None:
        # A reader learns of the writer's changes only by looking again: every few seconds, not on every search.
        stale = self.read_only and time.monotonic() - self._refreshed_at > READER_REFRESH_SECONDS
        if not self._refreshed or stale:
            self.refresh()

    def dirty(self) -> set[str]:
        """The documents to (re)chunk: new, changed, or chunked under another chunker version."""
        self._ensure_refreshed()
        with self._state_lock:
            return set(self._dirty)

    # -- state ---------------------------------------------------------------------------------
    def pending_chunks(self) -> int:
        """Units waiting for a vector: section chunks and document-level units."""
        return self.pending_sections() + self.pending_documents()

    def pending_sections(self) -> int:
        return self._kept(
            "pending_sections", lambda: _count(self._conn(), "select count(*) from chunks where embedded = 0")
        )

    def pending_documents(self) -> int:
        return self._kept(
            "pending_documents", lambda: _count(self._conn(), "select count(*) from doc_chunks where embedded = 0")
        )

    def document_vectors(self) -> tuple[int, int]:
        """(documents with their own vector, documents to have one): counting those not chunked yet."""
        self._ensure_refreshed()
        with self._state_lock:
            unread = len(self._dirty)
        conn = self._conn()
        counts: dict[int, int] = {
            int(state): int(n)
            for state, n in conn.execute("select embedded, count(*) from doc_chunks group by embedded")
        }
        return counts.get(1, 0), counts.get(1, 0) + counts.get(0, 0) + unread

    def pending(self) -> int:
        """Chunks waiting for a vector, in one unit from start to end: a document not chunked yet counts as
        the mean number of chunks of the documents chunked so far (nothing better is known before reading it)."""
        if self.embedder is None:
            return 0
        self._ensure_refreshed()
        with self._state_lock:
            dirty = len(self._dirty)
        # and its own document-level unit
        return self.pending_chunks() + (round(dirty * (self._chunks_per_document() + 1)) if dirty else 0)

    def _chunks_per_document(self) -> float:
        if self._chunk_stats is None:  # once per process; store_documents keeps it current
            conn = self._conn()
            self._chunk_stats = (
                _count(conn, "select count(*) from chunks"),
                _count(conn, "select count(distinct doc_id) from chunks"),
            )
        chunks, documents = self._chunk_stats
        return max(1.0, chunks / documents) if documents else 1.0

    def _count_chunked(self, batch: list[str]) -> None:
        if self._chunk_stats is None:
            return
        marks = ",".join("?" * len(batch))
        added = _count(self._conn(), f"select count(*) from chunks where doc_id in ({marks})", batch)
        chunks, documents = self._chunk_stats
        self._chunk_stats = (chunks + added, documents + len(batch))

    def embedded_chunks(self) -> int:
        return self._kept(
            "embedded_chunks", lambda: _count(self._conn(), "select count(*) from chunks where embedded = 1")
        )

    def ready(self) -> bool:
        """True when vector search can answer: an embedder and at least some vectors."""
        if self.embedder is None:
            return False
        if not self._has_vectors:
            conn = self._conn()
            self._has_vectors = (
                self._vec_exists()
                and conn.execute("select 1 from chunks where embedded = 1 limit 1").fetchone() is not None
            ) or (
                self._doc_vec_exists()
                and conn.execute("select 1 from doc_chunks where embedded = 1 limit 1").fetchone() is not None
            )
        return self._has_vectors

    def coverage(self) -> float:
        """The share of the section chunks with vectors (document-level units are `document_vectors`)."""
        if self.embedder is None:
            return coverage(self)
        self._ensure_refreshed()
        with self._state_lock:
            dirty = len(self._dirty)
        pending = self.pending_sections() + (round(dirty * self._chunks_per_document()) if dirty else 0)
        if pending == 0:
            return 1.0
        embedded = self.embedded_chunks()
        return embedded / (embedded + pending)

    def coverage_note(self, mode: str, covered: float | None = None) -> str | None:
        return coverage_note(self, mode, covered)

    def waiting_sections(self, keys: Iterable[tuple[str, int]]) -> set[tuple[str, int]]:
        """Of these sections, those still without vectors: a chunk not embedded yet, or a document not (re)chunked yet."""
        keys = set(keys)
        if not keys or self.pending() == 0:
            return set()
        docs = json.dumps(sorted({doc_id for doc_id, _ in keys}))
        conn = self._conn()
        chunked = {
            r[0]
            for r in conn.execute("select doc_id from docs where doc_id in (select value from json_each(?))", (docs,))
        }
        unembedded = {
            (r[0], r[1])
            for r in conn.execute(
                "select doc_id, section_idx from chunks where embedded = 0 and doc_id in (select value from json_each(?))",
                (docs,),
            )
        }
        with self._state_lock:
            dirty = set(self._dirty)
        # a document's own vector stands in for its waiting sections (hybrid.fuse): they are scored, not waiting
        standing_in = {
            r[0]
            for r in conn.execute(
                "select doc_id from doc_chunks where embedded = 1 and doc_id in (select value from json_each(?))",
                (docs,),
            )
        }
        return {
            k
            for k in keys
            if (k in unembedded or k[0] in dirty or k[0] not in chunked)
            and not (k[0] in standing_in and k[0] not in dirty)
        }

    def unavailable_reason(self) -> str | None:
        return unavailable_reason(self)

    def status(self) -> dict[str, Any]:
        conn = self._conn()
        counts: dict[int, int] = {
            int(state): int(n) for state, n in conn.execute("select embedded, count(*) from chunks group by embedded")
        }
        embedded, pending, failed = counts.get(1, 0), counts.get(0, 0), counts.get(FAILED, 0)
        documents = _count(conn, "select count(*) from docs")
        documents_ready, documents_total = self.document_vectors()
        self._ensure_refreshed()
        with self._state_lock:
            unread = len(self._dirty)
        # Documents not chunked yet count as many chunks as the average document has (10 before any is known).
        per_doc = (embedded + pending + failed) / documents if documents else 10.0
        # the time left counts the document-level units still to embed too (those of unread documents included)
        to_embed = pending + round(unread * per_doc) + documents_total - documents_ready
        rate = self.last_rate or float(self._meta("rate") or 0) or None
        return {
            "model": self.embedder.model_id if self.embedder else None,
            "dimension": int(self._meta("dim") or 0) or (self.embedder.dim if self.embedder else None),
            "documents": documents,
            "chunks": embedded + pending + failed,
            "embedded": embedded,
            "pending": pending + unread if self.embedder else 0,
            "failed": failed,
            "coverage_percent": round(100.0 * embedded / (embedded + to_embed), 1) if embedded + to_embed else 100.0,
            "eta_seconds": math.ceil(to_embed / rate) if rate and to_embed and self.embedder else None,
            "ready": self.ready(),
            "running": self.busy,
            "rate_chunks_per_s": round(rate, 1) if rate else None,
            "error": self.error or self._meta("error"),
            "path": str(self.path),
            "model_chosen_for": chosen.describe() if (chosen := self.chosen_for()) else None,
            "document_vectors": documents_ready,
            "documents_to_embed": documents_total,
        }
