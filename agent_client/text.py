"""Text hygiene: terminal-safe output and bounded tool results."""

from __future__ import annotations

import json
import re

# CSI / OSC / other escape sequences, then any remaining C0/C1 control character except \n and \t.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Explicit bidi embeddings, overrides and isolates: they reorder what the terminal shows ('txt.exe' for
# 'exe.txt', "Trojan Source"); the implicit marks (LRM, RLM, ALM) that right-to-left text needs are kept.
_BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
_LINE_SEPARATORS = re.compile(r"[\u2028\u2029]")
# What JSON leaves raw with ensure_ascii=False but a terminal may act on (C1 controls such as CSI, DEL) or
# that reorders or breaks lines: printed as \uXXXX escapes instead, which decode to the same text.
_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def terminal_safe(text: str) -> str:
    """Strip ANSI escapes, control characters (keeps newlines and tabs) and bidi overrides before printing
    untrusted text."""
    text = _LINE_SEPARATORS.sub("\n", text.replace("\r\n", "\n"))
    return _BIDI.sub("", _CONTROL.sub("", _ANSI.sub("", text)))


def json_safe(value: object) -> str:
    """`value` as one line of JSON, readable (non-ASCII kept) but with no character a terminal would act on:
    JSON escapes only U+0000-U+001F; the rest of the list above is escaped here, inside strings only."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))


def clip(text: str, budget_chars: int) -> str:
    """Cut a tool result to `budget_chars`, at a line boundary when possible, with a note saying what was cut."""
    if budget_chars <= 0 or len(text) <= budget_chars:
        return text
    cut = text.rfind("\n", 0, budget_chars)
    if cut < budget_chars // 2:
        cut = budget_chars
    dropped = len(text) - cut
    return (
        text[:cut] + f"\n[truncated by docs-agent: {dropped} more characters not shown. "
        "Read a narrower section, or call the tool again with an offset to continue.]"
    )


def estimate_tokens(text: str) -> int:
    """A cheap, provider-independent estimate (≈ 4 characters per token)."""
    return (len(text) + 3) // 4


def short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
