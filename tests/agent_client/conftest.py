from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_client.providers import PROVIDERS

from .fake_llm import FakeLLM

TEST_KEY = "sk-test-SECRET-0123456789abcdef"
TINY_TOKEN = "tiny-secret-token-42"
HERE = Path(__file__).parent


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No real keys, a private DOCS_AGENT_HOME, fast SDK retries."""
    for spec in PROVIDERS.values():
        if spec.key_env:
            monkeypatch.delenv(spec.key_env, raising=False)
    for name in (
        "DOCS_AGENT_PROVIDER",
        "DOCS_AGENT_MODEL",
        "DOCS_AGENT_FALLBACK",
        "DOCS_AGENT_MEMORY_TOKENS",
        "OPENAI_BASE_URL",
        "ANTHROPIC_BASE_URL",
    ):
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


@pytest.fixture(scope="session")
def http_server() -> Iterator[str]:
    """The tiny MCP server over Streamable HTTP (one process for the whole run), token TINY_TOKEN."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "tiny_docs_server.py"), "--http", str(port)],
        env={**os.environ, "TINY_TOKEN": TINY_TOKEN},
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)
