"""Memory across a chat session: long histories summarised and recalled within a budget, /memory, /forget."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest

from agent_client.context import message_tokens
from agent_client.memory import (
    SUMMARY_HEADER,
    bm25,
    describe,
    exchanges,
    forget,
    remember,
)
from agent_client.models import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from agent_client.sessions import SessionStore

from .fake_llm import FakeLLM, an_text, oa_text
from .test_cli import TINY, cli, llm_args

TOPICS = [
    "install the collector",
    "configure exporters",
    "sampling rates",
    "backup schedule",
    "TLS certificates",
    "memory limiter",
    "batch processor",
    "kubernetes operator",
    "log pipelines",
    "metrics views",
    "span links",
    "resource detection",
]


def session(n: int = len(TOPICS), filler: int = 400) -> list[Message]:
    """n exchanges, each a search with a long result and a cited answer."""
    out: list[Message] = []
    for i, topic in enumerate(TOPICS[:n]):
        out += [
            UserMessage(content=f"How do I handle {topic}?"),
            AssistantMessage(
                tool_calls=[ToolCall(id=f"t{i}", name="search_documents", arguments_json=json.dumps({"query": topic}))]
            ),
            ToolResultMessage(tool_call_id=f"t{i}", name="search_documents", content=f"{topic} " + "x " * filler),
            AssistantMessage(content=f"For {topic}, see the guide (docs/{i}.md — {topic.title()})."),
        ]
    return out


def tokens(messages: list[Message]) -> int:
    return sum(message_tokens(m) for m in messages)


def test_a_short_history_is_replayed_whole() -> None:
    history = session(2, filler=10)
    assert remember(history, "anything", 3000).messages() == history


def test_a_long_history_keeps_recent_recalls_relevant_and_summarises_the_rest() -> None:
    history = session()
    memory = remember(history, "What was the backup schedule again?", 600)
    sent = memory.messages()
    assert tokens(sent) <= 600 < tokens(history)
    assert [e.index for e in memory.recent] == [11, 12]
    assert [e.index for e in memory.recalled] == [4]  # "backup schedule", by keyword overlap
    assert not any(isinstance(m, ToolResultMessage) or (isinstance(m, AssistantMessage) and m.tool_calls) for m in sent)
    assert sent[0].content.startswith(SUMMARY_HEADER) and "1. How do I handle install the collector?" in sent[0].content
    assert "backup" not in sent[0].content  # recalled whole, not summarised again
    roles = [m.role for m in sent]
    assert all(a != b for a, b in pairwise(roles)) and roles[-1] == "assistant"  # alternating, for Anthropic


def test_the_summary_is_cut_oldest_first_at_the_budget() -> None:
    memory = remember(session(), "unrelated words", 250)
    assert tokens(memory.messages()) <= 250 and memory.left_out > 0
    assert memory.summarised[-1].index == 10 and memory.summarised[0].index > 1


def test_bm25_prefers_rare_matching_words() -> None:
    scores = bm25("backup schedule", ["the schedule of the sampler", "backup schedule nightly", "nothing here"])
    assert scores[1] > scores[0] > scores[2] == 0


def test_forget_one_exchange() -> None:
    history = session(3, filler=5)
    kept = forget(history, 2)
    assert kept is not None and [e.question for e in exchanges(kept)] == [
        "How do I handle install the collector?",
        "How do I handle sampling rates?",
    ]
    assert forget(history, 4) is None and forget(history, 0) is None
    assert describe([]) == ["nothing remembered in this session"]


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_chat_sends_memory_not_the_whole_history(llm: FakeLLM, capsys, monkeypatch, wire: str) -> None:
    SessionStore().append("long", session())
    monkeypatch.setenv("DOCS_AGENT_MEMORY_TOKENS", "600")
    llm.push((oa_text if wire == "openai" else an_text)("Nightly at 02:00 (ops/backup.md — Schedule)."))
    code, stdout, stderr = cli(
        capsys,
        monkeypatch,
        "chat",
        "--server-cmd",
        TINY,
        *llm_args(llm, wire),
        "--session",
        "long",
        stdin="What was the backup schedule again?\n",
    )
    assert code == 0, stderr
    assert "Nightly at 02:00" in stdout
    sent = json.dumps(llm.requests[0].body["messages"])
    assert "[docs-agent memory: earlier questions" in sent
    assert "For backup schedule, see the guide" in sent and "x x x x" not in sent  # recalled; no old tool results
    assert len(sent) < 4 * 1000  # about the budget, against ~12,000 tokens of history
    # the full exchange is still stored: memory shapes what is sent, not what is kept
    assert len(exchanges(SessionStore().load("long"))) == 13


def test_memory_and_forget_commands(llm: FakeLLM, capsys, monkeypatch) -> None:
    SessionStore().append("m", session(3, filler=5))
    code, stdout, stderr = cli(
        capsys,
        monkeypatch,
        "chat",
        "--server-cmd",
        TINY,
        *llm_args(llm),
        "--session",
        "m",
        stdin="/memory\n/forget 2\n/forget 9\n/memory\n/forget\n/memory\n",
    )
    assert code == 0, stderr
    assert "3 exchanges" in stdout and "replayed whole" in stdout
    assert (
        "exchange 2 forgotten" in stdout
        and "/forget N takes the number of an exchange that /memory lists (1-2)" in stdout
    )
    assert "2 exchanges" in stdout and "everything forgotten" in stdout
    assert stdout.rstrip(" ›\n").endswith("nothing remembered in this session")
    assert SessionStore().load("m") == []
