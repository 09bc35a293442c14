"""A vault of notes written for a test, synced into a keyword-only library (no embedder to load)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest

from mcp_docs.library import Library
from mcp_docs.settings import Settings


def keyword_library(tmp_path_factory: pytest.TempPathFactory, name: str, notes: Mapping[str, str]) -> Iterator[Library]:
    """Write `notes` (id -> text) under a fresh root, sync them, yield the library, close it after."""
    base = tmp_path_factory.mktemp(name)
    root = base / "vault"
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    lib = Library(Settings.load(root, base / "index", embeddings="none", environ={}))
    lib.sync()
    yield lib
    lib.close()
