"""Writing the vector store: a synced document's chunks and its document-level unit (with the vectors of texts
already embedded elsewhere reused), the queue the embedding worker takes its batches from, the vectors it
returns, and the state kept with them (the model's language mix, the last rate, the last error). Split from
vector_store.py: `VectorWrites` is mixed into `VectorStore` and writes through its connections."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import apsw
import numpy as np

from ...index.chunking import Chunk, chunk_document, document_chunk
from ...index.model_choice import LanguageMix
from ...markdown import ParsedDocument
from ..api import PendingChunk
from .catalog import folder_of

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from ...embedders import Embedder

FAILED = -1  # chunks.embedded for a chunk the embedder rejects on its own: skipped, not retried forever


class VectorWrites:
    """The writing half of `VectorStore` (vector_store.py), which provides what is declared here."""

    if TYPE_CHECKING:
        embedder: Embedder | None
        error: str | None
        last_rate: float | None
        _dirty: set[str]
        _has_vectors: bool
        _state_lock: threading.Lock

        def _conn(self) -> apsw.Connection: ...
        def _write(self) -> AbstractContextManager[apsw.Connection]: ...
        def _meta(self, key: str) -> str | None: ...
        def _set_meta(self, key: str, value: str | None) -> None: ...
        def _vec_exists(self, conn: apsw.Connection | None = None) -> bool: ...
        def _doc_vec_exists(self, conn: apsw.Connection | None = None) -> bool: ...
        def _ensure_vec_table(self, conn: apsw.Connection, dim: int) -> None: ...
        def _count_chunked(self, batch: list[str]) -> None: ...

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
