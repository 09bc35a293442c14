"""The link graph of the indexed documents: the rules of `links.py` over the catalog's names and links.

Links are kept as written, each with what it resolves to: a note added, renamed or deleted changes what the
links of its names resolve to, and the sync that writes it resolves those again (`resolve_pending`), without
re-reading the notes that link to it. Backlinks are then one indexed query, paged, however many notes link.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .index.catalog import Catalog, LinkRecord
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
        names = self.catalog.names([key])
        return resolve(target, source, names, self.extensions, self._languages(names, [source] if source else []))

    def _languages(self, names: Sequence[Name], sources: Iterable[str]) -> dict[str, str]:
        """The named language (declared or detected) of each candidate and linking note, those decided: it
        breaks ties between equally near candidates. Not the language a page is analysed in, which is the
        root's for an undecided page: a guess must not pick a candidate."""
        ids = {n.doc_id for n in names} | set(sources)
        named = self.catalog.named_languages(sorted(ids)) if ids else {}
        return {doc_id: lang for doc_id, lang in named.items() if lang}

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
        names = self.catalog.names(set(keyed.values()))
        by_key = _by_key(names)
        languages = self._languages(names, [source])
        out: dict[tuple[str, str], OutgoingLink] = {}
        for target, key in keyed.items():  # each target sees only its own names: linear in the links
            resolution = resolve(target, source, by_key.get(key, []), self.extensions, languages)
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
        backlinks, total = self.catalog.linking(doc_id, OUTLINE_BACKLINKS)
        if backlinks:
            first = ", ".join(backlinks)
            rest = f", … list_documents(linked_to='{doc_id}') lists all" if total > OUTLINE_BACKLINKS else ""
            lines.append(f"Linked from ({total}): {first}{rest}.")
        return "\n".join(lines) + "\n" if lines else ""

    def resolve_stored(self, links: Sequence[LinkRecord]) -> list[tuple[LinkRecord, str | None]]:
        """What each stored link resolves to now (None: nothing, or ambiguous), for the store to keep: the
        names of their keys and the languages of those and of the linking notes are read once."""
        names = self.catalog.names({link.key for link in links})
        by_key = _by_key(names)
        languages = self._languages(names, {link.doc_id for link in links})
        resolved: dict[tuple[str, ...], Resolution] = {}
        return [(link, self._resolve(link, by_key.get(link.key, []), resolved, languages).id) for link in links]

    def broken(self) -> list[BrokenTarget]:
        """Every target that resolves to nothing (or to several notes) with the notes that link to it (first
        line, times written): the targets that most notes link to first, then by target.

        Only the links the store has not resolved to a note (broken, ambiguous, or not resolved yet) are read and
        resolved again, for their reason: each sync keeps every link's resolution (`resolve_pending`), and
        resolving all of them again made `status` on the Obsidian help vault read every link and name."""
        links = self.catalog.links(unresolved=True)
        names = self.catalog.names({link.key for link in links if link.key})
        by_key = _by_key(names)
        languages = self._languages(names, {link.doc_id for link in links})
        resolved: dict[tuple[str, ...], Resolution] = {}
        targets: dict[str, BrokenTarget] = {}
        for link in links:
            resolution = self._resolve(link, by_key.get(link.key, []), resolved, languages)
            if resolution.id is None and link.key:
                reason = (
                    "ambiguous: " + ", ".join(resolution.candidates[:5]) if resolution.ambiguous else "no such document"
                )
                shown = link.target + (f"#{link.heading}" if link.kind == "wiki" and link.heading else "")
                group = targets.setdefault(fold(link.target), BrokenTarget(shown, reason))
                group.links.append(BrokenLink(link.doc_id, link.line, shown, reason, link.count))
        return sorted(targets.values(), key=lambda t: (-t.notes, fold(t.target), t.target))

    def _resolve(
        self,
        link: LinkRecord,
        names: Sequence[Name],
        resolved: dict[tuple[str, ...], Resolution],
        languages: Mapping[str, str],
    ) -> Resolution:
        """Resolve a stored link; what a target resolves to depends only on the linking note's folder and
        language, so the answer is shared by every note of that folder in that language (`resolved`)."""
        key = (link.kind, link.target, link.doc_id.rpartition("/")[0], languages.get(link.doc_id, ""))
        found = resolved.get(key)
        if found is None:
            target = link_target(link.kind, link.target, link.heading)
            found = UNRESOLVED if target is None else resolve(target, link.doc_id, names, self.extensions, languages)
            if target is None or target.path:  # '#heading' resolves to the linking note itself: not shared
                resolved[key] = found
        return found


def _by_key(names: Sequence[Name]) -> dict[str, list[Name]]:
    grouped: dict[str, list[Name]] = defaultdict(list)
    for name in names:
        grouped[name.key].append(name)
    return grouped


PENDING_BATCH = 5000  # links resolved per round: a full index holds hundreds of thousands


def resolve_pending(catalog: Catalog, conn: sqlite3.Connection, extensions: Sequence[str]) -> int:
    """Inside the writing transaction: resolve the links a write marked, as the catalog now stands (the
    embedded store; the PostgreSQL writer has its own). Returns how many."""
    graph = LinkGraph(catalog, extensions)  # its reads run on `conn`: the catalog's connection of this thread
    done = 0
    while links := Catalog.pending_links(conn, PENDING_BATCH):
        Catalog.set_resolved(conn, graph.resolve_stored(links))
        done += len(links)
    return done
