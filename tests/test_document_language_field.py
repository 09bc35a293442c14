"""Each document's `language` (ISO 639-1, null when undecided) in `list_documents` entries and search results,
through a real MCP client, the CLI's --json, and the text renderings (issue 29, part 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from mcp_docs.library import Library
from mcp_docs.server import build_server
from mcp_docs.settings import Settings
from tests.cli_runner import run_cli

ENGLISH = "The canvas shows your notes side by side, and you can draw arrows between the cards of the canvas."
FRENCH = "Le canevas montre vos notes côte à côte, et vous pouvez tracer des flèches entre les cartes du canevas."
THAI = "แคนวาสแสดงบันทึกของคุณเคียงข้างกัน และคุณสามารถวาดลูกศรระหว่างการ์ดต่างๆ ในแคนวาสได้"
CZECH = "Plátno zobrazuje vaše poznámky vedle sebe a mezi kartami na plátně můžete kreslit šipky."
CODE_ONLY = "```\nkubectl get pods canvas\n```\n\n| canvas | 1 |\n|---|---|\n"

DOCS = {
    "en/canvas.md": f"# Canvas\n\n{ENGLISH}\n",
    "fr/canvas.md": f"# Canevas\n\n{FRENCH}\n",
    "th/canvas.md": f"# แคนวาส\n\n{THAI}\n",
    "cs/canvas.md": f"# Plátno canvas\n\n{CZECH}\n",
    "code/canvas.md": f"# canvas\n\n{CODE_ONLY}",
    # the front matter's word stands over the text's (an English sentence, declared French)
    "declared/canvas.md": f"---\nlang: fr\n---\n# Canvas\n\n{ENGLISH}\n",
    # any ISO 639-1 language may be declared, not only those with a stemmer (Czech was 'unsupported')
    "declared/platno.md": f"---\nlang: cs\n---\n# Plátno\n\n{ENGLISH}\n",
}
EXPECTED = {
    "en/canvas.md": "en",
    "fr/canvas.md": "fr",
    "th/canvas.md": "th",
    "cs/canvas.md": "cs",
    "code/canvas.md": None,
    "declared/canvas.md": "fr",
    "declared/platno.md": "cs",
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for rel, text in DOCS.items():
        path = tmp_path / "vault" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path / "vault"


@pytest.fixture
def library(root: Path, tmp_path: Path) -> Library:
    lib = Library(Settings.load(root, tmp_path / "index", embeddings="none", environ={}))
    lib.sync()
    yield lib
    lib.close()


@pytest.mark.anyio
async def test_list_and_search_give_each_documents_language_and_null_when_undecided(library: Library) -> None:
    async with Client(build_server(library)) as client:
        listed = (await client.call_tool("list_documents", {"limit": 50})).structured_content
        assert {d["id"]: d["language"] for d in listed["documents"]} == EXPECTED
        found = (
            await client.call_tool("search_documents", {"query": "canvas", "mode": "keyword", "max_results": 10})
        ).structured_content
        languages = {d["id"]: d["language"] for d in found["results"]}
        assert languages and all(languages[i] == EXPECTED[i] for i in languages)
        assert languages.get("code/canvas.md", "absent") is None  # undecided is null, not the root's English


def test_undecided_documents_are_still_analysed_in_the_root_language(library: Library) -> None:
    # the field says null, the index keeps the root's stemmer for it (and counts it as the root's language)
    assert library.catalog.languages_of(["code/canvas.md"]) == {"code/canvas.md": "en"}
    assert library.catalog.named_languages(["code/canvas.md", "th/canvas.md"]) == {
        "code/canvas.md": None,
        "th/canvas.md": "th",
    }


def test_cli_search_json_carries_the_language(root: Path, tmp_path: Path) -> None:
    index = tmp_path / "cli-index"
    out = run_cli("search", "plátno", "--root", str(root), "--index-dir", str(index), "--mode", "keyword", "--json")
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)["results"]
    assert results[0]["id"] == "cs/canvas.md" and results[0]["language"] == "cs"


def test_text_renderings_mark_languages_only_when_the_documents_shown_differ(library: Library) -> None:
    from mcp_docs.render import render_list, render_search
    from mcp_docs.tools import DocsTools

    tools = DocsTools(library)
    text = render_list(tools.list_documents(limit=50))
    assert "- th/canvas.md — แคนวาส (th) (" in text and "- code/canvas.md — canvas (?) (" in text
    one_language = render_list(tools.list_documents(folder="en"))
    assert "(en)" not in one_language
    search = render_search(tools.search_documents("plátno", mode="keyword"))
    assert "(cs)" not in search  # one document, one language: nothing to tell apart
