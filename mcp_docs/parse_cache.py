"""Parsed documents by content, so reading an unchanged file does not parse it again.

Every read tool parses the file as it is on disk now; an agent reading a long document
section by section would otherwise parse it once per call. Entries are keyed by the hash
of the file's bytes (and its name, which can become the title), so an edit is always seen,
and the cache is bounded in entries and in characters.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from .errors import ParseTimeout
from .loader import ParsedFile, content_hash, parse_file

MAX_ENTRIES = 64
MAX_CHARS = 32_000_000  # text kept in all entries; a parsed document holds about three times its text


class ParseCache:
    def __init__(self, max_entries: int = MAX_ENTRIES, max_chars: int = MAX_CHARS) -> None:
        self.max_entries = max_entries
        self.max_chars = max_chars
        self.parses = 0  # files actually parsed, for tests and stats
        self._entries: OrderedDict[tuple[str, str], ParsedFile | ParseTimeout] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def parse(self, data: bytes, stem: str, seconds: float | None = None) -> ParsedFile:
        """The parsed file; a file that once ran out of its time budget fails again at once."""
        key = (content_hash(data), stem)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
        if isinstance(entry, ParseTimeout):
            raise ParseTimeout(str(entry))
        if entry is not None:
            return entry
        with self._lock:
            self.parses += 1
        try:
            result: ParsedFile | ParseTimeout = parse_file(data, stem, seconds)
        except ParseTimeout as exc:
            result = exc
        self._store(key, result, 0 if isinstance(result, ParseTimeout) else len(result.text))
        if isinstance(result, ParseTimeout):
            raise ParseTimeout(str(result))
        return result

    def _store(self, key: tuple[str, str], entry: ParsedFile | ParseTimeout, chars: int) -> None:
        if chars > self.max_chars:
            return
        with self._lock:
            if key in self._entries:  # parsed twice at once: keep the first
                return
            self._entries[key] = entry
            self._chars += chars
            while len(self._entries) > self.max_entries or self._chars > self.max_chars:
                _, old = self._entries.popitem(last=False)
                if isinstance(old, ParsedFile):
                    self._chars -= len(old.text)
