"""A tiny in-memory store: the proof that a store is one module implementing `store.api.Store`.

Documents are given as a dict of id → Markdown; the catalog is a dict of records parsed by the same parser as the
real stores, keyword search a naive word count, no vectors and no links. It serves the documents from memory, as a
PostgreSQL reader does: the root folder only has to exist. `mypy` is not run on the tests, so `test_memory_store`
checks it against the protocol at run time (`Library(settings, MemoryStore(...))` is all a caller writes).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from mcp_docs.embedders import Embedder
from mcp_docs.index.embedding_worker import EmbeddingWorker
from mcp_docs.index.hits import RankedSection
from mcp_docs.links import Name
from mcp_docs.loader import content_hash, file_stem, parse_file
from mcp_docs.paths import Jail
from mcp_docs.scan import Problem, ScannedFile
from mcp_docs.settings import Settings
from mcp_docs.store.api import CommitListener, Progress, SectionHit, SyncReport
from mcp_docs.store.embedded.catalog import DocumentRecord, Fingerprint, LinkRecord, SectionRecord
from mcp_docs.store.embedded.sync import catalog_records

from .memory_vectors import MemoryVectors

_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class MemoryCatalog:
    """`store.api.CatalogReader` over two dicts: the documents' records and their sections (with their text)."""

    def __init__(self) -> None:
        self.records: dict[str, DocumentRecord] = {}
        self.section_rows: dict[str, list[tuple[SectionRecord, str]]] = {}

    def close(self) -> None:
        pass

    def document(self, doc_id: str) -> DocumentRecord | None:
        return self.records.get(doc_id)

    def sections(self, doc_id: str) -> list[SectionRecord]:
        return [s for s, _ in self.section_rows.get(doc_id, [])]

    def section_counts(self, doc_ids: list[str]) -> dict[str, int]:
        return {i: len(self.section_rows[i]) for i in doc_ids if i in self.section_rows}

    def front_matters(self, doc_ids: list[str]) -> dict[str, dict[str, Any]]:
        return {i: dict(self.records[i].front_matter) for i in doc_ids if i in self.records}

    def ids(self) -> list[str]:
        return sorted(self.records)

    def fingerprints(self, paths: Iterable[str] | None = None) -> dict[str, Fingerprint]:
        return {i: Fingerprint(r.hash, r.size, r.mtime_ns) for i, r in self.records.items()}

    def count(self) -> int:
        return len(self.records)

    def section_total(self) -> int:
        return sum(len(rows) for rows in self.section_rows.values())

    def language_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for record in self.records.values():
            counts[record.lang] = counts.get(record.lang, 0) + 1
        return counts

    def languages_of(self, doc_ids: list[str]) -> dict[str, str]:
        return {i: self.records[i].lang for i in doc_ids if i in self.records}

    def named_languages(self, doc_ids: list[str]) -> dict[str, str | None]:
        return {i: self.records[i].language for i in doc_ids if i in self.records}

    def problems(self) -> list[Problem]:
        return []

    def documents_with_warnings(self) -> list[tuple[str, list[str]]]:
        return [(i, list(r.warnings)) for i, r in sorted(self.records.items()) if r.warnings]

    def names(self, keys: Iterable[str]) -> list[Name]:
        wanted = set(keys)
        return [n for n in self.all_names() if n.key in wanted]

    def names_of(self, doc_id: str) -> list[Name]:
        record = self.records.get(doc_id)
        return list(record.names) if record is not None else []

    def all_names(self) -> list[Name]:
        return [n for r in self.records.values() for n in r.names]

    def links(self, keys: Iterable[str] | None = None) -> list[LinkRecord]:
        return []  # this store keeps no links: read_document shows none, list_documents(linked_to) finds none

    def folders(self) -> list[str]:
        return sorted({r.folder for r in self.records.values()})

    def linking(self, doc_id: str, limit: int) -> tuple[list[str], int]:
        return [], 0

    def _matching(self, folder: str, tag: str | None, ids: list[str] | None) -> list[DocumentRecord]:
        under = folder + "/" if folder else ""
        return [
            r
            for i, r in sorted(self.records.items())
            if (not folder or r.folder == folder or r.folder.startswith(under))
            and (tag is None or tag in r.tags)
            and (ids is None or i in ids)
        ]

    def list_documents(
        self,
        folder: str,
        tag: str | None,
        limit: int,
        offset: int,
        ids: list[str] | None = None,
        linked_to: str | None = None,
    ) -> tuple[list[DocumentRecord], int]:
        found = [] if linked_to is not None else self._matching(folder, tag, ids)
        return found[offset : offset + limit], len(found)

    def subfolders(
        self, folder: str, tag: str | None, ids: list[str] | None = None, linked_to: str | None = None
    ) -> list[tuple[str, int]]:
        if linked_to is not None:
            return []
        depth = len(folder.split("/")) + 1 if folder else 1
        counts: dict[str, int] = {}
        for record in self._matching(folder, tag, ids):
            if record.folder != folder:
                child = "/".join(record.folder.split("/")[:depth])
                counts[child] = counts.get(child, 0) + 1
        return sorted(counts.items())


