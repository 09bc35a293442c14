"""Which mode a search runs in: the one fallback every vector-backed tool shares. Vectors off, not built yet or an
embedder that fails: keyword search answers, and a note says why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..models import SearchMode

if TYPE_CHECKING:
    from ..index.store_api import VectorSearch


@dataclass(frozen=True)
class ModeChoice:
    mode: SearchMode  # the mode that runs
    note: str | None = None  # why it is not the one asked for


def choose_mode(requested: SearchMode, vectors: VectorSearch | None) -> ModeChoice:
    """Keyword runs as asked; semantic and hybrid need vectors that are ready, else keyword, with the reason."""
    if requested == "keyword" or (vectors is not None and vectors.ready()):
        return ModeChoice(requested)
    reason = vectors.unavailable_reason() if vectors is not None else "embeddings are off"
    return ModeChoice("keyword", f"{requested} search is unavailable ({reason}): keyword results shown.")


def embedder_failed(requested: SearchMode, error: Exception) -> ModeChoice:
    """The vectors were ready but embedding the query failed (an endpoint down, a model that would not load)."""
    return ModeChoice("keyword", f"{requested} search failed ({error}): keyword results shown.")
