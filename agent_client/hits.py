"""Document ids in the text of search results: mcp-docs writes `1. guides/setup.md — Title` followed by
indented section lines, simpler servers `guides/setup.md — Heading: snippet` per line."""

from __future__ import annotations

import re

_HIT = re.compile(r"^\s*(?:\d{1,3}\.\s+)?(?P<id>[\w./-]*\w\.[A-Za-z][A-Za-z0-9]{1,9})\s+[—–-]\s")
_RANK = re.compile(r"^\s*\d{1,3}\.\s+")


def search_hits(text: str) -> list[tuple[str, list[str]]]:
    """(document id, its lines) in the order the result ranks them; a document named twice is one hit."""
    hits: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        m = _HIT.match(line)
        if m:
            current = m.group("id")
            hits.setdefault(current, []).append(_RANK.sub("", line, count=1))
        elif current is not None and line[:1].isspace() and line.strip():
            hits[current].append(line)
        else:
            current = None
    return list(hits.items())


def first_document(text: str) -> str | None:
    hits = search_hits(text)
    return hits[0][0] if hits else None
