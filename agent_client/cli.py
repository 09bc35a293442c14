"""`docs-agent`: ask, chat, providers, logs — a thin command line over the loop."""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

import anyio

from .calllog import CallLog
from .chat_session import CHAT_HELP, ChatSession, _interruptible
from .cli_args import STRICT_CITATIONS_EXIT, build_parser
from .errors import AgentError, ErrorKind, classify
from .home import home
from .loop import Agent, Limits, Route
from .mcp_session import DocsFolder, ServerCommand, ServerTarget, ServerURL, connect
from .memory import remember
from .models import Message, RunResult
from .providers import (
    ANTHROPIC_EXTRA,
    DETECTION_ORDER,
    FALLBACK_PROVIDER,
    PROVIDERS,
    ResolvedProvider,
    detect_provider,
    get_provider,
    make_model,
    resolve,
    unusable_keys,
)
from .redaction import scrubbed_stdio
from .render import TerminalObserver, fallback_line, notes, summary_line, unverified_citations
from .sessions import SessionStore, close_unfinished, question_of, unfinished
from .settings import Settings
from .text import json_safe, short, terminal_safe


def _target(args: argparse.Namespace) -> ServerTarget:
    if args.docs:
        if not Path(args.docs).is_dir():
            raise AgentError(ErrorKind.CONFIGURATION, f"--docs: not a folder: {args.docs}")
        return DocsFolder(args.docs)
    if args.server:
        return ServerURL(args.server, token_env=args.server_token_env)
    return ServerCommand(args.server_cmd)


def _limits(args: argparse.Namespace, settings: Settings) -> Limits:
    if args.max_iterations < 1:
        raise AgentError(ErrorKind.CONFIGURATION, "--max-iterations must be at least 1.")
    # `not x > 0` also refuses nan, which every comparison would let through (a budget never reached)
    if not args.timeout > 0:
        raise AgentError(ErrorKind.CONFIGURATION, f"--timeout must be a number of seconds above 0, not {args.timeout}.")
    if args.max_cost is not None and not args.max_cost > 0:
        raise AgentError(ErrorKind.CONFIGURATION, f"--max-cost must be an amount in USD above 0, not {args.max_cost}.")
    if args.max_tokens is not None and args.max_tokens < 1:
        raise AgentError(ErrorKind.CONFIGURATION, f"--max-tokens must be at least 1, not {args.max_tokens}.")
    return Limits(
        max_iterations=args.max_iterations,
        max_cost_usd=args.max_cost,
        max_tokens=args.max_tokens,
        deadline_s=args.timeout,
        max_tool_calls_per_turn=settings.max_tool_calls_per_turn,
        max_tool_argument_bytes=settings.max_tool_argument_bytes,
    )


def _max_retries(args: argparse.Namespace, settings: Settings) -> int:
    if args.max_retries is None:
        return settings.max_retries
    if args.max_retries < 0:
        raise AgentError(ErrorKind.CONFIGURATION, "--max-retries must be 0 or more.")
    return args.max_retries


def _provider(args: argparse.Namespace) -> ResolvedProvider:
    return resolve(args.provider, model=args.model, base_url=args.base_url, api_key_env=args.api_key_env)


def _fallbacks(args: argparse.Namespace, settings: Settings) -> list[ResolvedProvider]:
    """The --fallback providers, each with its default model, its own key variable and endpoint variable."""
    names = (
        settings.fallback
        if args.fallback is None
        else tuple(n.strip().lower() for n in args.fallback.split(",") if n.strip())
    )
    out = []
    for name in names:
        try:
            out.append(resolve(name, model=get_provider(name).default_model, environ=settings.environ))
        except AgentError as exc:
            raise AgentError(exc.kind, f"--fallback {name}: {exc.message}", retryable=False) from None
    return out


def _routes(providers: list[ResolvedProvider], args: argparse.Namespace, settings: Settings) -> list[Route]:
    retries = _max_retries(args, settings)
    return [
        Route(make_model(p, max_retries=retries, timeout_s=min(args.timeout, 600.0)), p.spec.prices) for p in providers
    ]


@contextlib.contextmanager
def _server_log(args: argparse.Namespace) -> Iterator[TextIO]:
    if args.verbose:
        yield sys.stderr
        return
    with open(home() / "server.log", "a", encoding="utf-8") as log:
        yield log


