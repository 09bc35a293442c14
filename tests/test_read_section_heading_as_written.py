"""A heading given to read_section as the file writes it, through a real MCP client over stdio. Found reviewing the
Obsidian help vault (en/Bases/Functions.md: '### `date()`' under two parents): 'No section' for '`date()`' or
'### `format()`', copied from the note's text, because headings are kept as plain text ('date()')."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from .server_fixtures import stdio_params, write

NOTE = (
    "# Functions\n\n## Global\n\n### `date()`\n\nParses a date.\n\n"
    "## Date type\n\n### `date()`\n\nDrops the time.\n\n### `format()`\n\nFormats it.\n\n"
    "## **Bold** setup\n\nSet up boldly.\n"
)


@pytest.mark.anyio
async def test_a_heading_copied_with_its_markdown_finds_its_section(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "Functions.md", NOTE)
    async with Client(stdio_params(root, tmp_path / "index", "--no-watch", cwd=tmp_path)) as client:

        async def read(section: str) -> str:
            r = await client.call_tool("read_section", {"id": "Functions.md", "section": section})
            assert not r.is_error, (section, r.content)
            return str(r.structured_content["content"])

        assert await read("`format()`") == "### `format()`\n\nFormats it."
        assert await read("### `format()`") == "### `format()`\n\nFormats it."
        assert await read("Date type > `date()`") == "### `date()`\n\nDrops the time."
        assert await read("## Date type > ### `date()`") == "### `date()`\n\nDrops the time."
        assert await read("**Bold** setup") == "## **Bold** setup\n\nSet up boldly."
        twice = await client.call_tool("read_section", {"id": "Functions.md", "section": "`date()`"})
        assert twice.is_error  # two headings: both paths are named, as for 'date()'
        assert "'Functions > Global > date()'; 'Functions > Date type > date()'" in twice.content[0].text
        missing = await client.call_tool("read_section", {"id": "Functions.md", "section": "`parse()`"})
        assert missing.is_error and "No section '`parse()`'" in missing.content[0].text  # named as given
