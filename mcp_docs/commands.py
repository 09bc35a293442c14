"""What each `mcp-docs` subcommand does (argument parsing lives in cli.py)."""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from .errors import IndexBusy, IndexUnwritable, McpDocsError, RootNotGiven
from .library import Library, open_library
from .link_graph import LinkGraph
from .models import ReadDocumentResult, ReadSectionResult
from .render import plural
from .settings import Settings
from .store.api import SyncReport
from .store.embedded.read_only_media import writable
from .store.registry import store_kind
from .terminal import json_safe, json_text_safe, name_safe, terminal_safe

if TYPE_CHECKING:
    from .tools import DocsTools

ROWS_SHOWN = 100  # rows of each table of the human status; --json lists them all

# Chunks `mcp-docs search` embeds before answering (~10 s with the local model); past that,
# `mcp-docs index` (progress bar, resumable) or a running server builds the vectors.
SEARCH_EMBED_LIMIT = 400

T = TypeVar("T")


def run_command(args: argparse.Namespace, settings: Settings | None) -> int:
    handler = {
        "index": cmd_index,
        "search": cmd_search,
        "read": cmd_read,
        "status": cmd_status,
        "serve": cmd_serve,
        "config": cmd_config,
    }[args.command]
    return handler(args, settings)


def _err_console() -> Console:
    return Console(stderr=True)


def _clock(seconds: float) -> str:
    whole = round(seconds)
    return (
        f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"
        if whole >= 3600
        else f"{whole // 60}:{whole % 60:02d}"
    )


MIN_RATE_SECONDS = 1.0  # a rate measured over less than this is noise


def progress_detail(done: int, total: int | None, unit: str, seconds: float, prior_rate: float | None = None) -> str:
    """'120/8,273 chunks · 21.4 chunks/s · ETA 6:23': the total once known, a rate and an ETA once measurable.

    Before anything is done, `prior_rate` (the rate of the previous run) gives the ETA."""
    if total is None:
        return f"{done:,} {unit}" if done else ""
    text = f"{done:,}/{total:,} {unit}"
    # a stage's first report can come with much already done (chunking announces itself after its first batch):
    # under a second of it gave '43802015.7 documents/s'
    rate = done / seconds if done and seconds >= MIN_RATE_SECONDS else prior_rate
    if rate and total > done:
        text += f" · {rate:.1f} {unit}/s · ETA {_clock((total - done) / rate)}"
    return text


class StageProgress:
    """A progress line that says what is happening ('scanning files', 'chunking') and never shows an unknown total."""

    def __init__(self, progress: Progress, description: str) -> None:
        self.progress = progress
        self.task: TaskID = progress.add_task(description, total=None, detail="")
        self.stage = description
        self.started = time.perf_counter()

    def describe(self, description: str) -> None:
        self.progress.update(self.task, description=description, detail="", total=None, completed=0)

    def callback(self, description: str, unit: str, prior_rate: float | None = None) -> Callable[[int, int], None]:
        def update(done: int, total: int) -> None:
            if self.stage != description:  # a new stage: its rate starts now
                self.stage, self.started = description, time.perf_counter()
            detail = progress_detail(done, total, unit, time.perf_counter() - self.started, prior_rate)
            self.progress.update(self.task, description=description, completed=done, total=total or None, detail=detail)

        return update


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


def sync_with_progress(library: Library) -> SyncReport:
    """Sync, with a progress line (files, rate and ETA) on stderr when it is a terminal."""
    console = _err_console()
    if not console.is_terminal:
        return library.sync()
    with _progress(console) as progress:
        stage = StageProgress(progress, "scanning files")
        return library.sync(progress=stage.callback("indexing", "files"))