def _failed(exc: BaseException, provider: ResolvedProvider | None, args: argparse.Namespace) -> RunResult:
    error = classify(exc)
    spec = provider.spec if provider else None
    return RunResult(
        stopped_reason="error",
        error=error.message,
        error_kind=error.kind.value,
        retryable=error.retryable,
        provider=spec.name if spec else (args.provider or ""),
        model=provider.model if provider else (args.model or ""),
    )


@dataclass(frozen=True)
class Setup:
    """What `ask` and `chat` resolve from flags and settings before connecting: checked up front, so a bad flag
    is reported before any server starts."""

    provider: ResolvedProvider
    routes: list[Route]
    limits: Limits
    target: ServerTarget


def _setup(args: argparse.Namespace, settings: Settings, provider: ResolvedProvider) -> Setup:
    fallbacks = _fallbacks(args, settings)
    limits = _limits(args, settings)
    target = _target(args)
    return Setup(provider, _routes([provider, *fallbacks], args, settings), limits, target)


@contextlib.asynccontextmanager
async def _agent(
    setup: Setup, args: argparse.Namespace, observer: TerminalObserver, session: str | None = None
) -> AsyncIterator[Agent]:
    """The agent on a live docs-server connection; its model clients are closed however the run ends."""
    first, *others = setup.routes
    try:
        with _server_log(args) as errlog:
            async with connect(setup.target, errlog=errlog) as conn:
                yield Agent(
                    first.model,
                    conn,
                    first.prices,
                    limits=setup.limits,
                    log=CallLog(),
                    session=session,
                    observer=observer,
                    fallbacks=others,
                    strategy=args.strategy,
                    expand=args.expand,
                    reflect=args.reflect,
                )
    finally:
        for route in setup.routes:
            await route.model.aclose()


def _report(result: RunResult, args: argparse.Namespace) -> None:
    """After an answer: the error, or the citation and note warnings and the usage line, on stderr."""
    if result.stopped_reason == "error":
        print(terminal_safe(f"error ({result.error_kind}): {result.error}"), file=sys.stderr)
        return
    fallback = fallback_line(result)
    for line in [*([fallback] if fallback else []), *unverified_citations(result), *notes(result)]:
        print(line, file=sys.stderr)
    if not args.quiet:
        print(summary_line(result), file=sys.stderr)


async def _ask(args: argparse.Namespace, settings: Settings) -> RunResult:
    provider: ResolvedProvider | None = None
    try:
        provider = _provider(args)
        setup = _setup(args, settings, provider)
    except AgentError as exc:
        return _failed(exc, provider, args)
    skipped = unusable_keys(settings.environ) if not args.provider and not settings.provider else []
    for spec in skipped:  # the user set this key on purpose: say why another provider answers
        print(
            f"note: {spec.key_env} is set, but the {spec.name} provider needs its SDK: {ANTHROPIC_EXTRA}. "
            f"Using {provider.name} instead.",
            file=sys.stderr,
        )
    observer = TerminalObserver(stream_text=not args.json, show_tools=not args.quiet, verbose=args.verbose)
    try:
        turn = _stored_turn(args, settings)
        async with _agent(setup, args, observer, session=turn.name if turn else None) as agent:
            if turn is None:
                result = await agent.ask(args.question)
            elif turn.unfinished:
                result = await agent.resume(turn.unfinished, turn.context, progress=turn.save)
            else:
                result = await agent.ask(args.question, turn.context, progress=turn.save)
    except AgentError as exc:
        return _failed(exc, provider, args)
    if (
        result.error_kind == "network"
        and not args.provider
        and not settings.provider
        and provider.name == FALLBACK_PROVIDER
        and not skipped
    ):
        result.error = (
            f"{result.error} No provider key is set (see `docs-agent providers`), so docs-agent "
            f"tried the local {FALLBACK_PROVIDER} server."
        )
    return result


@dataclass
class StoredTurn:
    """`ask --session` / `--resume`: the session, what the model is sent of it, and the cut turn to finish."""

    name: str
    store: SessionStore
    context: list[Message]
    unfinished: list[Message]

    def save(self, messages: list[Message]) -> None:
        self.store.append(self.name, messages)


