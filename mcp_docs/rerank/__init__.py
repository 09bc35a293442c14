"""The optional rerank stage (off unless MCP_DOCS_RERANK_URL or MCP_DOCS_RERANK_MODEL_DIR is set)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from .base import Reranked, RerankError, RerankStage, Scorer

__all__ = ["RerankError", "RerankSettings", "RerankStage", "Reranked", "Scorer", "make_reranker"]


class RerankSettings(Protocol):
    """What the rerank stage reads of `mcp_docs.settings.Settings`. A protocol, not an import: settings imports
    `rerank.local` to check a model folder, and importing it runs this __init__ first, so an import of settings
    here made the cycle settings -> rerank -> settings (tests/test_imports.py)."""

    @property
    def rerank_url(self) -> str | None: ...
    @property
    def rerank_api(self) -> str: ...
    @property
    def rerank_model(self) -> str | None: ...
    @property
    def rerank_api_key(self) -> str | None: ...
    @property
    def rerank_model_dir(self) -> Path | None: ...
    @property
    def rerank_top(self) -> int: ...
    @property
    def rerank_timeout(self) -> float: ...


def make_reranker(settings: RerankSettings) -> RerankStage | None:
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