def embed_with_progress(library: Library) -> tuple[str, bool]:
    """Embed what is pending (progress line with rate and ETA on a terminal); a summary line and whether it failed."""
    vectors, worker = library.vectors, library.embedding
    if vectors is None or worker is None:
        return "", False
    if vectors.embedder is None:
        return f"[yellow]embeddings unavailable[/]: {vectors.error} — keyword search works", True
    from .embedders import EmbedderError

    started = time.perf_counter()
    console = _err_console()
    try:
        if not console.is_terminal:
            done = worker.build()
        else:
            with _progress(console) as progress:
                stage = StageProgress(progress, "comparing with the catalog")
                reading = stage.callback("chunking", "documents")

                def chunking(done: int, total: int) -> None:
                    reading(done, total)
                    if done >= total:
                        stage.describe("loading the model")

                prior = vectors.status()["rate_chunks_per_s"]
                done = worker.build(progress=stage.callback("embedding", "chunks", prior), chunking=chunking)
    except EmbedderError as exc:
        return (
            f"[yellow]embedding failed[/]: {exc} — keyword search works; "
            "run `mcp-docs index` again to resume where it stopped"
        ), True
    spent = time.perf_counter() - started
    state = vectors.status()
    line = f"vectors: {state['embedded']} chunks ({state['model']})"
    if state.get("documents_to_embed"):  # and one per document (store/embedded/vector_store.py), embedded first
        line += f" and {state['document_vectors']} document vectors"
    if done:  # texts sent to the model: a text found in several places is sent once
        line += f", {done} texts embedded in {spent:.1f}s ({done / spent:.1f}/s)"
    if state["failed"]:
        line += f"; [yellow]{state['failed']} chunk(s) the model rejected were skipped[/] (see the log)"
    return line, False


def embed_by_store(library: Library) -> tuple[str, bool]:
    """`embed_with_progress` for a store without an embedding worker (one that embeds its own way, or not at all,
    as the tests' in-memory store)."""
    from .embedders import EmbedderError

    vectors = library.vectors
    if vectors is None:
        return "", False
    if vectors.embedder is None:
        return f"[yellow]embeddings unavailable[/]: {vectors.error} — keyword search works", True
    started = time.perf_counter()
    console = _err_console()
    try:
        if console.is_terminal:
            with _progress(console) as progress:
                done = library.embed(StageProgress(progress, "embedding").callback("embedding", "chunks"))
        else:
            done = library.embed()
    except EmbedderError as exc:
        return f"[yellow]embedding failed[/]: {exc} — keyword search works; run `mcp-docs index` again to resume", True
    spent = time.perf_counter() - started
    line = f"vectors: {vectors.embedded_chunks()} chunks"
    if done:
        line += f", {done} embedded in {spent:.1f}s ({done / spent:.1f} chunks/s)"
    return line, False


def cmd_index(args: argparse.Namespace, settings: Settings | None) -> int:
    assert settings is not None
    library = open_library(settings)
    started = time.perf_counter()
    console = Console()
    try:
        with library:
            report = sync_with_progress(library)  # IndexBusy: the command's error as it is (one sentence, exit 2)
            if library.embedding is not None:
                embed_line, embed_failed = embed_with_progress(library)
            else:
                embed_line, embed_failed = embed_by_store(library)
            info = library.index_info()
            elapsed = time.perf_counter() - started
            console.print(
                f"[bold]{plural(info.documents, 'document')}[/] indexed in {elapsed:.2f}s — "
                f"{report.added} added, {report.updated} updated, {report.deleted} deleted, "
                f"{report.unchanged} unchanged, {len(report.skipped)} skipped"
            )
            if embed_line:
                console.print(embed_line, highlight=False)
            empty = library.empty_note()
            if empty:
                console.print(f"[yellow]{empty}[/]", highlight=False)
            for problem in report.skipped[:20]:
                console.print(
                    f"  skipped [yellow]{_shown(name_safe(problem.path))}[/]: {_shown(problem.kind)} — "
                    f"{_shown(name_safe(problem.detail))}",
                    highlight=False,
                )
            if len(report.skipped) > 20:
                console.print(f"  … and {len(report.skipped) - 20} more (see `mcp-docs status`)")
            console.print(f"index: {_shown(library.location())}", highlight=False)
            if embed_failed:
                return 1
    except KeyboardInterrupt:
        _err_console().print("interrupted: what was committed is kept; run `mcp-docs index` again to finish.")
        return 130
    return 0


