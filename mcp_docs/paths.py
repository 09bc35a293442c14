"""The root jail: every path a user, a model or a file names goes through here.

Containment is decided on *resolved* paths compared component-wise
(`Path.is_relative_to`), never on strings: `/x/docs` must not admit
`/x/docs_evil`, and a symlink is judged by where it leads. What may be served
(the extension list, dot-folders, node_modules, the ignore file) is judged on
every name a path goes by, so a link cannot reach what those rules exclude.
Any error while deciding fails closed.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

import pathspec

from .errors import FileTooLarge, NotServed, PathOutsideRoot

ALWAYS_SKIPPED_DIRS = frozenset({"node_modules", "__pycache__"})
MAX_LINK_HOPS = 40  # as Linux: more links than this on one path is a loop
MAX_REMEMBERED_FOLDERS = 65_536


def is_skipped_dir_name(name: str) -> bool:
    return name.startswith(".") or name in ALWAYS_SKIPPED_DIRS


def is_utf8_name(name: str) -> bool:
    """False for a name holding bytes that are not UTF-8 (Linux allows any): Python hands them over as lone
    surrogates, which neither Tantivy nor SQLite nor JSON can take, so such a name can never be an id."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(name: str) -> str:
    """A name as it can be shown and stored: bytes that are not UTF-8 become U+FFFD."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


@dataclass(frozen=True)
class ServeRules:
    """Which root-relative names may be served: a wanted extension, no dot-file, no dot-folder or
    node_modules on the way, nothing the ignore file (gitignore syntax) matches."""

    extensions: tuple[str, ...] = (".md", ".markdown")  # the settings' default; the library passes the configured list
    ignore: pathspec.PathSpec | None = None
    # Every read asks about its folders again: remember the verdicts (bounded: ids come from untrusted input).
    _folder_verdicts: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    def wanted_name(self, name: str) -> bool:
        return name.lower().endswith(self.extensions) and not name.startswith(".")

    def ignored(self, rel: str, is_dir: bool = False) -> bool:
        if self.ignore is None:
            return False
        return self.ignore.match_file(rel + "/" if is_dir else rel)

    def excludes(self, rel: str, is_dir: bool = False) -> bool:
        """True if the root-relative file (or folder) `rel` may not be served; '' is the root itself."""
        if not rel:
            return False
        if is_dir:
            return self._folder_excluded(rel)
        folder, _, name = rel.rpartition("/")
        return not self.wanted_name(name) or (bool(folder) and self._folder_excluded(folder)) or self.ignored(rel)

    def _folder_excluded(self, rel: str) -> bool:
        """A folder is excluded by its own name or rule, or by any folder above it (checked top-down, no recursion)."""
        start = 0
        while True:
            end = rel.find("/", start)
            prefix = rel if end == -1 else rel[:end]
            verdict = self._folder_verdicts.get(prefix)
            if verdict is None:
                verdict = is_skipped_dir_name(prefix[start:]) or self.ignored(prefix, True)
                if len(self._folder_verdicts) >= MAX_REMEMBERED_FOLDERS:
                    self._folder_verdicts.clear()
                self._folder_verdicts[prefix] = verdict
            if verdict or end == -1:
                return verdict
            start = end + 1


class Jail:
    """Resolves document ids and paths strictly inside one root folder, and only to what may be served."""

    def __init__(self, root: str | os.PathLike[str], rules: ServeRules | None = None) -> None:
        root_path = Path(root).expanduser()
        if not root_path.is_dir():
            raise NotADirectoryError(f"root folder does not exist or is not a folder: {root_path}")
        self.root = root_path.resolve(strict=True)
        self.rules = rules or ServeRules()  # replaced whole (never mutated) when the ignore file changes
        self._root_str = str(self.root)
        self._root_prefix = self._root_str.rstrip(os.sep) + os.sep

    def doc_id_for(self, path: Path) -> str:
        """The document id (POSIX path relative to the root) of a path already inside it."""
        return path.relative_to(self.root).as_posix()

    def contains(self, path: Path) -> bool:
        """True if `path`, fully resolved (symlinks followed), exists inside the root."""
        try:
            resolved = path.resolve(strict=True)
        except (OSError, RuntimeError, ValueError):
            return False
        return resolved == self.root or resolved.is_relative_to(self.root)

    def _inside(self, resolved: str) -> bool:
        """Component-wise containment of an already resolved absolute path (the separator rules out prefix siblings)."""
        return resolved == self._root_str or resolved.startswith(self._root_prefix)

    def _relative(self, path: str) -> str | None:
        """The root-relative POSIX form of an absolute path, or None if it is not under the root."""
        if path == self._root_str:
            return ""
        if not path.startswith(self._root_prefix):
            return None
        return path[len(self._root_prefix) :].replace(os.sep, "/")

    def check_servable(self, path: str | os.PathLike[str], folder: bool | None = None) -> str:
        """Where `path` really is, if it may be served; raises otherwise. The one gate of every read and scan.

        Every name the path goes by inside the root must pass the rules: the path as named, each folder
        and link it passes through (a chain of links included), and where it finally leads; so no link,
        file or folder, reaches what the ignore file, dot-folders, node_modules or the extension list
        exclude. `folder` says how to judge the final name (None: by what it is). Raises NotServed
        (excluded, even when the excluded target is missing), PathOutsideRoot (it leads out),
        FileNotFoundError (missing or dangling) or OSError (a link loop).
        """
        named = os.fspath(path)
        rel = self._relative(named)
        if rel is None or ".." in rel.split("/"):
            raise PathOutsideRoot("the file leads outside the documents root and is refused.")
        # os.path.realpath on str: same semantics as Path.resolve, a third of the cost (this is the hot path of sync).
        try:
            real = os.path.realpath(named, strict=True)
        except OSError:  # missing, dangling or a loop: the careful walk tells which
            return self._follow(named, folder)
        if real != named:
            return self._follow(named, folder)
        # no link on the way: the name is the place
        if self.rules.excludes(rel, os.path.isdir(real) if folder is None else folder):
            raise NotServed(named)
        return real

    def _follow(self, named: str, folder: bool | None) -> str:
        """Resolve `named` one component at a time (as the kernel does), judging every place inside the root."""
        passed: list[str] = []  # places walked through as folders
        ends: list[str] = [named]  # the names the final target goes by: as named, and each link that ends the path
        pending = [p for p in reversed(named.split(os.sep)) if p not in ("", ".")]
        current = os.sep
        hops = 0
        while pending:
            name = pending.pop()
            if name == "..":
                current = os.path.dirname(current)
                continue
            place = os.path.join(current, name)
            try:
                st = os.lstat(place)
            except FileNotFoundError:
                if hops:  # a dangling link: judge the name it leads to, so an excluded target never differs from an absent one
                    ends.append(os.path.normpath(os.path.join(place, *reversed(pending))))
                    self._judge(passed, ends, bool(folder))
                raise
            if stat.S_ISLNK(st.st_mode):
                hops += 1
                if hops > MAX_LINK_HOPS:
                    raise OSError(errno.ELOOP, "too many levels of links", named)
                (passed if pending else ends).append(place)
                target = os.readlink(place)
                if os.path.isabs(target):
                    current = os.sep
                pending.extend(p for p in reversed(target.split(os.sep)) if p not in ("", "."))
                continue
            current = place
            if pending:
                passed.append(place)
        ends.append(current)
        self._judge(passed, ends, os.path.isdir(current) if folder is None else folder)
        if not self._inside(current):
            raise PathOutsideRoot("the file leads outside the documents root and is refused.")
        return current

    def _judge(self, passed: list[str], ends: list[str], is_dir: bool) -> None:
        for places, as_dir in ((passed, True), (ends, is_dir)):
            for place in places:
                rel = self._relative(place)
                if rel is not None and self.rules.excludes(rel, as_dir):
                    raise NotServed(ends[0])

    def resolve_id(self, doc_id: str) -> Path:
        """Map a user-supplied document id to a real file (or folder) inside the root that may be served.

        Refuses NUL bytes, absolute paths (POSIX, Windows drive or UNC), `..`
        in any encoding or separator style, anything whose resolved location is
        outside the root (symlinks included), and anything the rules exclude
        (NotServed, told apart from an unknown id in no way). The returned path
        is the *lexical* path under the root, so the id stays stable; the
        caller may open it.
        """
        candidate = self._lexical(doc_id)
        try:
            self.check_servable(candidate)
        except NotServed:
            raise
        except PathOutsideRoot:
            raise PathOutsideRoot(f"'{printable(doc_id)}' leads outside the documents root and is refused.") from None
        except (OSError, RuntimeError, ValueError):
            if os.path.lexists(candidate):
                raise PathOutsideRoot(f"'{printable(doc_id)}' is a dangling link and cannot be read.") from None
            raise FileNotFoundError(doc_id) from None
        if not os.path.exists(candidate):
            raise FileNotFoundError(doc_id)
        return candidate

    def read_bytes(self, path: Path, max_bytes: int) -> bytes:
        """Read a file that may be served (see `check_servable`), refusing links swapped in meanwhile.

        The resolved target is opened (never the link), with O_NOFOLLOW, and the
        opened file is checked to be the one the check approved.
        """
        resolved = self.check_servable(path, folder=False)
        # O_NONBLOCK: opening a FIFO named like a note must not hang the reader (it is refused below, not a file).
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
        try:
            fd = os.open(resolved, flags)
        except FileNotFoundError:
            raise
        except OSError as exc:
            if os.path.islink(resolved):  # swapped for a link after it was resolved
                raise PathOutsideRoot("the file changed while it was being opened and is refused.") from exc
            raise
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                what = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file (a FIFO, socket or device)"
                raise IsADirectoryError(errno.EISDIR, what, str(path))
            if os.path.realpath(resolved) != resolved:  # a parent folder swapped for a link meanwhile
                raise PathOutsideRoot("the file changed while it was being opened and is refused.")
            if st.st_size > max_bytes:
                size, limit = _sizes(st.st_size, max_bytes)
                raise FileTooLarge(f"{size} is over the {limit} limit")
            with os.fdopen(fd, "rb", closefd=False) as fh:
                data = fh.read(max_bytes + 1)
        finally:
            os.close(fd)
        if len(data) > max_bytes:
            raise FileTooLarge(f"the file grew over the {max_bytes / 1e6:.1f} MB limit")
        return data

    def relative_folder(self, folder: str) -> str:
        """Normalise a folder filter ('', 'guides', 'guides/setup/') to a clean POSIX form, jailed."""
        if folder in ("", ".", "/"):
            return ""
        candidate = self._lexical(folder)
        return candidate.relative_to(self.root).as_posix()

    def _lexical(self, raw: str) -> Path:
        if not isinstance(raw, str) or raw == "":
            raise PathOutsideRoot("An empty path is not a document id.")
        if "\x00" in raw:
            raise PathOutsideRoot("Paths containing NUL bytes are refused.")
        text = raw
        # Undo percent-encoding repeatedly so '%2e%2e%2f' and '%252e' cannot smuggle '..'.
        for _ in range(3):
            decoded = unquote(text)
            if decoded == text:
                break
            text = decoded
        if "\x00" in text:
            raise PathOutsideRoot("Paths containing NUL bytes are refused.")
        text = text.replace("\\", "/")
        if text.startswith("/") or (len(text) > 1 and text[1] == ":") or text.startswith("//"):
            raise PathOutsideRoot(
                f"'{printable(raw)}' is an absolute path; use a document id relative to the root, like 'guides/setup.md'."
            )
        parts = PurePosixPath(posixpath.normpath(text)).parts
        if any(part == ".." for part in PurePosixPath(text).parts) or (parts and parts[0] == ".."):
            raise PathOutsideRoot(f"'{printable(raw)}' points outside the documents root ('..' is refused).")
        clean = [p for p in parts if p not in ("", ".")]
        if not clean:
            return self.root
        meant = self.root.joinpath(*clean)
        # The checks above ran on the decoded form, the stricter one. But on POSIX a backslash or a '%41' is
        # an ordinary character of a file name, and the scan gives such a file its name as its id: when the id
        # names an existing file exactly as written, that file is the one meant (else `notes\draft.md` or
        # `50%25.md` would be indexed, listed and searchable, yet unreadable, and never embedded).
        if os.sep == "/" and raw != text:
            literal = [p for p in PurePosixPath(raw).parts if p not in ("", ".")]
            if literal and os.path.lexists(self.root.joinpath(*literal)):
                return self.root.joinpath(*literal)
        if not os.path.lexists(meant):  # typed composed (NFC), written decomposed (NFD, as macOS tools do), or back
            for form in ("NFC", "NFD"):
                other = [unicodedata.normalize(form, p) for p in clean]
                safe = other != clean and all(p not in ("", ".", "..") and "/" not in p for p in other)
                if safe and os.path.lexists(self.root.joinpath(*other)):
                    return self.root.joinpath(*other)
        return meant


def _sizes(size: int, limit: int) -> tuple[str, str]:
    """Both sizes in MB, or in bytes when one decimal would print them equal ('5.2 MB is over the 5.2 MB limit')."""
    mb = f"{size / 1e6:.1f} MB", f"{limit / 1e6:.1f} MB"
    return mb if mb[0] != mb[1] else (f"{size:,} bytes", f"{limit:,} bytes")


def printable(raw: str, limit: int = 120) -> str:
    """A printable, bounded rendering of untrusted input for error messages."""
    printable = "".join(ch if ch.isprintable() else "?" for ch in raw)
    return printable if len(printable) <= limit else printable[:limit] + "…"
