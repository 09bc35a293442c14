"""Every exception mcp-docs raises on purpose, in one place, so any layer can raise or catch one without
importing the layer that usually raises it (the index layer never imports the CLI or the tools).

Each message is one sentence a person or a model can act on. `EmbedderError` stays in embedders.py,
the one module that raises it.
"""

from __future__ import annotations

from .snippets import clip

ERROR_CHARS = 2000  # the longest tool error sentence


class UserError(Exception):
    """A command-line failure to report in one sentence, without a traceback."""


class ToolInputError(Exception):
    """A request the tools cannot serve, explained in one sentence the model can act on.

    The sentence is bounded whatever it quotes (the parts are clipped where they are built; this is the backstop).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message if len(message) <= ERROR_CHARS else clip(message, ERROR_CHARS - 1))


class PathOutsideRoot(ValueError):
    """A path that names something outside the root, or that cannot be judged safely."""


class FileTooLarge(ValueError):
    """A file over the configured size limit."""


class NotServed(FileNotFoundError):
    """A path the serving rules exclude. To a reader it does not exist, hence a FileNotFoundError:
    refusing it any other way would tell whether an ignored file is there."""


class BinaryContent(ValueError):
    """A file that holds binary data (NUL bytes), not Markdown text."""


class ParseTimeout(Exception):
    """Parsing one file took longer than its time budget."""


class RootMissing(UserError):
    """The documents root is gone (deleted, moved, being restored): a sync would take every document for deleted."""


class IndexUnwritable(UserError):
    """The index folder or its files cannot be written by this user (read-only, another user's, disk full)."""


class IndexBusy(RuntimeError):
    """Another process holds the index writer (for example a running `mcp-docs serve`)."""


class IndexFolderRefused(ValueError):
    """The index folder (or a path in it) is not one mcp-docs made: nothing is deleted or written."""


class DatabaseUnavailable(ToolInputError):
    """The PostgreSQL store cannot be reached (down, unreachable, or the connection dropped mid-query): one sentence
    that names the database without its password; the next call tries again."""
