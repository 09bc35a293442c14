"""The section chunk vectors a store keeps in memory between searches, unit length, whatever database holds them
(the embedded store's sqlite-vec file, PostgreSQL's pgvector column): numpy picks the nearest rows of the allowed
documents, and the store then scores only those with its own distance function, so a search answers as its SQL
alone would. In a collection of several languages a search asks once per language (36 times on the Obsidian help
vault), and an exact search in the database reads every vector each time; one matrix product serves them all.

Store-independent: a store lists its embedded chunks and reads the vectors of the chunks asked for
(`ChunkMatrix.assemble`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Self

import numpy as np

# The chunk vectors are kept in memory up to this size (52k chunks of 384 floats: 80 MB); a larger collection is
# searched through the database alone, as before.
CHUNK_MATRIX_MAX_BYTES = 256 * 1024 * 1024
# numpy's cosines and the database's differ in the last float32 bits: the candidates the database scores exactly
# are those within this of the limit-th nearest, so the nearest by its own distance are always among them.
CANDIDATE_MARGIN = 1e-4

# (chunk id, document id, hash of the text embedded) of each embedded chunk, by id
Listed = list[tuple[int, str, str]]
# the native float32 blobs of the chunks asked for, by chunk id (a chunk gone since it was listed is left out)
VectorsOf = Callable[[list[int]], dict[int, bytes]]


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def float32_matrix(blobs: list[bytes]) -> np.ndarray:
    """float32 blobs → one (rows, dim) matrix."""
    if not blobs:
        return np.zeros((0, 1), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)


def query_cosines(holder: object, unit: np.ndarray, query: np.ndarray) -> np.ndarray:
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


def nearest_rows(
    ids: np.ndarray, cosines: Callable[[], np.ndarray], allowed: np.ndarray | None, limit: int
) -> list[int]:
    """The ids of the allowed rows (all, for None) nearest the query: the `limit` nearest and any within
    CANDIDATE_MARGIN of the last of them (ties and float32 rounding: the database orders them by its own
    distances)."""
    rows = np.arange(len(ids)) if allowed is None else np.flatnonzero(allowed)
    if len(rows) == 0 or limit <= 0:
        return []
    if len(rows) <= limit:
        return [int(i) for i in ids[rows]]
    sims = cosines()[rows]  # only the allowed rows are ranked: one language's few hundred of 52k, say
    cut = np.partition(sims, len(sims) - limit)[len(sims) - limit]  # the limit-th largest
    return [int(i) for i in ids[rows[sims >= cut - CANDIDATE_MARGIN]]]


@dataclass(frozen=True)
class ChunkMatrix:
    """Every embedded section chunk's vector, unit length, and the rows of each document."""

    model: str | None  # the embedder's model id: another model's vectors are other vectors
    chunk_ids: np.ndarray  # the chunk id of each row
    hashes: tuple[str, ...]  # the hash (of the text embedded) of each row
    code_of: dict[str, int]  # document id -> its number in doc_codes
    doc_codes: np.ndarray  # the document number of each row
    unit: np.ndarray  # (rows, dim) float32, each row divided by its norm
    _last_query: tuple[bytes, np.ndarray] | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def assemble(cls, listed: Listed, model: str | None, last: ChunkMatrix | None, vectors_of: VectorsOf) -> Self:
        """The matrix of the chunks `listed`, reading (`vectors_of`) only the vectors `last` lacks: a row of the
        same chunk id and text (of the same model) is the same vector. After an edit a few chunks are new; reading
        all 52k vectors of the Obsidian help vault again took ~0.9 s from sqlite-vec, listing them ~30 ms."""
        old_rows: dict[tuple[int, str], int] = {}
        if last is not None and last.model == model:
            old_rows = {(int(c), h): row for row, (c, h) in enumerate(zip(last.chunk_ids, last.hashes, strict=True))}
        reused = [old_rows.get((cid, digest), -1) for cid, _, digest in listed]
        fresh = vectors_of([cid for (cid, _, _), row in zip(listed, reused, strict=True) if row < 0])
        rows = [(item, row) for item, row in zip(listed, reused, strict=True) if row >= 0 or item[0] in fresh]
        old_at = np.fromiter((row for _, row in rows), dtype=np.int64, count=len(rows))
        reuse = old_at >= 0
        dim = next((len(blob) // 4 for blob in fresh.values()), last.unit.shape[1] if last is not None else 1)
        unit = np.zeros((len(rows), dim), dtype=np.float32)
        if last is not None and reuse.any():
            unit[reuse] = last.unit[old_at[reuse]]
        if not reuse.all():
            unit[~reuse] = unit_rows(float32_matrix([fresh[cid] for (cid, _, _), row in rows if row < 0]))
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
        """The chunk ids of the allowed rows nearest the query (nearest_rows)."""
        return nearest_rows(self.chunk_ids, lambda: query_cosines(self, self.unit, query), allowed, limit)
