"""The PostgreSQL store: the same tools, search, fusion and grouping as the embedded store (`library.Library`
composed from `PostgresStore`), with the catalog, keyword search, vector search and document text answered by
the database.

A reader (`serve --store postgres` without a root) never writes and needs no copy of the root: it reads the
documents' text from the database. The writer (`index --store postgres`, or `serve --store postgres --root DIR`)
holds the database's writer lock while it runs; as a server it also keeps the index fresh (the watcher calls
`sync(paths)`) and embeds in a background thread. Embedding is the one worker both stores share
(index/embedding_worker.py) over `PgVectors`' writing half (vector_writes.py): every document's own vector first.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...embedders import Embedder, EmbedderError
from ...errors import DatabaseUnavailable, IndexBusy
from ...index.embedding_worker import EmbeddingWorker
from ...index.hits import RankedSection, VectorHit, best_per_section, vector_hit, with_document_hits
from ...index.language_mix import LanguageView
from ...language import SOUTHEAST_ASIAN_RUN
from ...paths import Jail
from ...query_language import OTHER_SCRIPT_SHARE, languages_outside_query_script
from ...query_text import MAX_QUERY_TERMS, QUERY_STOPWORDS, fold_marks, spaced_words
from ...search.ranking import Bonus
from ...settings import Settings
from ..api import CommitListener, Progress, SectionHit, SyncReport, coverage_note, unavailable_reason
from ..embedded.records import document_from_row
from ..embedded.vector_store import QUERY_CACHE_SIZE
from . import fused_signals, signal_columns
from .catalog import DOC_COLUMNS, PgCatalog, _under
from .database import BM25_EXTENSIONS, Database, text_config
from .letter_pairs import pair_words, word_fold
from .signal_columns import QueryEvidence, evidence
from .sync import PgWriter, vector_text
from .vector_languages import PgLanguageView
from .vector_memory import PgChunkMemory
from .vector_writes import PgVectorWrites, follow_languages, open_embedder

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
# With BM25: what an occurrence in the title or heading path counts in the section's term frequency, one in the
# body counting 1 (SciFact, without HEAD_FIELD: 1, 0.687; 2, 0.696; 3, 0.699: 2 was kept).
HEAD_TF = 1.0
# ... and the title and heading path as a field of their own, as the embedded store's `head_stem`: each word found
# there adds HEAD_FIELD x its IDF x its head frequency, saturated by k1 (no length normalisation: the head's length
# is not stored). A page titled with the question's word is the answer more often than a long page that repeats
# it: "шаблоны для заметок" found the note composer first, the Templates page third. Obsidian help multilingual
# keyword questions (benchmarks/REPORT.md, "Document signals on PostgreSQL"), lang@1 / lang@5 with the document
# signals: HEAD_TF 2 alone 0.377 / 0.770; HEAD_TF 1 with HEAD_FIELD 1, 0.459 / 0.787, and 0.5, 0.443 / 0.770.
# SciFact nDCG@10 (titles of 10-20 words, where length normalisation matters): 0.696 alone, 0.670 at 1, 0.690 at
# 0.5 (the IDF of the head's own document frequency instead: 0.648 at 1, 0.677 at 0.5). 0.5 kept.
HEAD_FIELD = 0.5
# What a letter pair of a Thai, Lao, Khmer or Myanmar run weighs against a word. The embedded store normalises the
# pairs by their own field's length (its `cjk` field, letters and pairs: a Thai section's hundreds, against an
# average over every section of a few), so a page's pairs weigh little beside a Latin word of the question; here
# they share the section's word length (`bm25_length`), and "Canvas คืออะไร" ("what is Canvas") found 'About
# Obsidian', whose heading says "what is", before any Canvas page. Obsidian questions, with HEAD_FIELD 0.5: lang@1
# 0.443 at 1, 0.459 at 0.5 and 0.25 (Thai and Khmer "what is Canvas" found). Chinese, Japanese and Korean pairs
# keep their weight: their runs are in the section's length.
PAIR_SHARE = 0.5
# The document signals (signal_columns.py), read with the sections (False: sections alone rank documents, as before)
DOCUMENT_SIGNALS = True
# Weights of the D, C, B, A labels (ts_rank): the title and heading path (A) count more than the body (B).
RANK_WEIGHTS = "{0.1, 0.2, 0.4, 1.0}"
# BM25's inputs of a one-lexeme word from the writer's term table (False: from ts_rank over every matching tsvector,
# the same figures at ~4x the database time; kept to compare)
TERM_TABLE = True
EMBED_STOP_SECONDS = 10.0  # a closing store waits this long for the embedding thread (it stops between batches)


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

    embedding: EmbeddingWorker | None = None  # the writer's (index/embedding_worker.py); a reader embeds nothing
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
        self._embedding_started = False
        self._last_choice = ""  # the last sentence logged about the model (vector_writes.follow_languages)
        self._evidence = threading.local()  # each thread's last keyword search's document signals (document_bonus)
        self.vectors: PgVectors | None = None
        if settings.embeddings != "none":
            self._open_vectors(jail)

    def _open_vectors(self, jail: Jail) -> None:
        """The vectors, and for the writer the one embedding worker over them (the model checked: another model's
        vectors are emptied); a reader embeds queries with the model the writer's vectors are made with."""
        if self.writer is not None:
            embedder, error = self.writer.embedder, self.embedder_error
        else:
            embedder, error = open_embedder(self.settings, self.db, None)
        self.vectors = PgVectors(self.db, self.catalog, embedder, error)
        self.vectors.settings = self.settings  # a reader follows the writer's model with them
        if self.writer is not None and embedder is not None:
            self.vectors.check_model()
            self.embedding = EmbeddingWorker(self.vectors, jail, self.settings)

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
        if self.embedding is not None:
            self.embedding.stop(EMBED_STOP_SECONDS)  # before the database: the thread writes to it
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
        self.db.fold_chunk_writes()  # a server that writes for months keeps that table a few rows (vector_memory.py)
        for listener in self._listeners:
            listener([], [])
        if self.vectors is not None:
            self.vectors.forget_languages()  # its documents' languages may have changed
        if self.embedding is not None:
            self._follow_languages()
            self.embedding.on_sync(report.changed_ids, report.deleted_ids)  # wakes the thread for the changes
        return report

    def _follow_languages(self) -> None:
        """The model decided once per index from its languages (vector_writes.follow_languages); a new model's
        embedder goes to the writer too (its chunk sizes), and the worker starts again if it ran."""
        assert self.embedding is not None and self.vectors is not None and self.writer is not None
        self._last_choice = follow_languages(self.settings, self.vectors, self.embedding, self._last_choice)
        if self.writer.embedder is not self.vectors.embedder:
            self.writer.embedder = self.vectors.embedder
            if self._embedding_started:
                self.embedding.start()

    def start_embedding(self) -> None:
        """A server that writes: embed what is pending in a background thread, then what each sync adds (keyword
        search answers meanwhile). `mcp-docs index` embeds in the foreground instead (`embed`)."""
        self._embedding_started = True
        if self.embedding is not None:
            self.embedding.start()

    def embed(self, progress: Progress | None = None) -> int:
        """Embed what the last sync left pending (the writer only)."""
        return self.embedding.build(progress) if self.embedding is not None else 0

    def document_bonus(
        self, query: str, languages: frozenset[str], by_key: bool = False, fused: bool = False
    ) -> Bonus | None:
        """Document-level evidence for the best documents of `query` (search/document_signals.py), as the embedded
        store's: read with the sections by this thread's last keyword search of the same query (`signal_columns`),
        so no statement more. For hybrid's fused scores (`fused`), the documents that search did not read (found by
        the vectors alone) are read in one statement (fused_signals.py). None when the last keyword search was
        another's."""
        last: QueryEvidence | None = getattr(self._evidence, "value", None)
        if last is None or last.query != query or last.languages != languages:
            return None
        if not fused:
            return lambda ids: last.bonus(ids)

        def fused_bonus(ids: Sequence[str]) -> dict[str, float]:
            read = fused_signals.with_documents(self.db, last, ids)
            self._evidence.value = read  # a deeper search of the same query reads none of them again
            return read.bonus(ids, fused=True)

        return fused_bonus

    def keyword_hits(
        self, query: str, limit: int, folder: str | None, tags: Sequence[str], languages: frozenset[str]
    ) -> list[SectionHit]:
        # Thai, Lao, Khmer and Myanmar runs by their letter pairs, not by the fragments the parser cuts them into;
        # the words accent-folded as the sections' tsvectors are (letter_pairs.word_fold)
        words = [fold_marks(w) for w in spaced_words(query)] + pair_words(query)
        kept = [w for w in words if w not in QUERY_STOPWORDS] or words
        terms = [word_fold(w) for w in kept]  # pair tokens are ASCII: unchanged
        if not terms:
            return []
        configs = sorted({text_config(lang) for lang in languages})
        where, args = _filters("d", folder, tags)
        terms = terms[:MAX_QUERY_TERMS]
        rank = f"{RANK_FUNCTION}('{RANK_WEIGHTS}', s.tsv, q.query, {int(RANK_NORMALIZATION)})"
        # as in the embedded store: a section in a language that does not write the query's script scores
        # OTHER_SCRIPT_SHARE of its keyword score (query_language.py); none in a collection of one script
        elsewhere = languages_outside_query_script(query, languages)
        if IDF_WEIGHTING:
            queries = _idf_ranked_sections(rank, damped=bool(elsewhere))
            params: list[Any] = [term_shares(query, terms), configs, terms, *([elsewhere] if elsewhere else [])]
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
        # In a collection of several languages the search then reads each result's document row (its front matter
        # names its translations, search/languages.py): they come with the ranking too, instead of a round trip each.
        records = (", " + ", ".join(f"d.{c.strip()}" for c in DOC_COLUMNS.split(","))) if len(languages) > 1 else ""
        columns = (
            "s.doc_id, s.idx, d.title, s.heading, s.heading_path, s.line_start, s.line_end, s.body, "
            # what the same search asks next (`PgCatalog.named_languages`, `count`), read in this round trip
            f"d.tags, r.score, d.language, (select count(*) from mcp_docs_documents), d.lang{records}"
        )
        source = (
            f"from {ranked} join mcp_docs_sections s on s.doc_id = r.doc_id and s.idx = r.idx "
            f"join mcp_docs_documents d on d.id = s.doc_id {where} "
            "order by r.score desc, s.doc_id, s.idx limit %s"
        )
        signals = (
            IDF_WEIGHTING and DOCUMENT_SIGNALS
        )  # the document signals need the per-word ranking's `m` (signal_columns.py)
        select = _with_signals(columns, source) if signals else f"select {columns} {source}"
        rows = self.db.rows(queries + select, [*params, *([] if where else [max(1, limit)]), *args, max(1, limit)])
        self._evidence.value = evidence(query, languages, terms, rows, 12) if signals else None
        if signals:
            rows = [r[: -signal_columns.COLUMNS] for r in rows]  # the section's own columns
        if rows:
            self.catalog.remember(
                {r[0]: r[10] for r in rows},
                int(rows[0][11]),
                {r[0]: r[12] for r in rows},
                {r[0]: document_from_row(r[13:]) for r in rows} if records else None,
            )
        return [SectionHit(r[0], float(r[9]), _section(r)) for r in rows]


