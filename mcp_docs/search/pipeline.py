"""One search, as named steps over the sources passed in (sources.SearchSources):

limits (request.py) → mode, with the keyword fallback (mode.py) → vectors and the coverage-aware fusion
(vectors.py, hybrid.py), or keyword (keyword.py) → rerank (reranking.py) → documents with their signals
(documents.py, ranking.py, document_signals.py) → keyword's first answer while embedding fills in → one answer per
translation (languages.py, translations.py) → result models with snippets (results.py).

The reranker reads sections, so it runs on the fused list before the grouping: documents then follow its order.
Each step is a function of plain inputs, tested alone in tests/search/; this module only chains them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..embedders import EmbedderError
from ..models import SearchMode, SearchResult
from . import documents, keyword, languages, results
from .mode import ModeChoice, choose_mode, embedder_failed
from .request import Limits, SearchRequest, deeper, limits
from .reranking import rerank
from .sources import SearchSources
from .vectors import VectorRanking, rank_with_vectors

if TYPE_CHECKING:
    from ..index.hits import RankedSection
    from .ranking import DocumentGroup


def search(sources: SearchSources, request: SearchRequest) -> SearchResult:
    """Ranked documents for `request`, read from `sources`; every step below is a function of its own module."""
    query = request.query
    limit = limits(request.max_results, sources.languages)
    language = languages.query_language(query, sources.languages) if limit.several_languages else None
    found = ranked_documents(sources, request, limit, language)
    if found.merged and found.full and len(found.groups) < request.max_results and sources.reranker is None:
        # a page in 36 languages is one answer: "Canvas" on the Obsidian help vault gave 2 of the 5 asked for
        again = ranked_documents(sources, request, deeper(limit), language)
        if len(again.groups) > len(found.groups):
            found = again
    groups = found.groups
    if sources.embedding is not None:  # while embedding is under way, what searches return is embedded first
        sources.embedding.searched_for(g.doc_id for g in groups)
    named = sources.catalog.named_languages([g.doc_id for g in groups])
    return SearchResult(
        query=query,
        mode_used=found.mode,
        results=results.document_matches(groups, named, results.snippet_terms(query)),
        index=results.index_info(sources.catalog, sources.vectors),
        note=found.note,
        reranked=found.reranked,
    )


@dataclass(frozen=True)
class RankedDocuments:
    """The documents of one search at one depth, best first, and what the result says of them."""

    mode: SearchMode
    groups: list[DocumentGroup[RankedSection]]
    note: str | None
    reranked: bool
    merged: bool  # versions of a page in several languages were merged into one answer
    full: bool  # every candidate section asked for was found: a deeper search may find more documents


def ranked_documents(
    sources: SearchSources, request: SearchRequest, limit: Limits, language: str | None
) -> RankedDocuments:
    """The steps from the mode to one answer per translation, worked to `limit`'s depths."""
    query = request.query
    choice = choose_mode(request.mode, sources.vectors)
    found = VectorRanking([], 1.0, None, None)
    if choice.mode != "keyword":
        choice, found = vector_step(sources, request, choice.mode, limit.sections, language)
    mode, note = choice.mode, choice.note
    shown = None
    ranked = found.ranked
    full = len(ranked) >= limit.sections
    if mode == "keyword" and sources.reranker is None:  # grouped by key: only the shown sections are read
        shown, full = keyword.keyword_documents_of(sources, request, limit.sections, limit.depth)
    elif mode == "keyword":
        ranked = keyword.keyword_sections(sources, request, limit.sections)
        full = len(ranked) >= limit.sections
    if not ranked and not shown and sources.empty_note():
        note = sources.empty_note()  # not "vectors are not built yet": there is nothing to search
    outcome = rerank(sources.reranker, query, ranked)
    note = join_notes(note, outcome.note)
    groups = (
        shown
        if shown is not None
        else documents.group_sections(
            outcome.ranked,
            limit.depth,
            sources.document_bonus(query, fused=mode == "hybrid")
            if documents.uses_signals(mode, outcome.reranked)
            else None,
        )
    )
    if groups and documents.keyword_leads(mode, found.covered, outcome.reranked):
        first = keyword.keyword_documents(sources, request, limit.sections, 1)
        groups = documents.lead_with_keyword(groups, first)
    versions = None
    if limit.several_languages:
        groups, versions = languages.one_answer_per_translation(
            sources.catalog, groups, language, found.view, request.max_results, query
        )
        note = join_notes(note, versions)
    return RankedDocuments(mode, groups, note, outcome.reranked, versions is not None, full)


def vector_step(
    sources: SearchSources, request: SearchRequest, mode: SearchMode, limit: int, language: str | None
) -> tuple[ModeChoice, VectorRanking]:
    """Semantic or hybrid sections, or keyword's mode with the reason when the query cannot be embedded."""
    vectors = sources.vectors
    assert vectors is not None  # choose_mode picks a vector mode only with vectors ready

    def keyword_side(query: str, n: int, folder: str | None, tags: list[str]) -> list[tuple[RankedSection, float]]:
        return [(hit.section, hit.score) for hit in sources.keyword_hits(query, n, folder, tags)]

    try:
        found = rank_with_vectors(
            vectors,
            keyword_side,
            request.query,
            limit,
            mode,
            request.folder or None,
            list(request.tags),
            language,
            sources.catalog,
        )
    except EmbedderError as exc:
        return embedder_failed(request.mode, exc), VectorRanking([], 1.0, None, None)
    return ModeChoice(mode, found.note), found


def join_notes(*notes: str | None) -> str | None:
    return " ".join(n for n in notes if n) or None
