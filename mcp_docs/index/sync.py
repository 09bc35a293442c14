"""Incremental sync: bring the catalog and the full-text index in line with the files on disk.

Order of durability: Tantivy commits first, the catalog second. A crash in
between leaves the catalog behind (old hash or missing row), so the next sync
sees a difference and redoes that work; before adding a document its old
sections are always deleted by id, so redoing never duplicates.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..markdown import ParsedDocument, parse_markdown
from ..paths import FileTooLarge, Jail, PathOutsideRoot
from ..scan import ScannedFile, Scanner, ScanResult
from ..settings import Settings
from .catalog import Catalog, DocumentRecord, Fingerprint, Problem, SectionRecord, folder_of
from .fulltext import FullTextIndex, SectionDoc

log = logging.getLogger(__name__)

BATCH_DOCUMENTS = 2000
BATCH_SECONDS = 2.0

Progress = Callable[[int, int], None]


@dataclass
class SyncReport:
    added: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    skipped: list[Problem] = field(default_factory=list)
    changed_ids: list[str] = field(default_factory=list)
    deleted_ids: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.deleted)


@dataclass
class _Batch:
    upserts: list[tuple[DocumentRecord, list[SectionRecord]]] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    touches: list[ScannedFile] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.upserts) + len(self.deletes) + len(self.touches)


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def decode(data: bytes) -> tuple[str, list[str]]:
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace"), ["invalid UTF-8: decoded with replacement characters"]


def looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


class Synchronizer:
    def __init__(
        self, settings: Settings, jail: Jail, scanner: Scanner, catalog: Catalog, fulltext: FullTextIndex
    ) -> None:
        self.settings = settings
        self.jail = jail
        self.scanner = scanner
        self.catalog = catalog
        self.fulltext = fulltext
        # Called after each committed batch with the changed and deleted ids (the vector store listens here).
        self.listeners: list[Callable[[list[str], list[str]], None]] = []

    def run(self, paths: Iterable[str] | None = None, progress: Progress | None = None) -> SyncReport:
        started = time.perf_counter()
        report = SyncReport()
        fingerprints = self.catalog.fingerprints()
        scan, gone = self._scan(paths, fingerprints)
        to_read = []
        for f in scan.files:
            fp = fingerprints.get(f.doc_id)
            if fp is None or fp.size != f.size or fp.mtime_ns != f.mtime_ns:
                to_read.append(f)
            else:
                report.unchanged += 1
        report.skipped.extend(scan.problems)
        total = len(to_read) + len(gone)
        if progress:
            progress(0, total)
        if not total:
            self._save_problems(paths, report)
            report.seconds = time.perf_counter() - started
            return report

        self.fulltext.begin()
        batch = _Batch()
        batch_started = time.perf_counter()
        done = 0
        try:
            for f in to_read:
                self._process(f, fingerprints.get(f.doc_id), batch, report)
                done += 1
                if len(batch) >= BATCH_DOCUMENTS or time.perf_counter() - batch_started > BATCH_SECONDS:
                    self._flush(batch, report)
                    batch = _Batch()
                    batch_started = time.perf_counter()
                    if progress:
                        progress(done, total)
            for doc_id in gone:
                self.fulltext.delete_document(doc_id)
                batch.deletes.append(doc_id)
                report.deleted += 1
                report.deleted_ids.append(doc_id)
                done += 1
            self._flush(batch, report)
            if progress:
                progress(done, total)
        except BaseException:
            self.fulltext.rollback()
            raise
        finally:
            self.fulltext.end()
        self._save_problems(paths, report)
        report.seconds = time.perf_counter() - started
        return report

    # -- steps ---------------------------------------------------------------------
    def _scan(self, paths: Iterable[str] | None, fingerprints: dict[str, Fingerprint]) -> tuple[ScanResult, list[str]]:
        if paths is None:
            scan = self.scanner.scan()
            seen = {f.doc_id for f in scan.files}
            return scan, sorted(set(fingerprints) - seen)
        scan = ScanResult()
        gone: set[str] = set()
        for rel in sorted(set(paths)):
            full = self.jail.root / rel
            if full.is_dir() and not full.is_symlink():
                sub = self.scanner.scan(under=rel)
                scan.files.extend(sub.files)
                scan.problems.extend(sub.problems)
                seen = {f.doc_id for f in sub.files}
                gone.update(i for i in fingerprints if i.startswith(rel + "/") and i not in seen)
                continue
            before = len(scan.files)
            if not self.scanner.excluded(rel):
                self.scanner.stat_one(rel, scan)
            if len(scan.files) == before and rel in fingerprints:
                gone.add(rel)
            # a folder that vanished: drop everything under it
            if not full.exists():
                gone.update(i for i in fingerprints if i.startswith(rel + "/"))
        return scan, sorted(gone)

    def _process(self, f: ScannedFile, old: Fingerprint | None, batch: _Batch, report: SyncReport) -> None:
        try:
            data = self.jail.read_bytes(f.path, self.settings.max_file_bytes)
        except FileTooLarge as exc:
            self._skip(f, old, Problem(f.doc_id, "too_large", f"{exc}: skipped"), batch, report)
            return
        except PathOutsideRoot as exc:
            self._skip(f, old, Problem(f.doc_id, "outside_root", str(exc)), batch, report)
            return
        except FileNotFoundError:
            if old is not None:
                self._drop(f.doc_id, batch, report)
            return
        except OSError as exc:
            self._skip(f, old, Problem(f.doc_id, "unreadable", str(exc.strerror or exc)), batch, report)
            return
        if looks_binary(data):
            self._skip(f, old, Problem(f.doc_id, "binary", "binary content (NUL bytes): skipped"), batch, report)
            return
        digest = content_hash(data)
        if old is not None and old.hash == digest:
            batch.touches.append(f)
            report.unchanged += 1
            return
        text, warnings = decode(data)
        stem = f.doc_id.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        try:
            parsed = parse_markdown(text, stem)
        except Exception as exc:  # a parser bug must not stop a whole vault from indexing
            log.exception("could not parse %s", f.doc_id)
            self._skip(f, old, Problem(f.doc_id, "unparsable", f"parser error: {type(exc).__name__}"), batch, report)
            return
        record, sections = self._records(f, digest, parsed, warnings)
        self.fulltext.delete_document(f.doc_id)
        self.fulltext.add_sections(
            SectionDoc(
                doc_id=f.doc_id, section_idx=s.index, title=parsed.title, heading=s.heading,
                heading_path=s.heading_path, level=s.level, line_start=s.line_start, line_end=s.line_end,
                body=s.body, tags=parsed.tags, folder=record.folder, lang=record.lang,
            )
            for s in parsed.sections
        )
        batch.upserts.append((record, sections))
        if old is None:
            report.added += 1
        else:
            report.updated += 1
        report.changed_ids.append(f.doc_id)

    def _records(
        self, f: ScannedFile, digest: str, parsed: ParsedDocument, warnings: list[str]
    ) -> tuple[DocumentRecord, list[SectionRecord]]:
        record = DocumentRecord(
            id=f.doc_id,
            folder=folder_of(f.doc_id),
            hash=digest,
            mtime_ns=f.mtime_ns,
            size=f.size,
            title=parsed.title,
            summary=parsed.summary,
            tags=parsed.tags,
            aliases=parsed.aliases,
            front_matter=parsed.front_matter,
            lang=parsed.lang or self.settings.language,
            links=tuple(
                {"target": link.target, "kind": link.kind, "heading": link.heading, "alias": link.alias}
                for link in parsed.links
            ),
            warnings=tuple(warnings) + parsed.warnings,
            tokens=sum(s.tokens for s in parsed.sections),
        )
        sections = [
            SectionRecord(s.index, s.heading, s.heading_path, s.level, s.line_start, s.line_end, s.subtree_end, s.tokens)
            for s in parsed.sections
        ]
        return record, sections

    def _skip(self, f: ScannedFile, old: Fingerprint | None, problem: Problem, batch: _Batch, report: SyncReport) -> None:
        report.skipped.append(problem)
        if old is not None:  # it was indexed before; it must not stay searchable
            self._drop(f.doc_id, batch, report)

    def _drop(self, doc_id: str, batch: _Batch, report: SyncReport) -> None:
        self.fulltext.delete_document(doc_id)
        batch.deletes.append(doc_id)
        report.deleted += 1
        report.deleted_ids.append(doc_id)

    def _flush(self, batch: _Batch, report: SyncReport) -> None:
        if not len(batch):
            return
        self.fulltext.commit()
        with self.catalog.transaction() as conn:
            for doc_id in batch.deletes:
                Catalog.delete(conn, doc_id)
            for record, sections in batch.upserts:
                Catalog.upsert(conn, record, sections)
            for f in batch.touches:
                Catalog.touch(conn, f.doc_id, f.mtime_ns, f.size)
        changed = [r.id for r, _ in batch.upserts]
        if changed or batch.deletes:
            for listener in self.listeners:
                listener(changed, list(batch.deletes))

    def _save_problems(self, paths: Iterable[str] | None, report: SyncReport) -> None:
        """A full scan knows every problem there is; a partial one only those under its paths."""
        with self.catalog.transaction() as conn:
            if paths is None:
                Catalog.replace_problems(conn, report.skipped)
            else:
                for rel in set(paths):
                    Catalog.replace_problems(conn, [], scope=rel)
                Catalog.add_problems(conn, report.skipped)
