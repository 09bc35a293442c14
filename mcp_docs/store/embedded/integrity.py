"""The damage check of an SQLite file on open, skipped while the file is unchanged since its last clean check.

`pragma quick_check` reads every page: measured on generated files, 0.5 s for the catalog of a 100,000-document
vault (133 MB) and 0.23 s per 100,000 chunks of vectors (a vault that size has about a million), which every
one-shot command such as `mcp-docs search` paid on every run. Damage comes with a change of the file (a crash mid-write, a truncation,
bytes overwritten), so the check runs again whenever the file or its write-ahead log changed since the last
clean check. What was checked is kept next to the file in `<name>.checked`: inode, size, mtime and ctime
(which no tool can set back) of the file, and size and mtime of a non-empty WAL.

A stamp is kept only for a file last changed over RACY_SECONDS ago: a write in the same clock tick as
the check would otherwise leave every time unchanged (the "racy git" problem).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

STAMP_SUFFIX = ".checked"
RACY_SECONDS = 2.0


def _stamp(path: Path) -> tuple[str, float] | None:
    """What identifies this version of the file (None when it is missing), and when it last changed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    parts: list[object] = [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    changed = max(st.st_mtime, st.st_ctime)
    with contextlib.suppress(OSError):
        wal = os.stat(f"{path}-wal")
        if wal.st_size:  # an empty WAL is created afresh by every connection: not a change of content
            parts += [wal.st_size, wal.st_mtime_ns]
            changed = max(changed, wal.st_mtime, wal.st_ctime)
    return json.dumps(parts), changed


def check_if_changed(path: Path, check: Callable[[], None]) -> None:
    """Run `check` (it raises on damage) unless `path` is unchanged since a clean check recorded its stamp."""
    stamp = _stamp(path)
    marker = Path(f"{path}{STAMP_SUFFIX}")
    if stamp is not None:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            if marker.read_text(encoding="utf-8") == stamp[0]:
                return
    started = time.perf_counter()
    check()
    log.debug("integrity of %s checked in %.2fs", path.name, time.perf_counter() - started)
    if stamp is not None and time.time() - stamp[1] > RACY_SECONDS:
        with contextlib.suppress(OSError):  # a read-only index folder: the check simply runs every time
            _write(marker, stamp[0])


def _write(marker: Path, text: str) -> None:
    """Replace the stamp file without following a link planted in its place (or in its temporary's)."""
    tmp = marker.with_name(marker.name + ".tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, marker)
