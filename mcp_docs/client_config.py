"""`mcp-docs config CLIENT`: the exact client entry, with absolute paths of what is installed here.

Clients launch servers without a shell and often without your PATH, so the
entry names the installed `mcp-docs` script by its absolute path (or this
interpreter with `-m mcp_docs` when no script is found). Secrets are never
written: an HTTP entry refers to the token by environment variable or prompt.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path

from .errors import SettingsInvalid
from .settings import Settings, default_index_dir

SERVER_NAME = "docs"
CLIENTS = ("claude-desktop", "claude-code", "vscode")


def server_command() -> list[str]:
    """The absolute command that starts `mcp-docs`, as installed in this environment."""
    beside = Path(sys.executable).parent / ("mcp-docs.exe" if os.name == "nt" else "mcp-docs")
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    found = shutil.which("mcp-docs")
    if found:
        return [str(Path(found).resolve())]
    return [str(Path(sys.executable).absolute()), "-m", "mcp_docs"]


def serve_args(settings: Settings) -> list[str]:
    args = ["serve", "--root", str(settings.root)]
    if settings.index_dir != default_index_dir(settings.root):
        args += ["--index-dir", str(settings.index_dir)]
    if settings.language != "en":
        args += ["--language", settings.language]
    if settings.embeddings != "local":
        args += ["--embeddings", settings.embeddings]
    if not settings.watch:
        args.append("--no-watch")
    return args


def render_client_config(
    client: str, settings: Settings, transport: str = "stdio", url: str = "http://127.0.0.1:8000/mcp"
) -> str:
    if client not in CLIENTS:
        raise SettingsInvalid(f"unknown client '{client}': choose one of {', '.join(CLIENTS)}")
    if transport not in ("stdio", "http"):
        raise SettingsInvalid(f"unknown transport '{transport}': choose stdio or http")
    command = server_command()
    args = command[1:] + serve_args(settings)
    token = bool(settings.token or settings.token_file)

    if client == "claude-desktop":
        if transport == "stdio":
            entry: dict[str, object] = {"command": command[0], "args": args}
        else:  # Claude Desktop's config file launches stdio servers; mcp-remote bridges to HTTP
            bridge = ["-y", "mcp-remote", url]
            if token:
                bridge += ["--header", "Authorization: Bearer ${MCP_DOCS_TOKEN}"]
            entry = {"command": "npx", "args": bridge}
            if token:
                entry["env"] = {"MCP_DOCS_TOKEN": "<your token>"}
        return json.dumps({"mcpServers": {SERVER_NAME: entry}}, indent=2)

    if client == "claude-code":
        if transport == "stdio":
            return shlex.join(["claude", "mcp", "add", SERVER_NAME, "--", command[0], *args])
        line = shlex.join(["claude", "mcp", "add", "--transport", "http", SERVER_NAME, url])
        if token:
            line += ' --header "Authorization: Bearer $MCP_DOCS_TOKEN"'
        return line

    # vscode: .vscode/mcp.json
    if transport == "stdio":
        config: dict[str, object] = {"servers": {SERVER_NAME: {"type": "stdio", "command": command[0], "args": args}}}
    else:
        server: dict[str, object] = {"type": "http", "url": url}
        config = {"servers": {SERVER_NAME: server}}
        if token:
            server["headers"] = {"Authorization": "Bearer ${input:mcp-docs-token}"}
            config["inputs"] = [
                {
                    "type": "promptString",
                    "id": "mcp-docs-token",
                    "description": "mcp-docs bearer token",
                    "password": True,
                }
            ]
    return json.dumps(config, indent=2)
