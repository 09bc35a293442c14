"""Reads of an unchanged file do not parse it again; an edit is always seen; the cache stays bounded.
Through the real read tools on a real vault and index."""

from __future__ import annotations

from pathlib import Path

from mcp_docs.library import Library
from mcp_docs.parse_cache import ParseCache
from mcp_docs.tools import DocsTools


def test_second_read_of_an_unchanged_file_does_not_parse_again(library: Library, vault: Path) -> None:
    tools = DocsTools(library)
    first = tools.read_section("guides/setup/install.md", "Installation > Linux")
    assert tools.parse_cache.parses == 1
    assert tools.read_document("guides/setup/install.md", mode="outline").content
    assert tools.read_section("guides/setup/install.md", "macOS").content
    assert tools.parse_cache.parses == 1  # three reads, one parse

    path = vault / "guides/setup/install.md"
    path.write_text(path.read_text("utf-8").replace("## Linux", "## Linux from source"), "utf-8")
    edited = tools.read_section("guides/setup/install.md", "Installation > Linux from source")
    assert tools.parse_cache.parses == 2
    assert edited.heading == "Linux from source" and edited.content != first.content


def test_same_bytes_under_another_name_keep_their_own_title(tmp_path: Path) -> None:
    cache = ParseCache()
    assert cache.parse(b"no heading here\n", "one").parsed.title == "one"
    assert cache.parse(b"no heading here\n", "two").parsed.title == "two"


def test_the_cache_is_bounded_in_entries_and_characters() -> None:
    cache = ParseCache(max_entries=2, max_chars=1000)
    for n in range(3):
        cache.parse(f"# Doc {n}\n".encode(), "d")
    cache.parse(b"# Doc 0\n", "d")  # the oldest was evicted
    assert cache.parses == 4
    cache.parse(b"# Doc 0\n", "d")
    assert cache.parses == 4
    big = b"# Big\n" + b"x" * 2000
    cache.parse(big, "d")
    cache.parse(big, "d")  # larger than the whole cache: parsed each time, never kept
    assert cache.parses == 6
