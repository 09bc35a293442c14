"""Markdown → a document model: front matter, title, summary, heading tree with 1-based line ranges, tags, links.

Pure: text in, dataclasses out. Block structure comes from `blocks` (CommonMark's block
rules, so `#` lines inside code fences are not headings, setext headings count); the
little inline clean-up needed for headings and summaries is done in `inline`.

Every file is untrusted: the work done here is linear in its size (no pattern that
rescans a line, no copy of the rest of the document per heading), what it keeps of
a heading is bounded, and a caller can give a CPU time budget that raises ParseTimeout.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from .blocks import Blocks, paragraph_text, scan_blocks
from .errors import ParseTimeout
from .inline import INLINE_CODE, MARKDOWN_LINK_FIND, WIKILINK_FIND, WIKILINK_WHOLE, clean_inline, wikilink_parts
from .snippets import clip
from .tokens import estimate_tokens

PREAMBLE_HEADING = "(top)"
SUMMARY_CHARS = 300
HEADING_SEPARATOR = " > "
# What a heading or heading path may hold (the section's text itself is never cut): real headings are
# far shorter (the longest of 5,671 in the OTel docs has 170 characters); a 1 MB one is shown clipped.
MAX_HEADING_CHARS = 200
MAX_HEADING_PATH_CHARS = 1000
MAX_TAGS = 100
# Distinct links (as written) a note's parse keeps. More are only counted: 400,000 distinct `[[n1]] [[n2]] …`
# (4.7 MB) took 8 s to parse into objects, and the catalog keeps 5,000 targets of them anyway (links.py).
MAX_LINKS = 20_000
MAX_FRONT_MATTER_DEPTH = 50
MAX_FRONT_MATTER_VALUES = 100_000
_CHECK_EVERY = 1024  # loop iterations between two looks at the clock

try:  # the C loader is ~10x faster; fall back where libyaml is missing
    _YamlLoader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _YamlLoader = yaml.SafeLoader


@dataclass(frozen=True)
class Link:
    target: str
    kind: str  # "wiki" | "markdown"
    heading: str | None = None
    alias: str | None = None
    line: int = 0  # 1-based, where the link is first written
    count: int = 1  # times written exactly so in the note (`[[a]]` three times is one Link of count 3)


@dataclass(frozen=True)
class Section:
    index: int
    heading: str
    heading_path: str
    level: int  # 0 for the text before the first heading
    line_start: int  # 1-based, the heading line
    line_end: int  # last line of the section's own text (before the next heading)
    subtree_end: int  # last line including its subsections
    body: str  # own text, heading line excluded
    tokens: int

    @property
    def path_parts(self) -> tuple[str, ...]:
        return tuple(self.heading_path.split(HEADING_SEPARATOR)) if self.heading_path else ()


@dataclass(frozen=True)
class ParsedDocument:
    title: str
    summary: str
    front_matter: dict[str, Any]
    tags: tuple[str, ...]
    aliases: tuple[str, ...]
    lang: str | None
    sections: tuple[Section, ...]
    links: tuple[Link, ...]
    lines: tuple[str, ...]
    warnings: tuple[str, ...] = field(default=())

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


class _Deadline:
    """A budget of this thread's CPU time: the work a file costs, however busy the machine is."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.at = math.inf if seconds is None else time.thread_time() + seconds

    def check(self) -> None:
        if time.thread_time() >= self.at:
            raise ParseTimeout(f"parsing needed more than {self.seconds:g} s of CPU time")


def normalize_text(text: str) -> str:
    """Strip a BOM and turn CRLF / CR line ends into LF, the form every line number refers to."""
    text = text.removeprefix("\ufeff")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def parse_markdown(text: str, file_stem: str = "untitled", *, seconds: float | None = None) -> ParsedDocument:
    """Parse a document; with `seconds`, raise ParseTimeout once parsing has used more CPU time than that."""
    deadline = _Deadline(seconds)
    text = normalize_text(text)
    lines = text.split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()
    blocks = scan_blocks(lines, text.endswith("\n"), deadline.check)
    return document_from_blocks(lines, blocks, file_stem, deadline)