class MemoryFiles:
    """The documents' bytes from the dict, with the jail's refusals for ids ('..', absolute paths, NUL)."""

    def __init__(self, jail: Jail, store: MemoryStore) -> None:
        self.jail = jail
        self.store = store

    def resolve_id(self, doc_id: str) -> Path:
        rel = self.jail.relative_folder(doc_id)
        if rel in self.store.texts or self.folder_exists(rel):
            return self.jail.root / rel
        raise FileNotFoundError(doc_id)

    def is_folder(self, path: Path) -> bool:
        rel = path.relative_to(self.jail.root).as_posix()
        return rel == "." or self.folder_exists(rel)

    def folder_exists(self, folder: str) -> bool:
        return any(f == folder or f.startswith(folder + "/") for f in self.store.catalog.folders())

    def has_document(self, doc_id: str) -> bool:
        return doc_id in self.store.texts

    def read_bytes(self, doc_id: str, path: Path) -> bytes:
        if doc_id not in self.store.texts:
            raise FileNotFoundError(doc_id)
        return self.store.texts[doc_id].encode()


class MemoryStore:
    """`store.api.Store` over `texts` (id → Markdown): `sync` indexes what the dict holds now. Without an
    `embedder`, keyword search only (hybrid and semantic answer with keyword results and say why); with one, its
    vectors (memory_vectors.py) are filled by the one embedding worker both real stores use."""

    written_elsewhere = False
    read_only = False
    vectors: MemoryVectors | None = None
    embedding: EmbeddingWorker | None = None

    def __init__(self, settings: Settings, texts: dict[str, str], embedder: Embedder | None = None) -> None:
        self.settings = settings
        self.texts = texts
        self.catalog = MemoryCatalog()
        self.files = MemoryFiles(Jail(settings.root), self)
        self._listeners: list[CommitListener] = []
        self.closed = False
        if embedder is not None:
            self.vectors = MemoryVectors(self.catalog, embedder)
            self.embedding = EmbeddingWorker(self.vectors, Jail(settings.root), settings)

    def add_commit_listener(self, listener: CommitListener) -> None:
        self._listeners.append(listener)

    def published_sync_error(self, own: str | None) -> str | None:
        return own

    def publish_sync_error(self, error: str | None) -> None:
        pass

    def sync(self, paths: Iterable[str] | None = None, progress: Progress | None = None) -> SyncReport:
        report = SyncReport()
        old = set(self.catalog.records)
        for doc_id, text in sorted(self.texts.items()):
            data = text.encode()
            digest = content_hash(data)
            known = self.catalog.records.get(doc_id)
            if known is not None and known.hash == digest:
                report.unchanged += 1
                continue
            loaded = parse_file(data, file_stem(doc_id), None)
            scanned = ScannedFile(doc_id, self.settings.root / doc_id, len(data), time.time_ns())
            record, sections = catalog_records(self.settings, scanned, digest, loaded.parsed, loaded.warnings)
            self.catalog.records[doc_id] = record
            self.catalog.section_rows[doc_id] = [
                (s, p.body) for s, p in zip(sections, loaded.parsed.sections, strict=True)
            ]
            if self.vectors is not None:
                self.vectors.write(doc_id, loaded.parsed)
            report.changed_ids.append(doc_id)
            report.added += known is None
            report.updated += known is not None
        for doc_id in old - set(self.texts):
            del self.catalog.records[doc_id], self.catalog.section_rows[doc_id]
            if self.vectors is not None:
                self.vectors.delete(doc_id)
            report.deleted_ids.append(doc_id)
            report.deleted += 1
        for listener in self._listeners:
            listener(report.changed_ids, report.deleted_ids)
        return report

    def keyword_hits(
        self, query: str, limit: int, folder: str | None, tags: Sequence[str], languages: frozenset[str]
    ) -> list[SectionHit]:
        """Each section scored by how often the query's words occur in its heading path and text."""
        terms = set(_words(query))
        hits: list[SectionHit] = []
        for record in self.catalog._matching(folder or "", None, None):
            if not set(tags) <= set(record.tags):
                continue
            for section, body in self.catalog.section_rows[record.id]:
                words = _words(f"{record.title} {section.heading_path} {body}")
                score = float(sum(words.count(t) for t in terms))
                if score:
                    found = RankedSection(
                        record.id,
                        section.idx,
                        record.title,
                        section.heading,
                        section.heading_path,
                        section.line_start,
                        section.line_end,
                        body,
                        record.tags,
                    )
                    hits.append(SectionHit(record.id, score, found))
        hits.sort(key=lambda h: (-h.score, h.doc_key, h.section.section_idx))
        return hits[:limit]

    def document_bonus(self, query: str, languages: frozenset[str], by_key: bool = False, fused: bool = False) -> None:
        return None  # no document-level evidence: sections alone rank documents

    def embed(self, progress: Progress | None = None) -> int:
        return self.embedding.build(progress) if self.embedding is not None else 0

    def start_embedding(self) -> None:
        if self.embedding is not None:
            self.embedding.start()

    def close(self) -> None:
        if self.embedding is not None:
            self.embedding.stop()
        self.closed = True

    def location(self) -> str:
        return f"memory ({len(self.texts)} documents)"

    def health_problem(self) -> str | None:
        return None

    def storage_lost(self) -> bool:
        return False
