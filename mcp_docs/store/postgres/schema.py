"""The PostgreSQL store's tables, their indexes and triggers (all prefixed `mcp_docs_`; described in database.py),
created by `Database` when a writer opens the database."""

from __future__ import annotations

TABLES = (
    "terms",
    "doc_chunks",
    "chunks",
    "doc_names",
    "links",
    "doc_tags",
    "sections",
    "documents",
    "problems",
    "meta",
)

SCHEMA = """
create extension if not exists vector;
create table if not exists mcp_docs_meta (key text primary key, value text not null);
create table if not exists mcp_docs_documents (
    id text primary key,
    folder text not null,
    hash text not null,
    mtime_ns bigint not null,
    size bigint not null,
    title text not null,
    summary text not null,
    tags text not null,
    aliases text not null,
    front_matter text not null,
    lang text not null,
    links text not null,
    warnings text not null,
    tokens integer not null,
    indexed_at double precision not null,
    language text,
    content bytea not null
);
create index if not exists mcp_docs_documents_folder on mcp_docs_documents(folder text_pattern_ops);
-- each language's branch of a search in several languages finds its documents by it (vector_languages.py)
create index if not exists mcp_docs_documents_lang on mcp_docs_documents(lang);
create table if not exists mcp_docs_sections (
    doc_id text not null references mcp_docs_documents(id) on delete cascade,
    idx integer not null,
    heading text not null,
    heading_path text not null,
    level integer not null,
    line_start integer not null,
    line_end integer not null,
    subtree_end integer not null,
    tokens integer not null,
    body text not null,
    config regconfig not null,
    tsv tsvector not null,
    length integer,
    primary key (doc_id, idx)
);
alter table mcp_docs_sections add column if not exists length integer;
create index if not exists mcp_docs_sections_tsv on mcp_docs_sections using gin(tsv);
create table if not exists mcp_docs_doc_tags (
    doc_id text not null references mcp_docs_documents(id) on delete cascade,
    tag text not null,
    primary key (tag, doc_id)
);
create index if not exists mcp_docs_doc_tags_doc on mcp_docs_doc_tags(doc_id);
create table if not exists mcp_docs_links (
    doc_id text not null references mcp_docs_documents(id) on delete cascade,
    n integer not null,
    line integer not null,
    kind text not null,
    target text not null,
    heading text,
    key text not null,
    count integer not null,
    resolved text,
    primary key (doc_id, n)
);
create index if not exists mcp_docs_links_key on mcp_docs_links(key, doc_id);
create index if not exists mcp_docs_links_resolved on mcp_docs_links(resolved, doc_id);
create table if not exists mcp_docs_doc_names (
    key text not null,
    doc_id text not null references mcp_docs_documents(id) on delete cascade,
    kind text not null,
    alias text not null,
    primary key (key, doc_id, kind, alias)
);
create index if not exists mcp_docs_doc_names_doc on mcp_docs_doc_names(doc_id);
create table if not exists mcp_docs_problems (path text primary key, kind text not null, detail text not null);
create table if not exists mcp_docs_chunks (
    id bigserial primary key,
    doc_id text not null references mcp_docs_documents(id) on delete cascade,
    section_idx integer not null,
    hash text not null,
    text text not null,
    prefix_len integer not null,
    embedding vector,
    failed boolean not null default false
);
alter table mcp_docs_chunks add column if not exists failed boolean not null default false;
create index if not exists mcp_docs_chunks_doc on mcp_docs_chunks(doc_id);
create index if not exists mcp_docs_chunks_pending on mcp_docs_chunks(id) where embedding is null;
create index if not exists mcp_docs_chunks_hash on mcp_docs_chunks(hash);
create table if not exists mcp_docs_doc_chunks (
    id bigserial primary key,
    doc_id text not null unique references mcp_docs_documents(id) on delete cascade,
    section_idx integer not null,
    hash text not null,
    text text not null,
    prefix_len integer not null,
    embedding vector,
    failed boolean not null default false
);
create index if not exists mcp_docs_doc_chunks_hash on mcp_docs_doc_chunks(hash);
-- the documents still waiting for their own vector, counted before each search's answer (`pending`): without it,
-- a scan of every document's row with its vector (3.5 ms a search on the Obsidian help vault)
create index if not exists mcp_docs_doc_chunks_pending on mcp_docs_doc_chunks(id) where embedding is null;
do $$ begin
    -- The vectors kept in their rows ('main'), not out of line: pgvector's type is stored 'external', so a chunk's
    -- vector (1.5 KB with e5) beside its text went to the TOAST table, and an exact search read each one back from
    -- there (the language view's exact k-NN, vector_languages.py: 40 of its 55 ms on the OpenTelemetry docs).
    -- The text is compressed or moved out first. Rows written before keep theirs until rewritten (VACUUM FULL).
    if exists (select 1 from pg_attribute where attrelid = 'mcp_docs_chunks'::regclass and attname = 'embedding'
               and attstorage <> 'm') then
        alter table mcp_docs_chunks alter column embedding set storage main;
        alter table mcp_docs_doc_chunks alter column embedding set storage main;
    end if;
end $$;
"""