def _open_to_answer(settings: Settings) -> Library:
    """The library for search, read and status: read-only over PostgreSQL (the server writes), and when the
    index folder cannot be written (a read-only mount, a snapshot): it is then searched as it is, not brought
    up to date, and opening it changes nothing there (see store/embedded/read_only_media.py)."""
    if store_kind(settings).shared_between_servers:
        return open_library(settings, read_only=True)
    if settings.index_dir.is_dir() and not writable(settings.index_dir):
        _err_console().print(
            f"[yellow]note[/]: the index folder {_shown(str(settings.index_dir))} is read-only: answering from "
            "the index as it is, without bringing it up to date",
            highlight=False,
        )
        return open_library(settings, read_only=True)
    return open_library(settings)


def _try_sync(library: Library) -> None:
    """Bring the index up to date before answering; if a server holds the writer, it keeps it fresh."""
    try:
        sync_with_progress(library)
    except IndexBusy:  # a server holds the writer, or the index is opened read-only: answer from it as it is
        pass
    except IndexUnwritable as exc:  # answer from the index as it is, and say why it may be out of date
        _err_console().print(f"[yellow]warning[/]: {exc}; answering from the index as it is")


def cmd_search(args: argparse.Namespace, settings: Settings | None) -> int:
    assert settings is not None
    from .render import cli_next_step, render_search
    from .tools import DEFAULT_SEARCH_CHARS, DocsTools

    with _open_to_answer(settings) as library:
        _try_sync(library)
        vectors = library.vectors
        if (
            args.mode != "keyword"
            and not library.read_only
            and vectors is not None
            and 0 < vectors.pending() <= SEARCH_EMBED_LIMIT
        ):
            # A one-shot command has no background worker: small vaults get their vectors now.
            embed_with_progress(library)
        tools = DocsTools(library)
        max_chars = DEFAULT_SEARCH_CHARS if args.max_chars is None else args.max_chars
        # a tool's one-sentence refusal (ToolInputError, DatabaseUnavailable) is the command's error: exit 2
        result = tools.search_documents(args.query, args.max_results, args.mode, args.folder, args.tags, max_chars)
        if args.json:
            print(json_text_safe(result.model_dump_json()))
        else:
            print_emphasised(terminal_safe(render_search(result, cli_next_step)))
    return 0


_BOLD = re.compile(r"\*\*(.+?)\*\*")


def print_emphasised(text: str) -> None:
    """On a terminal, the snippets' **matches** in bold; piped, the text as it is (as the MCP text shows it)."""
    console = Console(highlight=False, soft_wrap=True)
    if not console.is_terminal:
        print(text)
        return
    styled = Text()
    at = 0
    for m in _BOLD.finditer(text):
        styled.append(text[at : m.start()])
        styled.append(m.group(1), style="bold")
        at = m.end()
    styled.append(text[at:])
    console.print(styled)


def cmd_read(args: argparse.Namespace, settings: Settings | None) -> int:
    assert settings is not None
    from .tools import DEFAULT_MAX_CHARS, DocsTools

    with _open_to_answer(settings) as library:
        _try_sync(library)  # reads come from disk, but suggestions for a mistyped id come from the index
        tools = DocsTools(library)
        max_chars = DEFAULT_MAX_CHARS if args.max_chars is None else args.max_chars
        result: ReadSectionResult | ReadDocumentResult
        if args.section or (args.mode is None and _names_a_heading(tools, args.id)):
            result = tools.read_section(args.id, args.section or "", max_chars, args.offset)
        else:
            result = tools.read_document(args.id, args.mode or "full", max_chars, args.offset)
        if args.json:
            print(json_text_safe(result.model_dump_json()))
        else:
            # On a terminal the text is shown, not acted on; into a pipe or a file it is the document, exactly.
            content = terminal_safe(result.content) if sys.stdout.isatty() else result.content
            sys.stdout.write(content.rstrip("\n") + "\n")
            if result.truncated:
                print(f"\n[truncated: continue with --offset {result.next_offset}]", file=sys.stderr)
    return 0


def _names_a_heading(tools: DocsTools, doc_id: str) -> bool:
    """Whether `doc_id` is a link to a heading (`[[Setup#Linux]]`, `setup.md#linux`, `Note#^block`): `read` then
    prints that section, as read_section does for such an id, not the whole file from its front matter."""
    try:
        return tools.locate(doc_id)[2] is not None
    except McpDocsError:  # read_document says what is wrong with the id, in its words
        return False


