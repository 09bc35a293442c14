"""The server instructions say what an id is and which link forms work in its place; each form they name is
tried here through a real MCP client over stdio. Found by the outside review: the instructions said 'a relative
path works as an id', but an agent has no linking note to read '../setup.md' from: it was refused as leaving the
root, or named another file, with nothing saying what to pass instead."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from .server_fixtures import stdio_params, write

ID_SENTENCE = (
    "An id is a document's path from the root, as results give it ('guides/setup.md'). Wherever an id is taken, "
    "a link read from the root works too: [[Note]] or [[Note#Heading]], a file name without folder or extension, "
    "an alias, a path from the root with or without the extension. A relative link seen in a document "
    "('../setup.md') is relative to that document, not the root: pass the id its outline lists instead."
)


@pytest.mark.anyio
async def test_every_id_form_the_instructions_name_works_and_a_relative_link_says_what_to_pass(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "guides/setup.md", "---\naliases: [Install guide]\n---\n# Setup\n\n## Linux\n\napt install it\n")
    write(root, "guides/intro/start.md", "# Start\n\nFirst read [the setup](../setup.md#linux).\n")
    async with Client(stdio_params(root, tmp_path / "index", "--no-watch", cwd=tmp_path)) as client:
        assert client.instructions is not None and ID_SENTENCE in client.instructions
        assert "a relative path" not in client.instructions  # the promise that was not true
        for form in ("guides/setup.md", "[[setup]]", "[[Setup#Linux]]", "setup", "Install guide", "guides/setup"):
            r = await client.call_tool("read_document", {"id": form, "mode": "outline"})
            assert not r.is_error, (form, r.content)
            assert r.structured_content["id"] == "guides/setup.md", form
            section = await client.call_tool("read_section", {"id": form, "section": "Linux"})
            assert section.structured_content["content"].endswith("apt install it"), form
            linked = await client.call_tool("list_documents", {"linked_to": form})
            assert [d["id"] for d in linked.structured_content["documents"]] == ["guides/intro/start.md"], form
        # the relative link as written in start.md: refused, and the answer says where its id is
        refused = await client.call_tool("read_document", {"id": "../setup.md#linux"})
        assert refused.is_error
        assert "that document's outline (read_document(id, mode='outline'), 'Links to') lists the id" in (
            refused.content[0].text
        )
        outline = await client.call_tool("read_document", {"id": "guides/intro/start.md", "mode": "outline"})
        assert "Links to (1): guides/setup.md#linux." in outline.structured_content["content"]
        listed = await client.call_tool("read_section", {"id": "guides/setup.md#linux"})
        assert listed.structured_content["content"].endswith("apt install it")
