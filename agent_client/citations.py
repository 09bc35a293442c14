"""Citations: found in the answer whatever their shape, checked against what the run's tools returned.

The system prompt asks for one shape, `(guides/setup.md — Installation)`; models also write
`(guides/setup.md > Installation)` (mcp-docs' own heading paths), ``(`id` — h)``, `(**id** — h)`,
`(source: id — h)`, footnotes `[1]: id#heading`, `[id — h]` and Markdown links to `docs://id#heading`.
Every one of them is parsed, so none escapes the check by its form.

A citation is verified when its id is a document a search or read of this run showed (compared exactly,
after `norm_id`) and its heading, when given, is a heading of that same document that a result showed.
Anything else carries a reason: "no such document", "never read", "no such heading in that document"."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal
from urllib.parse import unquote

from .evidence import Evidence, norm_id
from .models import Citation

Reason = Literal["no such document", "never read", "no such heading in that document"]
NO_SUCH_DOCUMENT: Reason = "no such document"
NEVER_READ: Reason = "never read"
NO_SUCH_HEADING: Reason = "no such heading in that document"

# An id: path segments (spaces allowed inside, as in Obsidian vaults), ending with an extension.
_ID = r"(?<![^\s(\[;,:*`])(?!(?:and|et|und|y|or|ou)\s)[^\s()\[\]<>{}`*|;,—–§#>\"'][^()\[\]<>{}`*|;,—–§#>\n\"]*?\.[A-Za-z][A-Za-z0-9]{0,9}(?![\w.])"
_ID_RE = re.compile(_ID)
# one level of nested parentheses: headings such as "Persistent storage (write-ahead log)" or "(top)"
_PAREN = re.compile(r"\(((?:[^()\n]|\([^()\n]{0,200}\)){3,400})\)")
# what may stand between two citations of one group: "(a.md — H1, b.md — H2)", "(a.md and b.md)"
_LIST_SEPARATOR = re.compile(r"(?:,|&|\band|\bet|\by|\bund)\s*$", re.IGNORECASE)
_LIST_SPLIT = re.compile(r"(?:,|&|\band\b|\bet\b|\by\b|\bund\b)\s*", re.IGNORECASE)
_BRACKET = re.compile(r"\[([^\[\]\n]{3,400})\](?![(:\[])")
_FOOTNOTE = re.compile(r"^\s*\[\^?[\w.-]{1,12}\]:\s*(.+?)\s*$", re.MULTILINE)
_DOCS_URI = re.compile(r"<?docs://(?P<id>[^\s)<>#\"]+)(?:#(?P<frag>[^\s)<>\"]*))?>?")
_LABEL = re.compile(
    r"^\s*(?:sources?|see(?:\s+also)?|from|cf\.?|ref(?:erence)?s?|quelle|fuente|fonte)(?:\s*[:.]\s*|\s+)",
    re.IGNORECASE,
)
_SEPARATOR = re.compile(r"^\s*(?:—|–|-|§|:|,|#|>|›|»|/)\s*")
_MARKUP = re.compile(r"\*\*|__|`|\*")
# what a markdown id ends with; another extension counts only when the run's tools showed ids like it
_DOC_SUFFIXES = (".md", ".markdown", ".mdx")


def parse_citations(answer: str) -> list[tuple[str, str | None]]:
    """(id, heading or None) for each cited source, in order of appearance, without repeats."""
    found: list[tuple[int, str, str | None]] = []
    uri_spans = []
    for m in _DOCS_URI.finditer(answer):
        frag = unquote(m.group("frag") or "").strip() or None
        found.append((m.start(), unquote(m.group("id")), frag))
        uri_spans.append(m.span())
    masked = _mask(answer, uri_spans)
    seen_spans: list[tuple[int, int]] = []
    for m in _FOOTNOTE.finditer(masked):
        found += [(m.start(1) + off, i, h) for off, i, h in _parse_group(m.group(1))]
        seen_spans.append(m.span())
    masked = _mask(masked, seen_spans)
    for pattern in (_PAREN, _BRACKET):
        for m in pattern.finditer(masked):
            found += [(m.start(1) + off, i, h) for off, i, h in _parse_group(m.group(1))]
    unique = dict.fromkeys((doc_id, heading) for _, doc_id, heading in sorted(found, key=lambda f: f[0]))
    return list(unique)


def _mask(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """Blank out parts already parsed, keeping offsets."""
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def _parse_group(group: str) -> list[tuple[int, str, str | None]]:
    """The citations inside one parenthesised / bracketed group or footnote: each id, and as its heading the
    text between it and the next id (or the end), without separators and markup."""
    text = _MARKUP.sub(lambda m: " " * len(m.group()), group)
    out: list[tuple[int, str, str | None]] = []
    for part_start, part in _parts(text):
        label = _LABEL.match(part)
        offset = label.end() if label else 0
        offset += len(part[offset:]) - len(part[offset:].lstrip())
        # the id must open the part (after a label): "(see below — it is long.md)" is prose, not a citation.
        # Ids are only tried where one may start, so a hostile 2,000,000-character answer stays linear.
        first = _ID_RE.match(part, offset)
        if first is None:
            continue
        ids = [first]
        # a later id starts another citation only after a list separator and when it looks like a document:
        # "OpenTelemetry.io word list" or "Runtime .NET" inside a heading are no ids
        for split in _LIST_SPLIT.finditer(part, first.end()):
            m = _ID_RE.match(part, split.end())
            if m and m.start() >= ids[-1].end() and ("/" in m.group() or _is_doc(m.group())):
                ids.append(m)
        for n, m in enumerate(ids):
            end = ids[n + 1].start() if n + 1 < len(ids) else len(part)
            rest = part[m.end() : end]
            if n + 1 < len(ids):
                rest = _LIST_SEPARATOR.sub("", rest.rstrip())
            sep = _SEPARATOR.match(rest)
            if not sep and rest.strip():
                break  # words after the id that are no heading: not a citation
            after = _unquote((rest[sep.end() :] if sep else "").strip().rstrip(".").strip())
            out.append((part_start + m.start(), m.group().strip(), after or None))
    return out


def _is_doc(doc_id: str) -> bool:
    return doc_id.lower().endswith(_DOC_SUFFIXES)


def _unquote(heading: str) -> str:
    """A heading in quotes loses them; a quote that belongs to the heading ("… 'Runtime.Native'") stays."""
    pairs = {'"': '"', "'": "'", "“": "”", "«": "»", "‘": "’"}
    if len(heading) >= 2 and pairs.get(heading[0]) == heading[-1]:
        return heading[1:-1].strip()
    return heading


def _parts(text: str) -> list[tuple[int, str]]:
    out, start = [], 0
    for piece in text.split(";"):
        out.append((start, piece))
        start += len(piece) + 1
    return out


def _looks_like_document(doc_id: str, evidence: Evidence) -> bool:
    if _is_doc(doc_id):
        return True
    suffix = "." + doc_id.lower().rsplit(".", 1)[-1]
    return any(d.id.lower().endswith(suffix) for d in evidence.documents.values())


def _resolve(cited: str, evidence: Evidence) -> str:
    """Where the id starts when prose runs into it, "(in guides/setup.md — …)": the first whole-word tail of
    the cited text that is exactly an id the run showed. Never a part of an id: `install.md` stays itself."""
    words = cited.split(" ")
    for i in range(len(words)):
        tail = " ".join(words[i:])
        if tail and evidence.document(tail) is not None:
            return tail
    return cited


def check_citations(answer: str, evidence: Evidence) -> list[Citation]:
    """Each citation of the answer, verified or not with a provisional reason ("never read" for what the run
    did not show; `confirm` may later turn it into "no such document" / "no such heading…")."""
    out = []
    for cited, heading in parse_citations(answer):
        doc_id = _resolve(cited, evidence)
        if not _looks_like_document(doc_id, evidence):
            continue
        doc = evidence.document(doc_id)
        if doc is None:
            out.append(Citation(id=doc_id, heading=heading, verified=False, reason=NEVER_READ))
        elif heading is not None and not doc.has_heading(heading):
            reason = NO_SUCH_HEADING if doc.all_headings else NEVER_READ
            out.append(Citation(id=doc_id, heading=heading, verified=False, reason=reason))
        else:
            out.append(Citation(id=doc_id, heading=heading, verified=True))
    return out


def refine(citations: list[Citation], outlines: dict[str, Evidence | None]) -> list[Citation]:
    """Sharpen the reasons of unverified citations with the outline of each cited document, fetched after the
    answer (`outlines[norm_id(id)]`: None when the server said there is no such document). This only explains;
    it never verifies: what the run did not show stays unverified."""
    out = []
    for c in citations:
        key = norm_id(c.id)
        if c.verified or key not in outlines:
            out.append(c)
            continue
        outline = outlines[key]
        doc = outline.document(c.id) if outline is not None else None
        if doc is None:  # the server has no such document (or answered for another one)
            reason: Reason = NO_SUCH_DOCUMENT
        else:
            if c.heading is not None and doc.all_headings and not doc.has_heading(c.heading):
                reason = NO_SUCH_HEADING
            else:
                reason = NEVER_READ
        out.append(c.model_copy(update={"reason": reason}))
    return out