def cmd_status(args: argparse.Namespace, settings: Settings | None) -> int:
    assert settings is not None
    with _open_to_answer(settings) as library:
        catalog = library.catalog
        info = library.index_info()
        problems = catalog.problems()
        warnings = catalog.documents_with_warnings()
        broken = LinkGraph(catalog, settings.extensions).broken()  # the targets most notes link to first
        broken_links = [b for target in broken for b in target.links]
        status = {
            "root": str(settings.root),
            "index_dir": library.location(),
            "language": settings.language,
            "languages": library.language_counts,
            "embeddings": settings.embeddings,
            "documents": info.documents,
            "sections": catalog.section_total(),
            "pending_embeddings": info.pending_embeddings,
            "skipped": [{"path": p.path, "kind": p.kind, "detail": p.detail} for p in problems],
            "warnings": [{"path": path, "warnings": w} for path, w in warnings],
            "broken_links": [
                {"id": b.id, "line": b.line, "target": b.target, "reason": b.reason, "count": b.count}
                for b in broken_links
            ],
            "broken_link_targets": [
                {"target": t.target, "reason": t.reason, "notes": t.notes, "links": t.count} for t in broken
            ],
        }
        vec = library.vectors.status() if library.vectors is not None else None
        if vec is not None:
            status["vectors"] = vec
        rerank = library.reranker.probe() if library.reranker is not None else None
        status["reranker"] = rerank
        if args.json:
            print(json_safe(status))
            return 0
        console = Console()
        console.print(f"root        {_shown(str(status['root']))}", highlight=False)
        console.print(f"index       {_shown(str(status['index_dir']))}", highlight=False)
        console.print(
            f"documents   {info.documents} ({plural(catalog.section_total(), 'section')}), language {settings.language}"
        )
        if library.language_counts:
            console.print(f"languages   {library.languages_text()} (detected where a note has no lang:)")
        console.print(f"embeddings  {embeddings_line(settings.embeddings, info.pending_embeddings, vec)}")
        if vec:
            # an empty index has nothing to count: "0 of 0 chunks embedded (100.0%)" read as done
            summary = vector_summary(vec) if info.documents else "none yet (no document indexed)"
            console.print(f"vectors     {summary}, model {vec['model']}", highlight=False)
            if vec.get("error"):
                console.print(
                    f"            [yellow]error[/]: {_shown(str(vec['error']))} — keyword search works", highlight=False
                )
        console.print(f"reranker    {reranker_summary(rerank)}", highlight=False)
        if problems:
            table = Table("skipped file", "why", "detail", title=f"{plural(len(problems), 'file')} skipped")
            for p in problems[:ROWS_SHOWN]:
                table.add_row(*_cells(name_safe(p.path), p.kind, name_safe(p.detail)))
            _print_capped(console, table, len(problems))
        if warnings:
            table = Table("document", "warning", title=f"{plural(len(warnings), 'document')} indexed with warnings")
            for path, ws in warnings[:ROWS_SHOWN]:
                table.add_row(*_cells(name_safe(path), "; ".join(ws)))
            _print_capped(console, table, len(warnings))
        if broken:
            title = f"{plural(len(broken_links), 'broken link')} to {plural(len(broken), 'target')}, most notes first"
            table = Table("link", "notes", "first in (line)", "why", title=title)
            for t in broken[:ROWS_SHOWN]:
                first = t.links[0]
                where = f"{name_safe(first.id)} ({first.line})"
                table.add_row(*_cells(name_safe(t.target), f"{t.notes:,}", where, t.reason))
            _print_capped(console, table, len(broken))
        if problems or warnings or broken:  # the tables push the lines above off screen: the gist again, last
            gist = [plural(info.documents, "document")]
            if vec and info.documents:  # an empty index's "0 of 0 chunks embedded (100.0%)" read as done
                gist.append(vector_summary(vec))
            gist.append(
                f"{plural(len(problems), 'file')} skipped, {plural(len(warnings), 'document')} with warnings, "
                f"{plural(len(broken_links), 'broken link')}"
            )
            console.print("summary     " + "; ".join(gist), highlight=False)
        empty = library.empty_note()
        if empty:
            console.print(f"[yellow]{_shown(empty)}[/]", highlight=False)
        elif not problems and not warnings and not broken:
            console.print("no files skipped, no warnings, no broken links")
    return 0


