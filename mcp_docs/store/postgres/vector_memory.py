"""The chunk vectors a PostgreSQL reader (and the writer's own searches) keeps in memory once every section is
embedded, as the embedded store does (index/chunk_matrix.py): in a collection of several languages each language is
searched on its own (vector_languages.py), and PostgreSQL's exact k-NN read all 52,080 vectors of the Obsidian help
vault once per language, 36 times a search (~200 ms). Here numpy picks each language's candidates, and PostgreSQL
computes the exact distances of those few only, with the same operator over the same columns, in one statement for
all languages: the answers are those of the exact search.

When the kept vectors are the database's: `mcp_docs_chunk_writes` (database.py) gains a row with each commit that
wrote chunk rows; before each search one statement reads its sum with the count of sections still waiting for
vectors (which the search asked for already). A changed sum reads the chunks listed again and the vectors of the
chunks new since (by chunk id and text hash, of the same model). While sections wait for vectors, above
CHUNK_MATRIX_MAX_BYTES, or on a database written by an mcp-docs without that table, the search is the SQL's alone."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ...index.chunk_matrix import CANDIDATE_MARGIN, CHUNK_MATRIX_MAX_BYTES, ChunkMatrix, query_cosines
from ...index.language_mix import LanguageView
from ..embedded.vector_search import READER_REFRESH_SECONDS

if TYPE_CHECKING:
    import psycopg

    from ...embedders import Embedder
    from .database import Database

READ_BATCH = 4096  # vectors read per statement when the matrix is read
# (sections waiting for their vectors, the sum of the chunk writes): one statement before each search
CHUNK_STATE = (
    "select (select count(*) from mcp_docs_chunks where embedding is null and not failed), "
    "(select coalesce(sum(n), 0) from mcp_docs_chunk_writes)"
)


def _vectors_of(conn: psycopg.Connection[Any], chunk_ids: list[int]) -> dict[int, bytes]:
    """These chunks' vectors as native float32 blobs. pgvector's binary form (`vector_send`: the dimension and a
    reserved field, two bytes each, then big-endian float4s) is read with numpy; its text form took seconds to
    parse for 52k vectors. READ_BATCH at a time, so that the rows fetched and their copies stay a few MB."""
    out: dict[int, bytes] = {}
    for start in range(0, len(chunk_ids), READ_BATCH):
        rows = conn.execute(
            "select id, vector_send(embedding) from mcp_docs_chunks where id = any(%s) and embedding is not null",
            (chunk_ids[start : start + READ_BATCH],),
        ).fetchall()
        by_size: dict[int, list[tuple[int, bytes]]] = {}
        for cid, blob in rows:
            by_size.setdefault(len(blob), []).append((int(cid), blob))
        del rows
        for size, items in by_size.items():
            raw = np.frombuffer(b"".join(data for _, data in items), dtype=np.uint8).reshape(len(items), size)
            floats = np.ascontiguousarray(raw[:, 4:]).view(">f4").astype(np.float32)
            out.update((cid, floats[i].tobytes()) for i, (cid, _) in enumerate(items))
    return out


@dataclass(frozen=True)
class _Nearest:
    """One language's allowed rows nearest the query by numpy's cosines (`_nearest_sections`)."""

    rows: np.ndarray  # the allowed rows
    sims: np.ndarray  # their cosines
    cut: float  # the cosine of the chunk that completes the `limit`-th section, or of the k-th, if first
    firsts: np.ndarray  # the cosines of each section's first chunk, up to that one


def _nearest_sections(
    kept: ChunkMatrix, sections: np.ndarray, query: np.ndarray, allowed: np.ndarray, k: int, limit: int
) -> _Nearest:
    """What `best_per_section(k nearest, limit)` reads of these rows, by numpy's cosines."""
    rows = np.flatnonzero(allowed)
    sims = query_cosines(kept, kept.unit, query)[rows]
    if len(rows) == 0:
        return _Nearest(rows, sims, np.inf, sims)
    top = np.argpartition(sims, len(sims) - k)[len(sims) - k :] if len(rows) > k else np.arange(len(rows))
    top = top[np.argsort(-sims[top], kind="stable")]
    cut = float(sims[top[-1]]) if len(rows) > k else -np.inf  # the k-th nearest, when there are more
    seen: set[int] = set()
    firsts: list[float] = []
    for at in top:
        section = int(sections[rows[at]])
        if section not in seen:
            seen.add(section)
            firsts.append(float(sims[at]))
            if len(seen) >= limit:
                cut = max(cut, float(sims[at]))
                break
    return _Nearest(rows, sims, cut, np.asarray(firsts, dtype=np.float32))