def _with_signals(columns: str, source: str) -> str:
    """The keyword statement's result sections as the CTE `h`, then returned with their documents' signals
    (signal_columns.py) after their own columns and their configuration `h_config`."""
    return (
        f", h as materialized (select {columns}, row_number() over (order by r.score desc, s.doc_id, s.idx) as h_row, "
        f"s.config as h_config {source}){signal_columns.signals_ctes()}"
        f"select h.*, {signal_columns.SIGNALS_COLUMN} from h order by h.h_row"
    )


def term_shares(query: str, terms: Sequence[str]) -> list[float]:
    """What each of the statement's `terms` counts: PAIR_SHARE for a letter pair of a Thai, Lao, Khmer or Myanmar run,
    1 for the others."""
    runs = set(pair_words(" ".join(SOUTHEAST_ASIAN_RUN.findall(query))))
    return [PAIR_SHARE if term in runs else 1.0 for term in terms]


def _frequency(rank: str) -> str:
    """The number of occurrences behind ts_rank's rank of one word without normalisation (see
    `_idf_ranked_sections`)."""
    return f"(case when {rank} > 0 then round(1 / greatest(1.64493406685 * (1 - {rank}), 1e-9) - 0.5) else 0 end)"


def _idf_ranked_sections(rank: str, damped: bool = False) -> str:
    """The `r` CTE (doc_id, idx, score) of the per-word ranking: one tsquery per word and language, each weighted
    by its IDF over the sections (BM25's idea, which ts_rank lacks), so a rare word found counts for more than a
    common one; with LENGTH_K, each word's rank is also normalised by the section's length against the average,
    as BM25's k1 and b do (`rank` then is the unnormalised, saturating term frequency). With BM25 and TERM_TABLE,
    a one-lexeme word's term frequencies come from the term table rather than from ts_rank (the same numbers).
    Its parameters: each word's share (`term_shares`), the configurations, the words; with `damped`, one more: the
    languages whose sections score OTHER_SCRIPT_SHARE (`_damped_scores`). With HEAD_FIELD, a word found in the title
    or heading path also scores as in a field of its own."""
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
        # `::float8`: the length term in floating point, not numeric (a numeric product per matching section was
        # most of the ranking's time; b·tokens is exact either way, so the scores are the same)
        score = f"{idf} * m.r * {k + 1} / (m.r + {k} * (1 - {b} + {b}::float8 * m.tokens / greatest(n.avg_tokens, 1)))"
    if RANK_FUNCTION == "bm25" and HEAD_FIELD:
        score += f" + {float(HEAD_FIELD)} * {idf} * m.hr * {k + 1} / (m.hr + {k})"
    score = f"m.share * ({score})"
    # A word stemmed to one lexeme (nearly every word) reads its sections' term frequencies, lengths and its document
    # frequency from the writer's term table (one index-only scan, `schema.TERMS_SCHEMA`): the same numbers ts_rank
    # gives back below, without detoasting and ranking each matching section's tsvector. A word the parser splits
    # into several lexemes ('http/json', 'otel_sdk'), an AND of them, is ranked from the tsvector as before.
    from_terms = RANK_FUNCTION == "bm25" and TERM_TABLE
    head = _frequency("x.head") if RANK_FUNCTION == "bm25" else "0::float8"
    terms = (
        f"select t.doc_id, t.idx, t.tokens, (t.tf + {float(HEAD_TF) - 1}::float8 * t.head_tf) as r, "
        "count(*) over (partition by q.word)::float8 as df, q.term, t.head_tf::float8 as hr, q.share "
        "from q join mcp_docs_terms t on t.lexeme = q.lexeme "
        "and t.config = q.cfg where q.lexeme is not null union all "
    )
    return (
        # `term`: the word's position in the query, the same in every configuration (signal_columns.py)
        "with q as materialized (select word, term, share, cfg, query, case when numnode(query) = 1 then "
        "(tsvector_to_array(to_tsvector(cfg, w)))[1] end as lexeme from (select row_number() over () as word, "
        "w.term, (%s::float8[])[w.term] as share, c::regconfig as cfg, w.w, plainto_tsquery(c::regconfig, w.w) as query "
        "from unnest(%s::text[]) c cross join unnest(%s::text[]) with ordinality w(w, term)) p), "
        # the writer records both after each sync (`PgWriter.save_statistics`); counted here when it has not yet
        "n as materialized (select coalesce((select value::float8 from mcp_docs_meta where key = 'sections'), "
        "(select count(*)::float8 from mcp_docs_sections)) as total, "
        "coalesce((select value::float8 from mcp_docs_meta where key = 'average_tokens'), "
        "(select avg(coalesce(length, tokens))::float8 from mcp_docs_sections), 1) as avg_tokens), "
        # each word's matching sections, ranked, and how many there are (its document frequency): one index scan
        # per word gives both (counting them first, then ranking them, read every match twice)
        # (`materialized` and `offset 0`: each ts_rank is computed once per section, not again wherever it is used)
        f"m as materialized ({terms if from_terms else ''}select s.doc_id, s.idx, coalesce(s.length, s.tokens) "
        f"as tokens, {rank} as r, "
        f"count(*) over (partition by q.word)::float8 as df, q.term, {head} as hr, q.share "
        "from q join mcp_docs_sections s on s.config = q.cfg "
        f"and s.tsv @@ q.query cross join lateral (select {ranks} offset 0) x where numnode(q.query) > "
        f"{1 if from_terms else 0}), " + (_damped_scores(score) if damped else _scores(score))
    )


