"""Vector search in a collection of several languages on PostgreSQL, as on the embedded store (index/language_mix.py):
each language is searched on its own and its cosines are put on the scale of the query's language, because a
multilingual model (multilingual-e5-small, the default for a collection that is not English-only) otherwise ranks
any page in the query's language above the page in another language that answers it (benchmarks/REPORT.md,
issue 14). The choices are the embedded store's, shared: the main language (`language_mix.main_language`), which
chunks each language's mean is taken over (`language_mix.centroid_samples`), the shifts and the merge.

What PostgreSQL reads, and how often:
- the split (each language's documents): one statement, kept READER_REFRESH_SECONDS (the embedded reader looks
  again as often) and dropped by the writer's own sync (`forget_languages`);
- the means: the embedded chunks listed, then every language's mean (`avg` of its sampled vectors) in one
  statement; kept while the split stays and the embedded chunks change by less than a tenth, looked at every
  READER_REFRESH_SECONDS (one count);
- the search: every language's nearest chunks in one statement (a `union all` of one exact k-NN per language,
  each kept to its documents by their language), and the count of sections still waiting for vectors (as before).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

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
from ..embedded.vector_search import READER_REFRESH_SECONDS
from .vector_writes import vector_text

if TYPE_CHECKING:
    from ...embedders import Embedder
    from .database import Database

MAX_K = 1000  # pgvector's largest hnsw.ef_search (store.MAX_K)

# (main language, the other languages' document ids), or None for a collection in one language
Split = tuple[str, dict[str, list[str]]] | None


class PgLanguageView:
    """The language view of `PgVectors` (store.py), which provides what is declared here."""

    if TYPE_CHECKING:
        db: Database
        embedder: Embedder | None

        def embedded_chunks(self) -> int: ...
        def pending_sections(self) -> int: ...
        def document_hits(self, query: np.ndarray, limit: int, where: str, args: list[Any]) -> list[VectorHit]: ...
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
        ) -> list[tuple[Any, ...]] | None: ...

    _split: tuple[float, Split] | None = None  # (when read, the split)
    _centroids: CentroidCache | None = None  # made on first use: one per store, not shared by the class

    def language_view(self, query: np.ndarray) -> LanguageView | None:
        """For a collection in several languages, where each document is and what each language's cosines gain for
        this query (language_mix); None for a collection in one language, where cosines are used as they are."""
        multilingual = getattr(self.embedder, "multilingual", True)
        return view_of(query, multilingual, self._language_split() if multilingual else None, self.language_centroids)

    def forget_languages(self) -> None:
        """The writer synced: its documents' languages are read again on the next search."""
        self._split = None

    def _language_split(self) -> Split:
        """(the language of most documents, the ids of the others' documents per language), or None for a
        collection in one language: the documents' languages as last indexed, in one statement."""
        kept = self._split
        now = time.monotonic()
        if kept is not None and now - kept[0] < READER_REFRESH_SECONDS:
            return kept[1]
        rows = self.db.rows(
            'select lang, count(*), array_agg(id order by id collate "C") from mcp_docs_documents group by lang'
        )
        main = main_language({str(r[0]): int(r[1]) for r in rows})
        split = None if main is None else (main, {str(r[0]): list(r[2]) for r in rows if r[0] != main})
        self._split = (now, split)
        return split

    def language_centroids(self, main: str, others: dict[str, list[str]]) -> dict[str, np.ndarray]:
        """Each language's mean chunk vector over the chunks `language_mix.centroid_samples` picks, as the embedded
        store's (VectorQueries.language_centroids). Kept while the languages stay and the embedded chunks change
        by less than a tenth, looked at every few seconds."""
        if self._centroids is None:
            self._centroids = CentroidCache(READER_REFRESH_SECONDS)
        return self._centroids.get(main, others, self.embedded_chunks, lambda: self._centroids_of(main, others))

    def _centroids_of(self, main: str, others: dict[str, list[str]]) -> dict[str, np.ndarray]:
        lang_of = {doc_id: lang for lang, ids in others.items() for doc_id in ids}
        chunks = [
            (int(cid), str(doc_id), lang_of.get(doc_id, main))
            for cid, doc_id in self.db.rows(
                "select id, doc_id from mcp_docs_chunks where embedding is not null order by id"
            )
        ]
        samples = centroid_samples(chunks, MIN_CENTROID_CHUNKS)
        centroids: dict[str, np.ndarray] = {}
        dim = self.db.dim
        if samples and dim is not None:
            ids = [cid for lang_ids in samples.values() for cid in lang_ids]
            langs = [lang for lang, lang_ids in samples.items() for _ in lang_ids]
            # pgvector's avg: each language's mean computed in the database, one vector of it returned
            for lang, mean in self.db.rows(
                f"select s.lang, avg(c.embedding::vector({int(dim)}))::text from unnest(%s::bigint[], %s::text[]) "
                "s(id, lang) join mcp_docs_chunks c on c.id = s.id where c.embedding is not null group by s.lang",
                (ids, langs),
            ):
                centroids[str(lang)] = np.asarray(json.loads(mean), dtype=np.float32)
        return centroids

    def language_section_hits(
        self, query: np.ndarray, limit: int, where: str, args: list[Any], view: LanguageView
    ) -> list[VectorHit]:
        """Each language's nearest chunks, grouped to sections, its cosines shifted (language_mix.merge): every
        language's exact k-NN in one statement, each kept to its documents by their language (`where`/`args`: the
        folder and tag filters over `d`, store._filters)."""
        dim = self.db.dim
        if dim is None:
            return []
        k = max(1, min(limit * 3, MAX_K))
        cast = f"vector({int(dim)})"
        vector = vector_text(query)
        languages = [view.main, *view.others]
        # the kept vectors' candidates scored alone when every section is embedded (vector_memory.py), else the
        # exact k-NN of every vector
        rows = self.kept_language_rows(query, k, limit, where, args, view, vector, cast)
        waiting = False
        if rows is None:
            rows = self._exact_language_rows(k, where, args, view, vector, cast)
            # a document's own vector where its sections still wait: one count finds none once embedding is done
            # (while it runs, one more statement per language)
            waiting = self.pending_sections() > 0
        of_language: dict[int, list[tuple[Any, ...]]] = {}  # one pass over the rows, not one per language
        for r in rows:
            of_language.setdefault(r[0], []).append(r)
        per_language: dict[str, list[VectorHit]] = {}
        for i, lang in enumerate(languages):
            sections = best_per_section((vector_hit(r[1:]) for r in of_language.get(i, ())), limit)
            documents = (
                self._language_document_hits(query, limit, where, args, i == 0, lang, list(view.others))
                if waiting
                else []
            )
            per_language[lang] = with_document_hits(sections, documents, limit)
        return merge(per_language, view.shifts, limit)

    def _exact_language_rows(
        self, k: int, where: str, args: list[Any], view: LanguageView, vector: str, cast: str
    ) -> list[tuple[Any, ...]]:
        """Every language's exact k-NN in one statement, each kept to its documents by their language: (language
        number, the section's columns) per row."""
        languages = [view.main, *view.others]
        filters = where.removeprefix("where ")
        # Exact distances, each language over its own chunks, as the embedded store's: `c.embedding <=> q.v` is not
        # the HNSW index's expression, so the index (which filters after its cut, and would leave a language's
        # search short) is never used here. With the vectors kept in their rows (database.py, storage main) this
        # reads ~10 ms on the OpenTelemetry docs' 8,777 chunks; out of line, 40 ms went to reading them back.
        branches: list[str] = []
        params: list[Any] = []
        for i, lang in enumerate(languages):
            own = "d.lang <> all(%s::text[])" if i == 0 else "d.lang = %s"
            branches.append(
                f"(select {i} as l, c.id, c.embedding <=> q.v as dist from mcp_docs_chunks c "
                f"join mcp_docs_documents d on d.id = c.doc_id cross join q where {own} "
                f"{'and ' + filters if filters else ''} and c.embedding is not null order by dist, c.id limit %s)"
            )
            params += [list(view.others) if i == 0 else lang, *args, k]
        return self.db.rows(
            f"with q as materialized (select %s::{cast} as v) "
            "select n.l, c.doc_id, c.section_idx, 1 - n.dist, c.text, c.prefix_len, d.title, d.tags, s.heading, "
            "s.heading_path, s.line_start, s.line_end from (" + " union all ".join(branches) + ") n "
            "join mcp_docs_chunks c on c.id = n.id join mcp_docs_documents d on d.id = c.doc_id "
            "join mcp_docs_sections s on s.doc_id = c.doc_id and s.idx = c.section_idx "
            "order by n.l, n.dist, n.id",
            [vector, *params],
        )

    def _language_document_hits(
        self,
        query: np.ndarray,
        limit: int,
        where: str,
        args: list[Any],
        main: bool,
        lang: str,
        others: Sequence[str],
    ) -> list[VectorHit]:
        own = "d.lang <> all(%s::text[])" if main else "d.lang = %s"
        return self.document_hits(
            query, limit, f"{where} and {own}" if where else f"where {own}", [*args, list(others) if main else lang]
        )
