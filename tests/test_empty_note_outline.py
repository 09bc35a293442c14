"""An empty note's outline and summary, through a real MCP client over stdio. Found by the outside review: the
outline of an empty file ended with 'Sections (lines, ~tokens):' and nothing after it, which an agent cannot tell
from a reply cut short; now the text and the structured note say that the note has no sections."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from .server_fixtures import stdio_params, write


@pytest.mark.anyio
async def test_an_empty_note_says_it_has_no_sections_in_text_and_structured_output(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "empty.md", "")
    write(root, "blank.md", "\n\n   \n")
    write(root, "full.md", "# Full\n\nSome text.\n")
    async with Client(stdio_params(root, tmp_path / "index", "--no-watch", cwd=tmp_path)) as client:
        for doc_id, lines in (("empty.md", "1 line"), ("blank.md", "3 lines")):
            for mode in ("outline", "summary"):
                r = await client.call_tool("read_document", {"id": doc_id, "mode": mode})
                assert not r.is_error, r.content
                said = f"{doc_id.removesuffix('.md')} — {lines}. No sections: the note holds no text.\n"
                assert r.structured_content["content"] == said, (mode, r.structured_content)
                assert (
                    r.structured_content["note"] == "The note has no sections: read_section has nothing to read in it."
                )
                assert "Sections (lines" not in r.content[0].text
                assert "No sections: the note holds no text." in r.content[0].text
        full = await client.call_tool("read_document", {"id": "full.md", "mode": "outline"})
        assert full.structured_content["content"].startswith("Full — 3 lines, ~")  # a note with text: as before
        assert full.structured_content["note"] is None
