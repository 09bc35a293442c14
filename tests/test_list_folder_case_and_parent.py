"""list_documents' folder filter written in another case or a wrong subfolder name, through a real MCP client over
stdio. Found reviewing the Obsidian help vault: 'fr/édition et mise en forme' (the folder is 'fr/Édition et mise en
forme') answered 'No folder' with the 36 top-level folders, while ids and links ignore case; a wrong name under
'fr' listed the root's folders instead of those of 'fr', where the user was looking."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from mcp import Client

from .server_fixtures import stdio_params, write


@pytest.mark.anyio
async def test_a_folder_in_another_case_is_found_and_a_wrong_one_lists_its_parents_folders(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "fr/Édition et mise en forme/Tableaux.md", "# Tableaux\n\nDes tableaux.\n")
    write(root, "fr/Bases/Vues.md", "# Vues\n\nDes vues.\n")
    write(root, "en/Editing/Tables.md", "# Tables\n\nTables.\n")
    write(root, "Notes/a.md", "# A\n")
    write(root, "notes/b.md", "# B\n")  # two folders differing by case only: neither is guessed
    async with Client(stdio_params(root, tmp_path / "index", "--no-watch", cwd=tmp_path)) as client:

        async def listed(folder: str) -> tuple[str, list[str]]:
            r = await client.call_tool("list_documents", {"folder": folder})
            assert not r.is_error, (folder, r.content)
            return r.structured_content["folder"], [d["id"] for d in r.structured_content["documents"]]

        edition = ("fr/Édition et mise en forme", ["fr/Édition et mise en forme/Tableaux.md"])
        assert await listed("fr/édition et mise en forme/") == edition
        assert await listed(unicodedata.normalize("NFD", "FR/ÉDITION ET MISE EN FORME")) == edition
        assert await listed("EN/editing") == ("en/Editing", ["en/Editing/Tables.md"])
        assert await listed("Notes") == ("Notes", ["Notes/a.md"])  # the exact one when it exists
        found = await client.call_tool("search_documents", {"query": "tableaux", "folder": "FR", "mode": "keyword"})
        assert [d["id"] for d in found.structured_content["results"]] == ["fr/Édition et mise en forme/Tableaux.md"]

        wrong = await client.call_tool("list_documents", {"folder": "fr/Editing"})
        assert wrong.is_error
        assert wrong.content[0].text == (
            "No folder 'fr/Editing'. Folders under 'fr': fr/Bases, fr/Édition et mise en forme."
        )
        deeper = await client.call_tool("list_documents", {"folder": "fr/bases/nope"})
        assert deeper.content[0].text == (
            "No folder 'fr/bases/nope'. 'fr/Bases' has no subfolders: list_documents(folder='fr/Bases')."
        )
        either = await client.call_tool("list_documents", {"folder": "NOTES"})
        assert either.is_error and "No folder 'NOTES'." in either.content[0].text


@pytest.mark.anyio
async def test_a_turkish_folder_with_a_capital_dotted_i_is_found_in_lower_case(tmp_path: Path) -> None:
    """'içerik' for 'İçerik': casefold makes 'İ' an 'i' and a combining dot, so the lower case a user types missed
    it ("No folder 'tr/içerik'. Folders under 'tr': tr/İçerik")."""
    root = tmp_path / "vault"
    write(root, "tr/İçerik/Not.md", "# Not\n\nMetin.\n")
    write(root, "tr/Diğer/B.md", "# B\n")
    async with Client(stdio_params(root, tmp_path / "index", "--no-watch", cwd=tmp_path)) as client:
        for folder in ("tr/içerik", "TR/İÇERİK", "tr/İçerik"):
            r = await client.call_tool("list_documents", {"folder": folder})
            assert not r.is_error, (folder, r.content)
            assert [d["id"] for d in r.structured_content["documents"]] == ["tr/İçerik/Not.md"], folder
