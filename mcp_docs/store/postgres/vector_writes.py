"""PostgreSQL's side of the one embedding worker (index/embedding_worker.py): `PgVectorWrites` implements
`store.api.VectorWriter` over pgvector, and is mixed into `PgVectors` (store.py), which searches what it writes.

Tables (database.py): `mcp_docs_chunks` (one row per section chunk) and `mcp_docs_doc_chunks` (one unit per document:
title, description and lead, chunking.document_chunk), each with its `embedding` (null while it waits) and `failed`
(a text the embedder rejects on its own: skipped, not retried forever). The writer (sync.py) writes both as it syncs,
keeping the vectors of unchanged texts, so nothing here re-chunks (`dirty` is always empty). The worker's queue hands
out every document's unit before any section chunk, as on the embedded store: on a large vault, semantic search
covers every document within minutes, and while a document's sections wait its own vector stands in for them
(`document_hits`; the search note says which level is ready, search/vectors.py).

Bookkeeping in `mcp_docs_meta`: `model_id` (the vectors of another model are emptied, never mixed), `chosen_for`
(the language mix the model was decided for, index/model_choice.py), `rate` and `error` (for `status` and the
search note in another process), `dim` (Database.set_dim, with the HNSW index over the section chunks).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...embedders import Embedder, EmbedderError, model_name
from ...index.hits import VectorHit, vector_hit
from ...index.model_choice import LanguageMix, choose
from ...markdown import ParsedDocument
from ...render import plural
from ...settings import Settings
from ..api import PendingChunk
from ..embedded.vector_search import READER_REFRESH_SECONDS
from ..embedded.vector_store import choose_embedder

if TYPE_CHECKING:
    from ...index.embedding_worker import EmbeddingWorker
    from .catalog import PgCatalog
    from .database import Database

log = logging.getLogger(__name__)

# Both tables wait alike: a unit's id is negated in the worker's queue (store.api.PendingChunk).
_WAITING = "embedding is null and not failed"


def stored_model(db: Database) -> str | None:
    """The model id the index's vectors were made with (None: none recorded)."""
    return db.meta("model_id")


def open_embedder(
    settings: Settings, db: Database, language_counts: dict[str, int] | None
) -> tuple[Embedder | None, str | None]:
    """The embedder of this index, as on the embedded store (vector_store.VectorStore.open): the model its vectors
    were made with, else the one the collection's languages call for (embedders.local_model; `language_counts`
    None: a reader, which follows the writer's). An index written before the model was recorded (schema 5) was
    embedded with the settings' model: that one is kept, its vectors with it."""
    if settings.embeddings == "none":
        return None, None
    stored = stored_model(db)
    if stored is None and db.value("select exists(select 1 from mcp_docs_chunks where embedding is not null)"):
        return choose_embedder(settings, None, None)
    return choose_embedder(settings, None if model_name(stored) else language_counts, stored)


