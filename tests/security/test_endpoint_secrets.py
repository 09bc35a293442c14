"""An embeddings endpoint that echoes the credentials it was sent (a proxy's error page, a misconfigured server)
must not carry the API key, or a password in the base URL, into a tool result the model reads, the server's
log, or `mcp-docs index`'s output: a real stdio server and the real CLI against a local endpoint."""

from __future__ import annotations

import http.server
import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.server_fixtures import child_env, serve_args

KEY = "sk-test-EchoedKey-0123456789abcdef"
URL_PASSWORD = "pw-in-the-url-4242"


class _Endpoint(http.server.BaseHTTPRequestHandler):
    """Embeds (a fixed small vector per input) until `failing`, then answers 401 echoing the credentials sent."""

    failing = False

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
        if self.failing:
            sent = self.headers.get("authorization", "")
            status, answer = 401, {"error": {"message": f"invalid credentials: {sent}", "type": "invalid_request"}}
        else:
            data = [
                {"object": "embedding", "index": i, "embedding": [1.0, 0.5, 0.25, i % 3]}
                for i in range(len(request["input"]))
            ]
            status, answer = (
                200,
                {"object": "list", "data": data, "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1}},
            )
        body = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def endpoint() -> Iterator[str]:
    _Endpoint.failing = False
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _says_401(text: str) -> bool:
    """The status code as a number of its own: the endpoint's port (127.0.0.1:40111) is not it."""
    return re.search(r"(?<![0-9])401(?![0-9])", text) is not None


def _leaks(text: str) -> list[str]:
    return [s for s in (KEY, URL_PASSWORD) if s in text]


def _index(vault: Path, index: Path, url: str, command: str = "index") -> str:
    env = child_env(OPENAI_API_KEY=KEY, MCP_DOCS_EMBEDDINGS_BASE_URL=url, MCP_DOCS_EMBEDDINGS="openai", COLUMNS="300")
    args = ["-m", "mcp_docs", command, "--root", str(vault), "--index-dir", str(index)]
    done = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=120)
    return done.stdout + done.stderr


@pytest.mark.anyio
async def test_an_echoed_key_reaches_no_tool_result_and_no_log(vault: Path, tmp_path: Path, endpoint: str) -> None:
    assert not _says_401(_index(vault, tmp_path / "index", endpoint))  # every section embedded
    _Endpoint.failing = True  # then the key is revoked, or a proxy in between starts failing
    (vault / "new.md").write_text("# New\n\nA note added since: its embedding fails in the background.\n")
    env = child_env(OPENAI_API_KEY=KEY, MCP_DOCS_EMBEDDINGS_BASE_URL=endpoint)
    args = serve_args(vault, tmp_path / "index", "--no-watch")
    args[args.index("--embeddings") + 1] = "openai"
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    with (tmp_path / "stderr.txt").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            for mode in ("semantic", "hybrid"):
                r = await client.call_tool("search_documents", {"query": "collector", "mode": mode})
                text = json.dumps(r.structured_content) + "".join(getattr(c, "text", "") for c in r.content)
                assert "failed" in text and _says_401(text)  # the embedding failure is still said
                assert not _leaks(text), text
    log = (tmp_path / "stderr.txt").read_text()
    assert _says_401(log)  # the background embedding's failure is logged
    assert not _leaks(log), log

    for url in (endpoint, endpoint.replace("http://", f"http://user:{URL_PASSWORD}@")):
        output = _index(vault, tmp_path / "fresh", url)
        assert _says_401(output)  # what went wrong is still said
        assert not _leaks(output), output
        status = _index(vault, tmp_path / "fresh", url, "status")  # the model's name there holds the endpoint
        assert "openai:http://127.0.0.1" in status, status
        assert not _leaks(status), status
