"""Hybrid's document signals on PostgreSQL: the signals (search/document_signals.py) of the fused list's documents
that the keyword statement did not read, in one statement for the given ids.

The keyword statement returns the signals of its own first documents (signal_columns.py), so keyword search costs
no statement more. Hybrid's best documents also include pages found by the vectors alone, which have no evidence
there; the embedded store reads its term sets for any ids (EmbeddedStore.document_bonus), and so does this: for
each id, the query's words found in any of its sections, those in its path and its number of sections, by the same
CTEs as the keyword statement (`signal_columns.signals_ctes`) over a `h` of these documents and an `m` of their
matching sections. The words' weights (their IDF over the sections) are the keyword statement's, which counted
every section: the positions of the words are the same, from its `terms`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .database import Database, text_config
from .signal_columns import QueryEvidence, evidence, signals_ctes

# `q`: each word of the keyword statement (`term`, its position) in each configuration; `n`: the sections'
# number (for a stopword's document frequency, as the keyword statement's); `m`: the sections of the given
# documents that hold each word; `h`: one row per given document with its first section's configuration, in the
# order given (`h_row`), as the keyword statement's `h` is for its result sections.
_DOCUMENTS = (
    "with q as materialized (select w.term, c::regconfig as cfg, plainto_tsquery(c::regconfig, w.w) as query "
    "from unnest(%s::text[]) c cross join unnest(%s::text[]) with ordinality w(w, term)), "
    "n as materialized (select coalesce((select value::float8 from mcp_docs_meta where key = 'sections'), "
    "(select count(*)::float8 from mcp_docs_sections)) as total), "
    "m as materialized (select s.doc_id, q.term, 0::float8 as df from q join mcp_docs_sections s "
    "on s.config = q.cfg and s.tsv @@ q.query where s.doc_id = any(%s) and numnode(q.query) > 0), "
    "h as materialized (select z.doc_id, z.h_config, row_number() over (order by z.ord) as h_row from "
    "(select distinct on (s.doc_id) s.doc_id, s.config as h_config, i.ord from unnest(%s::text[]) with ordinality "
    "i(id, ord) join mcp_docs_sections s on s.doc_id = i.id order by s.doc_id, s.idx) z)"
)


def with_documents(db: Database, last: QueryEvidence, ids: Sequence[str]) -> QueryEvidence:
    """`last` (the keyword statement's evidence) with the signals of those of `ids` it does not hold, read in one
    statement (none when it holds them all)."""
    missing = [doc_id for doc_id in dict.fromkeys(ids) if doc_id not in last.documents]
    if not missing or not last.terms:
        return last
    configs = sorted({text_config(lang) for lang in last.languages})
    rows = db.rows(
        f"{_DOCUMENTS}{signals_ctes()}select h.doc_id, d.lang, case when h.h_row = 1 then (select sig from sig) end "
        "from h join mcp_docs_documents d on d.id = h.doc_id order by h.h_row",
        (configs, list(last.terms), missing, missing),
    )
    found = evidence(last.query, last.languages, last.terms, rows, 1)
    return replace(last, documents={**found.documents, **last.documents})