class PgVectorWrites:
    """The writing half of `PgVectors` (store.py), which provides what is declared here."""

    if TYPE_CHECKING:
        db: Database
        catalog: PgCatalog
        embedder: Embedder | None
        error: str | None
        busy: bool
        last_rate: float | None
        _query_cache: dict[str, np.ndarray]
        _followed_at: float

    # -- the model ---------------------------------------------------------------------------
    def check_model(self) -> None:
        """The writer's check when it opens: vectors belong to one model, another model's are emptied (the
        chunks stay: their texts do not depend on the model) and embedded again."""
        if self.embedder is None:
            return
        stored = stored_model(self.db)
        if stored == self.embedder.model_id:
            return
        with self.db.transaction() as conn:
            if stored is not None:
                log.info("embedding model changed (%s → %s): vectors will be rebuilt", stored, self.embedder.model_id)
                _forget_vectors(conn)
            self.db.set_meta(conn, "model_id", self.embedder.model_id)
        if stored is not None:
            self.db.dim = None

    def use_model(self, embedder: Embedder) -> None:
        """Embed with `embedder` from now on; the vectors of the old model are emptied (follow_languages)."""
        old, self.embedder = self.embedder, embedder
        self.check_model()
        if old is not None:
            old.close()

    def chosen_for(self) -> LanguageMix | None:
        """The language mix the model was chosen for (index/model_choice.py); None before the first decision."""
        return LanguageMix.from_json(self.db.meta("chosen_for"))

    def set_chosen_for(self, mix: LanguageMix) -> None:
        with self.db.transaction() as conn:
            self.db.set_meta(conn, "chosen_for", mix.to_json())

    def follow_writer(self, settings: Settings | None) -> None:
        """A reader's embedder is the model the writer's vectors are made with, which changes when the collection's
        languages do (follow_languages): query vectors of another model would match at random. Looked at every
        READER_REFRESH_SECONDS, as the embedded store's reader does."""
        if not self.db.read_only or self.embedder is None or settings is None:
            return
        now = time.monotonic()
        if now - self._followed_at < READER_REFRESH_SECONDS:
            return
        self._followed_at = now
        stored = stored_model(self.db)
        if not stored or stored == self.embedder.model_id or not model_name(stored):
            return
        embedder, _ = choose_embedder(settings, None, stored)
        if embedder is not None:
            log.info("the writer now embeds with %s: queries follow", stored)
            dim = self.db.meta("dim")
            self.embedder, self.db.dim = embedder, int(dim) if dim else None
            self._query_cache.clear()

    # -- chunking: the writer chunks as it syncs (sync.py) ----------------------------------------
    def refresh(self) -> None:
        pass

    def on_sync(self, changed_ids: list[str], deleted_ids: list[str]) -> None:
        pass  # the sync wrote the changed documents' chunks; the deleted ones' went with them (on delete cascade)

    def dirty(self) -> set[str]:
        return set()

    def store_documents(self, prepared: Sequence[tuple[str, str | None, ParsedDocument | None]]) -> None:
        raise NotImplementedError("the PostgreSQL writer chunks documents as it syncs: none is ever stale here")

    # -- the queue ---------------------------------------------------------------------------------
    def pending_sections(self) -> int:
        return int(self.db.value(f"select count(*) from mcp_docs_chunks where {_WAITING}"))

    def pending_documents(self) -> int:
        return int(self.db.value(f"select count(*) from mcp_docs_doc_chunks where {_WAITING}"))

    def pending_chunks(self) -> int:
        """Units waiting for a vector: section chunks and document-level units."""
        return self.pending_sections() + self.pending_documents()

    def pending(self) -> int:
        return self.pending_chunks() if self.embedder is not None else 0

    def pending_batch(self, limit: int, docs: Sequence[str] = (), folders: Sequence[str] = ()) -> list[PendingChunk]:
        """Up to `limit` units waiting, in the worker's order: every document's own unit first (ids negated), the
        searched `docs` first; then section chunks of `docs`, then of `folders` (each in that order), then the
        newest (the highest ids: the last documents written)."""
        docs, folders = list(docs), list(folders)
        units = self.db.rows(
            f"select id, text from mcp_docs_doc_chunks where {_WAITING} "
            "order by array_position(%s::text[], doc_id) nulls last, id desc limit %s",
            (docs, limit),
        )
        if units:
            return [(-int(r[0]), str(r[1])) for r in units]
        if not docs and not folders:  # no search yet: the newest, read from the pending index without a sort
            rows = self.db.rows(
                f"select id, text from mcp_docs_chunks where {_WAITING} order by id desc limit %s", (limit,)
            )
        else:
            rows = self.db.rows(
                "select c.id, c.text from mcp_docs_chunks c join mcp_docs_documents d on d.id = c.doc_id "
                "where c.embedding is null and not c.failed "
                "order by array_position(%s::text[], c.doc_id) nulls last, "
                "array_position(%s::text[], d.folder) nulls last, c.id desc limit %s",
                (docs, folders, limit),
            )
        return [(int(r[0]), str(r[1])) for r in rows]

    def store_vectors(self, pairs: Sequence[tuple[int, np.ndarray]]) -> None:
        """One batch of (id, vector) in one transaction; a unit deleted or rewritten meanwhile is skipped. Every
        other waiting chunk or unit of the same text gets the vector too: a text is never embedded twice."""
        if not pairs:
            return
        dim = len(pairs[0][1])
        stored = self.db.meta("dim")
        if stored is not None and int(stored) != dim:
            raise EmbedderError(f"the embedder returned {dim}-dimensional vectors, the index holds {stored}")
        self.db.set_dim(dim)
        with self.db.transaction() as conn, conn.cursor() as cur:
            for cid, vector in pairs:
                table = "mcp_docs_doc_chunks" if cid < 0 else "mcp_docs_chunks"
                row = cur.execute(f"select hash from {table} where id = %s and {_WAITING}", (abs(cid),)).fetchone()
                if row is None:
                    continue
                text = vector_text(vector)
                for same in ("mcp_docs_chunks", "mcp_docs_doc_chunks"):
                    cur.execute(
                        f"update {same} set embedding = %s::vector where hash = %s and {_WAITING}", (text, row[0])
                    )

    def mark_failed(self, chunk_id: int) -> None:
        table = "mcp_docs_doc_chunks" if chunk_id < 0 else "mcp_docs_chunks"
        with self.db.transaction() as conn:
            conn.execute(f"update {table} set failed = true where id = %s and embedding is null", (abs(chunk_id),))

    def doc_of(self, chunk_id: int) -> str:
        table = "mcp_docs_doc_chunks" if chunk_id < 0 else "mcp_docs_chunks"
        found = self.db.value(f"select doc_id from {table} where id = %s", (abs(chunk_id),))
        return str(found) if found is not None else "?"

    # -- state kept for `status` in another process -----------------------------------------------
    def save_rate(self) -> None:
        if self.last_rate:
            with self.db.transaction() as conn:
                self.db.set_meta(conn, "rate", f"{self.last_rate:.3f}")

    def set_error(self, error: str | None) -> None:
        self.error = error
        if self.db.read_only or self.db.meta("error") == error:
            return
        with self.db.transaction() as conn:
            if error is None:
                conn.execute("delete from mcp_docs_meta where key = 'error'")
            else:
                self.db.set_meta(conn, "error", error)

    def close_thread_connection(self) -> None:
        self.db.drop_thread_connection()

    # -- what is ready -----------------------------------------------------------------------------
    def embedded_chunks(self) -> int:
        return int(self.db.value("select count(*) from mcp_docs_chunks where embedding is not null"))

    def document_vectors(self) -> tuple[int, int]:
        """(documents with their own vector, documents to have one)."""
        row = self.db.rows(
            "select count(*) filter (where embedding is not null), count(*) filter (where not failed) "
            "from mcp_docs_doc_chunks"
        )[0]
        return int(row[0]), int(row[1])

    def ready(self) -> bool:
        return self.embedder is not None and bool(
            self.db.value(
                "select exists(select 1 from mcp_docs_chunks where embedding is not null) "
                "or exists(select 1 from mcp_docs_doc_chunks where embedding is not null)"
            )
        )

    def coverage(self) -> float:
        """The share of the section chunks with vectors (document-level units are `document_vectors`)."""
        if self.embedder is None:
            return 1.0
        pending = self.pending_sections()
        if pending == 0:
            return 1.0
        embedded = self.embedded_chunks()
        return embedded / (embedded + pending)

    def waiting_sections(self, keys: Iterable[tuple[str, int]]) -> set[tuple[str, int]]:
        """Of these sections, those still without vectors; a document's own vector stands in for its waiting
        sections (hybrid.fuse scores them by it), so those are not waiting."""
        keys = set(keys)
        if not keys:
            return set()
        rows = self.db.rows(
            "select distinct c.doc_id, c.section_idx from mcp_docs_chunks c where c.embedding is null "
            "and c.doc_id = any(%s) and not exists (select 1 from mcp_docs_doc_chunks u "
            "where u.doc_id = c.doc_id and u.embedding is not null)",
            (sorted({doc_id for doc_id, _ in keys}),),
        )
        return {(r[0], int(r[1])) for r in rows} & keys

    def status(self) -> dict[str, Any]:
        counts = self.db.rows(
            "select count(*) filter (where embedding is not null), count(*) filter (where embedding is null and not "
            "failed), count(*) filter (where failed), count(distinct doc_id) from mcp_docs_chunks"
        )[0]
        embedded, pending, failed, documents = (int(n) for n in counts)
        documents_ready, documents_total = self.document_vectors()
        to_embed = pending + documents_total - documents_ready
        rate = self.last_rate or float(self.db.meta("rate") or 0) or None
        chosen = self.chosen_for()
        return {
            "model": self.embedder.model_id if self.embedder else None,
            "dimension": self.db.dim or (int(self.db.meta("dim") or 0) or None),
            "documents": documents,
            "chunks": embedded + pending + failed,
            "embedded": embedded,
            "pending": pending if self.embedder else 0,
            "failed": failed,
            "coverage_percent": round(100.0 * embedded / (embedded + to_embed), 1) if embedded + to_embed else 100.0,
            "eta_seconds": math.ceil(to_embed / rate) if rate and to_embed and self.embedder else None,
            "ready": self.ready(),
            "running": self.busy,
            "rate_chunks_per_s": round(rate, 1) if rate else None,
            "error": self.error or self.db.meta("error"),
            "path": self.db.where,
            "model_chosen_for": chosen.describe() if chosen else None,
            "document_vectors": documents_ready,
            "documents_to_embed": documents_total,
        }

    # -- search: a document's own vector while its sections wait -----------------------------------
    def document_hits(self, query: np.ndarray, limit: int, where: str, args: list[Any]) -> list[VectorHit]:
        """The nearest document-level vectors of the documents whose sections still wait for theirs (exact
        distances: one per document); [] once every section has its vector, so a fully embedded index ranks by
        sections alone, as before. `where`/`args`: the folder and tag filters over `d` (store._filters)."""
        dim = self.db.dim
        if dim is None or self.pending_sections() == 0:
            return []
        cast = f"vector({int(dim)})"
        vector = vector_text(query)
        rows = self.db.rows(
            f"select u.doc_id, u.section_idx, 1 - (u.embedding::{cast} <=> %s::{cast}), u.text, u.prefix_len, "
            "d.title, d.tags, s.heading, s.heading_path, s.line_start, s.line_end "
            "from mcp_docs_doc_chunks u join mcp_docs_documents d on d.id = u.doc_id "
            "join mcp_docs_sections s on s.doc_id = u.doc_id and s.idx = u.section_idx "
            f"{where + ' and' if where else 'where'} u.embedding is not null and exists "
            "(select 1 from mcp_docs_chunks p where p.doc_id = u.doc_id and p.embedding is null) "
            f"order by u.embedding::{cast} <=> %s::{cast} limit %s",
            [vector, *args, vector, limit],
        )
        return [vector_hit(r, level="document") for r in rows]


