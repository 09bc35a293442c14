"""docs-agent's command line: its commands and their flags (the parsing only; `cli.py` runs them)."""

from __future__ import annotations

import argparse

from . import __version__
from .mcp_session import DEFAULT_TOKEN_ENV
from .providers import (
    PROVIDERS,
)
from .settings import DEFAULT_MAX_RETRIES

STRICT_CITATIONS_EXIT = 3  # distinct from 1 (an error): the answer is there, its sources are not all checked


def _connection_args(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--docs", metavar="DIR", help="documents folder: runs `mcp-docs serve --root DIR` over stdio")
    g.add_argument("--server", metavar="URL", help="an MCP server over Streamable HTTP, e.g. http://127.0.0.1:8000/mcp")
    g.add_argument("--server-cmd", metavar="CMD", help="any MCP server command speaking stdio")
    p.add_argument(
        "--server-token-env",
        metavar="VAR",
        default=DEFAULT_TOKEN_ENV,
        help=f"environment variable holding a bearer token for --server (default {DEFAULT_TOKEN_ENV})",
    )
    p.add_argument("--provider", help=f"provider name ({', '.join(PROVIDERS)}); default: detected from the keys set")
    p.add_argument("--model", help="model name (default: the provider's default model)")
    p.add_argument("--base-url", help="override the provider's base URL (any OpenAI-compatible server)")
    p.add_argument("--api-key-env", metavar="VAR", help="read the API key from this environment variable")
    p.add_argument(
        "--fallback",
        metavar="NAME[,NAME...]",
        help="providers that take over the question, in order, when the current one fails with a server "
        "error, overload, timeout or network error (default: DOCS_AGENT_FALLBACK)",
    )
    p.add_argument(
        "--strategy",
        choices=("react", "plan"),
        default="react",
        help="react (default): the model calls tools turn by turn; plan: one call writes a plan of tool "
        "calls, run in parallel where independent, re-planned once on failure, then one answer",
    )
    p.add_argument(
        "--expand",
        action="store_true",
        help="one cheap call rewrites the question into 2-3 searches, run at once and fused (-v shows them)",
    )
    p.add_argument(
        "--reflect",
        action="store_true",
        help="one call reviews the answer against what was read; a weak answer is revised once",
    )
    p.add_argument(
        "--max-iterations",
        type=int,
        default=10,
        help="tool-calling iterations before a last answer without tools (default 10)",
    )
    p.add_argument("--max-cost", type=float, metavar="USD", help="stop when the question has cost this much")
    p.add_argument("--max-tokens", type=int, metavar="N", help="stop when the question has used this many tokens")
    p.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        metavar="S",
        help="overall deadline per question in seconds (default 300)",
    )
    p.add_argument(
        "--max-retries",
        type=int,
        metavar="N",
        help="SDK retries on connection errors, timeouts, 408/409/429/5xx "
        f"(default: DOCS_AGENT_MAX_RETRIES, else {DEFAULT_MAX_RETRIES})",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="do not show tool activity on stderr")
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show the MCP server's own log and the --expand reformulations on stderr",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="docs-agent", description="Answer questions from your documents with any LLM, over MCP."
    )
    parser.add_argument("--version", action="version", version=f"docs-agent {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ask", help="answer one question (the answer streams to stdout)")
    p.add_argument("question", nargs="?", help="the question (not with --resume, which continues a stored one)")
    _connection_args(p)
    p.add_argument(
        "--session",
        metavar="NAME",
        help="store the question, each tool round and the answer in this chat session as they come",
    )
    p.add_argument(
        "--resume",
        metavar="SESSION",
        help="finish the answer a crash, kill or Ctrl-C cut in this session, re-using its stored tool results",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object (answer, stopped_reason, usage…)")
    p.add_argument(
        "--strict-citations",
        action="store_true",
        help=f"exit with status {STRICT_CITATIONS_EXIT} when the answer cites a source the tools did not show",
    )

    p = sub.add_parser("chat", help="interactive session, history kept per --session")
    _connection_args(p)
    p.add_argument("--session", default="default", help="session name (default 'default'); resumable")

    p = sub.add_parser("providers", help="the provider registry and which keys are set")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("logs", help="recent LLM calls (tokens, latency, status, cost)")
    p.add_argument("-n", "--limit", type=int, default=20)
    p.add_argument("--session", help="only this session")
    p.add_argument("--json", action="store_true")
    return parser
