"""Sections to documents: grouped with the document signals, and keyword's first answer kept first while embedding
fills in."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import document_signals
from .ranking import Bonus, DocumentGroup, group_by_document, lead_with

if TYPE_CHECKING:
    from ..index.hits import RankedSection


def group_sections(
    ranked: list[tuple[RankedSection, float]], max_documents: int, bonus: Bonus | None
) -> list[DocumentGroup[RankedSection]]:
    """Sections best first → the best `max_documents` documents, the `bonus` (document signals) applied to the best
    candidates (search/ranking.py, search/document_signals.py)."""
    return group_by_document(
        [(s.doc_id, score, s) for s, score in ranked],
        max_documents,
        bonus=bonus,
        candidates=document_signals.CANDIDATES,
    )


def uses_signals(mode: str, reranked: bool) -> bool:
    """Semantic search ranks by meaning alone (the signals count the query's words); a reranker has read the
    sections themselves, and its order stands."""
    return mode != "semantic" and not reranked


def keyword_leads(mode: str, covered: float, reranked: bool) -> bool:
    """While embedding fills in, the first answer is keyword's: the vectors cover only part of the collection, so
    their best is only the best of that part, and a near-miss with vectors must not take the top from the answer
    without them (or from a page its rivals' vectors outvote before its own are in). They still reorder and add to
    what follows. On the OTel questions, part-way hybrid's own first answer was never better than keyword's and at
    6 of 14 coverage points one question worse (benchmarks/REPORT.md, "Keyword's first answer while embedding
    fills in")."""
    return mode == "hybrid" and covered < 1.0 and not reranked


def lead_with_keyword(
    groups: list[DocumentGroup[RankedSection]], first: list[DocumentGroup[RankedSection]]
) -> list[DocumentGroup[RankedSection]]:
    """`groups` with keyword's first document (`first`, at most one) at the top; unchanged when keyword found none."""
    return lead_with(groups, first[0]) if first else groups
