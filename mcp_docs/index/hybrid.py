"""Semantic and hybrid ranking over sections.

- semantic: KNN over chunks (filters applied before the cut), grouped to sections by
  their best chunk; the score is the cosine similarity.
- hybrid: reciprocal rank fusion of the keyword (BM25) list and the vector list, both
  filtered the same way, fused at the section; the library then groups sections to documents.

The constants are tuned on SciFact and checked on the OpenTelemetry question set
(benchmarks/semantic_eval.py; figures in benchmarks/REPORT.md).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from .hits import RankedSection
from .ranking import reciprocal_rank_fusion

if TYPE_CHECKING:
    from ..library import Library
    from .vectors import VectorHit, VectorStore

CANDIDATES = 50  # per side, at least
# Tuned on SciFact test and checked on the OpenTelemetry questions (benchmarks/REPORT.md,
# "Semantic and hybrid search"): equal weights with a small RRF k (top ranks count more than
# with the usual k=60) won on both sets: SciFact nDCG@10 0.711 → 0.728, OTel MRR 0.70 → 0.77.
W_KEYWORD = 1.0
W_VECTOR = 1.0
HYBRID_RRF_K = 10
# Vector hits below the embedder's `min_similarity` (MiniLM: 0.4) are left out of the fused list:
# the vector side always returns k rows, even for a query nothing in the corpus is about.
MIN_SIMILARITY = 0.0

Key = tuple[str, int]


def _ranked(hit: "VectorHit") -> RankedSection:
    return RankedSection(
        hit.doc_id, hit.section_idx, hit.title, hit.heading, hit.heading_path,
        hit.line_start, hit.line_end, hit.piece, hit.tags,
    )


def fuse(
    keyword_hits: list[tuple[RankedSection, float]],
    vector_hits: "list[VectorHit]",
    limit: int,
    *,
    waiting: Collection[Key] = frozenset(),
    w_keyword: float = W_KEYWORD,
    w_vector: float = W_VECTOR,
    min_similarity: float = MIN_SIMILARITY,
    rrf_k: int = HYBRID_RRF_K,
) -> list[tuple[RankedSection, float]]:
    """Reciprocal rank fusion of both lists at the section; keyword hits keep their full body for snippets.

    `waiting`: sections still without vectors (embedding under way). The vector list cannot rank them, so a
    keyword hit among them counts on the vector side at its keyword rank: it neither gains nor loses from
    having no vectors yet, and with no vectors at all the fused order is the keyword order. Their partial
    or stale vector hits (a section half embedded, a document being re-chunked) are left out.
    """
    vector_hits = [
        h for h in vector_hits if h.similarity >= min_similarity and (h.doc_id, h.section_idx) not in waiting
    ]
    sections: dict[Key, RankedSection] = {}
    for s, _ in keyword_hits:
        sections.setdefault((s.doc_id, s.section_idx), s)
    for h in vector_hits:
        if (h.doc_id, h.section_idx) not in sections:
            sections[(h.doc_id, h.section_idx)] = _ranked(h)
    keyword_keys = [(s.doc_id, s.section_idx) for s, _ in keyword_hits]
    vector_keys = [(h.doc_id, h.section_idx) for h in vector_hits]
    # The vector side in keyword order for the waiting sections: each stands in at its own keyword rank.
    stand_ins = [(rank, key) for rank, key in enumerate(keyword_keys, start=1) if key in waiting]
    scores = dict(reciprocal_rank_fusion([(keyword_keys, w_keyword), (vector_keys, w_vector)], k=rrf_k))
    for rank, key in stand_ins:
        scores[key] += w_vector / (rrf_k + rank)
    fused = sorted(scores.items(), key=lambda kv: -kv[1])
    return [(sections[key], score) for key, score in fused[:limit]]  # type: ignore[index]


def search(
    library: "Library",
    store: "VectorStore",
    query: str,
    limit: int,
    mode: str,
    folder: str | None,
    tags: list[str],
    *,
    candidates: int = CANDIDATES,
) -> list[tuple[RankedSection, float]]:
    """Sections best first with their score (similarity for semantic, fused RRF score for hybrid).

    `limit` is how many sections the caller groups into documents (at least 50); each side gets
    `max(candidates, limit)` candidates, so asking for 100 documents still fuses deep enough lists.
    """
    vector = store.embed_query(query)
    if mode == "semantic":
        return [(_ranked(h), round(h.similarity, 6)) for h in store.section_hits(vector, limit, folder, tags)]
    n = max(candidates, limit)
    vector_hits = store.section_hits(vector, n, folder, tags)
    keyword_hits = library.keyword_sections(query, n, folder, tags)
    cutoff = getattr(store.embedder, "min_similarity", MIN_SIMILARITY)
    waiting = store.waiting_sections([(s.doc_id, s.section_idx) for s, _ in keyword_hits]
                                     + [(h.doc_id, h.section_idx) for h in vector_hits])
    return fuse(keyword_hits, vector_hits, limit, waiting=waiting, min_similarity=cutoff)
