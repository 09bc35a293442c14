"""Walk the root and list the Markdown files to index, with every file that was skipped and why.

Only stats files (cheap); reading happens in sync. Links are judged by the jail
(`Jail.check_servable`): a link leading outside the root, nowhere, or to
anything the rules exclude (ignored, dot-folder, node_modules, extension) is
reported and skipped; a folder link is never followed (inside the root its
files are indexed at their real place; outside or excluded, it is refused),
which also rules out link loops.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from .errors import NotServed, PathOutsideRoot
from .paths import Jail, ServeRules, is_skipped_dir_name, is_utf8_name, shown_name
from .settings import IGNORE_FILE_NAME

log = logging.getLogger(__name__)

EXCLUDED_LINK = "link leads to a file or folder that is not served (ignored, hidden or not Markdown): skipped"
INVALID_NAME = "the name is not valid UTF-8 (an id must be text): skipped; rename the file"
INVALID_FOLDER_NAME = "the folder name is not valid UTF-8 (an id must be text): its files are skipped; rename it"


@dataclass(frozen=True)
class Problem:
    """A file that was skipped or only partly read, as `status` reports it."""

    path: str
    kind: str  # too_large | binary | outside_root | dangling_link | unreadable | invalid_utf8 | front_matter | ...
    detail: str


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
            return _ignore_spec(path.read_text("utf-8", "replace").splitlines())
    except OSError as exc:
        log.warning("could not read %s: %s", path, exc)
    return None


def _ignore_spec(lines: list[str]) -> pathspec.PathSpec:
    """The patterns of the ignore file; one that cannot be read ('[z-a]', a lone '!') is left out with a warning,
    as git leaves it out, instead of stopping every index run."""
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, re.error):  # what pathspec raises, naming neither the file nor the line
        kept = []
        for number, line in enumerate(lines, 1):
            try:
                pathspec.GitIgnoreSpec.from_lines([line])
            except (ValueError, re.error) as exc:
                log.warning("%s line %d, %r, is not a pattern (%s): left out", IGNORE_FILE_NAME, number, line, exc)
            else:
                kept.append(line)
        return pathspec.GitIgnoreSpec.from_lines(kept)


def load_rules(root: Path, extensions: Iterable[str]) -> ServeRules:
    """The serving rules of a root: the configured extensions and its ignore file (read now)."""
    return ServeRules(tuple(e.lower() for e in extensions), load_ignore(root))


class Scanner:
    def __init__(self, jail: Jail) -> None:
        self.jail = jail

    def scan(self, under: str = "") -> ScanResult:
        result = ScanResult()
        if under and self.jail.rules.excludes(under, is_dir=True):
            return result
        start = self.jail.root / under if under else self.jail.root
        self._walk(start, under, result)
        return result

    def stat_one(self, doc_id: str, result: ScanResult) -> None:
        """Scan a single file or folder link (for watcher events), as the walk would: a file or a problem."""
        path = self.jail.root / doc_id
        try:
            st = path.lstat()
        except (FileNotFoundError, NotADirectoryError):  # gone, or a folder on its way is now a file
            return
        except OSError as exc:
            result.problems.append(Problem(shown_name(doc_id), "unreadable", str(exc.strerror or exc)))
            return
        if not is_utf8_name(doc_id):
            self._invalid_name(doc_id, os.path.isdir(path), result)
            return
        if os.path.islink(path) and os.path.isdir(path):
            self._consider_folder_link(path, doc_id, result)
            return
        if self.jail.rules.excludes(doc_id):
            return
        # A file reached through a folder link is judged as a link: it is indexed where it really is, if at all.
        self._consider_file(path, doc_id, st, os.path.realpath(path) != os.fspath(path), result)

    def _walk(self, folder: Path, rel_folder: str, result: ScanResult) -> None:
        """Depth-first in name order, with a stack of listings rather than recursion: a tree nested deeper than
        Python's recursion limit (a runaway `cp -r notes notes/old`) is legal and must not stop the scan."""
        rules = self.jail.rules
        stack = [(self._listing(folder, rel_folder, result), rel_folder)]
        while stack:
            entries, rel_folder = stack[-1]
            entry = next(entries, None)
            if entry is None:
                stack.pop()
                continue
            rel = f"{rel_folder}/{entry.name}" if rel_folder else entry.name
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if not is_utf8_name(entry.name):
                self._invalid_name(rel, is_dir or (is_link and os.path.isdir(entry.path)), result)
                continue
            if is_dir:
                if not (is_skipped_dir_name(entry.name) or rules.ignored(rel, is_dir=True)):
                    stack.append((self._listing(Path(entry.path), rel, result), rel))
                continue
            if is_link and os.path.isdir(entry.path):
                self._consider_folder_link(Path(entry.path), rel, result)
                continue  # inside the root its files are indexed where they really are
            if not rules.wanted_name(entry.name) or rules.ignored(rel):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                result.problems.append(Problem(rel, "unreadable", str(exc.strerror or exc)))
                continue
            self._consider_file(Path(entry.path), rel, st, is_link, result)

    @staticmethod
    def _listing(folder: Path, rel_folder: str, result: ScanResult) -> Iterator[os.DirEntry[str]]:
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            result.problems.append(
                Problem(rel_folder or ".", "unreadable", f"folder could not be listed: {exc.strerror}")
            )
            return iter(())
        return iter(sorted(entries, key=lambda e: e.name))

    def _invalid_name(self, rel: str, is_dir: bool, result: ScanResult) -> None:
        """Reported (shown with U+FFFD) when the rules would have served it, so nothing is skipped silently."""
        if not self.jail.rules.excludes(rel, is_dir=is_dir):
            detail = INVALID_FOLDER_NAME if is_dir else INVALID_NAME
            result.problems.append(Problem(shown_name(rel), "invalid_name", detail))

    def _consider_folder_link(self, path: Path, rel: str, result: ScanResult) -> None:
        try:
            real = self.jail.check_servable(path, folder=True)
        except PathOutsideRoot:
            result.problems.append(Problem(rel, "outside_root", "folder link leads outside the root: not followed"))
        except NotServed:
            if not self.jail.rules.excludes(
                rel, is_dir=True
            ):  # a link whose own name is excluded is not ours to report
                result.problems.append(Problem(rel, "excluded_link", EXCLUDED_LINK))
        except OSError as exc:
            result.problems.append(Problem(rel, "unreadable", str(exc.strerror or exc)))
        else:
            result.problems.append(Problem(rel, "folder_link", _inside_folder_link(real, path, self.jail.root)))

    def _consider_file(self, path: Path, rel: str, st: os.stat_result, is_link: bool, result: ScanResult) -> None:
        if is_link:  # never indexed under its own name: its target is indexed where it is, or may not be served
            try:
                real = self.jail.check_servable(path, folder=False)
            except NotServed:
                result.problems.append(Problem(rel, "excluded_link", EXCLUDED_LINK))
            except PathOutsideRoot:
                result.problems.append(Problem(rel, "outside_root", "link leads outside the root: skipped"))
            except FileNotFoundError:
                result.problems.append(Problem(rel, "dangling_link", "link points to nothing: skipped"))
            except OSError as exc:
                result.problems.append(Problem(rel, "unreadable", str(exc.strerror or exc)))
            else:
                target = Path(real).relative_to(self.jail.root).as_posix()
                result.problems.append(Problem(rel, "duplicate_link", f"link to {target}, indexed there"))
            return
        result.files.append(ScannedFile(rel, path, st.st_size, st.st_mtime_ns))


