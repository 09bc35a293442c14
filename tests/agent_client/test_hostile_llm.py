"""A hostile or broken LLM server on 127.0.0.1 (real openai / anthropic SDKs, real MCP server in memory):
whatever it sends, the loop ends with a clear outcome, never a traceback, a hang or a wrong account."""

from __future__ import annotations

import pytest

from agent_client.mcp_session import connect

from . import tiny_docs_server
from .fake_llm import FakeLLM, Reply, an_text, an_tools, oa_text, oa_tools
from .helpers import ask

pytestmark = pytest.mark.anyio

WIRES = ["openai", "anthropic"]


def text(wire: str, t: str, **kw) -> Reply:
    return oa_text(t, **kw) if wire == "openai" else an_text(t, **kw)


def tools(wire: str, calls, **kw) -> Reply:
    return oa_tools(calls, **kw) if wire == "openai" else an_tools(calls, **kw)


@pytest.fixture
async def docs():
    async with connect(tiny_docs_server.server) as conn:
        yield conn


@pytest.mark.parametrize("wire", WIRES)
async def test_negative_usage_counts_as_zero_and_cannot_buy_budget(llm: FakeLLM, docs, wire: str) -> None:
    """Found by a hostile server reporting usage -1,000,000: the summary showed negative tokens and a negative
    cost, and the next calls ran free of --max-tokens (the sum stayed far below the limit)."""
    llm.push(
        tools(wire, [("c1", "search_documents", '{"query": "backup"}')], prompt=-1_000_000, completion=-5_000),
        tools(wire, [("c2", "search_documents", '{"query": "port"}')], prompt=100, completion=20),
        tools(wire, [("c3", "search_documents", '{"query": "home"}')], prompt=100, completion=20),
        text(wire, "never asked"),
    )
    result = await ask("When are backups?", llm, docs, wire, max_tokens=200)
    assert result.usage.prompt_tokens >= 0 and result.usage.completion_tokens >= 0 and result.cost_usd >= 0
    assert result.stopped_reason == "budget" and len(llm.requests) == 3, result
