"""The PostgreSQL store: the same tools, search, fusion and grouping as the embedded store (`library.Library`
composed from `PostgresStore`), with the catalog, keyword search, vector search and document text answered by
the database.

A reader (`serve --store postgres` without a root) never writes and needs no copy of the root: it reads the
documents' text from the database. The writer (`index --store postgres`, or `serve --store postgres --root DIR`)
holds the database's writer lock while it runs; as a server it also keeps the index fresh (the watcher calls
`sync(paths)`) and embeds in a background thread, as the embedded store's server does.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...embedders import Embedder, EmbedderError, make_embedder
from ...errors import DatabaseUnavailable, IndexBusy
from ...index.hits import RankedSection, VectorHit
from ...index.language_mix import LanguageView
from ...paths import Jail
from ...query_text import MAX_QUERY_TERMS, QUERY_STOPWORDS, fold_marks, spaced_words
from ...search.ranking import Bonus
from ...settings import Settings
from ..api import CommitListener, Progress, SectionHit, SyncReport, coverage, coverage_note, unavailable_reason
from ..embedded.vector_store import QUERY_CACHE_SIZE
from .catalog import PgCatalog, _under
from .database import BM25_EXTENSIONS, Database, text_config
from .letter_pairs import pair_words
from .sync import PgWriter, vector_text

log = logging.getLogger(__name__)

MAX_K = 1000  # pgvector's largest hnsw.ef_search
# How sections are ranked without a BM25 extension: BM25 computed in SQL. ts_rank counts how often the query's words
# occur, ts_rank_cd how close together they are; neither has an IDF nor BM25's length normalisation, so each word of
# the query is ranked on its own, its term frequency read back from ts_rank (`_frequency`), saturated (k1) and
# normalised by the section's length against the average (b), weighted by its IDF over the sections, then summed.
# SciFact nDCG@10, keyword side alone (benchmarks/REPORT.md, "PostgreSQL store" and "BM25 in SQL"): ts_rank_cd of
# the OR-ed query 0.400, ts_rank 0.571; per word with IDF: ts_rank_cd 0.537, ts_rank 0.658; BM25 in SQL 0.696
# (Tantivy's BM25: 0.69). AND (plainto_tsquery) leaves 275 of 300 questions without a match.
RANK_FUNCTION = "bm25"  # or "ts_rank" / "ts_rank_cd" with RANK_NORMALIZATION (the earlier rankings, for comparison)
IDF_WEIGHTING = True
QUERY_OPERATOR = " or "  # without IDF weighting: the words OR-ed in one websearch_to_tsquery
# ts_rank's normalisation: 1 divides by 1 + log(length), a mild length normalisation (0, none: 0.644).
RANK_NORMALIZATION = 1
# BM25's k1 and b (Tantivy's and Lucene's defaults). With ts_rank, LENGTH_K None leaves the rank as it is, else
# each word's rank r becomes r·(k+1) / (r + k·(1 − b + b·tokens/average tokens)) (SciFact 0.658, no gain).
LENGTH_K: float | None = 1.2
LENGTH_B = 0.75
# With BM25: what an occurrence in the title or heading path counts, one in the body counting 1 (SciFact: 1, 0.687;
# 2, 0.696; 3, 0.699: 2 kept, the middle, rather than the best on the test questions).
HEAD_TF = 2.0
# Weights of the D, C, B, A labels (ts_rank): the title and heading path (A) count more than the body (B).
RANK_WEIGHTS = "{0.1, 0.2, 0.4, 1.0}"
# A server that writes embeds in the background: woken by each sync that changed something, else it looks again
# after EMBED_IDLE_SECONDS (chunks another crashed run left), after EMBED_RETRY_SECONDS when the embedder failed.
EMBED_IDLE_SECONDS = 30.0
EMBED_RETRY_SECONDS = 60.0
EMBED_STOP_SECONDS = 10.0


class DatabaseFiles:
    """Documents read from the database: a reader has no copy of the root. The same refusals as on disk."""

    def __init__(self, jail: Jail, catalog: PgCatalog) -> None:
        self.jail = jail
        self.catalog = catalog

    def resolve_id(self, doc_id: str) -> Path:
        rel = self.jail.relative_folder(doc_id)  # the same refusals as on disk: '..', absolute paths, NUL
        if rel and (self.catalog.document(rel) is not None or self.catalog.is_folder(rel)):
            return self.jail.root / rel
        raise FileNotFoundError(doc_id)

    def is_folder(self, path: Path) -> bool:
        rel = path.relative_to(self.jail.root).as_posix()
        return rel == "." or self.catalog.is_folder(rel)

    def folder_exists(self, folder: str) -> bool:
        return self.catalog.is_folder(folder)

    def has_document(self, doc_id: str) -> bool:
        return True  # search results come from the same database as the documents

    def read_bytes(self, doc_id: str, path: Path) -> bytes:
        data = self.catalog.content(doc_id)
        if data is None:
            raise FileNotFoundError(doc_id)
        return data


class PostgresStore:
    """The PostgreSQL index as a `store.api.Store`: catalog, keyword search, vector search and document text
    answered by the database; `read_only` (a server without a root) never writes."""

    embedding = None  # the embedded store's worker; here `_embed_loop` (a server that writes)
    written_elsewhere = True  # the writer may be another process: the library re-reads the languages

    def __init__(self, settings: Settings, jail: Jail, read_only: bool = False) -> None:
        assert settings.database_url is not None  # Settings.load refuses --store postgres without one
        self.settings = settings
        self.read_only = read_only
        self.db = Database(settings.database_url, read_only=read_only)
        self.writer: PgWriter | None = None
        self.embedder_error: str | None = None
        try:
            if read_only:
                self.db.check_readable()
            else:
                self.db.lock_writer()
                self.db.prepare_for_writing(str(settings.root))
                self.writer, self.embedder_error = PgWriter.open(settings, self.db, jail)
        except BaseException:
            self.db.close()
            raise
        self.catalog = PgCatalog(self.db)
        self.files = DatabaseFiles(jail, self.catalog)
        self._listeners: list[CommitListener] = []
        self.bm25_extension, self.keyword_ranking = self._keyword_ranking()
        self._embedder_thread: threading.Thread | None = None
        self._embed_wake = threading.Event()
        self._embed_stop = threading.Event()
        self.vectors: PgVectors | None = None
        if settings.embeddings != "none":
            embedder = self.writer.embedder if self.writer is not None else None
            error = self.embedder_error
            if self.writer is None:
                try:
                    embedder = make_embedder(settings)
                except EmbedderError as exc:
                    embedder, error = None, str(exc)
            self.vectors = PgVectors(self.db, embedder, error)

    def add_commit_listener(self, listener: CommitListener) -> None:
        self._listeners.append(listener)

    def published_sync_error(self, own: str | None) -> str | None:
        return own  # each server syncs (or only reads) for itself: its /health reports its own

    def publish_sync_error(self, error: str | None) -> None:
        pass

    def _keyword_ranking(self) -> tuple[str | None, str]:
        """The BM25 extension installed in the database, if any, and how keyword search ranks here (said once in
        the log). Without an extension: BM25 computed in SQL over the tsvectors (`_idf_ranked_sections`)."""
        try:
            installed = self.db.installed_extensions(BM25_EXTENSIONS)
            available = installed or self.db.available_extensions(BM25_EXTENSIONS)
        except DatabaseUnavailable:
            installed, available = [], []  # said by /health; the ranking is the fallback until it is back
        ranking = f"BM25 in SQL (k1 {LENGTH_K}, b {LENGTH_B})" if RANK_FUNCTION == "bm25" else RANK_FUNCTION
        if installed:
            # Not used yet: its index needs a unique key column the sections table does not have (issue 31).
            log.info(
                "%s is installed in %s but not used yet: keyword search ranks with %s",
                installed[0],
                self.db.where,
                ranking,
            )
        elif available:
            log.info(
                "%s could be installed in %s (CREATE EXTENSION); keyword search ranks with %s",
                available[0],
                self.db.where,
                ranking,
            )
        return (installed[0] if installed else None), ranking

    def close(self) -> None:
        self._embed_stop.set()
        self._embed_wake.set()
        if self._embedder_thread is not None:
            self._embedder_thread.join(EMBED_STOP_SECONDS)  # it stops between two batches
        self.db.release_writer()
        self.db.close()

    def location(self) -> str:
        return f"PostgreSQL {self.db.where}"  # the URL without its password

    def storage_lost(self) -> bool:
        return False  # no index folder; an unreachable database is `health_problem`

    def health_problem(self) -> str | None:
        return self.db.ping()

    def sync(self, paths: Iterable[str] | None = None, progress: Progress | None = None) -> SyncReport:
        if self.writer is None:
            raise IndexBusy(
                "this server only reads the PostgreSQL index; `mcp-docs index --store postgres` (or a "
                "`serve --store postgres --root DIR`) keeps it up to date"
            )
        self.db.ensure_writer()  # a database restart ends the lock's session: take the lock again first
        report = self.writer.sync(paths, progress)
        for listener in self._listeners:
            listener([], [])
        if report.changed_ids:
            self._embed_wake.set()
        return report

    def start_embedding(self) -> None:
        """A server that writes: embed what is pending in a background thread, then what each sync adds (keyword
        search answers meanwhile). `mcp-docs index` embeds in the foreground instead (`embed`)."""
        if self.writer is None or self.writer.embedder is None or self._embedder_thread is not None:
            return
        self._embedder_thread = threading.Thread(target=self._embed_loop, name="mcp-docs-pg-embedding", daemon=True)
        self._embedder_thread.start()

    def _embed_loop(self) -> None:
        vectors = self.vectors
        assert self.writer is not None and vectors is not None
        while not self._embed_stop.is_set():
            self._embed_wake.clear()
            wait = EMBED_IDLE_SECONDS
            vectors.running = True
            try:
                done = self.writer.embed(stop=self._embed_stop)
                if done:
                    log.info("embedded %d chunk(s)", done)
                vectors.error = None
            except EmbedderError as exc:  # the model or endpoint failed: keyword search goes on, retry later
                vectors.error = str(exc)
                log.warning("embedding failed (%s); retrying in %.0f s", exc, EMBED_RETRY_SECONDS)
                wait = EMBED_RETRY_SECONDS
            except DatabaseUnavailable as exc:
                log.warning("%s", exc)
                wait = EMBED_RETRY_SECONDS
            except Exception:
                log.exception("embedding failed; retrying in %.0f s", EMBED_RETRY_SECONDS)
                wait = EMBED_RETRY_SECONDS
            finally:
                vectors.running = False
            self._embed_wake.wait(wait)

    def embed(self, progress: Progress | None = None) -> int:
        """Embed what the last sync left pending (the writer only)."""
        return self.writer.embed(progress) if self.writer is not None else 0

    def document_bonus(
        self, query: str, languages: frozenset[str], by_key: bool = False, fused: bool = False
    ) -> Bonus | None:
        """None: this store keeps no document term sets (search/document_signals.py), so sections alone rank
        documents here."""
        return None

    def keyword_hits(
        self, query: str, limit: int, folder: str | None, tags: Sequence[str], languages: frozenset[str]
    ) -> list[SectionHit]:
        # Thai, Lao, Khmer and Myanmar runs by their letter pairs, not by the fragments the parser cuts them into
        words = [fold_marks(w) for w in spaced_words(query)] + pair_words(query)
        terms = [w for w in words if w not in QUERY_STOPWORDS] or words
        if not terms:
            return []
        configs = sorted({text_config(lang) for lang in languages})
        where, args = _filters("d", folder, tags)
        terms = terms[:MAX_QUERY_TERMS]
        rank = f"{RANK_FUNCTION}('{RANK_WEIGHTS}', s.tsv, q.query, {int(RANK_NORMALIZATION)})"
        if IDF_WEIGHTING:
            queries = _idf_ranked_sections(rank)
            params: list[Any] = [configs, terms]
        else:
            queries = (
                "with q as materialized (select c::regconfig as cfg, websearch_to_tsquery(c::regconfig, %s) as query "
                "from unnest(%s::text[]) c), "
                f"r as (select s.doc_id, s.idx, {rank} as score "
                "from q join mcp_docs_sections s on s.config = q.cfg and s.tsv @@ q.query) "
            )
            params = [QUERY_OPERATOR.join(terms), configs]
        # `materialized`: the query is parsed and stemmed once, not again for every section it is matched against
        # Without a filter, the best `limit` sections are cut before their text and document are joined (every
        # matching section was joined, then most dropped); a filter needs the documents' folder and tags first.
        ranked = "r" if where else "(select * from r order by r.score desc, r.doc_id, r.idx limit %s) r"
        rows = self.db.rows(
            queries + "select s.doc_id, s.idx, d.title, s.heading, s.heading_path, s.line_start, s.line_end, s.body, "
            f"d.tags, r.score from {ranked} join mcp_docs_sections s on s.doc_id = r.doc_id and s.idx = r.idx "
            f"join mcp_docs_documents d on d.id = s.doc_id {where} "
            "order by r.score desc, s.doc_id, s.idx limit %s",
            [*params, *([] if where else [max(1, limit)]), *args, max(1, limit)],
        )
        return [SectionHit(r[0], float(r[9]), _section(r)) for r in rows]


def _frequency(rank: str) -> str:
    """The number of occurrences behind ts_rank's rank of one word without normalisation (see
    `_idf_ranked_sections`)."""
    return f"(case when {rank} > 0 then round(1 / greatest(1.64493406685 * (1 - {rank}), 1e-9) - 0.5) else 0 end)"


def _idf_ranked_sections(rank: str) -> str:
    """The `r` CTE (doc_id, idx, score) of the per-word ranking: one tsquery per word and language, each weighted
    by its IDF over the sections (BM25's idea, which ts_rank lacks), so a rare word found counts for more than a
    common one; with LENGTH_K, each word's rank is also normalised by the section's length against the average,
    as BM25's k1 and b do (`rank` then is the unnormalised, saturating term frequency)."""
    idf = "ln(1 + (n.total - m.df + 0.5) / (m.df + 0.5))"
    score = f"{idf} * m.r"
    if RANK_FUNCTION == "bm25":
        # BM25 itself: the word's term frequency, saturated by k1 and normalised by the section's length against
        # the average (b). The frequency is read back from ts_rank, which PostgreSQL computes from the word's
        # positions alone (a binary search in the tsvector): with every weight 1, ts_rank of one word occurring n
        # times is (1 + 1/4 + … + 1/n²) / (π²/6), so n = 1 / (π²/6 − π²/6·rank) − ½ (within ±0.06 of n for every
        # n, so rounded, exact). With only the A weight, the same counts the head's occurrences (the head's
        # positions come first); an occurrence in the title or heading path counts HEAD_TF times.
        rank = f"{_frequency('x.every')} + {float(HEAD_TF) - 1} * {_frequency('x.head')}"
        ranks = "ts_rank('{1,1,1,1}', s.tsv, q.query, 0) as every, ts_rank('{0,0,0,1}', s.tsv, q.query, 0) as head"
    else:
        ranks = f"{rank} as every"
        rank = "x.every"
    if RANK_FUNCTION == "bm25" or LENGTH_K is not None:
        k, b = float(LENGTH_K or 1.2), float(LENGTH_B)
        score = f"{idf} * m.r * {k + 1} / (m.r + {k} * (1 - {b} + {b} * m.tokens / greatest(n.avg_tokens, 1)))"
    return (
        "with q as materialized (select row_number() over () as word, c::regconfig as cfg, "
        "plainto_tsquery(c::regconfig, w) as query from unnest(%s::text[]) c cross join unnest(%s::text[]) w), "
        # the writer records both after each sync (`PgWriter.save_statistics`); counted here when it has not yet
        "n as materialized (select coalesce((select value::float8 from mcp_docs_meta where key = 'sections'), "
        "(select count(*)::float8 from mcp_docs_sections)) as total, "
        "coalesce((select value::float8 from mcp_docs_meta where key = 'average_tokens'), "
        "(select avg(tokens)::float8 from mcp_docs_sections), 1) as avg_tokens), "
        # each word's matching sections, ranked, and how many there are (its document frequency): one index scan
        # per word gives both (counting them first, then ranking them, read every match twice)
        # (`materialized` and `offset 0`: each ts_rank is computed once per section, not again wherever it is used)
        f"m as materialized (select s.doc_id, s.idx, s.tokens, {rank} as r, "
        "count(*) over (partition by q.word)::float8 as df from q join mcp_docs_sections s on s.config = q.cfg "
        f"and s.tsv @@ q.query cross join lateral (select {ranks} offset 0) x where numnode(q.query) > 0), "
        f"r as (select m.doc_id, m.idx, sum({score}) as score from m cross join n group by m.doc_id, m.idx) "
    )


class PgVectors:
    """Vector search over the `mcp_docs_chunks` table (pgvector, cosine); the writer fills it. It implements
    `index.store_api.VectorSearch`, as the embedded VectorStore does."""

    def __init__(self, db: Database, embedder: Embedder | None, error: str | None) -> None:  # no SQLite file
        self.db = db
        self.embedder = embedder
        self.error = error
        self.busy = False
        self.running = False  # a server that writes is embedding right now
        self._query_cache: dict[str, np.ndarray] = {}
        self._state_lock = threading.Lock()
        if embedder is not None and embedder.dim is None and db.dim:
            embedder.dim = db.dim

    def close(self) -> None:
        pass  # the library closes the database

    def pending(self) -> int:
        if self.embedder is None:
            return 0
        return int(self.db.value("select count(*) from mcp_docs_chunks where embedding is null"))

    def embedded_chunks(self) -> int:
        return int(self.db.value("select count(*) from mcp_docs_chunks where embedding is not null"))

    def ready(self) -> bool:
        return self.embedder is not None and bool(
            self.db.value("select exists(select 1 from mcp_docs_chunks where embedding is not null)")
        )

    def waiting_sections(self, keys: Iterable[tuple[str, int]]) -> set[tuple[str, int]]:
        keys = set(keys)
        if not keys:
            return set()
        rows = self.db.rows(
            "select distinct doc_id, section_idx from mcp_docs_chunks where embedding is null and doc_id = any(%s)",
            (sorted({doc_id for doc_id, _ in keys}),),
        )
        return {(r[0], int(r[1])) for r in rows} & keys

    def coverage(self) -> float:
        return coverage(self)

    def coverage_note(self, mode: str, covered: float | None = None) -> str | None:
        return coverage_note(self, mode, covered)

    def unavailable_reason(self) -> str | None:
        return unavailable_reason(self)

    def status(self) -> dict[str, Any]:
        embedded, pending = self.embedded_chunks(), self.pending()
        return {
            "model": self.embedder.model_id if self.embedder else None,
            "dimension": self.db.dim,
            "documents": int(self.db.value("select count(distinct doc_id) from mcp_docs_chunks")),
            "chunks": embedded + pending,
            "embedded": embedded,
            "pending": pending,
            "failed": 0,
            "coverage_percent": round(100.0 * embedded / (embedded + pending), 1) if embedded + pending else 100.0,
            "eta_seconds": None,
            "ready": self.ready(),
            "running": self.running,
            "rate_chunks_per_s": None,
            "error": self.error,
            "path": self.db.where,
        }

    def embed_query(self, text: str) -> np.ndarray:
        if self.embedder is None:
            raise EmbedderError(self.error or "embeddings are off")
        cached = self._query_cache.get(text)
        if cached is None:
            cached = self.embedder.embed_query(text)
            with self._state_lock:
                if len(self._query_cache) >= QUERY_CACHE_SIZE:
                    self._query_cache.pop(next(iter(self._query_cache)))
                self._query_cache[text] = cached
        return cached

    def language_view(self, query: np.ndarray) -> LanguageView | None:
        return None  # not on PostgreSQL yet: raw cosines (benchmarks/REPORT.md, issue 14)

    def section_hits(
        self,
        query: np.ndarray,
        limit: int,
        folder: str | None = None,
        tags: Sequence[str] = (),
        view: LanguageView | None = None,
    ) -> list[VectorHit]:
        """The nearest chunks, grouped to sections (a section scores with its best chunk), best first."""
        dim = self.db.dim
        if dim is None:
            return []
        k = max(1, min(limit * 3, MAX_K))
        where, args = _filters("d", folder, tags)
        cast = f"vector({int(dim)})"
        vector = vector_text(query)
        with self.db.transaction() as conn:
            conn.execute("select set_config('hnsw.ef_search', %s, true)", (str(max(40, k)),))
            if where:  # the HNSW scan filters after its cut: with a filter, an exact scan finds all k
                conn.execute("select set_config('enable_indexscan', 'off', true)")
            rows = conn.execute(
                f"select c.doc_id, c.section_idx, 1 - (c.embedding::{cast} <=> %s::{cast}), c.text, c.prefix_len, "
                "d.title, d.tags, s.heading, s.heading_path, s.line_start, s.line_end "
                "from mcp_docs_chunks c join mcp_docs_documents d on d.id = c.doc_id "
                "join mcp_docs_sections s on s.doc_id = c.doc_id and s.idx = c.section_idx "
                f"{where + ' and' if where else 'where'} c.embedding is not null "
                f"order by c.embedding::{cast} <=> %s::{cast} limit %s",
                [vector, *args, vector, k],
            ).fetchall()
        hits: dict[tuple[str, int], VectorHit] = {}
        for r in rows:
            key = (r[0], int(r[1]))
            if key in hits:
                continue
            hits[key] = VectorHit(
                doc_id=r[0],
                section_idx=int(r[1]),
                similarity=float(r[2]),
                title=r[5],
                heading=r[7],
                heading_path=r[8],
                line_start=r[9],
                line_end=r[10],
                piece=r[3][r[4] :],
                tags=_tags(r[6]),
            )
            if len(hits) >= limit:
                break
        return list(hits.values())


def _filters(alias: str, folder: str | None, tags: Iterable[str]) -> tuple[str, list[Any]]:
    where: list[str] = []
    args: list[Any] = []
    if folder:
        where.append(f"({alias}.folder = %s or {alias}.folder like %s)")
        args += [folder, _under(folder)]
    for tag in tags:
        where.append(f"{alias}.id in (select doc_id from mcp_docs_doc_tags where tag = %s)")
        args.append(tag)
    return ("where " + " and ".join(where)) if where else "", args


def _tags(raw: str) -> tuple[str, ...]:
    return tuple(json.loads(raw))


def _section(r: tuple[Any, ...]) -> RankedSection:
    return RankedSection(r[0], int(r[1]), r[2], r[3], r[4], r[5], r[6], r[7], _tags(r[8]))