def document_from_blocks(
    lines: list[str], blocks: Blocks, file_stem: str = "untitled", deadline: _Deadline | None = None
) -> ParsedDocument:
    """The document model of `lines` given their block structure."""
    deadline = deadline or _Deadline(None)
    n_lines = len(lines)
    warnings: list[str] = []
    front_matter: dict[str, Any] = {}
    if blocks.front_matter is not None:
        front_matter = _load_front_matter(blocks.front_matter, warnings)
    content_start = blocks.content_start
    code_lines: set[int] = set()
    for start, end in blocks.code:
        code_lines.update(range(start, end))
    headings: list[tuple[int, int, int, str]] = []  # (level, start0, end0_exclusive, text)
    for k, h in enumerate(blocks.headings):
        if k % _CHECK_EVERY == 0:
            deadline.check()
        if h.setext and _LIST_ITEM.match(h.text):
            continue  # a list followed by a rule, not a setext heading
        headings.append((h.level, h.start, h.end, _at_most(clean_inline(strip_heading_id(h.text)), MAX_HEADING_CHARS)))
    paragraphs: list[str] = []
    for span in blocks.paragraphs:
        if len(paragraphs) >= 8 or sum(len(p) for p in paragraphs) >= SUMMARY_CHARS:
            break
        cleaned = clean_inline(paragraph_text(lines, span)[: SUMMARY_CHARS * 2])
        if cleaned:
            paragraphs.append(cleaned)

    sections = _build_sections(lines, n_lines, content_start, headings, deadline)
    if not sections and front_matter:
        # A note of front matter alone (a stub, a tag hub): the front matter is its one section, so the
        # note can be found by its title and tags and read like any other.
        body = "\n".join(lines[:content_start])
        sections = [
            Section(
                0, PREAMBLE_HEADING, PREAMBLE_HEADING, 0, 1, content_start, content_start, body, estimate_tokens(body)
            )
        ]
    title = _first_str(front_matter.get("title"))
    if not title:
        title = next((h[3] for h in headings if h[0] == 1 and h[3]), "") or file_stem
    tags = _collect_tags(front_matter, lines, content_start, code_lines, deadline)
    if len(tags) > MAX_TAGS:
        warnings.append(f"{len(tags)} tags: only the first {MAX_TAGS} are kept")
        tags = tags[:MAX_TAGS]
    aliases = tuple(_as_str_list(front_matter.get("aliases") or front_matter.get("alias")))
    from .language import declared_language

    lang_raw = front_matter.get("lang") or front_matter.get("language")
    lang = declared_language(lang_raw) if isinstance(lang_raw, str) else None
    if lang_raw and lang is None:
        warnings.append(
            f"unsupported lang '{str(lang_raw)[:20]}' in front matter; the language is detected from the text"
        )
    links = _collect_links(lines, content_start, code_lines, deadline, warnings)
    return ParsedDocument(
        title=title[:500],
        summary=_summarize(paragraphs, front_matter),
        front_matter=front_matter,
        tags=tags,
        aliases=aliases,
        lang=lang,
        sections=tuple(sections),
        links=links,
        lines=tuple(lines),
        warnings=tuple(warnings),
    )


class _FrontMatterTooBig(Exception):
    pass


_FLOW_BRACKETS = re.compile(r"[\[\]{}]")


def _load_front_matter(raw: str, warnings: list[str]) -> dict[str, Any]:
    try:
        _check_nesting(raw)
        data = yaml.load(raw, Loader=_YamlLoader)
        if data is None:
            return {}
        if not isinstance(data, dict):
            warnings.append("front matter is not a mapping: ignored")
            return {}
        # YAML dates and other objects must survive JSON storage.
        budget = [MAX_FRONT_MATTER_VALUES]
        return {_without_nul(str(k)): _jsonable(v, budget, 1) for k, v in data.items()}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        warnings.append(f"malformed front matter{where}: ignored")
    except _FrontMatterTooBig:
        warnings.append(
            f"front matter nests deeper than {MAX_FRONT_MATTER_DEPTH} levels "
            f"or holds more than {MAX_FRONT_MATTER_VALUES} values: ignored"
        )
    return {}


