"""Issue 27 item 3, the gaps: a turn that stopped on an error (a rate limit, the provider failing after its
retries) is resumable like a crashed one, re-using its stored tool results; and a resume runs the turn the way
it was asked (`--strategy plan`, `--reflect`), or says when it cannot tell. Real CLI, the tiny MCP server over
stdio, the real OpenAI and Anthropic SDKs against the fake LLM over loopback HTTP."""

from __future__ import annotations

import itertools
import json

import pytest

from agent_client.models import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from agent_client.sessions import SessionStore, unfinished

from .fake_llm import FakeLLM, an_text, an_tools, error, oa_text, oa_tools
from .test_cli import TINY, cli, llm_args

ANSWER = "Nightly at 02:00 UTC (ops/backup.md — Schedule)."
SEARCH = ("s1", "search_documents", '{"query": "backups"}')
READ = ("r1", "read_section", '{"id": "ops/backup.md", "section": "Schedule"}')
NO_RETRY = ("--max-retries", "0")


def sent_text(body: dict) -> str:
    return json.dumps(body.get("messages", []), ensure_ascii=False)


def test_a_turn_stopped_by_a_rate_limit_is_resumed_from_its_stored_tool_results(
    llm: FakeLLM, capsys, monkeypatch
) -> None:
    llm.push(oa_tools([SEARCH]), oa_tools([READ]), error(429, "slow down", kind="rate_limit_error"))
    code, stdout, stderr = cli(
        capsys, monkeypatch, "ask", "When are backups?", "--session", "s", "--server-cmd", TINY, *llm_args(llm),
        *NO_RETRY, "--json",
    )  # fmt: skip
    assert code == 1 and json.loads(stdout)["stopped_reason"] == "error", stderr
    stored = SessionStore().load("s")
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert unfinished(stored) == 0  # was None: the error's closing line ended the turn for good

    llm.push(oa_text(ANSWER))
    code, stdout, stderr = cli(
        capsys, monkeypatch, "ask", "--resume", "s", "--server-cmd", TINY, *llm_args(llm), "--json"
    )
    assert code == 0, stderr
    out = json.loads(stdout)
    assert out["answer"] == ANSWER and out["tool_calls"] == []  # the stored search and read, not run again
    assert out["citations"] == [{"id": "ops/backup.md", "heading": "Schedule", "verified": True, "reason": None}]
    assert any("2 stored tool results reused" in n for n in out["notes"])
    resumed = llm.requests[3].body["messages"]
    assert [m["role"] for m in resumed[1:]] == ["user", "assistant", "tool", "assistant", "tool"]
    assert "02:00" in resumed[-1]["content"] and "no answer" not in sent_text(llm.requests[3].body)
    history = SessionStore().load("s")  # the error's closing line, resumed past, is left out
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert history[-1] == AssistantMessage(content=ANSWER) and unfinished(history) is None


