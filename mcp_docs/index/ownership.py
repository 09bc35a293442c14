"""Which folders are ours: mcp-docs deletes or rebuilds only inside an index folder that carries its marker.

The index is a cache, so damaged parts are deleted and rebuilt freely — but only there. A mistyped
`--index-dir` (the notes themselves, `~/Documents`) must never lose a file: a folder is claimed
only when mcp-docs creates it, finds it empty, or recognises an index of the previous release
(which had no marker) by its exact shape; anything else is refused before a byte is written.

Within a folder of ours, only the process holding its writer lock (`WriterLock`) may delete, recreate or repair
anything: a `status` of a newer release once rebuilt the index that a running `index` was writing.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import sys
import threading
from pathlib import Path
from typing import ClassVar

from ..errors import IndexFolderRefused
from .integrity import STAMP_SUFFIX

MARKER_NAME = ".mcp-docs-index"
WRITER_LOCK_NAME = "writer.lock"
SYNC_STATE_NAME = "sync-state.json"  # the writer's last sync, for reading workers' /health (sync_state.py)
_MAGIC = "mcp-docs index folder"
_MARKER_TEXT = (
    f"{_MAGIC}\n"
    "This folder is a cache written by mcp-docs: it may delete and rebuild anything in it.\n"
    "Delete the whole folder to drop the index; your documents are never stored here.\n"
)

# What an index of the previous release (no marker) holds, or one of ours whose marker was damaged:
# these names and nothing else.
_SQLITE_FILES = {
    f"{db}.sqlite{suffix}"
    for db in ("catalog", "vectors")
    for suffix in ("", "-wal", "-shm", "-journal", STAMP_SUFFIX, f"{STAMP_SUFFIX}.tmp")
}
_LEGACY_ENTRIES = _SQLITE_FILES | {
    "fulltext",
    MARKER_NAME,
    f"{MARKER_NAME}.tmp",
    WRITER_LOCK_NAME,
    SYNC_STATE_NAME,
    f"{SYNC_STATE_NAME}.tmp",
}
_TANTIVY_FILE = re.compile(
    r"[0-9a-f]{32}(?:\.\d+)?\.(?:idx|pos|term|store|fast|fieldnorm|del)"
    r"|meta\.json|\.managed\.json|\.tantivy-(?:meta|writer)\.lock|\.tmp\w{6}|generation|schema-version"
)
_SQLITE_HEADER = b"SQLite format 3\x00"


def is_owned(folder: Path) -> bool:
    marker = folder / MARKER_NAME
    try:
        if marker.is_symlink() or not marker.is_file():
            return False
        with marker.open(encoding="utf-8", errors="replace") as fh:
            return fh.readline().strip() == _MAGIC
    except OSError:
        return False


def claim(folder: Path) -> None:
    """Make `folder` ours (create it, or mark it if empty or a previous-release index), or refuse."""
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise IndexFolderRefused(f"The index folder {folder} is not a folder; choose another --index-dir.")
    folder.mkdir(parents=True, exist_ok=True)
    if is_owned(folder):
        return
    if any(folder.iterdir()) and not _is_previous_release_index(folder):
        raise IndexFolderRefused(
            f"The index folder {folder} already holds files that mcp-docs did not create; it never writes or "
            "deletes there. Choose an empty or new folder for --index-dir (or leave it out to use the default)."
        )
    _write_marker(folder)


def _write_marker(folder: Path) -> None:
    tmp = folder / f"{MARKER_NAME}.tmp"
    tmp.write_text(_MARKER_TEXT, encoding="utf-8")
    os.replace(tmp, folder / MARKER_NAME)


def _is_previous_release_index(folder: Path) -> bool:
    """catalog.sqlite (an SQLite file) and fulltext/ (Tantivy files and our `generation`), nothing else."""
    names = {p.name for p in folder.iterdir()}
    if not names <= _LEGACY_ENTRIES or "catalog.sqlite" not in names or "fulltext" not in names:
        return False
    catalog, fulltext = folder / "catalog.sqlite", folder / "fulltext"
    if catalog.is_symlink() or not catalog.is_file() or fulltext.is_symlink() or not fulltext.is_dir():
        return False
    with catalog.open("rb") as fh:
        if fh.read(len(_SQLITE_HEADER)) != _SQLITE_HEADER:
            return False
    entries = list(fulltext.iterdir())
    return (fulltext / "generation").is_file() and all(
        _TANTIVY_FILE.fullmatch(p.name) and p.is_file() and not p.is_symlink() for p in entries
    )


def remove(path: Path) -> None:
    """Delete a file or folder of an index folder we own; refuse anything else (never follows links)."""
    if not is_owned(path.parent):
        raise IndexFolderRefused(
            f"mcp-docs did not create {path.parent} (no {MARKER_NAME} marker): it will not delete {path.name} there."
        )
    if path.is_symlink():
        raise IndexFolderRefused(f"{path} is a link, not part of an mcp-docs index: it was left alone.")
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


class WriterLock:
    """This process's hold on an index folder's writer lock: an advisory lock (flock) on its `writer.lock`, held
    from the moment a writing library opens the folder (before any repair or rebuild) until it is closed. The
    kernel releases it when the process dies, so a killed writer never leaves the folder locked.

    Libraries of one process share the hold (counted): the lock keeps other processes out, while within a
    process the libraries' own locks and Tantivy's writer lock order the writes, as before."""

    _held: ClassVar[dict[Path, tuple[int, int]]] = {}  # folder -> (file descriptor, holders in this process)
    _guard = threading.Lock()

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._released = False

    @classmethod
    def take(cls, folder: Path) -> WriterLock | None:
        """The lock of `folder` (which must be ours), or None when another process holds it, or when an
        mcp-docs of a release without this lock is writing there (it holds Tantivy's own writer lock)."""
        key = folder.absolute()
        with cls._guard:
            held = cls._held.get(key)
            if held is not None:
                cls._held[key] = (held[0], held[1] + 1)
                return cls(key)
            path = key / WRITER_LOCK_NAME
            if path.is_symlink():
                raise IndexFolderRefused(f"{path} is a link, not part of an mcp-docs index: it was left alone.")
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
            if not _try_flock(fd) or _locked_elsewhere(key / "fulltext" / ".tantivy-writer.lock"):
                os.close(fd)
                return None
            cls._held[key] = (fd, 1)
            return cls(key)

    def is_current(self) -> bool:
        """Whether the lock held is still the folder's: not when the folder was deleted (and perhaps recreated by
        another process, which then holds the new folder's lock) since this process took it."""
        with self._guard:
            held = self._held.get(self.folder)
            if self._released or held is None:
                return False
            try:
                ours, there = os.fstat(held[0]), os.stat(self.folder / WRITER_LOCK_NAME, follow_symlinks=False)
            except OSError:
                return False
            return (ours.st_dev, ours.st_ino) == (there.st_dev, there.st_ino)

    def release(self) -> None:
        with self._guard:
            if self._released:
                return
            self._released = True
            fd, holders = self._held.pop(self.folder)
            if holders > 1:
                self._held[self.folder] = (fd, holders - 1)
            else:
                os.close(fd)  # closing the descriptor releases the flock


def _try_flock(fd: int) -> bool:
    """Take the exclusive lock of `fd` without waiting; False when another process holds it."""
    if sys.platform == "win32":  # no flock there: a lock of the first byte (msvcrt), gone when fd closes; untested
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        raise
    return True


def _locked_elsewhere(path: Path) -> bool:
    """Whether another process holds the flock on `path` (Tantivy's writer lock); checked, then let go."""
    try:
        fd = os.open(path, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False  # no Tantivy index yet, or not a plain file: nobody writes through it
    try:
        return not _try_flock(fd)
    finally:
        os.close(fd)
