"""The one scrubber: no secret docs-agent knows of leaves it, whatever a model, a server or a document echoes.

Secrets are every value registered here (the provider key, whatever variable it came from; the MCP bearer
token), every environment value whose variable's name says it is a secret (any provider's key, tokens), and
anything shaped like a well-known key. The scrubber runs at the boundaries only:

- what a model returns, as it enters the loop (answer text and tool-call arguments: so the key reaches no
  MCP server, no session, no `--json`),
- everything written to stdout and stderr (`scrubbed_stdio`, which also catches streamed answer text, where a
  key may arrive split across chunks),
- every row written to SQLite (sessions and the call log).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TextIO, TypeVar

from pydantic import BaseModel

REDACTED = "[redacted]"

_KEY_PATTERNS = [
    re.compile(r"\b(?:sk|pk|rk|gsk|xai|sess)-[A-Za-z0-9_\-\*\.]{6,}"),  # sk-…, sk-ant-…, gsk_… style keys
    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),  # Google keys
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9_\-\.=:/+]{8,}"),
]
_BEARER_TAIL = re.compile(r"(?i)bearer\s+$")
_MAX_HELD = 1024  # a "word" longer than this (and than every known secret) is let through in pieces
_REGISTERED: set[str] = set()
# environment values under these names are secrets whatever docs-agent uses them for
_SECRET_NAME_HINTS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")
# shorter values are not redacted: replacing every "abc" in an answer would mangle it and protect nothing
MIN_SECRET_LEN = 8


def env_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """Every environment value that is a secret by its variable's name (provider keys, tokens…)."""
    env = os.environ if environ is None else environ
    return [v for k, v in env.items() if len(v) >= MIN_SECRET_LEN and any(h in k.upper() for h in _SECRET_NAME_HINTS)]


def register_secret(value: str | None) -> None:
    """Redact this value from now on, whatever its shape or the name of the variable it came from
    (a key read through --api-key-env SOMEVAR is a secret even when SOMEVAR does not say so)."""
    if value and len(value) >= MIN_SECRET_LEN:
        _REGISTERED.add(value)


def _secret_values() -> list[str]:
    values = set(_REGISTERED) | set(env_secrets())
    # the same secret inside a JSON string (tool arguments, --json output) when it holds quotes or backslashes
    values |= {json.dumps(v)[1:-1] for v in values}
    return sorted(values, key=len, reverse=True)


def _redact_values(text: str, values: list[str] | None = None) -> str:
    for value in _secret_values() if values is None else values:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def _redact_shapes(text: str) -> str:
    for pattern in _KEY_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, text)
    return text


def redact(text: str, values: list[str] | None = None) -> str:
    """Replace every known secret value and anything shaped like a credential."""
    return _redact_shapes(_redact_values(text, values))


T = TypeVar("T")


def scrub(value: T, values: list[str] | None = None) -> T:
    """`redact` applied to every string inside `value` (str, list, tuple, dict, or a pydantic model)."""
    if values is None:  # once per structure: a turn may hold thousands of strings
        values = _secret_values()
    if isinstance(value, str):
        return redact(value, values)  # type: ignore[return-value]
    if isinstance(value, BaseModel):
        return type(value).model_validate(scrub(value.model_dump(), values))
    if isinstance(value, dict):
        return {scrub(k, values): scrub(v, values) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, (list, tuple)):
        return type(value)(scrub(v, values) for v in value)
    return value


def _held_from(text: str) -> int:
    """Where the tail that might still grow into a secret starts: the last (partial) word, with a `Bearer `
    before it, or a prefix of a known secret that holds whitespace."""
    secrets = _secret_values()
    floor = max(0, len(text) - max([_MAX_HELD, *map(len, secrets)]))
    start = len(text)
    while start > floor and not text[start - 1].isspace():
        start -= 1
    bearer = _BEARER_TAIL.search(text, 0, start)
    if bearer:
        start = bearer.start()
    for secret in secrets:
        if any(c.isspace() for c in secret):
            for k in range(min(len(secret) - 1, len(text)), 0, -1):
                if text.endswith(secret[:k]):
                    start = min(start, len(text) - k)
                    break
    return start


class ScrubbingWriter(io.TextIOBase):
    """A text stream that redacts before writing. It holds back the trailing partial word (until more text, a
    newline, or `drain`) so a secret streamed in pieces is still caught whole."""

    def __init__(self, target: TextIO):
        self.target = target
        self._pending = ""

    def write(self, s: str) -> int:
        # known values are replaced as soon as they are whole; shapes only once their word is complete,
        # or a key-shaped word would be cut where the held part starts and its end let through
        text = _redact_values(self._pending + s)
        cut = _held_from(text)
        self._pending = text[cut:]
        if cut:
            self.target.write(_redact_shapes(text[:cut]))
        return len(s)

    def flush(self) -> None:
        self.target.flush()

    def drain(self) -> None:
        """Write out what was held back (the end of the output)."""
        if self._pending:
            self.target.write(redact(self._pending))
            self._pending = ""
        self.target.flush()

    def isatty(self) -> bool:
        return self.target.isatty()

    def fileno(self) -> int:
        return self.target.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.target, "encoding", None) or "utf-8"


@contextmanager
def scrubbed_stdio() -> Iterator[None]:
    """Everything written to stdout and stderr inside the block goes through the scrubber."""
    saved = sys.stdout, sys.stderr
    writers = ScrubbingWriter(saved[0]), ScrubbingWriter(saved[1])
    sys.stdout, sys.stderr = writers
    try:
        yield
    finally:
        for w in writers:
            with contextlib.suppress(OSError, ValueError):  # a closed pipe at exit loses nothing we could still show
                w.drain()
        sys.stdout, sys.stderr = saved
