"""Link targets → document ids, rule by rule (pure: no index, no files)."""

from __future__ import annotations

import pytest

from mcp_docs.links import (
    Name,
    Resolution,
    is_document_link,
    link_record,
    link_records,
    names_of,
    parse_target,
    resolve,
)
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


# -- issue 30: links as Obsidian resolves them on a real vault (the Obsidian help vault's shapes) ----------------
LANG_IDS = [
    "en/Plugins/Canvas.md",
    "fr/Plugins/Canvas.md",
    "pt-br/Plugins/Canvas.md",
    "en/Plugins/Bases/Table view.md",
    "fr/Plugins/Bases/Table view.md",
    "en/Start here.md",
    "fr/Start here.md",
    "Release notes/v1.0.md",
]


def lang_go(text: str, source: str | None, ids: list[str] = LANG_IDS) -> Resolution:
    target = parse_target(text, "wiki")
    assert target is not None
    return resolve(target, source, [n for i in ids for n in names_of(i, [], EXT)], EXT)


def test_a_name_shared_by_language_folders_resolves_to_the_nearest_note() -> None:
    """2,702 of the help vault's 4,562 'broken' links were such names: the same-folder rule gave up."""
    assert lang_go("Canvas", "fr/Plugins/Canvas.md").id == "fr/Plugins/Canvas.md"  # itself, the same folder
    assert lang_go("Canvas", "fr/Start here.md").id == "fr/Plugins/Canvas.md"  # longest shared folder prefix
    assert lang_go("Table view", "en/Plugins/Canvas.md").id == "en/Plugins/Bases/Table view.md"
    assert lang_go("Plugins/Canvas", "fr/Start here.md").id == "fr/Plugins/Canvas.md"  # the end of a path too
    # from outside every language folder: the shortest path, and a tie of lengths is still ambiguous
    assert lang_go("Canvas", "Release notes/v1.0.md").ambiguous
    assert lang_go("Canvas", "Release notes/v1.0.md", [*LANG_IDS[2:], "xx/Canvas.md"]).id == "xx/Canvas.md"
    assert lang_go("Canvas", None).ambiguous  # an agent's target has no place to be near: the candidates


@pytest.mark.parametrize(
    "target",
    [
        "obsidian://show-plugin?id=maps",
        "zotero://select/items/ABC",
        "zotero:select/items/ABC",
        "mailto:someone@example.org",
        "file:///home/me/notes/a.md",
        "x-devonthink-item://1234-ABCD",
        "HTTPS://example.org/a.md",
        "ftp://example.org/a.md",
    ],
)
def test_a_url_of_any_scheme_is_not_a_note(target: str) -> None:
    """1,088 `obsidian://show-plugin?id=maps` in the help vault were counted as broken links to notes."""
    assert not is_document_link(target, "markdown", EXT)
    assert not is_document_link(target, "wiki", EXT)
    text = f"# T\n\n[x]({target}) [[{target}]]\n"
    records, _ = link_records(parse_markdown(text).links, "t.md", EXT)
    assert records == []


def test_a_name_with_a_colon_and_a_space_is_still_a_note() -> None:
    assert is_document_link("Chapter: one", "wiki", EXT)
    assert lang_go("Chapter: one", "a.md", ["Chapter: one.md"]).id == "Chapter: one.md"


def test_an_escaped_pipe_in_a_table_cell_separates_the_alias() -> None:
    """419 links of the help vault: `| [[Table view\\|Table]] |` gave the target 'Table view\\'."""
    text = "# T\n\n| view | what |\n| --- | --- |\n| [[Table view\\|Table]] | [[Canvas#Cards\\|cards]] |\n"
    links = parse_markdown(text).links
    assert [(k.target, k.heading, k.alias) for k in links] == [
        ("Table view", None, "Table"),
        ("Canvas", "Cards", "cards"),
    ]
    assert lang_go(links[0].target, "en/Start here.md").id == "en/Plugins/Bases/Table view.md"
    target = parse_target("[[Table view\\|Table]]")  # as an agent copies it out of a table
    assert target is not None and target.path == "Table view"


def test_names_compare_in_one_unicode_form() -> None:
    """`[[Café]]` (NFC, as typed) reaches a file macOS named in NFD, and the other way round."""
    import unicodedata

    nfd = unicodedata.normalize("NFD", "Café.md")
    nfc = unicodedata.normalize("NFC", "Café")
    assert nfd != "Café.md"
    assert lang_go(nfc, "a.md", [nfd]).id == nfd
    assert lang_go(unicodedata.normalize("NFD", "Notes/CAFÉ"), "a.md", ["notes/Café.md"]).id == "notes/Café.md"
    alias = names_of("x.md", [unicodedata.normalize("NFD", "Crème")], EXT)
    target = parse_target("[[crème]]")
    assert target is not None and resolve(target, "a.md", alias, EXT).id == "x.md"
    records, _ = link_records(
        parse_markdown(f"# T\n\n[[{nfc}]] [[{unicodedata.normalize('NFD', 'café')}]]\n").links, "a.md", EXT
    )
    assert [(r["key"], r["count"]) for r in records] == [("café", 2)]  # one target, written twice


def test_a_link_written_many_times_is_one_record_and_targets_are_bounded() -> None:
    text = "# Bomb\n\n" + "[[a]] " * 50_000 + "\n[[A#h|x]] [[b]] [[#Bomb]] [y](a.md)\n"
    records, dropped = link_records(parse_markdown(text).links, "bomb.md", EXT)
    assert [(r["target"], r["line"], r["count"]) for r in records] == [("a", 3, 50_001), ("b", 4, 1), ("a.md", 4, 1)]
    assert dropped == 0
    many = parse_markdown("# Many\n\n" + " ".join(f"[[n{i}]] [[n{i}]]" for i in range(300)) + "\n").links
    records, dropped = link_records(many, "many.md", EXT, limit=100)
    assert len(records) == 100 and dropped == 200 and all(r["count"] == 2 for r in records)


def test_a_note_of_distinct_links_keeps_a_bounded_number_of_them() -> None:
    """400,000 distinct `[[n1]] [[n2]] …` (4.7 MB) took 8 s to parse into objects and 4 s more to key them."""
    from mcp_docs.markdown import MAX_LINKS

    parsed = parse_markdown("# Many\n\n" + " ".join(f"[[n{i}]]" for i in range(MAX_LINKS + 5)) + " [[n0]]\n")
    assert len(parsed.links) == MAX_LINKS and parsed.links[0].count == 2  # one already kept: still counted
    assert parsed.warnings == (f"5 more links not read (the first {MAX_LINKS:,} distinct ones are)",)
