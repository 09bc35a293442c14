"""What the tools of one run showed: the documents and headings their results named, as a typed record.

Citations are checked against this record, never against the arguments the model sent: a search for
"notes/ghost.md Terms" that finds nothing names no document. mcp-docs returns structured results
(`search_documents` hits with their sections' heading paths, `read_document` outlines, `read_section`'s
heading path), read here field by field. A server without structured results is read from its text: search
lines `id — Heading: snippet`, and for a read that succeeded the id it was asked for (the server answered
for that document) with the headings found in the text it returned."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from .hits import search_hits
from .models import Shown

# a heading line of an outline or a summary: "## Linux (L10-19, ~59)"; of a document read in full: "## Linux"
_OUTLINE_LINE = re.compile(r"^(?P<marks>#{1,6})\s+(?P<text>.+?)\s+\(L\d+-\d+(?:,[^)]*)?\)\s*$")
_HEADING_LINE = re.compile(r"^ {0,3}(?P<marks>#{1,6})\s+(?P<text>.+?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_SECTION_LINE = re.compile(r"§\s*(?P<path>[^§(;]+?)\s*\(L\d+")
_TEXT_HIT_HEADING = re.compile(r"^[^—–]*?[—–-]\s+(?P<heading>[^:]{1,200}):")


def norm_id(doc_id: str) -> str:
    """The form two ids are compared in: case, `./` and a `.md` suffix do not count; nothing else is loose
    (`install.md` is not `guides/install.md`)."""
    text = unicodedata.normalize("NFC", doc_id.strip()).replace("\\", "/")
    if text.lower().startswith("docs://"):
        text = unquote(text[len("docs://") :])
    while text.startswith("./"):
        text = text[2:]
    text = text.lstrip("/").casefold()
    return text[:-3] if text.endswith(".md") else text


def norm_heading(text: str) -> tuple[str, ...]:
    """A heading or heading path (`A > B`) as its normalised parts."""
    parts = re.split(r"\s*[>›»]\s*", unicodedata.normalize("NFKC", text))
    out = [" ".join(p.strip(" \t*_`\"'“”«».:").casefold().split()) for p in parts]
    return tuple(p for p in out if p)


def slug(text: str) -> str:
    """A heading as a URL fragment (`#installing-the-collector`), for `docs://id#fragment` citations."""
    words = re.sub(r"[^\w\s-]", "", unicodedata.normalize("NFKC", text).casefold())
    return "-".join(words.split())


@dataclass
class SeenDocument:
    """One document the tools of the run showed: its id as the server spelt it, the heading paths shown,
    and whether its whole heading list was shown (an outline, or a full read from the start, not cut)."""

    id: str
    headings: set[tuple[str, ...]] = field(default_factory=set)
    all_headings: bool = False

    def has_heading(self, heading: str) -> bool:
        cited = norm_heading(heading)
        if not cited:
            return False
        for path in self.headings:
            if len(cited) <= len(path) and path[-len(cited) :] == cited:
                return True
        # a fragment (`#installing-the-collector`) names the heading by its slug
        wanted = slug(heading)
        return any(slug(path[-1]) == wanted or slug(" ".join(path)) == wanted for path in self.headings if path)


@dataclass
class Evidence:
    """The documents a run's tool results showed (search, outline, read), and those a listing only named."""

    documents: dict[str, SeenDocument] = field(default_factory=dict)
    listed: set[str] = field(default_factory=set)

    def document(self, doc_id: str) -> SeenDocument | None:
        return self.documents.get(norm_id(doc_id))

    def _seen(self, doc_id: str) -> SeenDocument:
        key = norm_id(doc_id)
        doc = self.documents.get(key)
        if doc is None:
            doc = self.documents[key] = SeenDocument(id=doc_id)
        return doc

    def _add_paths(self, doc_id: str, paths: Iterable[str]) -> None:
        doc = self._seen(doc_id)
        for path in paths:
            parts = norm_heading(path)
            if parts:
                doc.headings.add(parts)

    def add(
        self, tool: str, arguments: dict[str, Any], structured: Any, text: str, *, cut: bool = False
    ) -> list[Shown]:
        """Record one successful tool result; returns what it showed. `tool` is the server's tool name;
        `arguments` serve only a text-only server's read (which document the returned text is), never a
        search. `cut`: the model saw `text` only up to a budget, so a search hit counts only when its id is in
        that text."""
        kind = tool_kind(tool)
        part = Evidence()
        if kind is None:
            return []
        if not (isinstance(structured, dict) and _add_structured(part, kind, structured, text if cut else None)):
            _add_text(part, kind, arguments, text)
        self.listed |= part.listed
        shown = [
            Shown(id=d.id, headings=sorted(" > ".join(h) for h in d.headings), all_headings=d.all_headings)
            for d in part.documents.values()
        ]
        self.merge(shown)
        return shown

    def merge(self, shown: Iterable[Shown]) -> None:
        """Add what earlier results showed (a resumed turn's stored results)."""
        for s in shown:
            self._add_paths(s.id, s.headings)
            self._seen(s.id).all_headings |= s.all_headings


