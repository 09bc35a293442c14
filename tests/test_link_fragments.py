"""`read_section` given a link's fragment, through a real MCP client over stdio: an Obsidian block reference
(`[[Note#^id]]`) and a Hugo explicit heading id (`## Title {#basics}`). Found reviewing the Obsidian help vault
and the OpenTelemetry docs: the outline lists such targets (`en/Plugins/Quick switcher.md#^search-autocomplete-large`),
and read_section answered "No section '^search-autocomplete-large'" for every one, and "No section 'basics'"
for the `#basics` links of the Collector's configuration page."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from .server_fixtures import stdio_params, write

NOTE = """---
aliases: [Switcher]
---
Opening words of the note. ^intro

## Open it

Press the keys.

## Results

> [!info]
> Past ten thousand items the list uses a simpler ranking.
^large-vaults

More text after the callout.

### Details

Nested.

## Configuration structure {#basics}

Four classes of components.

## Extensions {#service-extensions .wide}

Listed by name.
"""


@pytest.mark.anyio
async def test_block_references_and_explicit_heading_ids_name_their_section(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "plugins/Quick switcher.md", NOTE)
    write(root, "index.md", "# Index\n\nSee [[Quick switcher#^large-vaults]].\n")
    async with Client(stdio_params(root, tmp_path / "index", "--no-watch", cwd=tmp_path)) as client:
        outline = await client.call_tool("read_document", {"id": "index.md", "mode": "outline"})
        assert "plugins/Quick switcher.md#^large-vaults" in outline.structured_content["content"]
        # the target as the outline lists it, a wikilink, and the block id as the section
        for arguments in (
            {"id": "plugins/Quick switcher.md#^large-vaults"},
            {"id": "[[Switcher#^large-vaults]]"},
            {"id": "plugins/Quick switcher.md", "section": "^LARGE-VAULTS"},
        ):
            r = await client.call_tool("read_section", arguments)
            assert not r.is_error, (arguments, r.content)
            got = r.structured_content
            assert got["heading"] == "Results" and got["line_start"] == 10, arguments
            assert "simpler ranking" in got["content"] and "Nested." in got["content"]
            assert "line 14" in got["note"]
        top = await client.call_tool("read_section", {"id": "plugins/Quick switcher.md#^intro"})
        assert top.structured_content["heading"] == "(top)" or top.structured_content["level"] == 0
        for arguments in (
            {"id": "plugins/Quick switcher.md#basics"},
            {"id": "plugins/Quick switcher.md", "section": "#service-extensions"},
            {"id": "plugins/Quick switcher.md", "section": "configuration-structure"},
        ):
            r = await client.call_tool("read_section", arguments)
            assert not r.is_error, (arguments, r.content)
            assert r.structured_content["heading"] in ("Configuration structure", "Extensions"), arguments
        assert (await client.call_tool("read_section", {"id": "plugins/Quick switcher.md#basics"})).structured_content[
            "heading"
        ] == "Configuration structure"
        missing = await client.call_tool("read_section", {"id": "plugins/Quick switcher.md#^nowhere"})
        assert missing.is_error and "'Results'" in missing.content[0].text  # the headings, to pick from
