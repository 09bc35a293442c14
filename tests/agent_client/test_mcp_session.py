"""Connecting: Streamable HTTP with a bearer token from an environment variable, stdio commands, tool naming."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent_client.errors import AgentError, ErrorKind
from agent_client.mcp_session import ServerCommand, ServerURL, connect, passthrough_env, wire_name

from .conftest import TINY_TOKEN

pytestmark = pytest.mark.anyio
HERE = Path(__file__).parent


async def test_streamable_http_with_bearer_token(http_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_MCP_TOKEN", TINY_TOKEN)
    async with connect(ServerURL(http_server, token_env="MY_MCP_TOKEN")) as conn:
        spec = conn.lookup("search_documents")
        assert spec is not None
        outcome = await conn.call(spec, {"query": "backup"})
        assert not outcome.is_error and "ops/backup.md" in outcome.text
    monkeypatch.delenv("MY_MCP_TOKEN")
    with pytest.raises(AgentError) as exc:
        async with connect(ServerURL(http_server, token_env="MY_MCP_TOKEN")):
            pass
    assert exc.value.kind is ErrorKind.MCP


async def test_stdio_command_and_tool_errors() -> None:
    async with connect(ServerCommand(f"{sys.executable} {HERE / 'tiny_docs_server.py'}")) as conn:
        names = {t.name for t in conn.tools}
        assert {"search_documents", "read_document", "read_section"} <= names
        spec = conn.lookup("read_document")
        bad = await conn.call(spec, {"id": "../../etc/passwd"})
        assert bad.is_error and "Known ids" in bad.text
        invalid = await conn.call(spec, {"mode": 3})  # missing id: the server says so, no crash
        assert invalid.is_error


async def test_unreachable_server_is_a_classified_error() -> None:
    with pytest.raises(AgentError) as exc:
        async with connect(ServerCommand("/nonexistent/mcp-server --flag")):
            pass
    assert exc.value.kind is ErrorKind.MCP


async def test_a_dead_server_url_is_named_without_its_credentials() -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(AgentError) as exc:
        async with connect(ServerURL(f"http://alice:hunter2-password@127.0.0.1:{port}/mcp?token=abc123secret#x")):
            pass
    assert exc.value.kind is ErrorKind.MCP
    assert f"at http://127.0.0.1:{port}/mcp:" in exc.value.message
    assert "hunter2" not in exc.value.message and "alice" not in exc.value.message and "abc123" not in exc.value.message


def test_wire_names_and_env_passthrough() -> None:
    taken: set[str] = set()
    assert wire_name("docs.search", taken) == "docs_search"
    assert wire_name("docs/search", taken) == "docs_search_2"
    assert len(wire_name("x" * 100, taken)) == 64
    env = passthrough_env({"MCP_DOCS_INDEX_DIR": "/i", "OPENAI_API_KEY": "sk-x", "HOME": "/h"})
    assert env["MCP_DOCS_INDEX_DIR"] == "/i" and "OPENAI_API_KEY" not in env and "HOME" not in env
    env = passthrough_env({"MCP_DOCS_EMBEDDINGS": "openai", "OPENAI_API_KEY": "sk-x", "ANTHROPIC_API_KEY": "a"})
    assert env["OPENAI_API_KEY"] == "sk-x" and "ANTHROPIC_API_KEY" not in env
