"""The PostgreSQL store: connections, the schema and its version, the one-writer lock, and every query.

Tables (prefixed `mcp_docs_`, so the index can share a database with other things): `documents` (the catalog
row plus the file's bytes, so readers on other hosts need no copy of the root), `sections` (one row per heading
section with its text and a stored `tsvector`, GIN-indexed, built with the section's language's text-search
configuration: `english`, `french`, … or `simple`), `chunks` (pgvector embeddings, HNSW-indexed once the writer
knows their dimension), `terms` (each section's term frequencies per lexeme, kept by a trigger: what keyword
search reads, `schema.TERMS_SCHEMA`), `doc_tags`, `links`, `doc_names`, `problems`, `meta`.

Faults: a database that cannot be reached, or drops mid-query, is `DatabaseUnavailable` with one sentence that
names the database without its password; the connection is opened again on the next call, so service resumes
by itself when the database is back.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

import psycopg

from ...errors import DatabaseIndexMismatch, DatabaseRefused, DatabaseUnavailable, IndexBusy
from ...settings import STEMMER_LANGUAGES
from .dsn import parses, redact, scrub
from .schema import DEFERRED_INDEXES as DEFERRED_INDEXES  # re-exported: tests name them here
from .schema import SCHEMA, TABLES
from .schema import TERMS_OF as TERMS_OF

log = logging.getLogger(__name__)

__all__ = ["Database", "redact", "text_config"]  # `redact` here too: older callers import it from this module

# Bump when the tables change: a writer rebuilds an older index (it is a cache of the root), readers refuse.
# 2: one links row per (document, target) with its count; 3: mcp_docs_documents.language (issue 29);
# 4: each links row's resolved target, indexed (backlinks); 5: Thai/Lao/Khmer/Myanmar letter pairs in the
# sections' tsvector (pg_letter_pairs.py); 6: one vector per document (mcp_docs_doc_chunks), chunks that failed
# to embed, the model recorded (vector_writes.py); 7: mcp_docs_terms, each section's term frequencies (kept by a
# trigger), so a keyword search reads BM25's inputs from one index instead of ranking every matching tsvector;
# 8: the tsvector of decomposed text composed, and Arabic/Hebrew vowel marks folded (letter_pairs.word_text);
# 9: Thai/Lao/Khmer/Myanmar runs only as their letter pairs in the tsvector, and each section's length for BM25
# without them (mcp_docs_sections.length, letter_pairs.bm25_length), as the embedded store's word fields;
# 10: the tsvector's words accent-folded as the embedded store's (letter_pairs.word_fold, ascii_fold.py)
PG_SCHEMA_VERSION = 10
# Older versions upgraded in place, their vectors kept (`_upgrade_in_place`: every document read again, which
# also writes its tsvector from the folded text); older still are rebuilt.
UPGRADED_IN_PLACE = (5, 6, 7, 8, 9)
# The first version with the term table: an older one gets it filled from the stored tsvectors at once.
TERMS_FROM_VERSION = 7
CONNECT_SECONDS = 5
STATEMENT_MS = 30_000  # a reader's query that takes longer is cancelled: one tool error, not a hung request
WRITER_LOCK_KEY = 0x6D63_7064_6F63  # pg_advisory_lock key of the one writer ('mcpdoc')
T = TypeVar("T")

# BM25 extensions a server may have (ParadeDB's pg_search, VectorChord-bm25): looked for when a library opens.
BM25_EXTENSIONS = ("pg_search", "vchord_bm25")
# Memory for building those indexes (a GIN index builds several times faster when its posting lists fit in it).
BUILD_MEMORY = "256MB"


class PrivilegeMissing(DatabaseUnavailable):
    """The role may not do what was asked (SQLSTATE 42501): a tool error while serving, a refusal at start."""


def text_config(lang: str | None) -> str:
    """The PostgreSQL text-search configuration of a language code: its Snowball stemmer, else `simple`."""
    return STEMMER_LANGUAGES.get(lang or "", "simple")


class Database:
    """One PostgreSQL database: a connection per thread (autocommit for reads), reopened after a failure."""

    def __init__(self, url: str, *, read_only: bool) -> None:
        self.url = url
        self.where = redact(url)
        self.read_only = read_only
        self._local = threading.local()
        self._all: list[psycopg.Connection[Any]] = []
        self._lock = threading.Lock()
        self._writer: psycopg.Connection[Any] | None = None
        self.dim: int | None = None

    # -- connections -----------------------------------------------------------------------
    def _connect(self) -> psycopg.Connection[Any]:
        options = f"-c statement_timeout={STATEMENT_MS}" if self.read_only else ""
        try:
            conn = psycopg.connect(
                self.url, autocommit=True, connect_timeout=CONNECT_SECONDS, options=options, application_name="mcp-docs"
            )
        except psycopg.Error as exc:
            raise self._unavailable(exc) from None
        with self._lock:
            self._all.append(conn)
        return conn

    def _unavailable(self, exc: BaseException) -> DatabaseUnavailable:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if not parses(self.url):  # libpq quotes the part it could not parse, which may be the password
            detail = "the connection string is malformed: see the libpq connection string forms"
        detail = scrub(detail, self.url).removeprefix("connection failed: ")
        return DatabaseUnavailable(
            f"the PostgreSQL database {self.where} cannot be reached ({detail[:200]}); check MCP_DOCS_DATABASE_URL "
            "and that the database server runs, then try again"
        )

    def conn(self) -> psycopg.Connection[Any]:
        conn: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            conn = self._connect()
            self._local.conn = conn
        return conn

    def drop_thread_connection(self) -> None:
        """Close this thread's connection (a thread that ends: the writer's committer)."""
        self._drop_thread_connection()

    def _drop_thread_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            with suppress(psycopg.Error):
                conn.close()

    def run(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """`work` on this thread's connection; a lost connection becomes DatabaseUnavailable (and is reopened
        on the next call, so service resumes when the database is back)."""
        conn = self.conn()
        try:
            return work(conn)
        except psycopg.errors.InsufficientPrivilege as exc:  # revoked while serving: a tool error, not a crash
            raise PrivilegeMissing(self._privilege(exc, conn, "read")) from None
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            self._drop_thread_connection()
            raise self._unavailable(exc) from None

    def _privilege(self, exc: psycopg.Error, conn: psycopg.Connection[Any] | None, doing: str) -> str:
        """One sentence: which privilege the role lacks in which database, and the statement that grants it."""
        role = conn.info.user if conn is not None and not conn.closed else "this role"
        dbname = conn.info.dbname if conn is not None and not conn.closed else "the database"
        detail = scrub(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__, self.url)
        where = f"the PostgreSQL role '{role}' may not"
        if "extension" in detail:
            return (
                f"{where} create the pgvector extension in database '{dbname}' ({detail}): have a superuser run "
                f"`CREATE EXTENSION vector;` in that database once, then run this again"
            )
        if doing == "write" and "schema" in detail:
            return (
                f"{where} create the index's tables in database '{dbname}' ({detail}): have the schema's owner run "
                f"`GRANT CREATE ON SCHEMA public TO {role};` (or give the role a database of its own), then run "
                "this again"
            )
        if doing == "write":
            return (
                f"{where} write the mcp-docs index in database '{dbname}' ({detail}): the writer needs to own the "
                f"mcp_docs_ tables (or be granted INSERT, UPDATE, DELETE on them); grant it, then run this again"
            )
        return (
            f"{where} read the mcp-docs index in database '{dbname}' ({detail}): have the index's owner run "
            f"`GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role};`, then start again"
        )

    def rows(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.run(lambda c: c.execute(sql, args).fetchall())

    def value(self, sql: str, args: Sequence[Any] = ()) -> Any:
        found = self.rows(sql, args)
        return found[0][0] if found else None

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection[Any]]:
        conn = self.conn()
        try:
            with conn.transaction():
                yield conn
        except psycopg.errors.InsufficientPrivilege as exc:
            raise PrivilegeMissing(self._privilege(exc, conn, "read" if self.read_only else "write")) from None
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            self._drop_thread_connection()
            raise self._unavailable(exc) from None

    def ping(self) -> str | None:
        """None when the database answers, else the sentence saying why not."""
        try:
            self.value("select 1")
        except DatabaseUnavailable as exc:
            return str(exc)
        return None

    def close(self) -> None:
        with self._lock:
            connections, self._all = self._all, []
        if self._writer is not None:
            connections.append(self._writer)
            self._writer = None
        for conn in connections:
            with suppress(psycopg.Error):
                conn.close()

    # -- schema --------------------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        value = self.value("select value from mcp_docs_meta where key = %s", (key,))
        return None if value is None else str(value)

    def set_meta(self, conn: psycopg.Connection[Any], key: str, value: str) -> None:
        conn.execute(
            "insert into mcp_docs_meta(key, value) values (%s, %s) on conflict (key) do update set value = excluded.value",
            (key, value),
        )

    def stored_version(self) -> int | None:
        """The schema version of the index in this database; None when it holds none yet."""
        if self.value("select to_regclass('mcp_docs_meta')") is None:
            return None
        raw = self.meta("schema_version")
        return int(raw) if raw and raw.isdigit() else None

    def check_readable(self) -> None:
        """A reader's check: an index of this version is there, or one sentence saying what to run."""
        try:
            self._check_readable()
        except PrivilegeMissing as exc:  # at start: a refusal (one sentence, exit 2), not an outage to wait out
            raise DatabaseRefused(str(exc)) from None

    def _check_readable(self) -> None:
        version = self.stored_version()
        if version is None:
            raise DatabaseIndexMismatch(
                f"the PostgreSQL database {self.where} holds no mcp-docs index yet: run "
                "`mcp-docs index --store postgres --root DIR` once to write it"
            )
        if version != PG_SCHEMA_VERSION:
            newer = version > PG_SCHEMA_VERSION
            raise DatabaseIndexMismatch(
                f"the PostgreSQL database {self.where} holds an mcp-docs index of schema version {version}, and this "
                f"mcp-docs reads version {PG_SCHEMA_VERSION}: "
                + (
                    "upgrade mcp-docs on this host"
                    if newer
                    else "run `mcp-docs index --store postgres` with this version to migrate it"
                )
            )
        dim = self.meta("dim")
        self.dim = int(dim) if dim else None

    def prepare_for_writing(self, root: str) -> None:
        """The writer's check: create the tables, rebuild an older version's, refuse a newer one or another root."""
        version = self.stored_version()
        if version is not None and version > PG_SCHEMA_VERSION:
            raise DatabaseIndexMismatch(
                f"the PostgreSQL database {self.where} holds an mcp-docs index of schema version {version}, newer "
                f"than this mcp-docs ({PG_SCHEMA_VERSION}): upgrade mcp-docs before writing to it"
            )
        try:
            self._create_schema(root, version)
        except psycopg.errors.InsufficientPrivilege as exc:
            raise DatabaseRefused(self._privilege(exc, self.conn(), "write")) from None
        except psycopg.errors.UndefinedFile as exc:  # an OperationalError, but the server is there
            raise DatabaseRefused(
                f"the PostgreSQL server of {self.where} has no pgvector extension ({scrub(str(exc).strip(), self.url)}"
                "): install pgvector on it (https://github.com/pgvector/pgvector), then run this again"
            ) from None
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            self._drop_thread_connection()
            raise self._unavailable(exc) from None
        self.fold_chunk_writes()
        dim = self.meta("dim")
        self.dim = int(dim) if dim else None

    def fold_chunk_writes(self) -> None:
        """The rows of `mcp_docs_chunk_writes` made one, of the same sum (what readers compare), so the table stays
        a few rows however many batches were written before (a reader reads its sum before each search). Rows
        another transaction inserts meanwhile are not in this one's snapshot: kept, and the sum with them."""
        self.run(
            lambda c: c.execute(
                "with gone as (delete from mcp_docs_chunk_writes returning n) "
                "insert into mcp_docs_chunk_writes select sum(n) from gone having count(*) > 0"
            )
        )

    def _create_schema(self, root: str, version: int | None) -> None:
        conn = self.conn()
        with conn.transaction():
            upgrade = version in UPGRADED_IN_PLACE
            if version is not None and version < PG_SCHEMA_VERSION and not upgrade:
                log.warning(
                    "the index in %s has schema version %d: rebuilding it as %d", self.where, version, PG_SCHEMA_VERSION
                )
                for table in TABLES:
                    conn.execute(f"drop table if exists mcp_docs_{table} cascade")
            conn.execute(SCHEMA)
            if upgrade:
                _upgrade_in_place(conn, version, self.where)  # every document read again by the next sync
                if version is not None and version < TERMS_FROM_VERSION:
                    # the same rows the trigger writes, from the sections already stored (a document the next
                    # sync rewrites loses them by the cascade and gets them again from the trigger)
                    conn.execute(f"insert into mcp_docs_terms {TERMS_OF.format(sections='mcp_docs_sections')}")
            stored_root = conn.execute("select value from mcp_docs_meta where key = 'root'").fetchone()
            documents = conn.execute("select count(*) from mcp_docs_documents").fetchone()
            if stored_root and stored_root[0] != root and documents and documents[0]:
                raise DatabaseIndexMismatch(
                    f"the PostgreSQL database {self.where} indexes the root {stored_root[0]}, not {root}: one database "
                    "holds one root's index; use another database (or point --root at the same folder)"
                )
            self.set_meta(conn, "schema_version", str(PG_SCHEMA_VERSION))
            self.set_meta(conn, "root", root)
            self.set_meta(conn, "writer", f"{socket.gethostname()} pid {os.getpid()}")
        if upgrade:  # the visibility map and statistics the term index's index-only scans need (autocommit)
            conn.execute("vacuum (analyze) mcp_docs_terms")

    def lock_writer(self) -> None:
        """Take the one writer's lock (a session advisory lock, released when this process ends or closes it);
        another writer is refused with a sentence that says who holds it."""
        try:
            conn = psycopg.connect(
                self.url, autocommit=True, connect_timeout=CONNECT_SECONDS, application_name="mcp-docs writer"
            )
        except psycopg.Error as exc:
            raise self._unavailable(exc) from None
        got = conn.execute("select pg_try_advisory_lock(%s)", (WRITER_LOCK_KEY,)).fetchone()
        if not (got and got[0]):
            holder = conn.execute(
                "select coalesce(a.client_addr::text, 'local'), a.pid from pg_locks l join pg_stat_activity a "
                "on a.pid = l.pid where l.locktype = 'advisory' and l.objid = %s and l.granted",
                ((WRITER_LOCK_KEY & 0xFFFFFFFF),),
            ).fetchone()
            conn.close()
            who = f" (server process {holder[1]}, client {holder[0]})" if holder else ""
            raise IndexBusy(
                f"another mcp-docs writer is indexing into {self.where}{who}: one writer at a time; "
                "wait for it to finish or stop it (a `serve --store postgres` without --root only reads "
                "and needs no lock)"
            )
        self._writer = conn

    def ensure_writer(self) -> None:
        """Before a write: the lock's session is still open. A database restart (or a dropped connection) ends it
        and releases the lock, so take it again, or refuse (IndexBusy) when another writer got it meanwhile."""
        conn = self._writer
        if conn is not None and not conn.closed:
            try:
                conn.execute("select 1")
                return
            except psycopg.Error:
                with suppress(psycopg.Error):
                    conn.close()
        self._writer = None
        self.lock_writer()
        log.warning("the writer's session with %s was lost: the writer lock is held again", self.where)

    def release_writer(self) -> None:
        if self._writer is not None:
            try:
                self._writer.execute("select pg_advisory_unlock(%s)", (WRITER_LOCK_KEY,))
                self._writer.close()
            except psycopg.Error:
                pass  # a closed session has released its locks anyway
            self._writer = None

    def set_dim(self, dim: int) -> None:
        """Record the embedding dimension and build the HNSW index over it (once)."""
        if self.dim == dim:
            return
        with self.transaction() as conn:
            conn.execute("drop index if exists mcp_docs_chunks_hnsw")
            conn.execute(
                f"create index mcp_docs_chunks_hnsw on mcp_docs_chunks "
                f"using hnsw ((embedding::vector({int(dim)})) vector_cosine_ops)"
            )
            self.set_meta(conn, "dim", str(int(dim)))
        self.dim = dim

    def installed_extensions(self, names: Sequence[str]) -> list[str]:
        """Which of these extensions are installed in this database (`pg_extension`), in the order asked."""
        found = {
            str(r[0]) for r in self.rows("select extname from pg_extension where extname = any(%s)", (list(names),))
        }
        return [n for n in names if n in found]

    def available_extensions(self, names: Sequence[str]) -> list[str]:
        """Which of these extensions the server could install (`pg_available_extensions`), installed or not."""
        found = {
            str(r[0])
            for r in self.rows("select name from pg_available_extensions where name = any(%s)", (list(names),))
        }
        return [n for n in names if n in found]

    def drop_deferred_indexes(self) -> None:
        """Before a cold load: drop the indexes it would otherwise maintain row by row (the writer owns them:
        `prepare_for_writing` already needs that)."""
        with self.transaction() as conn:
            for name in DEFERRED_INDEXES:
                conn.execute(f"drop index if exists {name}")

    def build_deferred_indexes(self) -> None:
        """After a cold load: build the dropped indexes in one pass each, then refresh the planner's statistics and
        the visibility map (`vacuum analyze`), which the first searches would otherwise do without."""
        with self.transaction() as conn:
            conn.execute(f"set local maintenance_work_mem = '{BUILD_MEMORY}'")
            for statement in DEFERRED_INDEXES.values():
                conn.execute(statement)
        self.run(
            lambda c: c.execute("vacuum (analyze) mcp_docs_documents, mcp_docs_sections, mcp_docs_terms")
        )  # autocommit

    def text_configs(self) -> set[str]:
        return {str(r[0]) for r in self.rows("select cfgname from pg_ts_config")}


def _upgrade_in_place(conn: psycopg.Connection[Any], version: int | None, where: str) -> None:
    """Schema 5 to 9 → 10 (new tables and columns came with `schema.SCHEMA`): every document is read again by the next
    sync, which writes its document-level unit (from 5), its sections' tsvectors from the folded text (from 5, 6
    and 7) and without the Thai/Khmer runs' fragments, their BM25 lengths (from 5 to 8), and their words
    accent-folded (from every one); the section chunks' vectors are kept (the writer keeps a vector whose text did
    not change), so only the documents' own vectors are embedded, and only from 5."""
    log.warning(
        "the index in %s has schema version %s: upgrading it to %d in place (every document is read again, its "
        "vectors kept)",
        where,
        version,
        PG_SCHEMA_VERSION,
    )
    conn.execute("update mcp_docs_documents set hash = '', mtime_ns = -1")
