"""The MCP side: connect to a server (mcp-docs over stdio, any stdio command, or Streamable HTTP), list its
tools as provider-neutral `ToolSpec`s, and call them — every failure becomes an error result, never a crash."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any, TextIO
from urllib.parse import urlsplit, urlunsplit

import anyio
from pydantic import BaseModel

from .errors import AgentError, ErrorKind
from .models import ToolSpec
from .redaction import redact, register_secret
from .settings import Settings

DEFAULT_TOKEN_ENV = "MCP_DOCS_TOKEN"


@dataclass(frozen=True)
class DocsFolder:
    """`--docs DIR`: run `python -m mcp_docs serve --root DIR` over stdio."""

    root: str


@dataclass(frozen=True)
class ServerURL:
    """`--server URL`: Streamable HTTP, with an optional bearer token read from an environment variable."""

    url: str
    token_env: str | None = DEFAULT_TOKEN_ENV


@dataclass(frozen=True)
class ServerCommand:
    """`--server-cmd "..."`: any MCP server speaking stdio."""

    command: str


ServerTarget = DocsFolder | ServerURL | ServerCommand


class ToolOutcome(BaseModel):
    """`structured`: the server's structured content (mcp-docs' typed result), kept as the evidence citations
    are checked against; the model sees `text`."""

    text: str
    is_error: bool = False
    structured: dict[str, Any] | None = None
    unanswered: bool = False  # the server is gone (the connection closed): the call never got an answer


# Where things live and how text is encoded: without XDG_CACHE_HOME the server would look for its index
# somewhere else than `mcp-docs index` put it (and build a second one). None of these is a secret.
_LOCATIONS = ("XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE")
# What an OpenAI-compatible embeddings endpoint may need to be reached (a proxy, a company CA).
_NETWORK = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "SSL_CERT_FILE")


def passthrough_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The `MCP_DOCS_*` settings (index dir, embeddings, language…) and the file locations and locale for the
    server; with `MCP_DOCS_EMBEDDINGS=openai`, also the one key variable the embedder reads and the proxy and
    CA settings. No provider key, nothing else (the SDK adds HOME, PATH, SHELL, TERM, USER, LOGNAME)."""
    settings = Settings.load(environ)
    out = settings.mcp_docs_env()
    out |= {k: v for k in _LOCATIONS if (v := settings.environ.get(k))}
    if out.get("MCP_DOCS_EMBEDDINGS") == "openai":
        key_env = out.get("MCP_DOCS_EMBEDDINGS_API_KEY_ENV", "OPENAI_API_KEY")
        key = settings.value(key_env)
        if key:
            out[key_env] = key
        out |= {k: v for k in _NETWORK if (v := settings.environ.get(k))}
    out.setdefault("PYTHONIOENCODING", "utf-8")
    return out


def wire_name(name: str, taken: set[str]) -> str:
    """A tool name every provider accepts (`[A-Za-z0-9_-]{1,64}`), unique within the session."""
    base = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "tool"
    candidate, n = base, 2
    while candidate in taken:
        suffix = f"_{n}"
        candidate, n = base[: 64 - len(suffix)] + suffix, n + 1
    taken.add(candidate)
    return candidate


def normalize_schema(schema: dict[str, Any] | None) -> dict[str, Any]:
    schema = dict(schema or {})
    if schema.get("type") != "object":
        schema = {"type": "object", "properties": {}} if not schema.get("properties") else {**schema, "type": "object"}
    schema.setdefault("properties", {})
    return schema


def render_result(result: Any) -> str:
    """The text the model sees: the server's text rendering, else its structured content as JSON."""
    parts: list[str] = []
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(f"[resource {block.uri}]")
        elif kind == "resource":
            res = block.resource
            parts.append(getattr(res, "text", None) or f"[resource {res.uri}]")
        else:
            parts.append(f"[{kind or 'content'} omitted]")
    text = "\n".join(p for p in parts if p)
    structured = getattr(result, "structured_content", None)
    if not text and structured is not None:
        text = json.dumps(structured, ensure_ascii=False, default=str)
    return text


