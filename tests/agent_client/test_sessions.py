"""Chat sessions: persisted per name, resumable, strictly isolated, no secrets stored."""

from __future__ import annotations

import pytest

from agent_client.home import db_path
from agent_client.mcp_session import connect
from agent_client.models import AssistantMessage, ToolResultMessage, UserMessage
from agent_client.sessions import SessionStore

from . import tiny_docs_server
from .conftest import TEST_KEY
from .fake_llm import FakeLLM, oa_text, oa_tools
from .helpers import ask

pytestmark = pytest.mark.anyio


def sent_text(body: dict) -> str:
    return "\n".join(str(m.get("content")) for m in body["messages"])


async def test_session_resume_and_isolation(llm: FakeLLM) -> None:
    async with connect(tiny_docs_server.server) as docs:
        # session "alpha": one question with a tool call, stored
        llm.push(
            oa_tools([("s1", "search_documents", '{"query": "backup"}')]),
            oa_text("Nightly (ops/backup.md — Schedule)."),
        )
        store = SessionStore()
        r = await ask("ALPHA-QUESTION about backups", llm, docs, session="alpha", history=store.load("alpha"))
        store.append("alpha", r.new_messages)

        # session "beta" sees nothing of alpha
        llm.push(oa_text("Beta answer."))
        r = await ask("BETA-QUESTION", llm, docs, session="beta", history=SessionStore().load("beta"))
        SessionStore().append("beta", r.new_messages)
        assert "ALPHA" not in sent_text(llm.requests[-1].body)

        # resuming alpha with a fresh store (a new process) replays its whole history, and only it
        history = SessionStore().load("alpha")
        assert [type(m) for m in history] == [UserMessage, AssistantMessage, ToolResultMessage, AssistantMessage]
        llm.push(oa_text("Follow-up answer."))
        await ask("ALPHA-FOLLOW-UP", llm, docs, session="alpha", history=history)
        body = llm.requests[-1].body
        roles = [m["role"] for m in body["messages"]]
        assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
        assert "ALPHA-QUESTION" in sent_text(body) and "BETA" not in sent_text(body)
        assert body["messages"][2]["tool_calls"][0]["id"] == "s1" and body["messages"][3]["tool_call_id"] == "s1"

    names = {s.name: s for s in SessionStore().list()}
    assert set(names) == {"alpha", "beta"} and names["alpha"].messages == 4
    usage, _cost, calls = SessionStore().usage("alpha")
    assert calls == 3 and usage.prompt_tokens == 300


def test_reset_delete_and_no_secrets() -> None:
    store = SessionStore()
    store.append("one", [UserMessage(content="hello"), AssistantMessage(content=f"the key is {TEST_KEY}")])
    store.append("two", [UserMessage(content="other")])
    assert TEST_KEY not in db_path().read_bytes().decode(errors="replace")
    assert "[redacted]" in store.load("one")[1].content
    store.reset("one")
    assert store.load("one") == [] and len(store.load("two")) == 1
    assert store.delete("two") is True and store.delete("two") is False
    assert [s.name for s in store.list()] == ["one"]
