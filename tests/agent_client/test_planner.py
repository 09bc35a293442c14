"""`--strategy plan` end to end: the real SDKs against the scripted fake LLM, a real (tiny) MCP server."""

from __future__ import annotations

import json

import pytest

from agent_client.mcp_session import connect
from agent_client.models import ToolSpec
from agent_client.planner import levels, parse_plan

from . import tiny_docs_server
from .fake_llm import FakeLLM, an_text, oa_text, oa_tools
from .helpers import ask
from .test_cli import TINY, cli, llm_args
from .test_loop import WIRES, text, tool_results, tools

pytestmark = pytest.mark.anyio

GOOD_PLAN = {
    "steps": [
        {"id": 1, "tool": "search_documents", "arguments": {"query": "port"}, "after": []},
        {"id": 2, "tool": "search_documents", "arguments": {"query": "backups"}, "after": []},
        {"id": 3, "tool": "read_section", "arguments": {"id": "$1", "section": "Installation"}, "after": [1]},
    ]
}
ANSWER = "The default port is 7420 (guides/setup.md — Installation)."


@pytest.fixture
async def docs():
    async with connect(tiny_docs_server.server) as conn:
        yield conn


def fenced(value: object) -> str:
    return "Here is the plan:\n```json\n" + json.dumps(value) + "\n```"


@pytest.mark.parametrize("wire", WIRES)
async def test_plan_runs_independent_steps_together_and_feeds_results_forward(llm: FakeLLM, docs, wire: str) -> None:
    llm.push(text(wire, fenced(GOOD_PLAN)), text(wire, ANSWER))
    result = await ask("What is the default port?", llm, docs, wire, strategy="plan")
    assert result.stopped_reason == "final", result.error
    assert result.answer == ANSWER and result.citations[0].verified
    assert result.plan is not None and not result.plan.replanned and result.plan.note is None
    assert [(s.id, s.is_error) for s in result.plan.steps] == [(1, False), (2, False), (3, False)]
    # "$1" became the first document of step 1's result
    assert result.plan.steps[2].arguments == {"id": "guides/setup.md", "section": "Installation"}
    assert result.iterations == 4  # plan, two rounds, answer
    assert len(llm.requests) == 2
    planning, answering = llm.requests[0].body, llm.requests[1].body
    assert "tools" not in planning  # the planning call declares no tools: it writes JSON
    system = planning["messages"][0]["content"] if wire == "openai" else planning["system"][0]["text"]
    assert '"steps"' in system and "read_section" in system
    results = tool_results(wire, answering)
    assert [r[0] for r in results] == ["plan_3_3"] and "7420" in results[0][1]
    if wire == "openai":  # round 1 went out as one assistant message with two calls (run concurrently)
        rounds = [m for m in answering["messages"] if m["role"] == "assistant"]
        assert [len(m["tool_calls"]) for m in rounds] == [2, 1]
    assert result.usage.prompt_tokens == 200


@pytest.mark.parametrize("wire", WIRES)
async def test_a_failed_step_replans_once_then_answers(llm: FakeLLM, docs, wire: str) -> None:
    bad = {"steps": [{"id": 1, "tool": "read_section", "arguments": {"id": "guides/nope.md", "section": "X"}}]}
    good = {
        "steps": [{"id": 1, "tool": "read_section", "arguments": {"id": "guides/setup.md", "section": "Installation"}}]
    }
    llm.push(text(wire, json.dumps(bad)), text(wire, json.dumps(good)), text(wire, ANSWER))
    result = await ask("port?", llm, docs, wire, strategy="plan")
    assert result.stopped_reason == "final" and result.answer == ANSWER
    assert result.plan is not None and result.plan.replanned and result.plan.note is None
    assert [s.is_error for s in result.plan.steps] == [True, False]
    replan = json.dumps(llm.requests[1].body)
    assert "step 1 (read_section) failed" in replan and "No document" in replan


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize(
    ("reply", "sentence"),
    [
        ("I would search first, then read.", "The plan was not a JSON object."),
        (json.dumps({"steps": [{"id": 1, "tool": "delete_everything"}]}), "unknown tool 'delete_everything'"),
        (
            json.dumps({"steps": [{"id": 1, "tool": "slow", "after": [2]}, {"id": 2, "tool": "slow", "after": [1]}]}),
            "depend on each other in a cycle",
        ),
        (json.dumps({"steps": [{"id": 1, "tool": "slow", "after": [7]}]}), "a step 7 that does not exist"),
        (json.dumps({"steps": "search"}), "did not have the expected shape"),
    ],
)
async def test_a_bad_plan_is_one_sentence_and_the_react_loop_answers(
    llm: FakeLLM, docs, wire: str, reply: str, sentence: str
) -> None:
    llm.push(text(wire, reply), tools(wire, [("c1", "search_documents", '{"query": "port"}')]), text(wire, ANSWER))
    result = await ask("port?", llm, docs, wire, strategy="plan")
    assert result.stopped_reason == "final" and result.answer == ANSWER
    assert result.plan is not None and sentence in (result.plan.note or "")
    assert result.plan.note.endswith("docs-agent answered with the react loop instead.")
    assert "\n" not in result.plan.note and result.plan.steps == []
    assert [c.name for c in result.tool_calls] == ["search_documents"]
    assert result.iterations == 3  # the planning call counts against --max-iterations


