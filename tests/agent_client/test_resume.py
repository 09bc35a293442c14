"""Nothing lost mid-turn: each tool round is stored as it completes; a turn cut by a kill is resumed from its
stored tool results; a damaged session row is skipped with one warning. Real CLI processes, the tiny MCP
server over stdio, the fake LLM over loopback HTTP."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from agent_client.home import db_path
from agent_client.mcp_session import connect
from agent_client.models import AssistantMessage, Shown, ToolCall, ToolResultMessage, TurnOptions, UserMessage
from agent_client.sessions import SessionStore, unfinished

from . import tiny_docs_server
from .fake_llm import FakeLLM, oa_text, oa_tools
from .helpers import make_agent
from .test_cli import REPO, TINY, cli, llm_args

ANSWER = "Nightly at 02:00 UTC (ops/backup.md — Schedule)."


def cut_a_turn(llm: FakeLLM, session: str) -> None:
    """`ask --session` in a child process: a search, a read, then the third model call hangs and the process
    is killed (SIGKILL: no handler runs, as in a crash)."""
    llm.push(
        oa_tools([("s1", "search_documents", '{"query": "backups"}')]),
        oa_tools([("r1", "read_section", '{"id": "ops/backup.md", "section": "Schedule"}')]),
        oa_text("too late", prompt=1),
    )
    llm.script[-1].delay_s = 30
    command = [sys.executable, "-m", "agent_client", "ask", "When are backups?", "--session", session]
    proc = subprocess.Popen(
        [*command, "--server-cmd", TINY, *llm_args(llm)],
        cwd=REPO,
        env={**os.environ, "DOCS_AGENT_MAX_RETRIES": "0"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while len(llm.requests) < 3 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert len(llm.requests) == 3, "the child never reached its third model call"
    finally:
        proc.kill()
        proc.wait(10)
    stored = SessionStore().load(session)
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant", "tool"]  # both rounds kept
    assert "02:00" in stored[-1].content and unfinished(stored) == 0


def test_a_killed_turn_is_resumed_with_ask_without_calling_the_tools_again(llm: FakeLLM, capsys, monkeypatch) -> None:
    cut_a_turn(llm, "s")
    llm.push(oa_text(ANSWER))
    code, stdout, stderr = cli(
        capsys, monkeypatch, "ask", "--resume", "s", "--server-cmd", TINY, *llm_args(llm), "--json"
    )
    assert code == 0, stderr
    out = json.loads(stdout)
    assert out["answer"] == ANSWER and out["tool_calls"] == []  # the stored results were used, no tool ran
    assert out["citations"] == [{"id": "ops/backup.md", "heading": "Schedule", "verified": True, "reason": None}]
    assert any("Resumed" in n and "2 stored tool results reused" in n for n in out["notes"])
    (resumed,) = llm.requests[3:]
    sent = resumed.body["messages"]
    assert [m["role"] for m in sent[1:]] == ["user", "assistant", "tool", "assistant", "tool"]
    assert sent[1]["content"] == "When are backups?" and "02:00" in sent[-1]["content"]
    history = SessionStore().load("s")
    assert history[-1] == AssistantMessage(content=ANSWER) and unfinished(history) is None
    code, _, stderr = cli(capsys, monkeypatch, "ask", "--resume", "s", "--server-cmd", TINY, *llm_args(llm))
    assert code == 1 and "session 's' has no unfinished answer to resume" in stderr


def test_chat_offers_to_continue_a_killed_turn(llm: FakeLLM, capsys, monkeypatch) -> None:
    cut_a_turn(llm, "c")
    llm.push(oa_text(ANSWER))
    code, stdout, stderr = cli(
        capsys, monkeypatch, "chat", "--session", "c", "--server-cmd", TINY, *llm_args(llm), stdin="y\n/exit\n"
    )
    assert code == 0, stderr
    assert "unfinished answer to 'When are backups?'. Continue it? [Y/n]" in stderr
    assert ANSWER in stdout and len(llm.requests) == 4
    assert "02:00" in llm.requests[3].body["messages"][-1]["content"]
    assert SessionStore().load("c")[-1] == AssistantMessage(content=ANSWER)


def test_declining_closes_the_cut_turn_so_the_next_question_has_a_valid_history(
    llm: FakeLLM, capsys, monkeypatch
) -> None:
    cut_a_turn(llm, "d")
    llm.push(oa_text("Hello."))
    code, stdout, stderr = cli(
        capsys, monkeypatch, "chat", "--session", "d", "--server-cmd", TINY, *llm_args(llm), stdin="n\nhello\n/exit\n"
    )
    assert code == 0, stderr
    assert "Hello." in stdout
    sent = llm.requests[3].body["messages"]
    assert sent[-1] == {"role": "user", "content": "hello"}
    assert sent[-2]["role"] == "assistant" and "(no answer: not resumed)" in sent[-2]["content"]


@pytest.mark.anyio
async def test_resume_runs_only_the_calls_that_never_got_a_result(llm: FakeLLM) -> None:
    """A crash between two concurrent tool calls: the stored result is re-used, only the other call runs."""
    tail = [
        UserMessage(content="port and backups?"),
        AssistantMessage(
            tool_calls=[
                ToolCall(id="a", name="search_documents", arguments_json='{"query": "backups"}'),
                ToolCall(
                    id="b", name="read_section", arguments_json='{"id": "guides/setup.md", "section": "Installation"}'
                ),
            ]
        ),
        ToolResultMessage(
            tool_call_id="a",
            name="search_documents",
            content="ops/backup.md — Schedule: Backups run nightly",
            shown=[Shown(id="ops/backup.md", headings=["schedule"])],
        ),
    ]
    llm.push(oa_text("Port 7420 (guides/setup.md — Installation), backups nightly (ops/backup.md — Schedule)."))
    saved: list = []
    async with connect(tiny_docs_server.server) as docs:
        agent = make_agent(llm, docs)
        try:
            result = await agent.resume(tail, progress=saved.extend)
        finally:
            await agent.model.aclose()
    assert result.stopped_reason == "final", result.error
    assert [c.name for c in result.tool_calls] == ["read_section"]  # the search was not run again
    assert [(c.id, c.verified) for c in result.citations] == [("guides/setup.md", True), ("ops/backup.md", True)]
    assert [m.role for m in saved] == ["tool", "assistant"] and saved[0].tool_call_id == "b"
    sent = llm.requests[0].body["messages"]
    assert [m.get("tool_call_id") for m in sent if m["role"] == "tool"] == ["a", "b"]


def test_a_damaged_session_row_is_skipped_with_one_warning(llm: FakeLLM, capsys, monkeypatch) -> None:
    store = SessionStore()
    store.append(
        "dmg",
        [
            UserMessage(content="first?"),
            AssistantMessage(tool_calls=[ToolCall(id="t1", name="search_documents", arguments_json="{}")]),
            ToolResultMessage(tool_call_id="t1", name="search_documents", content="r1"),
            AssistantMessage(content="First answer."),
        ],
    )
    conn = sqlite3.connect(db_path())
    with conn:
        rows = [
            "{not json",  # 4
            json.dumps({"role": "robot", "content": "?"}),  # 5: wrong shape
            json.dumps({"role": "tool", "tool_call_id": "zz", "name": "x", "content": "stray"}),  # 6: no call
            json.dumps({"role": "user", "content": "second?"}),  # 7
            json.dumps(  # 8: a tool call whose result never came, then a new message
                {"role": "assistant", "content": "", "tool_calls": [{"id": "t9", "name": "read_section"}]}
            ),
            json.dumps({"role": "assistant", "content": "Second answer."}),  # 9
        ]
        conn.executemany(
            "INSERT INTO messages (session, seq, body) VALUES ('dmg', ?, ?)", [(4 + i, b) for i, b in enumerate(rows)]
        )
    conn.close()
    llm.push(oa_text("Third answer."))
    code, stdout, stderr = cli(
        capsys, monkeypatch, "chat", "--session", "dmg", "--server-cmd", TINY, *llm_args(llm), stdin="third?\n/exit\n"
    )
    assert code == 0 and "Traceback" not in stderr and "Third answer." in stdout
    warnings = [line for line in stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: session 'dmg': message 4 skipped (not valid JSON)",
        "warning: session 'dmg': message 5 skipped (not a message of the expected shape)",
        "warning: session 'dmg': message 6 skipped (a tool result with no tool call before it)",
        "warning: session 'dmg': message 8 skipped (1 tool call without a result)",
    ]
    sent = llm.requests[0].body["messages"]
    assert [m["role"] for m in sent[1:]] == ["user", "assistant", "tool", "assistant", "user", "assistant", "user"]
    assert "stray" not in json.dumps(sent)
    conn = sqlite3.connect(db_path())
    (count,) = conn.execute("SELECT COUNT(*) FROM messages WHERE session = 'dmg'").fetchone()
    conn.close()
    assert count == 12  # nothing deleted: 10 stored rows plus the new question and answer


def test_ctrl_c_in_chat_keeps_the_tool_rounds_and_resume_finishes_the_answer(llm: FakeLLM) -> None:
    """SIGINT while the third model call hangs: the chat goes on, and /resume answers from the stored results."""
    llm.push(
        oa_tools([("s1", "search_documents", '{"query": "backups"}')]),
        oa_tools([("r1", "read_section", '{"id": "ops/backup.md", "section": "Schedule"}')]),
        oa_text("too late", prompt=1),
        oa_text(ANSWER),
    )
    llm.script[2].delay_s = 30
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_client", "chat", "--session", "k", "--server-cmd", TINY, *llm_args(llm)],
        cwd=REPO,
        env={**os.environ, "DOCS_AGENT_MAX_RETRIES": "0"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write("When are backups?\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 120
        while len(llm.requests) < 3 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert len(llm.requests) == 3
        time.sleep(0.3)  # the request is in flight
        proc.send_signal(signal.SIGINT)
        time.sleep(0.5)
        out, err = proc.communicate("/resume\n/exit\n", timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 0, err
    assert "(cancelled — /resume finishes this answer" in err and "Traceback" not in err
    assert ANSWER in out and len(llm.requests) == 4
    assert "02:00" in llm.requests[3].body["messages"][-1]["content"]  # the stored read, not called again
    history = SessionStore().load("k")
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]


def test_a_new_question_with_ask_session_closes_the_cut_turn(llm: FakeLLM, capsys, monkeypatch) -> None:
    cut_a_turn(llm, "a")
    llm.push(oa_text("Hello."))
    code, stdout, stderr = cli(
        capsys, monkeypatch, "ask", "hello", "--session", "a", "--server-cmd", TINY, *llm_args(llm)
    )
    assert code == 0, stderr
    assert "Hello." in stdout
    sent = llm.requests[3].body["messages"]
    assert [m["role"] for m in sent[1:]] == ["user", "assistant", "tool", "assistant", "tool", "assistant", "user"]
    assert "(no answer: interrupted, not resumed)" in sent[-2]["content"]
    history = SessionStore().load("a")
    assert history[-2:] == [UserMessage(content="hello", options=TurnOptions()), AssistantMessage(content="Hello.")]
    assert unfinished(history) is None
