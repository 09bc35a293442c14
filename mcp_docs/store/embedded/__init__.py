"""The embedded store (`--store tantivy`, the default): the index folder holds the catalog (SQLite), the full-text
index (Tantivy) and the vectors (sqlite-vec), opened, checked and repaired together by `store.EmbeddedStore`."""
