"""`mcp-docs config`: client entries with absolute paths that really start the server."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_docs.client_config import render_client_config, server_command
from mcp_docs.serve.http_security import is_loopback, load_token
from mcp_docs.settings import Settings
from tests.server_fixtures import initialize_request


@pytest.fixture
def cfg_settings(tmp_path: Path) -> Settings:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nalpha\n")
    return Settings.load(root, tmp_path / "idx", embeddings="none", environ={})


def test_command_is_absolute_and_installed() -> None:
    command = server_command()
    assert Path(command[0]).is_absolute() and os.access(command[0], os.X_OK)


def test_claude_desktop_stdio_entry_starts_the_server(cfg_settings: Settings) -> None:
    entry = json.loads(render_client_config("claude-desktop", cfg_settings, "stdio", ""))["mcpServers"]["docs"]
    assert Path(entry["command"]).is_absolute()
    args = entry["args"]
    assert args[args.index("--root") + 1] == str(cfg_settings.root)
    assert args[args.index("--index-dir") + 1] == str(cfg_settings.index_dir)
    assert args[args.index("--embeddings") + 1] == "none"
    init = initialize_request()
    proc = subprocess.run(
        [entry["command"], *args, "--no-watch"],
        input=init + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if not k.startswith("MCP_DOCS_")},
    )
    reply = json.loads(proc.stdout.splitlines()[0])
    assert reply["result"]["serverInfo"]["name"] == "mcp-docs"


def test_claude_code_and_vscode(cfg_settings: Settings) -> None:
    line = render_client_config("claude-code", cfg_settings, "stdio", "")
    words = shlex.split(line)
    assert words[:4] == ["claude", "mcp", "add", "docs"] and words[4] == "--" and Path(words[5]).is_absolute()
    assert render_client_config("claude-code", cfg_settings, "http", "http://127.0.0.1:9000/mcp") == (
        "claude mcp add --transport http docs http://127.0.0.1:9000/mcp"
    )
    vs = json.loads(render_client_config("vscode", cfg_settings, "stdio", ""))["servers"]["docs"]
    assert vs["type"] == "stdio" and Path(vs["command"]).is_absolute() and "serve" in vs["args"]
    vs_http = json.loads(render_client_config("vscode", cfg_settings, "http", "http://127.0.0.1:9000/mcp"))
    assert vs_http["servers"]["docs"] == {"type": "http", "url": "http://127.0.0.1:9000/mcp"}


def test_http_entries_reference_the_token_never_contain_it(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    environ = {"MCP_DOCS_TOKEN": "do-not-print-me"}
    cfg_settings = Settings.load(root, tmp_path / "idx", embeddings="none", environ=environ)
    assert "do-not-print-me" not in repr(cfg_settings)
    for client in ("claude-desktop", "claude-code", "vscode"):
        text = render_client_config(client, cfg_settings, "http", "http://127.0.0.1:8000/mcp")
        assert "do-not-print-me" not in text and "Authorization" in text


def test_cli_config_prints_the_entry(cfg_settings: Settings) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_docs", "config", "vscode", "--root", str(cfg_settings.root)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["servers"]["docs"]["args"][:3] == ["serve", "--root", str(cfg_settings.root)]


def test_token_sources_and_loopback(tmp_path: Path) -> None:
    def token(environ: dict[str, str]) -> str | None:
        settings = Settings.load(tmp_path, tmp_path.parent / f"{tmp_path.name}-idx", embeddings="none", environ=environ)
        return load_token(settings.token, settings.token_file)

    assert token({}) is None
    assert token({"MCP_DOCS_TOKEN": " abc "}) == "abc"
    f = tmp_path / "token"
    f.write_text("from-file\n")
    assert token({"MCP_DOCS_TOKEN_FILE": str(f)}) == "from-file"
    with pytest.raises(Exception, match="token file"):
        token({"MCP_DOCS_TOKEN_FILE": str(tmp_path / "missing")})
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost") and is_loopback("127.0.0.2")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.10") and not is_loopback("example.com")
