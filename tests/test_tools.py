"""The four tools as plain Python over a real library (no MCP): happy paths, budgets, errors."""

from __future__ import annotations

import re
import time
import unicodedata

import pytest

from mcp_docs.errors import ToolInputError
from mcp_docs.render import render_list, render_read_document, render_read_section, render_search
from mcp_docs.search.request import MAX_SEARCH_RESULTS
from mcp_docs.tokens import estimate_tokens
from mcp_docs.tools import MAX_MAX_CHARS, DocsTools

from .server_fixtures import vault, write  # noqa: F401


@pytest.fixture
def tools(library) -> DocsTools:
    return DocsTools(library)


# -- search_documents ------------------------------------------------------------------------------


def test_search_returns_ranked_documents_with_sections(tools: DocsTools) -> None:
    result = tools.search_documents("swappiness memory")
    assert result.results and result.results[0].id == "guides/install.md"
    section = result.results[0].sections[0]
    assert section.heading_path.startswith("Installing the collector > Linux")
    assert section.line_start <= section.line_end
    assert "**" in section.snippet
    assert result.mode_used == "keyword" and result.note  # hybrid fell back, and says so
    assert result.index.documents == 16
    assert result.estimated_tokens > 0


def test_default_search_text_is_compact(tools: DocsTools) -> None:
    text = render_search(tools.search_documents("the collector service configuration chapter note"))
    assert len(text) < 4000
    assert "read_section" in text


def test_search_filters_folder_and_tags(tools: DocsTools) -> None:
    r = tools.search_documents("otlp endpoint", folder="guides")
    assert r.results and all(d.id.startswith("guides/") for d in r.results)
    r = tools.search_documents("snapshots", tags=["backup"])
    assert [d.id for d in r.results] == ["notes/backups.md"]
    r = tools.search_documents("snapshots", tags=["guide"])
    assert r.results == [] and "No match" in (r.note or "")