def test_chat_resumes_a_turn_the_anthropic_provider_failed(llm: FakeLLM, capsys, monkeypatch) -> None:
    """Anthropic: the provider overloaded after two tool rounds; /resume answers from the stored results, and
    the next question's history holds each round once, with no failure line."""
    llm.push(
        an_tools([SEARCH]),
        an_tools([READ]),
        error(529, "overloaded", kind="overloaded_error"),
        an_text(ANSWER),
        an_text("You're welcome."),
    )
    code, stdout, stderr = cli(
        capsys, monkeypatch, "chat", "--session", "c", "--server-cmd", TINY, *llm_args(llm, "anthropic"), *NO_RETRY,
        stdin="When are backups?\n/resume\nthanks\n/exit\n",
    )  # fmt: skip
    assert code == 0, stderr
    assert "error (" in stderr and "nothing to resume" not in stdout
    assert ANSWER in stdout and len(llm.requests) == 5
    resumed = llm.requests[3].body["messages"]
    results = [b for m in resumed for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    assert len(results) == 2 and "no answer" not in sent_text(llm.requests[3].body)
    after = [m["role"] for m in llm.requests[4].body["messages"]]
    assert all(a != b for a, b in itertools.pairwise(after))  # roles alternate: no stray failure line


def test_a_plan_turn_is_resumed_as_a_plan(llm: FakeLLM, capsys, monkeypatch) -> None:
    """`--strategy plan`: the plan's two rounds ran, then its answer call failed. The resume (asked without
    --strategy) plans what is still needed with the stored results in view, runs it, and answers without tools,
    as a plan does; it used to go on with the react loop."""
    plan = {
        "steps": [
            {"id": 1, "tool": "search_documents", "arguments": {"query": "backups"}},
            {"id": 2, "tool": "read_section", "arguments": {"id": "$1", "section": "Schedule"}, "after": [1]},
        ]
    }
    llm.push(oa_text(json.dumps(plan)), error(500, "boom", kind="api_error"))
    code, _, stderr = cli(
        capsys, monkeypatch, "ask", "When are backups?", "--session", "p", "--server-cmd", TINY, *llm_args(llm),
        *NO_RETRY, "--strategy", "plan",
    )  # fmt: skip
    assert code == 1, stderr
    rest = {"steps": [{"id": 1, "tool": "read_document", "arguments": {"id": "ops/backup.md", "mode": "outline"}}]}
    llm.push(oa_text(json.dumps(rest)), oa_text(ANSWER))
    code, stdout, stderr = cli(
        capsys, monkeypatch, "ask", "--resume", "p", "--server-cmd", TINY, *llm_args(llm), "--json"
    )
    assert code == 0, stderr
    out = json.loads(stdout)
    assert out["answer"] == ANSWER and [s["tool"] for s in out["plan"]["steps"]] == ["read_document"]
    assert [c["name"] for c in out["tool_calls"]] == ["read_document"]  # only the new step ran
    replan, answer = llm.requests[2].body, llm.requests[3].body
    assert "You plan how to answer" in replan["messages"][0]["content"]
    assert "resumed" in replan["messages"][-1]["content"] and "02:00" in sent_text(replan)
    assert "Your plan has run" in answer["messages"][0]["content"]
    assert answer.get("tool_choice") == "none" or "tools" not in answer
    assert "Resumed the way the turn was asked (--strategy plan), not with the options given now" in " ".join(
        out["notes"]
    )


def test_a_reflect_turn_is_reviewed_when_resumed(llm: FakeLLM, capsys, monkeypatch) -> None:
    critique = {"grounded": 5, "complete": 5, "cited": 5, "problems": ""}
    llm.push(oa_tools([READ]), error(500, "boom", kind="api_error"))
    code, _, stderr = cli(
        capsys, monkeypatch, "ask", "When are backups?", "--session", "r", "--server-cmd", TINY, *llm_args(llm),
        *NO_RETRY, "--reflect",
    )  # fmt: skip
    assert code == 1, stderr
    llm.push(oa_text(ANSWER), oa_text(json.dumps(critique)))
    code, stdout, stderr = cli(
        capsys, monkeypatch, "ask", "--resume", "r", "--server-cmd", TINY, *llm_args(llm), "--json"
    )
    assert code == 0, stderr
    out = json.loads(stdout)
    assert out["answer"] == ANSWER and out["reflection"] == {**critique, "revised": False}
    assert "02:00" in sent_text(llm.requests[3].body)  # the critic saw the stored read
    assert out["tool_calls"] == []


def test_a_turn_stored_without_its_options_says_how_it_was_resumed(llm: FakeLLM, capsys, monkeypatch) -> None:
    """A session written before the options were stored: resumed with the options given now, and said."""
    SessionStore().append(
        "old",
        [
            UserMessage(content="When are backups?"),
            AssistantMessage(tool_calls=[ToolCall(id="r1", name="read_section", arguments_json=READ[2])]),
            ToolResultMessage(tool_call_id="r1", name="read_section", content="Backups run nightly at 02:00 UTC."),
        ],
    )
    llm.push(oa_text(ANSWER))
    code, stdout, stderr = cli(
        capsys, monkeypatch, "ask", "--resume", "old", "--server-cmd", TINY, *llm_args(llm), "--json"
    )
    assert code == 0, stderr
    notes = " ".join(json.loads(stdout)["notes"])
    assert "does not say how it was asked" in notes and "resumed with --strategy react" in notes


def test_a_turn_whose_server_died_stops_and_is_resumed_running_only_the_unanswered_call(
    llm: FakeLLM, capsys, monkeypatch
) -> None:
    """The MCP server's process exits during read_section: the turn stops with an error (it used to hand the model
    'Connection closed' and answer without the read), and a resume against a live server runs that read alone."""
    llm.push(oa_tools([SEARCH]), oa_tools([READ]))
    code, stdout, stderr = cli(
        capsys, monkeypatch, "ask", "When are backups?", "--session", "g", "--server-cmd", f"{TINY} --die-on read_section",
        *llm_args(llm), *NO_RETRY, "--json",
    )  # fmt: skip
    out = json.loads(stdout)
    assert code == 1 and out["stopped_reason"] == "error" and "stopped answering" in out["error"], stderr
    assert len(llm.requests) == 2  # the model was not asked to answer from a dead server
    assert unfinished(SessionStore().load("g")) == 0

    llm.push(oa_text(ANSWER))
    code, stdout, stderr = cli(
        capsys, monkeypatch, "ask", "--resume", "g", "--server-cmd", TINY, *llm_args(llm), "--json"
    )
    assert code == 0, stderr
    out = json.loads(stdout)
    assert [c["name"] for c in out["tool_calls"]] == ["read_section"]  # the search was stored, the read never was
    assert out["citations"] == [{"id": "ops/backup.md", "heading": "Schedule", "verified": True, "reason": None}]
    sent = llm.requests[2].body["messages"]
    assert [m.get("tool_call_id") for m in sent if m["role"] == "tool"] == ["s1", "r1"]
    assert "02:00" in sent[-1]["content"] and "Connection closed" not in sent_text(llm.requests[2].body)
    history = SessionStore().load("g", warn=lambda line: pytest.fail(line))  # the re-run replaces, no warning
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert "02:00" in history[4].content and history[-1] == AssistantMessage(content=ANSWER)
