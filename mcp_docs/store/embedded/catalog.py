"""The catalog: one SQLite file listing documents, their sections and the files that were skipped.

It records what the full-text and vector stores hold, keyed by document id, with
the content hash that makes sync incremental. Written after Tantivy commits, so
after a crash it can only lag behind (and the next sync redoes the difference).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, TypeVar

from ...links import Name
from ...scan import Problem
from ...search.document_signals import DocumentTerms
from . import integrity, ownership

# The records live in records.py; importing them from here keeps working (explicit re-exports).
from .catalog_schema import SCHEMA
from .read_only_media import sqlite_reading_uri
from .records import (
    DocumentRecord as DocumentRecord,
)
from .records import (
    Fingerprint as Fingerprint,
)
from .records import (
    LinkRecord as LinkRecord,
)
from .records import (
    SectionRecord as SectionRecord,
)
from .records import (
    document_from_row as document_from_row,
)
from .records import (
    document_row as document_row,
)
from .records import (
    folder_of as folder_of,
)
from .sqlite_tx import immediate_transaction

T = TypeVar("T")
log = logging.getLogger(__name__)

SQLITE_SUFFIXES = ("", "-wal", "-shm", "-journal")

# What a damaged file raises: SQLite's errors, and a UnicodeDecodeError when a garbled schema makes the error
# message itself invalid UTF-8 (found by the fuzzing in tests/security/test_index_storage.py).
DAMAGE: tuple[type[Exception], ...] = (sqlite3.DatabaseError, UnicodeDecodeError)


class Catalog:
    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only  # a reading HTTP worker: SQLite itself refuses any write (mode=ro)
        self._local = threading.local()
        self._write_lock = threading.Lock()
        try:
            conn = self._conn()
            if not read_only:
                _drop_old_links_table(conn)
                conn.executescript(SCHEMA)
                conn.commit()
        except DAMAGE:
            self.close()  # before the caller deletes the file (Windows cannot delete an open file)
            raise

    @classmethod
    def open(cls, path: Path) -> Catalog:
        """Open, or rebuild empty when the file is damaged (truncated, overwritten): the catalog is a cache
        of the documents, and an empty one makes the next sync index everything again."""
        catalog: Catalog | None = None
        try:
            catalog = cls(path)
            integrity.check_if_changed(path, catalog.check)
            return catalog
        except DAMAGE as exc:
            log.warning("the catalog %s is damaged (%s): rebuilding the index", path, exc)
            if catalog is not None:
                catalog.close()
            for suffix in SQLITE_SUFFIXES:
                ownership.remove(Path(f"{path}{suffix}"))
            return cls(path)

    def check(self) -> None:
        """Raise sqlite3.DatabaseError unless every page of the file reads back as a valid b-tree."""
        # "NULL value in <table>.<column>" is not damage: our writes never store NULL there, and SQLite 3.40
        # reports it falsely for WITHOUT ROWID tables whose key order differs from the column order (doc_tags).
        problems = [r[0] for r in self._conn().execute("pragma quick_check") if not r[0].startswith("NULL value in ")]
        if problems not in (["ok"], []):
            raise sqlite3.DatabaseError("; ".join(problems[:3]))

    # -- connections ---------------------------------------------------------
    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            if self.read_only:  # the writer made the file (in WAL mode); a missing one is an error, not created
                target, uri = sqlite_reading_uri(self.path), True  # immutable on read-only media
            else:
                target, uri = str(self.path), False
            conn = sqlite3.connect(target, timeout=30, isolation_level=None, check_same_thread=False, uri=uri)
            self._local.conn = conn  # before the pragmas, so that close() releases a damaged file
            if not self.read_only:
                conn.execute("pragma journal_mode=wal")
                conn.execute("pragma synchronous=normal")
            conn.execute("pragma busy_timeout=30000")
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        return immediate_transaction(self._write_lock, self._conn())

    # -- meta ------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self._conn().execute("select value from meta where key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as conn:
            conn.execute("insert or replace into meta(key, value) values (?, ?)", (key, value))

    @staticmethod
    def drop_meta(conn: sqlite3.Connection, key: str) -> None:
        conn.execute("delete from meta where key = ?", (key,))

    # -- writes (inside a transaction) ------------------------------------------
    @staticmethod
    def upsert(conn: sqlite3.Connection, doc: DocumentRecord, sections: Iterable[SectionRecord]) -> None:
        before = _naming(conn, doc.id)
        Catalog._delete_rows(conn, doc.id)
        conn.execute(
            "insert into documents values (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            document_row(doc, doc.indexed_at or time.time()),
        )
        conn.executemany(
            "insert into sections values (?,?,?,?,?,?,?,?,?)",
            [
                (doc.id, s.idx, s.heading, s.heading_path, s.level, s.line_start, s.line_end, s.subtree_end, s.tokens)
                for s in sections
            ],
        )
        conn.executemany("insert or ignore into doc_tags values (?, ?)", [(doc.id, t) for t in doc.tags])
        conn.executemany(
            "insert into links values (?,?,?,?,?,?,?,?,null)",
            [
                (doc.id, n, link["line"], link["kind"], link["target"], link["heading"], link["key"], link["count"])
                for n, link in enumerate(doc.links)
                if link.get("key")
            ],
        )
        conn.executemany(
            "insert or ignore into doc_names values (?,?,?,?)", [(n.key, n.doc_id, n.kind, n.alias) for n in doc.names]
        )
        after = ({(n.key, n.kind, n.alias) for n in doc.names}, doc.language)
        if after != before:  # an edit that keeps its names and language changes no link's resolution
            _links_to_resolve(conn, {name[0] for name in before[0] | after[0]})

    @staticmethod
    def delete(conn: sqlite3.Connection, doc_id: str) -> None:
        # Links to its names may have resolved to it, or (ambiguous) not because of it: resolved again.
        _links_to_resolve(conn, {name[0] for name in _naming(conn, doc_id)[0]})
        Catalog._delete_rows(conn, doc_id)

    @staticmethod
    def _delete_rows(conn: sqlite3.Connection, doc_id: str) -> None:
        conn.execute("delete from documents where id = ?", (doc_id,))
        conn.execute("delete from sections where doc_id = ?", (doc_id,))
        conn.execute("delete from doc_tags where doc_id = ?", (doc_id,))
        conn.execute("delete from links where doc_id = ?", (doc_id,))
        conn.execute("delete from doc_names where doc_id = ?", (doc_id,))
        conn.execute("delete from doc_terms where doc_id = ?", (doc_id,))

    @staticmethod
    def set_terms(conn: sqlite3.Connection, doc_id: str, key: int, terms: DocumentTerms) -> None:
        """A document's term set (document_signals.py), under its full-text key (fulltext.doc_key)."""
        conn.execute(
            "insert or replace into doc_terms values (?,?,?,?,?)",
            (_signed(key), doc_id, terms.lang, terms.terms, terms.path),
        )

    @staticmethod
    def touch(conn: sqlite3.Connection, doc_id: str, mtime_ns: int, size: int) -> None:
        conn.execute("update documents set mtime_ns = ?, size = ? where id = ?", (mtime_ns, size, doc_id))

    @staticmethod
    def replace_problems(conn: sqlite3.Connection, problems: Iterable[Problem], scope: str | None = None) -> None:
        """Replace the problem list; with `scope`, only for paths equal to or under that prefix.

        An unchanged list is not written: a sync that found nothing new leaves the file as it was, so the
        next command does not check it for damage again (store/embedded/integrity.py)."""
        where = ""
        args: tuple[object, ...] = ()
        if scope is not None:
            where, args = " where path = ? or substr(path, 1, ?) = ?", (scope, len(scope) + 1, scope + "/")
        rows = {p.path: (p.path, p.kind, p.detail) for p in problems}  # by path, as `insert or replace` keeps them
        if set(conn.execute("select path, kind, detail from problems" + where, args)) == set(rows.values()):
            return
        conn.execute("delete from problems" + where, args)
        conn.executemany("insert or replace into problems values (?,?,?)", list(rows.values()))

    @staticmethod
    def delete_problems(conn: sqlite3.Connection, paths: Iterable[str]) -> None:
        conn.executemany("delete from problems where path = ?", [(p,) for p in paths])

    @staticmethod
    def add_problems(conn: sqlite3.Connection, problems: Iterable[Problem]) -> None:
        conn.executemany(
            "insert or replace into problems values (?,?,?)", [(p.path, p.kind, p.detail) for p in problems]
        )

    def clear(self) -> None:
        with self.transaction() as conn:
            for table in ("documents", "sections", "doc_tags", "links", "doc_names", "doc_terms", "problems"):
                conn.execute(f"delete from {table}")

    # -- reads -----------------------------------------------------------------------
    def fingerprints(self, paths: Iterable[str] | None = None) -> dict[str, Fingerprint]:
        """All fingerprints, or only those of the given ids and of the documents under them (folders)."""
        conn = self._conn()
        if paths is None:
            rows = conn.execute("select id, hash, size, mtime_ns from documents")
            return {r[0]: Fingerprint(r[1], r[2], r[3]) for r in rows}
        found: dict[str, Fingerprint] = {}
        for path in paths:
            # '/' + 1 is '0': the range [path/, path0) is everything under path/, through the primary key.
            rows = conn.execute(
                "select id, hash, size, mtime_ns from documents where id = ? or (id >= ? and id < ?)",
                (path, path + "/", path + "0"),
            )
            found.update({r[0]: Fingerprint(r[1], r[2], r[3]) for r in rows})
        return found

    def document(self, doc_id: str) -> DocumentRecord | None:
        row = self._conn().execute("select * from documents where id = ?", (doc_id,)).fetchone()
        return document_from_row(row) if row else None

    def sections(self, doc_id: str) -> list[SectionRecord]:
        rows = self._conn().execute(
            "select idx, heading, heading_path, level, line_start, line_end, subtree_end, tokens "
            "from sections where doc_id = ? order by idx",
            (doc_id,),
        )
        return [SectionRecord(*r) for r in rows]

    def section_counts(self, doc_ids: list[str]) -> dict[str, int]:
        if not doc_ids:
            return {}
        marks = ",".join("?" * len(doc_ids))
        rows = self._conn().execute(
            f"select doc_id, count(*) from sections where doc_id in ({marks}) group by doc_id", doc_ids
        )
        return {r[0]: r[1] for r in rows}

    def ids(self) -> list[str]:
        return [r[0] for r in self._conn().execute("select id from documents order by id")]

    def committed_elsewhere(self) -> bool:
        """Whether another connection (the writing process) committed since this thread last asked; True on a
        thread's first question. The writer commits the full-text index before the catalog, so a reader that sees
        a new catalog commit may reload its full-text searcher and find everything the catalog lists."""
        version = self._conn().execute("pragma data_version").fetchone()[0]
        last = getattr(self._local, "seen_version", None)
        self._local.seen_version = version
        return bool(last != version)

    def _until_commit(self, name: str, read: Callable[[sqlite3.Connection], T], *key: object) -> T:
        """`read(conn)`, remembered by this thread (under `name`, for `key`) until the next commit by any
        process: `data_version` moves when another connection commits, `total_changes` when this one does."""
        conn = self._conn()
        version = (conn.execute("pragma data_version").fetchone()[0], conn.total_changes, *key)
        cached: tuple[tuple[object, ...], T] | None = getattr(self._local, name, None)
        if cached is None or cached[0] != version:
            cached = (version, read(conn))
            setattr(self._local, name, cached)
        return cached[1]

    def count(self) -> int:
        """Documents in the catalog, as committed by any process. Recounted only after a commit (`count(*)` scans
        the table, ~90 ms at 100k documents, and every search reports it)."""
        return self._until_commit(
            "count", lambda conn: int(conn.execute("select count(*) from documents").fetchone()[0])
        )

    def section_total(self) -> int:
        return int(self._conn().execute("select count(*) from sections").fetchone()[0])

    def front_matters(self, doc_ids: list[str]) -> dict[str, dict[str, Any]]:
        """Each known document's front matter, in one query (a search in a collection of several languages reads
        the translation keys of its candidates and of the asker's language's pages: ~200 of them)."""
        if not doc_ids:
            return {}
        rows = self._conn().execute(
            "select id, front_matter from documents where id in (select value from json_each(?))",
            (json.dumps(doc_ids),),
        )
        return {r[0]: json.loads(r[1]) for r in rows}

    def named_languages(self, doc_ids: list[str]) -> dict[str, str | None]:
        """Each known document's named language (DocumentRecord.language: None when undecided), in one query."""
        if not doc_ids:
            return {}
        rows = self._conn().execute(
            "select id, language from documents where id in (select value from json_each(?))", (json.dumps(doc_ids),)
        )
        return {r[0]: r[1] for r in rows}

    def languages_of(self, doc_ids: list[str]) -> dict[str, str]:
        """Each known document's language code, in one query (a search merging translations asks for its ~10)."""
        if not doc_ids:
            return {}
        rows = self._conn().execute(
            "select id, lang from documents where id in (select value from json_each(?))", (json.dumps(doc_ids),)
        )
        return {r[0]: r[1] for r in rows}

    def language_counts(self) -> dict[str, int]:
        """Documents per language code. Recounted only after a commit, as `count` (vector searches ask each time)."""
        counts = self._until_commit(
            "languages",
            lambda conn: {r[0]: r[1] for r in conn.execute("select lang, count(*) from documents group by lang")},
        )
        return dict(counts)

    def language_tokens(self) -> dict[str, int]:
        """Estimated tokens of text per language code: how much a language weighs, not only how many files it has
        (index/model_choice.py: three one-line notes must not weigh like three pages)."""
        counts = self._until_commit(
            "language_tokens",
            lambda conn: {r[0]: r[1] for r in conn.execute("select lang, sum(tokens) from documents group by lang")},
        )
        return dict(counts)

    def documents_by_language(self, besides: str) -> dict[str, list[str]]:
        """The ids of the documents in each language other than `besides` (the collection's main language).
        Every hybrid search of a collection in several languages asks: read again only after a commit, as
        `language_counts` (the lists are shared: callers must not change them)."""

        def read(conn: sqlite3.Connection) -> dict[str, list[str]]:
            out: dict[str, list[str]] = {}
            for lang, doc_id in conn.execute("select lang, id from documents where lang != ? order by id", (besides,)):
                out.setdefault(lang, []).append(doc_id)
            return out

        return self._until_commit("by_language", read, besides)

    def problems(self) -> list[Problem]:
        return [Problem(*r) for r in self._conn().execute("select path, kind, detail from problems order by path")]

    def documents_with_warnings(self) -> list[tuple[str, list[str]]]:
        rows = self._conn().execute("select id, warnings from documents where warnings != '[]' order by id")
        return [(r[0], json.loads(r[1])) for r in rows]

    # -- links ---------------------------------------------------------------------
    def document_terms(self, keys: Iterable[int]) -> dict[int, DocumentTerms]:
        """The term sets of the documents with these full-text keys (those indexed before the table existed
        have none)."""
        signed = [_signed(k) for k in keys]
        if not signed:
            return {}
        # with each document's number of sections (document_signals.coverage_weight), by the sections' primary key
        rows = self._conn().execute(
            "select key, lang, terms, path, (select count(*) from sections s where s.doc_id = t.doc_id) "
            f"from doc_terms t where key in ({','.join('?' * len(signed))})",
            signed,
        )
        return {_unsigned(key): DocumentTerms(lang, terms, path, n) for key, lang, terms, path, n in rows}

    def names(self, keys: Iterable[str]) -> list[Name]:
        rows = self._conn().execute(
            "select key, doc_id, kind, alias from doc_names where key in (select value from json_each(?))",
            (json.dumps(sorted(set(keys))),),
        )
        return [Name(*r) for r in rows]

    def names_of(self, doc_id: str) -> list[Name]:
        rows = self._conn().execute("select key, doc_id, kind, alias from doc_names where doc_id = ?", (doc_id,))
        return [Name(*r) for r in rows]

    def all_names(self) -> list[Name]:
        return [Name(*r) for r in self._conn().execute("select key, doc_id, kind, alias from doc_names")]

    def links(self, keys: Iterable[str] | None = None, *, unresolved: bool = False) -> list[LinkRecord]:
        """The links whose target has one of `keys` (all links without), in document and line order;
        `unresolved`: only those stored as resolving to no note ('') or not resolved yet (null)."""
        columns = "select doc_id, line, kind, target, heading, key, count from links"
        if unresolved:  # the links_resolved index: two ranges of it, not every row
            rows = self._conn().execute(f"{columns} where resolved is null or resolved = '' order by doc_id, n")
        elif keys is None:
            rows = self._conn().execute(f"{columns} order by doc_id, n")
        else:
            rows = self._conn().execute(
                f"{columns} where key in (select value from json_each(?)) order by doc_id, n",
                (json.dumps(sorted(set(keys))),),
            )
        return [LinkRecord(*r) for r in rows]

    @staticmethod
    def pending_links(conn: sqlite3.Connection, limit: int) -> list[LinkRecord]:
        """Links whose resolution a write may have changed (inside the writing transaction)."""
        rows = conn.execute(
            "select doc_id, line, kind, target, heading, key, count, n from links where resolved is null limit ?",
            (limit,),
        )
        return [LinkRecord(*r) for r in rows]

    @staticmethod
    def set_resolved(conn: sqlite3.Connection, resolved: Iterable[tuple[LinkRecord, str | None]]) -> None:
        """Store what each link resolves to ('' for nothing: broken or ambiguous)."""
        conn.executemany(
            "update links set resolved = ? where doc_id = ? and n = ?",
            [(target or "", link.doc_id, link.n) for link, target in resolved],
        )

    def linking(self, doc_id: str, limit: int) -> tuple[list[str], int]:
        """The first `limit` documents (by id) that link to `doc_id`, and how many there are (the index)."""
        conn = self._conn()
        sql = "from links where resolved = ? and doc_id != ?"
        total = int(conn.execute(f"select count(distinct doc_id) {sql}", (doc_id, doc_id)).fetchone()[0])
        rows = conn.execute(f"select distinct doc_id {sql} order by doc_id limit ?", (doc_id, doc_id, limit))
        return [r[0] for r in rows], total

    def folders(self) -> list[str]:
        """Every folder that holds a document (the `documents_folder` index)."""
        return [r[0] for r in self._conn().execute("select distinct folder from documents order by folder")]

    def list_documents(
        self,
        folder: str,
        tag: str | None,
        limit: int,
        offset: int,
        ids: list[str] | None = None,
        linked_to: str | None = None,
    ) -> tuple[list[DocumentRecord], int]:
        if linked_to is not None and not folder and not tag and ids is None:
            return self._backlinks_page(linked_to, limit, offset)
        where, args = _folder_filter(folder)
        if tag:
            where.append("id in (select doc_id from doc_tags where tag = ?)")
            args.append(tag)
        _ids_filter(ids, where, args)
        _linked_filter(linked_to, where, args)
        clause = ("where " + " and ".join(where)) if where else ""
        conn = self._conn()
        total = int(conn.execute(f"select count(*) from documents {clause}", args).fetchone()[0])
        rows = conn.execute(f"select * from documents {clause} order by id limit ? offset ?", [*args, limit, offset])
        return [document_from_row(r) for r in rows], total

    def _backlinks_page(self, doc_id: str, limit: int, offset: int) -> tuple[list[DocumentRecord], int]:
        """A page of the documents that link to `doc_id`, walked along the `links_resolved` index in id order
        (the same order as `list_documents`): the page's rows only, not every linking document's."""
        total = self.linking(doc_id, 0)[1]
        rows = self._conn().execute(
            "select * from documents where id in (select distinct doc_id from links where resolved = ? and "
            "doc_id != ? order by doc_id limit ? offset ?) order by id",
            (doc_id, doc_id, limit, offset),
        )
        return [document_from_row(r) for r in rows], total

    def subfolders(
        self, folder: str, tag: str | None, ids: list[str] | None = None, linked_to: str | None = None
    ) -> list[tuple[str, int]]:
        """Immediate subfolders of `folder` with the number of documents anywhere below each."""
        where, args = _folder_filter(folder)
        where.append("folder != ?")
        args.append(folder)
        if tag:
            where.append("id in (select doc_id from doc_tags where tag = ?)")
            args.append(tag)
        _ids_filter(ids, where, args)
        _linked_filter(linked_to, where, args)
        prefix_len = len(folder) + 1 if folder else 0
        sql = (
            "select child, count(*) from (select case when instr(substr(folder, ?), '/') > 0 "
            "then substr(folder, 1, ? + instr(substr(folder, ?), '/') - 1) else folder end as child "
            f"from documents where {' and '.join(where)}) group by child order by child"
        )
        rows = self._conn().execute(sql, [prefix_len + 1, prefix_len, prefix_len + 1, *args])
        return [(r[0], int(r[1])) for r in rows]


