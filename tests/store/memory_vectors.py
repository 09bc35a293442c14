"""Vectors for the in-memory store (memory_store.py), in a dict: the proof that the one embedding worker
(index/embedding_worker.py) fills any store implementing `store.api.VectorWriter`, and that the search pipeline reads
any `store.api.VectorSearch`. Exact cosines with numpy; chunks and document units written as the store syncs (as
PostgreSQL's writer does: the documents live in the dict, not under the root the worker would read)."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mcp_docs.embedders import Embedder
from mcp_docs.index.chunking import Chunk, chunk_document, document_chunk
from mcp_docs.index.hits import VectorHit
from mcp_docs.index.model_choice import LanguageMix
from mcp_docs.markdown import ParsedDocument
from mcp_docs.store.api import PendingChunk, coverage_note, unavailable_reason


@dataclass
class Unit:
    doc_id: str
    section_idx: int
    text: str
    prefix_len: int
    hash: str
    document: bool  # the document's own unit (title, description, lead), embedded before any section
    vector: np.ndarray | None = None
    failed: bool = False

    @property
    def waiting(self) -> bool:
        return self.vector is None and not self.failed


class MemoryVectors:
    """`VectorWriter` and `VectorSearch` over a dict of units."""

    def __init__(self, catalog: Any, embedder: Embedder) -> None:
        self.catalog = catalog
        self.embedder: Embedder | None = embedder
        self.error: str | None = None
        self.busy = False
        self.last_rate: float | None = None
        self.units: dict[int, Unit] = {}
        self._next = 1
        self._chosen: LanguageMix | None = None
        self._lock = threading.Lock()

    # -- written as the store syncs --------------------------------------------------------------
    def write(self, doc_id: str, parsed: ParsedDocument) -> None:
        """The document's chunks and unit, keeping the vectors of unchanged texts."""
        assert self.embedder is not None
        with self._lock:
            kept = {u.hash: u.vector for u in self.units.values() if u.doc_id == doc_id and u.vector is not None}
            self._drop(doc_id)
            unit = document_chunk(parsed, self.embedder.max_chars)
            for chunk, document in [*((c, False) for c in chunk_document(parsed, self.embedder.max_chars))] + (
                [(unit, True)] if unit else []
            ):
                self._add(doc_id, chunk, document, kept.get(chunk.hash))

    def delete(self, doc_id: str) -> None:
        with self._lock:
            self._drop(doc_id)

    def _add(self, doc_id: str, chunk: Chunk, document: bool, vector: np.ndarray | None) -> None:
        self.units[self._next] = Unit(doc_id, chunk.section_idx, chunk.text, chunk.prefix_len, chunk.hash, document)
        self.units[self._next].vector = vector
        self._next += 1

    def _drop(self, doc_id: str) -> None:
        for uid in [uid for uid, u in self.units.items() if u.doc_id == doc_id]:
            del self.units[uid]

    # -- VectorWriter ------------------------------------------------------------------------------
    def refresh(self) -> None:
        pass

    def on_sync(self, changed_ids: list[str], deleted_ids: list[str]) -> None:
        pass

    def dirty(self) -> set[str]:
        return set()

    def store_documents(self, prepared: Sequence[tuple[str, str | None, ParsedDocument | None]]) -> None:
        raise NotImplementedError("chunked as the store syncs")

    def pending_chunks(self) -> int:
        return sum(u.waiting for u in self.units.values())

    def pending(self) -> int:
        return self.pending_chunks()

    def pending_batch(self, limit: int, docs: Sequence[str] = (), folders: Sequence[str] = ()) -> list[PendingChunk]:
        def rank(uid: int, u: Unit) -> tuple[int, int, int]:
            folder = u.doc_id.rpartition("/")[0]
            return (
                list(docs).index(u.doc_id) if u.doc_id in docs else len(docs),
                list(folders).index(folder) if folder in folders else len(folders),
                -uid,
            )

        with self._lock:
            for document in (True, False):  # every document's own unit before any section
                waiting = sorted(
                    ((uid, u) for uid, u in self.units.items() if u.waiting and u.document == document),
                    key=lambda pair: rank(*pair),
                )
                if waiting:
                    return [(-uid if document else uid, u.text) for uid, u in waiting[:limit]]
        return []

    def store_vectors(self, pairs: Sequence[tuple[int, np.ndarray]]) -> None:
        with self._lock:
            for uid, vector in pairs:
                unit = self.units.get(abs(uid))
                if unit is None or not unit.waiting:
                    continue
                for same in self.units.values():  # a text is embedded once
                    if same.hash == unit.hash and same.waiting:
                        same.vector = np.asarray(vector, dtype=np.float32)

    def mark_failed(self, chunk_id: int) -> None:
        self.units[abs(chunk_id)].failed = True

    def doc_of(self, chunk_id: int) -> str:
        unit = self.units.get(abs(chunk_id))
        return unit.doc_id if unit else "?"

    def save_rate(self) -> None:
        pass

    def set_error(self, error: str | None) -> None:
        self.error = error

    def chosen_for(self) -> LanguageMix | None:
        return self._chosen

    def set_chosen_for(self, mix: LanguageMix) -> None:
        self._chosen = mix

    def close_thread_connection(self) -> None:
        pass

    # -- VectorSearch ------------------------------------------------------------------------------
    def close(self) -> None:
        pass

    def embedded_chunks(self) -> int:
        return sum(u.vector is not None for u in self.units.values() if not u.document)

    def document_vectors(self) -> tuple[int, int]:
        units = [u for u in self.units.values() if u.document and not u.failed]
        return sum(u.vector is not None for u in units), len(units)

    def ready(self) -> bool:
        return any(u.vector is not None for u in self.units.values())

    def coverage(self) -> float:
        sections = [u for u in self.units.values() if not u.document and not u.failed]
        waiting = sum(u.vector is None for u in sections)
        return 1.0 if not waiting else (len(sections) - waiting) / len(sections)

    def coverage_note(self, mode: str, covered: float | None = None) -> str | None:
        return coverage_note(self, mode, covered)

    def unavailable_reason(self) -> str | None:
        return unavailable_reason(self)

    def _standing_in(self) -> set[str]:
        return {u.doc_id for u in self.units.values() if u.document and u.vector is not None}

    def waiting_sections(self, keys: Iterable[tuple[str, int]]) -> set[tuple[str, int]]:
        standing_in = self._standing_in()
        waiting = {(u.doc_id, u.section_idx) for u in self.units.values() if not u.document and u.vector is None}
        return {k for k in keys if k in waiting and k[0] not in standing_in}

    def status(self) -> dict[str, Any]:
        sections = [u for u in self.units.values() if not u.document]
        embedded = sum(u.vector is not None for u in sections)
        failed = sum(u.failed for u in sections)
        ready, total = self.document_vectors()
        return {
            "model": self.embedder.model_id if self.embedder else None,
            "dimension": self.embedder.dim if self.embedder else None,
            "documents": len({u.doc_id for u in sections}),
            "chunks": len(sections),
            "embedded": embedded,
            "pending": len(sections) - embedded - failed,
            "failed": failed,
            "coverage_percent": round(100.0 * self.coverage(), 1),
            "eta_seconds": None,
            "ready": self.ready(),
            "running": self.busy,
            "rate_chunks_per_s": None,
            "error": self.error,
            "path": "memory",
            "model_chosen_for": None,
            "document_vectors": ready,
            "documents_to_embed": total,
        }

    def embed_query(self, text: str) -> np.ndarray:
        assert self.embedder is not None
        return self.embedder.embed_query(text)

    def language_view(self, query: np.ndarray) -> None:
        return None

    def section_hits(
        self, query: np.ndarray, limit: int, folder: str | None = None, tags: Sequence[str] = (), view: Any = None
    ) -> list[VectorHit]:
        """Exact cosines; a document's own unit scores its first section while that document's sections wait."""
        waiting_docs = {u.doc_id for u in self.units.values() if not u.document and u.vector is None}
        q = np.asarray(query, dtype=np.float32)
        scored: list[tuple[float, Unit]] = []
        for u in list(self.units.values()):
            if u.vector is None or (u.document and u.doc_id not in waiting_docs):
                continue
            record = self.catalog.document(u.doc_id)
            if record is None or (folder and not (u.doc_id + "/").startswith(folder.rstrip("/") + "/")):
                continue
            if not set(tags) <= set(record.tags):
                continue
            cosine = float(q @ u.vector / (np.linalg.norm(q) * np.linalg.norm(u.vector) or 1.0))
            scored.append((cosine, u))
        hits: dict[tuple[str, int], VectorHit] = {}
        for cosine, u in sorted(scored, key=lambda pair: -pair[0]):
            key = (u.doc_id, u.section_idx)
            if key in hits:
                continue
            record = self.catalog.document(u.doc_id)
            section = next(s for s in self.catalog.sections(u.doc_id) if s.idx == u.section_idx)
            hits[key] = VectorHit(
                doc_id=u.doc_id,
                section_idx=u.section_idx,
                similarity=cosine,
                title=record.title,
                heading=section.heading,
                heading_path=section.heading_path,
                line_start=section.line_start,
                line_end=section.line_end,
                piece=u.text[u.prefix_len :],
                tags=tuple(record.tags),
                level="document" if u.document else "section",
            )
            if len(hits) >= limit:
                break
        return list(hits.values())
