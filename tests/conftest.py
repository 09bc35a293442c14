"""Shared fixtures: a copy of the fixture vault, completed at run time with what git cannot carry
(a huge file, a binary file, invalid UTF-8, CRLF, symlinks in and out of the root)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from mcp_docs.library import Library
from mcp_docs.settings import Settings

FIXTURE_VAULT = Path(__file__).parent / "fixtures" / "vault"
OUTSIDE_MARKER = "outsidemarker-7f3a"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def make_vault(base: Path) -> Path:
    """Copy the fixture vault under `base` and add the cases that cannot live in git."""
    vault = base / "vault"
    shutil.copytree(FIXTURE_VAULT, vault, symlinks=True)
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"# Secret\n\n{OUTSIDE_MARKER} must never be served.\n")
    evil = base / "vault_evil"  # shares the root's name as a prefix
    evil.mkdir()
    (evil / "evil.md").write_text(f"# Evil\n\n{OUTSIDE_MARKER} in a sibling folder.\n")
    (vault / "huge.md").write_bytes(b"# Huge\n\n" + b"lorem ipsum dolor sit amet\n" * 240_000)  # ~6.5 MB
    (vault / "binary.md").write_bytes(b"# Looks like markdown\n\x00\x01\x02\xff\xfe binary")
    (vault / "latin1.md").write_bytes("# Café\n\nCrème brûlée in Latin-1.\n".encode("latin-1"))
    (vault / "windows.md").write_bytes(
        "\ufeff# Windows note\r\n\r\nWritten with CRLF line ends.\r\n\r\n## Second\r\n\r\ncrlfmarker text\r\n".encode()
    )
    if hasattr(os, "symlink"):
        os.symlink(outside / "secret.md", vault / "leak.md")
        os.symlink(outside, vault / "outside-folder")
        os.symlink(vault / "missing.md", vault / "dangling.md")
        os.symlink(vault / "guides" / "writing.md", vault / "writing-link.md")
    return vault


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return make_vault(tmp_path)


@pytest.fixture
def settings(vault: Path, tmp_path: Path) -> Settings:
    return Settings.load(
        vault, tmp_path / "index", embeddings="none", environ={}
    )  # the developer's MCP_DOCS_* must not leak in


@pytest.fixture
def library(settings: Settings):
    lib = Library(settings)
    lib.sync()
    yield lib
    lib.close()


def remove_deep_tree(top: str | os.PathLike[str]) -> None:
    """Remove a tree nested deeper than Python's recursion limit, bottom up without recursion: shutil.rmtree
    recurses (Python 3.11), so pytest's own clean-up of old temporary folders would fail on it, in every later
    session on this machine."""
    folders, stack = [], [os.fspath(top)]
    while stack:
        folder = stack.pop()
        folders.append(folder)
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            else:
                os.unlink(entry.path)
    for folder in reversed(folders):
        os.rmdir(folder)
