"""The writer's last sync, published in the index folder for the processes that only read the index.

With `serve --workers N` the reading workers answer from the index the writing worker keeps fresh. Their
`/health` said "ok" while the writer's syncs failed (the single-process server says "degraded" through
`Library.sync_error`): the writer now keeps why its last sync failed (or that it succeeded) in a small JSON file
beside the catalog, replaced atomically, and readers report it.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from .ownership import SYNC_STATE_NAME

log = logging.getLogger(__name__)

MAX_STATE_BYTES = 4096  # a sentence and a process id: anything longer is not ours


def publish(folder: Path, error: str | None) -> None:
    """Record the outcome of the writer's last sync (`error` None: it succeeded). Best effort: a folder that
    cannot be written is already what `error` says, and must not turn the sync's outcome into another failure."""
    path = folder / SYNC_STATE_NAME
    tmp = folder / f"{SYNC_STATE_NAME}.tmp"
    try:
        tmp.write_text(json.dumps({"error": error, "writer_pid": os.getpid()}), encoding="utf-8")
        os.replace(tmp, path)  # a reader sees the old state or the new one, never half of one
    except OSError as exc:
        log.warning("could not record the last sync's outcome for the reading workers: %s", exc)


def last_error(folder: Path) -> str | None:
    """Why the writer's last sync failed, or None (it succeeded, none ran yet, or no state is readable)."""
    try:
        with (folder / SYNC_STATE_NAME).open("rb") as fh:
            raw = fh.read(MAX_STATE_BYTES + 1)
    except OSError:
        return None
    if len(raw) > MAX_STATE_BYTES:
        return None
    try:
        state = json.loads(raw)
    except ValueError:
        return None
    error = state.get("error") if isinstance(state, dict) else None
    return error if isinstance(error, str) else None