async def test_a_plan_deeper_than_the_iteration_limit_falls_back(llm: FakeLLM, docs) -> None:
    chain = {
        "steps": [
            {"id": i, "tool": "slow", "arguments": {"seconds": 0}, "after": [i - 1] if i > 1 else []}
            for i in range(1, 5)
        ]
    }
    llm.push(oa_text(json.dumps(chain)), oa_text("Nothing needed."))
    result = await ask("?", llm, docs, strategy="plan", max_iterations=3)
    assert result.plan is not None and "needs 4 rounds" in (result.plan.note or "")
    assert result.stopped_reason == "final" and result.iterations == 2


async def test_the_plan_stops_at_the_token_budget(llm: FakeLLM, docs) -> None:
    llm.push(oa_text(json.dumps(GOOD_PLAN), prompt=500))
    result = await ask("port?", llm, docs, strategy="plan", max_tokens=100)
    assert result.stopped_reason == "budget" and result.tool_calls == [] and len(llm.requests) == 1


def test_plan_levels_and_checks() -> None:
    specs = [ToolSpec(name=n, wire_name=n) for n in ("search_documents", "read_section")]
    plan, problem = parse_plan(json.dumps(GOOD_PLAN), specs, 16)
    assert plan is not None and problem is None
    assert [[s.id for s in r] for r in levels(plan) or []] == [[1, 2], [3]]
    # a "$N" reference is a dependency even when "after" forgets it
    implicit = {
        "steps": [{"id": 1, "tool": "read_section", "arguments": {"id": "$2"}}, {"id": 2, "tool": "search_documents"}]
    }
    plan, _ = parse_plan(json.dumps(implicit), specs, 16)
    assert plan is not None and [[s.id for s in r] for r in levels(plan) or []] == [[2], [1]]
    plan, problem = parse_plan(json.dumps(GOOD_PLAN), specs, 2)
    assert plan is None and problem == "The plan has 3 steps; at most 2 are allowed."


def test_ask_json_has_the_plan(llm: FakeLLM, capsys, monkeypatch) -> None:
    llm.push(an_text(json.dumps(GOOD_PLAN)), an_text(ANSWER))
    code, stdout, _ = cli(
        capsys,
        monkeypatch,
        "ask",
        "port?",
        "--server-cmd",
        TINY,
        *llm_args(llm, "anthropic"),
        "--strategy",
        "plan",
        "--json",
    )
    assert code == 0
    out = json.loads(stdout)
    assert out["answer"] == ANSWER and out["plan"]["replanned"] is False and out["plan"]["note"] is None
    assert [s["tool"] for s in out["plan"]["steps"]] == ["search_documents", "search_documents", "read_section"]
    assert [c["name"] for c in out["tool_calls"]] == ["search_documents", "search_documents", "read_section"]


def test_a_bad_plan_on_the_terminal_is_one_line_and_no_traceback(llm: FakeLLM, capsys, monkeypatch) -> None:
    llm.push(oa_text("{not json"), oa_tools([("c1", "search_documents", '{"query": "port"}')]), oa_text(ANSWER))
    code, stdout, stderr = cli(
        capsys, monkeypatch, "ask", "port?", "--server-cmd", TINY, *llm_args(llm), "--strategy", "plan"
    )
    assert code == 0 and ANSWER in stdout and "{not json" not in stdout
    assert "The plan was not a JSON object. docs-agent answered with the react loop instead." in stderr
    assert "Traceback" not in stderr


def test_plan_expand_and_reflect_together(llm: FakeLLM, capsys, monkeypatch) -> None:
    """Anthropic, whose history with tool blocks must keep declaring the tools: the side calls that see the
    expanded search (the plan) declare them, those that do not (the rewrite, the critique) do not."""
    read = {
        "steps": [{"id": 1, "tool": "read_section", "arguments": {"id": "guides/setup.md", "section": "Installation"}}]
    }
    critique = {"grounded": 5, "complete": 5, "cited": 5, "problems": ""}
    llm.push(
        an_text(json.dumps({"queries": ["widget port"]})),
        an_text(json.dumps(read)),
        an_text(ANSWER),
        an_text(json.dumps(critique)),
    )
    code, stdout, stderr = cli(
        capsys,
        monkeypatch,
        "ask",
        "default port?",
        "--server-cmd",
        TINY,
        *llm_args(llm, "anthropic"),
        "--strategy",
        "plan",
        "--expand",
        "--reflect",
        "--json",
    )
    assert code == 0, stderr
    out = json.loads(stdout)
    assert out["answer"] == ANSWER and out["citations"][0]["verified"] and "notes" not in out
    assert out["plan"]["steps"][0]["tool"] == "read_section" and out["reflection"]["revised"] is False
    assert [c["name"] for c in out["tool_calls"]] == ["search_documents", "search_documents", "read_section"]
    assert out["usage"]["prompt_tokens"] == 400
    assert ["tools" in r.body for r in llm.requests] == [False, True, True, False]
