"""A name several translations share, passed as an id, through a real MCP client over stdio. Found reviewing the
tldr pages: 'tar' names 16 pages and the error listed them in id order, the English 'pages/common/tar.md' last
('/' sorts after '.'), where a long list is cut; the collection's main language now comes first."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from .server_fixtures import stdio_params, write

ENGLISH = "# tar\n\n> Archiving utility that packs many files into one archive.\n\n- Create an archive from files:\n\n`tar cf target.tar file1 file2`\n"
FRENCH = "# tar\n\n> Utilitaire d'archivage qui regroupe plusieurs fichiers dans une seule archive.\n\n- Créer une archive à partir de fichiers :\n\n`tar cf cible.tar fichier1 fichier2`\n"
GERMAN = "# tar\n\n> Archivierungsprogramm, das viele Dateien in einem einzigen Archiv zusammenfasst.\n\n- Erstelle ein Archiv aus Dateien:\n\n`tar cf ziel.tar datei1 datei2`\n"


@pytest.mark.anyio
async def test_the_main_languages_page_is_listed_first_among_the_candidates(tmp_path: Path) -> None:
    root = tmp_path / "tldr"
    for name in ("ls", "cp", "mv"):  # English is the main language of the collection
        write(root, f"pages/common/{name}.md", f"# {name}\n\n> Lists, copies or moves the files in a directory.\n")
    write(root, "pages/common/tar.md", ENGLISH)
    write(root, "pages.de/common/tar.md", GERMAN)
    write(root, "pages.fr/common/tar.md", FRENCH)
    async with Client(stdio_params(root, tmp_path / "index", "--no-watch", cwd=tmp_path)) as client:
        r = await client.call_tool("read_document", {"id": "tar"})
        assert r.is_error
        assert r.content[0].text == (
            "'tar' names 3 documents: pass one of these ids: "
            "pages/common/tar.md, pages.de/common/tar.md, pages.fr/common/tar.md."
        )
