"""The vector store's SQLite tables (vector_store.py explains what each holds); the sqlite-vec tables `vec` and
`doc_vec` are created once the embedding dimension is known."""

VECTOR_SCHEMA = """
create table if not exists meta (key text primary key, value text not null);
create table if not exists docs (
    doc_id text primary key,
    hash text not null,
    title text not null,
    folder text not null,
    tags text not null
);
create index if not exists docs_folder on docs(folder);
create table if not exists doc_tags (tag text not null, doc_id text not null, primary key (tag, doc_id)) without rowid;
create index if not exists doc_tags_doc on doc_tags(doc_id);
create table if not exists sections (
    doc_id text not null,
    idx integer not null,
    heading text not null,
    heading_path text not null,
    line_start integer not null,
    line_end integer not null,
    primary key (doc_id, idx)
) without rowid;
create table if not exists chunks (
    id integer primary key,
    doc_id text not null,
    section_idx integer not null,
    ord integer not null,
    hash text not null,
    text text not null,
    prefix_len integer not null,
    embedded integer not null default 0
);
create index if not exists chunks_doc on chunks(doc_id);
create index if not exists chunks_hash on chunks(hash);
create index if not exists chunks_pending on chunks(id) where embedded = 0;
create table if not exists doc_chunks (
    id integer primary key,
    doc_id text not null unique,
    section_idx integer not null,
    hash text not null,
    text text not null,
    prefix_len integer not null,
    embedded integer not null default 0
);
create index if not exists doc_chunks_hash on doc_chunks(hash);
"""
