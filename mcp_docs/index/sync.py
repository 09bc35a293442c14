"""Incremental sync: bring the catalog and the full-text index in line with the files on disk.

Order of durability: Tantivy commits first, the catalog second. A crash in
between leaves the catalog behind (old hash or missing row), so the next sync
sees a difference and redoes that work; before adding a document its old
sections are always deleted by id, so redoing never duplicates.

Deletions are the one change the next sync would not see (the file is gone, and
the catalog still lists it: `list_documents` would offer it until then). So the
two commits are one recoverable step for them: before the Tantivy commit the
catalog records the batch's deleted ids with Tantivy's last commit stamp
(PENDING_DELETES, in its own transaction); the catalog's transaction that applies
the batch removes that record. Whoever opens the index next and finds the record
(`recover_interrupted_batch`) knows from the stamp whether Tantivy committed the
batch: if it did, the catalog forgets those documents too; if not, both still
hold them and the next sync deletes them as usual.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import pickle
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from functools import lru_cache, partial
from typing import TypeVar

from ..errors import (
    BinaryContent,
    FileTooLarge,
    IndexBusy,
    NotServed,
    ParseTimeout,
    PathOutsideRoot,
    RootMissing,
)
from ..language import detect_language
from ..link_graph import resolve_pending
from ..links import link_records, names_of
from ..loader import content_hash, file_stem, parse_file, read_markdown
from ..markdown import ParsedDocument
from ..paths import Jail
from ..scan import EXCLUDED_LINK, ScannedFile, Scanner, ScanResult
from ..search.document_signals import DocumentTerms, joined, pack_terms
from ..settings import Settings
from .catalog import (
    Catalog,
    DocumentRecord,
    Fingerprint,
    Problem,
    SectionRecord,
    folder_of,
)
from .fulltext import FullTextIndex, SectionDoc, doc_key

log = logging.getLogger(__name__)

BATCH_DOCUMENTS = 2000
BATCH_SECONDS = 2.0
# A cold build (nothing of it indexed yet) commits less often: a crash loses nothing that was searchable, and
# each Tantivy commit costs ~0.1-0.3 s; under load, a 2 s clock would commit after a handful of documents.
COLD_BATCH_SECONDS = 10.0
# Below either floor, starting worker processes costs more than it saves: each spawned worker re-imports the
# package (~1 CPU s and ~50 MB), while the block scanner parses ~8 MB of Markdown per CPU second. A configured
# worker count skips the byte floor (not the file floor).
PARALLEL_THRESHOLD = 400  # files
PARALLEL_MIN_BYTES = 16_000_000
MAX_WORKERS = 4
WORKER_CHUNK = 64

Progress = Callable[[int, int], None]

PENDING_DELETES = "pending_deletes"  # catalog meta key: {"opstamp": Tantivy's stamp before the commit, "ids": [...]}


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
    terms: list[tuple[str, DocumentTerms]] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    touches: list[ScannedFile] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.upserts) + len(self.deletes) + len(self.touches)


@dataclass(frozen=True)
class Prepared:
    """A file read, hashed and parsed (or the reason it could not be)."""

    digest: str = ""
    parsed: ParsedDocument | None = None
    warnings: list[str] = field(default_factory=list)
    problem: Problem | None = None
    missing: bool = False


def prepare(jail: Jail, max_bytes: int, f: ScannedFile, old_hash: str | None, parse_seconds: float | None) -> Prepared:
    """Pure step of sync (no index access), so it can run in a worker process."""
    try:
        data = read_markdown(jail, f.path, max_bytes)
    except BinaryContent as exc:
        return Prepared(problem=Problem(f.doc_id, "binary", f"{exc}: skipped"))
    except FileTooLarge as exc:
        return Prepared(problem=Problem(f.doc_id, "too_large", f"{exc}: skipped"))
    except NotServed:  # a link swapped in since the scan, to something excluded
        return Prepared(problem=Problem(f.doc_id, "excluded_link", EXCLUDED_LINK))
    except PathOutsideRoot as exc:
        return Prepared(problem=Problem(f.doc_id, "outside_root", str(exc)))
    except FileNotFoundError:
        return Prepared(missing=True)
    except OSError as exc:
        return Prepared(problem=Problem(f.doc_id, "unreadable", str(exc.strerror or exc)))
    digest = content_hash(data)
    if old_hash == digest:
        return Prepared(digest=digest)
    try:
        loaded = parse_file(data, file_stem(f.doc_id), parse_seconds)
    except ParseTimeout as exc:
        return Prepared(problem=Problem(f.doc_id, "too_slow", f"{exc}: skipped"))
    except Exception as exc:  # a parser bug must not stop a whole vault from indexing
        log.exception("could not parse %s", f.doc_id)
        return Prepared(problem=Problem(f.doc_id, "unparsable", f"parser error: {type(exc).__name__}"))
    parsed = loaded.parsed
    # Detected here, in the workers, when the front matter does not say (None: the root language applies).
    lang = parsed.lang or detect_language([parsed.title, *(s.body for s in parsed.sections)])
    # The full text is not needed for indexing; leaving it out halves what workers send back.
    return Prepared(digest=digest, parsed=replace(parsed, lines=(), lang=lang), warnings=loaded.warnings)


def prepare_many(
    jail: Jail, max_bytes: int, parse_seconds: float | None, jobs: list[tuple[ScannedFile, str | None]]
) -> list[tuple[ScannedFile, Prepared]]:
    return [(f, prepare(jail, max_bytes, f, h, parse_seconds)) for f, h in jobs]


def parse_workers(configured: int | None) -> int:
    """How many worker processes may parse: as configured (MCP_DOCS_PARSE_WORKERS), else the cores (≤ MAX_WORKERS)
    when safe.

    Workers are spawned, and spawning re-imports the program's main module in each of them:
    harmless for our commands, `python -m …` modules and test runners, which guard their entry
    point, but a user's script that syncs at top level would run again in every worker. So
    without an explicit setting, workers are used only when the main module is guarded.
    """
    if configured is not None:
        return configured
    return min(os.cpu_count() or 1, MAX_WORKERS) if _main_module_is_guarded() else 1


@lru_cache(maxsize=1)
def _main_module_is_guarded() -> bool:
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not path:
        return False  # interactive or stdin: nothing a worker could import
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            source = fh.read(1_000_000)
    except OSError:
        return False
    return "__name__" in source and "__main__" in source


def die_with_parent() -> None:
    """Worker initializer: exit as soon as the parent process is gone, `kill -9` included.

    A worker otherwise waits forever on its task queue (the workers themselves hold its write end), so
    a killed `mcp-docs index` would leave them behind. The parent's sentinel (a pipe on POSIX, the
    process handle on Windows) becomes ready when the parent dies, whatever the cause.
    """
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        parent.join()
        os._exit(1)

    threading.Thread(target=watch, name="mcp-docs-parent-watch", daemon=True).start()


_Item = TypeVar("_Item")


def _chunks(items: list[_Item], size: int) -> Iterator[list[_Item]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def catalog_records(
    settings: Settings, f: ScannedFile, digest: str, parsed: ParsedDocument, warnings: list[str]
) -> tuple[DocumentRecord, list[SectionRecord]]:
    """What the catalog keeps of a parsed file (either store writes these)."""
    links, dropped = link_records(parsed.links, f.doc_id, settings.extensions)
    if dropped:
        warnings = [*warnings, f"{dropped:,} more link targets not indexed (first {len(links):,} kept)"]
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
        lang=parsed.lang or settings.language,
        language=parsed.lang,
        links=tuple(links),
        names=tuple(names_of(f.doc_id, parsed.aliases, settings.extensions)),
        warnings=tuple(warnings) + parsed.warnings,
        tokens=sum(s.tokens for s in parsed.sections),
    )
    sections = [
        SectionRecord(s.index, s.heading, s.heading_path, s.level, s.line_start, s.line_end, s.subtree_end, s.tokens)
        for s in parsed.sections
    ]
    return record, sections


# A file changed this close to its read may change again within the same tick of the file system's clock (2 s
# on FAT, 1 s on some network shares), keeping its size and mtime.
RACY_NS = 3_000_000_000


def racy_safe(f: ScannedFile, read_ns: int) -> ScannedFile:
    """`f` as its fingerprint is kept: a file changed within RACY_NS of the read is kept 1 ns older, so the next
    sync reads (and hashes) it again; else a second change in the same tick would never be seen ('racy git')."""
    return replace(f, mtime_ns=f.mtime_ns - 1) if f.mtime_ns > read_ns - RACY_NS else f


def scan_paths(
    jail: Jail, scanner: Scanner, paths: Iterable[str] | None, fingerprints: dict[str, Fingerprint]
) -> tuple[ScanResult, list[str]]:
    """The files to look at and the ids that are gone: everything (`paths` None) or only under `paths` (the
    watcher's changes). `fingerprints` are the indexed documents (under `paths`). Both stores' writers use it.
    Raises RootMissing when the root is gone, before or during the scan: every document would look deleted."""
    before = _require_root(jail)
    scan, gone = _scan_paths(jail, scanner, paths, fingerprints)
    # deleted, or replaced by another folder (`mv vault vault.old && mv vault.new vault`), while it was scanned:
    # the scan saw part of one tree, and what it did not see is not gone
    if _require_root(jail) != before:
        raise RootMissing(
            f"The documents root {jail.root} was replaced while it was scanned: the index was left as it was."
        )
    return scan, gone


def _require_root(jail: Jail) -> tuple[int, int]:
    """The root folder's identity (device, inode); RootMissing when it is gone."""
    try:
        st = jail.root.stat()
    except OSError:
        st = None
    if st is None or not stat.S_ISDIR(st.st_mode):
        raise RootMissing(f"The documents root {jail.root} no longer exists: the index was left as it was.")
    return (st.st_dev, st.st_ino)


def _scan_paths(
    jail: Jail, scanner: Scanner, paths: Iterable[str] | None, fingerprints: dict[str, Fingerprint]
) -> tuple[ScanResult, list[str]]:
    if paths is None:
        scan = scanner.scan()
        seen = {f.doc_id for f in scan.files}
        return scan, sorted(set(fingerprints) - seen)
    scan = ScanResult()
    gone: set[str] = set()
    for rel in sorted(set(paths)):
        full = jail.root / rel
        if full.is_dir() and not full.is_symlink():
            sub = scanner.scan(under=rel)
            scan.files.extend(sub.files)
            scan.problems.extend(sub.problems)
            seen = {f.doc_id for f in sub.files}
            # and a note of the folder's name, replaced by it
            gone.update(i for i in fingerprints if (i == rel or i.startswith(rel + "/")) and i not in seen)
            continue
        before = len(scan.files)
        scanner.stat_one(rel, scan)
        if len(scan.files) == before and rel in fingerprints:
            gone.add(rel)
        # a folder that vanished, or became a file or a folder link (never followed): drop everything under it
        gone.update(i for i in fingerprints if i.startswith(rel + "/"))
    return scan, sorted(gone)


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
        if paths is not None:
            paths = sorted(set(paths))
        fingerprints = self.catalog.fingerprints(paths)
        read_ns = time.time_ns()
        scan, gone = self._scan(paths, fingerprints)
        to_read = []
        for f in scan.files:
            fp = fingerprints.get(f.doc_id)
            if fp is None or fp.size != f.size or fp.mtime_ns != f.mtime_ns:
                to_read.append(racy_safe(f, read_ns))
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

        batch_seconds = BATCH_SECONDS if fingerprints else COLD_BATCH_SECONDS
        self.fulltext.begin()
        batch = _Batch()
        batch_started = time.perf_counter()
        done = 0
        try:
            for f, prep in self._prepared(to_read, fingerprints):
                self._apply(f, fingerprints.get(f.doc_id), prep, batch, report)
                done += 1
                if len(batch) >= BATCH_DOCUMENTS or time.perf_counter() - batch_started > batch_seconds:
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
    def _prepared(
        self, files: list[ScannedFile], fingerprints: dict[str, Fingerprint]
    ) -> Iterator[tuple[ScannedFile, Prepared]]:
        """Read, hash and parse files: in worker processes when there are many (parsing is pure Python)."""
        max_bytes, seconds = self.settings.max_file_bytes, self.settings.parse_seconds
        old_hash = [fingerprints[f.doc_id].hash if f.doc_id in fingerprints else None for f in files]
        workers = parse_workers(self.settings.parse_workers)
        small = self.settings.parse_workers is None and sum(f.size for f in files) < PARALLEL_MIN_BYTES
        if len(files) < PARALLEL_THRESHOLD or workers < 2 or small:
            for f, h in zip(files, old_hash, strict=False):
                yield f, prepare(self.jail, max_bytes, f, h, seconds)
            return
        # spawn, not fork: the server runs threads (watcher, HTTP) that fork would copy mid-flight.
        done = 0
        try:
            context = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=die_with_parent) as pool:
                jobs = pool.map(
                    partial(prepare_many, self.jail, max_bytes, seconds),
                    _chunks(list(zip(files, old_hash, strict=False)), WORKER_CHUNK),
                )
                for chunk_result in jobs:
                    for item in chunk_result:
                        yield item
                        done += 1
        except (BrokenProcessPool, OSError, RuntimeError, pickle.PicklingError) as exc:
            # Workers cannot start everywhere (a script run from stdin, a frozen app): carry on in-process.
            log.warning("parallel parsing unavailable (%s): continuing in one process", exc)
            for f, h in zip(files[done:], old_hash[done:], strict=False):
                yield f, prepare(self.jail, max_bytes, f, h, seconds)

    def _scan(self, paths: Iterable[str] | None, fingerprints: dict[str, Fingerprint]) -> tuple[ScanResult, list[str]]:
        return scan_paths(self.jail, self.scanner, paths, fingerprints)

    def _apply(
        self, f: ScannedFile, old: Fingerprint | None, prep: Prepared, batch: _Batch, report: SyncReport
    ) -> None:
        if prep.missing:
            if old is not None:
                self._drop(f.doc_id, batch, report)
            return
        if prep.problem is not None:
            self._skip(f, old, prep.problem, batch, report)
            return
        if prep.parsed is None:  # same content, new mtime
            batch.touches.append(f)
            report.unchanged += 1
            return
        try:
            self._index(f, old, prep, batch, report)
        except Exception as exc:  # one file must not stop the batch (as a parser error does not: `prepare`)
            log.exception("could not index %s", f.doc_id)
            self.fulltext.delete_document(f.doc_id)  # whatever was added of it, in this same commit
            problem = Problem(f.doc_id, "unindexable", f"indexing error: {type(exc).__name__}: skipped")
            self._skip(f, old, problem, batch, report)

    def _index(
        self, f: ScannedFile, old: Fingerprint | None, prep: Prepared, batch: _Batch, report: SyncReport
    ) -> None:
        parsed = prep.parsed
        assert parsed is not None
        record, sections = catalog_records(self.settings, f, prep.digest, parsed, prep.warnings)
        self.fulltext.delete_document(f.doc_id)
        terms: set[str] = set()
        self.fulltext.add_sections(
            (
                SectionDoc(
                    doc_id=f.doc_id,
                    section_idx=s.index,
                    title=parsed.title,
                    heading=s.heading,
                    heading_path=s.heading_path,
                    level=s.level,
                    line_start=s.line_start,
                    line_end=s.line_end,
                    body=s.body,
                    tags=parsed.tags,
                    folder=record.folder,
                    lang=record.lang,
                )
                for s in parsed.sections
            ),
            terms,
        )
        path = self.fulltext.path_terms(f.doc_id, record.lang)
        doc_terms = DocumentTerms(record.lang, pack_terms(terms), joined(path))
        batch.upserts.append((record, sections))  # last: a failure above leaves nothing of it in the batch
        batch.terms.append((f.doc_id, doc_terms))
        if old is None:
            report.added += 1
        else:
            report.updated += 1
        report.changed_ids.append(f.doc_id)

    def _skip(
        self, f: ScannedFile, old: Fingerprint | None, problem: Problem, batch: _Batch, report: SyncReport
    ) -> None:
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
        if batch.deletes:  # see the module's docstring: recoverable if killed between the two commits
            pending = {"opstamp": self.fulltext.committed_opstamp(), "ids": batch.deletes}
            self.catalog.set_meta(PENDING_DELETES, json.dumps(pending))
        self.fulltext.commit()
        with self.catalog.transaction() as conn:
            Catalog.drop_meta(conn, PENDING_DELETES)
            for doc_id in batch.deletes:
                Catalog.delete(conn, doc_id)
            for record, sections in batch.upserts:
                Catalog.upsert(conn, record, sections)
            for doc_id, terms in batch.terms:
                Catalog.set_terms(conn, doc_id, doc_key(doc_id), terms)
            for f in batch.touches:
                Catalog.touch(conn, f.doc_id, f.mtime_ns, f.size)
            resolve_pending(self.catalog, conn, self.settings.extensions)  # links the batch's names changed
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


