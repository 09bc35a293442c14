"""Session-wide attack vault (built once: it holds a 50 MB file), its indexed library and a client of it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from mcp import Client

from mcp_docs.library import Library
from mcp_docs.mcp.server import build_server
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


@pytest.fixture
async def client(attack_library: Library) -> AsyncIterator[Client]:
    """An in-process MCP client of the attack library; tool errors come back as results, as a model sees them."""
    async with Client(build_server(attack_library), raise_exceptions=False) as c:
        yield c
