"""Semantic and hybrid ranking over sections.

- semantic: KNN over chunks (filters applied before the cut), grouped to sections by
  their best chunk; the score is the cosine similarity.
- hybrid: a weighted sum of both lists' scores at the section (BM25 over the query's best BM25,
  cosine over the best cosine), both lists filtered the same way; the keyword side's weight is set
  per query by how far its best hits stand out (`query_keyword_share`). The library then groups sections
  to documents. Scores, not ranks: a keyword hit far ahead of the next keeps its lead, and with no
  vectors the fused scores are the keyword scores scaled, so documents group exactly as in keyword search.
- a collection in several languages (both modes): each language's cosines are put on the query's language's
  scale (language_mix), and in hybrid, when the query's words name its language, the vector side gives each rank
  to a language (`interleave`): BM25 scores do not compare across languages. The library then lists a page and
  its translation once (translations.py). A collection in one language is ranked exactly as before.

The constants are tuned on the OpenTelemetry question set and SciFact
(benchmarks/semantic_eval.py; figures in benchmarks/REPORT.md).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

from ..index.hits import RankedSection, VectorHit
from ..index.language_mix import LanguageView
from ..store.api import VectorSearch

if TYPE_CHECKING:
    import numpy as np

    from .languages import AlsoInOwn

CANDIDATES = 50  # per side, at least
# The keyword side's share of the fused score (the vector side has the rest), per query:
# SHARE_BASE + SHARE_GAIN * peak, within [0, 1], where peak = 1 - mean of the PEAK_DEPTH best BM25 scores
# over the best (missing hits count 0). A BM25 list whose best hits stand out is usually right (an exact
# identifier, a rare phrase) and the vectors can only push a near-miss above it; a flat one has matched
# common words, and the vectors tell its hits apart better. A fixed share could not serve both:
# 0.85 kept doc hit@1 >= keyword on the OpenTelemetry questions but gave SciFact little from the vectors
# (nDCG@10 0.711). Tuned jointly on SciFact and the OpenTelemetry questions (benchmarks/REPORT.md,
# "Hybrid fusion"): 0.3 kept hybrid >= keyword at every embedding coverage on the OTel questions, SciFact 0.720.
# With the document signals (document_signals.py, applied after fusion) 0.2 is best on both sets: OTel hybrid
# doc hit@1 0.800 (0.787 at 0.3), SciFact 0.731. While vectors cover only part of the collection the share
# grows towards pure keyword (`coverage_share`); figures per coverage point in benchmarks/REPORT.md
# ("Precision at the top: document-level signals"). This is the base for an embedder that does not set its own
# (`Embedder.keyword_share_base`: e5's cosines earn less weight, 0.25; "Fusion constants per embedder").
SHARE_BASE = 0.2
SHARE_GAIN = 2.0
PEAK_DEPTH = 10
# Vector hits below the embedder's `min_similarity` (MiniLM: 0.4) are left out of the fused list:
# the vector side always returns k rows, even for a query nothing in the corpus is about.
MIN_SIMILARITY = 0.0

Key = tuple[str, int]
# The keyword side: (query, limit, folder, tags) -> sections with their BM25 score, best first.
KeywordSearch = Callable[[str, int, str | None, list[str]], list[tuple[RankedSection, float]]]


def _ranked(hit: VectorHit) -> RankedSection:
    return RankedSection(
        hit.doc_id,
        hit.section_idx,
        hit.title,
        hit.heading,
        hit.heading_path,
        hit.line_start,
        hit.line_end,
        hit.piece,
        hit.tags,
    )


def query_keyword_share(
    scores: Sequence[float], base: float = SHARE_BASE, gain: float = SHARE_GAIN, depth: int = PEAK_DEPTH
) -> float:
    """The keyword side's weight for one query's BM25 scores: more the further its best hit stands above
    its `depth` best (a lone hit stands far above), `base` for a flat list or none; within [0, 1]."""
    top = heapq.nlargest(depth, scores)
    if not top or top[0] <= 0:
        return min(1.0, max(0.0, base))
    peak = 1.0 - sum(top) / (depth * top[0])
    return min(1.0, max(0.0, base + gain * peak))


def coverage_share(share: float, coverage: float) -> float:
    """The keyword share while vectors cover only `coverage` of the collection: share + (1 - share) *
    (1 - coverage), so pure keyword at 0 and `share` at 1. The vector side then ranks only part of the
    collection: its best hit is only the best of that part, yet scaled to 1 like a best of all, and it
    lifts embedded near-misses above a keyword answer still waiting for its vectors or missed by them."""
    coverage = min(1.0, max(0.0, coverage))
    return share + (1.0 - share) * (1.0 - coverage)


def fuse(
    keyword_hits: list[tuple[RankedSection, float]],
    vector_hits: list[VectorHit],
    limit: int,
    *,
    waiting: Collection[Key] = frozenset(),
    keyword_share: float | None = None,
    coverage: float = 1.0,
    min_similarity: float = MIN_SIMILARITY,
) -> list[tuple[RankedSection, float]]:
    """Both lists' scores, each scaled to its best hit, summed with weights at the section; best first.

    Keyword hits keep their full body for snippets. `keyword_share`: the keyword side's weight, by
    default set from this query's BM25 scores (`query_keyword_share`). `waiting`: sections still without
    vectors (embedding under way). The vector side cannot score them, so a keyword hit among them counts
    there with its keyword score: it neither gains nor loses from having no vectors yet (with none at
    all, the fused order is the keyword order). Their partial or stale vector hits are left out.
    `coverage`: the fraction of the collection's chunks with vectors; the keyword share grows as it
    falls (`coverage_share`).
    """
    if keyword_share is None:
        keyword_share = query_keyword_share([score for _, score in keyword_hits])
    keyword_share = coverage_share(keyword_share, coverage)
    vector_hits = [
        h for h in vector_hits if h.similarity >= min_similarity and (h.doc_id, h.section_idx) not in waiting
    ]
    sections: dict[Key, RankedSection] = {}
    scores: dict[Key, float] = {}
    best_keyword = max((score for _, score in keyword_hits), default=0.0)
    for s, score in keyword_hits:
        key = (s.doc_id, s.section_idx)
        if key in sections:
            continue
        sections[key] = s
        scaled = score / best_keyword if best_keyword > 0 else 0.0
        scores[key] = scaled if key in waiting else keyword_share * scaled
    if vector_hits:
        best_vector = max(h.similarity for h in vector_hits)
        scored: set[Key] = set()  # sections the vector side scored with their own vectors
        for h in vector_hits:
            if h.level == "document":
                continue
            key = (h.doc_id, h.section_idx)
            if key not in sections:
                sections[key] = _ranked(h)
            scaled = max(0.0, h.similarity) / best_vector if best_vector > 0 else 0.0
            scores[key] = scores.get(key, 0.0) + (1 - keyword_share) * scaled
            scored.add(key)
        # A document's own vector stands in for each of its sections still without one: for the sections the
        # keyword side found (it says which section; the vector, that the document is about the query), else
        # for the section it points at. As a section's vector would: once, added to its keyword share.
        by_document: dict[str, list[Key]] = {}
        for key in sections:
            by_document.setdefault(key[0], []).append(key)
        for h in vector_hits:
            if h.level != "document":
                continue
            scaled = max(0.0, h.similarity) / best_vector if best_vector > 0 else 0.0
            keys = [k for k in by_document.get(h.doc_id, []) if k not in scored] or [(h.doc_id, h.section_idx)]
            for key in keys:
                if key in scored:
                    continue
                if key not in sections:
                    sections[key] = _ranked(h)
                scores[key] = scores.get(key, 0.0) + (1 - keyword_share) * scaled
                scored.add(key)
    fused = sorted(scores.items(), key=lambda kv: -kv[1])  # stable: ties keep keyword order
    return [(sections[key], round(score, 6)) for key, score in fused[:limit]]


def without_text(keyword_hits: list[tuple[RankedSection, float]]) -> set[Key]:
    """The keyword hits whose section has no text of its own, only a heading over its subsections (a glossary's
    "Terms"): the chunker gives such a section no vector (chunking.chunk_document), so the vector side can never
    score it. Like a section still waiting for its vectors, its keyword score then stands alone in `fuse`. Counted
    at the keyword share only, it fell out of the fused list, and with it the parent that leads its matching
    subsections in keyword search (ranking.lead_sections): OTel questions, e5, hybrid section hit@5 0.880 -> 0.893
    (otel-052, "glossary of terms"), doc hit@1 / @5 unchanged (benchmarks/REPORT.md, "Search quality, issue 31 items 1–2")."""
    return {(s.doc_id, s.section_idx) for s, _ in keyword_hits if not s.body.strip()}


def gives_ranks_to_languages(view: LanguageView, language: str | None) -> bool:
    """Whether a hybrid query's ranks are given to languages (`interleave`): only for a question in one of the
    collection's other languages. Its words find only pages of its own language, confidently, so without this an
    answer in the main language never reaches the top. A question in the main language has most pages to choose
    from, and in a translated docs site the other languages' pages are translations of main-language ones: given
    ranks, a French page about something else took rank 1 from the English answer ("rename a metric or a metric
    label in the collector", OTel e5: English hybrid doc hit@1 0.732 -> 0.750; French and cross-lingual questions
    unchanged). Its vector side is still centred, so a page only in another language can still rank by fusion.
    A question whose words name no language is fused as usual (see `search`)."""
    return language is not None and language in view.shifts and language != view.main


def interleave(
    fused: list[tuple[RankedSection, float]],
    vector_hits: list[VectorHit],
    view: LanguageView,
    own: str,
    limit: int,
    also_in_own: AlsoInOwn | None = None,
) -> list[tuple[RankedSection, float]]:
    """The fused list of a collection in several languages, each rank given to a language by the vector side.

    Keyword scores do not compare across languages (a French question's words are not in English pages, so
    BM25 finds French pages, and confidently), cosines do once put on one scale (language_mix). So the vector
    hits, best first, say which language each rank goes to; a rank for the query's language takes its next
    section in the fused order (both sides see that language), a rank for another language its next vector hit.
    Sections left over follow in the fused order. The scores are the fused list's, best first, rank for rank.
    `own`: the query's language (its function words tell, document_signals.query_language). `also_in_own`: which
    of the foreign hits' pages also have a version in `own` (languages.also_in); those hits give no rank, so a
    rank goes to another language only for a page the asker cannot read in their own."""
    sections = {(s.doc_id, s.section_idx): s for s, _ in fused}
    own_order = (s for s, _ in fused if view.language_of(s.doc_id) == own)
    order: list[RankedSection] = []
    placed: set[Key] = set()
    foreign = list(dict.fromkeys(h.doc_id for h in vector_hits if view.language_of(h.doc_id) != own))
    readable = also_in_own(foreign) if also_in_own is not None and foreign else set()

    def place(s: RankedSection) -> None:
        order.append(s)
        placed.add((s.doc_id, s.section_idx))

    for hit in vector_hits:
        if hit.doc_id in readable:
            # The page is also in the asker's language: that version ranks by its own evidence (the fused
            # order). In a vault translated into 36 languages the best foreign hits were mostly other versions
            # of pages the asker can read, one language's standing out by chance after centring, and they took
            # the first ranks from the asker's own pages (benchmarks/REPORT.md, "Pages the asker can read").
            continue
        if view.language_of(hit.doc_id) != own:
            key = (hit.doc_id, hit.section_idx)
            if key not in placed:
                place(sections.get(key) or _ranked(hit))
            continue
        nxt = next((s for s in own_order if (s.doc_id, s.section_idx) not in placed), None)
        if nxt is not None:
            place(nxt)
    for s, _ in fused:
        if (s.doc_id, s.section_idx) not in placed:
            place(s)
    scores = [score for _, score in fused] or [0.0]
    return [(s, scores[min(i, len(scores) - 1)]) for i, s in enumerate(order[:limit])]


def search(
    store: VectorSearch,
    keyword: KeywordSearch,
    query: str,
    limit: int,
    mode: str,
    folder: str | None,
    tags: list[str],
    *,
    coverage: float = 1.0,
    candidates: int = CANDIDATES,
    vector: np.ndarray | None = None,
    view: LanguageView | None = None,
    language: str | None = None,
    also_in_own: AlsoInOwn | None = None,
) -> list[tuple[RankedSection, float]]:
    """Sections best first with their score (similarity for semantic, fused score for hybrid).
    `coverage`: the store's `coverage()`, the fraction of the collection with vectors (see `fuse`).
    `vector`, `view`: the query's embedding and its `language_view` when the caller has them (the library also
    needs the view); without `vector` both are worked out here. `language`: the query's, when its words say
    (document_signals.query_language); in hybrid, with a view, the ranks are then given to languages
    (`interleave`, told by `also_in_own` which foreign pages are also in that language). A query whose words
    name no language (an identifier, a few product names) matches pages of every language alike, so the usual
    fusion ranks it: two English identifiers lost their page to `interleave` when the language was the one the
    query's vector is closest to (benchmarks/REPORT.md).

    `limit` is how many sections the caller groups into documents (at least 50); each side gets
    `max(candidates, limit)` candidates, so asking for 100 documents still fuses deep enough lists.
    """
    if vector is None:
        vector = store.embed_query(query)
        view = store.language_view(vector)  # None in a collection of one language
    if mode == "semantic":
        return [(_ranked(h), round(h.similarity, 6)) for h in store.section_hits(vector, limit, folder, tags, view)]
    n = max(candidates, limit)
    vector_hits = store.section_hits(vector, n, folder, tags, view)
    keyword_hits = keyword(query, n, folder, tags)
    cutoff = getattr(store.embedder, "min_similarity", MIN_SIMILARITY)
    # each model's cosines earn their own weight against BM25 (embedders.Embedder.keyword_share_base)
    base = getattr(store.embedder, "keyword_share_base", SHARE_BASE)
    share = query_keyword_share([score for _, score in keyword_hits], base)
    waiting = store.waiting_sections(
        [(s.doc_id, s.section_idx) for s, _ in keyword_hits] + [(h.doc_id, h.section_idx) for h in vector_hits]
    ) | without_text(keyword_hits)
    fused = fuse(
        keyword_hits,
        vector_hits,
        limit,
        waiting=waiting,
        keyword_share=share,
        coverage=coverage,
        min_similarity=cutoff,
    )
    if view is None or not gives_ranks_to_languages(view, language):
        return fused
    assert language is not None
    return interleave(fused, vector_hits, view, language, limit, also_in_own)
