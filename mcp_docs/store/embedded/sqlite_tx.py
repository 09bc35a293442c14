"""One write transaction shape for both SQLite files (catalog via sqlite3, vectors via apsw)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar


class _Executes(Protocol):
    def execute(self, sql: str, /) -> Any: ...


C = TypeVar("C", bound=_Executes)


@contextmanager
def immediate_transaction(lock: threading.Lock | threading.RLock, conn: C) -> Iterator[C]:
    """`begin immediate` (take the write lock now, not at the first write), commit or roll back.

    The in-process lock serialises this process's writers; SQLite's own lock and
    busy timeout handle other processes.
    """
    with lock:
        conn.execute("begin immediate")
        try:
            yield conn
        except BaseException:
            conn.execute("rollback")
            raise
        else:
            conn.execute("commit")
