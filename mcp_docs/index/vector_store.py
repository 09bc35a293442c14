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
process) the next run redoes it. Filling the store is the embedding worker's job (`embedding_worker.py`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import threading
import time
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import sqlite_vec

from ..embedders import Embedder, EmbedderError, local_model, make_embedder, model_name
from ..markdown import ParsedDocument
from ..search import translations
from ..settings import Settings
from . import integrity, ownership
from .catalog import SCHEMA_VERSION, SQLITE_SUFFIXES, Catalog, folder_of
from .chunking import Chunk, chunk_document, document_chunk
from .hits import VectorHit
from .language_mix import CENTROID_SAMPLE, MIN_CENTROID_CHUNKS, LanguageView, language_shifts, merge
from .model_choice import LanguageMix
from .read_only_media import sqlite_reading_uri
from .sqlite_tx import immediate_transaction
from .store_api import coverage, coverage_note, unavailable_reason

log = logging.getLogger(__name__)

VECTORS_SCHEMA_VERSION = "1"
# Bump when chunking changes; the catalog schema is part of it (a parser change shows there).
CHUNKER_VERSION = f"2/{SCHEMA_VERSION}"  # 2: a document-level unit per document (doc_chunks)
READER_REFRESH_SECONDS = 5.0
EXACT_FILTER_MAX = 3000  # filtered search: exact distances over the allowed chunks up to this many
MAX_K = 4096  # sqlite-vec's limit
QUERY_CACHE_SIZE = 256
FAILED = -1  # chunks.embedded for a chunk the embedder rejects on its own: skipped, not retried forever

_SCHEMA = """
create table if not exists meta (key text primary key, value text not null);
create table if not exists docs (
    doc_id text primary key,
    hash text not null,
    title text not null,
    folder text not null,
    tags text not null
);
create index if not exists docs_folder on docs(folder);
create table if not exists doc_tags (tag text not null, doc_id text not null, primary key (tag, doc_id)) without rowid;
create index if not exists doc_tags_doc on doc_tags(doc_id);
create table if not exists sections (
    doc_id text not null,
    idx integer not null,
    heading text not null,
    heading_path text not null,
    line_start integer not null,
    line_end integer not null,
    primary key (doc_id, idx)
) without rowid;
create table if not exists chunks (
    id integer primary key,
    doc_id text not null,
    section_idx integer not null,
    ord integer not null,
    hash text not null,
    text text not null,
    prefix_len integer not null,
    embedded integer not null default 0
);
create index if not exists chunks_doc on chunks(doc_id);
create index if not exists chunks_hash on chunks(hash);
create index if not exists chunks_pending on chunks(id) where embedded = 0;
create table if not exists doc_chunks (
    id integer primary key,
    doc_id text not null unique,
    section_idx integer not null,
    hash text not null,
    text text not null,
    prefix_len integer not null,
    embedded integer not null default 0
);
create index if not exists doc_chunks_hash on doc_chunks(hash);
"""

# Documents a search keeps to (True) or leaves out (False), by id; None: no such filter.
DocFilter = tuple[bool, Sequence[str]] | None
# A chunk waiting for its vector: (chunk id, text to embed). A document-level unit (doc_chunks) has its id negated:
# one queue and one batch format for the worker, whichever table the vector goes to.
PendingChunk = tuple[int, str]
# Fusion: while a document's sections wait, its own vector stands in for them with this weight of coverage
# (library.search: how far the vector side is trusted against keyword while sections fill in).
DOCUMENT_LEVEL_CREDIT = 0.5


def _by_language(chunks: Iterable[tuple[int, str, str]]) -> dict[str, list[int]]:
    """(chunk id, document id, language) → the chunk ids of each language, in the order given."""
    out: dict[str, list[int]] = {}
    for cid, _, lang in chunks:
        out.setdefault(lang, []).append(cid)
    return out


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


