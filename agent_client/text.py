"""Text hygiene: terminal-safe output and bounded tool results."""

from __future__ import annotations

import re

# CSI / OSC / other escape sequences, then any remaining C0/C1 control character except \n and \t.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """Strip ANSI escapes and control characters (keeps newlines and tabs) before printing untrusted text."""
    return _CONTROL.sub("", _ANSI.sub("", text.replace("\r\n", "\n")))


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
