"""Small pure pieces: cost arithmetic, provider registry and detection, redaction, terminal safety, trimming."""

from __future__ import annotations

import pytest

from agent_client.context import trim_history
from agent_client.errors import AgentError, ErrorKind, classify, redact
from agent_client.models import AssistantMessage, ToolCall, ToolResultMessage, Usage, UserMessage
from agent_client.providers import DETECTION_ORDER, PROVIDERS, Prices, cost_usd, detect_provider, resolve
from agent_client.text import clip, terminal_safe

REQUIRED = {
    "openai",
    "anthropic",
    "deepseek",
    "mistral",
    "groq",
    "gemini",
    "qwen",
    "kimi",
    "openrouter",
    "ollama",
    "lmstudio",
    "vllm",
}


def test_cost_arithmetic() -> None:
    prices = Prices(input=0.40, cached_input=0.10, output=1.60)
    usage = Usage(prompt_tokens=1_000_000, cached_tokens=400_000, completion_tokens=500_000)
    assert cost_usd(usage, prices) == pytest.approx(0.6 * 0.40 + 0.4 * 0.10 + 0.5 * 1.60)
    assert cost_usd(Usage(), prices) == 0
    assert cost_usd(Usage(prompt_tokens=10, cached_tokens=50), prices) == pytest.approx(10 * 0.10 / 1e6)
    assert cost_usd(usage, PROVIDERS["ollama"].prices) == 0
    total = Usage(prompt_tokens=1, cached_tokens=2, completion_tokens=3) + Usage(prompt_tokens=10, completion_tokens=30)
    assert (total.prompt_tokens, total.cached_tokens, total.completion_tokens, total.total_tokens) == (11, 2, 33, 44)


def test_registry_has_every_provider() -> None:
    assert set(PROVIDERS) >= REQUIRED
    for spec in PROVIDERS.values():
        assert spec.wire in ("openai", "anthropic") and spec.default_model and spec.base_url
        assert spec.local == (spec.key_env is None)
    assert PROVIDERS["anthropic"].wire == "anthropic" and PROVIDERS["gemini"].wire == "openai"


def test_detection_order() -> None:
    assert detect_provider({}).name == "ollama"
    assert detect_provider({"GROQ_API_KEY": "x", "MISTRAL_API_KEY": "y"}).name == "mistral"
    assert detect_provider({"GROQ_API_KEY": "x", "OPENAI_API_KEY": "y"}).name == "openai"
    assert detect_provider({"ANTHROPIC_API_KEY": "x", "GEMINI_API_KEY": "y"}).name == "anthropic"
    assert detect_provider({"OPENAI_API_KEY": "y", "DOCS_AGENT_PROVIDER": "kimi"}).name == "kimi"
    assert DETECTION_ORDER[0] == "openai"


def test_resolve_overrides_and_missing_key() -> None:
    r = resolve("openai", model="m", base_url="http://x/v1", api_key_env="MY_KEY", environ={"MY_KEY": "sk-abcdefgh123"})
    assert (r.model, r.base_url, r.api_key) == ("m", "http://x/v1", "sk-abcdefgh123")
    assert "sk-abcdefgh123" not in repr(r)
    with pytest.raises(AgentError) as e:
        resolve("deepseek", environ={})
    assert e.value.kind is ErrorKind.AUTHENTICATION and "DEEPSEEK_API_KEY" in e.value.message
    assert resolve("ollama", environ={}).api_key is None
    with pytest.raises(AgentError):
        resolve("nope", environ={})
    # --base-url alone: an unnamed OpenAI-compatible server, and no known provider's key goes to it
    custom = resolve(None, base_url="http://gpu-box:9000/v1", environ={"OPENAI_API_KEY": "sk-abcdefgh123"})
    assert (custom.name, custom.spec.wire, custom.api_key) == ("custom", "openai", None)
    custom = resolve(None, base_url="http://gpu-box:9000/v1", api_key_env="BOX_KEY", environ={"BOX_KEY": "k"})
    assert custom.api_key == "k"
    with pytest.raises(AgentError):
        resolve(None, base_url="http://gpu-box:9000/v1", api_key_env="BOX_KEY", environ={})


def test_redaction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-very-secret-value")
    text = "key sk-proj-AbCdEf123456789 and Bearer abcdefghijkl and tok-very-secret-value and AIzaSyA1234567890123456789012"
    out = redact(text)
    for secret in ("sk-proj-AbCdEf123456789", "abcdefghijkl", "tok-very-secret-value", "AIzaSyA1234567890123456789012"):
        assert secret not in out