def _stored_turn(args: argparse.Namespace, settings: Settings) -> StoredTurn | None:
    if args.resume and args.question:
        raise AgentError(ErrorKind.CONFIGURATION, "--resume continues the stored question: give no QUESTION.")
    if not args.resume and not args.question:
        raise AgentError(ErrorKind.CONFIGURATION, "ask needs a QUESTION (or --resume SESSION).")
    name = args.resume or args.session
    if not name:
        return None
    store = SessionStore()
    history = store.load(name)
    cut = unfinished(history)
    if args.resume:
        if cut is None:
            raise AgentError(ErrorKind.CONFIGURATION, f"session {name!r} has no unfinished answer to resume.")
        question = question_of(history, cut)
        context = remember(history[:cut], question, settings.memory_tokens).messages()
        return StoredTurn(name, store, context, history[cut:])
    closing = close_unfinished(history, "interrupted, not resumed")
    if closing:  # a new question after a cut one: end the cut turn so the history stays valid
        store.append(name, closing)
        history += closing
    return StoredTurn(name, store, remember(history, args.question, settings.memory_tokens).messages(), [])


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    try:
        result = anyio.run(_ask, args, settings)
    except KeyboardInterrupt:
        name = args.resume or args.session
        if name:
            print(
                terminal_safe(f"\ncancelled; the tool results so far are stored: docs-agent ask --resume {name} …"),
                file=sys.stderr,
            )
            return 130
        raise
    if args.json:
        print(json_safe(result.contract()))
    else:
        _report(result, args)
    if result.stopped_reason == "error":
        return 1
    unverified = sum(not c.verified for c in result.citations)
    if args.strict_citations and unverified:
        print(
            f"--strict-citations: {unverified} unverified citation{'s' if unverified != 1 else ''}",
            file=sys.stderr,
        )
        return STRICT_CITATIONS_EXIT
    return 0


# ---------------------------------------------------------------- chat


async def _chat(args: argparse.Namespace, settings: Settings) -> int:
    setup = _setup(args, settings, _provider(args))
    chat = ChatSession(args.session, settings, sys.stdout)
    observer = TerminalObserver(show_tools=not args.quiet, verbose=args.verbose)
    async with _agent(setup, args, observer, session=chat.name) as agent:
        print(
            f"docs-agent chat · session {chat.name!r} ({len(chat.history)} messages) · "
            f"{setup.provider.name}/{setup.provider.model}",
            file=sys.stderr,
        )
        print(CHAT_HELP, file=sys.stderr)
        cut = chat.cut_turn()
        if cut is not None:
            question = short(question_of(chat.history, cut), 80)
            print(
                terminal_safe(f"session {chat.name!r} has an unfinished answer to {question!r}. Continue it? [Y/n]"),
                file=sys.stderr,
            )
            try:
                reply = await anyio.to_thread.run_sync(input, "› ", abandon_on_cancel=True)
            except EOFError:
                return 0  # nothing decided: the cut turn stays, to resume later
            if reply.strip().lower() in ("", "y", "yes", "o", "oui"):
                _after(await chat.resume(agent), args)
            else:
                chat.close_cut_turn("not resumed")
        while True:
            try:
                line = await anyio.to_thread.run_sync(input, "› ", abandon_on_cancel=True)
            except EOFError:
                return 0
            line = line.strip()
            if not line:
                continue
            if line == "/resume":
                _after(await chat.resume(agent), args)
                continue
            if line.startswith("/"):
                if not chat.command(line):
                    return 0
                continue
            chat.close_cut_turn("interrupted, not resumed")
            context = chat.context(line)
            _after(await _interruptible(functools.partial(agent.ask, line, context, progress=chat.save)), args)


def _after(result: RunResult | None, args: argparse.Namespace) -> None:
    if result is None:
        print("\n(cancelled — /resume finishes this answer from the tool results stored so far)", file=sys.stderr)
    else:
        _report(result, args)


def cmd_chat(args: argparse.Namespace, settings: Settings) -> int:
    try:
        return anyio.run(_chat, args, settings)
    except AgentError as exc:
        print(terminal_safe(f"error ({exc.kind.value}): {exc.message}"), file=sys.stderr)
        return 1


# ---------------------------------------------------------------- providers, logs