def _check_nesting(raw: str) -> None:
    """Refuse deep YAML before loading it: libyaml's scanner is quadratic in the depth of `[[[…`
    and its loader recurses in C (a stack overflow, not an exception, kills the process)."""
    depth = 0
    for m in _FLOW_BRACKETS.finditer(raw):  # an over-count (brackets inside strings) only errs on the safe side
        depth += 1 if m.group(0) in "[{" else -1
        if depth > MAX_FRONT_MATTER_DEPTH:
            raise _FrontMatterTooBig
    depth = 0
    for event in yaml.parse(raw, Loader=_YamlLoader):  # block nesting too; the event parser does not recurse
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_FRONT_MATTER_DEPTH:
                raise _FrontMatterTooBig
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def _jsonable(value: Any, budget: list[int], depth: int) -> Any:
    """A JSON-ready copy, within a budget of values: YAML aliases can make a small file expand a billion times."""
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_FRONT_MATTER_DEPTH:
        raise _FrontMatterTooBig
    if isinstance(value, str):
        return _without_nul(value)
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {_without_nul(str(k)): _jsonable(v, budget, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v, budget, depth + 1) for v in value]
    return str(value)


def _without_nul(text: str) -> str:
    """The text without NUL characters. A file holding a NUL byte is skipped as binary, but YAML's escapes
    (`"\\0"`, `"\\x00"`, `"\\u0000"`) put one in a front matter value; PostgreSQL's text refuses it (the whole
    batch with it), and no reader could type it: dropping it keeps the title, tag or alias usable. Lone
    surrogates (`"\\udce9"`, which the pure-Python YAML loader accepts where libyaml refuses the file) become
    U+FFFD: neither SQLite nor PostgreSQL can encode them."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    if not text.isascii() and _SURROGATE.search(text):
        text = _SURROGATE.sub("\ufffd", text)
    return text


_SURROGATE = re.compile("[\ud800-\udfff]")


def _build_sections(
    lines: list[str], n_lines: int, content_start: int, headings: list[tuple[int, int, int, str]], deadline: _Deadline
) -> list[Section]:
    sections: list[Section] = []
    first_heading = headings[0][1] if headings else n_lines
    pre_lines = lines[content_start:first_heading]
    if any(line.strip() for line in pre_lines):
        body = "\n".join(pre_lines).strip("\n")
        start = content_start + 1
        end = _trim_end(lines, start, first_heading)
        sections.append(Section(0, PREAMBLE_HEADING, PREAMBLE_HEADING, 0, start, end, end, body, estimate_tokens(body)))
    subtree_next = _subtree_ends(headings, n_lines)
    stack: list[tuple[int, str]] = []
    seen_paths: dict[str, int] = {}
    for k, (level, start0, end0, text) in enumerate(headings):
        if k % _CHECK_EVERY == 0:
            deadline.check()
        while stack and stack[-1][0] >= level:
            stack.pop()
        heading = text or "(untitled)"
        path = _heading_path([h for _, h in stack], heading)
        count = seen_paths.get(path, 0) + 1
        seen_paths[path] = count
        if count > 1:  # identical paths would make read_section ambiguous forever
            suffix = f" ({count})"
            heading = _at_most(heading, MAX_HEADING_CHARS - len(suffix)) + suffix
            path = _heading_path([h for _, h in stack], heading)
        stack.append((level, heading))
        next_start = headings[k + 1][1] if k + 1 < len(headings) else n_lines
        body = "\n".join(lines[end0:next_start]).strip("\n")
        own_end = _trim_end(lines, start0 + 1, next_start)
        subtree_end = _trim_end(lines, start0 + 1, subtree_next[k])
        sections.append(
            Section(
                index=len(sections),
                heading=heading,
                heading_path=path,
                level=level,
                line_start=start0 + 1,
                line_end=own_end,
                subtree_end=subtree_end,
                body=body,
                tokens=estimate_tokens("\n".join(lines[start0:next_start])),
            )
        )
    return sections


def clip_heading(text: str) -> str:
    """A heading as the parser keeps it: at most MAX_HEADING_CHARS characters."""
    return _at_most(text, MAX_HEADING_CHARS)


def _at_most(text: str, limit: int) -> str:
    return text if len(text) <= limit else clip(text, limit - 1)  # clip may add one character, the ellipsis


def _heading_path(ancestors: list[str], heading: str) -> str:
    """'A > B > heading'; when that is too long the ancestors are clipped, never the section's own heading."""
    path = HEADING_SEPARATOR.join([*ancestors, heading])
    if len(path) <= MAX_HEADING_PATH_CHARS:
        return path
    room = MAX_HEADING_PATH_CHARS - len(heading) - len(HEADING_SEPARATOR)
    return _at_most(HEADING_SEPARATOR.join(ancestors), room) + HEADING_SEPARATOR + heading


