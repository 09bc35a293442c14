"""Sections cut into the chunks the embedder sees: each chunk is the document title and heading path (the
prefix) plus a piece of the section's text, pieces overlapping a little so no sentence is lost at a cut."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from ..inline import drop_spans
from ..markdown import HEADING_SEPARATOR, PREAMBLE_HEADING, ParsedDocument, clean_inline

CHUNK_OVERLAP = 150  # characters carried over from the end of the previous chunk of a section
MIN_CHUNK_BUDGET = 300


@dataclass(frozen=True)
class Chunk:
    section_idx: int
    ord: int
    text: str  # what is embedded: prefix + "\n" + piece
    prefix_len: int  # the piece starts at text[prefix_len:]

    @property
    def hash(self) -> str:
        return hashlib.blake2b(self.text.encode("utf-8"), digest_size=16).hexdigest()

    @property
    def piece(self) -> str:
        return self.text[self.prefix_len :]


_BLANK_LINES = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)[^\n]*$", re.MULTILINE)
_SHORTCODE = (re.compile(r"\{\{[<%]"), re.compile(r"[%>]\}\}"))
_HTML_COMMENT = (re.compile(r"<!--"), re.compile(r"-->"))


def section_prefix(title: str, heading_path: str) -> str:
    """'Title > Parent > Heading' without repeating the title when the path starts with it."""
    if not heading_path or heading_path == PREAMBLE_HEADING:
        return title
    first = heading_path.split(HEADING_SEPARATOR, 1)[0]
    if first.strip().lower() == title.strip().lower():
        return heading_path
    return f"{title}{HEADING_SEPARATOR}{heading_path}"


def _clean(body: str) -> list[str]:
    """A section body → plain paragraphs: comments, template shortcodes and fence markers dropped, inline marks removed."""
    body = drop_spans(body, *_HTML_COMMENT)
    body = drop_spans(body, *_SHORTCODE)
    body = _FENCE.sub("", body)
    return [p for p in (clean_inline(block) for block in _BLANK_LINES.split(body)) if p]


def _hard_split(text: str, budget: int) -> list[str]:
    """Split one long paragraph at sentence ends, then at spaces, then anywhere, into pieces ≤ budget."""
    out: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(text):
        sentence = sentence.strip()
        if not sentence:
            continue
        while len(sentence) > budget:
            cut = sentence.rfind(" ", 0, budget)
            cut = cut if cut > budget // 2 else budget
            head, sentence = sentence[:cut].strip(), sentence[cut:].strip()
            if current:
                out.append(current)
                current = ""
            out.append(head)
        if not current:
            current = sentence
        elif len(current) + 1 + len(sentence) <= budget:
            current = f"{current} {sentence}"
        else:
            out.append(current)
            current = sentence
    if current:
        out.append(current)
    return out


def _tail(text: str, size: int) -> str:
    """The last ~`size` characters of a piece, starting at a word boundary."""
    if len(text) <= size:
        return text
    cut = text.find(" ", len(text) - size)
    return text[cut + 1 :] if cut != -1 else text[-size:]


def split_pieces(body: str, budget: int, overlap: int = CHUNK_OVERLAP) -> list[str]:
    """Pack paragraphs greedily into pieces ≤ budget; each next piece starts with the tail of the previous one."""
    paragraphs: list[str] = []
    for p in _clean(body):
        paragraphs.extend(_hard_split(p, budget) if len(p) > budget else [p])
    pieces: list[str] = []
    current = ""
    for p in paragraphs:
        if not current:
            current = p
        elif len(current) + 1 + len(p) <= budget:
            current = f"{current}\n{p}"
        else:
            pieces.append(current)
            carry = _tail(current, overlap) if overlap else ""
            current = f"{carry}\n{p}" if carry and len(carry) + 1 + len(p) <= budget else p
    if current:
        pieces.append(current)
    return pieces


# A subsection whose whole text is shorter than this joins its parent's last chunk (heading and text) when it fits:
# on the Obsidian help vault 20,717 of 52,704 sections with text are one piece under 200 characters (a step, a
# one-line note under a heading), each a vector of its own. Only into an ancestor's chunk: a hit on it points at
# the parent, whose read_section holds its subsections. 57,678 -> 52,151 chunks there (-10 %).
SMALL_SECTION_CHARS = 200


def chunk_document(parsed: ParsedDocument, max_chars: int, overlap: int = CHUNK_OVERLAP) -> list[Chunk]:
    """Chunks of every section with text: 'title > heading path' then a piece of the body, ≤ max_chars in all;
    a small subsection is appended to its parent's last chunk instead (SMALL_SECTION_CHARS). Vectors only: the
    full-text index keeps one unit per section."""
    chunks: list[Chunk] = []
    owner: str | None = None  # heading path of the section the last chunk belongs to
    for section in parsed.sections:
        if not section.body.strip():
            continue
        prefix = section_prefix(parsed.title, section.heading_path)[: max_chars // 3]
        budget = max(MIN_CHUNK_BUDGET, max_chars - len(prefix) - 1)
        pieces = split_pieces(section.body, budget, overlap)
        if (
            len(pieces) == 1
            and len(pieces[0]) < SMALL_SECTION_CHARS
            and chunks
            and owner
            and section.heading_path.startswith(owner + HEADING_SEPARATOR)
        ):
            last = chunks[-1]
            joined = f"{last.text}\n{section.heading}\n{pieces[0]}"
            if len(joined) <= max_chars:
                chunks[-1] = Chunk(last.section_idx, last.ord, joined, last.prefix_len)
                continue
        for n, piece in enumerate(pieces):
            chunks.append(Chunk(section.index, n, f"{prefix}\n{piece}", len(prefix) + 1))
        owner = section.heading_path
    return chunks


# A document's own unit is its title and lead, not a whole chunk's worth: the documents phase embeds one per
# document before any section, and a model's time grows with the input's length (attention with its square).
DOCUMENT_UNIT_CHARS = 300


def document_chunk(parsed: ParsedDocument, max_chars: int) -> Chunk | None:
    """The document-level unit, embedded for every document before any section (embedding_worker.py): the title,
    then the summary (front matter's description) when there is one, then the text from the top, up to max_chars and
    up to DOCUMENT_UNIT_CHARS. Its `section_idx` is the first section with text, where a hit on it points. None for a
    document with no text.

    One vector per document makes semantic search useful across the whole collection in a tenth of the time all
    sections take (57,678 section chunks against 6,289 documents on the Obsidian help vault)."""
    sections = [s for s in parsed.sections if s.body.strip()]
    if not sections:
        return None
    max_chars = min(max_chars, DOCUMENT_UNIT_CHARS)
    prefix = parsed.title[: max_chars // 3]
    budget = max(MIN_CHUNK_BUDGET, max_chars - len(prefix) - 1)
    paragraphs: list[str] = []
    described = parsed.front_matter.get("description") or parsed.front_matter.get("summary")
    summary = clean_inline(described) if isinstance(described, str) else ""  # else the summary repeats the lead
    if summary:
        paragraphs.append(summary[:budget])
    for section in sections:
        if sum(len(p) + 1 for p in paragraphs) >= budget:
            break
        heading = section.heading if section.heading and section.heading != PREAMBLE_HEADING else ""
        pieces = split_pieces(section.body, budget, overlap=0)
        if heading and section.heading.strip().lower() != parsed.title.strip().lower():
            paragraphs.append(heading)
        paragraphs.extend(p for p in pieces[:1] if p not in paragraphs)
    lead = "\n".join(paragraphs)
    if len(lead) > budget:
        lead = lead[:budget]
        cut = lead.rfind(" ", budget // 2)
        lead = lead[:cut] if cut > 0 else lead
    if not lead.strip():
        return None
    return Chunk(sections[0].index, 0, f"{prefix}\n{lead}", len(prefix) + 1)
