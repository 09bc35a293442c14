import subprocess
import sys
from pathlib import Path

import pytest

from mcp_docs.errors import ParseTimeout
from mcp_docs.markdown import PREAMBLE_HEADING, parse_markdown, section_text

VAULT = Path(__file__).parent / "fixtures" / "vault"


def parse(rel: str):
    return parse_markdown((VAULT / rel).read_text("utf-8"), Path(rel).stem)


def test_front_matter_title_tags_aliases_and_preamble() -> None:
    doc = parse("index.md")
    assert doc.title == "Team handbook"
    assert doc.tags == ("handbook", "onboarding", "welcome")
    assert doc.aliases == ("home",)
    assert doc.sections[0].heading == PREAMBLE_HEADING
    assert doc.sections[0].line_start == 6  # first line after the front matter
    assert doc.summary.startswith("Welcome to the handbook. Start with installation and read the release notes")
    assert doc.warnings == ()


def test_heading_tree_line_ranges_code_fences_and_setext() -> None:
    doc = parse("guides/setup/install.md")
    paths = [s.heading_path for s in doc.sections]
    assert paths == [
        "Installation",
        "Installation > Linux",
        "Installation > macOS",
        "Build",
        "Build > Linux",
        "Build > Configuration",
        "Troubleshooting",
    ]
    linux = doc.sections[1]
    assert (linux.level, linux.line_start) == (2, 5)
    assert "# this is a comment" in linux.body  # a '#' line inside a fence is not a heading
    assert linux.line_end == 14
    install = doc.sections[0]
    assert install.subtree_end == 18  # through the end of 'macOS'
    assert section_text(doc.lines, install, include_subsections=False).splitlines()[0] == "# Installation"
    setext = doc.sections[5]
    assert (setext.heading, setext.level, setext.line_start) == ("Configuration", 2, 28)
    assert doc.sections[6].level == 1
    assert doc.title == "Installation"  # first H1 without front matter


def test_duplicate_heading_paths_are_told_apart() -> None:
    doc = parse("guides/setup/duplicate.md")
    assert [s.heading_path for s in doc.sections] == ["FAQ", "FAQ > Question", "FAQ > Question (2)"]


def test_malformed_front_matter_still_indexed_with_warning() -> None:
    doc = parse("notes/releases.md")
    assert doc.title == "Release notes"  # from the H1
    assert any("malformed front matter" in w for w in doc.warnings)
    assert [s.heading for s in doc.sections] == ["Release notes", "2.0", "1.0"]


def test_inline_tags_nested_and_front_matter_string_tags() -> None:
    doc = parse("guides/writing.md")
    assert doc.tags == ("guide", "style", "style/headings")


def test_wikilinks_and_markdown_links() -> None:
    doc = parse("index.md")
    wiki = [link for link in doc.links if link.kind == "wiki"]
    assert wiki[0].target == "guides/setup/install" and wiki[0].alias == "installation"
    md = [link for link in doc.links if link.kind == "markdown"]
    assert md[0].target == "notes/releases.md"
    writing = parse("guides/writing.md")
    link = next(link for link in writing.links if link.kind == "wiki")
    assert (link.target, link.heading, link.alias) == ("index", "How this vault is organised", "the index")


def test_crlf_and_bom_and_language() -> None:
    doc = parse_markdown("\ufeff---\r\nlang: fr-FR\r\n---\r\n# Titre\r\n\r\nTexte.\r\n", "x")
    assert doc.lang == "fr"
    assert doc.title == "Titre"
    assert doc.sections[0].line_start == 4
    assert doc.sections[0].body == "Texte."


def test_title_falls_back_to_file_name_and_empty_document() -> None:
    assert parse_markdown("just text", "my-note").title == "my-note"
    empty = parse_markdown("", "empty")
    assert empty.sections == () and empty.title == "empty"


def test_front_matter_that_is_not_a_mapping() -> None:
    doc = parse_markdown("---\n- a\n- b\n---\n# T\n", "x")
    assert doc.front_matter == {} and doc.warnings


def test_list_followed_by_rule_is_not_a_heading() -> None:
    doc = parse_markdown("# A\n\n- one\n- two\n---\n\ntext\n", "x")
    assert [s.heading for s in doc.sections] == ["A"]


def test_hash_in_inline_code_and_urls_is_not_a_tag() -> None:
    doc = parse_markdown("# T\n\nSee `#notatag` and http://x.org/page#anchor and #real-tag and #123.\n", "x")
    assert doc.tags == ("real-tag",)


def test_heading_ids_are_dropped_and_are_not_tags() -> None:
    doc = parse_markdown("# Propagation {#propagation}\n\ntext #real\n\n## Spans {: #spans .x}\n\nmore\n", "x")
    assert [s.heading_path for s in doc.sections] == ["Propagation", "Propagation > Spans"]
    assert doc.tags == ("real",)


def test_code_spans_in_headings_keep_underscores() -> None:
    doc = parse_markdown("# Variables\n\n## `OTEL_SERVICE_NAME`\n\nThe _service_ name, snake_case_kept.\n", "x")
    assert doc.sections[1].heading == "OTEL_SERVICE_NAME"
    assert "snake_case_kept" in doc.summary and "_service_" not in doc.summary


def test_front_matter_aliases_cannot_expand_a_billion_times() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    doc = parse_markdown("---\ntitle: Laughs\n" + "\n".join(lines) + "\n---\n# T\n", "x")
    assert doc.front_matter == {} and doc.title == "T"
    assert any("more than 100000 values" in w for w in doc.warnings)


def test_deep_front_matter_is_refused_before_yaml_sees_it() -> None:
    # Flow nesting made libyaml's scanner quadratic; block nesting made its C loader overflow the stack (a
    # segfault that killed the server), so this runs in a child process.
    code = (
        "from mcp_docs.markdown import parse_markdown\n"
        "for fm in ('k: ' + '[' * 20000 + ']' * 20000, 'k:\\n  ' + '- ' * 100000 + 'a'):\n"
        "    doc = parse_markdown('---\\n' + fm + '\\n---\\n# T\\n', 'x')\n"
        "    assert doc.front_matter == {} and any('deeper than 50' in w for w in doc.warnings), doc.warnings\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]


def test_tags_are_capped() -> None:
    doc = parse_markdown("# T\n\n" + " ".join(f"#t{i}" for i in range(500)) + "\n", "x")
    assert len(doc.tags) == 100 and doc.tags[0] == "t0"
    assert "500 tags: only the first 100 are kept" in doc.warnings


def test_a_time_budget_stops_a_long_parse() -> None:
    text = "# h\n\ntext\n\n" * 50_000
    with pytest.raises(ParseTimeout, match="parsing needed more than 0 s of CPU time"):
        parse_markdown(text, "x", seconds=0.0)
    assert len(parse_markdown("# h\n\ntext\n", "x", seconds=5.0).sections) == 1
