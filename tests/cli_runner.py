"""Run the `mcp-docs` command line in this process, through the same entry point as the console script.

A subprocess per command re-imports the package (seconds each on a loaded 2-core machine, a few minutes over
the suite). What only a real process shows (a reader closing the pipe, the server's stdout, signals, the
interpreter's exit) is still tested with subprocesses; everything else runs here."""

from __future__ import annotations

import contextlib
import io
import logging
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from mcp_docs.cli import main


@dataclass(frozen=True)
class CliResult:
    """What `subprocess.run(..., capture_output=True, text=True)` gives, for the assertions to read the same."""

    returncode: int
    stdout: str
    stderr: str


@contextlib.contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _warnings_to(stream: io.StringIO) -> Iterator[None]:
    """The CLI logs warnings to stderr (`logging.basicConfig` in `main`, a no-op under pytest's own handlers)."""
    handler = logging.StreamHandler(stream)
    handler.setLevel(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)


def run_cli(*args: str, env: Mapping[str, str] | None = None) -> CliResult:
    """`mcp-docs ARGS` with `env` as the whole environment (default: this one)."""
    out, err = io.StringIO(), io.StringIO()
    with (
        _environment(dict(os.environ) if env is None else env),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        _warnings_to(err),
    ):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse: usage errors and --help
            code = exc.code if isinstance(exc.code, int) else 2
    return CliResult(code, out.getvalue(), err.getvalue())
