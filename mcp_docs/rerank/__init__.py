"""The optional rerank stage (off unless MCP_DOCS_RERANK_URL or MCP_DOCS_RERANK_MODEL_DIR is set)."""

from __future__ import annotations

from ..settings import Settings
from .base import Reranked, RerankError, RerankStage, Scorer

__all__ = ["RerankError", "RerankStage", "Reranked", "Scorer", "make_reranker"]


def make_reranker(settings: Settings) -> RerankStage | None:
    """The stage the settings ask for, or None. Nothing is contacted or loaded yet: the first search does."""
    scorer: Scorer
    if settings.rerank_url:
        from .http import HttpScorer

        scorer = HttpScorer(
            settings.rerank_url,
            settings.rerank_api,
            settings.rerank_model,
            settings.rerank_api_key,
            settings.rerank_timeout,
        )
    elif settings.rerank_model_dir is not None:
        from .local import LocalScorer

        scorer = LocalScorer(settings.rerank_model_dir)
    else:
        return None
    return RerankStage(scorer, settings.rerank_top, deadline=settings.rerank_timeout)
