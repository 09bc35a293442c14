from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_client.providers import PROVIDERS

from .fake_llm import FakeLLM

TEST_KEY = "sk-test-SECRET-0123456789abcdef"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No real keys, a private DOCS_AGENT_HOME, fast SDK retries."""
    for spec in PROVIDERS.values():
        if spec.key_env:
            monkeypatch.delenv(spec.key_env, raising=False)
    for name in ("DOCS_AGENT_PROVIDER", "DOCS_AGENT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "agent-home"
    monkeypatch.setenv("DOCS_AGENT_HOME", str(home))
    monkeypatch.setenv("FAKE_LLM_KEY", TEST_KEY)
    return home


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    server = FakeLLM().start()
    try:
        yield server
    finally:
        server.stop()
