"""`read_section` with a heading path of no heading (`>`, ` > > `), through a real MCP client over stdio. Found
reviewing with edge arguments: it answered "Section ' > ' is ambiguous ... pass one of these heading paths" and
listed every heading of the note, where the model had given no heading at all."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from .server_fixtures import stdio_params, write


@pytest.mark.anyio
async def test_a_path_of_no_heading_is_an_empty_section(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "setup.md", "# Setup\n\n## Linux\n\nUse apt.\n")
    async with Client(stdio_params(root, tmp_path / "index", "--no-watch", cwd=tmp_path)) as client:
        for section in (">", " > > ", ">>"):
            r = await client.call_tool("read_section", {"id": "setup.md", "section": section})
            assert r.is_error and r.content[0].text.startswith("The section is empty"), (section, r.content)
        r = await client.call_tool("read_section", {"id": "setup.md", "section": "Setup > Linux"})
        assert r.structured_content["content"].endswith("Use apt.")
