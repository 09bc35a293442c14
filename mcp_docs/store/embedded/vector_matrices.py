"""The vectors search keeps in memory between searches, unit length, read once per change of the file: each
document's own vector while its sections wait for theirs (DocumentVectors), and every section chunk's once all are
embedded (ChunkVectors). numpy picks the nearest rows; SQLite then scores only those, with its own distances, so a
search answers as the SQL alone would."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

import apsw
import numpy as np

from ...index.chunk_matrix import (
    CANDIDATE_MARGIN,
    CHUNK_MATRIX_MAX_BYTES,
    ChunkMatrix,
    float32_matrix,
    nearest_rows,
    query_cosines,
    unit_rows,
)

# what vector_search.py and the tests import from here
__all__ = ["CANDIDATE_MARGIN", "CHUNK_MATRIX_MAX_BYTES", "ChunkVectors", "DocumentVectors"]

# The pure pieces are shared with the PostgreSQL store (index/chunk_matrix.py); their old names are kept here.
_unit = unit_rows
_matrix = float32_matrix
_cosines = query_cosines
_nearest = nearest_rows


def _vectors_of(conn: apsw.Connection, chunk_ids: list[int]) -> dict[int, bytes]:
    """The vec table's float32 blobs of these chunks (a join from the list: sqlite-vec looks each up)."""
    if not chunk_ids:
        return {}
    return {
        int(cid): bytes(blob)
        for cid, blob in conn.execute(
            "select v.chunk_id, v.embedding from json_each(?) j join vec v on v.chunk_id = j.value",
            (json.dumps(chunk_ids),),
        )
    }


@dataclass(frozen=True)
class DocumentVectors:
    """The document-level vectors, unit length, one row per embedded document unit, and which of those documents
    still have a section waiting for its vector: what `_document_hits` scans, read once per change of the file."""

    model: str | None  # the embedder's model id: another model's vectors are other vectors
    units: list[tuple[int, str, str]]  # (doc_chunks.id, document id, text hash) of each row
    unit_ids: np.ndarray  # doc_chunks.id of each row
    row_of: dict[str, int]  # document id -> row
    unit: np.ndarray  # (rows, dim) float32, each row divided by its norm (0 rows stay 0)
    waiting: np.ndarray  # bool per row: the document has a chunk without its vector
    _last_query: tuple[bytes, np.ndarray] | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def read(cls, conn: apsw.Connection, model: str | None, last: DocumentVectors | None) -> DocumentVectors:
        """What the file holds now; `last`'s matrix again when the embedded units are the same (the same ids and
        texts, of the same model: the same vectors), as after a batch of section chunks, so that a search while
        the worker embeds sections reads only which documents still wait (~20 ms, not ~90 ms on the Obsidian
        help vault)."""
        units = [
            (int(r[0]), str(r[1]), str(r[2]))
            for r in conn.execute("select id, doc_id, hash from doc_chunks where embedded = 1 order by id")
        ]
        if last is None or last.model != model or last.units != units:
            last = cls._read_vectors(conn, model)
        waiting_docs = {str(r[0]) for r in conn.execute("select distinct doc_id from chunks where embedded = 0")}
        waiting = np.fromiter(
            (doc_id in waiting_docs for _, doc_id, _ in last.units), dtype=bool, count=len(last.units)
        )
        return replace(last, waiting=waiting)

    @classmethod
    def _read_vectors(cls, conn: apsw.Connection, model: str | None) -> DocumentVectors:
        units: list[tuple[int, str, str]] = []
        blobs: list[bytes] = []
        for unit_id, doc_id, digest, blob in conn.execute(
            "select u.id, u.doc_id, u.hash, v.embedding from doc_chunks u join doc_vec v on v.chunk_id = u.id "
            "where u.embedded = 1 order by u.id"
        ):
            units.append((int(unit_id), str(doc_id), str(digest)))
            blobs.append(bytes(blob))  # the vec0 column holds float32 blobs
        return cls(
            model=model,
            units=units,
            unit_ids=np.asarray([u[0] for u in units], dtype=np.int64),
            row_of={doc_id: row for row, (_, doc_id, _) in enumerate(units)},
            unit=_unit(_matrix(blobs)),
            waiting=np.zeros(len(units), dtype=bool),
        )

    def rows_of(self, doc_ids: Iterable[str]) -> np.ndarray:
        """A mask of the rows of these documents."""
        mask = np.zeros(len(self.unit_ids), dtype=bool)
        rows = [row for d in doc_ids if (row := self.row_of.get(d)) is not None]
        mask[rows] = True
        return mask

    def cosines(self, query: np.ndarray) -> np.ndarray:
        return _cosines(self, self.unit, query)

    def nearest(self, query: np.ndarray, allowed: np.ndarray, limit: int) -> list[int]:
        """The unit ids of the allowed rows nearest the query (_nearest)."""
        return _nearest(self.unit_ids, lambda: self.cosines(query), allowed, limit)


@dataclass(frozen=True)
class ChunkVectors(ChunkMatrix):
    """Every embedded section chunk's vector, unit length, and the rows of each document: what `knn` scans once
    the collection's sections are all embedded (index/chunk_matrix.py)."""

    @classmethod
    def read(cls, conn: apsw.Connection, model: str | None, last: ChunkVectors | None) -> ChunkVectors:
        """What the file holds now, reading only the vectors `last` lacks (ChunkMatrix.assemble; the vec0 table is
        slow to read row by row)."""
        listed = [
            (int(r[0]), str(r[1]), str(r[2]))
            for r in conn.execute("select id, doc_id, hash from chunks where embedded = 1 order by id")
        ]
        return cls.assemble(listed, model, last, lambda ids: _vectors_of(conn, ids))
