"""A hostile or broken LLM server on 127.0.0.1 (real openai / anthropic SDKs, real MCP server in memory):
whatever it sends, the loop ends with a clear outcome, never a traceback, a hang or a wrong account."""

from __future__ import annotations

import time

import pytest

from agent_client.mcp_session import connect
from agent_client.providers.base import MAX_REPLY_CHARS

from . import tiny_docs_server
from .fake_llm import FakeLLM, Reply, _an_end, _an_start, _chunk, _sse, an_text, an_tools, error, oa_text, oa_tools
from .helpers import ask

pytestmark = pytest.mark.anyio

WIRES = ["openai", "anthropic"]


def text(wire: str, t: str, **kw) -> Reply:
    return oa_text(t, **kw) if wire == "openai" else an_text(t, **kw)


def tools(wire: str, calls, **kw) -> Reply:
    return oa_tools(calls, **kw) if wire == "openai" else an_tools(calls, **kw)


def oa_events(*chunks: dict, done: bool = True) -> Reply:
    """An OpenAI stream of exactly these chunks (and `[DONE]` unless told otherwise)."""
    events: list = [(None, c) for c in chunks] + ([(None, "[DONE]")] if done else [])
    return Reply(body=_sse(events), content_type="text/event-stream")


def an_cut_before(marker: bytes, reply: Reply) -> Reply:
    """An Anthropic stream closed cleanly just before the first event named `marker` (a proxy that gave up)."""
    return Reply(body=reply.body[: reply.body.index(marker)], content_type="text/event-stream")


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
    # counts that are no counts are no report: the call is estimated from its text (issue 27), which is
    # already over 200 tokens, so the loop stops after it
    assert result.stopped_reason == "budget" and len(llm.requests) == 1, result
    assert result.usage.prompt_tokens > 200 and any("estimate" in n for n in result.notes)


@pytest.mark.parametrize("wire", WIRES)
async def test_a_stream_that_ends_before_the_model_finished_is_an_error(llm: FakeLLM, docs, wire: str) -> None:
    """Found with a server that closes a streamed answer cleanly halfway (no finish_reason and no [DONE]; no
    message_delta / message_stop): the half answer was taken as final, exit 0, and stored in the session."""
    if wire == "openai":
        llm.push(
            oa_events(_chunk({"role": "assistant", "content": ""}), _chunk({"content": "Backups run ni"}), done=False)
        )
    else:
        llm.push(an_cut_before(b"event: message_delta", an_text("Backups run nightly at 02:00 UTC.")))
    result = await ask("When are backups?", llm, docs, wire)
    assert result.stopped_reason == "error" and result.error_kind == "network", result
    assert "ended before the model finished" in (result.error or "")
    assert len(llm.requests) == 1


@pytest.mark.parametrize("wire", WIRES)
async def test_an_empty_reply_is_an_error_not_an_empty_answer(llm: FakeLLM, docs, wire: str) -> None:
    """Found with a server answering 200 with no choices at all (only a usage chunk), and with an empty text
    block: 'final', exit 0, nothing printed."""
    if wire == "openai":
        llm.push(oa_events(_chunk(None, usage={"prompt_tokens": 5, "completion_tokens": 0, "total_tokens": 5})))
    else:
        llm.push(an_text(""))
    result = await ask("When are backups?", llm, docs, wire)
    assert result.stopped_reason == "error" and result.error_kind == "bad_response", result
    assert "empty reply" in (result.error or "")


@pytest.mark.parametrize("wire", WIRES)
async def test_an_answer_cut_at_the_output_limit_says_so(llm: FakeLLM, docs, wire: str) -> None:
    """finish_reason length / stop_reason max_tokens: the answer is kept, with a note that it may be cut."""
    llm.push(
        oa_text("Backups run ni", finish="length") if wire == "openai" else an_text("Backups run ni", stop="max_tokens")
    )
    result = await ask("When are backups?", llm, docs, wire)
    assert result.stopped_reason == "final" and result.answer == "Backups run ni"
    assert any("output limit" in n for n in result.notes), result.notes


def _ids(body: dict) -> tuple[list[str], list[str]]:
    """(tool call ids, tool result ids) of a request, in order, for either wire format."""
    calls, results = [], []
    for m in body["messages"]:
        if isinstance(m.get("content"), list):  # anthropic blocks
            calls += [b["id"] for b in m["content"] if b["type"] == "tool_use"]
            results += [b["tool_use_id"] for b in m["content"] if b["type"] == "tool_result"]
        calls += [c["id"] for c in m.get("tool_calls") or []]
        results += [m["tool_call_id"]] if m.get("role") == "tool" else []
    return calls, results


