"""Search over the vector store: the query's vector (cached), KNN over the chunks with the folder and tag filters
applied before the cut, the language view of a collection in several languages, and the section, document and
chunk hits the fusion ranks. Split from vector_store.py (schema, freshness, chunk writing, the queue, status):
`VectorQueries` is mixed into `VectorStore` and reads its connections and state."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import apsw
import numpy as np

from ...embedders import Embedder, EmbedderError
from ...index.hits import VectorHit, best_per_section, vector_hit, with_document_hits
from ...index.language_mix import (
    MIN_CENTROID_CHUNKS,
    CentroidCache,
    LanguageView,
    centroid_samples,
    main_language,
    merge,
    view_of,
)
from .vector_matrices import CHUNK_MATRIX_MAX_BYTES, ChunkVectors, DocumentVectors

if TYPE_CHECKING:
    from ...index.model_choice import LanguageMix
    from .catalog import Catalog

EXACT_FILTER_MAX = 3000  # filtered search: exact distances over the allowed chunks up to this many
MAX_K = 4096  # sqlite-vec's limit
QUERY_CACHE_SIZE = 256
# A reader looks again this often for what the writer changed (its refresh, the language centroids).
READER_REFRESH_SECONDS = 5.0
# The distances of the chunks listed (JSON ids), nearest first. A join from the list: `chunk_id in (select ...)`
# made sqlite-vec read every vector of the table (3.6 ms against 0.36 for 60 ids among 9.6k).
EXACT_DISTANCES = (
    "select v.chunk_id, vec_distance_cosine(v.embedding, ?) as d from json_each(?) j "
    "join vec v on v.chunk_id = j.value order by d, v.chunk_id limit ?"
)
# Documents a search keeps to (True) or leaves out (False), by id; None: no such filter.
DocFilter = tuple[bool, Sequence[str]] | None
T = TypeVar("T")
M = TypeVar("M")  # a matrix kept between searches (vector_matrices)


class VectorQueries:
    """The search half of `VectorStore` (vector_store.py), which provides what is declared here."""

    if TYPE_CHECKING:
        catalog: Catalog
        embedder: Embedder | None
        error: str | None
        _state_lock: threading.Lock
        _query_cache: dict[str, np.ndarray]
        _centroids: CentroidCache
        _last_document_vectors: DocumentVectors | None
        _last_chunk_vectors: ChunkVectors | None

        def _conn(self) -> apsw.Connection: ...
        def _vec_exists(self, conn: apsw.Connection | None = None) -> bool: ...
        def _doc_vec_exists(self, conn: apsw.Connection | None = None) -> bool: ...
        def follow_writer(self) -> None: ...
        def chosen_for(self) -> LanguageMix | None: ...
        def embedded_chunks(self) -> int: ...
        def pending_sections(self) -> int: ...
        def _kept(self, name: str, compute: Callable[[], T]) -> T: ...

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

    def _filter_sql(
        self, folder: str | None, tags: Sequence[str], docs: DocFilter = None, doc_id: str = "c.doc_id"
    ) -> tuple[str, list[Any]]:
        """The filters as a condition on `docs d` and the document id column `doc_id`, with its arguments."""
        where: list[str] = []
        args: list[Any] = []
        if docs is not None:
            inside, ids = docs
            where.append(f"{doc_id} {'in' if inside else 'not in'} (select value from json_each(?))")
            args.append(json.dumps(ids))
        if folder:
            where.append("(d.folder = ? or substr(d.folder, 1, ?) = ?)")
            args += [folder, len(folder) + 1, folder + "/"]
        for tag in tags:
            where.append(f"{doc_id} in (select doc_id from doc_tags where tag = ?)")
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
        in_memory = self._chunk_vectors()
        if in_memory is not None:
            return self._knn_in_memory(in_memory, q, k, folder, tags, docs)
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
            rows: list[tuple[Any, ...]] = conn.execute(EXACT_DISTANCES, (q, json.dumps(allowed), k)).fetchall()
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

    def _chunk_vectors(self) -> ChunkVectors | None:
        """The chunk vectors in memory (vector_matrices.ChunkVectors) once every section is embedded, while they fit
        in CHUNK_MATRIX_MAX_BYTES; None while the worker embeds (each batch would mean reading them all again)."""
        dim = self.embedder.dim if self.embedder is not None else None
        if not dim or self.pending_sections() or self.embedded_chunks() * dim * 4 > CHUNK_MATRIX_MAX_BYTES:
            return None
        return self._kept("chunk_vectors", lambda: self._read_matrix("_last_chunk_vectors", ChunkVectors.read))

    def _read_matrix(self, last_name: str, read: Callable[[apsw.Connection, str | None, M | None], M]) -> M:
        """`read(conn, model, last)`: the matrix the file holds now, reusing what the last one read of it (kept in
        the attribute `last_name`), its rows listed and their vectors read in one snapshot of the file."""
        model = self.embedder.model_id if self.embedder is not None else None
        with self._state_lock:
            last = getattr(self, last_name)
        conn = self._conn()
        with conn:  # a savepoint: the rows listed and their vectors come from the same commit
            kept = read(conn, model, last)
        with self._state_lock:
            setattr(self, last_name, kept)
        return kept

    def _knn_in_memory(
        self, kept: ChunkVectors, q: np.ndarray, k: int, folder: str | None, tags: Sequence[str], docs: DocFilter
    ) -> list[tuple[int, float]]:
        """knn through the kept matrix: numpy picks the candidates, SQLite gives their distances (the same function
        as the filtered search's, so the answers are those of sqlite-vec's own search)."""
        allowed: np.ndarray | None = None
        if docs is not None:
            of_docs = kept.rows_of(docs[1])
            allowed = of_docs if docs[0] else ~of_docs
        if folder or tags:
            where, args = self._filter_sql(folder, tags, doc_id="d.doc_id")
            listed = kept.rows_of(
                str(r[0]) for r in self._conn().execute(f"select d.doc_id from docs d where {where}", args)
            )
            allowed = listed if allowed is None else allowed & listed
        candidates = kept.nearest(q, allowed, k)
        if not candidates:
            return []
        rows: list[tuple[Any, ...]] = self._conn().execute(EXACT_DISTANCES, (q, json.dumps(candidates), k)).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows if r[1] is not None]

    def language_view(self, query: np.ndarray) -> LanguageView | None:
        """For a collection in several languages, where each document is and what each language's cosines gain for
        this query (language_mix); None for a collection in one language, where cosines are used as they are."""
        multilingual = getattr(self.embedder, "multilingual", True)
        return view_of(query, multilingual, self._language_split() if multilingual else None, self.language_centroids)

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
        main = main_language(self.catalog.language_counts())
        if main is None:
            return None
        return main, self.catalog.documents_by_language(main)

    def language_centroids(self, main: str, others: dict[str, list[str]]) -> dict[str, np.ndarray]:
        """Each language's mean chunk vector (over at most CENTROID_SAMPLE embedded chunks, evenly spread), for
        the languages with at least MIN_CENTROID_CHUNKS; `main`'s chunks are those of no other language; only the
        chunks of translated pages when every such language has that many of them. Kept while the languages stay
        and the embedded chunks change by less than a tenth, looked at every few seconds."""
        return self._centroids.get(main, others, self.embedded_chunks, lambda: self._centroids_of(main, others))

    def _centroids_of(self, main: str, others: dict[str, list[str]]) -> dict[str, np.ndarray]:
        lang_of = {doc_id: lang for lang, ids in others.items() for doc_id in ids}
        conn = self._conn()
        chunks: list[tuple[int, str, str]] = [
            (int(cid), str(doc_id), lang_of.get(doc_id, main))
            for cid, doc_id in conn.execute("select id, doc_id from chunks where embedded = 1 order by id")
        ]
        centroids: dict[str, np.ndarray] = {}
        for lang, ids in centroid_samples(chunks, MIN_CENTROID_CHUNKS).items():
            sample = json.dumps(ids)
            blobs = [
                bytes(r[0])  # the vec column holds float32 blobs
                for r in conn.execute(
                    "select v.embedding from json_each(?) j join vec v on v.chunk_id = j.value", (sample,)
                )
            ]
            if blobs:
                centroids[lang] = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1).mean(axis=0)
        return centroids

    def _section_hits(
        self, query: np.ndarray, limit: int, folder: str | None, tags: Sequence[str], docs: DocFilter = None
    ) -> list[VectorHit]:
        sections = self._chunk_hits(query, limit, folder, tags, docs)
        return with_document_hits(sections, self._document_hits(query, limit, folder, tags, docs), limit)

    def _document_hits(
        self, query: np.ndarray, limit: int, folder: str | None, tags: Sequence[str], docs: DocFilter = None
    ) -> list[VectorHit]:
        """The nearest document-level vectors of the documents whose sections still wait for theirs (exact
        distances: at most one per document, a few thousand at most while they matter); [] once every section
        has its vectors, so a fully embedded index ranks by sections alone, as before.

        The vectors and which documents wait are kept between searches (DocumentVectors, until the file changes);
        numpy picks the few nearest, and SQLite scores those as before (the same distances, to the bit). Scoring
        all 6,280 in SQL, with a subquery per document, took 85 % of a hybrid search on the Obsidian help vault."""
        conn = self._conn()
        if not self._doc_vec_exists(conn) or self.pending_sections() == 0:
            return []
        kept = self._kept("document_vectors", lambda: self._read_matrix("_last_document_vectors", DocumentVectors.read))
        allowed = kept.waiting
        if docs is not None:
            allowed = allowed & kept.rows_of(docs[1]) if docs[0] else allowed & ~kept.rows_of(docs[1])
        if folder or tags:
            where, args = self._filter_sql(folder, tags)
            allowed = allowed & kept.rows_of(
                [
                    str(r[0])
                    for r in conn.execute(
                        "select c.doc_id from docs d join doc_chunks c on c.doc_id = d.doc_id where " + where, args
                    )
                ]
            )
        candidates = kept.nearest(query, allowed, limit)
        if not candidates:
            return []
        rows: list[tuple[Any, ...]] = conn.execute(
            "select u.doc_id, u.section_idx, u.text, u.prefix_len, d.title, d.tags, s.heading, s.heading_path, "
            "s.line_start, s.line_end, vec_distance_cosine(v.embedding, ?) as dist "
            "from json_each(?) j join doc_chunks u on u.id = j.value join doc_vec v on v.chunk_id = u.id "
            "join docs d on d.doc_id = u.doc_id join sections s on s.doc_id = u.doc_id and s.idx = u.section_idx "
            "where u.embedded = 1 and exists (select 1 from chunks p where p.doc_id = u.doc_id and p.embedded = 0) "
            "order by dist limit ?",
            (np.ascontiguousarray(query, dtype=np.float32), json.dumps(candidates), limit),
        ).fetchall()
        return [document_hit(r) for r in rows if r[10] is not None]

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
        # a row is (id, doc_id, section_idx, text, ...): vector_hit takes the similarity after section_idx, no id
        chunks = (vector_hit((r[1], r[2], 1.0 - dist, *r[3:])) for cid, dist in nearest if (r := by_id.get(cid)))
        return best_per_section(chunks, limit)


def document_hit(r: Sequence[Any]) -> VectorHit:
    """A document-vector hit from a row of (doc_id, section_idx, unit text, prefix length, title, tags as JSON,
    heading, heading_path, line_start, line_end, distance), as the document-vector query selects it."""
    return vector_hit((r[0], r[1], 1.0 - float(r[10]), *r[2:10]), level="document")
