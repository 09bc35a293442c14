"""Heading anchors as GitHub and Hugo write them, through a real MCP client over stdio: a repeated heading's
second anchor ('#notes-1') and a heading that starts with an emoji ('#-quick-start' on GitHub, '#quick-start' on
Hugo). Found by the review pass on real vaults: both answered 'No section', though the anchor of a plain heading
('#what-why') worked."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from .server_fixtures import stdio_params, write

GUIDE = (
    "# Guide\n\n## 🚀 Quick start\n\nGo fast.\n\n## Notes\n\nFirst notes.\n\n## Notes\n\nSecond notes.\n\n"
    "## What? Why!\n\nPunct.\n\n## ⚠️ Warning {#careful}\n\nCareful.\n"
)


@pytest.mark.anyio
async def test_anchors_of_repeated_and_emoji_headings_name_their_sections(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "guide.md", GUIDE)
    async with Client(stdio_params(root, tmp_path / "index", "--no-watch", cwd=tmp_path)) as client:

        async def body(doc_id: str) -> str:
            r = await client.call_tool("read_section", {"id": doc_id, "include_subsections": False})
            assert not r.is_error, (doc_id, r.content)
            return str(r.structured_content["content"]).split("\n\n", 1)[1]

        assert await body("guide.md#notes") == "First notes."
        assert await body("guide.md#notes-1") == "Second notes."
        assert await body("guide.md#quick-start") == "Go fast."
        assert await body("guide.md#-quick-start") == "Go fast."
        assert await body("guide.md#what-why") == "Punct."
        assert await body("guide.md#careful") == "Careful."  # an explicit id, as before
        missing = await client.call_tool("read_section", {"id": "guide.md#notes-2"})
        assert missing.is_error and "No section 'notes-2'" in missing.content[0].text
