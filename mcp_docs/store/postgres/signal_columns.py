"""The embedded store's document signals (search/document_signals.py) on PostgreSQL, read in the ranking statement.

The embedded store keeps each document's set of terms and looks up its ~10 best candidates after ranking; here the
ranking statement already holds what those signals need: `m`, every matching section of each query word (its
`term`, the word's position in the query), so a word is in a document when one of the document's sections is in
`m` for it (its coverage), and its IDF is `m`'s document frequency. So the statement returns, beside each of its
sections, what its document holds of the query: the words found anywhere in it, the words found in its path (the
path analysed by its sections' configuration), and its number of sections. No round trip more: one statement per
search, as before. Without these signals, the PostgreSQL store ranked the Obsidian help's multilingual questions
at lang@1 0.311 against the embedded store's 0.508, the right page second or third (benchmarks/REPORT.md,
"Document signals on PostgreSQL").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from ...ascii_fold import sql_fold
from ...query_language import query_language
from ...query_text import spaced_words
from ...search.document_signals import CANDIDATES, share_of_best, signal_words
from .letter_pairs import word_fold

# How many of the result's first documents (in the order of their best section) have their signals read: the bonus
# goes to the best CANDIDATES documents once grouped (document_signals.CANDIDATES), always among these.
DOCUMENTS = CANDIDATES + 5

# The CTEs after `h` (the statement's result sections, numbered in their order `h_row`, with their configuration
# `h_config`), for its first DOCUMENTS documents (`hd`): the query's words found in each (`found`; a stopword of its
# configuration, which its tsvector drops, counts as found there, as the embedded store's term sets hold every
# word: "o que é o canvas" lost 'o' on the Portuguese pages alone), in its path (`placed`: folders and file name,
# without the extension, split at the punctuation the parser would otherwise keep whole as a file name or a host),
# its number of sections (`counted`); and each word's largest document frequency over the configurations (`dfs`),
# a stopword's being the number of sections of its configuration (`PgWriter.save_statistics` records them; until the
# writer has, every section: counting them here scanned the sections table for each stopword, seconds a question on
# the Obsidian help vault): 'die', dropped from German tsvectors, had the IDF of a rare word where the embedded
# store's was low. All of it as one JSON value (`sig`), returned with the first section only: each part is an
# aggregate, never a join (the planner, expecting one row of each CTE, joined them by nested loops, 500 x 500 rows
# for a search of 100 documents).
_SIGNALS_CTES = (
    ", hd as materialized (select doc_id, h_config from (select distinct on (doc_id) doc_id, h_config, h_row from h "
    f"order by doc_id, h_row) z order by h_row limit {DOCUMENTS}), "
    "hk as materialized (select jsonb_object_agg(doc_id, true) as keys from hd), "
    # per word: its document frequency, and which of those documents hold it (the few rows of `hd`'s documents
    # alone sorted, and by bytes: sorting every match by its id in the database's collation was most of the cost)
    "words as materialized (select d.term, d.df, f.docs from (select m.term, max(m.df) as df from m group by m.term) d "
    'left join (select x.term, array_agg(x.doc_id) as docs from (select distinct m.term, m.doc_id collate "C" '
    "as doc_id from m cross join hk where hk.keys ? m.doc_id) x group by x.term) f on f.term = d.term "
    # a stopword: its configuration's sections, and that configuration's documents
    "union all select s.term, max(s.df), array_agg(distinct hd.doc_id) filter (where hd.doc_id is not null) "
    "from (select q.term, q.cfg, coalesce((select value::json ->> q.cfg::text from mcp_docs_meta "
    "where key = 'config_sections')::float8, n.total) as df from q cross join n where numnode(q.query) = 0) s "
    "left join hd on hd.h_config = s.cfg group by s.term), "
    "placed as materialized (select jsonb_object_agg(x.doc_id, x.terms) as placed from (select hd.doc_id, "
    "array_agg(distinct q.term) as terms from hd cross join lateral (select to_tsvector(hd.h_config, "
    "regexp_replace(regexp_replace({path}, '\\.[^./]*$', ''), '[/._@:+#-]+', ' ', 'g')) as v offset 0) pv "
    "join q on q.cfg = hd.h_config where pv.v @@ q.query group by hd.doc_id) x), "
    "counted as materialized (select jsonb_object_agg(hd.doc_id, (select count(*) from mcp_docs_sections x "
    "where x.doc_id = hd.doc_id)) as counted from hd), "
    "sig as materialized (select jsonb_build_object('words', (select jsonb_agg(jsonb_build_array(term, df, docs)) "
    "from words), 'placed', placed.placed, 'sections', counted.counted, 'total', n.total) as sig "
    "from placed, counted, n) "
)


@cache
def signals_ctes() -> str:
    """_SIGNALS_CTES with the path accent-folded in SQL as the words are in Python (ascii_fold.sql_fold): 'Vlastní
    doména.md' holds the query's 'vlastni'. Built on first use (the fold table takes ~15 ms to read)."""
    return _SIGNALS_CTES.replace("{path}", sql_fold("normalize(hd.doc_id, nfc)"))


# The one column they add after each section's own and its `h_row` and `h_config` (None but on the first row).
SIGNALS_COLUMN = "case when h.h_row = 1 then (select sig from sig) end"
COLUMNS = 3  # h_row, h_config, the signals


@dataclass(frozen=True)
class DocumentSignals:
    """What one document holds of the query: the positions (from 1) of the words found in it, and in its path."""

    found: frozenset[int]
    placed: frozenset[int]
    sections: int
    lang: str


@dataclass(frozen=True)
class QueryEvidence:
    """The signals of one search's result documents, and the weights of the query's signal words (by position)."""

    query: str
    languages: frozenset[str]
    weights: Mapping[int, float]
    language: str | None
    documents: Mapping[str, DocumentSignals]
    terms: tuple[str, ...] = ()  # the statement's words, in the order their positions count (fused_signals.py)

    def bonus(self, ids: Sequence[str], fused: bool = False) -> dict[str, float]:
        """Document id → the share of the best document's score it gains, as document_signals.QuerySignals.bonus."""
        total = sum(self.weights.values())
        out: dict[str, float] = {}
        for doc_id in ids:
            doc = self.documents.get(doc_id)
            if doc is None:
                continue
            covered = sum(w for t, w in self.weights.items() if t in doc.found) / total if total else 0.0
            in_path = sum(w for t, w in self.weights.items() if t in doc.placed) / total if total else 0.0
            same = self.language is not None and doc.lang == self.language
            out[doc_id] = share_of_best(covered, in_path, same, doc.sections, fused, words=total > 0)
        return out


