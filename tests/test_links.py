"""Link targets → document ids, rule by rule (pure: no index, no files)."""

from __future__ import annotations

import pytest

from mcp_docs.links import Name, Resolution, is_document_link, link_record, names_of, parse_target, resolve
from mcp_docs.markdown import parse_markdown

EXT = (".md", ".markdown")
IDS = {
    "Quokka Setup.md": ["QS", "quokka install"],
    "guides/setup.md": [],
    "guides/setup/index.md": [],
    "guides/setup/install.md": [],
    "ops/install.md": [],
    "notes/a.md": [],
    "notes/b.md": ["Bee"],
    "notes/deep/c.markdown": [],
    "other/b.md": [],
    "glossary.md": ["Setup"],  # an alias equal to another note's file name
}


def names() -> list[Name]:
    return [n for doc_id, aliases in IDS.items() for n in names_of(doc_id, aliases, EXT)]


def go(text: str, source: str | None = None, kind: str | None = None) -> Resolution:
    target = parse_target(text, kind)
    assert target is not None
    return resolve(target, source, names(), EXT)


def test_a_file_name_without_extension_resolves_case_insensitively() -> None:
    assert go("[[Quokka Setup]]").id == "Quokka Setup.md"
    assert go("quokka setup").id == "Quokka Setup.md"
    assert go("QUOKKA SETUP.md").id == "Quokka Setup.md"
    assert go("c", "notes/a.md", "wiki").id == "notes/deep/c.markdown"


def test_a_shared_name_is_ambiguous_unless_one_is_next_to_the_linking_note() -> None:
    r = go("[[install]]")
    assert r.id is None and r.ambiguous and r.candidates == ("guides/setup/install.md", "ops/install.md")
    assert go("b", "notes/a.md", "wiki").id == "notes/b.md"  # same folder as the link wins, as in Obsidian
    assert go("b", "guides/setup.md", "wiki").ambiguous
    assert go("b").ambiguous  # an agent's target has no folder: the candidates are listed


def test_paths_from_the_root_by_their_end_and_relative_to_the_note() -> None:
    assert go("[[guides/setup/install]]").id == "guides/setup/install.md"
    assert go("[[setup/install]]").id == "guides/setup/install.md"  # the end of a path, unique
    assert go("[[Guides/Setup.md]]").id == "guides/setup.md"
    assert go("[[./install]]", "ops/x.md").id == "ops/install.md"
    assert go("[[../notes/b]]", "guides/setup.md").id == "notes/b.md"
    assert go("[[nowhere/install]]").id is None  # a path that leads nowhere is not a file name


def test_relative_markdown_links_with_fragments_and_folder_index_notes() -> None:
    assert go("../guides/setup.md", "notes/a.md", "markdown").id == "guides/setup.md"
    r = go("../Quokka%20Setup.md#linux-setup", "notes/a.md", "markdown")
    assert r.id == "Quokka Setup.md"
    assert parse_target("../Quokka%20Setup.md#linux-setup", "markdown").heading == "linux-setup"  # type: ignore[union-attr]
    assert go("b.md", "notes/a.md", "markdown").id == "notes/b.md"  # relative to the note, not a name
    assert go("b.md", "guides/setup.md", "markdown").id is None
    assert go("setup/", "guides/x.md", "markdown").id == "guides/setup/index.md"
    assert go("./setup", "guides/x.md", "markdown").id == "guides/setup.md"  # the file before the folder
    assert go("/guides/setup/install.md", "notes/a.md", "markdown").id == "guides/setup/install.md"


def test_a_folder_link_without_an_index_note_opens_the_file_of_that_name() -> None:
    """Hugo's pretty URLs (`/docs/demo/docker-deployment/` for docs/demo/docker-deployment.md). Found indexing
    the OpenTelemetry docs as a new user: `status` listed 1,813 broken links, 736 of them to existing pages."""
    assert go("/notes/b/", "guides/x.md", "markdown").id == "notes/b.md"
    assert go("../ops/install/#linux", "guides/x.md", "markdown").id == "ops/install.md"
    assert go("/guides/setup/", "notes/a.md", "markdown").id == "guides/setup/index.md"  # the folder's note first
    assert go("/notes/nowhere/", "guides/x.md", "markdown").id is None


