"""The vectors search keeps in memory between searches, unit length, read once per change of the file: each
document's own vector while its sections wait for theirs (DocumentVectors), and every section chunk's once all are
embedded (ChunkVectors). numpy picks the nearest rows; SQLite then scores only those, with its own distances, so a
search answers as the SQL alone would."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

import apsw
import numpy as np

# The chunk vectors are kept in memory up to this size (52k chunks of 384 floats: 80 MB); a larger collection is
# searched through sqlite-vec's index alone, as before.
CHUNK_MATRIX_MAX_BYTES = 256 * 1024 * 1024
# numpy's cosines and sqlite-vec's differ in the last float32 bits: the candidates SQLite scores exactly are those
# within this of the limit-th nearest, so the nearest by SQLite's own distance are always among them.
CANDIDATE_MARGIN = 1e-4


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def _matrix(blobs: list[bytes]) -> np.ndarray:
    """float32 blobs (the vec0 columns) → one (rows, dim) matrix."""
    if not blobs:
        return np.zeros((0, 1), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)


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


def _cosines(holder: object, unit: np.ndarray, query: np.ndarray) -> np.ndarray:
    """The query's cosine with every row of `unit`, remembered on `holder` for the last query: with a language
    view one search asks once per language (32 times on the Obsidian help vault), and a matrix product is slow on a
    loaded machine."""
    q = np.ascontiguousarray(query, dtype=np.float32)
    key = q.tobytes()
    last: tuple[bytes, np.ndarray] | None = getattr(holder, "_last_query", None)
    if last is not None and last[0] == key:
        return last[1]
    norm = float(np.linalg.norm(q))
    # einsum's own loop, not BLAS: OpenBLAS splits this product over both cores, and on a loaded machine the
    # threads wait for each other (p90 12 ms, against 0.5 ms for one thread's loop, 8.8k rows of 384)
    sims = np.einsum("ij,j->i", unit, q / norm if norm > 0 else q)
    object.__setattr__(holder, "_last_query", (key, sims))  # frozen but for this memo; one assignment: atomic
    return sims


def _nearest(ids: np.ndarray, cosines: Callable[[], np.ndarray], allowed: np.ndarray | None, limit: int) -> list[int]:
    """The ids of the allowed rows (all, for None) nearest the query: the `limit` nearest and any within
    CANDIDATE_MARGIN of the last of them (ties and float32 rounding: SQLite orders them by its own distances)."""
    rows = np.arange(len(ids)) if allowed is None else np.flatnonzero(allowed)
    if len(rows) == 0 or limit <= 0:
        return []
    if len(rows) <= limit:
        return [int(i) for i in ids[rows]]
    sims = cosines()[rows]  # only the allowed rows are ranked: one language's few hundred of 52k, say
    cut = np.partition(sims, len(sims) - limit)[len(sims) - limit]  # the limit-th largest
    return [int(i) for i in ids[rows[sims >= cut - CANDIDATE_MARGIN]]]


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
class ChunkVectors:
    """Every embedded section chunk's vector, unit length, and the rows of each document: what `knn` scans once
    the collection's sections are all embedded. In a collection of several languages a search asks once per
    language (32 times on the Obsidian help vault), and sqlite-vec reads the whole vector table each time; one
    matrix product serves them all."""

    model: str | None  # the embedder's model id: another model's vectors are other vectors
    chunk_ids: np.ndarray  # chunks.id of each row
    hashes: tuple[str, ...]  # chunks.hash (of the text embedded) of each row
    code_of: dict[str, int]  # document id -> its number in doc_codes
    doc_codes: np.ndarray  # the document number of each row
    unit: np.ndarray  # (rows, dim) float32, each row divided by its norm
    _last_query: tuple[bytes, np.ndarray] | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def read(cls, conn: apsw.Connection, model: str | None, last: ChunkVectors | None) -> ChunkVectors:
        """What the file holds now, reading only the vectors `last` lacks: a row of the same chunk id and text (of
        the same model) is the same vector. After an edit a few chunks are new; reading all 52k vectors of the
        Obsidian help vault again took ~0.9 s (the vec0 table is slow to read row by row), listing them ~30 ms."""
        listed = [
            (int(r[0]), str(r[1]), str(r[2]))
            for r in conn.execute("select id, doc_id, hash from chunks where embedded = 1 order by id")
        ]
        old_rows: dict[tuple[int, str], int] = {}
        if last is not None and last.model == model:
            old_rows = {(int(c), h): row for row, (c, h) in enumerate(zip(last.chunk_ids, last.hashes, strict=True))}
        reused = [old_rows.get((cid, digest), -1) for cid, _, digest in listed]
        fresh = _vectors_of(conn, [cid for (cid, _, _), row in zip(listed, reused, strict=True) if row < 0])
        rows = [(item, row) for item, row in zip(listed, reused, strict=True) if row >= 0 or item[0] in fresh]
        old_at = np.fromiter((row for _, row in rows), dtype=np.int64, count=len(rows))
        reuse = old_at >= 0
        dim = next((len(blob) // 4 for blob in fresh.values()), last.unit.shape[1] if last is not None else 1)
        unit = np.zeros((len(rows), dim), dtype=np.float32)
        if last is not None and reuse.any():
            unit[reuse] = last.unit[old_at[reuse]]
        if not reuse.all():
            unit[~reuse] = _unit(_matrix([fresh[cid] for (cid, _, _), row in rows if row < 0]))
        code_of: dict[str, int] = {}
        codes = [code_of.setdefault(doc_id, len(code_of)) for (_, doc_id, _), _ in rows]
        return cls(
            model=model,
            chunk_ids=np.asarray([cid for (cid, _, _), _ in rows], dtype=np.int64),
            hashes=tuple(digest for (_, _, digest), _ in rows),
            code_of=code_of,
            doc_codes=np.asarray(codes, dtype=np.int64),
            unit=unit,
        )

    def rows_of(self, doc_ids: Iterable[str]) -> np.ndarray:
        """A mask of the rows of these documents' chunks (a language's, asked once per language and search: one
        lookup per document, then one pass over the rows)."""
        wanted = np.zeros(len(self.code_of) + 1, dtype=bool)  # the last: documents without a chunk here
        wanted[[self.code_of.get(d, -1) for d in doc_ids]] = True
        wanted[-1] = False
        return wanted[self.doc_codes]

    def nearest(self, query: np.ndarray, allowed: np.ndarray | None, limit: int) -> list[int]:
        """The chunk ids of the allowed rows nearest the query (_nearest)."""
        return _nearest(self.chunk_ids, lambda: _cosines(self, self.unit, query), allowed, limit)
