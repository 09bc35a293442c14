"""Aliases holding a '/', through a real MCP client over stdio. Obsidian Publish keeps a note's old paths as
aliases and redirects them (the Obsidian help vault: 'How to/Add aliases to note' on en/.../Aliases.md); found by
the outside review: such an alias, passed as an id or written as [[How to/Internal link]], resolved to nothing,
because a target with a '/' was only ever looked up as a path."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from .server_fixtures import stdio_params, write

NOTE = "en/Linking notes and files/Internal links.md"


@pytest.mark.anyio
async def test_an_alias_with_a_slash_resolves_when_no_path_goes_by_that_name(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(
        root,
        NOTE,
        "---\naliases:\n  - How to/Internal link\n  - Old/Taken\n---\n# Internal links\n\n## Link text\n\nPipes.\n",
    )
    write(root, "en/Home.md", "# Home\n\nSee [[How to/Internal link#Link text]].\n")
    write(root, "Old/Taken.md", "# Taken\n\nA real path wins over an alias.\n")
    async with Client(stdio_params(root, tmp_path / "index", "--no-watch", cwd=tmp_path)) as client:
        for id in ("How to/Internal link", "how to/internal LINK", "[[How to/Internal link]]"):
            r = await client.call_tool("read_document", {"id": id, "mode": "outline"})
            assert not r.is_error, (id, r.content)
            assert r.structured_content["id"] == NOTE
        section = await client.call_tool("read_section", {"id": "[[How to/Internal link#Link text]]"})
        assert not section.is_error, section.content
        assert (section.structured_content["id"], section.structured_content["content"]) == (
            NOTE,
            "## Link text\n\nPipes.",
        )
        # the link written in a note resolves at index time: backlinks find it, the outline lists its id
        linked = await client.call_tool("list_documents", {"linked_to": NOTE})
        assert [d["id"] for d in linked.structured_content["documents"]] == ["en/Home.md"]
        home = await client.call_tool("read_document", {"id": "en/Home.md", "mode": "outline"})
        assert f"{NOTE}#Link text" in home.structured_content["content"]
        taken = await client.call_tool("read_document", {"id": "Old/Taken"})
        assert taken.structured_content["id"] == "Old/Taken.md"  # a path first, as for any target
        missing = await client.call_tool("read_document", {"id": "How to/Nothing"})
        assert missing.is_error