def tool_kind(name: str) -> str | None:
    low = name.lower()
    if "search" in low:
        return "search"
    if "section" in low and "read" in low:
        return "section"
    if "read" in low:
        return "document"
    if "list" in low:
        return "list"
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _add_structured(ev: Evidence, kind: str, data: dict[str, Any], shown: str | None) -> bool:
    """True when `data` has the shape of an mcp-docs result of that kind (and was recorded)."""
    if kind == "search":
        results = data.get("results")
        if not isinstance(results, list):
            return False
        for hit in results:
            if not isinstance(hit, dict) or not (doc_id := _str(hit.get("id"))):
                continue
            if shown is not None and doc_id not in shown:
                continue  # cut from what the model saw
            paths = []
            for sec in hit.get("sections") or []:
                if isinstance(sec, dict):
                    paths += [p for p in (_str(sec.get("heading_path")), _str(sec.get("heading"))) if p]
            ev._add_paths(doc_id, paths)
        return True
    if kind == "list":
        docs = data.get("documents")
        if not isinstance(docs, list):
            return False
        ev.listed.update(norm_id(d["id"]) for d in docs if isinstance(d, dict) and _str(d.get("id")))
        return True
    doc_id = _str(data.get("id"))
    if doc_id is None:
        return False
    if kind == "section":
        ev._add_paths(doc_id, [p for p in (_str(data.get("heading_path")), _str(data.get("heading"))) if p])
        _add_markdown(ev, doc_id, str(data.get("content") or ""), data.get("heading_path"))
        return True
    content = str(data.get("content") or "")
    mode = data.get("mode")
    whole = not data.get("truncated") and not data.get("offset")
    if mode in ("outline", "summary"):
        ev._add_paths(doc_id, _outline_paths(content))
    else:
        _add_markdown(ev, doc_id, content, None)
    ev._seen(doc_id).all_headings |= whole and mode in ("outline", "summary", "full", None)
    return True


def _add_text(ev: Evidence, kind: str, arguments: dict[str, Any], text: str) -> None:
    if kind == "search":
        for doc_id, lines in search_hits(text):
            paths = []
            for line in lines:
                paths += [m.group("path") for m in _SECTION_LINE.finditer(line)]
                if m := _TEXT_HIT_HEADING.match(line.replace(doc_id, "", 1)):
                    paths.append(m.group("heading"))
            ev._add_paths(doc_id, paths)
        return
    asked = _str(arguments.get("id")) or _str(arguments.get("document")) or _str(arguments.get("path"))
    if kind == "list" or asked is None:
        return
    doc_id = asked
    ev._seen(doc_id)
    if kind == "document" and arguments.get("mode") in ("outline", "summary"):
        ev._add_paths(doc_id, _outline_paths(text))
    else:
        _add_markdown(ev, doc_id, text, None)


def _outline_paths(content: str) -> list[str]:
    """Heading paths of an outline: each heading under the nearest shallower one before it."""
    out: list[str] = []
    stack: list[tuple[int, str]] = []
    for line in content.splitlines():
        m = _OUTLINE_LINE.match(line.strip())
        if m:
            level = len(m.group("marks"))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, m.group("text")))
            out.append(" > ".join(t for _, t in stack))
    return out


def _add_markdown(ev: Evidence, doc_id: str, content: str, parent: Any) -> None:
    """The headings of Markdown text that was read (code fences skipped: `# comment` in bash is no heading)."""
    stack: list[tuple[int, str]] = []
    prefix = f"{parent} > " if isinstance(parent, str) and parent else ""
    paths = []
    fence: str | None = None
    for line in content.splitlines():
        f = _FENCE.match(line)
        if f:
            fence = None if fence == f.group(1) else (fence or f.group(1))
            continue
        if fence:
            continue
        m = _HEADING_LINE.match(line)
        if m:
            level = len(m.group("marks"))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, m.group("text")))
            paths.append(" > ".join(t for _, t in stack))
            if prefix:
                paths.append(prefix + m.group("text"))
    ev._add_paths(doc_id, paths)
