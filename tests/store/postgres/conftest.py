"""A real PostgreSQL (with pgvector) for the store tests: one server per test session, started from the `pgserver`
package, one database per module or test; and a TCP relay in front of it that a test can cut and restore, to
take the database away from a running server and bring it back."""

from __future__ import annotations

import contextlib
import shutil
import socket
import tempfile
import threading
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

try:
    with warnings.catch_warnings():
        # pgserver asks platformdirs for a runtime folder at import; without XDG_RUNTIME_DIR that warns
        warnings.simplefilter("ignore")
        import pgserver
    import psycopg
except ImportError:  # pragma: no cover - CI installs the [test] extra, which has both
    pgserver = None


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(admin URL, data folder) of a PostgreSQL started for this session."""
    if pgserver is None:
        pytest.skip("pgserver is not installed: pip install -e '.[test]' to run the PostgreSQL store tests")
    # Not under pytest's tmp folder: PostgreSQL runs as the unprivileged user `pgserver` (it refuses root), which
    # must reach its data folder, and pytest's folders are private to the user running the tests.
    base = Path(tempfile.mkdtemp(prefix="mcp-docs-pg-"))
    base.chmod(0o755)
    data = base / "data"
    server = pgserver.get_server(data, cleanup_mode="stop")
    try:
        yield server.get_uri(), data
    finally:
        server.cleanup()
        shutil.rmtree(base, ignore_errors=True)


def new_database(admin_url: str) -> str:
    """A fresh, empty database on the session's server; its URL."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"create database {name}")
    return admin_url.replace("/postgres?", f"/{name}?", 1)


@pytest.fixture
def database(pg_server: tuple[str, Path]) -> str:
    return new_database(pg_server[0])


def unix_socket(data: Path) -> str:
    return str(next(p for p in data.glob(".s.PGSQL.*") if not p.name.endswith(".lock")))


class Relay:
    """A TCP port that forwards each connection to PostgreSQL's Unix socket, until `cut()`; `restore()` listens
    again on the same port. Cutting also closes the connections in flight, as a network failure would."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.port = 0
        self._listener: socket.socket | None = None
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self.restore()

    def restore(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                upstream.connect(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        if self._listener is not None:
            with contextlib.suppress(OSError):  # wakes the thread blocked in accept(): close alone would not
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
            self._listener = None
        with self._lock:
            sockets, self._open = self._open, []
        for s in sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader's empty root folder is made in the user cache: here, the test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