def cmd_providers(args: argparse.Namespace, settings: Settings) -> int:
    detected = detect_provider(settings.environ)
    unusable = unusable_keys(settings.environ)
    rows = []
    for spec in PROVIDERS.values():
        key_state = "not needed" if spec.key_env is None else ("set" if settings.value(spec.key_env) else "not set")
        if spec in unusable:
            key_state = f"set, needs {ANTHROPIC_EXTRA}"
        rows.append(
            {
                "name": spec.name,
                "wire": spec.wire,
                "base_url": spec.base_url,
                "default_model": spec.default_model,
                "key_env": spec.key_env,
                "key": key_state,
                "price_input": spec.prices.input,
                "price_cached_input": spec.prices.cached_input,
                "price_output": spec.prices.output,
                "default": spec.name == detected.name,
            }
        )
    if args.json:
        print(
            json.dumps(
                {
                    "providers": rows,
                    "detection_order": DETECTION_ORDER,
                    "fallback": FALLBACK_PROVIDER,
                    "default": detected.name,
                }
            )
        )
        return 0
    title = "docs-agent providers (prices: USD per million tokens, input / cached input / output)"
    header = ("provider", "wire", "default model", "key variable", "key", "prices")
    cells: list[tuple[str, ...]] = []
    for r in rows:
        prices = (
            "free (local)"
            if not (r["price_input"] or r["price_output"])
            else f"{r['price_input']:g} / {r['price_cached_input']:g} / {r['price_output']:g}"
        )
        name = f"{r['name']} (default)" if r["default"] else str(r["name"])
        cells.append((name, str(r["wire"]), str(r["default_model"]), str(r["key_env"] or "—"), str(r["key"]), prices))
    footer = (
        f"Without --provider: the first of {', '.join(DETECTION_ORDER)} whose key is set, else "
        f"{FALLBACK_PROVIDER} (local). DOCS_AGENT_PROVIDER overrides. Now: {detected.name}."
    )
    if not sys.stdout.isatty():  # piped or redirected: every value in full, one row per line, no box drawing
        widths = [max(len(row[i]) for row in [header, *cells]) for i in range(len(header))]
        print(title)
        for row in [header, *cells]:
            print("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=False)).rstrip())
        print(footer)
        return 0
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=title)
    for col in header:
        table.add_column(col, no_wrap=True)
    for row in cells:
        table.add_row(*map(escape, row))
    console = Console()
    console.print(table)
    console.print(escape(footer))
    return 0


def cmd_logs(args: argparse.Namespace, settings: Settings) -> int:
    records = CallLog().recent(args.limit, session=args.session)
    if args.json:
        print(json.dumps([r.model_dump() for r in records]))
        return 0
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    def cell(text: str) -> str:  # a session or model name as typed: no escape sequence, no rich markup
        return escape(terminal_safe(text))

    table = Table(title=f"last {len(records)} LLM calls")
    for col in ("time", "session", "provider/model", "tokens in (cached) / out", "latency", "status", "cost"):
        table.add_column(col, overflow="fold")
    for r in records:
        status = r.status if r.status == "ok" else f"{r.status}: {r.error_kind}"
        table.add_row(
            datetime.fromtimestamp(r.time).strftime("%m-%d %H:%M:%S"),
            cell(r.session or "—"),
            cell(f"{r.provider}/{r.model}"),
            f"{r.prompt_tokens:,} ({r.cached_tokens:,}) / {r.completion_tokens:,}",
            f"{r.latency_ms} ms",
            status,
            f"${r.cost_usd:.5f}",
        )
    Console().print(table)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    # every byte docs-agent prints goes through the scrubber, whatever a model or a server sent
    with scrubbed_stdio():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    handlers: dict[str, Any] = {"ask": cmd_ask, "chat": cmd_chat, "providers": cmd_providers, "logs": cmd_logs}
    try:
        settings = Settings.load()  # first: a bad environment variable is one sentence, even with --help
        args = build_parser().parse_args(argv)
        return handlers[args.command](args, settings)
    except KeyboardInterrupt:
        print("\ncancelled", file=sys.stderr)
        return 130
    except AgentError as exc:
        print(terminal_safe(f"error ({exc.kind.value}): {exc.message}"), file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
