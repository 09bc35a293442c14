"""The loop against the real openai / anthropic SDKs talking to a scripted HTTP server, and a real MCP server."""

from __future__ import annotations

import json
import time

import pytest

from agent_client.calllog import CallLog
from agent_client.loop import Observer
from agent_client.mcp_session import connect

from . import tiny_docs_server
from .conftest import TEST_KEY
from .fake_llm import FakeLLM, Reply, an_text, an_tools, error, oa_text, oa_tools
from .helpers import ask, make_agent

pytestmark = pytest.mark.anyio

WIRES = ["openai", "anthropic"]


def text(wire: str, t: str, **kw) -> Reply:
    return oa_text(t, **kw) if wire == "openai" else an_text(t, **kw)


def tools(wire: str, calls, **kw) -> Reply:
    return oa_tools(calls, **kw) if wire == "openai" else an_tools(calls, **kw)


def tool_results(wire: str, body: dict) -> list[tuple[str, str, bool]]:
    """(call id, content, is_error) of the tool results at the end of a request, in order."""
    if wire == "openai":
        out = []
        for m in reversed(body["messages"]):
            if m["role"] != "tool":
                break
            out.append((m["tool_call_id"], m["content"], m["content"].startswith("ERROR:")))
        return list(reversed(out))
    last = body["messages"][-1]
    assert last["role"] == "user"
    return [(b["tool_use_id"], b["content"], b["is_error"]) for b in last["content"] if b["type"] == "tool_result"]


@pytest.fixture
async def docs():
    async with connect(tiny_docs_server.server) as conn:
        yield conn


