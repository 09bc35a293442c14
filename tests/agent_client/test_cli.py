"""`docs-agent` end to end in a subprocess: the real CLI, a real MCP server over stdio, the fake LLM over HTTP."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from agent_client.cli import main
from agent_client.providers import PROVIDERS

from .conftest import TEST_KEY, TINY_TOKEN
from .fake_llm import FakeLLM, Reply, an_text, an_tools, error, oa_text, oa_tools

HERE = Path(__file__).parent
REPO = HERE.parent.parent
TINY = f"{sys.executable} {HERE / 'tiny_docs_server.py'}"
CONTRACT_KEYS = {
    "answer",
    "stopped_reason",
    "iterations",
    "tool_calls",
    "usage",
    "provider",
    "model",
    "providers_tried",
    "citations",
}


def run(*args: str, stdin: str | None = None, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_client", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=timeout,
        cwd=REPO,
        env={**os.environ, "DOCS_AGENT_MAX_RETRIES": "1"},
    )


def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str, stdin: str = ""
) -> tuple[int, str, str]:
    """The same `main()` in this process (faster); only the first tests need a separate process."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    monkeypatch.setenv("DOCS_AGENT_MAX_RETRIES", "1")
    monkeypatch.setenv("MCP_DOCS_TOKEN", TINY_TOKEN)
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def llm_args(llm: FakeLLM, wire: str = "openai") -> list[str]:
    return [
        "--provider",
        wire,
        "--base-url",
        llm.url + ("/v1" if wire == "openai" else ""),
        "--api-key-env",
        "FAKE_LLM_KEY",
        "--model",
        "fake-model",
    ]


def test_ask_json_end_to_end_against_real_mcp_docs(llm: FakeLLM, tmp_path: Path) -> None:
    if importlib.util.find_spec("mcp_docs.server") is None:  # skip only when the module is missing, not broken
        pytest.skip("mcp_docs.server (the MCP server) is not built yet")
    llm.push(
        oa_tools([("c1", "search_documents", '{"query": "collector install", "mode": "keyword"}')]),
        oa_tools([("c2", "read_section", '{"id": "guides/install.md", "section": "Installing the collector"}')]),
        oa_text("The collector receives telemetry (guides/install.md — Installing the collector)."),
    )
    env_index = {"MCP_DOCS_INDEX_DIR": str(tmp_path / "index"), "MCP_DOCS_EMBEDDINGS": "none"}
    os.environ.update(env_index)
    try:
        proc = run("ask", "What does the collector do?", "--docs", str(REPO / "examples"), *llm_args(llm), "--json")
    finally:
        for k in env_index:
            os.environ.pop(k)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) == CONTRACT_KEYS
    assert out["stopped_reason"] == "final" and out["iterations"] == 3
    assert out["answer"].startswith("The collector receives telemetry")
    assert [c["name"] for c in out["tool_calls"]] == ["search_documents", "read_section"]
    assert all(not c["is_error"] and isinstance(c["duration_ms"], int) for c in out["tool_calls"])
    assert out["tool_calls"][1]["arguments"] == {"id": "guides/install.md", "section": "Installing the collector"}
    assert out["usage"]["prompt_tokens"] == 300 and out["usage"]["completion_tokens"] == 60
    assert out["usage"]["cost_usd"] == pytest.approx(3 * (100 * 0.40 + 20 * 1.60) / 1e6)
    assert (out["provider"], out["model"]) == ("openai", "fake-model")
    # the real server's search result and section text reached the model
    search_result = llm.requests[1].body["messages"][-1]
    assert search_result["role"] == "tool" and "guides/install.md" in search_result["content"]
    section = llm.requests[2].body["messages"][-1]["content"]
    assert "collector" in section.lower() and not section.startswith("ERROR")


def test_ask_json_anthropic_over_server_cmd(llm: FakeLLM, capsys, monkeypatch) -> None:
    llm.push(
        an_tools([("t1", "search_documents", '{"query": "backup"}')]), an_text("Nightly (ops/backup.md — Schedule).")
    )
    code, stdout, stderr = cli(
        capsys, monkeypatch, "ask", "When are backups?", "--server-cmd", TINY, *llm_args(llm, "anthropic"), "--json"
    )
    assert code == 0, stderr
    out = json.loads(stdout)
    assert set(out) == CONTRACT_KEYS and out["stopped_reason"] == "final" and out["provider"] == "anthropic"
    assert "search_documents" in stderr  # compact tool activity on stderr


