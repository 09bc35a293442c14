"""The collection's languages, told to agents and users: `status`, `list_documents` and the server instructions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from mcp_docs.library import Library
from mcp_docs.mcp.server import INSTRUCTIONS, build_server
from mcp_docs.settings import Settings
from mcp_docs.tools import DocsTools

ENGLISH = "The collector receives the traces from the applications and exports them to the backend of your choice."
FRENCH = "Les élèves mangeaient à la cantine avec leurs professeurs, puis ils sont allés dans la cour pour jouer."


def write_vault(root: Path) -> None:
    for i in range(3):
        (root / "en").mkdir(parents=True, exist_ok=True)
        (root / "en" / f"note{i}.md").write_text(f"# Note {i}\n\n{ENGLISH}\n", encoding="utf-8")
    (root / "fr").mkdir()
    (root / "fr" / "cantine.md").write_text(f"# Cantine\n\n{FRENCH}\n", encoding="utf-8")


@pytest.fixture
def library(tmp_path: Path) -> Library:
    write_vault(tmp_path / "vault")
    lib = Library(Settings.load(tmp_path / "vault", tmp_path / "index", embeddings="none", environ={}))
    lib.sync()
    yield lib
    lib.close()


def test_list_documents_names_the_languages_on_the_first_page_of_the_root(library: Library) -> None:
    tools = DocsTools(library)
    assert tools.list_documents().note == "Languages: 75 % English, 25 % French."
    assert tools.list_documents(folder="fr").note is None  # said once, not on every page
    first = tools.list_documents(limit=1)
    assert "Languages" not in (tools.list_documents(limit=1, cursor=first.next_cursor).note or "")


@pytest.mark.anyio
async def test_instructions_say_the_languages_and_follow_the_index(library: Library, tmp_path: Path) -> None:
    server = build_server(library)
    async with Client(server) as client:
        assert client.instructions is not None and client.instructions.startswith(INSTRUCTIONS)
        assert "The documents are 75 % English, 25 % French" in client.instructions
    (tmp_path / "vault" / "fr" / "cour.md").write_text(f"# Cour\n\n{FRENCH}\n", encoding="utf-8")
    library.sync()
    async with Client(server) as client:  # a session that starts later is told the new share
        assert "60 % English, 40 % French" in (client.instructions or "")


def test_status_reports_documents_per_language(tmp_path: Path) -> None:
    write_vault(tmp_path / "vault")
    base = ["--root", str(tmp_path / "vault"), "--index-dir", str(tmp_path / "index")]
    env = {**os.environ, "MCP_DOCS_EMBEDDINGS": "none"}

    def run(*args: str) -> str:
        out = subprocess.run(
            [sys.executable, "-m", "mcp_docs", *args, *base], capture_output=True, text=True, env=env, timeout=120
        )
        assert out.returncode == 0, out.stderr
        return out.stdout

    run("index")
    assert json.loads(run("status", "--json"))["languages"] == {"en": 3, "fr": 1}
    assert "75 % English, 25 % French" in run("status")
