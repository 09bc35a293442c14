"""The root jail: every path a user, a model or a file names goes through here.

Containment is decided on *resolved* paths compared component-wise
(`Path.is_relative_to`), never on strings: `/x/docs` must not admit
`/x/docs_evil`, and a symlink is judged by where it leads. Any error while
deciding fails closed.
"""

from __future__ import annotations

import os
import posixpath
import stat
from pathlib import Path, PurePosixPath
from urllib.parse import unquote


class PathOutsideRoot(ValueError):
    """A path that names something outside the root, or that cannot be judged safely."""


class FileTooLarge(ValueError):
    """A file over the configured size limit."""


class Jail:
    """Resolves document ids and paths strictly inside one root folder."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        root_path = Path(root).expanduser()
        if not root_path.is_dir():
            raise NotADirectoryError(f"root folder does not exist or is not a folder: {root_path}")
        self.root = root_path.resolve(strict=True)
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

    def resolve_id(self, doc_id: str) -> Path:
        """Map a user-supplied document id to a real file inside the root.

        Refuses NUL bytes, absolute paths (POSIX, Windows drive or UNC), `..`
        in any encoding or separator style, and anything whose resolved
        location is outside the root (symlinks included). The returned path
        is the *lexical* path under the root, so the id stays stable; the
        caller may open it.
        """
        candidate = self._lexical(doc_id)
        if not self.contains(candidate):
            if os.path.lexists(candidate) and not candidate.exists():
                raise PathOutsideRoot(f"'{printable(doc_id)}' is a dangling link and cannot be read.")
            if os.path.lexists(candidate):
                raise PathOutsideRoot(f"'{printable(doc_id)}' leads outside the documents root and is refused.")
            raise FileNotFoundError(doc_id)
        return candidate

    def read_bytes(self, path: Path, max_bytes: int) -> bytes:
        """Read a file that must resolve inside the root, refusing links swapped in meanwhile.

        The resolved target is opened (never the link), with O_NOFOLLOW, and the
        opened file is checked to be the one the containment check approved.
        """
        # os.path.realpath on str: same semantics as Path.resolve, a third of the cost (this is the hot path of sync).
        resolved = os.path.realpath(path)
        if not self._inside(resolved):
            raise PathOutsideRoot("the file leads outside the documents root and is refused.")
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
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
                raise IsADirectoryError(str(path))
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
        return self.root.joinpath(*clean)


def _sizes(size: int, limit: int) -> tuple[str, str]:
    """Both sizes in MB, or in bytes when one decimal would print them equal ('5.2 MB is over the 5.2 MB limit')."""
    mb = f"{size / 1e6:.1f} MB", f"{limit / 1e6:.1f} MB"
    return mb if mb[0] != mb[1] else (f"{size:,} bytes", f"{limit:,} bytes")


def printable(raw: str, limit: int = 120) -> str:
    """A printable, bounded rendering of untrusted input for error messages."""
    printable = "".join(ch if ch.isprintable() else "?" for ch in raw)
    return printable if len(printable) <= limit else printable[:limit] + "…"
