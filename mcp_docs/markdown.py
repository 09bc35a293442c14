"""Markdown → a document model: front matter, title, summary, heading tree with 1-based line ranges, tags, links.

Pure: text in, dataclasses out. Block structure comes from markdown-it-py (so `#`
lines inside code fences are not headings, setext headings count), front matter
from mdit-py-plugins. Inline parsing is switched off for speed; the little inline
clean-up needed for headings and summaries is done here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import yaml
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from .snippets import MARKDOWN_LINK, clip
from .tokens import estimate_tokens

PREAMBLE_HEADING = "(top)"
SUMMARY_CHARS = 300
HEADING_SEPARATOR = " > "

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


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark").use(front_matter_plugin)
    md.core.ruler.disable(["inline", "text_join"])
    # Headings inside lists and block quotes are not sections, and these rules cost half of the
    # parse time on real docs. Without them, fences inside lists are still fences; the one
    # difference (a list followed by '---' read as a setext heading) is undone in parse_markdown.
    md.block.ruler.disable(["list", "blockquote", "reference"])
    return md


def normalize_text(text: str) -> str:
    """Strip a BOM and turn CRLF / CR line ends into LF, the form every line number refers to."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def parse_markdown(text: str, file_stem: str = "untitled") -> ParsedDocument:
    text = normalize_text(text)
    lines = text.split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()
    n_lines = len(lines)
    tokens = _parser().parse(text)

    warnings: list[str] = []
    front_matter: dict[str, Any] = {}
    content_start = 0  # 0-based first line after front matter
    code_lines: set[int] = set()
    headings: list[tuple[int, int, int, str]] = []  # (level, start0, end0_exclusive, text)
    paragraphs: list[str] = []

    for i, tok in enumerate(tokens):
        if tok.type == "front_matter":
            if tok.map:
                content_start = tok.map[1]
            front_matter = _load_front_matter(tok.content, warnings)
        elif tok.type in ("fence", "code_block", "html_block") and tok.map:
            code_lines.update(range(tok.map[0], tok.map[1]))
        elif tok.type == "heading_open" and tok.level == 0 and tok.map:
            inline = tokens[i + 1]
            if tok.markup in ("-", "=") and _LIST_ITEM.match(inline.content):
                continue  # a list followed by a rule, not a setext heading
            text = _HEADING_ATTRIBUTES.sub("", inline.content)
            headings.append((int(tok.tag[1]), tok.map[0], tok.map[1], clean_inline(text)))
        elif tok.type == "inline" and tokens[i - 1].type == "paragraph_open" and len(paragraphs) < 8:
            if sum(len(p) for p in paragraphs) < SUMMARY_CHARS:
                cleaned = clean_inline(tok.content[: SUMMARY_CHARS * 2])
                if cleaned:
                    paragraphs.append(cleaned)

    sections = _build_sections(lines, n_lines, content_start, headings)
    title = _first_str(front_matter.get("title"))
    if not title:
        title = next((h[3] for h in headings if h[0] == 1 and h[3]), "") or file_stem
    tags = _collect_tags(front_matter, lines, content_start, code_lines)
    aliases = tuple(_as_str_list(front_matter.get("aliases") or front_matter.get("alias")))
    from .settings import normalize_language

    lang_raw = front_matter.get("lang") or front_matter.get("language")
    lang = normalize_language(lang_raw) if isinstance(lang_raw, str) else None
    if lang_raw and lang is None:
        warnings.append(f"unsupported lang '{str(lang_raw)[:20]}' in front matter; using the root language")
    return ParsedDocument(
        title=title[:500],
        summary=_summarize(paragraphs, front_matter),
        front_matter=front_matter,
        tags=tags,
        aliases=aliases,
        lang=lang,
        sections=tuple(sections),
        links=_collect_links(lines, content_start, code_lines),
        lines=tuple(lines),
        warnings=tuple(warnings),
    )


