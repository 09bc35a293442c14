"""Terminal output: the answer streamed to stdout, tool activity compactly on stderr. Everything that comes
from a model or a document goes through `terminal_safe` first (no escape sequences reach the terminal)."""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any, TextIO

from .loop import Observer
from .mcp_session import ToolOutcome
from .models import RunResult, ToolCall
from .text import short, terminal_safe


def human_size(n: int) -> str:
    return f"{n} chars" if n < 1000 else f"{n / 1000:.1f}k chars"


class TerminalObserver(Observer):
    def __init__(
        self,
        *,
        stream_text: bool = True,
        show_tools: bool = True,
        verbose: bool = False,
        out: TextIO | None = None,
        err: TextIO | None = None,
    ):
        self.stream_text = stream_text
        self.show_tools = show_tools
        self.verbose = verbose
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self._wrote_text = False

    def on_text(self, delta: str) -> None:
        if self.stream_text:
            self.out.write(terminal_safe(delta))
            self.out.flush()
            self._wrote_text = True

    def on_turn_end(self) -> None:
        if self._wrote_text:
            self.out.write("\n")
            self.out.flush()
            self._wrote_text = False

    def on_tool_start(self, call: ToolCall, arguments: dict[str, Any] | None) -> None:
        pass

    def on_tool_end(self, call: ToolCall, outcome: ToolOutcome, duration_ms: int) -> None:
        if not self.show_tools:
            return
        args = call.arguments_json.strip() or "{}"
        with contextlib.suppress(ValueError):
            args = json.dumps(json.loads(args), ensure_ascii=False, separators=(",", ":"))
        status = "error" if outcome.is_error else human_size(len(outcome.text))
        # the model names the tool, at any length
        line = f"  · {short(call.name, 60)} {short(args, 100)} → {status} in {duration_ms} ms"
        if outcome.is_error:
            line += f": {short(outcome.text, 120)}"
        self.err.write(terminal_safe(line) + "\n")
        self.err.flush()

    def on_reformulations(self, queries: list[str]) -> None:
        if self.verbose:
            self.err.write(terminal_safe("  · searching also: " + " | ".join(queries)) + "\n")
            self.err.flush()

    def on_note(self, text: str) -> None:
        if self.show_tools:
            self.err.write(terminal_safe(f"  · {text}") + "\n")
            self.err.flush()


def notes(result: RunResult) -> list[str]:
    """One line per option that could not do its part (a plan, reformulations or a critique that did not parse)."""
    return [terminal_safe(f"  ! {n}") for n in result.notes]


def unverified_citations(result: RunResult) -> list[str]:
    """One warning line per cited source that the tool results of this run did not show, with the reason."""
    return [
        terminal_safe(
            f"  ! unverified citation: {short(c.id, 200)}"
            + (f" — {short(c.heading, 200)}" if c.heading else "")
            + f" ({c.reason or 'never read'})"
        )
        for c in result.citations
        if not c.verified
    ]


def fallback_line(result: RunResult) -> str | None:
    """When another provider than the first answered: which failed (with its error class) and which answered,
    in one line, so a fallback is not visible in --json only."""
    failed = [a for a in result.providers_tried if a.error is not None]
    if not failed or result.stopped_reason == "error":
        return None
    chain = ", then ".join(f"{a.provider}/{a.model} failed ({a.error_kind or 'error'})" for a in failed)
    return terminal_safe(f"  ! fallback: {chain}; {result.provider}/{result.model} answered")


def summary_line(result: RunResult) -> str:
    u = result.usage
    approx = "~" if any(n.startswith("The provider did not report token usage") for n in result.notes) else ""
    parts = [
        result.stopped_reason,
        f"{result.iterations} iteration{'s' if result.iterations != 1 else ''}",
        f"{len(result.tool_calls)} tool call{'s' if len(result.tool_calls) != 1 else ''}",
        f"{approx}{u.prompt_tokens:,} in / {approx}{u.completion_tokens:,} out tokens",
        f"{approx}${result.cost_usd:.4f}",
        f"{result.provider}/{result.model}",
    ]
    return "[" + " · ".join(parts) + "]"