def test_ask_json_error_has_error_field_and_nonzero_exit(llm: FakeLLM, capsys, monkeypatch, http_server: str) -> None:
    llm.push(error(400, f"bad request for key {TEST_KEY}"))
    code, stdout, stderr = cli(capsys, monkeypatch, "ask", "?", "--server", http_server, *llm_args(llm), "--json")
    assert code != 0
    out = json.loads(stdout)
    assert set(out) == CONTRACT_KEYS | {"error"}
    assert out["stopped_reason"] == "error" and "HTTP 400" in out["error"]
    assert TEST_KEY not in stdout + stderr
    assert len(llm.requests) == 1


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
@pytest.mark.parametrize(
    "body, content_type",
    [
        (b"this is not json", "application/json"),
        (b"<html><body>Gateway login</body></html>", "text/html"),
        (b"data: {not json\n\n", "text/event-stream"),
    ],
)
def test_a_200_that_is_not_the_wire_format_is_an_error(
    llm: FakeLLM, capsys, monkeypatch, wire: str, body: bytes, content_type: str
) -> None:
    llm.push(Reply(body=body, content_type=content_type), Reply(body=body, content_type=content_type))
    code, stdout, stderr = cli(capsys, monkeypatch, "ask", "?", "--server-cmd", TINY, *llm_args(llm, wire), "--json")
    out = json.loads(stdout)
    assert code == 1 and out["stopped_reason"] == "error" and "not its streamed JSON format" in out["error"], stdout
    code, stdout, stderr = cli(capsys, monkeypatch, "ask", "?", "--server-cmd", TINY, *llm_args(llm, wire))
    assert code == 1 and stdout == "" and "error (bad_response)" in stderr


def test_ask_without_key_fails_cleanly(capsys, monkeypatch) -> None:
    code, stdout, _ = cli(capsys, monkeypatch, "ask", "?", "--server-cmd", TINY, "--provider", "mistral", "--json")
    assert code == 1
    out = json.loads(stdout)
    assert out["stopped_reason"] == "error" and "MISTRAL_API_KEY" in out["error"] and out["provider"] == "mistral"


def test_ask_streams_a_terminal_safe_answer_and_logs_the_call(
    llm: FakeLLM, capsys, monkeypatch, http_server: str
) -> None:
    llm.push(oa_text("Port \x1b[31m7420\x1b[0m\x07 (guides/setup.md — Installation)."))
    code, stdout, stderr = cli(capsys, monkeypatch, "ask", "port?", "--server", http_server, *llm_args(llm))
    assert code == 0, stderr
    assert stdout.strip() == "Port 7420 (guides/setup.md — Installation)."
    assert "\x1b" not in stdout + stderr
    assert "final" in stderr  # the summary line
    code, stdout, _ = cli(capsys, monkeypatch, "logs", "--json")
    logs = json.loads(stdout)
    assert len(logs) == 1 and logs[0]["status"] == "ok" and logs[0]["provider"] == "openai"
    assert logs[0]["prompt_tokens"] == 100 and logs[0]["latency_ms"] >= 0
    code, stdout, _ = cli(capsys, monkeypatch, "logs")
    assert code == 0 and "openai" in stdout


