"""Link targets → document ids, the way Obsidian resolves them. Pure: no index, no file system.

A target is a wikilink (`[[Quokka Setup#Linux|label]]`), a Markdown link (`../guides/setup.md#linux`)
or what an agent passes as an id. It resolves, in this order, to
1. a path: relative to the linking note (`./`, `../`, any Markdown link), from the root (`/x`, or a wikilink
   naming folders `[[guides/setup]]`, also matched as the end of a path), with or without the extension, or a
   folder's index note (`guides/` → `guides/index.md`);
2. a file name without its extension, case-insensitive (`[[quokka setup]]`); when several files share it
   (`en/Plugins/Canvas.md`, `fr/Plugins/Canvas.md`), the one nearest the linking note as Obsidian picks it:
   the longest shared folder prefix, then one in the linking note's language (`Release notes/x.md`, English,
   reaches `en/Plugins/Canvas.md`, not the shorter `da/Plugin/Canvas.md`), then the shortest path; only a tie
   after all three is ambiguous (an agent's target has no linking note: there, any second candidate makes it
   ambiguous and every candidate is named);
3. a front-matter alias, case-insensitive, also one holding a '/' (Obsidian Publish keeps a note's old paths
   as aliases, `How to/Internal link`) when no path goes by that name.

Names are compared in one Unicode form (NFC, casefolded): `[[Café]]` reaches a file whose name macOS wrote
decomposed (NFD). A URL of any scheme (`obsidian://`, `zotero:`, `mailto:`) is not a link to a note.

Candidates are only ever documents of the catalog, i.e. files the scan found servable inside the root, and
a path is resolved lexically: a target that climbs out of the root (`../../etc/passwd`) is unresolved before
anything is looked up, and the caller still opens the result through the jail (`paths.py`).
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from .inline import WIKILINK, wikilink_parts
from .markdown import Link

# The notes a folder link opens (Hugo/Docsy `_index.md`, GitHub `README.md`), compared case-insensitively.
INDEX_NAMES = ("index", "_index", "readme")
# A URI scheme (RFC 3986: a letter, then letters, digits, '+', '-', '.'); two characters at least, so that a
# Windows drive ('C:') is not one. A Markdown link with one is a URL; a wikilink only with '//' after it or
# one of the schemes without it, since a note may be named 'Chapter: one' (the space tells it apart anyway).
_SCHEME = re.compile(r"[a-z][a-z0-9+.\-]+:")
_OPAQUE_SCHEMES = ("mailto:", "tel:", "data:", "javascript:", "file:", "zotero:", "x-devonthink-item:", "message:")
MAX_TARGET_CHARS = 500
MAX_ALIASES = 100  # per document: front matter can hold 100,000 values, the catalog keeps names for these
# Distinct link targets the catalog keeps per document. A link repeated is one row with a count; a note of
# 20,000 distinct `[[x1]] [[x2]] …` (what the parser keeps, markdown.MAX_LINKS) keeps these, and its warnings
# say how many more (`mcp-docs status`).
MAX_LINKS_PER_DOCUMENT = 5000

FILE, FOLDER, ALIAS = "file", "folder", "alias"


@dataclass(frozen=True)
class Target:
    path: str  # '' for a link to a heading of the same note ('[[#Setup]]', '#setup')
    heading: str | None = None
    kind: str = "wiki"  # "wiki" | "markdown"


@dataclass(frozen=True)
class Name:
    """One way a document can be named by a link: its file name, its folder (index notes), an alias."""

    key: str
    doc_id: str
    kind: str  # FILE | FOLDER | ALIAS
    alias: str = ""  # the alias as written (ALIAS only)


@dataclass(frozen=True)
class Resolution:
    id: str | None
    candidates: tuple[str, ...] = field(default=())  # two or more when ambiguous

    @property
    def ambiguous(self) -> bool:
        return self.id is None and len(self.candidates) > 1


UNRESOLVED = Resolution(None)


def strip_extension(name: str, extensions: Sequence[str]) -> str:
    lower = name.lower()
    for ext in extensions:
        if lower.endswith(ext) and len(name) > len(ext):
            return name[: -len(ext)]
    return name


def fold(text: str) -> str:
    """`text` as names are compared: NFC (macOS writes file names decomposed), then casefolded."""
    if text.isascii():
        return text.casefold()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def key_of(path: str, extensions: Sequence[str]) -> str:
    """The lookup key of a target or of a name: its last path component, without a Markdown extension, folded."""
    last = path.rstrip("/").rsplit("/", 1)[-1]
    return fold(strip_extension(last, extensions))


def names_of(doc_id: str, aliases: Iterable[str], extensions: Sequence[str]) -> list[Name]:
    """Every name under which links can reach `doc_id`."""
    folder, _, file_name = doc_id.rpartition("/")
    stem = strip_extension(file_name, extensions)
    names = [Name(fold(stem), doc_id, FILE)]
    if folder and fold(stem) in INDEX_NAMES:
        names.append(Name(key_of(folder, extensions), doc_id, FOLDER))
    seen: set[str] = set()
    for alias in aliases:
        alias = alias.strip()[:MAX_TARGET_CHARS]
        if len(seen) >= MAX_ALIASES:
            break
        if alias and fold(alias) not in seen:
            seen.add(fold(alias))
            names.append(Name(key_of(alias, extensions), doc_id, ALIAS, alias))
    return names


def link_target(kind: str, target: str, heading: str | None) -> Target | None:
    """The target of a link as the parser found it (a wikilink's heading is apart, a Markdown one in the URL)."""
    return parse_target(target if kind == "markdown" else target + (f"#{heading}" if heading else ""), kind)


def link_record(link: Link, source: str, extensions: Sequence[str]) -> dict[str, Any]:
    """A parsed link as the catalog keeps it; `key` is None for what is not a link to a note (URLs, images)
    and '' for a link inside the note itself (`[[#Setup]]`)."""
    key: str | None = None
    if is_document_link(link.target, link.kind, extensions):
        name = link.target.strip()
        if link.kind == "wiki" and not name.startswith(".") and "/" not in name and "\\" not in name:
            key = fold(strip_extension(name[:MAX_TARGET_CHARS], extensions))  # a plain name: the common case
        else:
            target = link_target(link.kind, link.target, link.heading)
            key = lookup_key(target, source, extensions) if target is not None else None
    return {
        "target": link.target,
        "kind": link.kind,
        "heading": link.heading,
        "alias": link.alias,
        "line": link.line,
        "key": key,
        "count": 1,
    }


def link_records(
    links: Iterable[Link], source: str, extensions: Sequence[str], limit: int = MAX_LINKS_PER_DOCUMENT
) -> tuple[list[dict[str, Any]], int]:
    """The links of `source` to other notes as the catalog keeps them: one record per target (the first as
    written, its line, and how many times it is written), at most `limit` targets; and how many more targets
    there were. What resolves a link is its kind and path, never its heading or label: `[[a]]`, `[[A#x]]`
    and `[[a|y]]` are one record. Linear in the links: 3 million `[[a]]` are one record of count 3 million."""
    kept: dict[tuple[str, str], dict[str, Any]] = {}
    dropped: set[tuple[str, str]] = set()
    for link in links:
        path = link.target.strip()
        if link.kind == "markdown":
            path = path.split("#", 1)[0]
        written = (link.kind, fold(path[:MAX_TARGET_CHARS]))
        record = kept.get(written)
        if record is not None:
            record["count"] += link.count
            continue
        if written in dropped:
            continue
        record = link_record(link, source, extensions)
        if not record["key"]:  # a URL, an image, a link inside the note: nothing another note can answer
            continue
        if len(kept) >= limit:
            dropped.add(written)
            continue
        record["count"] = link.count
        kept[written] = record
    return list(kept.values()), len(dropped)


def is_url(target: str, kind: str) -> bool:
    """Whether `target` (lower case) is a URL: any scheme in a Markdown link (`obsidian://show-plugin?id=maps`,
    `zotero://select/items/X`), in a wikilink '//' after the scheme or a scheme that needs none (`mailto:`)."""
    if target.startswith("//"):
        return True
    scheme = _SCHEME.match(target)
    if scheme is None:
        return False
    return kind == "markdown" or target.startswith("//", scheme.end()) or target.startswith(_OPAQUE_SCHEMES)


def is_document_link(target: str, kind: str, extensions: Sequence[str]) -> bool:
    """False for what is not a link to a note: a URL, an image or attachment, an empty Markdown link."""
    lower = target.strip().lower()
    if is_url(lower, kind) or (kind == "markdown" and not lower):
        return False
    if lower.startswith("#"):
        return True
    last = lower.split("#", 1)[0].split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    if kind == "markdown" and "." in last:
        return last.endswith(tuple(extensions))  # ./img.png, page.html: not a note
    return not (kind == "wiki" and "." in last and _attachment(last))


_ATTACHMENTS = frozenset(
    [
        "png",
        "jpg",
        "jpeg",
        "gif",
        "svg",
        "webp",
        "bmp",
        "avif",
        "pdf",
        "mp3",
        "mp4",
        "m4a",
        "wav",
        "ogg",
        "webm",
        "mov",
        "zip",
        "canvas",
        "excalidraw",
    ]
)


def _attachment(name: str) -> bool:
    return name.rsplit(".", 1)[-1] in _ATTACHMENTS


def parse_target(text: str, kind: str | None = None) -> Target | None:
    """A target as written: `[[Name#Heading|label]]`, `Name#Heading`, `path/x.md#frag`; None if there is none.

    Markdown targets are percent-decoded (`Quokka%20Setup.md`); without `kind`, the form of `text` decides.
    """
    text = text.strip()[: MAX_TARGET_CHARS * 2]
    if kind is None:
        m = WIKILINK.fullmatch(text)
        if m:
            path, heading, _ = wikilink_parts(*m.groups(""))
            return _target(path, heading, "wiki")
        # An agent's target: a name, a path or an alias, resolved as a wikilink (path first, then name).
        text = unquote(text) if "%" in text else text
        return parse_target(text.removeprefix("[[").removesuffix("]]").split("|", 1)[0], "wiki")
    path, _, heading = text.partition("#")
    if kind == "markdown":
        path = unquote(path.split("?", 1)[0].strip().strip("<>"))
        heading = unquote(heading)
    return _target(path.strip(), heading, kind)


def _target(path: str, heading: str | None, kind: str) -> Target | None:
    heading = (heading or "").strip() or None
    if not path and not heading:
        return None
    return Target(path[:MAX_TARGET_CHARS], heading[:MAX_TARGET_CHARS] if heading else None, kind)


def lookup_key(target: Target, source: str | None, extensions: Sequence[str]) -> str:
    """The name key of the documents `target` may name ('' for the linking note itself): aliases are keyed like
    file names, and a relative path is keyed by where it leads (`../` names the folder above)."""
    path = target.path.replace("\\", "/")
    if source is not None and (target.kind == "markdown" or path.startswith(".")) and not path.startswith("/"):
        path = posixpath.normpath(posixpath.join(posixpath.dirname(source), path))
    return key_of(path, extensions) if target.path else ""


def resolve(
    target: Target,
    source: str | None,
    names: Iterable[Name],
    extensions: Sequence[str],
    languages: Mapping[str, str] | None = None,
) -> Resolution:
    """Resolve `target`, written in the document `source` (None: given by an agent), among `names`
    (those with the target's `lookup_key`; others are ignored). `languages` (document id → language code, for
    the source and the candidates) breaks a tie between equally near candidates; without it, none does."""
    if not target.path:
        return Resolution(source) if source else UNRESOLVED
    key = lookup_key(target, source, extensions)
    by_kind: dict[str, list[Name]] = {FILE: [], FOLDER: [], ALIAS: []}
    for name in names:
        if name.key == key:
            by_kind[name.kind].append(name)
    docs = {n.doc_id for n in by_kind[FILE] + by_kind[FOLDER]}
    path = target.path.replace("\\", "/")
    base = posixpath.dirname(source) if source else ""
    pathlike = "/" in path.rstrip("/") or path.startswith(".") or target.kind == "markdown" or path.endswith("/")
    if pathlike:
        if path.startswith("/"):
            rel = posixpath.normpath(path.lstrip("/"))
        elif target.kind == "markdown" or path.startswith("."):
            rel = posixpath.normpath(posixpath.join(base, path))
        else:
            rel = posixpath.normpath(path)
        if rel == ".." or rel.startswith("../") or rel.startswith("/"):
            return UNRESOLVED  # out of the root: nothing to look up
        rel = "" if rel == "." else rel
        folder = bool(rel) and path.endswith("/")
        if folder:  # a folder: its index note before the file of the same name
            rel += "/"
        found = _by_path(rel, docs, extensions)
        if found is None and folder:  # Hugo's pretty URL: `/docs/setup/` is the page docs/setup.md
            found = _by_path(rel.rstrip("/"), docs, extensions)
        if found is None and path.startswith("/") and source is not None:
            found = _under_content_root(rel, base, docs, extensions)
        if found is None and path.startswith("../") and source is not None and target.kind == "markdown":
            found = _from_page_url(path, source, docs, extensions)
        if found is None and target.kind == "wiki" and not path.startswith((".", "/")):
            # Obsidian also accepts the end of a path ('setup/install') and a path relative to the note.
            found = _by_path(posixpath.normpath(posixpath.join(base, path)), docs, extensions)
            if found is None:
                ends = sorted(d for d in docs if fold(_no_ext(d, extensions)).endswith("/" + fold(rel)))
                if ends:
                    return _pick(ends, source, languages)
        if found is None and target.kind == "wiki" and not path.startswith((".", "/")):
            # An alias may hold a '/': Obsidian Publish keeps a note's old paths as aliases and redirects them
            # ('How to/Internal link'). No path by that name: the alias, as an alias without '/' resolves.
            return _pick(_aliased(by_kind[ALIAS], path), source, languages)
        return Resolution(found)  # a path that leads nowhere is not a name
    files = sorted({n.doc_id for n in by_kind[FILE]})
    if files:
        return _pick(files, source, languages)
    return _pick(_aliased(by_kind[ALIAS], path), source, languages)


def _aliased(aliases: list[Name], path: str) -> list[str]:
    """The documents with `path` as one of their aliases (compared folded, as a whole)."""
    wanted = fold(path)
    return sorted({n.doc_id for n in aliases if fold(n.alias) == wanted})


def _no_ext(doc_id: str, extensions: Sequence[str]) -> str:
    return strip_extension(doc_id, extensions)


def _by_path(rel: str, docs: set[str], extensions: Sequence[str]) -> str | None:
    """The document at `rel` (root-relative), as named, without its extension, or as a folder's index note."""
    folded = {fold(d): d for d in sorted(docs, reverse=True)}  # the first in id order wins a case clash
    stem = rel.rstrip("/")
    tries = [stem, *(stem + ext for ext in extensions)] if not rel.endswith("/") else []
    prefix = stem + "/" if stem else ""
    tries += [prefix + name + ext for name in INDEX_NAMES for ext in extensions]
    for candidate in tries:
        hit = folded.get(fold(candidate))
        if hit is not None:
            return hit
    return None


def _under_content_root(rel: str, base: str, docs: set[str], extensions: Sequence[str]) -> str | None:
    """A site-absolute link (`/docs/collector/`) that names nothing from the root, looked up under each folder
    above the linking note, the outermost first. A Hugo site with a folder per language keeps its pages in
    `content/en/`, `content/fr/`, and `/docs/collector/` written in `en/docs/x.md` is `en/docs/collector/`:
    read from the root only, the OpenTelemetry docs reported 1,778 broken links that Hugo follows."""
    folders = base.split("/") if base else []
    for depth in range(1, len(folders) + 1):
        prefix = "/".join(folders[:depth]) + "/"
        found = _by_path(prefix + rel, docs, extensions)
        if found is None and rel.endswith("/"):
            found = _by_path(prefix + rel.rstrip("/"), docs, extensions)
        if found is not None:
            return found
    return None


def _from_page_url(path: str, source: str, docs: set[str], extensions: Sequence[str]) -> str | None:
    """A relative link read as Hugo reads it: from the page's own URL (`docs/agent/api.md` is served at
    `/docs/agent/api/`, so its `../annotations` is `docs/agent/annotations`), for a link that names nothing
    from the note's folder (the OpenTelemetry docs write them so). An index note's URL is its folder's."""
    name = source.rpartition("/")[2]
    if fold(strip_extension(name, extensions)) in INDEX_NAMES:
        return None
    rel = posixpath.normpath(posixpath.join(strip_extension(source, extensions), path))
    if rel == ".." or rel.startswith("../"):
        return None
    found = _by_path(rel + "/" if path.endswith("/") else rel, docs, extensions)
    if found is None and path.endswith("/"):
        found = _by_path(rel, docs, extensions)
    return found


def _pick(ids: list[str], source: str | None, languages: Mapping[str, str] | None = None) -> Resolution:
    """One id, or none. Of several, for a link written in `source`, the nearest as Obsidian picks it: the most
    leading folders shared with the linking note, then one in the linking note's language (a vault of language
    folders: a note outside all of them links to its own language's copy), then the shortest path; ambiguous
    (all of them) on a tie. An agent's target (no `source`) is ambiguous as soon as there are two: it has no
    place to be near."""
    if len(ids) == 1:
        return Resolution(ids[0])
    if not ids:
        return UNRESOLVED
    if source is None:
        return Resolution(None, tuple(ids))
    here = posixpath.dirname(source).split("/") if "/" in source else []
    lang = (languages or {}).get(source) or None  # '' (unknown) prefers nothing

    def rank(doc_id: str) -> tuple[int, bool, int]:
        folders = doc_id.split("/")[:-1]
        shared = 0
        for mine, theirs in zip(here, folders, strict=False):
            if mine != theirs:
                break
            shared += 1
        other_language = lang is None or (languages or {}).get(doc_id) != lang
        return -shared, other_language, len(doc_id)

    ranked = sorted(ids, key=rank)
    if rank(ranked[0]) == rank(ranked[1]):
        return Resolution(None, tuple(ids))
    return Resolution(ranked[0])


_NOT_IN_ANCHOR = re.compile(r"[^\w\- ]+")


def anchor(heading: str) -> str:
    """The anchor GitHub, Hugo and most renderers give a heading: 'Linux setup (x86)' → 'linux-setup-x86'."""
    return _NOT_IN_ANCHOR.sub("", heading.strip().casefold()).replace(" ", "-")


def describe(target: Target) -> str:
    """The target as a wikilink-like text, for messages: 'Quokka Setup#Linux'."""
    return target.path + (f"#{target.heading}" if target.heading else "")