def _forget_vectors(conn: Any) -> None:
    """Another model's vectors: every chunk and unit waits again (a failed text may pass with the new model)."""
    conn.execute("drop index if exists mcp_docs_chunks_hnsw")
    conn.execute("delete from mcp_docs_meta where key in ('dim', 'rate', 'error')")
    for table in ("mcp_docs_chunks", "mcp_docs_doc_chunks"):
        conn.execute(f"update {table} set embedding = null, failed = false")


def language_tokens(db: Database) -> dict[str, int]:
    """Estimated tokens of text per language code (what index/model_choice.py weighs, with the documents)."""
    return {str(r[0]): int(r[1]) for r in db.rows("select lang, sum(tokens) from mcp_docs_documents group by lang")}


def follow_languages(settings: Settings, vectors: PgVectorWrites, worker: EmbeddingWorker, last_why: str) -> str:
    """After a sync, as on the embedded store (EmbeddedStore.follow_languages): the model is decided once per index
    from the collection's language mix and changed only when that mix clearly changed; a new model's vectors replace
    the old ones. The worker is stopped while the model changes (its thread writes the vectors) and started again by
    the caller. Returns the sentence logged (once per reason)."""
    if vectors.embedder is None:
        return last_why
    mix = LanguageMix.of(vectors.catalog.language_counts(), language_tokens(vectors.db))
    current = model_name(vectors.embedder.model_id)
    has_vectors = vectors.embedded_chunks() > 0 or vectors.document_vectors()[0] > 0
    choice = choose(settings, mix, current, vectors.chosen_for(), has_vectors)
    if choice.why and choice.why != last_why:
        log.info("%s", choice.why)
    if choice.model is None or choice.model == current:
        if choice.record:
            vectors.set_chosen_for(mix)
        return choice.why or last_why
    embedder, error = choose_embedder(settings, None, None, choice.model)
    if embedder is None:
        log.warning("cannot embed with %s (%s): keeping %s", choice.model, error, current)
        return choice.why
    chunks = vectors.status()["chunks"]
    if chunks:
        log.info("its %s will be embedded again", plural(chunks, "chunk"))
    worker.stop()
    vectors.use_model(embedder)
    vectors.set_chosen_for(mix)
    return choice.why


def vector_text(v: np.ndarray) -> str:
    """pgvector's text form of a vector."""
    return "[" + ",".join(f"{x:.7g}" for x in np.asarray(v, dtype=np.float32).ravel()) + "]"
