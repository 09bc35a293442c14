"""A note saved by an older Windows editor (Windows-1252, not UTF-8), through a real MCP client over stdio and
`mcp-docs status`. Found reviewing a vault of odd files: its 'Crème brûlée' was decoded 'Cr\ufffdme br\ufffdl\ufffde', so
no search found the words and its title was shown broken; a file that mixes UTF-8 with a stray byte still gets
replacement characters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from .server_fixtures import stdio_params, write
from .test_cli import run

WINDOWS = "# Café notes\n\nCrème brûlée, “quoted” — 20 €.\n"


@pytest.mark.anyio
async def test_a_windows_1252_note_is_read_searched_and_warned_about(tmp_path: Path) -> None:
    root, index = tmp_path / "vault", tmp_path / "index"
    write(root, "old/windows.md", WINDOWS.encode("cp1252"))
    write(root, "mixed.md", "# Mixed\n\nrésumé in UTF-8\n".encode() + b"then a stray \xe9 byte\n")
    async with Client(stdio_params(root, index, "--no-watch", cwd=tmp_path)) as client:
        found = await client.call_tool("search_documents", {"query": "brulee", "mode": "keyword"})
        results = found.structured_content["results"]
        assert [r["id"] for r in results] == ["old/windows.md"] and results[0]["title"] == "Café notes"
        read = await client.call_tool("read_document", {"id": "old/windows.md"})
        assert read.structured_content["content"] == WINDOWS
        mixed = await client.call_tool("read_document", {"id": "mixed.md"})
        assert "résumé in UTF-8\nthen a stray \ufffd byte" in mixed.structured_content["content"]
    out = run("status", "--root", str(root), "--index-dir", str(index), "--json")
    warnings = {w["path"]: w["warnings"] for w in json.loads(out.stdout)["warnings"]}
    assert warnings["old/windows.md"] == [
        "invalid UTF-8: read as Windows-1252 (no UTF-8 letter in it, every byte a Windows-1252 one)"
    ]
    assert warnings["mixed.md"] == ["invalid UTF-8: decoded with replacement characters"]
