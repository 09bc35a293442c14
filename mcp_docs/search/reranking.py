"""The optional rerank stage, after the fusion and before the grouping: documents then follow its order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..index.hits import RankedSection
    from ..rerank import RerankStage


@dataclass(frozen=True)
class RerankOutcome:
    ranked: list[tuple[RankedSection, float]]  # in the reranker's order, with its scores (unchanged if it failed)
    reranked: bool
    note: str | None  # why it did not rerank (a failure, a cool-down), else None


def rerank(reranker: RerankStage | None, query: str, ranked: list[tuple[RankedSection, float]]) -> RerankOutcome:
    """The sections in the cross-encoder's order; as they were without a reranker or without candidates."""
    if reranker is None or not ranked:
        return RerankOutcome(ranked, False, None)
    outcome = reranker.rerank(query, ranked, rerank_text)
    if outcome.order is not None:
        ranked = [(ranked[i][0], score) for i, score in outcome.order]
    return RerankOutcome(ranked, outcome.reranked, outcome.note)


def rerank_text(hit: tuple[RankedSection, float]) -> str:
    """What the cross-encoder reads of a section: where it sits (its heading path), then its text."""
    return f"{hit[0].heading_path}\n{hit[0].body}"