def test_aliases_resolve_after_file_names() -> None:
    assert go("[[QS]]").id == "Quokka Setup.md"
    assert go("Quokka Install").id == "Quokka Setup.md"
    assert go("[[bee]]").id == "notes/b.md"
    # 'Setup' is both a file name (guides/setup.md) and an alias (glossary.md): the file name wins
    assert go("[[setup]]").id == "guides/setup.md"


def test_headings_labels_and_links_inside_the_note() -> None:
    target = parse_target("[[Quokka Setup#Linux|the Linux part]]")
    assert target is not None and target.path == "Quokka Setup" and target.heading == "Linux"
    assert go("[[Quokka Setup#Linux|label]]").id == "Quokka Setup.md"
    assert go("[[#Linux]]", "notes/a.md").id == "notes/a.md"
    assert go("[[#Linux]]").id is None  # an agent's heading alone names no document
    assert parse_target("[[]]") is None and parse_target("  ") is None


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("../../etc/passwd", "wiki"),
        ("../../../etc/passwd", "markdown"),
        ("/etc/passwd", "markdown"),
        ("/etc/passwd", "wiki"),
        ("../../outside.md", "markdown"),
        ("..", "markdown"),
        ("%2e%2e/%2e%2e/secret.md", "markdown"),
        ("C:\\Windows\\win.ini", "wiki"),
    ],
)
def test_targets_out_of_the_root_resolve_to_nothing(text: str, kind: str) -> None:
    assert go(text, "notes/a.md", kind).id is None
    assert go(text, None, kind).id is None


def test_what_is_not_a_link_to_a_note() -> None:
    assert not is_document_link("https://example.org/a.md", "markdown", EXT)
    assert not is_document_link("mailto:a@b.c", "markdown", EXT)
    assert not is_document_link("img/diagram.png", "markdown", EXT)
    assert not is_document_link("page.html", "markdown", EXT)
    assert not is_document_link("diagram.png", "wiki", EXT)
    assert is_document_link("Quokka 2.0", "wiki", EXT)  # a dot in a note's name is not an extension
    assert is_document_link("../guides/setup", "markdown", EXT)
    assert is_document_link("#setup", "markdown", EXT)


def test_the_parser_gives_each_link_its_line_and_the_catalog_its_key() -> None:
    parsed = parse_markdown(
        "---\naliases: [Alpha]\n---\n# T\n\nsee [[Quokka Setup#Linux|here]]\n\n```\n[[not a link]]\n```\n[x](../b.md) [u](https://x.org)\n"
    )
    records = [link_record(link, "notes/deep/t.md", EXT) for link in parsed.links]
    assert [(r["line"], r["key"]) for r in records] == [(6, "quokka setup"), (11, "b"), (11, None)]
    assert parsed.aliases == ("Alpha",)


@pytest.mark.parametrize(
    "written",
    ["Quokka Setup", "quokka setup.md", "Notes.MARKDOWN", "a/b", "./x", "../up/y.md", "", "  padded  ", "v2.0"],
)
def test_the_catalog_key_of_a_wikilink_is_the_key_resolution_looks_up(written: str) -> None:
    from mcp_docs.links import link_target, lookup_key
    from mcp_docs.markdown import Link

    link = Link(target=written, kind="wiki", heading="H", line=1)
    target = link_target("wiki", written, "H")
    assert target is not None
    assert link_record(link, "notes/deep/t.md", EXT)["key"] == lookup_key(target, "notes/deep/t.md", EXT)


def test_a_document_keeps_a_bounded_number_of_aliases() -> None:
    from mcp_docs.links import MAX_ALIASES

    names = names_of("a.md", [f"alias {i}" for i in range(10_000)], EXT)
    assert len(names) == 1 + MAX_ALIASES
