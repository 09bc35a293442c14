"""The `mcp-docs` command: index, search, read, status, serve, config.

Human output goes to stdout through rich; `--json` prints exactly one JSON
object; logs and progress go to stderr (stdout of `serve` over stdio is the
protocol and must stay clean).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from . import __version__
from .errors import McpDocsError, SettingsInvalid
from .settings import Settings
from .terminal import terminal_safe

log = logging.getLogger("mcp_docs")


def _common(p: argparse.ArgumentParser, root_required: bool = False) -> None:
    p.add_argument("--root", help="documents folder (or MCP_DOCS_ROOT)", required=False)
    p.add_argument("--index-dir", help="where the index lives (or MCP_DOCS_INDEX_DIR; default: user cache dir)")
    p.add_argument("--language", help="stemming language of the root: en, fr, de, … (or MCP_DOCS_LANGUAGE)")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")


def _embeddings(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--embeddings", choices=["local", "openai", "none"], help="embedder (or MCP_DOCS_EMBEDDINGS; default local)"
    )
    p.add_argument(
        "--embeddings-model",
        help="embedding model: a name for --embeddings openai, or multilingual-e5-small for --embeddings local ([multilingual] extra)",
    )
    p.add_argument("--embeddings-base-url", help="base URL of an OpenAI-compatible embeddings endpoint")


def _store(p: argparse.ArgumentParser) -> None:
    from .store.choices import store_choices_sentence, store_names  # every registered store, read when parsing

    p.add_argument(
        "--store",
        choices=store_names(),
        help=f"where the index lives: {store_choices_sentence()} (or MCP_DOCS_STORE)",
    )
    p.add_argument(
        "--database-url",
        help="PostgreSQL URL for --store postgres (better: MCP_DOCS_DATABASE_URL, which process lists do not show)",
    )


def _rerank(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--rerank-url",
        help="base URL of a reranker service, e.g. Text Embeddings Inference (or MCP_DOCS_RERANK_URL; "
        "MCP_DOCS_RERANK_API=tei|cohere picks the wire format)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-docs", description="Search and read a Markdown knowledge base, for people and LLM agents (MCP)."
    )
    parser.add_argument("--version", action="version", version=f"mcp-docs {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("serve", help="run the MCP server (stdio by default)")
    _common(p)
    _embeddings(p)
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--no-watch", action="store_true", help="do not watch the root for changes")
    _rerank(p)
    p.add_argument(
        "--workers",
        type=int,
        help="HTTP: processes answering on the port, one of them keeping the index fresh (or MCP_DOCS_WORKERS; "
        "default 1; more than 1 implies --stateless)",
    )
    p.add_argument(
        "--stateless",
        action="store_true",
        default=None,
        help="HTTP: no server-side sessions, any replica answers any request (or MCP_DOCS_STATELESS=1)",
    )
    _store(p)

    p = sub.add_parser("index", help="bring the index up to date (incremental)")
    _common(p)
    _embeddings(p)
    _store(p)

    p = sub.add_parser("search", help="search the documents")
    p.add_argument("query")
    _common(p)
    _embeddings(p)
    # Values are checked by the search tool itself, so the CLI refuses what the MCP tool refuses, in its words.
    p.add_argument("--mode", default="hybrid", help="hybrid (default), keyword or semantic")
    p.add_argument("--max-results", type=int, default=5, help="documents to return (1-20)")
    p.add_argument("--folder", help="limit to a subfolder")
    p.add_argument("--tag", action="append", dest="tags", help="require a tag (repeatable)")
    p.add_argument("--max-chars", type=int, default=None, help="budget for the whole result (JSON characters)")
    p.add_argument("--json", action="store_true", help="print the search_documents result as JSON")
    _rerank(p)
    _store(p)

    p = sub.add_parser("read", help="read a document, its outline, summary or one section")
    p.add_argument("id", help="document id, or a link target: '[[Note]]', a file name, an alias")
    _common(p)
    p.add_argument("--section", help="heading or heading path ('Setup > Linux')")
    # None: full, or the section a link given as the ID names ('[[Setup#Linux]]')
    p.add_argument("--mode", default=None, help="full (default), outline or summary")
    p.add_argument("--max-chars", type=int, default=None)
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--json", action="store_true")
    _store(p)

    p = sub.add_parser("status", help="what is indexed, what was skipped and why")
    _common(p)
    _store(p)
    _rerank(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("config", help="print the MCP client configuration entry")
    p.add_argument("client", choices=["claude-desktop", "claude-code", "vscode"])
    _common(p)
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    p.add_argument("--url", default="http://127.0.0.1:8000/mcp", help="server URL for --transport http")
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {}
    if getattr(args, "embeddings_model", None):
        overrides["embeddings_model"] = args.embeddings_model
    if getattr(args, "embeddings_base_url", None):
        overrides["embeddings_base_url"] = args.embeddings_base_url
    if getattr(args, "no_watch", False):
        overrides["watch"] = False
    if getattr(args, "workers", None) is not None:
        if args.workers < 1:
            raise SettingsInvalid(f"--workers must be 1 or more, not {args.workers}.")
        overrides["workers"] = args.workers
    if getattr(args, "stateless", None):
        overrides["stateless"] = True
    if args.command in ("serve", "search", "read", "status"):
        overrides["reader"] = True  # over PostgreSQL, these only read the database: no copy of the documents
    return Settings.load(
        args.root,
        args.index_dir,
        language=args.language,
        embeddings=getattr(args, "embeddings", None),
        rerank_url=getattr(args, "rerank_url", None),
        store=getattr(args, "store", None),
        database_url=getattr(args, "database_url", None),
        **overrides,
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if getattr(args, "verbose", False) else logging.WARNING,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from .commands import run_command

    try:
        settings = _settings(args) if args.command != "config" or args.root else None
        code = run_command(args, settings)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at interpreter exit
        return code
    except McpDocsError as exc:  # every error of ours is one sentence: a bad setting, a refusal, a tool's answer
        _fail(str(exc), getattr(args, "json", False))
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _reader_gone()


def _reader_gone() -> int:
    """`mcp-docs search … | head -1`: the reader has what it wanted, so stop quietly, as `cat` does (exit 0).

    stdout now points at /dev/null, so the interpreter's final flush does not fail a second time."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 0


def _fail(message: str, as_json: bool) -> None:
    if as_json:
        print(json.dumps({"error": message}))
    print(f"error: {terminal_safe(message)}", file=sys.stderr)  # messages quote ids and file names


if __name__ == "__main__":
    raise SystemExit(main())
