"""The catalog's SQLite tables (catalog.py), and the version that rebuilds an index made with others."""

# Bump when the tables or what parsing extracts change: existing indexes are rebuilt on open.
# 6: one links row per (document, target) with its count.
# 7: documents.language, the language named (front matter or detected), null when undecided (issue 29).
# 8: each links row's resolved target, indexed (backlinks).
SCHEMA_VERSION = 8

SCHEMA = """
create table if not exists meta (key text primary key, value text not null);
create table if not exists documents (
    id text primary key,
    folder text not null,
    hash text not null,
    mtime_ns integer not null,
    size integer not null,
    title text not null,
    summary text not null,
    tags text not null,
    aliases text not null,
    front_matter text not null,
    lang text not null,
    links text not null,
    warnings text not null,
    tokens integer not null,
    indexed_at real not null,
    language text
);
create index if not exists documents_folder on documents(folder);
create index if not exists documents_lang on documents(lang);
create table if not exists sections (
    doc_id text not null,
    idx integer not null,
    heading text not null,
    heading_path text not null,
    level integer not null,
    line_start integer not null,
    line_end integer not null,
    subtree_end integer not null,
    tokens integer not null,
    primary key (doc_id, idx)
) without rowid;
create table if not exists doc_tags (
    doc_id text not null,
    tag text not null,
    primary key (tag, doc_id)
) without rowid;
create index if not exists doc_tags_doc on doc_tags(doc_id);
create table if not exists links (
    doc_id text not null,
    n integer not null,
    line integer not null,
    kind text not null,
    target text not null,
    heading text,
    key text not null,
    count integer not null,
    resolved text,
    primary key (doc_id, n)
) without rowid;
create index if not exists links_key on links(key, doc_id);
create index if not exists links_resolved on links(resolved, doc_id);
create table if not exists doc_names (
    key text not null,
    doc_id text not null,
    kind text not null,
    alias text not null,
    primary key (key, doc_id, kind, alias)
) without rowid;
create index if not exists doc_names_doc on doc_names(doc_id);
create table if not exists doc_terms (
    key integer primary key,
    doc_id text not null unique,
    lang text not null,
    terms blob not null,
    path text not null
);
create table if not exists problems (
    path text primary key,
    kind text not null,
    detail text not null
);
"""
