"""Which folders are ours: mcp-docs deletes or rebuilds only inside an index folder that carries its marker.

The index is a cache, so damaged parts are deleted and rebuilt freely — but only there. A mistyped
`--index-dir` (the notes themselves, `~/Documents`) must never lose a file: a folder is claimed
only when mcp-docs creates it, finds it empty, or recognises an index of the previous release
(which had no marker) by its exact shape; anything else is refused before a byte is written.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from ...errors import IndexFolderRefused
from .integrity import STAMP_SUFFIX

MARKER_NAME = ".mcp-docs-index"
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
_LEGACY_ENTRIES = _SQLITE_FILES | {"fulltext", MARKER_NAME, f"{MARKER_NAME}.tmp"}
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
