"""The context budget: history trimmed oldest-first, in whole units, before each LLM call.

A unit is either a past exchange (a user message and everything up to the next user message) or, within the
current question, an assistant message together with its tool results — so an assistant message with tool
calls is never separated from its results. The system prompt (sent separately) and the current question
are always kept, and so is the most recent unit."""

from __future__ import annotations

from collections.abc import Sequence

from .models import AssistantMessage, Message, ToolResultMessage, UserMessage
from .text import estimate_tokens


def message_tokens(m: Message) -> int:
    if isinstance(m, AssistantMessage):
        return (
            4 + estimate_tokens(m.content) + sum(estimate_tokens(c.name + c.arguments_json) + 8 for c in m.tool_calls)
        )
    if isinstance(m, ToolResultMessage):
        return 8 + estimate_tokens(m.content)
    return 4 + estimate_tokens(m.content)


def _units(messages: Sequence[Message]) -> tuple[list[list[Message]], UserMessage | None, list[list[Message]]]:
    q = max((i for i, m in enumerate(messages) if isinstance(m, UserMessage)), default=None)
    if q is None:
        before: Sequence[Message] = []
        question = None
        after = messages
    else:
        before, question, after = messages[:q], messages[q], messages[q + 1 :]
    past: list[list[Message]] = []
    for m in before:
        if isinstance(m, UserMessage) or not past:
            past.append([m])
        else:
            past[-1].append(m)
    current: list[list[Message]] = []
    for m in after:
        if isinstance(m, ToolResultMessage) and current:
            current[-1].append(m)
        else:
            current.append([m])
    return past, question, current  # type: ignore[return-value]


def trim_history(messages: Sequence[Message], budget_tokens: int, system: str = "") -> list[Message]:
    total = estimate_tokens(system) + sum(message_tokens(m) for m in messages)
    if budget_tokens <= 0 or total <= budget_tokens:
        return list(messages)
    past, _question, current = _units(messages)
    droppable = past + current[:-1]
    dropped = 0
    while droppable and dropped < len(droppable) and total > budget_tokens:
        total -= sum(message_tokens(m) for m in droppable[dropped])
        dropped += 1
    gone = {id(m) for unit in droppable[:dropped] for m in unit}
    return [m for m in messages if id(m) not in gone]
