"""Reading one Markdown file, the one way every reader does it: the sync, the embedding worker and the tools.

Read through the jail (size limit, serving rules), turn UTF-16 with a BOM into UTF-8, refuse binary content,
hash the bytes (the catalog and the vector store compare these hashes), decode with a warning for invalid UTF-8,
normalise line ends, and parse within the time budget. The parse cache (parse_cache.py) memoises `parse_file` for the read tools.
"""

from __future__ import annotations

import codecs
import hashlib
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import BinaryContent
from .markdown import ParsedDocument, normalize_text, parse_markdown
from .paths import Jail

BINARY_SNIFF_BYTES = 8192  # a NUL byte in the first 8 KiB means binary, as git decides
INVALID_UTF8 = "invalid UTF-8: decoded with replacement characters"
WINDOWS_1252 = "invalid UTF-8: read as Windows-1252 (no UTF-8 letter in it, every byte a Windows-1252 one)"
UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


@dataclass(frozen=True)
class ParsedFile:
    text: str  # decoded, BOM stripped, LF line ends
    parsed: ParsedDocument
    warnings: list[str] = field(default_factory=list)


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:BINARY_SNIFF_BYTES]


def decode(data: bytes) -> tuple[str, list[str]]:
    """The text, and a warning when the bytes are not valid UTF-8 (they are decoded anyway): as Windows-1252 when
    none of them is UTF-8 beyond ASCII and all are Windows-1252, else with replacement characters."""
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError:
        replaced = data.decode("utf-8", "replace")
    if replaced.replace("\ufffd", "").isascii():
        # No UTF-8 letter anywhere: perhaps a note saved by an older Windows editor. With replacement characters
        # its 'Crème brûlée' was 'Cr?me br?l?e', a word no search found and a title shown broken.
        try:
            text = data.decode("cp1252")
        except UnicodeDecodeError:  # one of the five bytes Windows-1252 leaves undefined: not that either
            return replaced, [INVALID_UTF8]
        if _reads_as_windows_1252(text):
            return text, [WINDOWS_1252]
    return replaced, [INVALID_UTF8]


# Windows-1252's punctuation that stands alone in prose ('20 €', 'a — b', '“ x ”').
_LONE_MARKS = frozenset(
    "\u2013\u2014\u20ac\u2026\u201c\u201d\u2018\u2019\u00ab\u00bb\u00b0\u00a0\u2022\u00a7\u00a9\u00ae\u00b7"
)
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


def _reads_as_windows_1252(text: str) -> bool:
    """Whether each run of non-ASCII characters reads as prose does: at most three, letters inside a word (an ASCII
    letter or digit beside them: 'Crème', '“quoted”') or punctuation that stands alone ('20 €'). Random bytes
    ('ÿþÃ(', 'øˆ€€€') keep their replacement characters: they are not text in any encoding."""
    for m in _NON_ASCII_RUN.finditer(text):
        run = m.group()
        if len(run) > 3:
            return False
        if all(c in _LONE_MARKS for c in run):
            continue
        before = text[m.start() - 1] if m.start() else ""
        after = text[m.end()] if m.end() < len(text) else ""
        if not (before.isascii() and before.isalnum()) and not (after.isascii() and after.isalnum()):
            return False
        if not all(c.isalpha() or c in _LONE_MARKS for c in run):
            return False
    return True


def file_stem(doc_id: str) -> str:
    """The file name without its extension: the title of a document with no heading or title."""
    return posixpath.basename(doc_id).rsplit(".", 1)[0]


def read_markdown(jail: Jail, path: Path, max_bytes: int) -> bytes:
    """The bytes of a servable, not too large, not binary file; the jail's errors (`PathOutsideRoot`,
    `FileTooLarge`, `NotServed`, `OSError`) or `BinaryContent` otherwise."""
    data = jail.read_bytes(path, max_bytes)
    if data.startswith(UTF16_BOMS):
        data = from_utf16(data)
    if looks_binary(data):
        raise BinaryContent("binary content (NUL bytes)")
    return data


def from_utf16(data: bytes) -> bytes:
    """UTF-16 with a BOM (Notepad's "Unicode", Windows PowerShell's `>`) as UTF-8, so every reader (the hash, line
    numbers, offsets) sees one encoding; bytes that are not UTF-16 after all are returned as they are."""
    try:
        return data.decode("utf-16").encode("utf-8")
    except UnicodeError:  # an odd length or a lone surrogate: judged as it is (its NUL bytes make it binary)
        return data


def parse_file(data: bytes, stem: str, seconds: float | None) -> ParsedFile:
    """Decode, normalise and parse; `ParseTimeout` past `seconds`."""
    text, warnings = decode(data)
    text = normalize_text(text)
    return ParsedFile(text, parse_markdown(text, stem, seconds=seconds), warnings)
