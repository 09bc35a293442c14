"""The keyword side: sections (for the fusion and the reranker) and documents (keyword search's own answer, and its
first document while embedding fills in), from the store's keyword hits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import document_signals
from .ranking import Bonus, DocumentGroup, group_by_document

if TYPE_CHECKING:
    from ..index.hits import RankedSection
    from .request import SearchRequest
    from .sources import KeywordHit, SearchSources


def keyword_sections(sources: SearchSources, request: SearchRequest, limit: int) -> list[tuple[RankedSection, float]]:
    """The best `limit` sections with their score, best first."""
    hits = sources.keyword_hits(request.query, limit, request.folder, request.tags)
    return [(hit.section, hit.score) for hit in hits]


def keyword_documents(
    sources: SearchSources, request: SearchRequest, limit: int, max_documents: int
) -> list[DocumentGroup[RankedSection]]:
    """Keyword search's documents, best first, with the document signals; from its best `limit` sections."""
    return keyword_documents_of(sources, request, limit, max_documents)[0]


def keyword_documents_of(
    sources: SearchSources, request: SearchRequest, limit: int, max_documents: int
) -> tuple[list[DocumentGroup[RankedSection]], bool]:
    """keyword_documents, and whether the `limit` sections were all taken (a deeper search may find more)."""
    hits = sources.keyword_hits(request.query, limit, request.folder, request.tags)
    # asked after the hits: a reading worker's store refreshes its languages while it searches
    groups = group_keyword_hits(hits, max_documents, sources.document_bonus(request.query, by_key=True))
    return groups, len(hits) >= limit


def group_keyword_hits(
    hits: Sequence[KeywordHit], max_documents: int, bonus: Bonus | None = None
) -> list[DocumentGroup[RankedSection]]:
    """Keyword hits grouped into documents by their key before their stored fields are read: only the sections
    of the documents shown are (about 19 of 50 hits on the OpenTelemetry questions, for 5 documents). `bonus`
    is given the keys, as text."""
    groups = group_by_document(
        [(str(hit.doc_key), hit.score, hit) for hit in hits],
        max_documents,
        bonus=bonus,
        candidates=document_signals.CANDIDATES,
    )
    return [DocumentGroup(g.hits[0].section.doc_id, g.score, [h.section for h in g.hits]) for g in groups]
