"""The one writer of a PostgreSQL index: bring the database in line with the root, then embed what is pending.

The same steps as the embedded sync (`store.embedded.sync`): scan through the jail, skip files whose size and mtime
did not change, read, hash and parse the others (`store.embedded.sync.prepare`), and commit in batches; each batch is one
transaction, so a reader never sees a document without its sections. Inside it each document has its own
savepoint: one whose content the database refuses (`_DOCUMENT_REFUSED`) is skipped alone and listed by `status`
as `unstorable`, and the rest of the batch is committed. The file's bytes are stored too: readers
serve `read_document` from the database. Chunk vectors whose text did not change are kept.

A cold index (a full sync into an empty database) takes a faster path with the same result: each batch is written
with COPY, the secondary indexes are built once after the load, and batches are committed by a thread while the
next is parsed (`_copy_batch`, `Database.drop_deferred_indexes`); a batch COPY refuses falls back to the savepoints.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import psycopg

from ...embedders import Embedder
from ...index.chunking import chunk_document, document_chunk
from ...link_graph import PENDING_BATCH, LinkGraph
from ...loader import content_hash, read_markdown
from ...markdown import ParsedDocument
from ...paths import Jail, printable
from ...scan import Problem, ScannedFile, Scanner
from ...settings import Settings
from ..embedded.catalog import DocumentRecord, Fingerprint, LinkRecord, SectionRecord, document_row
from ..embedded.sync import Progress, SyncReport, catalog_records, prepare, racy_safe, scan_paths
from .catalog import PgCatalog, _under
from .database import Database, text_config
from .letter_pairs import bm25_length, pair_suffix, with_pairs, word_fold, words_text
from .vector_writes import open_embedder
from .vector_writes import vector_text as vector_text  # re-exported: store.py names it here

log = logging.getLogger(__name__)

BATCH_DOCUMENTS = 500
# What the database refuses because of one document's content: a NUL or an invalid value (DataError, class 22), a
# section whose words overflow tsvector's 1 MB (ProgramLimitExceeded, class 54), a constraint (IntegrityError), a
# lone surrogate the driver cannot encode (UnicodeEncodeError, a ValueError). That document is skipped alone.
# Anything else (a full disk, a missing privilege, a read-only standby, a trigger, a lost connection) would refuse
# every document alike: the batch rolls back whole, nothing is lost, and the sync fails (/health: degraded).
_DOCUMENT_REFUSED = (psycopg.DataError, psycopg.errors.ProgramLimitExceeded, psycopg.IntegrityError, ValueError)


class PgWriter:
    def __init__(self, settings: Settings, db: Database, jail: Jail, embedder: Embedder | None) -> None:
        self.settings = settings
        self.db = db
        self.jail = jail
        self.scanner = Scanner(jail)
        self.catalog = PgCatalog(db)
        self.embedder = embedder
        self._configs = db.text_configs()
        self.copied = 0  # documents the last sync wrote with COPY (a cold index)

    @classmethod
    def open(cls, settings: Settings, db: Database, jail: Jail) -> tuple[PgWriter, str | None]:
        """The writer and, when embeddings are on but unavailable, why (keyword search still works). Its embedder is
        the index's model (vector_writes.open_embedder): the one its vectors have, else the languages' choice."""
        embedder, error = open_embedder(settings, db, PgCatalog(db).language_counts())
        return cls(settings, db, jail, embedder), error

    # -- sync ------------------------------------------------------------------------------
    def sync(self, paths: Iterable[str] | None = None, progress: Progress | None = None) -> SyncReport:
        """Everything (`paths` None), or only what is at or under `paths` (the watcher's changes)."""
        started = time.perf_counter()
        report = SyncReport()
        if paths is not None:
            paths = sorted(set(paths))
        old = self.catalog.fingerprints(paths)
        read_ns = time.time_ns()
        scan, gone = scan_paths(self.jail, self.scanner, paths, old)
        report.skipped.extend(scan.problems)
        to_read = [racy_safe(f, read_ns) for f in scan.files if _changed(f, old.get(f.doc_id))]
        report.unchanged = len(scan.files) - len(to_read)
        total = len(to_read) + len(gone)
        if progress:
            progress(0, total)
        # A cold index (a full sync into an empty database) is loaded with COPY and its secondary indexes are
        # built once after the load, not maintained row by row during it (benchmarks/REPORT.md, "bulk loading").
        cold = paths is None and not old and bool(to_read)
        self.copied = 0
        if cold:
            self.db.drop_deferred_indexes()
        try:
            self._sync_files(to_read, old, gone, report, progress, total, bulk=cold)
        finally:
            if cold:  # also after a failure: a reader must not be left without its indexes
                self.db.build_deferred_indexes()
        if cold:
            log.info(
                "cold index: %d of %d documents loaded with COPY, indexes built after the load",
                self.copied,
                len(to_read),
            )
        self._save_problems(paths, report)
        if progress:
            progress(total, total)
        report.seconds = time.perf_counter() - started
        return report

    def _sync_files(
        self,
        to_read: list[ScannedFile],
        old: dict[str, Fingerprint],
        gone: list[str],
        report: SyncReport,
        progress: Progress | None,
        total: int,
        *,
        bulk: bool,
    ) -> None:
        batch: list[Batched] = []
        touches: list[ScannedFile] = []
        if len(to_read) <= BATCH_DOCUMENTS:  # one batch (the watcher's syncs): nothing to overlap
            self._parse_and_commit(
                to_read,
                old,
                gone,
                report,
                progress,
                total,
                batch,
                touches,
                lambda b, g, t: _count_refusals(self._commit(b, g, t, old, bulk=bulk), report),
            )
            return
        # Each batch is committed by one thread while this one parses the next: the database server's work (the
        # tsvectors, the indexes) overlaps the parsing instead of following it. One batch in flight at a time, in
        # order, each its own transaction as before; what the database refused is counted here, once it is known.
        committer = ThreadPoolExecutor(1, thread_name_prefix="mcp-docs-pg-commit")
        in_flight: Future[list[Refusal]] | None = None

        def commit(batch: list[Batched], gone: list[str], touches: list[ScannedFile]) -> None:
            nonlocal in_flight
            if in_flight is not None:
                _count_refusals(in_flight.result(), report)
            in_flight = committer.submit(self._commit, batch, gone, touches, old, bulk=bulk)

        try:
            self._parse_and_commit(to_read, old, gone, report, progress, total, batch, touches, commit)
            assert in_flight is not None
            _count_refusals(in_flight.result(), report)
        finally:
            # a failed sync still waits for the batch in flight; the thread's connection ends with it
            committer.submit(self.db.drop_thread_connection)
            committer.shutdown(wait=True)

    def _parse_and_commit(
        self,
        to_read: list[ScannedFile],
        old: dict[str, Fingerprint],
        gone: list[str],
        report: SyncReport,
        progress: Progress | None,
        total: int,
        batch: list[Batched],
        touches: list[ScannedFile],
        commit: Callable[[list[Batched], list[str], list[ScannedFile]], None],
    ) -> None:
        for done, f in enumerate(to_read, 1):
            fp = old.get(f.doc_id)
            prep = prepare(
                self.jail, self.settings.max_file_bytes, f, fp.hash if fp else None, self.settings.parse_seconds
            )
            if prep.missing or prep.problem is not None:
                if prep.problem is not None:
                    report.skipped.append(prep.problem)
                if fp is not None:
                    gone.append(f.doc_id)
            elif prep.parsed is None:
                touches.append(f)
                report.unchanged += 1
            else:
                data = self._bytes(f, prep.digest)
                if data is not None:  # else it changed since it was parsed: the next sync takes the new version
                    batch.append((f, prep.digest, prep.parsed, prep.warnings, data))
                    report.changed_ids.append(f.doc_id)
                    if fp is None:
                        report.added += 1
                    else:
                        report.updated += 1
            if len(batch) >= BATCH_DOCUMENTS:
                commit(batch, [], touches)
                batch, touches = [], []
                if progress:
                    progress(done, total)
        report.deleted += len(gone)
        report.deleted_ids.extend(gone)
        commit(batch, gone, touches)

    def _bytes(self, f: ScannedFile, digest: str) -> bytes | None:
        try:
            data = read_markdown(self.jail, f.path, self.settings.max_file_bytes)
        except (OSError, ValueError):
            return None
        return data if content_hash(data) == digest else None

    def _commit(
        self,
        batch: list[tuple[ScannedFile, str, ParsedDocument, list[str], bytes]],
        gone: list[str],
        touches: list[ScannedFile],
        old: dict[str, Fingerprint],
        *,
        bulk: bool = False,
    ) -> list[Refusal]:
        """One batch in one transaction; the documents the database refused (skipped, the rest committed)."""
        refused: list[Refusal] = []
        if not batch and not gone and not touches:
            return refused
        ids = [f.doc_id for f, *_ in batch]
        with self.db.transaction() as conn:
            kept = self._vectors_of(conn, ids)
            before = _naming(conn, ids + list(gone))  # what decides the links to them: names, language
            conn.execute("delete from mcp_docs_documents where id = any(%s)", (ids + list(gone),))
            if not (bulk and self._copy_batch(conn, batch)):
                refused = self._insert_each(conn, batch, old, kept)
            _links_to_resolve(conn, before, _naming(conn, ids))
            self._resolve_pending(conn)
            if touches:
                with conn.cursor() as cur:
                    cur.executemany(
                        "update mcp_docs_documents set mtime_ns = %s, size = %s where id = %s",
                        [(t.mtime_ns, t.size, t.doc_id) for t in touches],
                    )
        return refused

    def _insert_each(
        self,
        conn: psycopg.Connection[Any],
        batch: list[Batched],
        old: dict[str, Fingerprint],
        kept: dict[str, str],
    ) -> list[Refusal]:
        """The batch's documents one by one, each in its own savepoint (the incremental path, and a cold batch
        that COPY could not write whole)."""
        refused: list[Refusal] = []
        for f, digest, parsed, warnings, data in batch:
            record, sections = catalog_records(self.settings, f, digest, parsed, warnings)
            try:
                # A savepoint per document: one the database refuses is rolled back alone, not the batch.
                with conn.transaction():
                    self._insert(conn, record, sections, parsed, data, kept)
            except _DOCUMENT_REFUSED as exc:
                if conn.broken or conn.closed:  # the connection is lost, not this document refused
                    raise
                refused.append((f.doc_id, exc, old.get(f.doc_id) is not None))
        return refused

    def _resolve_pending(self, conn: psycopg.Connection[Any]) -> None:
        """Resolve the links the batch marked, as the catalog now stands (inside the batch's transaction: the
        catalog's reads run on this thread's connection, `conn`)."""
        graph = LinkGraph(self.catalog, self.settings.extensions)
        while links := pending_links(conn, PENDING_BATCH):
            with conn.cursor() as cur:
                cur.executemany(
                    "update mcp_docs_links set resolved = %s where doc_id = %s and n = %s",
                    [(target or "", link.doc_id, link.n) for link, target in graph.resolve_stored(links)],
                )

    def _vectors_of(self, conn: psycopg.Connection[Any], ids: list[str]) -> dict[str, str]:
        """The embedded chunks and document units of these documents by text hash, to keep the vectors of
        unchanged text."""
        if not ids or self.embedder is None:
            return {}
        rows = conn.execute(
            "select hash, embedding::text from mcp_docs_chunks where doc_id = any(%s) and embedding is not null "
            "union all select hash, embedding::text from mcp_docs_doc_chunks where doc_id = any(%s) "
            "and embedding is not null",
            (ids, ids),
        ).fetchall()
        return {r[0]: r[1] for r in rows}

    def _insert(
        self,
        conn: psycopg.Connection[Any],
        doc: DocumentRecord,
        sections: list[SectionRecord],
        parsed: ParsedDocument,
        data: bytes,
        kept: dict[str, str],
    ) -> None:
        rows = self._rows(doc, sections, parsed, data, kept)
        conn.execute(
            "insert into mcp_docs_documents values (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)", rows.document
        )
        with conn.cursor() as cur:
            cur.executemany(
                "insert into mcp_docs_sections values (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s::regconfig,"
                " setweight(to_tsvector(%s::regconfig, %s), 'A') || setweight(to_tsvector(%s::regconfig, %s), 'B'), %s)",
                [
                    (*r[:11], r[10], r[11], r[10], (r[9] if r[13] is None else r[13]) + r[12], r[14])
                    for r in rows.sections
                ],
            )
            cur.executemany("insert into mcp_docs_doc_tags values (%s, %s) on conflict do nothing", rows.tags)
            cur.executemany("insert into mcp_docs_links values (%s,%s,%s,%s,%s,%s,%s,%s,null)", rows.links)
            cur.executemany("insert into mcp_docs_doc_names values (%s,%s,%s,%s) on conflict do nothing", rows.names)
            if rows.chunks:
                cur.executemany(
                    "insert into mcp_docs_chunks(doc_id, section_idx, hash, text, prefix_len, embedding) "
                    "values (%s,%s,%s,%s,%s,%s::vector)",
                    rows.chunks,
                )
            if rows.unit is not None:
                cur.execute(
                    "insert into mcp_docs_doc_chunks(doc_id, section_idx, hash, text, prefix_len, embedding) "
                    "values (%s,%s,%s,%s,%s,%s::vector)",
                    rows.unit,
                )

    def _rows(
        self,
        doc: DocumentRecord,
        sections: list[SectionRecord],
        parsed: ParsedDocument,
        data: bytes,
        kept: dict[str, str],
    ) -> DocumentRows:
        """One document's rows for every table: the same for the row-by-row inserts and the bulk COPY. A section
        row ends with its config, head text, the letter pairs of its body and its words' text when that is not the
        body (store/postgres/letter_pairs.py), from which the server computes its tsvector, then its length for BM25
        (`letter_pairs.bm25_length`)."""
        config = text_config(doc.lang)
        if config not in self._configs:  # a server built without that language's dictionary
            config = "simple"
        bodies = {s.index: s.body for s in parsed.sections}
        chunks = chunk_document(parsed, self.embedder.max_chars) if self.embedder is not None else []
        # the document's own unit (title, description, lead): embedded before any section (vector_writes.py)
        unit = document_chunk(parsed, self.embedder.max_chars) if self.embedder is not None else None
        return DocumentRows(
            document=(*document_row(doc, time.time()), data),
            sections=[
                (
                    doc.id,
                    s.idx,
                    s.heading,
                    s.heading_path,
                    s.level,
                    s.line_start,
                    s.line_end,
                    s.subtree_end,
                    s.tokens,
                    bodies.get(s.idx, ""),
                    config,
                    with_pairs(word_fold(head_text(doc.title, s.heading_path))),  # Thai, Khmer...: letter pairs too
                    pair_suffix(bodies.get(s.idx, "")),
                    words_text(bodies.get(s.idx, "")),
                    bm25_length(bodies.get(s.idx, ""), s.tokens),
                )
                for s in sections
            ],
            # each distinct once: COPY has no `on conflict do nothing`
            tags=list(dict.fromkeys((doc.id, t) for t in doc.tags)),
            links=[
                (doc.id, n, link["line"], link["kind"], link["target"], link["heading"], link["key"], link["count"])
                for n, link in enumerate(doc.links)
                if link.get("key")
            ],
            names=list(dict.fromkeys((n.key, n.doc_id, n.kind, n.alias) for n in doc.names)),
            chunks=[(doc.id, c.section_idx, c.hash, c.text, c.prefix_len, kept.get(c.hash)) for c in chunks],
            unit=(doc.id, unit.section_idx, unit.hash, unit.text, unit.prefix_len, kept.get(unit.hash))
            if unit
            else None,
        )

    def _copy_batch(
        self, conn: psycopg.Connection[Any], batch: list[tuple[ScannedFile, str, ParsedDocument, list[str], bytes]]
    ) -> bool:
        """A cold batch written with COPY (one stream per table, no statement per row), inside a savepoint. False
        when the database refused some document's content: the savepoint is rolled back and the caller writes the
        batch document by document, so that only the refused one is skipped (`_insert_each`)."""
        rows: list[DocumentRows] = []
        for f, digest, parsed, warnings, data in batch:
            record, sections = catalog_records(self.settings, f, digest, parsed, warnings)
            rows.append(self._rows(record, sections, parsed, data, {}))
        try:
            with conn.transaction(), conn.cursor() as cur:
                _copy(cur, "mcp_docs_documents", None, (r.document for r in rows))
                # The tsvector is computed by the server: the sections go through a temporary table, then one
                # insert computes every row's tsvector from its config, head text and body.
                cur.execute(_LOAD_SECTIONS_TABLE)
                _copy(cur, "mcp_docs_load_sections", None, (s for r in rows for s in r.sections))
                cur.execute(
                    "insert into mcp_docs_sections select doc_id, idx, heading, heading_path, level, line_start, "
                    "line_end, subtree_end, tokens, body, config, setweight(to_tsvector(config, head), 'A') || "
                    "setweight(to_tsvector(config, coalesce(words, body) || pairs), 'B'), length from mcp_docs_load_sections"
                )
                cur.execute("truncate mcp_docs_load_sections")
                _copy(cur, "mcp_docs_doc_tags", None, (t for r in rows for t in r.tags))
                _copy(cur, "mcp_docs_links", _LINK_COLUMNS, (x for r in rows for x in r.links))
                _copy(cur, "mcp_docs_doc_names", None, (n for r in rows for n in r.names))
                _copy(cur, "mcp_docs_chunks", _CHUNK_COLUMNS, (c[:5] for r in rows for c in r.chunks))
                _copy(cur, "mcp_docs_doc_chunks", _CHUNK_COLUMNS, (r.unit[:5] for r in rows if r.unit is not None))
        except (*_DOCUMENT_REFUSED, psycopg.errors.InsufficientPrivilege) as exc:
            # refused content, or a role without the TEMPORARY privilege the sections' table needs
            if conn.broken or conn.closed:  # the connection is lost, not a document refused
                raise
            log.info("COPY refused a batch (%s): writing it document by document", type(exc).__name__)
            return False
        self.copied += len(rows)
        return True

    def _save_problems(self, paths: list[str] | None, report: SyncReport) -> None:
        """A full scan knows every problem there is; a partial one only those under its paths."""
        with self.db.transaction() as conn:
            if paths is None:
                conn.execute("delete from mcp_docs_problems")
            else:
                conn.execute(
                    "delete from mcp_docs_problems where path = any(%s) or path like any(%s)",
                    (paths, [_under(p) for p in paths]),
                )
            with conn.cursor() as cur:
                cur.executemany(
                    "insert into mcp_docs_problems values (%s,%s,%s) on conflict (path) do update "
                    "set kind = excluded.kind, detail = excluded.detail",
                    [(p.path, p.kind, p.detail) for p in report.skipped],
                )
            self.db.set_meta(conn, "language", self.settings.language)
            if report.changed:  # a scan of every section: not after the watcher's syncs that change nothing
                self.save_statistics(conn)
            elif self.db.meta("config_sections") is None:  # an index written before they were recorded
                save_config_sections(conn)

    @staticmethod
    def save_statistics(conn: psycopg.Connection[Any]) -> None:
        """What BM25 needs of the whole collection (the number of sections, their average length), recorded after
        each sync that changed the index, so that a search reads two rows instead of counting every section."""
        total, average = conn.execute(
            "select count(*), coalesce(avg(coalesce(length, tokens)), 1) from mcp_docs_sections"
        ).fetchone() or (0, 1)
        conn.execute(
            "insert into mcp_docs_meta(key, value) values ('sections', %s), ('average_tokens', %s) "
            "on conflict (key) do update set value = excluded.value",
            (str(int(total)), repr(float(average))),
        )
        save_config_sections(conn)


def save_config_sections(conn: psycopg.Connection[Any]) -> None:
    """The number of sections of each text-search configuration, as JSON: a word that is a stopword of one (its
    tsvectors drop it) is in about every section there, its document frequency for the document signals
    (signal_columns.py)."""
    conn.execute(
        "insert into mcp_docs_meta(key, value) select 'config_sections', coalesce(json_object_agg(c, n), '{}')::text "
        "from (select config::text as c, count(*) as n from mcp_docs_sections group by config) x "
        "on conflict (key) do update set value = excluded.value"
    )


@dataclass(frozen=True)
class DocumentRows:
    """One document's rows, table by table, in the tables' column order."""

    document: tuple[Any, ...]
    sections: list[tuple[Any, ...]]
    tags: list[tuple[str, str]]
    links: list[tuple[Any, ...]]
    names: list[tuple[str, str, str, str]]
    chunks: list[tuple[Any, ...]]
    unit: tuple[Any, ...] | None = None  # the document's own unit (mcp_docs_doc_chunks), None for a text-less one


_LINK_COLUMNS = "(doc_id, n, line, kind, target, heading, key, count)"
_CHUNK_COLUMNS = "(doc_id, section_idx, hash, text, prefix_len)"
# A cold load's sections before their tsvector: private to the writer's session, emptied after each batch.
_LOAD_SECTIONS_TABLE = (
    "create temporary table if not exists mcp_docs_load_sections (doc_id text, idx integer, heading text, "
    "heading_path text, level integer, line_start integer, line_end integer, subtree_end integer, tokens integer, "
    "body text, config regconfig, head text, pairs text, words text, length integer)"
)


def _copy(cur: psycopg.Cursor[Any], table: str, columns: str | None, rows: Iterable[tuple[Any, ...]]) -> None:
    with cur.copy(f"copy {table} {columns or ''} from stdin") as copy:
        for row in rows:
            copy.write_row(row)


def head_text(title: str, heading_path: str) -> str:
    """The title and heading path, weighted above the body (as the embedded store's head field)."""
    return f"{title}\n{heading_path.replace(' > ', chr(10))}" if heading_path != title else title


Batched = tuple[ScannedFile, str, ParsedDocument, list[str], bytes]  # a parsed file, its digest, warnings, bytes
Refusal = tuple[str, Exception, bool]  # a document the database refused, why, and whether it was indexed before


def _count_refusals(refusals: list[Refusal], report: SyncReport) -> None:
    for doc_id, exc, was_indexed in refusals:
        _refused(doc_id, exc, report, was_indexed)


def _refused(doc_id: str, exc: Exception, report: SyncReport, was_indexed: bool) -> None:
    """A document the database would not store: skipped and listed by `status`, the rest of its batch kept. Its
    older version was deleted with the batch: it must not stay searchable with content the root no longer has."""
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    log.warning("the database refused %s (%s): skipped", printable(doc_id), detail)
    report.skipped.append(Problem(doc_id, "unstorable", f"the database refused it ({detail[:200]}): skipped"))
    report.changed_ids.remove(doc_id)
    if was_indexed:
        report.updated -= 1
        report.deleted += 1
        report.deleted_ids.append(doc_id)
    else:
        report.added -= 1


Naming = dict[str, tuple[frozenset[tuple[str, str, str]], str | None]]


def _naming(conn: psycopg.Connection[Any], ids: list[str]) -> Naming:
    """What decides which links resolve to each of these documents: its names and its named language."""
    if not ids:
        return {}
    names: dict[str, set[tuple[str, str, str]]] = {}
    for key, doc_id, kind, alias in conn.execute(
        "select key, doc_id, kind, alias from mcp_docs_doc_names where doc_id = any(%s)", (ids,)
    ):
        names.setdefault(doc_id, set()).add((key, kind, alias))
    rows = conn.execute("select id, language from mcp_docs_documents where id = any(%s)", (ids,)).fetchall()
    return {doc_id: (frozenset(names.get(doc_id, ())), lang) for doc_id, lang in rows}


def _links_to_resolve(conn: psycopg.Connection[Any], before: Naming, after: Naming) -> None:
    """Mark for resolving again the links to the names of the documents whose names or language the batch
    changed (added, deleted, renamed, re-detected): the links of other names resolve as they did."""
    keys: set[str] = set()
    for doc_id in before.keys() | after.keys():
        old, new = before.get(doc_id), after.get(doc_id)
        if old != new:
            for naming in (old, new):
                keys.update(name[0] for name in (naming[0] if naming else ()))
    if keys:
        conn.execute(
            "update mcp_docs_links set resolved = null where resolved is not null and key = any(%s)", (sorted(keys),)
        )


def pending_links(conn: psycopg.Connection[Any], limit: int) -> list[LinkRecord]:
    rows = conn.execute(
        "select doc_id, line, kind, target, heading, key, count, n from mcp_docs_links where resolved is null limit %s",
        (limit,),
    ).fetchall()
    return [LinkRecord(*r) for r in rows]


def _changed(f: ScannedFile, old: Fingerprint | None) -> bool:
    return old is None or old.size != f.size or old.mtime_ns != f.mtime_ns