def _merged_cut(nearest: list[_Nearest], shifts: list[float], limit: int) -> float:
    """The `limit`-th best shifted cosine of every language's sections (language_mix.merge keeps those), or
    -inf when there are fewer."""
    shifted = np.concatenate([n.firsts + shift for n, shift in zip(nearest, shifts, strict=True)])
    if len(shifted) < limit:
        return -np.inf
    return float(np.partition(shifted, len(shifted) - limit)[len(shifted) - limit])


class PgChunkMemory:
    """The kept chunk vectors of `PgVectors` (store.py), which provides what is declared here."""

    if TYPE_CHECKING:
        db: Database
        embedder: Embedder | None
        _chunk_lock: threading.Lock

    # (the chunk writes' sum when read, the matrix or None when it was above the cap, each row's section number)
    _kept_chunks: tuple[int, ChunkMatrix | None, np.ndarray] | None = None
    _no_writes_table: float | None = None  # when the table was last looked for and not found; 0.0: found

    def kept_chunk_vectors(self) -> ChunkMatrix | None:
        """The chunk vectors as the database holds them now, or None (the SQL searches alone): while sections wait
        for vectors, above CHUNK_MATRIX_MAX_BYTES, or without the chunk writes' table."""
        kept = self._kept_now()
        return None if kept is None else kept[1]

    def _kept_now(self) -> tuple[int, ChunkMatrix | None, np.ndarray] | None:
        dim = self.db.dim
        if not dim or not self._chunk_writes_kept():
            return None
        pending, written = self.db.rows(CHUNK_STATE)[0]
        if pending:
            return None  # while the worker embeds, each batch would mean reading the vectors again
        model = self.embedder.model_id if self.embedder is not None else None
        with self._chunk_lock:  # one thread reads; the others then find it read
            kept = self._kept_chunks
            if kept is None or kept[0] != int(written) or (kept[1] is not None and kept[1].model != model):
                kept = self._read_chunk_vectors(dim, model, kept[1] if kept is not None else None)
                self._kept_chunks = kept
        return kept

    def _chunk_writes_kept(self) -> bool:
        """Whether the database has `mcp_docs_chunk_writes` (a writer of this version made it, and a rebuild keeps
        it) and this role may read it: once so, not asked again; asked again every READER_REFRESH_SECONDS while
        not."""
        missed = self._no_writes_table
        if missed == 0.0:
            return True
        now = time.monotonic()
        if missed is not None and now - missed < READER_REFRESH_SECONDS:
            return False
        # and may read it: a reader role granted SELECT on the tables before this version's writer added it may not
        found = bool(
            self.db.value(
                "select coalesce(has_table_privilege(to_regclass('mcp_docs_chunk_writes')::oid, 'select'), false)"
            )
        )
        self._no_writes_table = 0.0 if found else now
        return found

    def _read_chunk_vectors(
        self, dim: int, model: str | None, last: ChunkMatrix | None
    ) -> tuple[int, ChunkMatrix | None, np.ndarray]:
        """(the chunk writes' sum, the matrix) read in one snapshot, so the sum is that of the vectors read."""
        with self.db.transaction() as conn:
            conn.execute("set transaction isolation level repeatable read")
            written = int(conn.execute("select coalesce(sum(n), 0) from mcp_docs_chunk_writes").fetchall()[0][0])
            rows = conn.execute(
                "select id, doc_id, hash, section_idx from mcp_docs_chunks where embedding is not null order by id"
            ).fetchall()
            if len(rows) * dim * 4 > CHUNK_MATRIX_MAX_BYTES:
                return written, None, np.zeros(0, dtype=np.int64)
            listed = [(int(r[0]), str(r[1]), str(r[2])) for r in rows]
            matrix = ChunkMatrix.assemble(listed, model, last, lambda ids: _vectors_of(conn, ids))
        numbers: dict[tuple[str, int], int] = {}
        section_of = {int(r[0]): numbers.setdefault((str(r[1]), int(r[3])), len(numbers)) for r in rows}
        return written, matrix, np.fromiter((section_of[int(c)] for c in matrix.chunk_ids), dtype=np.int64)

    def kept_language_rows(
        self,
        query: np.ndarray,
        k: int,
        limit: int,
        where: str,
        args: list[Any],
        view: LanguageView,
        vector: str,
        cast: str,
    ) -> list[tuple[Any, ...]] | None:
        """The rows of vector_languages' exact statement (language number, then the section's columns) that
        `best_per_section(rows, limit)` reads of each language's k nearest, from the kept vectors' candidates;
        None when they are not kept."""
        state = self._kept_now()
        if state is None or state[1] is None:
            return None
        kept, sections = state[1], state[2]
        allowed: np.ndarray | None = None
        if where:  # the folder and tag filters over `d`: the documents they keep, one statement
            allowed = kept.rows_of(
                str(r[0]) for r in self.db.rows(f"select d.id from mcp_docs_documents d {where}", args)
            )
        languages = [view.main, *view.others]
        minority = kept.rows_of(doc_id for ids in view.others.values() for doc_id in ids)
        nearest = [
            _nearest_sections(
                kept,
                sections,
                query,
                (~minority if i == 0 else kept.rows_of(view.others[lang])) & (True if allowed is None else allowed),
                k,
                limit,
            )
            for i, lang in enumerate(languages)
        ]
        # Each language's candidates: the chunks that may be among what best_per_section reads of its k nearest (up
        # to the chunk completing the limit-th section), and of those, the sections that may be among the `limit`
        # the merge keeps of all languages' (shifted cosines at or above the merged cut). PostgreSQL's distances
        # and numpy's differ by less than half CANDIDATE_MARGIN, so every row the exact search's merged answer
        # reads is a candidate, and every row left out comes after them in its language's order: the statement's
        # cut over these alone gives each language a prefix of its list, and the merge the same hits (36 x 150
        # candidates were ~1,600 rows with their text for the client to build hits of, where ~50 are kept).
        shifts = [float(view.shifts.get(lang) or 0.0) for lang in languages]
        merged = _merged_cut(nearest, shifts, limit)
        numbers: list[int] = []
        candidates: list[int] = []
        for i, (near, shift) in enumerate(zip(nearest, shifts, strict=True)):
            if len(near.rows) == 0:
                continue
            keep = near.rows[near.sims >= max(near.cut, merged - shift) - CANDIDATE_MARGIN]
            numbers += [i] * len(keep)
            candidates += [int(c) for c in kept.chunk_ids[keep]]
        if not candidates:
            return []
        # The same distance as the exact statement's (`c.embedding <=> q.v`, the same cast), each language's k
        # nearest by it, ties by chunk id; of those, only what `best_per_section` reads: the first chunk of each
        # section, the first `limit` sections (36 x 150 rows with their text cost the client more than the search).
        # Then each kept chunk's section, looked up by its id (`lateral`: joined as a whole, the planner scanned
        # every section and chunk to hash-join the few thousand kept, 500 ms; `limit 1`, one row per chunk anyway,
        # keeps it from flattening the lookup into that join).
        return self.db.rows(
            f"with q as materialized (select %s::{cast} as v), "
            "n as (select x.l, c.id, c.doc_id, c.section_idx, c.embedding <=> q.v as dist "
            "from unnest(%s::int[], %s::bigint[]) x(l, id) "
            "join mcp_docs_chunks c on c.id = x.id cross join q where c.embedding is not null), "
            "k as (select * from (select n.*, row_number() over (partition by n.l order by n.dist, n.id) as place "
            "from n) p where p.place <= %s), "
            "f as (select * from (select k.*, row_number() over (partition by k.l, k.doc_id, k.section_idx "
            "order by k.dist, k.id) as nth from k) p where p.nth = 1), "
            "r as materialized (select * from (select f.*, row_number() over (partition by f.l order by f.dist, f.id) "
            "as section_place from f) p where p.section_place <= %s) "
            "select r.l, x.* from r cross join lateral (select c.doc_id, c.section_idx, 1 - r.dist, c.text, "
            "c.prefix_len, d.title, d.tags, s.heading, s.heading_path, s.line_start, s.line_end "
            "from mcp_docs_chunks c join mcp_docs_documents d on d.id = c.doc_id "
            "join mcp_docs_sections s on s.doc_id = c.doc_id and s.idx = c.section_idx where c.id = r.id limit 1) x "
            "order by r.l, r.dist, r.id",
            [vector, numbers, candidates, k, limit],
        )