def _load_front_matter(raw: str, warnings: list[str]) -> dict[str, Any]:
    try:
        data = yaml.load(raw, Loader=_YamlLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        warnings.append(f"malformed front matter{where}: ignored")
        return {}
    if data is None:
        return {}
    if not isinstance(data, dict):
        warnings.append("front matter is not a mapping: ignored")
        return {}
    # YAML dates and other objects must survive JSON storage.
    return {str(k): _jsonable(v) for k, v in data.items()}


def _jsonable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    return str(value)


def _build_sections(
    lines: list[str], n_lines: int, content_start: int, headings: list[tuple[int, int, int, str]]
) -> list[Section]:
    sections: list[Section] = []
    first_heading = headings[0][1] if headings else n_lines
    pre_lines = lines[content_start:first_heading]
    if any(line.strip() for line in pre_lines):
        body = "\n".join(pre_lines).strip("\n")
        start = content_start + 1
        end = _trim_end(lines, start, first_heading)
        sections.append(
            Section(0, PREAMBLE_HEADING, PREAMBLE_HEADING, 0, start, end, end, body, estimate_tokens(body))
        )
    stack: list[tuple[int, str]] = []
    seen_paths: dict[str, int] = {}
    for k, (level, start0, end0, text) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        heading = text or "(untitled)"
        path = HEADING_SEPARATOR.join([h for _, h in stack] + [heading])
        count = seen_paths.get(path, 0) + 1
        seen_paths[path] = count
        if count > 1:  # identical paths would make read_section ambiguous forever
            heading = f"{heading} ({count})"
            path = HEADING_SEPARATOR.join([h for _, h in stack] + [heading])
        stack.append((level, heading))
        next_start = headings[k + 1][1] if k + 1 < len(headings) else n_lines
        subtree_next = next((h[1] for h in headings[k + 1 :] if h[0] <= level), n_lines)
        body = "\n".join(lines[end0:next_start]).strip("\n")
        own_end = _trim_end(lines, start0 + 1, next_start)
        subtree_end = _trim_end(lines, start0 + 1, subtree_next)
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


def _trim_end(lines: list[str], start_1based: int, stop0_exclusive: int) -> int:
    """The 1-based number of the last non-blank line in [start, stop), at least `start`."""
    end = stop0_exclusive
    while end > start_1based and not lines[end - 1].strip():
        end -= 1
    return max(end, start_1based)


_INLINE_CODE = re.compile(r"`+[^`]*`+")
_WIKILINK = re.compile(r"!?\[\[([^\]\|#\n]*)(?:#([^\]\|\n]*))?(?:\|([^\]\n]*))?\]\]")
_HTML_TAG = re.compile(r"</?[A-Za-z][^>\n]*>")
_EMPHASIS = re.compile(r"(\*{1,3}|~~|==)(?=\S)(.+?)(?<=\S)\1")
# CommonMark: '_' never opens or closes emphasis inside a word (snake_case stays intact).
_UNDERSCORE_EMPHASIS = re.compile(r"(?<!\w)(_{1,3})(?=\S)(.+?)(?<=\S)\1(?!\w)")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_INLINE_TAG = re.compile(r"(?<![\w/&#\[({])#([A-Za-z_\u00c0-\uffff][\w\-/\u00c0-\uffff]*)")
_SPACES = re.compile(r"\s+")
# Hugo / Pandoc / kramdown heading ids: '## Spans {#spans}', '## Spans {: #spans .cls}'.
_HEADING_ATTRIBUTES = re.compile(r"\s*\{:?\s*#[^}]*\}\s*$")
_LIST_ITEM = re.compile(r"\s{0,3}(?:[-+*]|\d{1,9}[.)])(?:\s|$)")
_ATX_MARKER = re.compile(r"^\s{0,3}#{1,6}(?=\s|$)")


def clean_inline(text: str) -> str:
    """Inline Markdown → plain text: links keep their label, emphasis and code marks go."""
    if not text:
        return ""
    if "[" in text:
        text = _WIKILINK.sub(lambda m: m.group(3) or m.group(2) or m.group(1), text)
        text = MARKDOWN_LINK.sub(lambda m: m.group(1), text)
    if "<" in text:
        text = _HTML_TAG.sub("", text)
    if "`" in text:  # code spans keep their text verbatim: `OTEL_SERVICE_NAME` is not emphasis
        pieces = _CODE_SPAN.split(text)
        text = "".join(p if i % 3 == 2 else _strip_emphasis(p) for i, p in enumerate(pieces) if i % 3 != 1)
    else:
        text = _strip_emphasis(text)
    return " ".join(text.split())


def _strip_emphasis(text: str) -> str:
    if "*" in text or "~" in text or "=" in text:
        text = _EMPHASIS.sub(lambda m: m.group(2), text)
    if "_" in text:
        text = _UNDERSCORE_EMPHASIS.sub(lambda m: m.group(2), text)
    return text


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


def _collect_tags(
    front_matter: dict[str, Any], lines: list[str], content_start: int, code_lines: set[int]
) -> tuple[str, ...]:
    raw = front_matter.get("tags", front_matter.get("tag"))
    found: list[str] = []
    if isinstance(raw, str):
        found.extend(t for t in re.split(r"[,\s]+", raw) if t)
    else:
        found.extend(_as_str_list(raw))
    for n in range(content_start, len(lines)):
        line = lines[n]
        if n in code_lines or "#" not in line:
            continue
        line = _ATX_MARKER.sub("", line)  # '## Setup #linux': the marker is not a tag, '#linux' is
        line = _HEADING_ATTRIBUTES.sub("", line)  # nor is a heading id: '## Spans {#spans}'
        line = _INLINE_CODE.sub(" ", line)
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


def _collect_links(lines: list[str], content_start: int, code_lines: set[int]) -> tuple[Link, ...]:
    links: list[Link] = []
    for n in range(content_start, len(lines)):
        line = lines[n]
        if n in code_lines or "[" not in line:
            continue
        line = _INLINE_CODE.sub(" ", line)
        for m in _WIKILINK.finditer(line):
            target = (m.group(1) or "").strip()
            heading = (m.group(2) or "").strip() or None
            alias = (m.group(3) or "").strip() or None
            if target or heading:
                links.append(Link(target=target, kind="wiki", heading=heading, alias=alias))
        for m in MARKDOWN_LINK.finditer(line):
            links.append(Link(target=m.group(2), kind="markdown", alias=m.group(1).strip() or None))
    return tuple(links)


def section_text(lines: tuple[str, ...] | list[str], section: Section, include_subsections: bool) -> str:
    end = section.subtree_end if include_subsections else section.line_end
    return "\n".join(lines[section.line_start - 1 : end])