def test_bearer_token_echoed_by_the_model_is_scrubbed(llm: FakeLLM, capsys, monkeypatch, http_server: str) -> None:
    # the token's variable name does not say it is a secret: it is one because --server sends it as a bearer token
    monkeypatch.setenv("TINYPASS", TINY_TOKEN)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    llm.push(oa_text(f"Your token is {TINY_TOKEN}.", chunks=["Your token is tiny-", "secret-", "token-42."]))
    code = main(["ask", "token?", "--server", http_server, "--server-token-env", "TINYPASS", *llm_args(llm)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.strip() == "Your token is [redacted]." and TINY_TOKEN not in err


def test_chat_session_commands(llm: FakeLLM, capsys, monkeypatch, http_server: str) -> None:
    llm.push(oa_text("First answer."), oa_text("Second answer."))
    script = "hello there\n/usage\n/sessions\n/exit\n"
    code, stdout, stderr = cli(
        capsys, monkeypatch, "chat", "--server", http_server, *llm_args(llm), "--session", "work", stdin=script
    )
    assert code == 0, stderr
    assert "First answer." in stdout and "session 'work': 1 calls" in stdout and "* work" in stdout
    code, stdout, stderr = cli(
        capsys,
        monkeypatch,
        "chat",
        "--server",
        http_server,
        *llm_args(llm),
        "--session",
        "work",
        stdin="again\n/reset\n/delete work\n",
    )
    assert code == 0, stderr
    # resumed: the second request carries the first exchange
    contents = [m["content"] for m in llm.requests[-1].body["messages"]]
    assert contents[1:] == ["hello there", "First answer.", "again"]
    assert "deleted 'work'" in stdout


def test_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", TEST_KEY)
    proc = run("providers", "--json")
    assert proc.returncode == 0 and TEST_KEY not in proc.stdout
    data = json.loads(proc.stdout)
    rows = {r["name"]: r for r in data["providers"]}
    assert rows["groq"]["key"] == "set" and rows["openai"]["key"] == "not set" and rows["ollama"]["key"] == "not needed"
    assert data["default"] == "groq"
    table = run("providers")
    assert table.returncode == 0 and "groq (default)" in table.stdout and TEST_KEY not in table.stdout
    # piped: nothing cut, one provider per line
    for spec in PROVIDERS.values():
        line = next(ln for ln in table.stdout.splitlines() if ln.startswith(spec.name + " "))
        assert spec.default_model in line and (spec.key_env or "—") in line and "…" not in line


@pytest.mark.parametrize(
    "variable", ["DOCS_AGENT_MAX_RETRIES", "DOCS_AGENT_MAX_TOOL_CALLS", "DOCS_AGENT_MEMORY_TOKENS"]
)
def test_a_bad_setting_is_one_sentence_naming_the_variable(variable: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agent_client", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={**os.environ, variable: "abc"},
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert variable in proc.stderr and "'abc'" in proc.stderr


# ---------------------------------------------------------------- --fallback

OTHER = {"openai": "anthropic", "anthropic": "openai"}


def fallback_env(monkeypatch: pytest.MonkeyPatch, wire: str, server: FakeLLM) -> None:
    """The fallback provider reached the way its SDK documents: its own key and base-URL variables."""
    key_env, url_env = (
        ("OPENAI_API_KEY", "OPENAI_BASE_URL") if wire == "openai" else ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
    )
    monkeypatch.setenv(key_env, "fallback-key-0123456789")
    monkeypatch.setenv(url_env, server.openai_url if wire == "openai" else server.url)


@pytest.mark.parametrize("first", ["openai", "anthropic"])
def test_fallback_takes_over_the_question_with_its_history(llm: FakeLLM, capsys, monkeypatch, first: str) -> None:
    second = OTHER[first]
    tools_reply, _text_reply = (oa_tools, oa_text) if first == "openai" else (an_tools, an_text)
    llm.push(
        tools_reply([("c1", "search_documents", '{"query": "port"}')], prompt=100, completion=20),
        error(503, "overloaded", headers={"x-should-retry": "false"}, kind="overloaded_error"),
    )
    with FakeLLM((oa_text if second == "openai" else an_text)("7420 (guides/setup.md — Installation).")) as backup:
        fallback_env(monkeypatch, second, backup)
        code, stdout, stderr = cli(
            capsys,
            monkeypatch,
            "ask",
            "port?",
            "--server-cmd",
            TINY,
            *llm_args(llm, first),
            "--fallback",
            second,
            "--json",
        )
        assert code == 0, stderr
        out = json.loads(stdout)
        default_model = PROVIDERS[second].default_model
        assert out["answer"].startswith("7420") and (out["provider"], out["model"]) == (second, default_model)
        (failed, answered) = out["providers_tried"]
        assert (failed["provider"], failed["model"]) == (first, "fake-model") and "HTTP 503" in failed["error"]
        assert answered == {"provider": second, "model": default_model, "error": None}
        assert out["usage"]["prompt_tokens"] == 200  # one budget: the first provider's call counts too
        # the history (the first provider's tool call and its result) went over in the second's wire format
        (request,) = backup.requests
        body = json.dumps(request.body)
        assert "search_documents" in body and "guides/setup.md" in body
        assert "fallback-key-0123456789" in request.headers.get("x-api-key", "") + request.headers.get(
            "authorization", ""
        )
        if second == "anthropic":
            assert any(b.get("type") == "tool_result" for m in request.body["messages"] for b in m["content"])
        else:
            assert any(m["role"] == "tool" for m in request.body["messages"])
    code, stdout, _ = cli(capsys, monkeypatch, "logs", "--json")
    calls = [(c["provider"], c["status"]) for c in json.loads(stdout)]
    assert calls == [(first, "ok"), (first, "error"), (second, "ok")]  # every call of every provider


def test_a_fallback_is_one_line_on_the_terminal(llm: FakeLLM, capsys, monkeypatch) -> None:
    """Without --json, a fallback was invisible: the answer came from another provider with no word of it."""
    llm.push(error(503, "overloaded", headers={"x-should-retry": "false"}, kind="overloaded_error"))
    with FakeLLM(an_text("7420.")) as backup:
        fallback_env(monkeypatch, "anthropic", backup)
        code, stdout, stderr = cli(
            capsys, monkeypatch, "ask", "port?", "--server-cmd", TINY, *llm_args(llm), "--fallback", "anthropic"
        )
    assert code == 0 and "7420." in stdout
    (line,) = [line for line in stderr.splitlines() if "fallback" in line]
    model = PROVIDERS["anthropic"].default_model
    assert line == f"  ! fallback: openai/fake-model failed (server_error); anthropic/{model} answered"


def test_no_fallback_on_errors_another_provider_would_repeat(llm: FakeLLM, capsys, monkeypatch) -> None:
    llm.push(error(400, "This model's maximum context length is 128000 tokens"))
    with FakeLLM(an_text("never asked")) as backup:
        fallback_env(monkeypatch, "anthropic", backup)
        monkeypatch.setenv("DOCS_AGENT_FALLBACK", "anthropic")  # the variable instead of --fallback
        code, stdout, _ = cli(capsys, monkeypatch, "ask", "?", "--server-cmd", TINY, *llm_args(llm), "--json")
        out = json.loads(stdout)
        assert code == 1 and out["stopped_reason"] == "error" and backup.requests == []
        assert [a["provider"] for a in out["providers_tried"]] == ["openai"]


@pytest.mark.parametrize(
    "fallback, expected",
    [
        ("mistral", "--fallback mistral: No API key for provider mistral"),
        ("nope", "--fallback nope: Unknown provider 'nope'"),
    ],
)
def test_a_bad_fallback_is_one_sentence(llm: FakeLLM, capsys, monkeypatch, fallback: str, expected: str) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "fallback-key-0123456789")
    code, stdout, stderr = cli(
        capsys, monkeypatch, "ask", "?", "--server-cmd", TINY, *llm_args(llm), "--fallback", f"anthropic,{fallback}"
    )
    assert code == 1 and stdout == "" and "Traceback" not in stderr
    assert expected in stderr and len(stderr.strip().splitlines()) == 1 and llm.requests == []


def test_unverified_citations_in_json_and_flagged_on_the_terminal(llm: FakeLLM, capsys, monkeypatch) -> None:
    answer = "Nightly (ops/backup.md — Schedule), on port 7420 (guides/setup.md — Installation)."
    for _ in range(2):
        llm.push(oa_tools([("s1", "search_documents", '{"query": "backups"}')]), oa_text(answer))
    code, stdout, stderr = cli(capsys, monkeypatch, "ask", "?", "--server-cmd", TINY, *llm_args(llm), "--json")
    assert code == 0, stderr
    assert json.loads(stdout)["citations"] == [
        {"id": "ops/backup.md", "heading": "Schedule", "verified": True, "reason": None},  # the search showed it
        {"id": "guides/setup.md", "heading": "Installation", "verified": False, "reason": "never read"},
    ]
    code, stdout, stderr = cli(capsys, monkeypatch, "ask", "?", "--server-cmd", TINY, *llm_args(llm))
    assert code == 0 and answer in stdout
    assert "unverified citation: guides/setup.md — Installation (never read)" in stderr
    assert "ops/backup.md — Schedule" not in stderr


def test_strict_citations_exit_non_zero_on_an_unverified_citation(llm: FakeLLM, capsys, monkeypatch) -> None:
    invented = "Nightly (ops/backup.md — Schedule), on port 7420 (guides/setup.md — Installation)."
    checked = "Nightly (ops/backup.md — Schedule)."
    for answer in (invented, invented, checked):
        llm.push(oa_tools([("s1", "search_documents", '{"query": "backups"}')]), oa_text(answer))
    args = ("ask", "?", "--server-cmd", TINY, *llm_args(llm), "--strict-citations")
    code, stdout, stderr = cli(capsys, monkeypatch, *args)
    assert code == 3 and invented in stdout
    assert "--strict-citations: 1 unverified citation" in stderr
    code, stdout, _ = cli(capsys, monkeypatch, *args, "--json")
    assert code == 3 and [c["verified"] for c in json.loads(stdout)["citations"]] == [True, False]
    code, stdout, stderr = cli(capsys, monkeypatch, *args)
    assert code == 0 and checked in stdout and "strict" not in stderr


def test_an_anthropic_key_without_its_sdk_is_named_not_silently_skipped(tmp_path: Path) -> None:
    """Found following the README in a fresh `pip install .` (no [anthropic] extra): ANTHROPIC_API_KEY set, and
    `docs-agent ask` went to ollama and said "No provider key is set" — the one key the user had set."""
    without_sdk = "import sys; sys.modules['anthropic'] = None; from agent_client.cli import main; sys.exit(main())"
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-test-0123456789", "DOCS_AGENT_MAX_RETRIES": "0"}
    table = subprocess.run(
        [sys.executable, "-c", without_sdk, "providers"], capture_output=True, text=True, timeout=60, cwd=REPO, env=env
    )
    line = next(ln for ln in table.stdout.splitlines() if ln.startswith("anthropic "))
    assert "mcp-docs[anthropic]" in line, table.stdout
    asked = subprocess.run(
        [sys.executable, "-c", without_sdk, "ask", "?", "--server-cmd", TINY, "--timeout", "20", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=env,
    )
    assert "Traceback" not in asked.stderr
    assert "ANTHROPIC_API_KEY is set" in asked.stderr and "mcp-docs[anthropic]" in asked.stderr, asked.stderr
    assert "No provider key is set" not in asked.stdout + asked.stderr


SPOOFING = "\x9b\x85\x7f\u202e\u2066\u2028"  # C1 CSI and NEL, DEL, a bidi override and isolate, a line separator


def test_json_and_terminal_output_carry_no_raw_c1_or_bidi_control(llm: FakeLLM, capsys, monkeypatch) -> None:
    """Found with a hostile model answering 'evil \\x9b31m \\u202e txt.exe': `ask --json` printed the C1 CSI and
    DEL raw (JSON escapes only U+0000-U+001F, and ensure_ascii=False kept the rest), and the terminal kept the
    right-to-left override that makes 'exe.txt' read as 'txt.exe'. The JSON still decodes to the model's text."""
    answer = f"Nightly{SPOOFING}2J (ops/backup.md — Schedule)."
    llm.push(oa_text(answer), oa_text(answer))
    code, stdout, stderr = cli(capsys, monkeypatch, "ask", "?", "--server-cmd", TINY, *llm_args(llm), "--json")
    assert code == 0, stderr
    assert not any(ch in stdout for ch in SPOOFING), repr(stdout)
    assert json.loads(stdout)["answer"] == answer  # escaped, not lost
    code, stdout, stderr = cli(capsys, monkeypatch, "ask", "?", "--server-cmd", TINY, *llm_args(llm))
    assert code == 0, stderr
    assert not any(ch in stdout + stderr for ch in SPOOFING), repr(stdout)
    assert "Nightly" in stdout and "(ops/backup.md — Schedule)." in stdout


def test_a_password_in_the_base_url_is_never_shown(capsys, monkeypatch, isolated_env: Path) -> None:
    """Found pointing --base-url at a proxy with basic auth (http://user:pass@host/v1): the network error
    printed the URL with its password on the terminal, in ask --json, in the session and in the call log."""
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    password = "hunter2-proxy-pass"
    url = f"http://proxyuser:{password}@127.0.0.1:{port}/v1"
    for extra in ([], ["--json"]):
        code, stdout, stderr = cli(
            capsys, monkeypatch, "ask", "?", "--server-cmd", TINY, "--base-url", url, "--max-retries", "0", *extra
        )
        assert code == 1 and "error" in stdout + stderr
        assert password not in stdout + stderr, stdout + stderr
        assert f"127.0.0.1:{port}" in stdout + stderr  # the address itself is worth showing
    for path in isolated_env.rglob("*"):
        if path.is_file():
            assert password.encode() not in path.read_bytes(), path


@pytest.mark.parametrize(
    "flag, value",
    [
        ("--timeout", "nan"),
        ("--timeout", "0"),
        ("--timeout", "-1"),
        ("--max-cost", "nan"),
        ("--max-cost", "-1"),
        ("--max-tokens", "0"),
    ],
)
def test_a_limit_that_cannot_work_is_one_sentence_before_any_call(llm: FakeLLM, flag: str, value: str) -> None:
    """Found trying odd values: `--timeout nan` printed a traceback (ValueError: deadline must not be NaN),
    `--timeout 0` asked the model anyway and then reported 'No answer within the 0 s deadline', and
    `--max-cost nan` silently disabled the budget (no cost is >= nan)."""
    proc = run("ask", "?", "--server-cmd", TINY, *llm_args(llm), f"{flag}={value}")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("error (configuration):") and flag in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not llm.requests


def test_docs_uses_the_index_that_mcp_docs_index_built(llm: FakeLLM, tmp_path: Path) -> None:
    """Found following the README with XDG_CACHE_HOME set: `mcp-docs index --root DIR` built the index under
    it, but the server `docs-agent --docs DIR` starts got only HOME, PATH, … and MCP_DOCS_*, so it built a
    second index under ~/.cache and re-embedded the collection in the background of every question."""
    if importlib.util.find_spec("mcp_docs.server") is None:
        pytest.skip("mcp_docs.server (the MCP server) is not built yet")
    cache = tmp_path / "xdg-cache"
    home = tmp_path / "home"
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(cache), "MCP_DOCS_EMBEDDINGS": "none"}
    env.pop("MCP_DOCS_INDEX_DIR", None)
    docs = tmp_path / "notes"
    docs.mkdir()
    (docs / "backup.md").write_text("# Backups\n\nBackups run nightly at 02:00 UTC.\n")
    subprocess.run(
        [sys.executable, "-m", "mcp_docs", "index", "--root", str(docs)], env=env, check=True, capture_output=True
    )
    (built,) = (cache / "mcp-docs").iterdir()
    llm.push(oa_tools([("c1", "search_documents", '{"query": "backups"}')]), oa_text("Nightly (backup.md — Backups)."))
    proc = subprocess.run(
        [sys.executable, "-m", "agent_client", "ask", "When?", "--docs", str(docs), *llm_args(llm), "--json"],
        env={**env, "DOCS_AGENT_MAX_RETRIES": "0"},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    assert list((cache / "mcp-docs").iterdir()) == [built]
    assert not (home / ".cache" / "mcp-docs").exists()  # no second index where XDG_CACHE_HOME was not seen
    assert "backup.md" in llm.requests[1].body["messages"][-1]["content"]


@pytest.mark.parametrize("junk", [b"\x00\xffnot a database" * 300, b"SQLite format 3\x00" + b"\x13" * 3000])
def test_a_damaged_data_file_is_one_sentence_and_is_left_alone(
    llm: FakeLLM, capsys, monkeypatch, isolated_env: Path, junk: bytes
) -> None:
    """Found writing garbage over docs-agent.sqlite3 (a disk error, a sync tool): `docs-agent logs` and
    `docs-agent chat` ended in a traceback (sqlite3.DatabaseError: file is not a database)."""
    isolated_env.mkdir(parents=True, exist_ok=True)
    damaged = isolated_env / "docs-agent.sqlite3"
    damaged.write_bytes(junk)
    for args in (["logs"], ["chat", "--server-cmd", TINY, *llm_args(llm), "--session", "s"]):
        code, _, stderr = cli(capsys, monkeypatch, *args, stdin="hello\n/exit\n")
        assert code == 1 and "Traceback" not in stderr, stderr
        assert stderr.startswith("error (configuration):") and "docs-agent.sqlite3" in stderr, stderr
        assert "DOCS_AGENT_HOME" in stderr
    assert damaged.read_bytes() == junk  # nothing the user may want back was overwritten


def test_session_names_are_printed_without_their_control_characters(llm: FakeLLM, capsys, monkeypatch) -> None:
    """`/sessions` and `docs-agent logs` printed a session name as stored: `--session $'w\\e[2J'` (a script's
    variable) cleared the screen each time the list was shown."""
    llm.push(oa_text("First answer."))
    name = "w\x1b[2J\x9b31m"
    code, stdout, stderr = cli(
        capsys, monkeypatch, "chat", "--server-cmd", TINY, *llm_args(llm), "--session", name, stdin="hi\n/sessions\n"
    )
    assert code == 0, stderr
    code, logs, _ = cli(capsys, monkeypatch, "logs")
    assert code == 0
    for text in (stdout, stderr, logs):
        assert "\x1b" not in text and "\x9b" not in text, repr(text)
