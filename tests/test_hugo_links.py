"""Links as a Hugo site with a folder per language writes them, through `mcp-docs status --json` and a real MCP
client over stdio. Found reviewing the OpenTelemetry docs tree (en + fr): `status` listed 1,778 broken links,
most of them to pages that exist (`/docs/collector/` in `en/...` is `en/docs/collector/_index.md`; `../annotations`
in `agent/api.md` is `agent/annotations.md`, read from the page's URL `agent/api/`), and outlines marked them
unresolved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from .server_fixtures import stdio_params, write
from .test_cli import run


def _site(root: Path) -> None:
    for lang in ("en", "fr"):
        write(root, f"{lang}/docs/collector/_index.md", "# Collector\n\nReceives telemetry.\n")
        write(root, f"{lang}/docs/concepts/traces.md", "# Traces\n\n## Spans\n\nA span is one operation.\n")
    write(root, "en/docs/agent/annotations.md", "# Annotations\n\nAnnotate methods.\n")
    write(
        root,
        "en/docs/agent/api.md",
        "# API\n\nSee [the collector](/docs/collector/), [spans](/docs/concepts/traces/#spans), "
        "[annotations](../annotations) and [a missing page](/docs/nowhere/).\n",
    )
    write(root, "fr/docs/guide.md", "# Guide\n\nVoir [le collecteur](/docs/collector/).\n")
    write(root, "docs/index.md", "# Top\n\nAn index note's URL is its folder: [x](../annotations) leads nowhere.\n")


def test_status_lists_only_the_links_hugo_cannot_follow(tmp_path: Path) -> None:
    root, index = tmp_path / "site", tmp_path / "index"
    _site(root)
    assert run("index", "--root", str(root), "--index-dir", str(index)).returncode == 0
    out = run("status", "--root", str(root), "--index-dir", str(index), "--json")
    assert out.returncode == 0, out.stderr
    broken = {(b["id"], b["target"]) for b in json.loads(out.stdout)["broken_links"]}
    assert broken == {("en/docs/agent/api.md", "/docs/nowhere/"), ("docs/index.md", "../annotations")}


@pytest.mark.anyio
async def test_outline_and_backlinks_follow_site_absolute_and_page_relative_links(tmp_path: Path) -> None:
    root = tmp_path / "site"
    _site(root)
    async with Client(stdio_params(root, tmp_path / "index", "--no-watch", cwd=tmp_path)) as client:
        r = await client.call_tool("read_document", {"id": "en/docs/agent/api.md", "mode": "outline"})
        outline = r.structured_content["content"]
        assert "en/docs/collector/_index.md" in outline  # the note's own language folder, not fr/
        assert "en/docs/concepts/traces.md#spans" in outline
        assert "en/docs/agent/annotations.md" in outline
        assert "'/docs/nowhere/' (unresolved)" in outline
        r = await client.call_tool("list_documents", {"linked_to": "fr/docs/collector/_index.md"})
        assert [d["id"] for d in r.structured_content["documents"]] == ["fr/docs/guide.md"]
        r = await client.call_tool("list_documents", {"linked_to": "en/docs/collector/_index.md"})
        assert [d["id"] for d in r.structured_content["documents"]] == ["en/docs/agent/api.md"]