# Each section's terms: per lexeme (as its section's configuration stemmed it), how often it occurs (tf) and how often
# in the title or heading path (head_tf, the 'A' positions), with the section's length. A keyword search reads a
# word's matching sections, their term frequencies and its document frequency (the number of rows) from one
# index-only scan of `mcp_docs_terms_lexeme`, where ranking each matching section's tsvector (detoasted, ts_rank
# twice) was most of a search's database time (benchmarks/REPORT.md, "PostgreSQL throughput"). A statement
# trigger fills it from the inserted sections, whichever path wrote them (COPY's insert ... select or a row's
# insert); a section is only ever deleted with its document, which the foreign key's cascade follows.
TERMS_OF = (
    "select s.config, t.lexeme, s.doc_id, s.idx, cardinality(t.positions), "
    "coalesce(cardinality(array_positions(t.weights, 'A')), 0), coalesce(s.length, s.tokens) "
    "from {sections} s cross join unnest(s.tsv) t"
)
TERMS_SCHEMA = f"""
create table if not exists mcp_docs_terms (
    config regconfig not null,
    lexeme text not null,
    doc_id text not null references mcp_docs_documents(id) on delete cascade,
    idx integer not null,
    tf integer not null,
    head_tf integer not null,
    tokens integer not null
);
create index if not exists mcp_docs_terms_lexeme on mcp_docs_terms(lexeme, config) include (doc_id, idx, tokens, tf, head_tf);
create index if not exists mcp_docs_terms_doc on mcp_docs_terms(doc_id);
create or replace function mcp_docs_section_terms() returns trigger language plpgsql as $$
begin
    insert into mcp_docs_terms {TERMS_OF.format(sections="new_sections")};
    return null;
end $$;
drop trigger if exists mcp_docs_section_terms on mcp_docs_sections;
create trigger mcp_docs_section_terms after insert on mcp_docs_sections referencing new table as new_sections
    for each statement execute function mcp_docs_section_terms();
"""
SCHEMA += TERMS_SCHEMA

# Every statement that writes chunk rows (a vector, a new or deleted chunk, whichever path: the embedding worker, a
# sync's insert or COPY, a cascade from a document) adds a row here, in its own transaction, so a reader tells in one
# cheap statement whether the chunk vectors it keeps in memory (vector_memory.py) are still the database's: the
# number of rows changes with each commit that wrote chunks. An insert, not an update of one counter: concurrent
# writers (a sync and the embedding thread) never wait for each other's row, so they cannot deadlock through it.
# The writer folds the rows into one at start (`Database.fold_chunk_writes`), keeping their sum.
CHUNK_WRITES_SCHEMA = """
create table if not exists mcp_docs_chunk_writes (n bigint not null);
create or replace function mcp_docs_chunk_written() returns trigger language plpgsql as $$
begin
    insert into mcp_docs_chunk_writes values (1);
    return null;
end $$;
drop trigger if exists mcp_docs_chunk_written on mcp_docs_chunks;
create trigger mcp_docs_chunk_written after insert or update or delete or truncate on mcp_docs_chunks
    for each statement execute function mcp_docs_chunk_written();
"""
SCHEMA += CHUNK_WRITES_SCHEMA

# Indexes a cold load drops first and builds once after it (Database.build_deferred_indexes): maintaining the GIN
# index row by row is most of what a cold load costs the server. The indexes the load itself reads (names and links,
# to resolve links batch by batch; the primary keys) stay. `SCHEMA` creates them too, so a writer killed mid-load
# gets them back when it next starts.
DEFERRED_INDEXES = {
    "mcp_docs_sections_tsv": "create index if not exists mcp_docs_sections_tsv on mcp_docs_sections using gin(tsv)",
    "mcp_docs_documents_folder": (
        "create index if not exists mcp_docs_documents_folder on mcp_docs_documents(folder text_pattern_ops)"
    ),
    "mcp_docs_doc_tags_doc": "create index if not exists mcp_docs_doc_tags_doc on mcp_docs_doc_tags(doc_id)",
    "mcp_docs_chunks_doc": "create index if not exists mcp_docs_chunks_doc on mcp_docs_chunks(doc_id)",
    "mcp_docs_terms_lexeme": (
        "create index if not exists mcp_docs_terms_lexeme on mcp_docs_terms(lexeme, config) "
        "include (doc_id, idx, tokens, tf, head_tf)"
    ),
    "mcp_docs_terms_doc": "create index if not exists mcp_docs_terms_doc on mcp_docs_terms(doc_id)",
}