def _scores(score: str) -> str:
    """The `r` CTE: each matching section's BM25 score, the sum of its words'."""
    return f"r as (select m.doc_id, m.idx, sum({score}) as score from m cross join n group by m.doc_id, m.idx) "


def _damped_scores(score: str) -> str:
    """The `r` CTE where a section of a language in the statement's last parameter (those that do not write the
    query's script) scores OTHER_SCRIPT_SHARE of its sum, as the embedded store's `_damped_in_languages` does: a
    Japanese or Thai page's words are the few names and commands it borrows, so BM25 weighs a Latin query's words
    many times there. Each matching section's language is read from its document row (a primary-key lookup)
    before the best are cut, in the same statement."""
    return (
        f"r as (select m.doc_id, m.idx, sum({score}) * (case when d.lang = any(%s::text[]) then "
        f"{float(OTHER_SCRIPT_SHARE)} else 1 end) as score from m cross join n join mcp_docs_documents d "
        "on d.id = m.doc_id group by m.doc_id, m.idx, d.lang) "
    )


class PgVectors(PgLanguageView, PgChunkMemory, PgVectorWrites):
    """Vector search over the `mcp_docs_chunks` and `mcp_docs_doc_chunks` tables (pgvector, cosine); the one
    embedding worker fills them through `PgVectorWrites` (vector_writes.py); in a collection of several languages,
    each language searched on its own (`PgLanguageView`, vector_languages.py) through the chunk vectors kept in memory
    once all are embedded (`PgChunkMemory`, vector_memory.py). It implements
    `store.api.VectorSearch` and `store.api.VectorWriter`, as the embedded VectorStore does."""

    def __init__(self, db: Database, catalog: PgCatalog, embedder: Embedder | None, error: str | None) -> None:
        self.db = db
        self.catalog = catalog
        self.embedder = embedder
        self.error = error
        self.busy = False  # the embedding worker is running a pass
        self.last_rate: float | None = None
        self.settings: Settings | None = None
        self._followed_at = 0.0
        self._query_cache: dict[str, np.ndarray] = {}
        self._state_lock = threading.Lock()
        self._chunk_lock = threading.Lock()  # one thread reads the chunk vectors (vector_memory.py)
        if embedder is not None and embedder.dim is None and db.dim:
            embedder.dim = db.dim

    def close(self) -> None:
        pass  # the library closes the database

    def coverage_note(self, mode: str, covered: float | None = None) -> str | None:
        return coverage_note(self, mode, covered)

    def unavailable_reason(self) -> str | None:
        return unavailable_reason(self)

    def embed_query(self, text: str) -> np.ndarray:
        self.follow_writer(self.settings)
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

    def section_hits(
        self,
        query: np.ndarray,
        limit: int,
        folder: str | None = None,
        tags: Sequence[str] = (),
        view: LanguageView | None = None,
    ) -> list[VectorHit]:
        """The nearest chunks, grouped to sections (a section scores with its best chunk), best first. With a `view`
        (`language_view`), each language is searched on its own and its cosines put on the scale of the query's
        language (vector_languages.py)."""
        dim = self.db.dim
        if dim is None:
            return []
        k = max(1, min(limit * 3, MAX_K))
        where, args = _filters("d", folder, tags)
        if view is not None:
            return self.language_section_hits(query, limit, where, args, view)
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
        sections = best_per_section((vector_hit(r) for r in rows), limit)
        # a document's own vector where its sections still wait for theirs (vector_writes.py)
        return with_document_hits(sections, self.document_hits(query, limit, where, args), limit)


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