async def test_tool_call_ids_reused_across_turns_stay_unique_in_the_history(llm: FakeLLM, docs) -> None:
    """Found with a server that numbers tool calls per turn ('call_0' every time, as some local servers do):
    the history then held two calls and two results with one id, which the Anthropic Messages API rejects
    (tool_use ids must be unique) once a chat session or a --fallback carries that history over to it."""
    llm.push(
        oa_tools([("call_0", "search_documents", '{"query": "backup"}')]),
        oa_tools([("call_0", "search_documents", '{"query": "port"}')]),
        oa_text("Nightly (ops/backup.md — Schedule)."),
        an_text("7420 (guides/setup.md — Installation)."),
    )
    first = await ask("When are backups?", llm, docs, "openai")
    assert first.stopped_reason == "final", first.error
    again = await ask("And the port?", llm, docs, "anthropic", history=first.new_messages)
    assert again.stopped_reason == "final", again.error
    for request in (llm.requests[2], llm.requests[3]):
        calls, results = _ids(request.body)
        assert len(calls) == 2 and len(set(calls)) == 2 and results == calls, request.body


async def test_docs_agent_own_ids_stay_unique_across_the_questions_of_a_session(llm: FakeLLM, docs) -> None:
    """docs-agent names the --expand search 'expand' in every question: the second question of a session
    carried two tool_use blocks with that id to the Anthropic API."""
    rewrites = '{"queries": ["widget port", "backup schedule"]}'
    llm.push(an_text(rewrites), an_text("7420 (guides/setup.md — Installation)."))
    llm.push(an_text(rewrites), an_text("Nightly (ops/backup.md — Schedule)."))
    first = await ask("default port?", llm, docs, "anthropic", expand=True)
    again = await ask("backups?", llm, docs, "anthropic", expand=True, history=first.new_messages)
    assert again.stopped_reason == "final", again.error
    calls, results = _ids(llm.requests[3].body)
    assert len(calls) == 2 and len(set(calls)) == 2 and results == calls, llm.requests[3].body


@pytest.mark.parametrize("bad", ['{"query": "ba', "[1, 2]", '"backup"', "nul"])
async def test_arguments_that_are_no_json_object_are_not_replayed(llm: FakeLLM, docs, bad: str) -> None:
    """Found with a server cut at its output limit mid tool call (finish_reason length): the broken arguments
    went back in every later request of the question and of the chat session, and servers that parse the
    history's arguments (vLLM's chat templates, Mistral) then answer 400 to each of them: the session is dead.
    The model still gets the error result that tells it what was wrong."""
    llm.push(oa_tools([("c1", "search_documents", bad)]), oa_text("Nightly (ops/backup.md — Schedule)."))
    result = await ask("When are backups?", llm, docs, "openai")
    assert result.stopped_reason == "final" and result.tool_calls[0].is_error
    replayed = [c["function"]["arguments"] for m in llm.requests[1].body["messages"] for c in m.get("tool_calls") or []]
    assert replayed == ["{}"], replayed
    stored = [c.arguments_json for m in result.new_messages if m.role == "assistant" for c in m.tool_calls]
    assert stored == ["{}"]
    assert (
        "not valid JSON" in llm.requests[1].body["messages"][-1]["content"]
        or "JSON object" in (llm.requests[1].body["messages"][-1]["content"])
    )


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("where", ["text", "arguments"])
async def test_a_gigantic_reply_is_cut_off_with_an_error(llm: FakeLLM, docs, wire: str, where: str) -> None:
    """Found with a server streaming megabytes of text (or of one tool call's arguments): all of it was kept in
    memory, printed, stored in the session and sent back with every later call; an endless stream only stopped
    at --timeout. No model writes 2 million characters in one reply."""
    big = "A" * (MAX_REPLY_CHARS + 10)
    if where == "text":
        reply = oa_text(big, chunks=[big[i : i + 500_000] for i in range(0, len(big), 500_000)])
        llm.push(reply if wire == "openai" else an_text(big))
    else:
        llm.push(tools(wire, [("c1", "search_documents", '{"query": "' + big + '"}')]))
    result = await ask("When are backups?", llm, docs, wire)
    assert result.stopped_reason == "error" and result.error_kind == "bad_response", result.error
    assert "2,000,000 characters" in (result.error or "") and not result.answer
    assert len(llm.requests) == 1


@pytest.mark.parametrize("wire", WIRES)
async def test_an_overload_reported_inside_the_stream_is_a_server_error(llm: FakeLLM, docs, wire: str) -> None:
    """Found with a server that starts a 200 stream and then sends an error event, as Anthropic documents for
    overloads and OpenRouter for upstream failures: Anthropic's was 'bad_request: HTTP 200: Overloaded ... check
    the model name', OpenAI's 'unknown: APIError' — neither retryable nor a reason for --fallback to move on."""
    if wire == "openai":
        error_event = {"error": {"message": "upstream overloaded", "type": "server_error", "code": 502}}
        body = _sse([(None, _chunk({"content": "Back"})), (None, error_event)])
    else:
        error_event = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        body = _sse([_an_start(10, 0), ("error", error_event)])
    llm.push(Reply(body=body, content_type="text/event-stream"))
    result = await ask("When are backups?", llm, docs, wire)
    assert result.stopped_reason == "error" and result.error_kind == "server_error", result.error
    assert result.retryable and "HTTP 200" not in (result.error or "")
    assert "overloaded" in (result.error or "").lower()


