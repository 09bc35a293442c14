"""The link graph of the indexed documents: the rules of `links.py` over the catalog's names and links.

Links are kept as written and resolved when asked, so the graph is as fresh as the catalog: a note
renamed or deleted changes what links resolve to, and its backlinks, at the next sync, without
re-reading the notes that link to it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from .index.catalog import LinkRecord
from .index.store_api import CatalogReader
from .links import (
    UNRESOLVED,
    Name,
    Resolution,
    Target,
    describe,
    fold,
    is_document_link,
    link_target,
    lookup_key,
    resolve,
)
from .markdown import Link
from .paths import printable
from .snippets import clip_list

OUTLINE_LINKS_CHARS = 800  # the outline's list of outgoing links (~200 tokens at most)
OUTLINE_LINK_TARGETS = 100  # distinct link targets an outline resolves (a hub note may have thousands)
OUTLINE_BACKLINKS = 5  # linking ids shown in an outline; list_documents(linked_to=...) pages through all
TARGET_CHARS = 300  # a link target quoted in the outline


@dataclass(frozen=True)
class BrokenLink:
    id: str  # the linking document
    line: int  # the first line where it is written
    target: str  # as written
    reason: str
    count: int = 1  # times written in that document


@dataclass
class BrokenTarget:
    """One broken target and every note that links to it: what `status` lists, most notes first."""

    target: str  # as first written
    reason: str
    links: list[BrokenLink] = field(default_factory=list)

    @property
    def notes(self) -> int:
        return len(self.links)

    @property
    def count(self) -> int:
        return sum(b.count for b in self.links)


@dataclass(frozen=True)
class OutgoingLink:
    target: Target
    resolution: Resolution


class LinkGraph:
    def __init__(self, catalog: CatalogReader, extensions: Sequence[str]) -> None:
        self.catalog = catalog
        self.extensions = tuple(extensions)

    def resolve(self, target: Target, source: str | None = None) -> Resolution:
        key = lookup_key(target, source, self.extensions)
        return resolve(target, source, self.catalog.names([key]), self.extensions)

    def outgoing(self, source: str, links: Sequence[Link], limit: int) -> tuple[list[OutgoingLink], bool]:
        """The links of `source` to other notes, each once, in the order written, resolved: the first `limit`
        targets, and whether there are more (a note of 40,000 links must not cost 40,000 resolutions)."""
        targets: dict[tuple[str, str, str], Target] = {}
        seen: set[tuple[str, str, str | None]] = set()
        more = False
        for link in links:
            written = (link.kind, link.target, link.heading)
            if written in seen or not is_document_link(link.target, link.kind, self.extensions):
                continue
            seen.add(written)
            target = link_target(link.kind, link.target, link.heading)
            if target is not None and target.path:  # '#heading' alone is a link inside the note
                if len(targets) >= limit:
                    more = True
                    break
                targets.setdefault((target.kind, fold(target.path), fold(target.heading or "")), target)
        keyed = {t: lookup_key(t, source, self.extensions) for t in targets.values()}
        by_key = _by_key(self.catalog.names(set(keyed.values())))
        out: dict[tuple[str, str], OutgoingLink] = {}
        for target, key in keyed.items():  # each target sees only its own names: linear in the links
            resolution = resolve(target, source, by_key.get(key, []), self.extensions)
            if resolution.id != source:  # two names of one note (its file name, an alias) are one link
                where = resolution.id or "\x00" + fold(target.path)
                out.setdefault((where, (target.heading or "").casefold()), OutgoingLink(target, resolution))
        return list(out.values()), more

    def outline_lines(self, doc_id: str, links: Sequence[Link]) -> str:
        """The outline's last lines: where the document links to, and which documents link to it."""
        lines = []
        outgoing, more = self.outgoing(doc_id, links, OUTLINE_LINK_TARGETS)
        if outgoing:
            shown = []
            for link in outgoing:
                heading = printable(f"#{link.target.heading}", TARGET_CHARS) if link.target.heading else ""
                written = printable(describe(link.target), TARGET_CHARS)
                if link.resolution.id is not None:
                    shown.append(link.resolution.id + heading)
                elif link.resolution.ambiguous:
                    shown.append(f"'{written}' (ambiguous: {len(link.resolution.candidates)} documents)")
                else:
                    shown.append(f"'{written}' (unresolved)")
            count = f"first {len(outgoing)}" if more else str(len(outgoing))
            lines.append(f"Links to ({count}): " + clip_list(shown, OUTLINE_LINKS_CHARS, TARGET_CHARS) + ".")
        backlinks = self.backlinks(doc_id)
        if backlinks:
            first = ", ".join(backlinks[:OUTLINE_BACKLINKS])
            rest = f", … list_documents(linked_to='{doc_id}') lists all" if len(backlinks) > OUTLINE_BACKLINKS else ""
            lines.append(f"Linked from ({len(backlinks)}): {first}{rest}.")
        return "\n".join(lines) + "\n" if lines else ""

    def backlinks(self, doc_id: str) -> list[str]:
        """The documents that link to `doc_id`, by id. Reads only the links whose target has one of its names
        (the `links(key, doc_id)` index), one row per linking note and target however often it is written."""
        keys = {n.key for n in self.catalog.names_of(doc_id)}
        if not keys:
            return []
        by_key = _by_key(self.catalog.names(keys))
        sources: set[str] = set()
        resolved: dict[tuple[str, str, str], Resolution] = {}
        for link in self.catalog.links(keys):
            if link.doc_id == doc_id or link.doc_id in sources:
                continue
            if self._resolve(link, by_key.get(link.key, []), resolved).id == doc_id:
                sources.add(link.doc_id)
        return sorted(sources)

    def broken(self) -> list[BrokenTarget]:
        """Every target that resolves to nothing (or to several notes) with the notes that link to it (first
        line, times written): the targets that most notes link to first, then by target."""
        by_key = _by_key(self.catalog.all_names())
        resolved: dict[tuple[str, str, str], Resolution] = {}
        targets: dict[str, BrokenTarget] = {}
        for link in self.catalog.links():
            resolution = self._resolve(link, by_key.get(link.key, []), resolved)
            if resolution.id is None and link.key:
                reason = (
                    "ambiguous: " + ", ".join(resolution.candidates[:5]) if resolution.ambiguous else "no such document"
                )
                shown = link.target + (f"#{link.heading}" if link.kind == "wiki" and link.heading else "")
                group = targets.setdefault(fold(link.target), BrokenTarget(shown, reason))
                group.links.append(BrokenLink(link.doc_id, link.line, shown, reason, link.count))
        return sorted(targets.values(), key=lambda t: (-t.notes, fold(t.target), t.target))

    def _resolve(
        self, link: LinkRecord, names: Sequence[Name], resolved: dict[tuple[str, str, str], Resolution]
    ) -> Resolution:
        """Resolve a stored link; what a target resolves to depends only on the linking note's folder, so the
        answer is shared by every note of that folder (`resolved`)."""
        key = (link.kind, link.target, link.doc_id.rpartition("/")[0])
        found = resolved.get(key)
        if found is None:
            target = link_target(link.kind, link.target, link.heading)
            found = UNRESOLVED if target is None else resolve(target, link.doc_id, names, self.extensions)
            if target is None or target.path:  # '#heading' resolves to the linking note itself: not shared
                resolved[key] = found
        return found


def _by_key(names: Sequence[Name]) -> dict[str, list[Name]]:
    grouped: dict[str, list[Name]] = defaultdict(list)
    for name in names:
        grouped[name.key].append(name)
    return grouped