def _subtree_ends(headings: list[tuple[int, int, int, str]], n_lines: int) -> list[int]:
    """For each heading, the first line of the next heading of its level or higher (or the end)."""
    ends = [n_lines] * len(headings)
    open_: list[int] = []  # headings whose subtree is still open, levels increasing
    for k, (level, start0, _, _) in enumerate(headings):
        while open_ and headings[open_[-1]][0] >= level:
            ends[open_.pop()] = start0
        open_.append(k)
    return ends


def _trim_end(lines: list[str], start_1based: int, stop0_exclusive: int) -> int:
    """The 1-based number of the last non-blank line in [start, stop), at least `start`."""
    end = stop0_exclusive
    while end > start_1based and not lines[end - 1].strip():
        end -= 1
    return max(end, start_1based)


_INLINE_TAG = re.compile(r"(?<![\w/&#\[({])#([A-Za-z_\u00c0-\uffff][\w\-/\u00c0-\uffff]*)")
_SPACES = re.compile(r"\s+")
_HEADING_ID_OPEN = re.compile(r"\{:?\s*#")
_LIST_ITEM = re.compile(r"\s{0,3}(?:[-+*]|\d{1,9}[.)])(?:\s|$)")
_ATX_MARKER = re.compile(r"^\s{0,3}#{1,6}(?=\s|$)")


def strip_heading_id(text: str) -> str:
    """Drop a trailing Hugo / Pandoc / kramdown heading id: '## Spans {#spans}', '## Spans {: #spans .cls}'.

    Found from the end, as `\\s*\\{:?\\s*#[^}]*\\}\\s*$` would but without retrying at every space or brace.
    """
    body = text.rstrip()
    if not body.endswith("}"):
        return text
    previous_close = body.rfind("}", 0, len(body) - 1)
    m = _HEADING_ID_OPEN.search(body, previous_close + 1, len(body) - 1)
    if m is None:
        return text
    return body[: m.start()].rstrip()


def _summarize(paragraphs: list[str], front_matter: dict[str, Any]) -> str:
    explicit = _first_str(front_matter.get("summary") or front_matter.get("description"))
    return clip(explicit or " ".join(paragraphs), SUMMARY_CHARS)


def _first_str(value: Any) -> str:
    if isinstance(value, str):
        return _SPACES.sub(" ", value).strip()
    if isinstance(value, list) and value and isinstance(value[0], str):
        return value[0].strip()
    return ""


def _as_str_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [p for p in (s.strip() for s in re.split(r"[,\n]", value)) if p]
    if isinstance(value, list):
        return [str(v).strip() for v in value if isinstance(v, (str, int, float)) and str(v).strip()]
    return []


