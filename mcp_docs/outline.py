"""The text of `read_document`'s outline and summary modes: the heading tree with each section's lines and size,
or the headings with the first lines of each section. From a parse or from the catalog's section rows."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from typing import Protocol

from .markdown import ParsedDocument
from .models import HEADING_CHARS
from .render import plural
from .snippets import clip

SUMMARY_LINE_CHARS = 160
# Said instead of an empty list of sections: an agent reading 'Sections (lines, ~tokens):' and nothing after it
# cannot tell an empty note from a cut reply.
NO_SECTIONS = "No sections: the note holds no text."


class OutlinedSection(Protocol):
    """What an outline shows of a section: a parsed `Section` or the catalog's `SectionRecord`."""

    @property
    def heading(self) -> str: ...
    @property
    def level(self) -> int: ...
    @property
    def line_start(self) -> int: ...
    @property
    def subtree_end(self) -> int: ...
    @property
    def tokens(self) -> int: ...


def _subtree_tokens(sections: Sequence[OutlinedSection]) -> list[int]:
    # A subtree is a run of sections in document order: prefix sums, not a slice of the rest per section.
    starts = [s.line_start for s in sections]
    sums = list(itertools.accumulate((s.tokens for s in sections), initial=0))
    return [sums[bisect.bisect_right(starts, s.subtree_end, i)] - sums[i] for i, s in enumerate(sections)]


def _size(tokens: int) -> str:
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)


def outline(parsed: ParsedDocument) -> str:
    """The heading tree: one short line per section with its lines and size (tokens with subsections).

    Headings are clipped so that one huge heading cannot fill the whole budget.
    """
    return outline_of(parsed.title, len(parsed.lines), parsed.sections)


def outline_of(title: str, n_lines: int, sections: Sequence[OutlinedSection]) -> str:
    """`outline` from a parse or from the catalog's section rows (the same fields)."""
    if not sections:
        return f"{clip(title, HEADING_CHARS)} — {plural(n_lines, 'line')}. {NO_SECTIONS}\n"
    total = sum(s.tokens for s in sections)
    lines = [f"{clip(title, HEADING_CHARS)} — {n_lines} lines, ~{_size(total)} tokens. Sections (lines, ~tokens):"]
    for s, tokens in zip(sections, _subtree_tokens(sections), strict=False):
        marker = "#" * s.level + " " if s.level else ""
        lines.append(f"{marker}{clip(s.heading, HEADING_CHARS)} (L{s.line_start}-{s.subtree_end}, ~{_size(tokens)})")
    return "\n".join(lines) + "\n"


def _first_lines(body: str, limit: int = SUMMARY_LINE_CHARS) -> str:
    """The first prose of a section's own text: skips code fences, tables and blank lines."""
    out: list[str] = []
    in_fence = False
    for line in body.split("\n"):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence or not stripped or stripped.startswith(("|", "<!--")):
            if out and not stripped:
                break
            continue
        out.append(stripped)
        if sum(len(x) + 1 for x in out) >= limit:
            break
    text = " ".join(out)
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0] + "…"
    return text


def summary(parsed: ParsedDocument) -> str:
    """Headings with the first lines of each section."""
    if not parsed.sections and not parsed.summary:
        return f"{clip(parsed.title, HEADING_CHARS)} — {plural(len(parsed.lines), 'line')}. {NO_SECTIONS}\n"
    lines = [f"{clip(parsed.title, HEADING_CHARS)} — {len(parsed.lines)} lines"]
    explicit = parsed.front_matter.get("summary") or parsed.front_matter.get("description")
    if explicit and parsed.summary:
        lines.append(parsed.summary)
    for s in parsed.sections:
        marker = "#" * s.level if s.level else ""
        lines.append("")
        lines.append(f"{marker} {clip(s.heading, HEADING_CHARS)} (L{s.line_start}-{s.line_end})".strip())
        first = _first_lines(s.body)
        if first:
            lines.append(first)
    return "\n".join(lines) + "\n"
