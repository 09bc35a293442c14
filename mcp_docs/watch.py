"""Keep the index fresh: watch the root with watchfiles and sync what changed, debounced.

Runs on a daemon thread. A saved, created, renamed or deleted file (or folder)
reaches `library.sync(paths=[ids])` about a quarter of a second after the
editor stops writing. Dot-folders (`.git`, `.obsidian`, …) are ignored; a
change to `.mcpdocsignore` reloads the ignore rules and rescans everything.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

import watchfiles

from .errors import IndexBusy, RootMissing
from .library import Library
from .paths import is_skipped_dir_name
from .scan import load_rules
from .settings import IGNORE_FILE_NAME

log = logging.getLogger(__name__)

DEBOUNCE_MS = 400
STEP_MS = 80
RETRY_SECONDS = 1.0
# `rm -rf root` deletes notes one by one: a batch of deletions is held this long, and dropped if the root went
# with them, so a vault deleted (and restored) while watched keeps its index, vectors included.
DELETE_SETTLE_SECONDS = 0.5
FULL_SYNC = "\x00full"


class Watcher:
    """Watch a library's root and sync changes; `start()` / `stop()`."""

    def __init__(
        self,
        library: Library,
        on_synced: Callable[[list[str]], None] | None = None,
        debounce_ms: int = DEBOUNCE_MS,
        step_ms: int = STEP_MS,
        delete_settle_seconds: float = DELETE_SETTLE_SECONDS,
    ) -> None:
        self.library = library
        self.root = library.settings.root
        self.on_synced = on_synced
        self.debounce_ms = debounce_ms
        self.step_ms = step_ms
        self.delete_settle_seconds = delete_settle_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.ready = threading.Event()  # set once the OS watch is in place and what changed before it is synced
        self.arms = 0  # how many times the folder list was (re)built: once, plus once per folder change

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="mcp-docs-watch", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    # -- internals ---------------------------------------------------------------------------
    def relevant(self, path: str) -> str | None:
        """The id (or folder) a raw event path stands for, or None if it cannot matter."""
        try:
            rel = Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return None
        if rel in ("", "."):
            return None
        if rel == IGNORE_FILE_NAME:
            return FULL_SYNC
        parts = rel.split("/")
        if any(p.startswith(".") for p in parts):
            return None
        name = parts[-1]
        if self.library.jail.rules.wanted_name(name):
            return rel
        full = self.root / rel
        # A folder (created, renamed, deleted, or replaced by a file: what was indexed under it is gone): sync
        # whatever lies under it. Other files never matter.
        if full.is_dir() or not full.exists() or self.library.catalog.fingerprints([rel]):
            return rel
        return None

    def watched_folders(self) -> list[Path]:
        """The real folders to watch: never through a folder link (a link to /usr would cost thousands of
        OS watches and see changes outside the root), never dot-folders, node_modules or ignored folders.
        A stack, not recursion (os.walk recurses before Python 3.12): a tree may nest deeper than its limit."""
        rules = self.library.jail.rules
        folders = [self.root]
        stack = [(self.root, "")]
        while stack:
            folder, rel_dir = stack.pop()
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:  # unreadable or gone: the scan reports it
                continue
            for entry in entries:
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                try:
                    if not entry.is_dir(follow_symlinks=False):  # links are never followed
                        continue
                except OSError:
                    continue
                if is_skipped_dir_name(entry.name) or rules.ignored(rel, is_dir=True):
                    continue
                folders.append(Path(entry.path))
                stack.append((Path(entry.path), rel))
        return folders

    def _ids(self, folders: list[Path]) -> set[str]:
        return {p.relative_to(self.root).as_posix() for p in folders}

    def _root_identity(self) -> tuple[int, int] | None:
        """Which folder is at the root's path now (None: none). OS watches follow the folder they were put on,
        not its path: after the root is deleted and restored, or renamed away and another one renamed in,
        they watch nothing or the old folder."""
        try:
            st = os.stat(self.root)
        except OSError:
            return None
        return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None

    def _run(self) -> None:
        pending: set[str] = set()
        # Whatever changed before the first watch was in place is caught by one full (stat-only) sync.
        resync: set[str] = {FULL_SYNC}
        gone_logged = False
        while not self._stop.is_set():
            try:
                identity = self._root_identity()
                if identity is None:  # deleted or moved away: wait for it to come back, the index kept as it is
                    if not gone_logged:
                        log.warning("the documents root %s is gone: waiting for it to come back", self.root)
                        gone_logged = True
                    pending, resync = set(), {FULL_SYNC}
                    self._stop.wait(RETRY_SECONDS)
                    continue
                gone_logged = False
                folders = self.watched_folders()
                watched = self._ids(folders)
                self.arms += 1
                rearm = False
                for changes in watchfiles.watch(
                    *folders,
                    recursive=False,
                    debounce=self.debounce_ms,
                    step=self.step_ms,
                    stop_event=self._stop,
                    rust_timeout=int(RETRY_SECONDS * 1000),
                    yield_on_timeout=True,
                    raise_interrupt=False,
                    ignore_permission_denied=True,
                ):
                    if self._root_identity() != identity:  # gone or replaced: watch what is there now, then resync
                        pending, resync = set(), {FULL_SYNC}
                        break
                    if resync:  # what changed before this watch was in place: rescan now
                        pending |= resync
                        resync = set()
                    for _change, path in changes:
                        rel = self.relevant(path)
                        if rel is not None:
                            pending.add(rel)
                            if rel == FULL_SYNC or rel in watched or (self.root / rel).is_dir():
                                rearm = True  # a folder came or went, or the ignore rules changed: re-list folders
                    if any(change == watchfiles.Change.deleted for change, _ in changes) and pending:
                        self._stop.wait(self.delete_settle_seconds)
                        if self._root_identity() != identity:
                            pending, resync = set(), {FULL_SYNC}
                            break
                    if not pending and self.library.storage_lost():  # the index folder was deleted: rebuild it
                        pending.add(FULL_SYNC)
                    if pending:
                        full = FULL_SYNC in pending
                        pending = self._sync(pending)
                        if full and not rearm and self._ids(self.watched_folders()) != watched:
                            rearm = True  # folders made before this watch was in place: watch them too
                    self.ready.set()  # watching, and what changed before the watch was in place is synced
                    if self._stop.is_set():
                        return
                    if rearm:
                        # Changes made while that sync ran and until the new watch is in place are never
                        # reported (a folder of new notes, a folder replaced by a file): one stat-only full
                        # sync once watching again finds them (10k unchanged notes: ~0.1 s).
                        resync = {FULL_SYNC}
                        break
            except Exception as exc:  # never let the watcher die silently: log and start watching again
                if self._stop.is_set():
                    return
                if "Unable to decode path" in str(exc):  # a user's file name, not a fault: no traceback
                    log.warning("a file name that is not UTF-8 changed (%s): rescanning everything", exc)
                else:
                    log.exception("file watcher failed; restarting in %.0f s", RETRY_SECONDS)
                # The failed batch of changes is lost (watchfiles fails all of it, e.g. on one name that is not
                # UTF-8): one full stat-only sync once watching again finds them, and lists that name.
                resync = {FULL_SYNC}
                self._stop.wait(RETRY_SECONDS)

    def _sync(self, pending: set[str]) -> set[str]:
        """Sync `pending`; returns what must be retried (the index was busy)."""
        started = time.perf_counter()
        try:
            if FULL_SYNC in pending:
                self.library.jail.rules = load_rules(self.root, self.library.settings.extensions)
                report = self.library.sync()
            else:
                report = self.library.sync(paths=sorted(pending))
        except IndexBusy:
            log.info("index busy (another mcp-docs process is writing): will retry %d change(s)", len(pending))
            return pending
        except RootMissing:  # deleted meanwhile: the next look at the root waits for it, then syncs everything
            return set()
        except Exception:
            log.exception("sync after file changes failed")
            return set()
        changed = report.changed_ids + report.deleted_ids
        log.info("synced %d change(s) in %.0f ms", len(changed), (time.perf_counter() - started) * 1000)
        if self.on_synced is not None and changed:
            try:
                self.on_synced(changed)
            except Exception:
                log.exception("on_synced callback failed")
        return set()
