"""Every exception mcp-docs raises on purpose, in one place, so any layer can raise or catch one without
importing the layer that usually raises it (the index layer never imports the CLI or the tools).

Each message is one sentence a person or a model can act on. Every class derives from `McpDocsError`.
`EmbedderError` stays in embedders.py and `RerankError` in rerank/base.py, the modules that raise them.
"""

from __future__ import annotations

from .snippets import clip

ERROR_CHARS = 2000  # the longest tool error sentence


class McpDocsError(Exception):
    """The root of every exception mcp-docs raises on purpose: the command line catches this one class and prints
    its sentence (exit status 2). tests/test_errors.py checks that every exception class of the package derives
    from it. A class also derives from the built-in exception it used to be (ValueError, FileNotFoundError,
    RuntimeError) where callers catch it by that name."""


class UserError(McpDocsError):
    """A refusal at start or on the command line, reported in one sentence without a traceback. Never raised as
    itself: it is the common base of the classes that name each situation (below), kept because a `--workers`
    process catches it to exit as refused (not restarted) whatever stopped it from opening or listening."""


class IndexCannotOpen(UserError):
    """The index cannot be opened at start: its folder's files (the OS refuses them), or the chosen store (the
    database is unreachable, or another writer holds it)."""


class TokenFileUnusable(UserError):
    """The file named by MCP_DOCS_TOKEN_FILE cannot be read, or holds no token."""


class ServeOptionsConflict(UserError):
    """`serve` options that cannot work together: --workers over stdio or PostgreSQL, a transport that is not
    stdio or http."""


class ExposureRefused(UserError):
    """HTTP on an address other hosts can reach, without a bearer token (the bind policy refuses it)."""


class PortUnavailable(UserError):
    """--host / --port cannot be listened on: another program holds the port, the host name is unknown, or the
    port is out of range."""


class WorkerFailed(UserError):
    """A `--workers` process that could not start, or that keeps exiting: restarting it would not help."""


class DatabaseIndexMismatch(UserError):
    """The PostgreSQL database holds no mcp-docs index yet, one of another schema version, or another root's."""


class DatabaseRefused(UserError):
    """The PostgreSQL server refuses what the index needs: this user lacks a privilege, or pgvector is missing."""


class RootNotGiven(UserError):
    """A command that needs --root DIR (or MCP_DOCS_ROOT) was run without one."""


class SettingsInvalid(McpDocsError, ValueError):
    """A setting the user gave (an option, an MCP_DOCS_* variable) that cannot be used: a missing root, an unknown
    store or embeddings name, a malformed URL, a number out of range."""


class ToolCallFailed(McpDocsError):
    """A tool call that cannot be served, in one sentence the model can act on (an `is_error` result; on the
    command line, the command's error).

    The sentence is bounded whatever it quotes (the parts are clipped where they are built; this is the backstop).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message if len(message) <= ERROR_CHARS else clip(message, ERROR_CHARS - 1))


class ToolInputError(ToolCallFailed):
    """The request itself is wrong: a missing document, an unknown mode, a cursor from another listing."""


class ArgumentInvalid(ToolInputError):
    """A tool argument of the wrong kind: text that is not valid Unicode, a NUL where the index matches, a mode
    not in the list, a number that is not a whole one."""


class DocumentNotFound(ToolInputError):
    """An id (or a link) that names no document of the collection; the sentence lists the closest ids."""


class FolderNotFound(ToolInputError):
    """A `folder` filter that names no folder under the root; the sentence lists the folders there are."""


class PathRefused(ToolInputError):
    """An id or folder outside the root, or one the ignore rules exclude: never read."""


class OffsetPastEnd(ToolInputError):
    """An `offset` beyond the end of the text being read: start again at 0."""


class SectionNotFound(ToolInputError):
    """read_section's heading names no section of the document (or the document has none); the sentence lists its
    headings."""


class SectionAmbiguous(ToolInputError):
    """read_section's heading matches several sections; the sentence lists their heading paths."""


class PathOutsideRoot(McpDocsError, ValueError):
    """A path that names something outside the root, or that cannot be judged safely."""


class FileTooLarge(McpDocsError, ValueError):
    """A file over the configured size limit."""


class NotServed(McpDocsError, FileNotFoundError):
    """A path the serving rules exclude. To a reader it does not exist, hence a FileNotFoundError:
    refusing it any other way would tell whether an ignored file is there."""


class BinaryContent(McpDocsError, ValueError):
    """A file that holds binary data (NUL bytes), not Markdown text."""


class ParseTimeout(McpDocsError):
    """Parsing one file took longer than its time budget."""


class RootMissing(UserError):
    """The documents root is gone (deleted, moved, being restored): a sync would take every document for deleted."""


class IndexUnwritable(UserError):
    """The index folder or its files cannot be written by this user (read-only, another user's, disk full)."""


class IndexBusy(McpDocsError, RuntimeError):
    """Another process holds the index writer (for example a running `mcp-docs serve`)."""


class IndexFolderRefused(McpDocsError, ValueError):
    """The index folder (or a path in it) is not one mcp-docs made: nothing is deleted or written."""


class DatabaseUnavailable(ToolCallFailed):
    """The PostgreSQL store cannot be reached (down, unreachable, or the connection dropped mid-query): one sentence
    that names the database without its password; the next call tries again. Not the request's fault, so not a
    ToolInputError; a tool still answers it as an `is_error` result."""