def _shown(text: str) -> str:
    """Untrusted text (a file name, a service's error) inside rich markup: no escape sequence, no markup."""
    return escape(terminal_safe(text))


def _cells(*texts: str) -> list[Text]:
    """Table cells from untrusted text: Text objects, so rich reads no markup in them either."""
    return [Text(terminal_safe(t)) for t in texts]


def _print_capped(console: Console, table: Table, total: int) -> None:
    console.print(table)
    if total > ROWS_SHOWN:
        console.print(f"… and {total - ROWS_SHOWN:,} more (`mcp-docs status --json` lists all)")


def embeddings_line(embeddings: str, pending: int, vec: dict[str, object] | None) -> str:
    """'local, pending 32', or, for an index that holds no vector yet, where the setting comes from and what embeds
    them: after `mcp-docs index --embeddings none`, status (which takes no --embeddings) said 'local, pending
    12560', as if 12,560 vectors were on their way; nothing embeds them until index or serve runs with it."""
    if vec is None or vec.get("embedded") or vec.get("document_vectors") or vec.get("running"):
        return f"{embeddings}, pending {pending}"
    documents = vec.get("documents_to_embed") or vec.get("pending") or 0
    what = (
        f"the {plural(documents, 'document')}"
        if isinstance(documents, int) and documents
        else "the documents once indexed"
    )
    return (
        f"{embeddings} (MCP_DOCS_EMBEDDINGS, or the default), no vector stored yet: "
        f"`mcp-docs index` or `mcp-docs serve` with this setting embeds {what}"
    )


def reranker_summary(rerank: dict[str, object] | None) -> str:
    """'tei http://gpu:8080/rerank, top 30 sections: ok (41 ms)' or why it is down."""
    if rerank is None:
        return "off (set MCP_DOCS_RERANK_URL or MCP_DOCS_RERANK_MODEL_DIR)"
    text = _shown(f"{rerank['kind']} {rerank['target']}, top {rerank['top']} sections: ")
    if rerank["error"]:
        return text + f"[yellow]down[/]: it {_shown(str(rerank['error']))} — searches keep the retrieval order"
    return text + f"ok ({rerank['last_call_ms']} ms)"


def vector_summary(vec: dict[str, object]) -> str:
    """'document vectors 6,289 of 6,289; sections: 2,040 of 8,273 chunks embedded (24.7%), about 4:51 left at
    21.4 chunks/s'. Document-level vectors come first (store/embedded/vector_store.py), so both levels are shown."""
    text = f"{vec['embedded']:,} of {vec['chunks']:,} chunks embedded ({vec['coverage_percent']}%)"
    if vec.get("documents_to_embed"):
        text = f"document vectors {vec['document_vectors']:,} of {vec['documents_to_embed']:,}; sections: {text}"
    if vec["eta_seconds"] is not None:
        text += f", about {_clock(float(vec['eta_seconds']))} left at {vec['rate_chunks_per_s']} chunks/s"  # type: ignore[arg-type]
    elif vec["pending"]:
        text += f", {vec['pending']:,} pending (time left known once embedding has run)"
    if vec["failed"]:
        text += f", {vec['failed']} rejected by the model (skipped)"
    return text


def cmd_serve(args: argparse.Namespace, settings: Settings | None) -> int:
    assert settings is not None
    from .serve.process import open_transport, serve_one_process

    listener, token = open_transport(settings, args.transport, args.host, args.port)
    if listener is not None and settings.workers > 1:
        from .serve.workers import serve_workers  # the process model sits above one process: workers import it

        try:
            serve_workers(settings, args.host, listener, token)
        finally:
            listener.close()
        return 0
    serve_one_process(settings, args.host, listener, token)
    return 0


def cmd_config(args: argparse.Namespace, settings: Settings | None) -> int:
    from .client_config import render_client_config

    if settings is None:
        raise RootNotGiven("config needs --root DIR (the documents folder the client should serve).")
    print(render_client_config(args.client, settings, transport=args.transport, url=args.url))
    return 0
