"""Session-wide attack vault (built once: it holds a 50 MB file) and its indexed library."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_docs.library import Library
from mcp_docs.settings import Settings

from .common import make_attack_vault


@pytest.fixture(scope="session")
def attack_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("attack")
    make_attack_vault(base)
    return base


@pytest.fixture(scope="session")
def attack_vault(attack_base: Path) -> Path:
    return attack_base / "vault"


@pytest.fixture(scope="session")
def attack_library(attack_base: Path, attack_vault: Path) -> Iterator[Library]:
    lib = Library(Settings.load(attack_vault, attack_base / "index", embeddings="none", environ={}))
    lib.sync()
    yield lib
    lib.close()
