"""The PostgreSQL store (`--store postgres`): `database.py` (connections, schema, the writer lock), `catalog.py`
(the catalog's reads in SQL), `sync.py` (the writer), `store.py` (`PostgresStore`: keyword and vector search, the
documents' text), `dsn.py` (the URL, never shown with its password). Imported only when chosen."""