def normalize_tag(tag: str) -> str:
    return tag.strip().lstrip("#").strip().lower()


def _lines_with(char: str, lines: list[str], content_start: int, code_lines: set[int]) -> list[int]:
    """The numbers of the lines outside code that hold `char` (one quick pass; most lines hold none)."""
    return [n for n in range(content_start, len(lines)) if char in lines[n] and n not in code_lines]


def _collect_tags(
    front_matter: dict[str, Any], lines: list[str], content_start: int, code_lines: set[int], deadline: _Deadline
) -> tuple[str, ...]:
    raw = front_matter.get("tags", front_matter.get("tag"))
    found: list[str] = []
    if isinstance(raw, str):
        found.extend(t for t in re.split(r"[,\s]+", raw) if t)
    else:
        found.extend(_as_str_list(raw))
    for k, n in enumerate(_lines_with("#", lines, content_start, code_lines)):
        if k % _CHECK_EVERY == 0:
            deadline.check()
        line = lines[n]
        line = _ATX_MARKER.sub("", line)  # '## Setup #linux': the marker is not a tag, '#linux' is
        line = strip_heading_id(line)  # nor is a heading id: '## Spans {#spans}'
        line = INLINE_CODE.sub(" ", line)
        for match in _INLINE_TAG.finditer(line):
            tag = match.group(1).rstrip("/-")
            if not tag.replace("/", "").replace("-", "").replace("_", "").isdigit():
                found.append(tag)
    seen: dict[str, None] = {}
    for tag in found:
        norm = normalize_tag(tag)
        if norm and len(norm) <= 100:
            seen.setdefault(norm, None)
    return tuple(seen)


def _collect_links(
    lines: list[str], content_start: int, code_lines: set[int], deadline: _Deadline, warnings: list[str]
) -> tuple[Link, ...]:
    """Each link as first written, with how many times it is written the same way. A line's links are counted
    by `Counter(findall(...))`, in C: a note of 800,000 `[[a]]` (a red team's link bomb, 4.9 MB) parses in
    about 0.5 s instead of 6 s spent making one object per link."""
    links: dict[tuple[str, ...], Link] = {}
    counts: dict[tuple[str, ...], int] = {}
    more = 0  # links written after MAX_LINKS distinct ones, not kept
    for k, n in enumerate(_lines_with("[", lines, content_start, code_lines)):
        if k % _CHECK_EVERY == 0:
            deadline.check()
        line = lines[n]
        if "`" in line:
            line = INLINE_CODE.sub(" ", line)
        for whole, times in Counter(WIKILINK_WHOLE.findall(line)).items():
            written = ("wiki", whole)
            if written in counts:
                counts[written] += times
                continue
            if len(counts) >= MAX_LINKS:
                more += times
                continue
            counts[written] = times  # `[[]]` too, so that a run of them is not looked at again
            match = WIKILINK_FIND.fullmatch(whole)
            target, heading, alias = wikilink_parts(*match.groups("")) if match else ("", None, None)
            if target or heading:
                links[written] = Link(target=target, kind="wiki", heading=heading, alias=alias, line=n + 1)
        for (label, url), times in Counter(MARKDOWN_LINK_FIND.findall(line)).items():
            md_written = ("markdown", f"[{label}]({url})")
            if md_written in counts:
                counts[md_written] += times
                continue
            if len(counts) >= MAX_LINKS:
                more += times
                continue
            counts[md_written] = times
            links[md_written] = Link(target=url, kind="markdown", alias=label.strip() or None, line=n + 1)
    if more:
        warnings.append(f"{more:,} more links not read (the first {MAX_LINKS:,} distinct ones are)")
    return tuple(link if counts[w] == 1 else replace(link, count=counts[w]) for w, link in links.items())


def section_text(lines: tuple[str, ...] | list[str], section: Section, include_subsections: bool) -> str:
    end = section.subtree_end if include_subsections else section.line_end
    return "\n".join(lines[section.line_start - 1 : end])