def _drop_old_links_table(conn: sqlite3.Connection) -> None:
    """Schema 5 kept a row per link written, without a count, schema 6 without its resolved target: drop it so
    that the new table is created (the schema version differs too, so the library rebuilds the whole index, and
    every note's links come back)."""
    columns = {row[1] for row in conn.execute("pragma table_info(links)")}
    if columns and not {"count", "resolved"} <= columns:
        conn.execute("drop table links")


def _links_to_resolve(conn: sqlite3.Connection, keys: set[str]) -> None:
    """Mark the links to these name keys for resolving again (`Catalog.pending_links`): a document that
    takes or leaves a name changes what links of that name resolve to, and no other link's."""
    if keys:
        conn.execute(
            "update links set resolved = null where key in (select value from json_each(?)) and resolved is not null",
            (json.dumps(sorted(keys)),),
        )


def _naming(conn: sqlite3.Connection, doc_id: str) -> tuple[set[tuple[str, str, str]], str | None]:
    """What decides which links resolve to a document: its names and its named language (None: undecided)."""
    names = set(conn.execute("select key, kind, alias from doc_names where doc_id = ?", (doc_id,)))
    row = conn.execute("select language from documents where id = ?", (doc_id,)).fetchone()
    return names, row[0] if row else None


def _linked_filter(linked_to: str | None, where: list[str], args: list[Any]) -> None:
    """Only the documents with a link that resolves to `linked_to` (the `links_resolved` index)."""
    if linked_to is not None:
        where.append("id in (select doc_id from links where resolved = ?) and id != ?")
        args += [linked_to, linked_to]


def _signed(key: int) -> int:
    """A 64-bit unsigned key as SQLite's signed integer."""
    return key - (1 << 64) if key >= 1 << 63 else key


def _unsigned(key: int) -> int:
    return key + (1 << 64) if key < 0 else key


def _folder_filter(folder: str) -> tuple[list[str], list[Any]]:
    if not folder:
        return [], []
    return ["(folder = ? or substr(folder, 1, ?) = ?)"], [folder, len(folder) + 1, folder + "/"]


def _ids_filter(ids: list[str] | None, where: list[str], args: list[Any]) -> None:
    """Only these ids (one JSON parameter, so no limit on how many)."""
    if ids is not None:
        where.append("id in (select value from json_each(?))")
        args.append(json.dumps(ids))