class MCPConnection:
    """An open MCP client plus its tools, addressable by the names the model sees."""

    def __init__(self, client: Any, tools: list[ToolSpec]):
        self._client = client
        self.tools = tools
        self._by_wire = {t.wire_name: t for t in tools}

    def lookup(self, wire: str) -> ToolSpec | None:
        return self._by_wire.get(wire)

    async def call(self, spec: ToolSpec, arguments: dict[str, Any], *, timeout_s: float = 60.0) -> ToolOutcome:
        try:
            with anyio.fail_after(timeout_s):
                result = await self._client.call_tool(spec.name, arguments)
        except TimeoutError:
            return ToolOutcome(text=f"The tool {spec.name} did not answer within {timeout_s:g} s.", is_error=True)
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as exc:  # protocol errors, invalid params, a dead server: the model can react
            return ToolOutcome(
                text=redact(f"The tool {spec.name} failed: {exc}"), is_error=True, unanswered=_server_gone(exc)
            )
        structured = getattr(result, "structured_content", None)
        return ToolOutcome(
            text=render_result(result),
            is_error=bool(getattr(result, "is_error", False)),
            structured=structured if isinstance(structured, dict) else None,
        )


@asynccontextmanager
async def connect(
    target: ServerTarget | Any, *, errlog: TextIO | None = None, environ: Mapping[str, str] | None = None
) -> AsyncIterator[MCPConnection]:
    """Open the server and list its tools. `target` may also be an in-process `MCPServer` (tests)."""
    from mcp import Client, StdioServerParameters

    settings = Settings.load(environ)
    async with AsyncExitStack() as stack:
        if isinstance(target, DocsFolder):
            server: Any = StdioServerParameters(
                command=sys.executable,
                args=["-m", "mcp_docs", "serve", "--root", os.path.abspath(target.root)],
                env=passthrough_env(settings.environ),
            )
        elif isinstance(target, ServerCommand):
            parts = shlex.split(target.command)
            if not parts:
                raise AgentError(ErrorKind.CONFIGURATION, "--server-cmd is empty.")
            server = StdioServerParameters(command=parts[0], args=parts[1:], env=passthrough_env(settings.environ))
        elif isinstance(target, ServerURL):
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            headers = {}
            token = settings.value(target.token_env)
            if token:
                register_secret(token)
                headers["Authorization"] = f"Bearer {token}"
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
            )
            server = streamable_http_client(target.url, http_client=http)
        else:
            server = target
        if isinstance(server, StdioServerParameters):
            from mcp.client.stdio import stdio_client

            server = stdio_client(server, errlog=errlog if errlog is not None else sys.stderr)
        try:
            client = await stack.enter_async_context(Client(server))
            listed = await client.list_tools()
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as exc:
            raise AgentError(
                ErrorKind.MCP, f"Could not connect to the MCP server {_where(target)}: {_describe(exc)}"
            ) from None
        taken: set[str] = set()
        tools = [
            ToolSpec(
                name=t.name,
                wire_name=wire_name(t.name, taken),
                description=(t.description or "")[:4000],
                input_schema=normalize_schema(t.input_schema),
            )
            for t in listed.tools
        ]
        yield MCPConnection(client, tools)


def _server_gone(exc: Exception) -> bool:
    """The connection to the server is closed (its process died, the stream broke), as opposed to an error the
    server answered: the call can be run again once the server is back, so a stored turn is resumed by it."""
    from mcp.shared.exceptions import MCPError
    from mcp.types import CONNECTION_CLOSED

    if isinstance(exc, MCPError):
        return exc.error.code == CONNECTION_CLOSED
    return isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError | anyio.EndOfStream)


def public_url(url: str) -> str:
    """The URL without what may be a credential: no user:password@, no query string, no fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _where(target: ServerTarget | Any) -> str:
    if isinstance(target, ServerURL):
        return f"at {public_url(target.url)}"
    if isinstance(target, ServerCommand):
        return f"started by --server-cmd {shlex.split(target.command)[0]!r}"
    if isinstance(target, DocsFolder):
        return f"for --docs {target.root}"
    return "(in process)"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"
