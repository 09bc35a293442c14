"""A document's resource URI (`docs://...`, as resources/list names it) given as the id of a tool, through a real
MCP client over stdio. Found reviewing with an agent that had listed the resources: read_document("docs://en/Home.md")
answered "No document 'docs://en/Home.md'"."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from .server_fixtures import stdio_params, write


@pytest.mark.anyio
async def test_every_listed_resource_uri_works_as_an_id(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "Release notes/v1 #2.md", "# v1\n\nFirst [[50%]].\n")
    write(root, "50%.md", "# Half\n\n## Part\n\nHalf of it.\n")
    write(root, "en/Home.md", "# Home\n\nSee [[50%]].\n")
    async with Client(stdio_params(root, tmp_path / "index", "--no-watch", cwd=tmp_path)) as client:
        uris = sorted(str(r.uri) for r in (await client.list_resources()).resources)
        assert uris == ["docs://50%25.md", "docs://Release%20notes/v1%20%232.md", "docs://en/Home.md"]
        for uri in uris:
            r = await client.call_tool("read_document", {"id": uri})
            assert not r.is_error, (uri, r.content)
            assert r.structured_content["id"] == uri.removeprefix("docs://").replace("%20", " ").replace(
                "%23", "#"
            ).replace("%25", "%")
        section = await client.call_tool("read_section", {"id": "docs://50%25.md", "section": "Part"})
        assert section.structured_content["content"].endswith("Half of it.")
        linked = await client.call_tool("list_documents", {"linked_to": "docs://50%25.md"})
        assert [d["id"] for d in linked.structured_content["documents"]] == ["Release notes/v1 #2.md", "en/Home.md"]
