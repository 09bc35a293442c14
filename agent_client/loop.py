"""The bounded agentic loop: ask the model, run the tools it asks for (concurrently), feed the results
back, stop when it answers — or at the iteration limit, the budget, the deadline, or a classified error.

One question is a turn (`Agent.ask`, `Agent.resume`); the ways a turn runs are in `strategies.py`, the model
and tool calls they make in `agent_calls.py`, the prompts in `prompts.py`."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import anyio

from .agent_calls import Limits, Observer, Progress, Route, Strategy, ToolBox
from .citations import check_citations, refine
from .errors import AgentError, ErrorKind
from .evidence import Evidence, norm_id
from .models import (
    AssistantMessage,
    Citation,
    Message,
    ProviderAttempt,
    RunResult,
    ToolResultMessage,
    TurnOptions,
    UserMessage,
)
from .sessions import resumable
from .strategies import Strategies

EXPLAIN_DOCUMENTS = 6  # unverified cited documents whose outline is read to say why

__all__ = ["Agent", "Limits", "Observer", "Progress", "Route", "Strategy", "ToolBox"]


class Agent(Strategies):
    """`fallbacks`: the providers that take over the same question, history and budget when the current one
    fails in a way another provider would not repeat (`errors.FALLBACK_KINDS`), in order.
    `strategy` "plan", `expand` and `reflect` add calls around the same loop, within the same limits."""

    async def ask(
        self, question: str, history: Sequence[Message] = (), *, progress: Progress | None = None
    ) -> RunResult:
        """Answer `question` after `history`. `progress` receives the new messages as they are settled: the
        question at once, then each tool round as it completes, then the answer — what a session stores, so
        a turn cut by a crash, a kill or Ctrl-C keeps its tool results (see `resume`)."""
        messages: list[Message] = [*history, UserMessage(content=question, options=self._options())]
        return await self._turn(question, messages, len(history), progress, resuming=False)

    async def resume(
        self, unfinished: Sequence[Message], history: Sequence[Message] = (), *, progress: Progress | None = None
    ) -> RunResult:
        """Finish a cut turn, or one that stopped on an error: `unfinished` is its stored question and tool
        rounds (and the error's closing line, dropped here). The tool results already stored are used as they
        are (and as evidence for the citations); only calls that never got a result run, then the turn goes on
        the way it was asked (its stored `TurnOptions`: the strategy, --expand, --reflect), whatever this agent's
        own options are. `new_messages` and `progress` get only what this run adds."""
        stored = resumable(unfinished)
        if not stored or not isinstance(stored[0], UserMessage):
            raise AgentError(ErrorKind.CONFIGURATION, "Nothing to resume: the stored turn has no question.")
        options, own = stored[0].options, self._options()
        messages: list[Message] = [*history, *stored]
        if options is not None:
            self.strategy, self.expand, self.reflect = options.strategy, options.expand, options.reflect
        try:
            result = await self._turn(stored[0].content, messages, len(messages), progress, resuming=True)
        finally:  # a chat's agent answers its next questions with its own options
            self.strategy, self.expand, self.reflect = own.strategy, own.expand, own.reflect
        if options is None:
            result.notes.append(
                "The stored turn does not say how it was asked (a session written by an older docs-agent): "
                f"it was resumed with {own.flags()}."
            )
        elif options != own:
            result.notes.append(
                f"Resumed the way the turn was asked ({options.flags()}), not with the options given now "
                f"({own.flags()})."
            )
        return result

    def _options(self) -> TurnOptions:
        return TurnOptions(strategy=self.strategy, expand=self.expand, reflect=self.reflect)

    async def _turn(
        self, question: str, messages: list[Message], start: int, progress: Progress | None, *, resuming: bool
    ) -> RunResult:
        self._active = 0  # every question starts with the first provider
        self._evidence = []
        self._seen = Evidence()
        self._progress, self._stored = progress, len(messages) if resuming else start
        if not resuming:
            self._checkpoint(messages)  # the question, before any call: a crash still leaves it to resume
        result = RunResult(provider=self.model.provider, model=self.model.model)
        try:
            with anyio.fail_after(self.limits.deadline_s):
                if resuming:
                    await self._resume(question, messages, result)
                else:
                    await self._start(question, messages, result)
                if self.reflect and result.stopped_reason == "final" and result.answer.strip():
                    await self._reflect(question, messages, result)
        except TimeoutError:
            self._fail(
                result,
                AgentError(
                    ErrorKind.TIMEOUT,
                    f"No answer within the {self.limits.deadline_s:g} s deadline for this question.",
                    retryable=True,
                ),
            )
        except AgentError as exc:
            self._fail(result, exc)
        result.citations = await self._explain(check_citations(result.answer, self._seen))
        result.providers_tried.append(
            ProviderAttempt(
                provider=result.provider,
                model=result.model,
                error=result.error if result.stopped_reason == "error" else None,
            )
        )
        last = messages[-1]
        if result.stopped_reason == "error" or not isinstance(last, AssistantMessage) or last.tool_calls:
            # keep the stored history valid: every question ends with a plain assistant message; after an error
            # it is marked, so the turn can still be resumed from its stored tool results
            messages.append(
                AssistantMessage(
                    content=result.answer or f"(no answer: {result.error or result.stopped_reason})",
                    failed=result.stopped_reason == "error",
                )
            )
        result.new_messages = messages[start:]
        self._checkpoint(messages)
        return result

    async def _start(self, question: str, messages: list[Message], result: RunResult) -> None:
        """A turn from its question: the expansion, then the strategy."""
        if self.expand:
            await self._expand(question, messages, result)
        if self.strategy == "plan":
            await self._run_plan(messages, result)
        else:
            await self._run(messages, result)

    async def _resume(self, question_text: str, messages: list[Message], result: RunResult) -> None:
        """The stored rounds count as done: their results are evidence, their turns count as iterations; the
        calls of the last round that never got a result run now; then the turn's strategy goes on. A turn cut
        before its first tool round starts again from its question (with its --expand, if it had one)."""
        question = max(i for i, m in enumerate(messages) if isinstance(m, UserMessage))
        tail = messages[question + 1 :]
        answered = {m.tool_call_id for m in tail if isinstance(m, ToolResultMessage)}
        reused = 0
        for m in tail:
            if isinstance(m, AssistantMessage) and m.tool_calls:
                result.iterations += 1
            elif isinstance(m, ToolResultMessage) and not m.is_error:
                self._seen.merge(m.shown)
                self._evidence.append(m.content)
                reused += 1
        last_calls = next((m for m in reversed(tail) if isinstance(m, AssistantMessage) and m.tool_calls), None)
        missing = [c for c in last_calls.tool_calls if c.id not in answered] if last_calls else []
        result.notes.append(
            f"Resumed an unfinished answer: {reused} stored tool result{'s' if reused != 1 else ''} reused, "
            f"{len(missing)} call{'s' if len(missing) != 1 else ''} that never got a result run now."
        )
        if missing:
            rerun = await self._run_tools(missing, result)
            messages.extend(rerun)
            self._checkpoint(messages)
            self._stop_if_server_gone(rerun)
        if last_calls is None:
            await self._start(question_text, messages, result)
        elif self.strategy == "plan":
            await self._resume_plan(messages, result)
        else:
            await self._run(messages, result)

    @staticmethod
    def _fail(result: RunResult, exc: AgentError) -> None:
        result.stopped_reason = "error"
        result.error = exc.message
        result.error_kind = exc.kind.value
        result.retryable = exc.retryable

    async def _explain(self, citations: list[Citation]) -> list[Citation]:
        """Say why each unverified citation failed: one outline read per cited document (at most
        `EXPLAIN_DOCUMENTS`, a few seconds) tells a document that does not exist from one never read, and a
        heading the document lacks from one never shown. It only explains; nothing it returns verifies."""
        reader = next((t for t in self.tools.tools if t.name == "read_document"), None)
        wanted = list(dict.fromkeys(c.id for c in citations if not c.verified))[:EXPLAIN_DOCUMENTS]
        if reader is None or not wanted:
            return citations
        outlines: dict[str, Evidence | None] = {}

        async def outline(doc_id: str) -> None:
            args = {"id": doc_id, "mode": "outline"}
            with contextlib.suppress(Exception):
                with anyio.fail_after(min(self.limits.tool_timeout_s, 10.0)):
                    outcome = await self.tools.call(reader, args, timeout_s=min(self.limits.tool_timeout_s, 10.0))
                if outcome.is_error:
                    outlines[norm_id(doc_id)] = None
                else:
                    found = Evidence()
                    found.add(reader.name, args, outcome.structured, outcome.text)
                    outlines[norm_id(doc_id)] = found

        async with anyio.create_task_group() as tg:
            for doc_id in wanted:
                tg.start_soon(outline, doc_id)
        return refine(citations, outlines)