def test_scrubbing_writer_catches_secrets_split_across_writes() -> None:
    import io

    from agent_client.redaction import ScrubbingWriter, register_secret

    register_secret("pass phrase 12345")  # a configured secret may hold spaces
    sink = io.StringIO()
    writer = ScrubbingWriter(sink)
    for piece in ["a pass ", "phrase 1", "2345 and Bear", "er abcdefghijkl", "mnop and sk-proj-", "AbCdEf123456 end"]:
        writer.write(piece)
        writer.flush()
    writer.drain()
    assert sink.getvalue() == "a [redacted] and Bearer [redacted] and [redacted] end"


def test_classification_without_sdk_objects() -> None:
    class FakeStatus(Exception):
        def __init__(self, status: int, message: str):
            super().__init__(message)
            self.status_code, self.message = status, message

    assert classify(FakeStatus(429, "slow")).kind is ErrorKind.RATE_LIMIT
    assert classify(FakeStatus(529, "overloaded")).kind is ErrorKind.SERVER_ERROR
    assert classify(FakeStatus(401, "bad key")).retryable is False
    assert classify(FakeStatus(400, "prompt is too long: 300000 tokens")).kind is ErrorKind.CONTEXT_LENGTH
    assert classify(TimeoutError()).kind is ErrorKind.TIMEOUT
    assert classify(ConnectionRefusedError("refused")).kind is ErrorKind.NETWORK


def test_terminal_safe_and_clip() -> None:
    evil = "ok \x1b[31mred\x1b[0m \x1b]0;title\x07 bell\x07 nul\x00 cr\rline\n\ttab"
    safe = terminal_safe(evil)
    assert "\x1b" not in safe and "\x07" not in safe and "\x00" not in safe and "\r" not in safe
    assert "red" in safe and "\n\ttab" in safe
    text = "line\n" * 1000
    cut = clip(text, 100)
    assert cut.startswith("line\n") and "truncated by docs-agent" in cut and len(cut) < 300
    assert clip("short", 100) == "short"


def test_trim_never_splits_tool_calls_from_results() -> None:
    big = "x" * 4000
    msgs = [
        UserMessage(content="old question"),
        AssistantMessage(tool_calls=[ToolCall(id="o1", name="t")]),
        ToolResultMessage(tool_call_id="o1", name="t", content=big),
        AssistantMessage(content="old answer"),
        UserMessage(content="current question"),
        AssistantMessage(tool_calls=[ToolCall(id="n1", name="t"), ToolCall(id="n2", name="t")]),
        ToolResultMessage(tool_call_id="n1", name="t", content=big),
        ToolResultMessage(tool_call_id="n2", name="t", content=big),
        AssistantMessage(tool_calls=[ToolCall(id="n3", name="t")]),
        ToolResultMessage(tool_call_id="n3", name="t", content=big),
    ]
    assert trim_history(msgs, 100_000) == msgs
    kept = trim_history(msgs, 1500)
    assert kept[0] == UserMessage(content="current question")
    assert [getattr(m, "tool_call_id", None) for m in kept if isinstance(m, ToolResultMessage)] == ["n3"]
    kept = trim_history(msgs, 3000)
    ids = [m.tool_call_id for m in kept if isinstance(m, ToolResultMessage)]
    assert ids == ["n3"] or ids == ["n1", "n2", "n3"]
    for i, m in enumerate(kept):  # every result follows its assistant call
        if isinstance(m, ToolResultMessage):
            owner = next(x for x in reversed(kept[:i]) if isinstance(x, AssistantMessage))
            assert m.tool_call_id in {c.id for c in owner.tool_calls}


def test_a_tool_line_stays_one_short_line_whatever_the_model_named_the_tool() -> None:
    """A model that invents a 1,600-character tool name had it printed whole on the activity line."""
    import io

    from agent_client.mcp_session import ToolOutcome
    from agent_client.render import TerminalObserver

    err = io.StringIO()
    observer = TerminalObserver(err=err, out=io.StringIO())
    observer.on_tool_end(
        ToolCall(id="c1", name="x" * 1600, arguments_json="{}"), ToolOutcome(text="no such tool", is_error=True), 3
    )
    line = err.getvalue()
    assert line.count("\n") == 1 and len(line) < 300 and "no such tool" in line
