"""What the caller meant when a name does not match exactly: the section a heading or heading path names
(`read_section`), and the ids closest to one that names no document. Misses and ambiguities are
`SectionNotFound` / `SectionAmbiguous` sentences that list the candidates."""

from __future__ import annotations

import difflib
import operator
import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .errors import SectionAmbiguous, SectionNotFound
from .inline import clean_inline
from .markdown import HEADING_SEPARATOR, Section, clip_heading
from .models import HEADING_PATH_CHARS
from .paths import printable
from .snippets import clip_list, fold

MAX_WANTED_HEADING_CHARS = 10_000  # of a read_section heading or path, before each heading is clipped as parsed
LISTED_CHARS = 1000  # candidate lists in error messages (closest ids, headings, folders)
ID_CHARS = 300  # an id quoted in a message (results carry ids whole)
_LEADING_HASHES = re.compile(r"^#{1,6}\s+")


def closest_ids(doc_id: str, ids: list[str], n: int = 5) -> list[str]:
    """The ids most like `doc_id`: same file name first, then difflib over ids (bounded work)."""
    query = doc_id.strip().replace("\\", "/").lstrip("./")[:300]
    if not query or not ids:
        return []
    base = posixpath.basename(query).lower()
    stem = base.rsplit(".", 1)[0]
    same = [i for i in ids if posixpath.basename(i).lower().rsplit(".", 1)[0] == stem]
    found: list[str] = same[:n]
    if len(found) < n:
        pool = ids
        if len(pool) > 20_000:  # keep the error path fast on huge roots
            pool = [i for i in ids if stem[:3] and stem[:3] in i.lower()] or ids[:20_000]
        for match in difflib.get_close_matches(query, pool, n=n, cutoff=0.45):
            if match not in found:
                found.append(match)
        if len(found) < n:
            bases: dict[str, str] = {}
            for i in pool:
                bases.setdefault(posixpath.basename(i), i)
            for match in difflib.get_close_matches(posixpath.basename(query), list(bases), n=n, cutoff=0.5):
                if bases[match] not in found:
                    found.append(bases[match])
    return found[:n]


def _norm(text: str) -> str:
    # A trailing ellipsis is dropped so a heading clipped in a result still matches as a partial. 'İ' is taken as
    # 'I' first: casefold makes it an 'i' and a combining dot, which no accent-free heading typed ('icerik') holds.
    text = text.replace("İ", "I")
    return " ".join(_LEADING_HASHES.sub("", text.strip()).split()).casefold().rstrip("…").rstrip()


def _norm_path(text: str) -> str:
    return HEADING_SEPARATOR.join(_norm(p) for p in text.split(">") if p.strip())


def match_section(sections: tuple[Section, ...] | list[Section], wanted: str, doc_id: str) -> Section:
    """Heading path, then exact heading, then a unique partial match; case is ignored, and accents too when
    nothing matches with them ('reunions' finds 'Réunions', but 'Réunions' is preferred to 'Reunions').

    A heading copied as the file writes it ('### `date()`', '**Setup**') is tried as the parser keeps it
    (plain text) when nothing matches it as written."""
    try:
        return _match_as_written(sections, wanted, doc_id)
    except SectionNotFound:
        plain = _plain_heading_path(wanted)
        if plain == wanted.strip() or not plain:
            raise
        try:
            return _match_as_written(sections, plain, doc_id)
        except SectionNotFound:
            pass
        raise


def _plain_heading_path(wanted: str) -> str:
    """`wanted` with each heading's inline Markdown (code marks, emphasis, links) and leading hashes removed."""
    parts = [clean_inline(_LEADING_HASHES.sub("", part.strip())).strip() for part in wanted.split(">")]
    return HEADING_SEPARATOR.join(p for p in parts if p)


def _match_as_written(sections: tuple[Section, ...] | list[Section], wanted: str, doc_id: str) -> Section:
    if not sections:
        raise SectionNotFound(f"'{printable(doc_id, ID_CHARS)}' has no sections: read it with read_document.")
    query = _as_parsed(wanted.strip()[:MAX_WANTED_HEADING_CHARS])
    q = _norm(query)
    if ">" in query:
        qp = _norm_path(query)
        exact = _matching(sections, qp, _path_key, operator.eq)
        if len(exact) == 1:
            return exact[0]
        suffix = _matching(sections, qp, _path_key, lambda path, part: path.endswith(HEADING_SEPARATOR + part))
        if len(suffix) == 1:
            return suffix[0]
        if len(suffix) > 1:
            raise _ambiguous(query, suffix, doc_id)
        partial = _matching(sections, qp, _path_key, lambda path, part: part in path)
        if len(partial) == 1:
            return partial[0]
        if len(partial) > 1:
            raise _ambiguous(query, partial, doc_id)
        raise _no_section(query, sections, doc_id)
    exact = _matching(sections, q, _heading_key, operator.eq)
    if len(exact) == 1:
        return exact[0]
    if len(exact) > 1:
        raise _ambiguous(query, exact, doc_id)
    partial = _matching(sections, q, _heading_key, lambda heading, part: bool(part) and part in heading)
    if len(partial) == 1:
        return partial[0]
    if len(partial) > 1:
        raise _ambiguous(query, partial, doc_id)
    raise _no_section(query, sections, doc_id)


