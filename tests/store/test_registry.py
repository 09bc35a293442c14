"""`--store` resolved in one place (store/registry.py): a third store is one registry entry, and from then on
settings, MCP_DOCS_STORE and the CLI's parser accept it, and the real CLI searches through it (the in-memory store
of tests/store/memory_store.py, registered here as a user's plugin would)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from mcp_docs.cli import build_parser, main
from mcp_docs.errors import SettingsInvalid
from mcp_docs.settings import Settings
from mcp_docs.store import registry
from mcp_docs.store.choices import CHOICES, store_names
from mcp_docs.store.registry import STORES, StoreEntry, register

from .memory_store import MemoryStore

TEXTS = {"guides/swap.md": "# Swap\n\nSet vm.swappiness to 10 before the first start.\n"}


def _no_check(settings: Settings, read_only: bool) -> None:
    return None


def _no_refusal(settings: Settings, exc: BaseException) -> None:
    return None


@pytest.fixture
def memory_registered() -> Iterator[None]:
    before, choices = dict(STORES), dict(CHOICES)
    register(
        StoreEntry(
            "memory",
            lambda settings, jail, scanner, read_only: MemoryStore(settings, dict(TEXTS)),
            _no_check,
            _no_refusal,
            shared_between_servers=False,
            needs_root=True,
            describe=lambda settings: "memory",
            summary="memory (the tests' dict)",
        )
    )
    yield
    STORES.clear()
    STORES.update(before)
    CHOICES.clear()
    CHOICES.update(choices)


def test_the_store_choices_are_the_registry_s(memory_registered: None, tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    assert store_names() == ["tantivy", "memory", "postgres"]  # the default first
    settings = Settings.load(root, tmp_path / "idx", store="memory", environ={})
    assert settings.store == "memory" and registry.store_kind(settings).name == "memory"
    assert Settings.load(root, tmp_path / "idx", environ={"MCP_DOCS_STORE": "Memory"}).store == "memory"
    args = build_parser().parse_args(["search", "swappiness", "--store", "memory", "--root", str(tmp_path)])
    assert args.store == "memory"
    # a store that serves readers without a copy of the root (as PostgreSQL does): its entry says so
    with pytest.raises(SettingsInvalid, match="No documents root"):
        Settings.load(store="memory", reader=True, index_dir=tmp_path / "r", environ={})
    register(replace(STORES["memory"], name="shared-memory", needs_root=False))
    reader = Settings.load(store="shared-memory", reader=True, index_dir=tmp_path / "r", environ={})
    assert reader.store == "shared-memory" and not reader.has_root
    with pytest.raises(SettingsInvalid, match=r"choose tantivy \(the index folder, default\), memory \(the tests'"):
        Settings.load(root, tmp_path / "idx", store="opensearch", environ={})


def test_the_cli_searches_through_a_registered_store(
    memory_registered: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "docs"
    root.mkdir()  # empty: the document lives only in the memory store
    args = ["--store", "memory", "--root", str(root), "--index-dir", str(tmp_path / "idx"), "--embeddings", "none"]
    assert main(["index", *args]) == 0
    capsys.readouterr()
    assert main(["search", "swappiness", "--json", *args]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in found["results"]] == ["guides/swap.md"]


def test_an_unregistered_store_is_refused_by_the_parser(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["search", "x", "--store", "memory", "--root", str(tmp_path)])
    assert "invalid choice: 'memory'" in capsys.readouterr().err