def signal_positions(query: str, terms: Sequence[str]) -> list[int]:
    """The positions (from 1) of the statement's `terms` that the signals weigh: the query's words as the embedded
    store's signals read them (document_signals.signal_words), not its letter pairs."""
    wanted = {word_fold(w) for w in signal_words(query)}
    words = {word_fold(w) for w in spaced_words(query)}
    return [i for i, term in enumerate(terms, 1) if term in wanted and term in words]


def evidence(
    query: str, languages: frozenset[str], terms: Sequence[str], rows: Sequence[tuple[Any, ...]], lang_column: int
) -> QueryEvidence:
    """The statement's rows → the evidence of their documents (the signals are the first row's last column)."""
    sig: Mapping[str, Any] = (rows[0][-1] if rows else None) or {}
    placed, sections = sig.get("placed") or {}, sig.get("sections") or {}
    total = float(sig.get("total") or 1)
    dfs: dict[int, float] = {}
    found: dict[str, set[int]] = {}
    for term, df, docs in sig.get("words") or ():  # a word may come twice: matched, and a stopword elsewhere
        dfs[int(term)] = max(dfs.get(int(term), 0.0), float(df or 0))
        for doc_id in docs or ():
            found.setdefault(doc_id, set()).add(int(term))
    weights: dict[int, float] = {}
    for position in signal_positions(query, terms):
        df = dfs.get(position, 0.0)
        # as the embedded store's query_signals: BM25's IDF over the sections (a repeated word counts twice)
        weights[position] = math.log(1 + (total - df + 0.5) / (df + 0.5))
    documents: dict[str, DocumentSignals] = {}
    for r in rows:
        doc_id = r[0]
        if doc_id not in documents and doc_id in sections:
            documents[doc_id] = DocumentSignals(
                frozenset(found.get(doc_id, ())),
                frozenset(placed.get(doc_id) or ()),
                int(sections[doc_id]),
                str(r[lang_column]),
            )
    return QueryEvidence(query, languages, weights, query_language(query, languages), documents, tuple(terms))