def test_search_bounds_and_errors(tools: DocsTools) -> None:
    r = tools.search_documents("note gardening", max_results=10_000)
    assert len(r.results) <= MAX_SEARCH_RESULTS and f"used {MAX_SEARCH_RESULTS}" in (r.note or "")
    r = tools.search_documents("note", max_results=0)
    assert len(r.results) == 1 and "used 1" in (r.note or "")
    started = time.perf_counter()
    r = tools.search_documents("collector " * 1200)  # ~12 KB
    assert time.perf_counter() - started < 2
    assert len(r.query) <= 1000 and "cut" in (r.note or "")
    with pytest.raises(ToolInputError, match="empty"):
        tools.search_documents("   ")
    with pytest.raises(ToolInputError, match="mode"):
        tools.search_documents("x", mode="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(ToolInputError, match="Refused"):
        tools.search_documents("x", folder="../..")
    with pytest.raises(ToolInputError, match="No folder"):
        tools.search_documents("x", folder="nowhere")


def test_search_never_shows_a_deleted_file(tools: DocsTools, vault) -> None:
    (vault / "notes/backups.md").unlink()  # the index has not synced yet
    r = tools.search_documents("restic snapshots")
    assert all(d.id != "notes/backups.md" for d in r.results)


# -- list_documents --------------------------------------------------------------------------------


def test_list_paginates_with_an_opaque_cursor(tools: DocsTools) -> None:
    first = tools.list_documents(folder="misc", limit=5)
    assert first.total == 12 and len(first.documents) == 5 and first.next_cursor
    seen = [d.id for d in first.documents]
    cursor = first.next_cursor
    while cursor:
        page = tools.list_documents(folder="misc", limit=5, cursor=cursor)
        seen += [d.id for d in page.documents]
        cursor = page.next_cursor
    assert seen == [f"misc/note{i:02d}.md" for i in range(12)]
    entry = first.documents[0]
    assert (
        entry.title == "Note 0" and entry.sections == 1 and entry.size_bytes > 0 and entry.modified.endswith("+00:00")
    )
    assert "More:" in render_list(first)


def test_list_root_shows_folders_and_bounds(tools: DocsTools) -> None:
    r = tools.list_documents()
    assert {f.path for f in r.folders} == {"guides", "misc", "notes"}
    assert r.total == 16 and r.estimated_tokens > 0
    big = tools.list_documents(limit=10**9)
    assert len(big.documents) == 16 and "used 200" in (big.note or "")
    tagged = tools.list_documents(tag="#Backup")
    assert [d.id for d in tagged.documents] == ["notes/backups.md"]


def test_list_errors(tools: DocsTools) -> None:
    with pytest.raises(ToolInputError, match="Invalid cursor"):
        tools.list_documents(cursor="garbage!!")
    cursor = tools.list_documents(folder="misc", limit=2).next_cursor
    with pytest.raises(ToolInputError, match="another listing"):
        tools.list_documents(folder="guides", cursor=cursor)
    with pytest.raises(ToolInputError, match="Refused"):
        tools.list_documents(folder="../vault_evil")
    with pytest.raises(ToolInputError, match="Top-level folders"):
        tools.list_documents(folder="nope")


# -- read_document ----------------------------------------------------------------------------------


def test_read_full_with_continuation_at_line_boundaries(tools: DocsTools, vault) -> None:
    whole = (vault / "notes/long.md").read_text()
    parts, offset = [], 0
    while True:
        r = tools.read_document("notes/long.md", max_chars=1000, offset=offset)
        assert len(r.content) <= 1000 and r.total_chars == len(whole)
        parts.append(r.content)
        assert r.estimated_tokens == estimate_tokens(r.content)
        if not r.truncated:
            assert r.next_offset is None
            break
        assert r.content.endswith("\n") and r.next_offset == offset + len(r.content)
        offset = r.next_offset
    assert "".join(parts) == whole
    text = render_read_document(tools.read_document("notes/long.md", max_chars=1000))
    assert "offset=" in text


def test_outline_of_a_500_line_document_is_small(tools: DocsTools) -> None:
    r = tools.read_document("notes/long.md", mode="outline")
    assert r.total_chars > 0 and not r.truncated
    assert r.estimated_tokens < 600
    assert "### Chapter 1 topic (L" in r.content and "~" in r.content
    assert "500" in r.content.splitlines()[0] or "lines" in r.content.splitlines()[0]


def test_summary_mode(tools: DocsTools) -> None:
    r = tools.read_document("guides/install.md", mode="summary")
    assert "## Linux" in r.content and "Download the package" in r.content
    assert "systemctl" not in r.content  # code is not a summary


def test_reads_come_from_disk(tools: DocsTools, vault) -> None:
    write(vault, "notes/backups.md", "# Backups\n\nNow with borg.\n")
    assert "borg" in tools.read_document("notes/backups.md").content
    (vault / "notes/backups.md").unlink()
    with pytest.raises(ToolInputError, match="No document"):
        tools.read_document("notes/backups.md")
    write(vault, "notes/fresh.md", "# Fresh\n\nNot indexed yet.\n")
    assert "Not indexed yet" in tools.read_document("notes/fresh.md").content


@pytest.mark.parametrize(
    "bad",
    [
        "../../etc/passwd",
        "/etc/passwd",
        "..\\..\\etc\\passwd",
        "%2e%2e/%2e%2e/etc/passwd",
        "guides/\x00.md",
        "../vault_evil/leak.md",
        "C:\\Windows\\win.ini",
    ],
)
def test_paths_outside_the_root_are_refused(tools: DocsTools, bad: str) -> None:
    with pytest.raises(ToolInputError) as exc:
        tools.read_document(bad)
    assert "Refused" in str(exc.value) or "No document" in str(exc.value)
    assert "private" not in str(exc.value)


def test_files_that_are_not_documents_are_refused(tools: DocsTools) -> None:
    for name in (".env", ".git/config", "secret.txt"):  # they exist, but are answered as if they did not
        with pytest.raises(ToolInputError, match=f"^No document '{re.escape(name)}'\\."):
            tools.read_document(name)
    with pytest.raises(ToolInputError, match="binary"):
        tools.read_document("binary.md")
    with pytest.raises(ToolInputError, match="folder"):
        tools.read_document("guides")


def test_unknown_id_names_the_closest(tools: DocsTools) -> None:
    with pytest.raises(ToolInputError) as exc:
        tools.read_document("guides/instal.md")
    assert "guides/install.md" in str(exc.value)
    with pytest.raises(ToolInputError) as exc:
        tools.read_section("instal.md", "Linux")
    assert "guides/install.md" in str(exc.value)
    # a file name alone is a link target (Obsidian's rule): it reads the one document of that name
    assert tools.read_section("install.md", "Linux").id == "guides/install.md"


def test_read_bounds(tools: DocsTools) -> None:
    r = tools.read_document("notes/long.md", max_chars=10**9)
    assert len(r.content) <= MAX_MAX_CHARS and "used 50000" in (r.note or "")
    with pytest.raises(ToolInputError, match="past the end"):
        tools.read_document("guides/install.md", offset=10**7)
    with pytest.raises(ToolInputError, match="offset"):
        tools.read_document("guides/install.md", offset=-1)
    with pytest.raises(ToolInputError, match="mode"):
        tools.read_document("guides/install.md", mode="raw")  # type: ignore[arg-type]


# -- read_section -------------------------------------------------------------------------------------


def test_read_section_by_path_heading_and_partial(tools: DocsTools) -> None:
    r = tools.read_section("guides/install.md", "Installing the collector > Linux")
    assert r.heading == "Linux" and r.level == 2
    assert "systemctl" in r.content and "journalctl" in r.content  # subsections included
    assert r.content.startswith("## Linux") and r.line_start < r.line_end
    assert not r.truncated and r.next_offset is None
    own = tools.read_section("guides/install.md", "linux", include_subsections=False)
    assert "journalctl" not in own.content and own.line_end < r.line_end
    assert tools.read_section("guides/install.md", "## WINDOWS").heading == "Windows"
    assert tools.read_section("guides/install.md", "trouble").heading_path.endswith("Linux > Troubleshooting")
    assert tools.read_section("guides/config.md", "Exporters > OTLP").heading_path == "Configuration > Exporters > OTLP"
    assert "read_section" not in render_read_section(r) and "§ Installing the collector > Linux" in render_read_section(
        r
    )


def test_read_section_ambiguous_and_missing(tools: DocsTools) -> None:
    with pytest.raises(ToolInputError) as exc:
        tools.read_section("guides/config.md", "otlp")
    msg = str(exc.value)
    assert (
        "ambiguous" in msg and "Configuration > Receivers > OTLP" in msg and "Configuration > Exporters > OTLP" in msg
    )
    with pytest.raises(ToolInputError) as exc:
        tools.read_section("guides/install.md", "Kubernetes")
    assert "Its headings are" in str(exc.value) and "Installing the collector > Windows" in str(exc.value)
    with pytest.raises(ToolInputError, match="empty"):
        tools.read_section("guides/install.md", " ")


def test_read_section_continuation(tools: DocsTools) -> None:
    full = tools.read_section("notes/long.md", "Operations handbook", max_chars=MAX_MAX_CHARS).content
    r = tools.read_section("notes/long.md", "Operations handbook", max_chars=500)
    assert r.truncated and r.next_offset and r.total_chars == len(full)
    rest = tools.read_section("notes/long.md", "Operations handbook", max_chars=MAX_MAX_CHARS, offset=r.next_offset)
    assert r.content + rest.content == full


def test_a_tag_that_names_no_tag_is_an_error_not_a_dropped_filter(tools: DocsTools) -> None:
    """'#' alone reduced to nothing and the filter was dropped: list_documents listed every note, without a note."""
    everything = tools.list_documents()
    assert everything.documents
    for call in (lambda: tools.list_documents(tag="#"), lambda: tools.search_documents("snapshots", tags=["# "])):
        with pytest.raises(ToolInputError, match="names no tag"):
            call()
    assert [d.id for d in tools.list_documents(tag="#backup").documents] == ["notes/backups.md"]


def test_text_that_is_not_unicode_gets_a_clear_error(tools: DocsTools, vault) -> None:
    # JSON may carry a lone surrogate ('\udce9'), and so may a command line holding bytes that are not UTF-8:
    # they were internal errors ('surrogates not allowed') or served a file the index had skipped.
    with open(bytes(vault) + b"/caf\xe9.md", "wb") as fh:
        fh.write(b"# Latin-1 name\n\nlatinnameword\n")
    bad = "caf\udce9.md"
    calls = [
        lambda: tools.search_documents("caf\udce9"),
        lambda: tools.search_documents("install", folder="gu\udce9"),
        lambda: tools.search_documents("install", tags=["t\udce9"]),
        lambda: tools.list_documents(folder="gu\udce9"),
        lambda: tools.list_documents(tag="t\udce9"),
        lambda: tools.list_documents(linked_to=bad),
        lambda: tools.read_document(bad),
        lambda: tools.read_document(bad, mode="outline"),
        lambda: tools.read_section(bad, "Latin-1 name"),
        lambda: tools.read_section("guides/install.md", "Linux\udce9"),
    ]
    for call in calls:
        with pytest.raises(ToolInputError, match="not valid Unicode") as exc:
            call()
        str(exc.value).encode("utf-8")  # the message itself can be sent


def test_an_id_that_begins_or_ends_with_a_space_reads_that_file(tools: DocsTools, vault) -> None:
    write(vault, " spaced.md", "# Spaced\n\nspacedword\n")
    assert tools.read_document(" spaced.md").id == " spaced.md"  # was stripped: "No document 'spaced.md'"
    assert tools.read_section(" spaced.md", "Spaced").id == " spaced.md"
    assert tools.read_document("guides/install.md \n").id == "guides/install.md"  # stray spaces still forgiven
    write(vault, " spaced folder/inside.md", "# Inside\n\ninsideword\n")
    tools.library.sync()
    assert [d.id for d in tools.list_documents(folder=" spaced folder").documents] == [" spaced folder/inside.md"]
    assert [r.id for r in tools.search_documents("insideword", folder=" spaced folder").results] == [
        " spaced folder/inside.md"
    ]
    assert tools.list_documents(folder=" guides ").documents  # stray spaces still forgiven


def test_an_id_or_folder_typed_in_the_other_unicode_normalisation_reads_that_file(tools: DocsTools, vault) -> None:
    # macOS tools often write names decomposed (NFD: 'e' + U+0301); people and models type them composed (NFC).
    nfd = unicodedata.normalize("NFD", "Réunions/Café.md")
    write(vault, nfd, "# Café\n\ncoffeeword\n")
    tools.library.sync()
    for typed in ("Réunions/Café.md", nfd):
        assert (
            tools.read_document(typed).id == nfd
        )  # was: "No document 'Réunions/Café.md'. Closest ids: Réunions/Café.md"
    assert tools.read_section("Réunions/Café.md", "Café").id == nfd
    assert [d.id for d in tools.list_documents(folder="Réunions").documents] == [nfd]
    assert [r.id for r in tools.search_documents("coffeeword", folder="Réunions").results] == [nfd]
