"""What every strategy of the agentic loop calls: one model call (the fallback to the next provider, usage and
cost, an estimate when the provider reports none, the call log) and one round of tool calls run concurrently,
within the limits; with the settings and the per-question state they share, and the hooks that show progress."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import anyio

from .calllog import CallLog, CallRecord
from .context import trim_history
from .errors import FALLBACK_KINDS, AgentError, ErrorKind, classify
from .evidence import Evidence, tool_kind
from .mcp_session import ToolOutcome
from .models import (
    AssistantMessage,
    Message,
    ModelTurn,
    ProviderAttempt,
    RunResult,
    Shown,
    ToolCall,
    ToolCallRecord,
    ToolResultMessage,
    ToolSpec,
    Usage,
)
from .prompts import SYSTEM_PROMPT
from .providers import ChatModel, Prices, cost_usd
from .redaction import scrub
from .settings import DEFAULT_MAX_TOOL_ARGUMENT_BYTES, DEFAULT_MAX_TOOL_CALLS_PER_TURN
from .text import clip, estimate_tokens, short

Strategy = Literal["react", "plan"]
USAGE_ESTIMATED = (
    "The provider did not report token usage: tokens and cost are estimates (about 4 characters per token), "
    "and --max-tokens / --max-cost were applied to them."
)
Progress = Callable[[list[Message]], None]


@dataclass
class Limits:
    max_iterations: int = 10
    max_cost_usd: float | None = None
    max_tokens: int | None = None
    result_chars: int = 12_000  # per tool result, then cut with a note
    context_tokens: int = 64_000  # history sent per call, trimmed oldest-first beyond this
    deadline_s: float = 300.0  # per question, all calls and tools included
    tool_timeout_s: float = 60.0
    max_tool_calls_per_turn: int = DEFAULT_MAX_TOOL_CALLS_PER_TURN  # the rest are dropped, with a note
    max_tool_argument_bytes: int = DEFAULT_MAX_TOOL_ARGUMENT_BYTES  # larger arguments: an error result


@dataclass(frozen=True)
class Route:
    """A provider to ask: its adapter and its prices."""

    model: ChatModel
    prices: Prices


class ToolBox(Protocol):
    tools: list[ToolSpec]

    def lookup(self, wire: str) -> ToolSpec | None: ...

    async def call(self, spec: ToolSpec, arguments: dict[str, Any], *, timeout_s: float = 60.0) -> ToolOutcome: ...


class Observer:
    """Hooks for showing progress; the default shows nothing."""

    def on_text(self, delta: str) -> None: ...

    def on_turn_end(self) -> None: ...

    def on_tool_start(self, call: ToolCall, arguments: dict[str, Any] | None) -> None: ...

    def on_tool_end(self, call: ToolCall, outcome: ToolOutcome, duration_ms: int) -> None: ...

    def on_reformulations(self, queries: list[str]) -> None: ...

    def on_note(self, text: str) -> None: ...


class AgentCalls:
    """The agent's settings, its per-question state, and the calls every strategy makes (see `loop.Agent`)."""

    def __init__(
        self,
        model: ChatModel,
        tools: ToolBox,
        prices: Prices,
        *,
        limits: Limits | None = None,
        log: CallLog | None = None,
        session: str | None = None,
        observer: Observer | None = None,
        system_prompt: str = SYSTEM_PROMPT,
        fallbacks: Sequence[Route] = (),
        strategy: Strategy = "react",
        expand: bool = False,
        reflect: bool = False,
    ):
        self.model = model
        self.tools = tools
        self.prices = prices
        self.routes = [Route(model, prices), *fallbacks]
        self._active = 0
        self._evidence: list[str] = []  # the text of this question's successful searches and reads (for --reflect)
        self._seen = Evidence()  # the documents and headings those results showed (for the citations)
        self._progress: Progress | None = None  # where settled messages go (a session), see ask()
        self._stored = 0  # messages[:_stored] have been handed to _progress
        self.limits = limits or Limits()
        self.log = log
        self.session = session
        self.observer = observer or Observer()
        self.system_prompt = system_prompt
        self.strategy = strategy
        self.expand = expand
        self.reflect = reflect

    def _checkpoint(self, messages: list[Message]) -> None:
        """Hand the messages settled since the last checkpoint to `progress` (the session store)."""
        new, self._stored = messages[self._stored :], len(messages)
        if new and self._progress is not None:
            try:
                self._progress(new)
            except Exception as exc:  # a full disk must not lose the answer; say it once
                self._progress = None
                self.observer.on_note(f"the session could not be saved ({type(exc).__name__}: {exc})")

    def _oversized(self, call: ToolCall) -> int | None:
        size = len(call.arguments_json.encode())
        return size if size > self.limits.max_tool_argument_bytes else None

    def _bounded(self, call: ToolCall) -> ToolCall:
        """The call as the history keeps it: oversized arguments would be re-sent with every later call, and
        arguments that are no JSON object make servers that parse the history (vLLM templates, Mistral) answer
        400 to every later request of the session. Either is kept as `{}`; the error result says what was wrong."""
        if self._oversized(call) or call.parsed_arguments()[0] is None:
            return call.model_copy(update={"arguments_json": "{}"})
        return call

    def _over_budget(self, result: RunResult) -> bool:
        lim = self.limits
        return (lim.max_tokens is not None and result.usage.total_tokens >= lim.max_tokens) or (
            lim.max_cost_usd is not None and result.cost_usd >= lim.max_cost_usd
        )

    async def _call(
        self,
        messages: list[Message],
        result: RunResult,
        *,
        allow_tools: bool,
        system: str | None = None,
        side: bool = False,
    ) -> ModelTurn:
        """`side`: a call that writes JSON for docs-agent (plan, reformulations, critique), not the answer:
        nothing of it is streamed, and when its messages hold no tool traffic no tools are declared."""
        system = system or self.system_prompt
        tools = self.tools.tools
        if side and not any(isinstance(m, ToolResultMessage) for m in messages):
            tools = []
        to_send = trim_history(messages, self.limits.context_tokens, system)
        while True:
            route = self.routes[self._active]
            started = time.perf_counter()
            record = CallRecord(
                time=time.time(), session=self.session, provider=route.model.provider, model=route.model.model
            )
            try:
                turn = scrub(
                    await route.model.complete(
                        system, to_send, tools, allow_tools=allow_tools, on_text=None if side else self.observer.on_text
                    )
                )
                break
            except Exception as exc:
                error = classify(exc, provider=route.model.provider)
                record.status, record.error_kind = "error", error.kind.value
                record.latency_ms = int((time.perf_counter() - started) * 1000)
                self._log(record)
                if error.kind not in FALLBACK_KINDS or self._active + 1 >= len(self.routes):
                    raise error from None
                # the same call goes to the next provider; its adapter converts the neutral history
                result.providers_tried.append(
                    ProviderAttempt(
                        provider=route.model.provider,
                        model=route.model.model,
                        error=error.message,
                        error_kind=error.kind.value,
                    )
                )
                self._active += 1
                now = self.routes[self._active].model
                result.provider, result.model = now.provider, now.model
            finally:
                self.observer.on_turn_end()
        if turn.usage.total_tokens == 0:  # no usage reported at all
            turn = turn.model_copy(update={"usage": self._estimated(turn, system, to_send, tools, result)})
        cost = cost_usd(turn.usage, route.prices)
        result.usage = result.usage + turn.usage
        result.cost_usd += cost
        record.latency_ms = int((time.perf_counter() - started) * 1000)
        record.prompt_tokens, record.cached_tokens = turn.usage.prompt_tokens, turn.usage.cached_tokens
        record.completion_tokens, record.cost_usd = turn.usage.completion_tokens, cost
        self._log(record)
        return turn

    @staticmethod
    def _estimated(
        turn: ModelTurn, system: str, sent: Sequence[Message], tools: Sequence[ToolSpec], result: RunResult
    ) -> Usage:
        """A provider that reports no usage (some local servers, proxies that drop the last chunk) must not get
        past --max-tokens / --max-cost for free: the counts it left out are estimated from the text sent and
        received (~4 characters per token), and a note says the figures are estimates."""
        prompt = estimate_tokens(
            system + json.dumps([m.model_dump() for m in sent]) + json.dumps([t.model_dump() for t in tools])
        )
        completion = estimate_tokens(turn.text + "".join(c.name + c.arguments_json for c in turn.tool_calls))
        if USAGE_ESTIMATED not in result.notes:
            result.notes.append(USAGE_ESTIMATED)
        return Usage(prompt_tokens=prompt, completion_tokens=completion)

    @staticmethod
    def _stop_if_server_gone(results: Sequence[ToolResultMessage]) -> None:
        """A round whose server connection closed ends the turn with an error, once its results are stored: the
        model can do nothing with a dead server, and the turn stays resumable (the unanswered calls run again)."""
        gone = next((r for r in results if r.unanswered), None)
        if gone is not None:
            raise AgentError(
                ErrorKind.MCP,
                f"The MCP server stopped answering ({short(gone.content, 200)}): the turn stops here, its tool "
                "results are stored; resume it once the server is back.",
            )

    def _log(self, record: CallRecord) -> None:
        if self.log is not None:
            with contextlib.suppress(Exception):  # a full disk must not lose the answer
                self.log.record(record)

    async def _run_tools(self, calls: list[ToolCall], result: RunResult) -> list[ToolResultMessage]:
        """Run the calls concurrently; results come back one-to-one, in the order of the calls."""
        outcomes: list[tuple[ToolResultMessage, ToolCallRecord] | None] = [None] * len(calls)

        async def run_one(i: int, call: ToolCall) -> None:
            started = time.perf_counter()
            spec = self.tools.lookup(call.name)
            oversized = self._oversized(call)
            args, problem = (None, None) if oversized else call.parsed_arguments()
            self.observer.on_tool_start(call, args)
            if oversized:
                outcome = ToolOutcome(
                    text=f"The arguments are {oversized} bytes; the limit is "
                    f"{self.limits.max_tool_argument_bytes} bytes. Call the tool again with "
                    "shorter arguments.",
                    is_error=True,
                )
            elif spec is None:
                names = ", ".join(t.wire_name for t in self.tools.tools) or "none"
                outcome = ToolOutcome(text=f"Unknown tool {call.name!r}. Available tools: {names}.", is_error=True)
            elif problem is not None:
                outcome = ToolOutcome(text=f"Invalid arguments for {spec.wire_name}: {problem}", is_error=True)
            else:
                outcome = await self.tools.call(spec, args or {}, timeout_s=self.limits.tool_timeout_s)
            duration_ms = int((time.perf_counter() - started) * 1000)
            self.observer.on_tool_end(call, outcome, duration_ms)
            text = clip(outcome.text, self.limits.result_chars)
            shown: list[Shown] = []
            if spec is not None and not outcome.is_error and tool_kind(spec.name) in ("search", "section", "document"):
                self._evidence.append(text)
                shown = self._seen.add(
                    spec.name, args or {}, outcome.structured, outcome.text, cut=text != outcome.text
                )
            outcomes[i] = (
                ToolResultMessage(
                    tool_call_id=call.id,
                    name=call.name,
                    content=text,
                    is_error=outcome.is_error,
                    shown=shown,
                    unanswered=outcome.unanswered,
                ),
                ToolCallRecord(
                    name=spec.name if spec else call.name,
                    arguments=args
                    if args is not None
                    else (f"({oversized} bytes, not shown)" if oversized else call.arguments_json),
                    is_error=outcome.is_error,
                    duration_ms=duration_ms,
                ),
            )

        async with anyio.create_task_group() as tg:
            for i, call in enumerate(calls):
                tg.start_soon(run_one, i, call)
        done = [o for o in outcomes if o is not None]
        result.tool_calls.extend(rec for _, rec in done)
        return [msg for msg, _ in done]


def _unique_ids(calls: list[ToolCall], history: Sequence[Message]) -> list[ToolCall]:
    """The calls with ids unique across the whole history: some servers number calls per turn ('call_0' every
    time), docs-agent's own ids restart with each question of a session, and the Anthropic Messages API rejects
    a history (a session or a --fallback carried over) in which two tool calls share an id."""
    taken = {c.id for m in history if isinstance(m, AssistantMessage) for c in m.tool_calls}
    out = []
    for i, call in enumerate(calls):
        if not call.id or call.id in taken:
            base, n = call.id or f"call_{i}", 1
            while f"{base}_{n}" in taken:
                n += 1
            call = call.model_copy(update={"id": f"{base}_{n}"})
        taken.add(call.id)
        out.append(call)
    return out
