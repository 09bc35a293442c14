"""Search snippets in scripts whose letters carry combining vowel signs (Hindi, Bengali, Thai), through a real MCP
client over stdio. Found reviewing the tldr pages and the Obsidian help vault: the snippet's query words were cut
at every vowel sign, so the bold marks landed on single consonants inside words ('**स**ं**ग**्रहकर्ता',
'สร้**างโน**้**ตใหม**่'), text an agent then quotes back broken."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from .server_fixtures import stdio_params, write


@pytest.mark.anyio
async def test_snippets_bold_whole_words_in_hindi_and_thai(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "hi/7z.md", "---\nlang: hi\n---\n# 7z\n\nउच्च संपीड़न अनुपात के साथ फ़ाइल संग्रहकर्ता।\n")
    write(root, "th/notes.md", "---\nlang: th\n---\n# โน้ต\n\nในการสร้างโน้ตใหม่ในตำแหน่งเริ่มต้น คลิกปุ่ม\n")
    async with Client(stdio_params(root, tmp_path / "index", "--no-watch", cwd=tmp_path)) as client:
        hindi = await client.call_tool("search_documents", {"query": "फ़ाइल संग्रहकर्ता", "mode": "keyword"})
        snippet = hindi.structured_content["results"][0]["sections"][0]["snippet"]
        assert "**फ़ाइल** **संग्रहकर्ता**" in snippet, snippet
        thai = await client.call_tool("search_documents", {"query": "สร้างโน้ตใหม่", "mode": "keyword"})
        snippet = thai.structured_content["results"][0]["sections"][0]["snippet"]
        assert "ในการ**สร้างโน้ตใหม่**ในตำแหน่ง" in snippet, snippet
        # each bold run starts a word and ends at its end: no vowel sign or tone mark outside the bold
        for text in (hindi.content[0].text, thai.content[0].text):  # type: ignore[union-attr]
            assert "**ิ" not in text and "**्" not in text and "**ं" not in text and "**้" not in text
