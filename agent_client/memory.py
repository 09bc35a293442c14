"""Memory across the questions of a chat session, within a token budget.

A short history is replayed whole, as before. A long one is not: the last exchanges come back as question and
answer (their tool traffic is not replayed), the past exchanges most relevant to the new question are recalled
by keyword overlap (BM25 over each exchange's question and answer), and the rest are summarised to one line
each, newest first, as far as the budget goes. No LLM call: memory costs nothing but the tokens it sends."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from .context import message_tokens
from .models import AssistantMessage, Message, UserMessage
from .settings import DEFAULT_MEMORY_TOKENS
from .text import estimate_tokens, short

RECENT = 2  # exchanges always kept as question and answer
RECALL = 3  # at most this many older exchanges recalled whole
RELEVANT = 0.5  # ...each scoring at least this share of the best score (a shared "the" recalls nothing)
SUMMARY_HEADER = "[docs-agent memory: earlier questions of this session, one line each (question → answer)]"
_WORD = re.compile(r"\w{2,}")


@dataclass
class Exchange:
    index: int  # 1-based position in the session, as /memory and /forget N show it
    question: str
    answer: str
    messages: list[Message] = field(default_factory=list)

    def pair(self) -> list[Message]:
        return [UserMessage(content=self.question), AssistantMessage(content=self.answer)]

    def line(self) -> str:
        return f"{self.index}. {short(self.question, 100)} → {short(self.answer, 160)}"


def exchanges(history: Sequence[Message]) -> list[Exchange]:
    """The session as exchanges: a question, everything up to the next question, and its final answer."""
    out: list[Exchange] = []
    for m in history:
        if isinstance(m, UserMessage):
            out.append(Exchange(len(out) + 1, m.content, "", [m]))
        elif out:
            out[-1].messages.append(m)
            if isinstance(m, AssistantMessage) and m.content and not m.tool_calls:
                out[-1].answer = m.content
    return out


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def bm25(query: str, documents: Sequence[str], k1: float = 1.2, b: float = 0.75) -> list[float]:
    docs = [Counter(_words(d)) for d in documents]
    if not docs:
        return []
    avg = sum(sum(d.values()) for d in docs) / len(docs) or 1.0
    df = Counter(w for d in docs for w in d)
    scores = []
    for d in docs:
        length = sum(d.values())
        s = 0.0
        for w in set(_words(query)):
            if w in d:
                idf = math.log(1 + (len(docs) - df[w] + 0.5) / (df[w] + 0.5))
                s += idf * d[w] * (k1 + 1) / (d[w] + k1 * (1 - b + b * length / avg))
        scores.append(s)
    return scores


@dataclass
class Memory:
    """What one question is sent of the session: summarised lines, recalled and recent exchanges."""

    whole: list[Message] | None = None  # the history itself, when it fits the budget
    summarised: list[Exchange] = field(default_factory=list)
    recalled: list[Exchange] = field(default_factory=list)
    recent: list[Exchange] = field(default_factory=list)
    left_out: int = 0  # exchanges neither recalled nor summarised (over the budget)

    def messages(self) -> list[Message]:
        if self.whole is not None:
            return list(self.whole)
        out: list[Message] = []
        if self.summarised:
            lines = "\n".join(e.line() for e in self.summarised)
            out += [UserMessage(content=f"{SUMMARY_HEADER}\n{lines}"), AssistantMessage(content="Noted.")]
        for e in sorted(self.recalled, key=lambda e: e.index):
            out += e.pair()
        for e in self.recent:
            out += e.pair()
        return out


def _tokens(messages: Sequence[Message]) -> int:
    return sum(message_tokens(m) for m in messages)


def remember(history: Sequence[Message], question: str, budget_tokens: int = DEFAULT_MEMORY_TOKENS) -> Memory:
    if _tokens(history) <= budget_tokens:
        return Memory(whole=list(history))
    past = [e for e in exchanges(history) if e.answer]
    memory = Memory(recent=past[-RECENT:])
    used = _tokens(memory.messages())
    older = past[:-RECENT]
    scores = bm25(question, [f"{e.question}\n{e.answer}" for e in older])
    floor = max(scores, default=0.0) * RELEVANT
    for score, e in sorted(zip(scores, older, strict=False), key=lambda p: -p[0])[:RECALL]:
        cost = _tokens(e.pair())
        if score > 0 and score >= floor and used + cost <= budget_tokens:
            memory.recalled.append(e)
            used += cost
    used += estimate_tokens(SUMMARY_HEADER) + 12
    recalled = {e.index for e in memory.recalled}
    for e in reversed([e for e in older if e.index not in recalled]):
        cost = estimate_tokens(e.line()) + 1
        if used + cost > budget_tokens:
            memory.left_out += 1
            continue
        memory.summarised.insert(0, e)
        used += cost
    return memory


def describe(history: Sequence[Message], budget_tokens: int = DEFAULT_MEMORY_TOKENS) -> list[str]:
    """The /memory report."""
    past = exchanges(history)
    if not past:
        return ["nothing remembered in this session"]
    total = _tokens(history)
    if total <= budget_tokens:
        return [
            f"{len(past)} exchanges (~{total:,} tokens), replayed whole (budget {budget_tokens:,} tokens):",
            *(e.line() for e in past),
        ]
    memory = remember(history, "", budget_tokens)
    lines = [
        f"{len(past)} exchanges (~{total:,} tokens); each question gets about {budget_tokens:,} tokens of them:",
        "recent, replayed as question and answer:",
        *(e.line() for e in memory.recent),
        "earlier, summarised (those relevant to a new question are recalled whole):",
        *(e.line() for e in memory.summarised),
    ]
    if memory.left_out:
        lines.append(f"({memory.left_out} older exchanges beyond the budget: recalled only when relevant)")
    return lines


def forget(history: Sequence[Message], index: int) -> list[Message] | None:
    """The history without exchange `index` (None when there is no such exchange)."""
    past = exchanges(history)
    if not 1 <= index <= len(past):
        return None
    return [m for e in past if e.index != index for m in e.messages]
