"""Walk the root and list the Markdown files to index, with every file that was skipped and why.

Only stats files (cheap); reading happens in sync. Links are judged by the jail:
a file link leading outside the root or nowhere is reported and skipped; a
folder link is never followed (inside the root its files are indexed at their
real place; outside, it is refused), which also rules out link loops.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from .index.catalog import Problem
from .paths import Jail
from .settings import IGNORE_FILE_NAME

log = logging.getLogger(__name__)

ALWAYS_SKIPPED_DIRS = frozenset({"node_modules", "__pycache__"})


@dataclass(frozen=True)
class ScannedFile:
    doc_id: str
    path: Path
    size: int
    mtime_ns: int


@dataclass
class ScanResult:
    files: list[ScannedFile] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def load_ignore(root: Path) -> pathspec.PathSpec | None:
    path = root / IGNORE_FILE_NAME
    try:
        if path.is_file() and not path.is_symlink():
            return pathspec.GitIgnoreSpec.from_lines(path.read_text("utf-8", "replace").splitlines())
    except OSError as exc:
        log.warning("could not read %s: %s", path, exc)
    return None


def is_skipped_dir_name(name: str) -> bool:
    return name.startswith(".") or name in ALWAYS_SKIPPED_DIRS


class Scanner:
    def __init__(self, jail: Jail, extensions: tuple[str, ...]) -> None:
        self.jail = jail
        self.extensions = tuple(e.lower() for e in extensions)
        self.ignore = load_ignore(jail.root)

    def wanted_name(self, name: str) -> bool:
        return name.lower().endswith(self.extensions) and not name.startswith(".")

    def ignored(self, rel: str, is_dir: bool = False) -> bool:
        if self.ignore is None:
            return False
        return self.ignore.match_file(rel + "/" if is_dir else rel)

    def excluded(self, doc_id: str) -> bool:
        """True if a document id names a file that scanning would never list (dot-folders, ignores, extension)."""
        parts = doc_id.split("/")
        if any(is_skipped_dir_name(p) for p in parts[:-1]) or not self.wanted_name(parts[-1]):
            return True
        return any(self.ignored("/".join(parts[:i]), True) for i in range(1, len(parts))) or self.ignored(doc_id)

    def scan(self, under: str = "") -> ScanResult:
        result = ScanResult()
        start = self.jail.root / under if under else self.jail.root
        self._walk(start, under, result)
        return result

    def stat_one(self, doc_id: str, result: ScanResult) -> None:
        """Scan a single file (for watcher events): adds it to `result.files` or a problem."""
        path = self.jail.root / doc_id
        try:
            st = path.lstat()
        except FileNotFoundError:
            return
        except OSError as exc:
            result.problems.append(Problem(doc_id, "unreadable", str(exc.strerror or exc)))
            return
        self._consider_file(path, doc_id, st, os.path.islink(path), result)

    def _walk(self, folder: Path, rel_folder: str, result: ScanResult) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            result.problems.append(Problem(rel_folder or ".", "unreadable", f"folder could not be listed: {exc.strerror}"))
            return
        entries.sort(key=lambda e: e.name)
        for entry in entries:
            rel = f"{rel_folder}/{entry.name}" if rel_folder else entry.name
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if is_skipped_dir_name(entry.name) or self.ignored(rel, is_dir=True):
                    continue
                self._walk(Path(entry.path), rel, result)
                continue
            if is_link and os.path.isdir(entry.path):
                if not self.jail.contains(Path(entry.path)):
                    result.problems.append(Problem(rel, "outside_root", "folder link leads outside the root: not followed"))
                continue  # inside the root its files are indexed where they really are
            if not self.wanted_name(entry.name) or self.ignored(rel):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                result.problems.append(Problem(rel, "unreadable", str(exc.strerror or exc)))
                continue
            self._consider_file(Path(entry.path), rel, st, is_link, result)

    def _consider_file(self, path: Path, rel: str, st: os.stat_result, is_link: bool, result: ScanResult) -> None:
        if is_link:
            if not os.path.exists(path):
                result.problems.append(Problem(rel, "dangling_link", "link points to nothing: skipped"))
                return
            if not self.jail.contains(path):
                result.problems.append(Problem(rel, "outside_root", "link leads outside the root: skipped"))
                return
            target = Path(os.path.realpath(path)).relative_to(self.jail.root).as_posix()
            if not self.excluded(target):  # one file, one search result
                result.problems.append(Problem(rel, "duplicate_link", f"link to {target}, indexed there"))
                return
            try:
                st = path.stat()
            except OSError as exc:
                result.problems.append(Problem(rel, "unreadable", str(exc.strerror or exc)))
                return
            if not os.path.isfile(path):
                return
        result.files.append(ScannedFile(rel, path, st.st_size, st.st_mtime_ns))
