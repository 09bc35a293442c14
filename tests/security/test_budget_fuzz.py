"""Property: no reply outgrows its budget, whatever the vault holds.

Hypothesis builds hostile vaults (megabyte headings, thousands of headings, huge titles, tags and front
matter, long file and folder names, hundreds of folders) and calls all four tools and their error paths
through a real in-process MCP client. Each reply's text, and its structured content serialized to JSON,
must stay within the budget asked for (`max_chars`, or the fixed list/error budgets) plus a constant:
the one field never clipped is the document id, which the OS bounds.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import anyio
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp import Client

from mcp_docs.errors import ERROR_CHARS
from mcp_docs.library import Library
from mcp_docs.mcp.server import build_server
from mcp_docs.settings import Settings
from mcp_docs.tools import (
    DEFAULT_SEARCH_CHARS,
    LIST_DOCUMENTS_CHARS,
    LIST_FOLDERS_CHARS,
    MAX_MAX_CHARS,
    MIN_MAX_CHARS,
    MIN_SEARCH_CHARS,
)

from .common import assert_clean

FIXED_SLACK = 3000  # titles, headings, paths and notes as clipped by the models, JSON keys, the text's framing


@st.composite
def vaults(draw: Any) -> dict[str, Any]:
    return {
        "heading": draw(st.sampled_from([5, 300, 20_000, 1_000_000])),
        "children": draw(st.integers(0, 3)),  # each repeats the heading in its path
        "many": draw(st.sampled_from([0, 60, 2000])),
        "pad": draw(st.sampled_from([0, 200])),
        "title": draw(st.sampled_from([5, 300, 200_000])),
        "tags": draw(st.sampled_from([0, 5, 400])),
        "tag_len": draw(st.sampled_from([3, 100, 3000])),
        "summary": draw(st.sampled_from([0, 500, 100_000])),
        "depth": draw(st.integers(0, 8)),
        "part": draw(st.sampled_from([5, 120, 250])),
        "name": draw(st.sampled_from([5, 200, 250])),
        "folders": draw(st.sampled_from([0, 30, 300])),
        "unicode": draw(st.booleans()),
    }


def write_vault(root: Path, spec: dict[str, Any]) -> tuple[str, str, str]:
    letter = "é" if spec["unicode"] else "d"  # two bytes each: names near 255 bytes, not characters
    part = (letter * spec["part"])[: 250 // (2 if spec["unicode"] else 1)]
    deep_dir = "/".join(f"{i}{part}" for i in range(spec["depth"]))
    name = "n" * spec["name"] + ".md"
    deep_id = f"{deep_dir}/{name}" if deep_dir else name
    (root / deep_id).parent.mkdir(parents=True, exist_ok=True)
    (root / deep_id).write_text("# Deep alpha\n\nalpha text\n\n## Item one\n\nalpha\n")
    tags = ", ".join(f"t{i}{'x' * spec['tag_len']}" for i in range(spec["tags"]))
    front = f"---\ntitle: {'T' * spec['title']}\ntags: [{tags}]\nsummary: {'s ' * (spec['summary'] // 2)}\n---\n"
    heading = ("alpha " * (spec["heading"] // 6 + 1))[: spec["heading"]]
    body = [front, f"# {heading}\n\nalpha intro\n\n"]
    body += [f"## Child {j}\n\nalpha child\n\n" for j in range(spec["children"])]
    body.append("# Many\n\n")
    body += [f"## Item {i} {'p' * spec['pad']}\n\nalpha {i}\n\n" for i in range(spec["many"])]
    (root / "hostile.md").write_text("".join(body))
    for i in range(spec["folders"]):
        (root / f"f{i:03d}{part}").mkdir(exist_ok=True)
        (root / f"f{i:03d}{part}" / f"{i}.md").write_text(f"# F{i}\n\nalpha folder\n")
    return "hostile.md", deep_id, deep_dir


def json_size(value: Any) -> int:
    """Characters of the JSON a client receives, counting each character of a string once.

    Escapes (a newline is two characters in JSON) are a property of the encoding, not of the budget,
    which counts text characters everywhere.
    """
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, dict):
        return 1 + sum(json_size(k) + json_size(v) + 2 for k, v in value.items())
    if isinstance(value, list):
        return 1 + sum(json_size(v) + 1 for v in value)
    return len(json.dumps(value))


def clamp(value: int, low: int) -> int:
    return min(max(value, low), MAX_MAX_CHARS)


async def exercise(root: Path, index: Path, spec: dict[str, Any], max_chars: int) -> int:
    main_id, deep_id, deep_dir = write_vault(root, spec)
    library = Library(Settings.load(root, index, embeddings="none", environ={}))
    try:
        library.sync()
        slack = FIXED_SLACK + 2 * len(deep_id.encode())  # an id can be shown twice (text and header), never clipped
        read_budget = clamp(max_chars, MIN_MAX_CHARS)
        search_budget = clamp(max_chars, MIN_SEARCH_CHARS)
        list_budget = LIST_DOCUMENTS_CHARS + LIST_FOLDERS_CHARS
        async with Client(build_server(library), raise_exceptions=True) as client:
            calls: list[tuple[str, dict[str, Any], int]] = [
                ("search_documents", {"query": "alpha item", "max_results": 20, "max_chars": max_chars}, search_budget),
                ("search_documents", {"query": "alpha", "folder": deep_dir or "nosuch"}, DEFAULT_SEARCH_CHARS),
                ("list_documents", {"limit": 200}, list_budget),
                ("list_documents", {"folder": deep_dir or "", "limit": 200}, list_budget),
                ("list_documents", {"folder": "no-such-folder"}, ERROR_CHARS),
                ("list_documents", {"folder": "x" * 300}, ERROR_CHARS),
                ("read_document", {"id": "n" * 240 + "/missing.md"}, ERROR_CHARS),
                ("read_document", {"id": deep_id[:-4] + ".txt"}, ERROR_CHARS),
                ("read_section", {"id": main_id, "section": "nomatch", "max_chars": max_chars}, read_budget),
                ("read_section", {"id": main_id, "section": "alpha", "max_chars": max_chars}, read_budget),
                ("read_section", {"id": main_id, "section": "Item", "max_chars": max_chars}, read_budget),
                ("read_section", {"id": deep_id, "section": "nomatch", "max_chars": max_chars}, read_budget),
                ("read_section", {"id": deep_id, "section": "Item one", "max_chars": max_chars}, read_budget),
            ]
            for doc in (main_id, deep_id):
                for mode in ("full", "outline", "summary"):
                    calls.append(("read_document", {"id": doc, "mode": mode, "max_chars": max_chars}, read_budget))
            if deep_dir:
                calls.append(("read_document", {"id": deep_dir}, ERROR_CHARS))
            done = 0
            for name, args, budget in calls:
                r = await client.call_tool(name, args)
                assert_clean(r)
                text = "".join(c.text for c in r.content if c.type == "text")
                limit = ERROR_CHARS if r.is_error else budget + slack
                assert len(text) <= limit, (name, str(args)[:200], len(text), text[:300])
                if r.structured_content is not None:
                    size = json_size(r.structured_content)
                    assert size <= limit, (name, str(args)[:200], size)
                    if name == "search_documents":  # search fills its budget with the real JSON
                        real = len(json.dumps(r.structured_content, ensure_ascii=False, separators=(",", ":")))
                        assert real <= budget + 200, (real, budget)
                    for hit in r.structured_content.get("results", [])[:2]:  # what a result shows can be read back
                        section = hit["sections"][0]["heading_path"] if hit["sections"] else None
                        if section:
                            back = await client.call_tool("read_section", {"id": hit["id"], "section": section})
                            assert not back.is_error, back.content[0].text[:300]
                done += 1
            return done
    finally:
        library.close()


@settings(max_examples=8, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=vaults(), max_chars=st.sampled_from([1, 200, 1000, 8000, 50_000, 10**9]))
@example(  # the reported case: a 1 MB heading over a few sections, a read_section miss asked for 200 characters
    spec={
        "heading": 1_000_000,
        "children": 3,
        "many": 60,
        "pad": 200,
        "title": 200_000,
        "tags": 400,
        "tag_len": 3000,
        "summary": 100_000,
        "depth": 8,
        "part": 250,
        "name": 250,
        "folders": 300,
        "unicode": True,
    },
    max_chars=200,
)
def test_no_reply_outgrows_its_budget_on_hostile_vaults(spec: dict[str, Any], max_chars: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        root.mkdir()
        done = anyio.run(exercise, root, Path(tmp) / "index", spec, max_chars)
        assert done >= 19
