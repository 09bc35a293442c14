"""Fitting a tool's reply into its character budget: how many items fit, which search results are kept (and the
note that says what was left out), the page of a text cut at a line end, and the token estimate of a reply."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from .errors import OffsetPastEnd
from .models import SearchResult
from .tokens import estimate_tokens

MAX_MAX_CHARS = 50_000
RESERVED_NOTE_CHARS = 400  # notes added after a result is fitted (the budget's own, the server's)


def fitting(items: Sequence[BaseModel], budget: int) -> int:
    """How many of `items`, in order, fit in `budget` characters of JSON."""
    used = 0
    for n, item in enumerate(items):
        used += len(item.model_dump_json()) + 1
        if used > budget:
            return n
    return len(items)


def fit_search(result: SearchResult, max_chars: int) -> None:
    """Keep the results, best first, that fit in `max_chars` of JSON, and say what was left out and how to get it.

    The first result that does not fit whole is kept with its best section alone if that fits.
    """
    base = len(result.model_dump_json(include={"query", "mode_used", "index", "note", "estimated_tokens"}))
    budget = max_chars - base - RESERVED_NOTE_CHARS - len('"results":[]')
    cut = fitting(result.results, budget)
    if cut == len(result.results):
        return
    kept = result.results[:cut]
    used = sum(len(d.model_dump_json()) + 1 for d in kept)
    left, sections_left = len(result.results) - cut, 0
    nxt = result.results[cut]
    best_only = nxt.model_copy(update={"sections": nxt.sections[:1]})
    if len(nxt.sections) > 1 and used + len(best_only.model_dump_json()) + 1 <= budget:
        kept.append(best_only)
        left, sections_left = left - 1, len(nxt.sections) - 1
    result.results = kept
    parts = [f"{left} more result{'s' if left != 1 else ''}"] if left else []
    if sections_left:
        parts.append(f"{sections_left} more section{'s' if sections_left != 1 else ''} of result {len(kept)}")
    note = (
        f"{' and '.join(parts)} left out to stay within max_chars={max_chars}: "
        f"raise max_chars (up to {MAX_MAX_CHARS}) or lower max_results to see them."
    )
    result.note = f"{result.note} {note}" if result.note else note


def _json_tokens(model: Any) -> int:
    return estimate_tokens(model.model_dump_json(exclude={"estimated_tokens"}))


def cut(text: str, offset: int, max_chars: int) -> tuple[str, int | None]:
    """`text[offset:]` up to `max_chars`, cut after the last line end that fits; the next offset or None."""
    total = len(text)
    if offset > total:
        raise OffsetPastEnd(f"offset {offset} is past the end ({total} characters): start again at offset 0.")
    end = offset + max_chars
    if end >= total:
        return text[offset:], None
    newline = text.rfind("\n", offset, end)
    if newline >= offset and newline + 1 > offset + max_chars // 4:
        end = newline + 1
    return text[offset:end], end