# Obsidian's block id ends the block's last line: 'text ^quote-of-the-day', or stands alone on the line after it.
_BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)\s*$")
# Hugo's and Pandoc's explicit heading id: '## Configuration structure {#basics}' (classes may follow the id).
_HEADING_ID = re.compile(r"\{#([^\s}]+)[^}]*\}\s*$")


@dataclass(frozen=True)
class AnchorMatch:
    section: Section
    block_line: int | None = None  # the 1-based line a block reference (`#^id`) names, inside `section`


def match_anchor(
    sections: Sequence[Section], lines: Sequence[str], wanted: str, slugs: Callable[[str], str]
) -> AnchorMatch | None:
    """The section a link's fragment names when no heading has its text: a block reference (`^id`, Obsidian),
    an explicit heading id (`{#basics}`, Hugo), or the anchor a renderer gives a heading (`slugs`: 'linux-setup'
    for 'Linux setup'). Links write all three; the outline lists them (`Quick switcher.md#^search-autocomplete`)
    and read_section named no section for them. None unless exactly one section matches."""
    fragment = wanted.strip().lstrip("#").strip()
    if fragment.startswith("^"):
        block = fragment[1:].casefold()
        for number, line in enumerate(lines, 1):
            found = _BLOCK_ID.search(line) if "^" in line else None
            if found and found.group(1).casefold() == block:
                inside = [s for s in sections if s.line_start <= number <= max(s.line_end, s.line_start)]
                return AnchorMatch(inside[-1], number) if inside else None
        return None
    key = fragment.casefold()
    by_id = [s for s in sections if s.level and _heading_id(lines, s) == key]
    if len(by_id) == 1:
        return AnchorMatch(by_id[0])
    by_slug = _by_anchor(sections, lines, fragment, slugs)
    return AnchorMatch(by_slug[0]) if len(by_slug) == 1 and not by_id else None


def _by_anchor(
    sections: Sequence[Section], lines: Sequence[str], fragment: str, slugs: Callable[[str], str]
) -> list[Section]:
    """The sections whose anchor is `fragment`: a repeated heading's as GitHub numbers it ('notes-1' for the
    second '## Notes', from the heading as written: the parser names it 'Notes (2)'), else any with that
    anchor (two make it ambiguous, as before); a '-' left at either end by a dropped emoji ('🚀 Quick start':
    GitHub '-quick-start', Hugo 'quick-start') is optional."""
    wanted = slugs(fragment).strip("-")
    numbered = slugs(fragment) == fragment.casefold()  # an anchor as written, not a heading's text ('`date()`')
    seen: dict[str, int] = {}
    plain, by_number = [], []
    for s in sections:
        if not s.level:
            continue
        written = lines[s.line_start - 1] if 0 < s.line_start <= len(lines) else s.heading
        base = slugs(_written_heading(written) or s.heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        if base.strip("-") == wanted:
            plain.append(s)
        elif numbered and n and f"{base}-{n}".strip("-") == wanted:
            by_number.append(s)
    return by_number or plain


def _written_heading(line: str) -> str:
    """An ATX heading line's text as the parser reads it (no hashes, no explicit id, no inline Markdown)."""
    text = _LEADING_HASHES.sub("", line.strip())
    if text == line.strip():  # not an ATX heading (setext: the line is the text)
        return clean_inline(text)
    return clean_inline(_HEADING_ID.sub("", text).rstrip("#").strip())


def _heading_id(lines: Sequence[str], section: Section) -> str | None:
    line = lines[section.line_start - 1] if 0 < section.line_start <= len(lines) else ""
    found = _HEADING_ID.search(line) if "{#" in line else None
    return found.group(1).casefold() if found else None


def _as_parsed(query: str) -> str:
    """Each heading of `query` clipped as the parser clips headings: one copied whole from the document, longer
    than that, would otherwise never match its section."""
    if ">" not in query:
        return clip_heading(query)
    return HEADING_SEPARATOR.join(clip_heading(part.strip()) for part in query.split(">"))


def _heading_key(section: Section) -> str:
    return _norm(section.heading)


def _path_key(section: Section) -> str:
    return _norm_path(section.heading_path)


def _matching(
    sections: Sequence[Section], wanted: str, key: Callable[[Section], str], test: Callable[[str, str], bool]
) -> list[Section]:
    """The sections whose key passes `test` with `wanted` as written (case already ignored), else with
    accents ignored on both sides."""
    found = [s for s in sections if test(key(s), wanted)]
    if found:
        return found
    folded = fold(wanted)
    return [s for s in sections if test(fold(key(s)), folded)]


def _ambiguous(query: str, candidates: list[Section], doc_id: str) -> SectionAmbiguous:
    shown = clip_list((f"'{s.heading_path}'" for s in candidates), LISTED_CHARS, HEADING_PATH_CHARS, "; ")
    return SectionAmbiguous(
        f"Section '{printable(query)}' is ambiguous in '{printable(doc_id, ID_CHARS)}': "
        f"pass one of these heading paths: {shown}."
    )


def _no_section(query: str, sections: tuple[Section, ...] | list[Section], doc_id: str) -> SectionNotFound:
    where = " (read_document mode='outline' lists them all)"
    shown = clip_list((f"'{s.heading_path}'" for s in sections), LISTED_CHARS, HEADING_PATH_CHARS, "; ", where)
    return SectionNotFound(
        f"No section '{printable(query)}' in '{printable(doc_id, ID_CHARS)}'. Its headings are: {shown}."
    )