class VectorStore:
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
        # (languages, embedded chunks, when) → each language's mean chunk vector (language_centroids)
        self._centroids: tuple[tuple[str, ...], int, float, dict[str, np.ndarray]] | None = None
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
            conn.execute(_SCHEMA)
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
            if self.read_only:  # immutable on read-only media (index/read_only_media.py)
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

    def _write(self) -> AbstractContextManager[apsw.Connection]:
        return immediate_transaction(self._write_lock, self._conn())

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

    # -- writes ------------------------------------------------------------------------------
    def store_documents(self, prepared: Sequence[tuple[str, str | None, ParsedDocument | None]]) -> None:
        """Replace the chunks of these (doc_id, content hash, parsed) documents in one transaction; they are
        no longer stale. A document with no hash could not be read: the next sync deletes it."""
        with self._write() as conn:
            for doc_id, digest, parsed in prepared:
                if digest is not None and parsed is not None:
                    self._store_chunks(conn, doc_id, digest, parsed)
        batch = [doc_id for doc_id, _, _ in prepared]
        with self._state_lock:
            self._dirty.difference_update(batch)
        self._count_chunked(batch)

    def _store_chunks(self, conn: apsw.Connection, doc_id: str, digest: str, parsed: ParsedDocument) -> None:
        """Keep every chunk whose content hash did not change (with its vector), so editing one paragraph
        re-embeds only the chunks that changed."""
        assert self.embedder is not None
        chunks = chunk_document(parsed, self.embedder.max_chars)
        existing: dict[str, list[int]] = {}
        for cid, h in conn.execute("select id, hash from chunks where doc_id = ?", (doc_id,)):
            existing.setdefault(h, []).append(cid)
        has_vec = self._vec_exists(conn)
        for chunk in chunks:
            h = chunk.hash
            kept = existing.get(h)
            if kept:
                conn.execute(
                    "update chunks set section_idx = ?, ord = ? where id = ?",
                    (chunk.section_idx, chunk.ord, kept.pop()),
                )
                continue
            vector = None
            if has_vec:  # the same text embedded elsewhere (a copied paragraph, a renamed file): reuse it
                row = conn.execute(
                    "select v.embedding from chunks c join vec v on v.chunk_id = c.id where c.hash = ? and c.embedded = 1 limit 1",
                    (h,),
                ).fetchone()
                vector = row[0] if row else None
            conn.execute(
                "insert into chunks(doc_id, section_idx, ord, hash, text, prefix_len, embedded) values (?,?,?,?,?,?,?)",
                (doc_id, chunk.section_idx, chunk.ord, h, chunk.text, chunk.prefix_len, 1 if vector is not None else 0),
            )
            if vector is not None:
                conn.execute("insert into vec(chunk_id, embedding) values (?, ?)", (conn.last_insert_rowid(), vector))
        stale = [cid for ids in existing.values() for cid in ids]
        for cid in stale:
            if has_vec:
                conn.execute("delete from vec where chunk_id = ?", (cid,))
            conn.execute("delete from chunks where id = ?", (cid,))
        self._store_document_unit(conn, doc_id, document_chunk(parsed, self.embedder.max_chars))
        conn.execute("delete from sections where doc_id = ?", (doc_id,))
        conn.executemany(
            "insert into sections values (?,?,?,?,?,?)",
            [(doc_id, s.index, s.heading, s.heading_path, s.line_start, s.line_end) for s in parsed.sections],
        )
        conn.execute("delete from doc_tags where doc_id = ?", (doc_id,))
        conn.executemany("insert or ignore into doc_tags values (?, ?)", [(t, doc_id) for t in parsed.tags])
        conn.execute(
            "insert or replace into docs values (?,?,?,?,?)",
            (doc_id, digest, parsed.title, folder_of(doc_id), json.dumps(list(parsed.tags))),
        )

    def _store_document_unit(self, conn: apsw.Connection, doc_id: str, unit: Chunk | None) -> None:
        """The document's own unit: kept with its vector when its text did not change, else replaced (reusing any
        vector of the same text: a one-section note's unit is often its only chunk)."""
        row = conn.execute("select id, hash from doc_chunks where doc_id = ?", (doc_id,)).fetchone()
        if row is not None and unit is not None and row[1] == unit.hash:
            conn.execute("update doc_chunks set section_idx = ? where id = ?", (unit.section_idx, row[0]))
            return
        if row is not None:
            if self._doc_vec_exists(conn):
                conn.execute("delete from doc_vec where chunk_id = ?", (row[0],))
            conn.execute("delete from doc_chunks where id = ?", (row[0],))
        if unit is None:
            return
        vector = self._vector_of_text(conn, unit.hash)
        conn.execute(
            "insert into doc_chunks(doc_id, section_idx, hash, text, prefix_len, embedded) values (?,?,?,?,?,?)",
            (doc_id, unit.section_idx, unit.hash, unit.text, unit.prefix_len, 1 if vector is not None else 0),
        )
        if vector is not None:
            self._ensure_doc_vec(conn, vector)
            conn.execute("insert into doc_vec(chunk_id, embedding) values (?, ?)", (conn.last_insert_rowid(), vector))

    def _ensure_doc_vec(self, conn: apsw.Connection, vector: Any) -> None:
        if not self._doc_vec_exists(conn):
            self._ensure_vec_table(conn, len(np.frombuffer(bytes(vector), dtype=np.float32)))

    def _vector_of_text(self, conn: apsw.Connection, digest: str) -> Any:
        """A stored vector of a text with this content hash (section chunk or document unit), or None: identical
        texts are embedded once (translations share code blocks, vaults share boilerplate)."""
        if self._vec_exists(conn):
            row = conn.execute(
                "select v.embedding from chunks c join vec v on v.chunk_id = c.id where c.hash = ? and c.embedded = 1 limit 1",
                (digest,),
            ).fetchone()
            if row:
                return row[0]
        if self._doc_vec_exists(conn):
            row = conn.execute(
                "select v.embedding from doc_chunks d join doc_vec v on v.chunk_id = d.id "
                "where d.hash = ? and d.embedded = 1 limit 1",
                (digest,),
            ).fetchone()
            if row:
                return row[0]
        return None

    def _pending_documents(self, conn: apsw.Connection, limit: int, docs: Sequence[str]) -> list[PendingChunk]:
        """Document-level units waiting (ids negated, see PendingChunk): the searched `docs` first, then the newest."""
        picked: list[PendingChunk] = []
        if docs:
            picked = [
                (-int(r[0]), str(r[1]))
                for r in conn.execute(
                    "select d.id, d.text from json_each(?) j join doc_chunks d on d.doc_id = j.value "
                    "where d.embedded = 0 order by j.key limit ?",
                    (json.dumps(list(docs)), limit),
                )
            ]
        seen = {cid for cid, _ in picked}
        rows = conn.execute(
            "select id, text from doc_chunks where embedded = 0 order by id desc limit ?", (limit + len(seen),)
        )
        picked += [(-int(r[0]), str(r[1])) for r in rows if -int(r[0]) not in seen]
        return picked[:limit]

    def pending_batch(self, limit: int, docs: Sequence[str] = (), folders: Sequence[str] = ()) -> list[PendingChunk]:
        """Up to `limit` chunks waiting for a vector: those of `docs` first (in that order), then of documents
        in `folders` (in that order), then the newest chunks (the highest ids: the last documents chunked).
        Before any of these, every document's own unit (`_pending_documents`): one vector per document first."""
        conn = self._conn()
        picked = self._pending_documents(conn, limit, docs)
        if picked:
            return picked
        queries = []
        if docs:
            queries.append(
                (
                    "select c.id, c.text from json_each(?) j join chunks c on c.doc_id = j.value "
                    "where c.embedded = 0 order by j.key, c.id desc limit ?",
                    json.dumps(list(docs)),
                )
            )
        if folders:
            queries.append(
                (
                    "select c.id, c.text from json_each(?) j join docs d on d.folder = j.value "
                    "join chunks c on c.doc_id = d.doc_id where c.embedded = 0 order by j.key, c.id desc limit ?",
                    json.dumps(list(folders)),
                )
            )
        for sql, arg in queries:
            seen = {cid for cid, _ in picked}
            picked += [(int(r[0]), str(r[1])) for r in conn.execute(sql, (arg, limit)) if int(r[0]) not in seen]
            if len(picked) >= limit:
                return picked[:limit]
        seen = {cid for cid, _ in picked}
        rows = conn.execute(
            "select id, text from chunks where embedded = 0 order by id desc limit ?", (limit + len(seen),)
        )
        picked += [(int(r[0]), str(r[1])) for r in rows if int(r[0]) not in seen]
        return picked[:limit]

    def store_vectors(self, pairs: Sequence[tuple[int, np.ndarray]]) -> None:
        """Store one batch of (chunk id, vector); a chunk deleted or re-chunked meanwhile is skipped. Every other
        waiting chunk or document unit of the same text gets the vector too: it is never embedded twice (on the
        Obsidian help vault, 1 % of the section chunks repeat another's text across its 36 languages)."""
        with self._write() as conn:
            self._ensure_vec_table(conn, len(pairs[0][1]))
            for cid, vector in pairs:
                blob = np.ascontiguousarray(vector, dtype=np.float32)
                table = "doc_chunks" if cid < 0 else "chunks"
                row = conn.execute(f"select hash from {table} where id = ? and embedded = 0", (abs(cid),)).fetchone()
                if row is None:
                    continue
                for same_table, same_vec in (("chunks", "vec"), ("doc_chunks", "doc_vec")):
                    same = [
                        int(r[0])
                        for r in conn.execute(f"select id from {same_table} where hash = ? and embedded = 0", (row[0],))
                    ]
                    for other in same:
                        conn.execute(f"update {same_table} set embedded = 1 where id = ?", (other,))
                        conn.execute(f"delete from {same_vec} where chunk_id = ?", (other,))
                        conn.execute(f"insert into {same_vec}(chunk_id, embedding) values (?, ?)", (other, blob))
        self._has_vectors = True

    def mark_failed(self, chunk_id: int) -> None:
        """A chunk the embedder rejects on its own: skipped from now on, counted in status()."""
        table = "doc_chunks" if chunk_id < 0 else "chunks"
        with self._write() as conn:
            conn.execute(f"update {table} set embedded = ? where id = ? and embedded = 0", (FAILED, abs(chunk_id)))

    def doc_of(self, chunk_id: int) -> str:
        table = "doc_chunks" if chunk_id < 0 else "chunks"
        row = self._conn().execute(f"select doc_id from {table} where id = ?", (abs(chunk_id),)).fetchone()
        return row[0] if row else "?"

    def save_rate(self) -> None:
        """Kept in the store, so `mcp-docs status` (another process) can estimate the time left."""
        if self.last_rate:
            self._set_meta("rate", f"{self.last_rate:.3f}")

    def set_error(self, error: str | None) -> None:
        """Kept in the store too, so `mcp-docs status` (another process) shows why vectors are missing."""
        self.error = error
        if self._meta("error") != error:
            self._set_meta("error", error)

    def chosen_for(self) -> LanguageMix | None:
        """The language mix the model was chosen for (index/model_choice.py); None before the first decision."""
        return LanguageMix.from_json(self._meta("chosen_for"))

    def set_chosen_for(self, mix: LanguageMix) -> None:
        self._set_meta("chosen_for", mix.to_json())

    # -- state ---------------------------------------------------------------------------------
    def pending_chunks(self) -> int:
        """Units waiting for a vector: section chunks and document-level units."""
        return self.pending_sections() + self.pending_documents()

    def pending_sections(self) -> int:
        return _count(self._conn(), "select count(*) from chunks where embedded = 0")

    def pending_documents(self) -> int:
        return _count(self._conn(), "select count(*) from doc_chunks where embedded = 0")

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
        return _count(self._conn(), "select count(*) from chunks where embedded = 1")

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

    # -- search -------------------------------------------------------------------------------
    def embed_query(self, text: str) -> np.ndarray:
        """The query's vector; the last few hundred are remembered (agents often repeat a query)."""
        self.follow_writer()
        if self.embedder is None:
            raise EmbedderError(self.error or "embeddings are off")
        cached = self._query_cache.get(text)
        if cached is not None:
            return cached
        vector = self.embedder.embed_query(text)
        vector.setflags(write=False)
        with self._state_lock:
            if len(self._query_cache) >= QUERY_CACHE_SIZE:
                self._query_cache.pop(next(iter(self._query_cache)))
            self._query_cache[text] = vector
        return vector

    def _filter_sql(self, folder: str | None, tags: Sequence[str], docs: DocFilter = None) -> tuple[str, list[Any]]:
        where: list[str] = []
        args: list[Any] = []
        if docs is not None:
            inside, ids = docs
            where.append(f"c.doc_id {'in' if inside else 'not in'} (select value from json_each(?))")
            args.append(json.dumps(ids))
        if folder:
            where.append("(d.folder = ? or substr(d.folder, 1, ?) = ?)")
            args += [folder, len(folder) + 1, folder + "/"]
        for tag in tags:
            where.append("c.doc_id in (select doc_id from doc_tags where tag = ?)")
            args.append(tag)
        return " and ".join(where), args

    def knn(
        self, query: np.ndarray, k: int, folder: str | None = None, tags: Sequence[str] = (), docs: DocFilter = None
    ) -> list[tuple[int, float]]:
        """The k nearest embedded chunks (id, cosine distance), filters applied before the cut."""
        if not self._vec_exists():
            return []
        conn = self._conn()
        q = np.ascontiguousarray(query, dtype=np.float32)
        k = max(1, min(int(k), MAX_K))
        if docs is not None and not docs[0] and not folder and not tags:
            # A language's search leaving out the other languages' few documents: listing every chunk of this
            # language to filter on (thousands) cost more than the search; the nearest k + (chunks left out) hold
            # the k nearest of the rest, exactly.
            left_out = {
                int(r[0])
                for r in conn.execute(
                    "select id from chunks where doc_id in (select value from json_each(?))", (json.dumps(docs[1]),)
                )
            }
            # sqlite-vec's cost grows with k: twice k first, which nearly always holds k of the rest
            for fetch in sorted({min(2 * k, k + len(left_out)), k + len(left_out)}):
                if fetch > MAX_K:
                    break
                kept = [
                    (int(cid), float(dist))
                    for cid, dist in conn.execute(
                        "select chunk_id, distance from vec where embedding match ? and k = ?", (q, fetch)
                    )
                    if cid not in left_out and dist is not None
                ][:k]
                if len(kept) >= k or fetch == k + len(left_out):
                    return kept
        where, args = self._filter_sql(folder, tags, docs)
        if not where:
            return [
                (int(r[0]), float(r[1]))
                for r in conn.execute("select chunk_id, distance from vec where embedding match ? and k = ?", (q, k))
                if r[1] is not None
            ]
        allowed = [
            r[0]
            for r in conn.execute(
                f"select c.id from chunks c join docs d on d.doc_id = c.doc_id where c.embedded = 1 and {where}", args
            )
        ]
        if not allowed:
            return []
        if len(allowed) <= EXACT_FILTER_MAX:
            rows: list[tuple[Any, ...]] = conn.execute(
                "select chunk_id, vec_distance_cosine(embedding, ?) as d from vec "
                "where chunk_id in (select value from json_each(?)) order by d limit ?",
                (q, json.dumps(allowed), k),
            ).fetchall()
            return [(int(r[0]), float(r[1])) for r in rows if r[1] is not None]
        total = max(1, self.embedded_chunks())
        fetch = min(MAX_K, int(k * total / len(allowed) * 2) + k)
        allowed_set = set(allowed)
        out = []
        for cid, dist in conn.execute(
            "select chunk_id, distance from vec where embedding match ? and k = ?", (q, fetch)
        ):
            if cid in allowed_set and dist is not None:
                out.append((int(cid), float(dist)))
                if len(out) >= k:
                    break
        return out

    def language_view(self, query: np.ndarray) -> LanguageView | None:
        """For a collection in several languages, where each document is and what each language's cosines gain for
        this query (language_mix); None for a collection in one language, where cosines are used as they are."""
        if not getattr(self.embedder, "multilingual", True):
            return None  # MiniLM on a mixed collection: raw cosines (see Embedder.multilingual)
        split = self._language_split()
        if split is None:
            return None
        main, others = split
        shifts = language_shifts(query, self.language_centroids(main, others))
        return LanguageView(main, others, shifts) if shifts else None

    def section_hits(
        self,
        query: np.ndarray,
        limit: int,
        folder: str | None = None,
        tags: Sequence[str] = (),
        view: LanguageView | None = None,
    ) -> list[VectorHit]:
        """KNN over chunks, grouped to sections (a section scores with its best chunk), best first.

        With a `view` (language_view), each language is searched on its own and its cosines are put on the scale
        of the query's language: a multilingual model otherwise ranks any page in the query's language above the
        page in another language that answers it."""
        if view is None:
            return self._section_hits(query, limit, folder, tags)
        minority = [doc_id for ids in view.others.values() for doc_id in ids]
        per_language = {view.main: self._section_hits(query, limit, folder, tags, (False, minority))}
        for lang, ids in view.others.items():
            per_language[lang] = self._section_hits(query, limit, folder, tags, (True, ids))
        return merge(per_language, view.shifts, limit)

    def _language_split(self) -> tuple[str, dict[str, list[str]]] | None:
        """(the language of most documents, the ids of the others' documents per language), or None for a
        collection in one language (the catalog's: the languages of the documents as last indexed)."""
        counts = self.catalog.language_counts()
        if len(counts) < 2:
            return None
        main = max(sorted(counts), key=lambda lang: counts[lang])
        return main, self.catalog.documents_by_language(main)

    def language_centroids(self, main: str, others: dict[str, list[str]]) -> dict[str, np.ndarray]:
        """Each language's mean chunk vector (over at most CENTROID_SAMPLE embedded chunks, evenly spread), for
        the languages with at least MIN_CENTROID_CHUNKS; `main`'s chunks are those of no other language; only the
        chunks of translated pages when every such language has that many of them. Kept while the languages stay
        and the embedded chunks change by less than a tenth, looked at every few seconds."""
        key = (main, *sorted(others))
        cached = self._centroids
        now = time.monotonic()
        if cached is not None and cached[0] == key and now - cached[2] < READER_REFRESH_SECONDS:
            return cached[3]
        embedded = self.embedded_chunks()
        if cached is not None and cached[0] == key and abs(embedded - cached[1]) <= 0.1 * cached[1]:
            self._centroids = (key, cached[1], now, cached[3])
            return cached[3]
        lang_of = {doc_id: lang for lang, ids in others.items() for doc_id in ids}
        conn = self._conn()
        chunks: list[tuple[int, str, str]] = [
            (int(cid), str(doc_id), lang_of.get(doc_id, main))
            for cid, doc_id in conn.execute("select id, doc_id from chunks where embedded = 1 order by id")
        ]
        chunk_ids = _by_language(chunks)
        # Pages and their translations say the same things: their means differ by the language alone. The means
        # of whole languages also differ by topic (on the OpenTelemetry docs the French pages are the core pages,
        # the English ones add blogs and every SDK), and that difference was given to the other language as if it
        # were the language's (benchmarks/REPORT.md, issue 14, deliverable 2). So when every language has enough
        # chunks in translated pages, the means are taken over those.
        translated = translations.translated({doc_id: lang for _, doc_id, lang in chunks}.items())
        paired = _by_language([c for c in chunks if c[1] in translated])
        if paired.keys() >= {lang for lang, ids in chunk_ids.items() if len(ids) >= MIN_CENTROID_CHUNKS} and all(
            len(ids) >= MIN_CENTROID_CHUNKS for ids in paired.values()
        ):
            chunk_ids = paired
        centroids: dict[str, np.ndarray] = {}
        for lang, ids in chunk_ids.items():
            if len(ids) < MIN_CENTROID_CHUNKS:
                continue
            step = max(1, len(ids) // CENTROID_SAMPLE)
            sample = json.dumps(ids[::step][:CENTROID_SAMPLE])
            blobs = [
                bytes(r[0])  # the vec column holds float32 blobs
                for r in conn.execute(
                    "select v.embedding from json_each(?) j join vec v on v.chunk_id = j.value", (sample,)
                )
            ]
            if blobs:
                centroids[lang] = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1).mean(axis=0)
        self._centroids = (key, embedded, now, centroids)
        return centroids

    def _section_hits(
        self, query: np.ndarray, limit: int, folder: str | None, tags: Sequence[str], docs: DocFilter = None
    ) -> list[VectorHit]:
        sections = self._chunk_hits(query, limit, folder, tags, docs)
        documents = self._document_hits(query, limit, folder, tags, docs)
        if not documents:
            return sections
        # one list, best first: a document's own vector where its sections wait, section vectors elsewhere
        merged: dict[tuple[str, int], VectorHit] = {}
        for hit in sorted([*sections, *documents], key=lambda h: -h.similarity):
            merged.setdefault((hit.doc_id, hit.section_idx), hit)
        return list(merged.values())[:limit]

    def _document_hits(
        self, query: np.ndarray, limit: int, folder: str | None, tags: Sequence[str], docs: DocFilter = None
    ) -> list[VectorHit]:
        """The nearest document-level vectors of the documents whose sections still wait for theirs (exact
        distances: at most one per document, a few thousand at most while they matter); [] once every section
        has its vectors, so a fully embedded index ranks by sections alone, as before."""
        conn = self._conn()
        if not self._doc_vec_exists(conn) or self.pending_sections() == 0:
            return []
        where, args = self._filter_sql(folder, tags, docs)
        rows: list[tuple[Any, ...]] = conn.execute(
            "select u.doc_id, u.section_idx, u.text, u.prefix_len, d.title, d.tags, s.heading, s.heading_path, "
            "s.line_start, s.line_end, vec_distance_cosine(v.embedding, ?) as dist "
            "from doc_chunks u join doc_vec v on v.chunk_id = u.id join docs d on d.doc_id = u.doc_id "
            "join sections s on s.doc_id = u.doc_id and s.idx = u.section_idx "
            "where u.embedded = 1 and exists (select 1 from chunks p where p.doc_id = u.doc_id and p.embedded = 0)"
            + (f" and {where.replace('c.doc_id', 'u.doc_id')}" if where else "")
            + " order by dist limit ?",
            (np.ascontiguousarray(query, dtype=np.float32), *args, limit),
        ).fetchall()
        return [
            VectorHit(
                doc_id=r[0],
                section_idx=r[1],
                similarity=1.0 - float(r[10]),
                title=r[4],
                heading=r[6],
                heading_path=r[7],
                line_start=r[8],
                line_end=r[9],
                piece=r[2][r[3] :],
                tags=tuple(json.loads(r[5])),
                level="document",
            )
            for r in rows
            if r[10] is not None
        ]

    def _chunk_hits(
        self, query: np.ndarray, limit: int, folder: str | None, tags: Sequence[str], docs: DocFilter = None
    ) -> list[VectorHit]:
        nearest = self.knn(query, limit * 3, folder, tags, docs)
        if not nearest:
            return []
        rows: list[tuple[Any, ...]] = (
            self._conn()
            .execute(
                "select c.id, c.doc_id, c.section_idx, c.text, c.prefix_len, d.title, d.tags, "
                "s.heading, s.heading_path, s.line_start, s.line_end "
                "from chunks c join docs d on d.doc_id = c.doc_id "
                "join sections s on s.doc_id = c.doc_id and s.idx = c.section_idx "
                "where c.id in (select value from json_each(?))",
                (json.dumps([cid for cid, _ in nearest]),),
            )
            .fetchall()
        )
        by_id = {r[0]: r for r in rows}
        hits: dict[tuple[str, int], VectorHit] = {}
        for cid, dist in nearest:
            r = by_id.get(cid)
            if r is None:
                continue
            key = (r[1], r[2])
            if key in hits:
                continue
            hits[key] = VectorHit(
                doc_id=r[1],
                section_idx=r[2],
                similarity=1.0 - dist,
                title=r[5],
                heading=r[7],
                heading_path=r[8],
                line_start=r[9],
                line_end=r[10],
                piece=r[3][r[4] :],
                tags=tuple(json.loads(r[6])),
            )
            if len(hits) >= limit:
                break
        return list(hits.values())
