"""`--store` resolved in one place: the setting's value → how to open that store and what it can do. Adding a
store is one package implementing `store.api.Store` and one entry here; nothing outside `store/` tests the
setting's value. Each store's package is imported only when chosen (psycopg only for PostgreSQL)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import IndexCannotOpen  # the PostgreSQL refusal
from .choices import CHOICES, StoreChoice

if TYPE_CHECKING:
    from ..paths import Jail
    from ..scan import Scanner
    from ..settings import Settings
    from .api import Store


@dataclass(frozen=True)
class StoreEntry:
    name: str
    open: Callable[[Settings, Jail, Scanner, bool], Store]
    # Refuses, in one sentence, to open a store that cannot be used as asked (before anything is created).
    check: Callable[[Settings, bool], None]
    # Raises IndexCannotOpen, one sentence, for an error of opening the user can act on; returns for the others.
    refuse: Callable[[Settings, BaseException], None]
    # Any number of servers and CLI commands read it while one writer keeps it up to date (PostgreSQL): the CLI's
    # search, read and status only read, and `serve --workers N` is refused (start several servers instead).
    shared_between_servers: bool
    # False: a server without --root serves the index as a reader, reading the documents from the store.
    needs_root: bool
    # What the serving line names, e.g. "the PostgreSQL index postgresql://u@h/db" (never a password).
    describe: Callable[[Settings], str]
    # What settings.py checks of it (store/choices.py; the built-in stores' are written there)
    summary: str = ""
    needs_database_url: bool = False


def _open_embedded(settings: Settings, jail: Jail, scanner: Scanner, read_only: bool) -> Store:
    from .embedded.store import EmbeddedStore

    return EmbeddedStore(settings, jail, scanner, read_only)


def _check_embedded(settings: Settings, read_only: bool) -> None:
    from .embedded.store import check_can_open

    check_can_open(settings, read_only)


def _refuse_embedded(settings: Settings, exc: BaseException) -> None:
    from .embedded.store import refuse_open_error

    refuse_open_error(settings, exc)


def _open_postgres(settings: Settings, jail: Jail, scanner: Scanner, read_only: bool) -> Store:
    from .postgres.store import PostgresStore  # psycopg is imported only for this store

    return PostgresStore(settings, jail, read_only)


def _refuse_postgres(settings: Settings, exc: BaseException) -> None:
    from ..errors import DatabaseUnavailable, IndexBusy

    if isinstance(exc, (DatabaseUnavailable, IndexBusy)):  # unreachable, or another writer holds the lock
        raise IndexCannotOpen(str(exc)) from None


def _describe_postgres(settings: Settings) -> str:
    from .postgres.dsn import redact  # never a password

    return f"the PostgreSQL index {redact(settings.database_url or '')}"


def _nothing_to_check(settings: Settings, read_only: bool) -> None:
    return None


STORES: dict[str, StoreEntry] = {
    "tantivy": StoreEntry(
        "tantivy",
        _open_embedded,
        _check_embedded,
        _refuse_embedded,
        shared_between_servers=False,
        needs_root=True,
        describe=lambda settings: str(settings.root),
    ),
    "postgres": StoreEntry(
        "postgres",
        _open_postgres,
        _nothing_to_check,
        _refuse_postgres,
        shared_between_servers=True,
        needs_root=False,
        describe=_describe_postgres,
    ),
}


def register(entry: StoreEntry) -> None:
    """Add a store (or replace one of that name): `--store`, MCP_DOCS_STORE and Settings.load accept it from now on."""
    STORES[entry.name] = entry
    CHOICES[entry.name] = StoreChoice(
        entry.name, entry.summary or entry.name, entry.needs_database_url, needs_root=entry.needs_root
    )


def store_kind(settings: Settings) -> StoreEntry:
    """The registry's entry for `settings.store` (Settings.load has refused any other value)."""
    return STORES[settings.store]


def open_store(settings: Settings, jail: Jail, scanner: Scanner, read_only: bool = False) -> Store:
    return store_kind(settings).open(settings, jail, scanner, read_only)
