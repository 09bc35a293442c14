"""How a turn gathers its evidence and answers: the react loop (the model calls tools turn by turn),
`--strategy plan` (one plan of tool calls run round by round, re-planned once on failure, then one answer),
`--expand` (the question and its reformulations searched at once and fused) and `--reflect` (one critique,
one revision)."""

from __future__ import annotations

import json

from .agent_calls import AgentCalls, _unique_ids
from .errors import AgentError, ErrorKind
from .expansion import EXPAND_PROMPT, Reformulations, distinct_queries, render_fused
from .models import (
    AssistantMessage,
    Message,
    ModelTurn,
    PlanReport,
    ReflectionReport,
    RunResult,
    StepReport,
    StoppedReason,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from .planner import Plan, levels, parse_plan, planner_prompt, resolve_arguments
from .prompts import FINAL_CALL_NOTE, PLAN_ANSWER_NOTE, RESUME_PLAN_NOTE
from .reflection import (
    CRITIC_PROMPT,
    REVISE_NOTE,
    Critique,
    critique_request,
    revision_request,
)
from .structured import parse_reply
from .text import clip, short


class Strategies(AgentCalls):
    """The strategies a turn runs (chosen in `loop.Agent._turn`), written over the calls of `AgentCalls`."""

    async def _run(self, messages: list[Message], result: RunResult) -> None:
        """The react loop; iterations already spent (by a plan that failed) count against the limit."""
        while result.iterations < self.limits.max_iterations:
            result.iterations += 1
            turn = await self._call(messages, result, allow_tools=True)
            calls = _unique_ids(turn.tool_calls, messages)
            if not calls:
                self._final(turn, messages, result, "final")
                return
            if self._over_budget(result):
                messages.append(AssistantMessage(content=turn.text))
                result.answer, result.stopped_reason = turn.text, "budget"
                return
            calls, dropped = calls[: self.limits.max_tool_calls_per_turn], calls[self.limits.max_tool_calls_per_turn :]
            messages.append(AssistantMessage(content=turn.text, tool_calls=[self._bounded(c) for c in calls]))
            results = await self._run_tools(calls, result)
            if dropped:
                note = (
                    f"\n\n[docs-agent: you asked for {len(calls) + len(dropped)} tool calls in one turn; only the "
                    f"first {len(calls)} ran, the other {len(dropped)} were dropped. At most "
                    f"{self.limits.max_tool_calls_per_turn} calls per turn: ask again for those you still need.]"
                )
                results[-1] = results[-1].model_copy(update={"content": results[-1].content + note})
            messages.extend(results)
            self._checkpoint(messages)
            self._stop_if_server_gone(results)
        if self._over_budget(result):
            result.stopped_reason = "budget"
            return
        # Iteration limit: one last call without tools, for the best answer from what was gathered.
        turn = await self._call(messages, result, allow_tools=False, system=self.system_prompt + FINAL_CALL_NOTE)
        self._final(turn, messages, result, "max_iterations")

    @staticmethod
    def _final(turn: ModelTurn, messages: list[Message], result: RunResult, reason: StoppedReason) -> None:
        """Store the answer. An empty one is an error (nothing to show or store), or a note after the iteration
        limit (that stop is already the outcome); one cut at the output limit is kept with a note."""
        if not turn.text.strip() and reason == "max_iterations":
            result.notes.append(
                "The model gave no answer after the iteration limit"
                + (" (it asked for more tool calls instead)." if turn.tool_calls else ".")
            )
        elif not turn.text.strip():
            raise AgentError(
                ErrorKind.BAD_RESPONSE,
                f"{result.provider}: the model sent an empty reply (finish reason: {turn.finish_reason}), "
                "neither an answer nor a tool call; retry, or try another model.",
                retryable=True,
            )
        if turn.finish_reason in ("length", "max_tokens"):
            result.notes.append("The model stopped at its output limit: the answer may be cut.")
        messages.append(AssistantMessage(content=turn.text))
        result.answer, result.stopped_reason = turn.text, reason

    # ------------------------------------------------------------ --strategy plan

    async def _run_plan(self, messages: list[Message], result: RunResult) -> None:
        """Plan, run the plan's rounds (each round's steps concurrently), re-plan once if a step failed, answer.
        A plan that cannot run is one sentence in `plan.note`, and the react loop answers instead."""
        report = result.plan = PlanReport()
        plan, problem = await self._make_plan(messages, result)
        if plan is not None:
            failure = await self._execute(plan, messages, result)
            if failure and not self._over_budget(result):
                report.replanned = True
                retry = [
                    *messages,
                    UserMessage(
                        content=f"[docs-agent: {failure} Write a new plan that gets the "
                        "answer another way, using the results above.]"
                    ),
                ]
                plan, problem = await self._make_plan(retry, result)
                if plan is not None:
                    failure = await self._execute(plan, messages, result)
            if plan is not None and failure:
                report.note = f"After a re-plan, {failure[0].lower()}{failure[1:]}"
        if plan is None:
            report.note = f"{problem} docs-agent answered with the react loop instead."
            self.observer.on_note(report.note)
            await self._run(messages, result)
            return
        await self._answer_after_plan(messages, result)

    async def _resume_plan(self, messages: list[Message], result: RunResult) -> None:
        """A plan turn cut after some of its rounds (or stopped on an error). Its plan is not stored, so one call
        plans the steps still needed with the stored results in view (not stored: a side request), they run, and
        the answer is written without tools as after any plan. A reply that is no usable plan: the answer comes
        from the stored results alone, and `plan.note` says so."""
        report = result.plan = PlanReport()
        plan, problem = await self._make_plan([*messages, UserMessage(content=RESUME_PLAN_NOTE)], result)
        if plan is None:
            report.note = f"{problem} docs-agent answered from the stored tool results."
            self.observer.on_note(report.note)
        else:
            failure = await self._execute(plan, messages, result)
            if failure:
                report.note = failure
        await self._answer_after_plan(messages, result)

    async def _answer_after_plan(self, messages: list[Message], result: RunResult) -> None:
        """The answer of a plan turn, written without tools from the results in `messages` (unless over budget)."""
        if self._over_budget(result):
            result.stopped_reason = "budget"
            return
        result.iterations += 1
        turn = await self._call(messages, result, allow_tools=False, system=self.system_prompt + PLAN_ANSWER_NOTE)
        self._final(turn, messages, result, "final")

    async def _make_plan(self, messages: list[Message], result: RunResult) -> tuple[Plan | None, str | None]:
        max_steps = self.limits.max_tool_calls_per_turn
        result.iterations += 1
        turn = await self._call(
            messages, result, allow_tools=False, side=True, system=planner_prompt(self.tools.tools, max_steps)
        )
        plan, problem = parse_plan(turn.text, self.tools.tools, max_steps)
        if plan is None:
            return None, problem
        rounds = len(levels(plan) or ())
        room = self.limits.max_iterations - result.iterations - 1  # the answer needs the last iteration
        if rounds > room:
            return None, (
                f"The plan needs {rounds} rounds of tool calls; only {max(room, 0)} fit in "
                f"--max-iterations {self.limits.max_iterations}."
            )
        return plan, None

    async def _execute(self, plan: Plan, messages: list[Message], result: RunResult) -> str | None:
        """Run the plan round by round; None when every step succeeded, else one sentence on what failed."""
        assert result.plan is not None
        outputs: dict[int, str] = {}
        for round_steps in levels(plan) or ():
            if self._over_budget(result):
                return None
            result.iterations += 1
            calls = _unique_ids(
                [
                    ToolCall(
                        id=f"plan_{result.iterations}_{s.id}", name=s.tool, arguments_json=resolve_arguments(s, outputs)
                    )
                    for s in round_steps
                ],
                messages,
            )
            messages.append(AssistantMessage(tool_calls=[self._bounded(c) for c in calls]))
            results = await self._run_tools(calls, result)
            messages.extend(results)
            self._checkpoint(messages)
            self._stop_if_server_gone(results)
            failed = []
            for step, call, res in zip(round_steps, calls, results, strict=False):
                outputs[step.id] = res.content
                result.plan.steps.append(
                    StepReport(
                        id=step.id,
                        tool=step.tool,
                        arguments=json.loads(call.arguments_json),
                        after=step.after,
                        is_error=res.is_error,
                    )
                )
                if res.is_error:
                    failed.append(f"step {step.id} ({step.tool}) failed: {short(res.content, 200)}")
            if failed:
                return "The " + "; the ".join(failed)
        return None

    # ------------------------------------------------------------ --expand

    async def _expand(self, question: str, messages: list[Message], result: RunResult) -> None:
        """Search the question and its reformulations at once; the fused list becomes the first search result."""
        search = next((t for t in self.tools.tools if t.name == "search_documents"), None)
        if search is None:
            result.notes.append(
                "--expand needs a search_documents tool, which this server does not have; "
                "docs-agent searched without expansion."
            )
            return
        turn = await self._call(
            [UserMessage(content=question)], result, allow_tools=False, side=True, system=EXPAND_PROMPT
        )
        reply, problem = parse_reply(turn.text, Reformulations, "reformulation reply")
        if reply is None:
            result.notes.append(f"--expand: {problem} docs-agent searched without expansion.")
            return
        queries = distinct_queries(question, reply.queries)
        self.observer.on_reformulations(queries[1:])
        calls = [
            ToolCall(id=f"expand_{i}", name=search.wire_name, arguments_json=json.dumps({"query": q}))
            for i, q in enumerate(queries)
        ]
        ran = [r for r in await self._run_tools(calls, result) if not r.is_error]
        found = [r.content for r in ran]
        shown = [s for r in ran for s in r.shown]  # a resumed turn needs the fused searches' evidence
        call = ToolCall(id="expand", name=search.wire_name, arguments_json=json.dumps({"query": question}))
        (call,) = _unique_ids([call], messages)
        messages.append(AssistantMessage(tool_calls=[call]))
        messages.append(
            ToolResultMessage(
                tool_call_id=call.id,
                name=call.name,
                content=clip(render_fused(queries, found), self.limits.result_chars),
                shown=shown,
            )
        )
        self._checkpoint(messages)

    # ------------------------------------------------------------ --reflect

    async def _reflect(self, question: str, messages: list[Message], result: RunResult) -> None:
        """One critique; below the threshold one revision without tools. The revised answer replaces the first."""
        if self._over_budget(result):
            return
        turn = await self._call(
            [UserMessage(content=critique_request(question, self._evidence, result.answer))],
            result,
            allow_tools=False,
            side=True,
            system=CRITIC_PROMPT,
        )
        critique, problem = parse_reply(turn.text, Critique, "critique")
        if critique is None:
            result.notes.append(f"--reflect: {problem} docs-agent kept the answer as it was.")
            return
        report = result.reflection = ReflectionReport(**critique.model_dump())
        if not critique.needs_revision or self._over_budget(result):
            return
        self.observer.on_note(
            f"review: grounded {critique.grounded}/5, complete {critique.complete}/5, "
            f"cited {critique.cited}/5 — revising"
        )
        turn = await self._call(
            [*messages, UserMessage(content=revision_request(critique))],
            result,
            allow_tools=False,
            system=self.system_prompt + REVISE_NOTE,
        )
        if turn.text.strip():
            messages[-1] = AssistantMessage(content=turn.text)  # the stored history keeps the revised answer
            result.answer, report.revised = turn.text, True