@pytest.mark.parametrize("wire", WIRES)
async def test_search_read_answer(llm: FakeLLM, docs, wire: str) -> None:
    llm.push(
        tools(wire, [("c1", "search_documents", '{"query": "port"}')], text="Let me search."),
        tools(wire, [("c2", "read_section", '{"id": "guides/setup.md", "section": "Installation"}')]),
        text(wire, "The default port is 7420 (guides/setup.md — Installation)."),
    )
    result = await ask("What is the default port?", llm, docs, wire)
    assert result.stopped_reason == "final", result.error
    assert result.answer == "The default port is 7420 (guides/setup.md — Installation)."
    assert result.iterations == 3
    assert [c.name for c in result.tool_calls] == ["search_documents", "read_section"]
    assert result.tool_calls[1].arguments == {"id": "guides/setup.md", "section": "Installation"}
    assert not any(c.is_error for c in result.tool_calls)
    assert len(llm.requests) == 3
    first = llm.requests[0].body
    if wire == "openai":
        assert first["messages"][0]["role"] == "system" and "search" in first["messages"][0]["content"]
        assert {t["function"]["name"] for t in first["tools"]} >= {"search_documents", "read_section"}
        assert llm.requests[0].headers["authorization"] == f"Bearer {TEST_KEY}"
    else:
        assert "search" in first["system"][0]["text"] and first["max_tokens"] > 0
        assert first["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
        assert all(m["role"] != "system" for m in first["messages"])
        assert {t["name"] for t in first["tools"]} >= {"search_documents", "read_section"}
        headers = llm.requests[0].headers
        assert TEST_KEY in (headers.get("x-api-key", "") + headers.get("authorization", ""))
    results = tool_results(wire, llm.requests[2].body)
    assert results[0][0] == "c2" and "7420" in results[0][1] and not results[0][2]
    assert result.usage.prompt_tokens == 300 and result.usage.completion_tokens == 60
    calls = CallLog().recent()
    assert len(calls) == 3 and all(c.status == "ok" for c in calls)


class EndOrder(Observer):
    def __init__(self) -> None:
        self.ended: list[str] = []

    def on_tool_end(self, call, outcome, duration_ms) -> None:  # type: ignore[no-untyped-def]
        self.ended.append(call.id)


@pytest.mark.parametrize("wire", WIRES)
async def test_parallel_tool_calls_run_concurrently_and_come_back_in_order(llm: FakeLLM, docs, wire: str) -> None:
    llm.push(
        tools(
            wire,
            [
                ("a1", "slow", '{"seconds": 0.6}'),
                ("a2", "slow", '{"seconds": 0.05}'),
                ("a3", "read_section", '{"id": "ops/backup.md", "section": "schedule"}'),
            ],
        ),
        text(wire, "Nightly at 02:00 UTC (ops/backup.md — Schedule)."),
    )
    order = EndOrder()
    result = await ask("When do backups run?", llm, docs, wire, observer=order)
    assert result.stopped_reason == "final"
    assert order.ended[-1] == "a1"  # concurrent: the long call, started first, finishes last
    assert [c.name for c in result.tool_calls] == ["slow", "slow", "read_section"]
    results = tool_results(wire, llm.requests[1].body)
    assert [r[0] for r in results] == ["a1", "a2", "a3"]  # ...but the results go back in call order
    assert "slept 0.6" in results[0][1] and "slept 0.05" in results[1][1] and "02:00" in results[2][1]
    if wire == "anthropic":  # consecutive results merged into one user message
        assert sum(1 for b in llm.requests[1].body["messages"][-1]["content"] if b["type"] == "tool_result") == 3


@pytest.mark.parametrize("wire", WIRES)
async def test_malformed_arguments_go_back_as_an_error(llm: FakeLLM, docs, wire: str) -> None:
    llm.push(
        tools(wire, [("m1", "search_documents", '{"query": "port"')]),
        tools(wire, [("m2", "search_documents", '{"query": "port"}')]),
        text(wire, "7420."),
    )
    result = await ask("port?", llm, docs, wire)
    assert result.stopped_reason == "final" and result.answer == "7420."
    assert result.tool_calls[0].is_error and not result.tool_calls[1].is_error
    if wire == "openai":
        assert result.tool_calls[0].arguments == '{"query": "port"'
        # the broken arguments are not replayed: vLLM json.loads every replayed call and answers 500 to it
        assistant = next(m for m in llm.requests[1].body["messages"] if m["role"] == "assistant")
        assert assistant["tool_calls"][0]["function"]["arguments"] == "{}"
    ((cid, content, is_error),) = tool_results(wire, llm.requests[1].body)
    assert cid == "m1" and is_error and "not valid JSON" in content


@pytest.mark.parametrize("wire", WIRES)
async def test_tool_calls_per_turn_and_argument_size_are_capped(llm: FakeLLM, docs, wire: str) -> None:
    huge = json.dumps({"query": "port " + "x" * 20_000})
    calls = [("big", "search_documents", huge)] + [
        (f"c{i}", "search_documents", '{"query": "port"}') for i in range(200)
    ]
    llm.push(tools(wire, calls), text(wire, "7420."))
    result = await ask("port?", llm, docs, wire)
    assert result.stopped_reason == "final" and result.answer == "7420."
    assert len(result.tool_calls) == 16  # the default cap; the other 185 never ran
    assert result.tool_calls[0].is_error and result.tool_calls[0].arguments == f"({len(huge)} bytes, not shown)"
    assert not any(c.is_error for c in result.tool_calls[1:])
    results = tool_results(wire, llm.requests[1].body)
    assert [r[0] for r in results] == ["big"] + [f"c{i}" for i in range(15)]  # one result per call kept
    assert results[0][2] and "the limit is 8192 bytes" in results[0][1]
    assert "only the first 16 ran, the other 185 were dropped" in results[-1][1]
    # the next request stays small: no dropped call, no oversized argument is sent back
    next_request = json.dumps(llm.requests[1].body)
    assert len(next_request) < 20_000 and "x" * 100 not in next_request


@pytest.mark.parametrize("wire", WIRES)
async def test_unknown_tool_and_tool_error_go_back_as_errors(llm: FakeLLM, docs, wire: str) -> None:
    llm.push(
        tools(
            wire,
            [("u1", "delete_everything", "{}"), ("u2", "read_section", '{"id": "guides/setup.md", "section": "Nope"}')],
        ),
        text(wire, "Not in the documents."),
    )
    result = await ask("?", llm, docs, wire)
    assert result.stopped_reason == "final"
    assert [c.is_error for c in result.tool_calls] == [True, True]
    (c1, t1, e1), (c2, t2, e2) = tool_results(wire, llm.requests[1].body)
    assert (c1, e1, c2, e2) == ("u1", True, "u2", True)
    assert "Unknown tool 'delete_everything'" in t1 and "search_documents" in t1
    assert "Installation" in t2  # the server's helpful error (lists the headings) reaches the model


@pytest.mark.parametrize("wire", WIRES)
async def test_iteration_limit_then_one_last_call_without_tools(llm: FakeLLM, docs, wire: str) -> None:
    llm.push(
        tools(wire, [("i1", "search_documents", '{"query": "a"}')]),
        tools(wire, [("i2", "search_documents", '{"query": "b"}')]),
        text(wire, "Best effort answer."),
    )
    result = await ask("?", llm, docs, wire, max_iterations=2)
    assert result.stopped_reason == "max_iterations"
    assert result.iterations == 2
    assert result.answer == "Best effort answer."
    assert len(llm.requests) == 3
    last = llm.requests[2].body
    if wire == "openai":
        assert "tools" not in last
        assert "used all the tool calls" in last["messages"][0]["content"]
    else:
        assert last["tool_choice"] == {"type": "none"}
        assert "used all the tool calls" in last["system"][0]["text"]


@pytest.mark.parametrize("wire", WIRES)
async def test_429_with_retry_after_then_success(llm: FakeLLM, docs, wire: str) -> None:
    kind = "rate_limit_error"
    llm.push(error(429, "slow down", headers={"retry-after-ms": "100"}, kind=kind), text(wire, "ok"))
    started = time.perf_counter()
    result = await ask("?", llm, docs, wire)
    assert result.stopped_reason == "final" and result.answer == "ok"
    assert len(llm.requests) == 2
    assert time.perf_counter() - started >= 0.1
    assert llm.requests[1].headers.get("x-stainless-retry-count") == "1"


@pytest.mark.parametrize("wire", WIRES)
async def test_400_is_not_retried_and_is_classified(llm: FakeLLM, docs, wire: str) -> None:
    llm.push(error(400, "model 'nope' does not exist"), text(wire, "never sent"))
    result = await ask("?", llm, docs, wire)
    assert result.stopped_reason == "error"
    assert result.error_kind == "bad_request" and result.retryable is False
    assert "does not exist" in result.error and "{" not in result.error  # the provider's sentence, not a dict
    assert len(llm.requests) == 1
    assert result.contract()["error"] == result.error
    assert CallLog().recent()[-1].status == "error"


@pytest.mark.parametrize("status", [401, 403, 404, 422])
async def test_client_errors_are_never_retried(llm: FakeLLM, docs, status: int) -> None:
    llm.push(error(status, "no", headers={"retry-after-ms": "10"}), oa_text("never sent"))
    result = await ask("?", llm, docs, "openai")
    assert len(llm.requests) == 1 and result.stopped_reason == "error" and result.retryable is False


@pytest.mark.parametrize("wire", WIRES)
async def test_a_stream_that_broke_is_not_retried(llm: FakeLLM, docs, wire: str) -> None:
    broken = text(wire, "This answer will be cut in the middle of the stream, sorry.")
    broken.cut_at = len(broken.body) // 2
    llm.push(broken, text(wire, "never sent"))
    result = await ask("?", llm, docs, wire)
    assert len(llm.requests) == 1
    assert result.stopped_reason == "error" and result.error_kind == "network", (result.error_kind, result.error)


async def test_server_errors_are_retried_then_reported(llm: FakeLLM, docs) -> None:
    for _ in range(3):
        llm.push(error(503, "overloaded", headers={"retry-after-ms": "20"}, kind="api_error"))
    result = await ask("?", llm, docs, "openai", max_retries=2)
    assert len(llm.requests) == 3
    assert result.stopped_reason == "error" and result.error_kind == "server_error" and result.retryable is True


async def test_authentication_error_never_leaks_the_key(llm: FakeLLM, docs, isolated_env) -> None:
    llm.push(error(401, f"Incorrect API key provided: {TEST_KEY}", kind="authentication_error"))
    result = await ask("?", llm, docs, "openai")
    assert result.error_kind == "authentication" and result.retryable is False
    assert TEST_KEY not in json.dumps(result.contract())
    assert len(llm.requests) == 1
    for path in isolated_env.iterdir():
        assert TEST_KEY.encode() not in path.read_bytes()


async def test_context_length_and_content_filter_are_classified(llm: FakeLLM, docs) -> None:
    llm.push(error(400, "This model's maximum context length is 8192 tokens."))
    result = await ask("?", llm, docs, "openai")
    assert result.error_kind == "context_length"
    llm.push(oa_text("partial", finish="content_filter"))
    result = await ask("?", llm, docs, "openai")
    assert result.error_kind == "content_filter"


async def test_deadline_per_question(llm: FakeLLM, docs) -> None:
    slow_reply = oa_text("too late")
    slow_reply.delay_s = 4.0
    llm.push(slow_reply)
    started = time.perf_counter()
    result = await ask("?", llm, docs, "openai", deadline_s=0.5)
    assert time.perf_counter() - started < 3.0
    assert result.stopped_reason == "error" and result.error_kind == "timeout" and result.retryable


@pytest.mark.parametrize("wire", WIRES)
async def test_token_budget_stops_the_loop(llm: FakeLLM, docs, wire: str) -> None:
    llm.push(
        tools(wire, [("b1", "search_documents", '{"query": "a"}')], prompt=100, completion=20),
        tools(wire, [("b2", "search_documents", '{"query": "b"}')], text="Still looking.", prompt=100, completion=20),
        text(wire, "never reached"),
    )
    result = await ask("?", llm, docs, wire, max_tokens=200)
    assert result.stopped_reason == "budget"
    assert result.iterations == 2 and len(llm.requests) == 2
    assert result.answer == "Still looking."
    assert len(result.tool_calls) == 1  # the second turn's calls were not run


async def test_cost_budget_stops_the_loop(llm: FakeLLM, docs) -> None:
    # openai registry prices: 0.40 / 0.10 / 1.60 per million → 1M prompt tokens cost $0.40
    llm.push(oa_tools([("c1", "search_documents", '{"query": "a"}')], prompt=1_000_000, completion=0), oa_text("x"))
    result = await ask("?", llm, docs, "openai", max_cost_usd=0.10)
    assert result.stopped_reason == "budget"
    assert result.cost_usd == pytest.approx(0.40)
    assert result.contract()["usage"] == {"prompt_tokens": 1_000_000, "completion_tokens": 0, "cost_usd": 0.4}


async def test_a_provider_that_reports_no_usage_is_still_bounded(llm: FakeLLM, docs) -> None:
    """A server that never sends usage counted 0 tokens: --max-tokens and --max-cost never stopped it."""
    for i in range(6):
        llm.push(oa_tools([(f"u{i}", "search_documents", '{"query": "port"}')], usage=False))
    llm.push(oa_text("never reached", usage=False))
    result = await ask("?", llm, docs, "openai", max_tokens=2_000, max_iterations=8)
    assert result.stopped_reason == "budget" and 2 <= len(llm.requests) < 6
    sent = sum(len(json.dumps(r.body)) for r in llm.requests) // 4  # what was sent, ~4 characters a token
    assert 0.5 * sent < result.usage.prompt_tokens < 1.5 * sent and result.usage.completion_tokens > 0
    assert any("estimate" in n for n in result.notes) and "estimate" in json.dumps(result.contract()["notes"])
    llm.script.clear()
    llm.push(oa_tools([("c1", "search_documents", '{"query": "a"}')], usage=False), oa_text("x", usage=False))
    result = await ask("?", llm, docs, "openai", max_cost_usd=1e-9)
    assert result.stopped_reason == "budget" and result.cost_usd > 0


@pytest.mark.parametrize("wire", WIRES)
async def test_cost_per_call_and_per_question_with_cached_tokens(llm: FakeLLM, docs, wire: str) -> None:
    llm.push(
        tools(
            wire, [("k1", "search_documents", '{"query": "a"}')], prompt=2_000_000, cached=1_000_000, completion=100_000
        ),
        text(wire, "done", prompt=1_000_000, cached=0, completion=0),
    )
    result = await ask("?", llm, docs, wire)
    prices = {"openai": (0.40, 0.10, 1.60), "anthropic": (3.00, 0.30, 15.00)}[wire]
    first = 1.0 * prices[0] + 1.0 * prices[1] + 0.1 * prices[2]
    second = 1.0 * prices[0]
    assert result.cost_usd == pytest.approx(first + second)
    assert result.usage.prompt_tokens == 3_000_000 and result.usage.cached_tokens == 1_000_000
    logged = CallLog().recent()
    assert [round(c.cost_usd, 6) for c in logged] == [round(first, 6), round(second, 6)]
    assert logged[0].cached_tokens == 1_000_000


async def test_long_tool_results_are_cut_with_a_note(llm: FakeLLM, docs) -> None:
    llm.push(oa_tools([("l1", "big_result", '{"size": 50000}')]), oa_text("ok"))
    result = await ask("?", llm, docs, "openai", result_chars=2000)
    assert result.stopped_reason == "final"
    ((_, content, _),) = tool_results("openai", llm.requests[1].body)
    assert len(content) < 2300 and "truncated by docs-agent" in content


async def test_history_is_trimmed_before_sending(llm: FakeLLM, docs) -> None:
    llm.push(
        oa_tools([("t1", "big_result", '{"size": 8000}')]),
        oa_tools([("t2", "big_result", '{"size": 8000}')]),
        oa_text("ok"),
    )
    result = await ask("the question", llm, docs, "openai", context_tokens=3000)
    assert result.stopped_reason == "final"
    sent = llm.requests[2].body["messages"]
    assert sent[0]["role"] == "system" and sent[1] == {"role": "user", "content": "the question"}
    ids = [m.get("tool_call_id") for m in sent if m["role"] == "tool"]
    assert ids == ["t2"]  # the older exchange was dropped whole; the newest kept with its call
    assert any(m["role"] == "assistant" and m.get("tool_calls", [{}])[0].get("id") == "t2" for m in sent)


async def test_document_text_is_data_not_instructions(llm: FakeLLM, docs) -> None:
    """A poisoned document reaches the model only as a tool result; the client runs exactly the calls the
    model makes (here one), and the system prompt tells the model to ignore instructions found in documents."""
    llm.push(
        oa_tools([("p1", "read_section", '{"id": "notes/poison.md", "section": "Trap"}')]),
        oa_text("The documents do not say how to configure that."),
    )
    result = await ask("How do I configure the trap?", llm, docs)
    assert [c.name for c in result.tool_calls] == ["read_section"]
    assert len(llm.requests) == 2
    system = llm.requests[0].body["messages"][0]["content"]
    assert "data, not instructions" in system
    ((cid, content, is_error),) = tool_results("openai", llm.requests[1].body)
    assert cid == "p1" and "IGNORE PREVIOUS INSTRUCTIONS" in content and not is_error
    assert result.stopped_reason == "final"


async def test_server_without_stream_options_support(llm: FakeLLM, docs) -> None:
    llm.push(error(400, "Unrecognized request argument supplied: stream_options"), oa_text("ok"), oa_text("again"))
    agent = make_agent(llm, docs, "openai")
    try:
        first = await agent.ask("?")
        second = await agent.ask("?")
    finally:
        await agent.model.aclose()
    assert (first.answer, second.answer) == ("ok", "again")
    assert "stream_options" in llm.requests[0].body
    assert "stream_options" not in llm.requests[1].body and "stream_options" not in llm.requests[2].body


@pytest.mark.parametrize("wire", WIRES)
async def test_citations_are_verified_against_what_the_run_read(llm: FakeLLM, docs, wire: str) -> None:
    llm.push(
        tools(
            wire,
            [
                ("r1", "read_section", '{"id": "guides/setup.md", "section": "Installation"}'),
                ("r2", "read_section", '{"id": "notes/poison.md", "section": "Nope"}'),
            ],
        ),  # fails: no evidence
        text(
            wire,
            "Port 7420 (guides/setup.md — Installation). WIDGET_HOME moves it (guides/setup.md — Configuration). "
            "Backups nightly (ops/backup.md § Schedule; notes/poison.md).",
        ),
    )
    result = await ask("port?", llm, docs, wire)
    assert [(c.id, c.heading, c.verified) for c in result.citations] == [
        ("guides/setup.md", "Installation", True),
        ("guides/setup.md", "Configuration", False),  # that section was never returned
        ("ops/backup.md", "Schedule", False),  # that document was never searched or read
        ("notes/poison.md", None, False),  # its read failed
    ]
