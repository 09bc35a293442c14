"""An index folder on a read-only file system (a read-only mount, a snapshot, a CD): opened for reading only.

SQLite cannot open a database in WAL mode read-only when its `-shm` file is missing and cannot be created
(after a clean close there is none), unless told the file is immutable. On a file system mounted read-only
nobody can change the file, so `immutable=1` is true there; elsewhere (a folder this user may not write, beside
a writer that may) read-only mode is used as before, since an immutable file that changes reads wrong.
"""

from __future__ import annotations

import os
from pathlib import Path


def on_read_only_media(path: Path) -> bool:
    """The file system holding `path` is mounted read-only (statvfs's ST_RDONLY; False where unknown)."""
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs (Windows), or nothing there
        return False


def writable(folder: Path) -> bool:
    """This process may create and change files in `folder` (access(2): a read-only mount is refused even to
    root, whose file permissions are not)."""
    return os.access(folder, os.W_OK | os.X_OK) and not on_read_only_media(folder)


def sqlite_reading_uri(path: Path) -> str:
    """The URI to open `path` read-only: immutable on read-only media (see above)."""
    uri = f"{path.absolute().as_uri()}?mode=ro"
    return uri + "&immutable=1" if on_read_only_media(path) else uri


__all__ = ["on_read_only_media", "sqlite_reading_uri", "writable"]
