"""Fixtures and helpers for the tool and server tests: a small vault written in tmp_path.

Importing `vault` from here overrides the conftest vault in a test module; conftest's
`settings` and `library` fixtures then build on this one.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import pytest
from mcp import StdioServerParameters

INSTALL = """---
title: Installing the collector
tags: [guide, setup]
---
# Installing the collector

The collector receives telemetry from your services and forwards it.

## Linux

Download the package and start the service:

```bash
# a shell comment, not a heading
sudo systemctl enable --now otelcol
```

Tune memory with `vm.swappiness` if the host swaps.

### Troubleshooting

If the service fails, read the journal with journalctl.

## Windows

Run the MSI installer, then start the service from an administrator shell.

## Configuration

Point your applications at the collector with `OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4317`.
"""

CONFIG = """# Configuration

The collector is configured with one YAML file made of pipelines. #config

## Receivers

### OTLP

Receivers accept data: otlp listens on port 4317 (gRPC) and 4318 (HTTP).

## Exporters

### OTLP

The otlphttp exporter needs an endpoint; set headers for authentication.
"""

BACKUPS = """---
tags: [ops, backup]
---
# Backups

Snapshots run nightly with restic; keep seven daily and four weekly copies.

## Restore

Mount the snapshot and copy the files back.
"""


def long_document(sections: int = 30, lines_per_section: int = 15) -> str:
    out = ["# Operations handbook", "", "How we run production, chapter by chapter.", ""]
    for i in range(sections):
        level = "##" if i % 3 == 0 else "###"
        out.append(f"{level} Chapter {i} topic")
        out.append("")
        for j in range(lines_per_section):
            out.append(f"Line {j} of chapter {i}: the procedure explains the steps in plain words for everyone.")
        out.append("")
    return "\n".join(out) + "\n"


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def make_vault(base: Path) -> Path:
    root = base / "vault"
    root.mkdir(parents=True)
    write(root, "guides/install.md", INSTALL)
    write(root, "guides/config.md", CONFIG)
    write(root, "notes/backups.md", BACKUPS)
    write(root, "notes/long.md", long_document())
    for i in range(12):
        write(root, f"misc/note{i:02d}.md", f"# Note {i}\n\nSmall note number {i} about gardening. #misc\n")
    write(root, ".env", "SECRET=hunter2\n")
    write(root, ".git/config", "[core]\n")
    write(root, "secret.txt", "not markdown\n")
    write(root, "binary.md", b"# Bin\x00\x01\x02\n")
    # a sibling folder whose name extends the root's: must never be reachable
    write(base, "vault_evil/leak.md", "# Leak\n\nprivate\n")
    return root


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return make_vault(tmp_path)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def child_env(**extra: str) -> dict[str, str]:
    # The developer's own settings and provider keys never reach a test server.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MCP_DOCS_", "OPENAI", "ANTHROPIC"))}
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def serve_args(root: Path, index: Path, *more: str) -> list[str]:
    return ["-m", "mcp_docs", "serve", "--root", str(root), "--index-dir", str(index), "--embeddings", "none", *more]


def initialize_request(request_id: int | str = 1, protocol: str = "2025-06-18") -> str:
    """The JSON-RPC `initialize` request an MCP client sends first, as one line of JSON (no newline)."""
    params = {"protocolVersion": protocol, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params})


def stdio_params(root: Path, index: Path, *more: str, cwd: Path | None = None) -> StdioServerParameters:
    """How an MCP client starts the server over stdio: this Python, embeddings off, no developer settings."""
    return StdioServerParameters(
        command=sys.executable, args=serve_args(root, index, *more), env=child_env(), cwd=str(cwd) if cwd else None
    )


def spawn_stdio(root: Path, index: Path, stderr: IO[bytes], *more: str) -> subprocess.Popen[bytes]:
    """The stdio server as a bare process, for tests that write raw bytes to it and read its stdout."""
    return subprocess.Popen(
        [sys.executable, *serve_args(root, index, *more)],
        env=child_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
    )


# A server starts in ~2 s; a loaded 2-core CI machine can take ten times that.
def start_http(
    root: Path, index: Path, port: int, env: dict[str, str], *more: str, start_timeout: float = 90
) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, *serve_args(root, index, "--transport", "http", "--port", str(port), *more)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    import httpx2

    deadline = time.monotonic() + start_timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            _out, err = proc.communicate()
            raise RuntimeError(f"server exited {proc.returncode}: {err.decode(errors='replace')}")
        try:
            r = httpx2.get(f"http://127.0.0.1:{port}/health", timeout=0.5)
            if r.status_code == 200:
                return proc
        except httpx2.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
