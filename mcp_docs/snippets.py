"""Snippets: the stretch of a section that best covers the query words, with the matches in **bold**.

Made here rather than by Tantivy so that one rule serves every language field
(stemmed, accent-folded, identifiers) and semantic hits alike.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

SNIPPET_CHARS = 220
# Identifiers first, so 'OTEL_EXPORTER_OTLP_ENDPOINT' is highlighted whole.
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+#-]*[A-Za-z0-9_+#]|[^\W_]+", re.UNICODE)
_SPACES = re.compile(r"\s+")
_MAX_MATCHES = 300


@lru_cache(maxsize=4096)
def fold(word: str) -> str:
    """Lowercase and strip accents: 'Élève' → 'eleve'."""
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _stem(word: str) -> str:
    # A crude, language-neutral stand-in for the stemmer: compare on a prefix.
    return word if len(word) <= 4 else word[: max(4, len(word) - 3)]


def make_snippet(body: str, query_terms: list[str], width: int = SNIPPET_CHARS) -> str:
    text = _SPACES.sub(" ", body).strip()
    if not text:
        return ""
    stems = {_stem(fold(t)) for t in query_terms if t}
    matches: list[tuple[int, int, str]] = []
    if stems:
        for m in _TOKEN.finditer(text):
            folded = fold(m.group(0))
            hit = next((s for s in stems if (folded.startswith(s) if len(s) > 2 else folded == s)), None)
            if hit is not None:
                matches.append((m.start(), m.end(), hit))
                if len(matches) >= _MAX_MATCHES:
                    break
    if not matches:
        return text if len(text) <= width else text[:width].rsplit(" ", 1)[0] + "…"
    best_start, best_count = 0, -1
    for i, (start, _, _) in enumerate(matches):
        window_start = max(0, start - width // 5)
        distinct = {s for (b, e, s) in matches[i:] if e <= window_start + width}
        if len(distinct) > best_count:
            best_start, best_count = window_start, len(distinct)
    begin = best_start
    if begin > 0:
        space = text.find(" ", begin)
        begin = space + 1 if 0 <= space < begin + 20 else begin
    end = min(len(text), begin + width)
    if end < len(text):
        space = text.rfind(" ", begin, end)
        end = space if space > begin + width // 2 else end
    out: list[str] = ["…"] if begin > 0 else []
    cursor = begin
    for start, stop, _ in matches:
        if start < begin or stop > end:
            continue
        out.append(text[cursor:start])
        out.append(f"**{text[start:stop]}**")
        cursor = stop
    out.append(text[cursor:end])
    if end < len(text):
        out.append("…")
    return "".join(out)
