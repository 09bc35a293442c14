"""Text hygiene: terminal-safe output (mcp_docs.terminal, shared with mcp-docs) and bounded tool results."""

from __future__ import annotations

from mcp_docs.terminal import json_safe, terminal_safe  # one sanitiser for both command lines


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


__all__ = ["clip", "estimate_tokens", "json_safe", "short", "terminal_safe"]