def _inside_folder_link(real: str, link: Path, root: Path) -> str:
    """Why a folder link inside the root is not followed, in the words `status` shows: its files are already
    indexed where they really are, and following it could only index them twice or loop (`loop -> .`)."""
    target = Path(real).relative_to(root).as_posix()
    if target == "." or os.fspath(link.parent).startswith(real + os.sep) or os.fspath(link.parent) == real:
        return f"folder link to {'the root' if target == '.' else target}, a folder it sits in (a loop): not followed"
    return f"folder link to {target}, indexed there: not followed"


# How many entries of the root `holds_wanted_file` looks at before it answers that it does not know.
MAX_ENTRIES_LOOKED_AT = 20_000


def holds_wanted_file(jail: Jail, max_entries: int = MAX_ENTRIES_LOOKED_AT) -> bool | str:
    """Whether the root holds a file the rules serve, looking no further than the first one found; when it cannot
    tell, why not, as the end of a sentence: it looked at `max_entries` entries without finding one, or a folder
    could not be listed.

    An empty catalog means either an empty folder or one not indexed yet (a status before the first `index`, a
    search while the first sync commits its first batch); telling the two apart must not cost a full scan of a
    large tree. Past the bound it says it does not know: taking such a folder to hold Markdown told a user who had
    just indexed a 20k-file folder without any to run `mcp-docs index` again. A folder it cannot list is not an
    empty one either: os.walk passes over it in silence, and status said a root the user may not read held no
    Markdown."""
    rules = jail.rules
    seen = 0
    unlisted: list[OSError] = []
    for folder, dirs, files in os.walk(jail.root, onerror=unlisted.append):
        rel_folder = Path(folder).relative_to(jail.root).as_posix()
        rel_folder = "" if rel_folder == "." else rel_folder
        for name in files:
            if not rules.excludes(f"{rel_folder}/{name}" if rel_folder else name):
                return True
        dirs[:] = [d for d in dirs if not rules.excludes(f"{rel_folder}/{d}" if rel_folder else d, is_dir=True)]
        seen += len(files) + len(dirs)
        if seen > max_entries:
            return f"the first {max_entries:,} entries of {jail.root} hold no Markdown file"
    if unlisted:
        first = unlisted[0]
        where = Path(first.filename or jail.root)
        named = "the root itself" if where == jail.root else shown_name(where.relative_to(jail.root).as_posix())
        more = f" and {len(unlisted) - 1:,} more" if len(unlisted) > 1 else ""
        return (
            f"{jail.root} holds no Markdown file in the folders that could be listed; {named}{more} could not be: "
            f"{first.strerror or first}"
        )
    return False
