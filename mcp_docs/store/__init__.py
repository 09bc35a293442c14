"""Where an index lives, behind one protocol (`api.Store`) that `library.Library` is composed from:
`embedded/` (the default, `--store tantivy`: the index folder with its SQLite catalog, Tantivy full-text index
and sqlite-vec vectors) and PostgreSQL (`--store postgres`: the same catalog, full-text sections and vector
chunks in one database, written by one `mcp-docs index` or one `serve` with a root under an advisory lock, and
read by any number of stateless servers without a root). `registry.py` maps `--store` to its store.

This package's __init__ imports nothing: `settings` reaches `store.postgres.dsn`, and the library reaches the registry.
"""