def recover_interrupted_batch(catalog: Catalog, fulltext: FullTextIndex, extensions: Sequence[str]) -> int:
    """After a kill between the Tantivy commit and the catalog's: the catalog forgets the documents whose deletion
    Tantivy committed. Returns how many. Nothing to do (0) when no batch was interrupted, or when another process
    holds the writer: that one is alive and finishes its own batch."""
    raw = catalog.get_meta(PENDING_DELETES)
    if raw is None:
        return 0
    try:
        fulltext.begin()
    except IndexBusy:
        return 0
    try:
        try:
            pending = json.loads(raw)
            stamp, ids = int(pending["opstamp"]), [str(i) for i in pending["ids"]]
        except (ValueError, TypeError, KeyError):  # unreadable: the next sync compares everything anyway
            stamp, ids = -1, []
        committed = fulltext.committed_opstamp() > stamp
        with catalog.transaction() as conn:
            if committed:
                for doc_id in ids:
                    Catalog.delete(conn, doc_id)
                resolve_pending(catalog, conn, extensions)
            Catalog.drop_meta(conn, PENDING_DELETES)
    finally:
        fulltext.end()
    if committed and ids:
        log.warning("the last sync was interrupted between its two commits: %d deleted document(s) removed", len(ids))
    return len(ids) if committed else 0
