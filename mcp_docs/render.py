"""Compact text renderings of the tool results, for the CLI and for clients that only read text.

The structured result (JSON) carries every field; the text says the same thing
in far fewer tokens: ids, heading paths and line ranges the agent can pass
straight to `read_section`, short snippets, and how to continue.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .models import (
    DocumentEntry,
    DocumentMatch,
    ListResult,
    ReadDocumentResult,
    ReadSectionResult,
    SearchResult,
    SectionMatch,
)
from .snippets import clip
from .terminal import name_safe, shell_word

# A 5-document search renders to ~1,450 characters (OpenTelemetry questions; benchmarks/REPORT.md, "Answer-first
# results"): each document's lead section with its snippet (why it matched), its other sections by heading path and
# lines only, on one line. The snippets of those other sections stay in the structured result.
LEAD_SNIPPET_CHARS = 140
OTHER_LEAD_SNIPPET_CHARS = 90
TITLE_CHARS = 60
QUERY_CHARS = 40  # the caller has the query: echoed only as a reminder
ALSO_RANKS = 3


def plural(n: int, word: str) -> str:
    """'1 document', '2 documents', '1,024 sections'."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def cli_next_step(result: SearchResult) -> str:
    """The footer of `mcp-docs search`: the command that reads the best hit, ready to copy."""
    top = result.results[0]
    # Quoted for a POSIX shell: names with spaces are the rule in note vaults, a heading may hold '$' or '`', and
    # an id that begins with '-' would be read as an option ('./-x.md' names the same document).
    doc = shell_word(f"./{top.id}" if top.id.startswith("-") else top.id)
    section = f" --section {shell_word(top.sections[0].heading_path)}" if top.sections else ""
    return f"Next: mcp-docs read {doc}{section} for the text, or mcp-docs read {doc} --mode outline."


def render_search(result: SearchResult, next_step: Callable[[SearchResult], str] | None = None) -> str:
    """`next_step`: the footer that says how to read on (the MCP tool calls unless given)."""
    head = f'{plural(len(result.results), "document")} for "{clip(result.query, QUERY_CHARS)}" ({result.mode_used}; {result.index.documents} indexed'
    if result.index.pending_embeddings:
        head += f", {result.index.pending_embeddings} awaiting embeddings"
    lines = [head + ")"]
    if result.note:
        lines.append(f"note: {result.note}")
    languages = _language_marks(result.results)
    for rank, doc in enumerate(result.results, start=1):
        tags = f" [{', '.join(doc.tags[:6])}]" if doc.tags else ""
        # a name may hold a newline ('a\nb.md'): escaped, it stays on its line (the structured id is exact)
        title = name_safe(clip(doc.title, TITLE_CHARS))
        lines.append(f"{rank}. {name_safe(doc.id)} — {title}{tags}{languages(doc.language)}")
        if not doc.sections:
            continue
        lead, *others = doc.sections
        snippet = clip(lead.snippet, LEAD_SNIPPET_CHARS if rank == 1 else OTHER_LEAD_SNIPPET_CHARS)
        lines.append(f"   § {_where(lead)}" + (f": {snippet}" if snippet else ""))
        if others and rank <= ALSO_RANKS:
            lines.append("   also § " + "; § ".join(_where(s) for s in others))
    if result.results:
        lines.append(next_step(result) if next_step else "Next: read_section(id, heading path) for the text.")
    return "\n".join(lines)


def _language_marks(documents: Sequence[DocumentMatch] | Sequence[DocumentEntry]) -> Callable[[str | None], str]:
    """' (fr)' after each document when the documents shown are in more than one language; nothing in a
    collection of one language, where it would only cost tokens (undecided: ' (?)')."""
    if len({d.language for d in documents}) < 2:
        return lambda _: ""
    return lambda code: f" ({code or '?'})"


def _where(section: SectionMatch) -> str:
    return f"{section.heading_path} (L{section.line_start}-{section.line_end})"


def render_list(result: ListResult) -> str:
    where = name_safe(result.folder) or "(root)"
    lines = [
        f"{where}: {result.total} document{'s' if result.total != 1 else ''}"
        + (f", showing {len(result.documents)}" if len(result.documents) != result.total else "")
    ]
    if result.note:
        lines.append(f"note: {result.note}")
    if result.folders:
        lines.append("folders: " + ", ".join(f"{name_safe(f.path)}/ ({f.documents})" for f in result.folders))
    languages = _language_marks(result.documents)
    for d in result.documents:
        tags = f" [{', '.join(d.tags[:6])}]" if d.tags else ""
        size = f"{d.sections} sections, {d.size_bytes} B, {d.modified[:10]}"
        line = f"- {name_safe(d.id)} — {name_safe(clip(d.title, 100))}{tags}{languages(d.language)} ({size})"
        if d.summary:
            line += f": {clip(d.summary, 120)}"
        lines.append(line)
    if result.next_cursor:
        lines.append(f"More: list_documents(cursor='{result.next_cursor}') with the same folder, tag and linked_to.")
    return "\n".join(lines)


def _continuation(truncated: bool, next_offset: int | None, total: int) -> str:
    if truncated and next_offset is not None:
        return f"\n[truncated at character {next_offset} of {total}: call again with offset={next_offset}]"
    return ""


def render_read_document(result: ReadDocumentResult) -> str:
    return _render_read(f"{name_safe(result.id)} — {name_safe(result.title)} ({result.mode}", result)


def render_read_section(result: ReadSectionResult) -> str:
    return _render_read(
        f"{name_safe(result.id)} § {result.heading_path} (L{result.line_start}-{result.line_end}", result
    )


def _render_read(head: str, result: ReadDocumentResult | ReadSectionResult) -> str:
    if result.offset:
        head += f", from character {result.offset}"
    body = result.content.rstrip("\n")
    note = f"\nnote: {result.note}" if result.note else ""
    return f"{head})\n\n{body}{_continuation(result.truncated, result.next_offset, result.total_chars)}{note}"
