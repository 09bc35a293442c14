"""The checks every tool applies to its arguments before it looks anything up: text that is valid Unicode, no NUL
where the index matches, a mode from the allowed list, a whole number. Each refusal is one `ArgumentInvalid`
sentence, the same from the MCP server and the command line."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from .errors import ArgumentInvalid
from .paths import is_utf8_name, printable

M = TypeVar("M", bound=str)


def _unicode(value: Any, what: str) -> None:
    """Refuse text holding lone surrogates: JSON can carry them ('\\udce9'), and so can a command line naming a
    file whose name is not UTF-8 (which the index skips). They can be neither searched nor sent back."""
    if isinstance(value, str) and not is_utf8_name(value):
        raise ArgumentInvalid(
            f"The {what} '{printable(value)}' is not valid Unicode text (a lone surrogate such as \\udce9, or bytes "
            "of a file name that are not UTF-8); names that are not UTF-8 are not indexed or served."
        )


def _no_nul(value: Any, what: str) -> None:
    """Refuse a NUL character in a value that is matched in the index: no tag holds one (front matter values
    lose theirs when parsed), and PostgreSQL's text cannot carry one. (Ids and folders: the jail refuses it.)"""
    if isinstance(value, str) and "\x00" in value:
        raise ArgumentInvalid(
            f"The {what} '{printable(value)}' contains a NUL character (\\x00), which no {what} can hold: remove it."
        )


def _choice(value: Any, allowed: tuple[M, ...], tool: str) -> M:
    """`value` as one of the `allowed` modes, or the sentence the server gives for any bad argument."""
    for mode in allowed:
        if value == mode:
            return mode
    listed = ", ".join(json.dumps(m) for m in allowed)
    shown = json.dumps(printable(str(value), 40), ensure_ascii=False)
    raise ArgumentInvalid(f"{tool}: argument 'mode' must be one of {listed}, not {shown}.")


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise ArgumentInvalid(f"{name} must be a whole number.")
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise ArgumentInvalid(f"{name} must be a whole number.") from None
