"""Shared pieces of the security tests: the attack vault, an audit of every file the process opens,
leak checks on tool results, and helpers to run the server over stdio and HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from mcp_docs.mcp.tool_table import TOOL_NAMES
from tests.conftest import OUTSIDE_MARKER, make_vault
from tests.server_fixtures import child_env, free_port, serve_args
from tests.server_fixtures import stop as stop_process

BIG_BYTES = 50 * 1024 * 1024
TRACEBACK_SIGNS = ("Traceback (most recent call last)", 'File "/', "site-packages", "/mcp_docs/")
TOOLS = TOOL_NAMES

# ../ in all its encodings and separator styles, absolute paths, NUL bytes.
TRAVERSALS = [
    "../../etc/passwd",
    "../outside/secret.md",
    "../vault_evil/evil.md",
    "guides/../../outside/secret.md",
    "./../outside/secret.md",
    "..\\outside\\secret.md",
    "..\\..\\etc\\passwd",
    "guides\\..\\..\\outside\\secret.md",
    "%2e%2e/outside/secret.md",
    "%2e%2e%2foutside%2fsecret.md",
    "%2E%2E%2Foutside%2Fsecret.md",
    "%252e%252e%252foutside%252fsecret.md",
    "%25252e%25252e/outside/secret.md",
    "..%2foutside%2fsecret.md",
    "..%5coutside%5csecret.md",
    "..%c0%afoutside/secret.md",
    "\u2024\u2024/outside/secret.md",  # one-dot leaders: not dots, must simply not exist
    "／../outside/secret.md",
    "/etc/passwd",
    "//etc/passwd",
    "\\\\server\\share\\secret.md",
    "C:\\Windows\\win.ini",
    "c:/windows/win.ini",
    "file:///etc/passwd",
    "index.md\x00../../outside/secret.md",
    "../outside/secret.md\x00.md",
    "%00../outside/secret.md",
    "index.md%00",
    "outside-folder/secret.md",  # a folder link leading out
    "leak.md",  # a file link leading out
    "dangling.md",
    "up/outside/secret.md",  # a folder link to the root's parent
    "evil-link.md",  # a link into the sibling folder sharing the root's prefix
    "..",
    ".",
    "",
    " ",
    "~/.ssh/id_rsa",
    "$HOME/.bashrc",
]


def make_attack_vault(base: Path, big: bool = True) -> Path:
    """The fixture vault (links in and out, binary, invalid UTF-8, sibling `vault_evil`) plus more attacks."""
    vault = make_vault(base)
    os.symlink(base, vault / "up")  # folder link to the parent of the root
    os.symlink(base / "vault_evil" / "evil.md", vault / "evil-link.md")
    os.symlink(base / "vault_evil", vault / "evil-folder")
    os.symlink(vault, vault / "loop")  # a link loop back to the root
    (vault / "guides" / "deep").mkdir(exist_ok=True)
    os.symlink(base / "outside", vault / "guides" / "deep" / "nested-out")
    if big:
        with open(vault / "big50.md", "wb") as fh:
            fh.write(b"# Big\n\n")
            line = b"a fifty megabyte line of ordinary prose for the size limit test\n"
            chunk = line * (1024 * 1024 // len(line))
            while fh.tell() < BIG_BYTES:
                fh.write(chunk)
    # just under the 5 MB default limit, hundreds of sections: the largest file a tool must still serve fast
    para = ("Plain prose about the near-limit document, words and more words for the budget test. " * 12 + "\n") * 3
    (vault / "near-limit.md").write_text("# Near limit\n" + "".join(f"\n## Part {i}\n\n{para}" for i in range(1500)))
    (vault / "binary2.md").write_bytes(bytes(range(256)) * 64)
    (vault / "badutf8.md").write_bytes(
        b"# Bad \xff\xfe\xc3\x28 bytes\n\n\xed\xa0\x80 surrogate \xf8\x88\x80\x80\x80 text\n"
    )
    return vault


def forbidden_dirs(base: Path) -> list[Path]:
    return [(base / "outside").resolve(), (base / "vault_evil").resolve()]


class OpenAudit:
    """Records every path this process opens (audit events), while active; shared by all tests."""

    _installed = False
    _lock = threading.Lock()
    active = False
    paths: ClassVar[list[str]] = []

    @classmethod
    def _hook(cls, event: str, args: tuple[Any, ...]) -> None:
        if not cls.active or event not in ("open", "os.listdir", "os.scandir"):
            return
        path = args[0] if args else None
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        if isinstance(path, str):
            cls.paths.append(path)

    @classmethod
    @contextmanager
    def recording(cls) -> Iterator[list[str]]:
        with cls._lock:
            if not cls._installed:
                sys.addaudithook(cls._hook)
                cls._installed = True
        cls.paths = []
        cls.active = True
        try:
            yield cls.paths
        finally:
            cls.active = False


def opened_outside(paths: list[str], forbidden: list[Path]) -> list[str]:
    """Paths (resolved now) that lie inside one of the forbidden folders."""
    bad = []
    for p in paths:
        try:
            resolved = Path(os.path.realpath(p))
        except (OSError, ValueError):
            continue
        if any(resolved == f or resolved.is_relative_to(f) for f in forbidden):
            bad.append(p)
    return bad


def result_text(result: Any) -> str:
    """Everything a tool result carries (text content and structured content), as one string."""
    parts = []
    for c in getattr(result, "content", None) or []:
        parts.append(getattr(c, "text", "") or "")
    sc = getattr(result, "structured_content", None)
    if sc is not None:
        parts.append(json.dumps(sc, ensure_ascii=False))
    return "\n".join(parts)


def assert_clean(result: Any, *, max_chars: int = 250_000) -> str:
    """No outside marker, no traceback, bounded size; returns the text."""
    text = result_text(result)
    assert OUTSIDE_MARKER not in text, text[:500]
    for sign in TRACEBACK_SIGNS:
        assert sign not in text, f"traceback-like text {sign!r} in: {text[:500]}"
    assert len(text) <= max_chars, len(text)
    return text


def serve_cmd(root: Path, index: Path, *more: str) -> list[str]:
    return [sys.executable, *serve_args(root, index, *more)]


def wait_http(
    port: int, proc: subprocess.Popen[bytes] | None = None, timeout: float = 90.0, host: str = "127.0.0.1"
) -> None:
    import httpx2

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise RuntimeError(f"server exited {proc.returncode}: {err[-2000:]}")
        try:
            if httpx2.get(f"http://{host}:{port}/health", timeout=1.0).status_code == 200:
                return
        except httpx2.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError("server did not start in time")


@contextmanager
def http_server(
    root: Path, index: Path, *more: str, env: dict[str, str] | None = None, port: int | None = None
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    port = port or free_port()
    proc = subprocess.Popen(
        serve_cmd(root, index, "--transport", "http", "--port", str(port), "--no-watch", *more),
        env=env or child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_http(port, proc)
        yield port, proc
    finally:
        stop_process(proc)
