"""The names `--store` accepts, and what settings.py needs to check one: a leaf module (it imports nothing of the
project), so that settings and the CLI can read it without importing the stores (store/registry.py imports every
store's package, which imports settings). `registry.register` adds a store here too: a third store is still one
entry, in the registry."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StoreChoice:
    name: str
    # How `--store`'s help and the refusal of an unknown store name it, e.g. "postgres (a PostgreSQL database)".
    summary: str
    # The index lives in a database named by --database-url / MCP_DOCS_DATABASE_URL (settings refuses it without).
    needs_database_url: bool = False
    # False: a reader (a server, search, read, status) needs no copy of the root; it reads the store (PostgreSQL).
    needs_root: bool = True


DEFAULT_STORE = "tantivy"
CHOICES: dict[str, StoreChoice] = {
    "tantivy": StoreChoice("tantivy", "tantivy (the index folder, default)"),
    "postgres": StoreChoice("postgres", "postgres (a PostgreSQL database)", needs_database_url=True, needs_root=False),
}


def store_names() -> list[str]:
    """The names `--store` accepts, the default first."""
    return sorted(CHOICES, key=lambda name: (name != DEFAULT_STORE, name))


def store_choices_sentence() -> str:
    """'tantivy (the index folder, default) or postgres (a PostgreSQL database)': every store, for a refusal."""
    named = [CHOICES[name].summary for name in store_names()]
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " or " + named[-1]