def _oa_chunk_raw(**fields) -> dict:
    return {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m", **fields}


@pytest.mark.parametrize(
    "first",
    [
        _chunk({"content": 42}),  # content not a string
        _chunk({"content": [{"type": "text", "text": "hi"}]}),
        _oa_chunk_raw(choices={"a": 1}),  # choices not a list
        [1, 2, 3],  # a chunk that is no object
        _oa_chunk_raw(choices=[], usage="lots"),
        _chunk({"tool_calls": [{"index": 0, "id": "a"}, {"index": "zero", "id": "b"}]}),  # an index not a number
    ],
    ids=["content-int", "content-list", "choices-dict", "chunk-list", "usage-str", "index-str"],
)
async def test_a_chunk_in_the_wrong_shape_is_a_bad_response(llm: FakeLLM, docs, first: object) -> None:
    """Found with a server sending JSON events of the wrong shape: each ended as 'error (unknown): openai:
    TypeError: can only concatenate str ...' or 'AttributeError: ...' - Python internals, not what happened."""
    llm.push(oa_events(first, _chunk({"content": "ok"}), _chunk({}, "stop")))  # type: ignore[arg-type]
    result = await ask("When are backups?", llm, docs, "openai")
    assert result.stopped_reason == "error" and result.error_kind == "bad_response", result.error
    assert "chat-completions format" in (result.error or "")
    assert "Error" not in (result.error or "").split(".")[0]  # no exception class name


async def test_tool_arguments_sent_as_an_object_are_accepted(llm: FakeLLM, docs) -> None:
    """Some OpenAI-compatible servers send `arguments` as a JSON object instead of a string: it failed the
    answer with 'TypeError: can only concatenate str (not "dict") to str'."""
    call = {"index": 0, "id": "c1", "type": "function", "function": {"name": "search_documents"}}
    call["function"]["arguments"] = {"query": "backup"}  # type: ignore[index]
    llm.push(oa_events(_chunk({"tool_calls": [call]}), _chunk({}, "tool_calls")), oa_text("Nightly."))
    result = await ask("When are backups?", llm, docs, "openai")
    assert result.stopped_reason == "final", result.error
    assert [(c.name, c.arguments, c.is_error) for c in result.tool_calls] == [
        ("search_documents", {"query": "backup"}, False)
    ]


def an_events(*events: tuple[str, dict], stop: str = "end_turn") -> Reply:
    return Reply(body=_sse([_an_start(10, 0), *events, *_an_end(stop, 5)]), content_type="text/event-stream")


async def test_anthropic_tool_input_given_whole_in_the_block_start_is_used(llm: FakeLLM, docs) -> None:
    """Some Anthropic-compatible servers put the whole `input` in content_block_start and send no
    input_json_delta: the call ran with {} ('query' missing) every time, so the model could never search."""
    block = {"type": "tool_use", "id": "t1", "name": "search_documents", "input": {"query": "backup"}}
    llm.push(
        an_events(
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            stop="tool_use",
        ),
        an_text("Nightly."),
    )
    result = await ask("When are backups?", llm, docs, "anthropic")
    assert [(c.name, c.arguments, c.is_error) for c in result.tool_calls] == [
        ("search_documents", {"query": "backup"}, False)
    ]


async def test_anthropic_event_in_the_wrong_shape_is_a_bad_response(llm: FakeLLM, docs) -> None:
    """A content_block_delta whose delta is a string: 'error (unknown): anthropic: AttributeError: ...'."""
    llm.push(an_events(("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": "oops"})))
    result = await ask("When are backups?", llm, docs, "anthropic")
    assert result.stopped_reason == "error" and result.error_kind == "bad_response", result.error
    assert "Messages format" in (result.error or "")


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("header", [{"retry-after": "1000000000"}, {"retry-after-ms": "99999999999999"}])
async def test_a_huge_retry_after_is_not_slept(llm: FakeLLM, docs, wire: str, header: dict[str, str]) -> None:
    """Found with a server answering 429 with Retry-After: 1000000000: the anthropic SDK honours any wait up to
    50 days, so docs-agent slept until --timeout (300 s by default), then blamed the deadline, and --fallback
    never got its turn. Both wires now give up at once over 120 s (the openai SDK's own cap) and say why."""
    llm.push(error(429, "slow down", headers=header, kind="rate_limit_error"), text(wire, "never"))
    started = time.monotonic()
    result = await ask("When are backups?", llm, docs, wire, deadline_s=30)
    assert time.monotonic() - started < 10 and len(llm.requests) == 1
    assert result.stopped_reason == "error" and result.error_kind == "rate_limit", result.error
    assert "asked to wait" in (result.error or "")
