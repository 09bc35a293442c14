"""The block scanner against markdown-it, the parser it replaced: the same blocks, so the same sections.

The reference is markdown-it-py configured as mcp_docs.markdown used it (CommonMark with front matter; lists,
block quotes and reference definitions off). Samples: the fixture vault, hand-made edge cases, the hostile
documents of the security tests, seeded random documents built from tricky lines, and the OpenTelemetry
docs when present (skipped cleanly when not).
"""

from __future__ import annotations

import random
from functools import lru_cache
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from benchmarks.common import SHARED_BENCH
from mcp_docs.blocks import HTML_SEQUENCES, Blocks, Heading, paragraph_text, scan_blocks
from mcp_docs.markdown import document_from_blocks, normalize_text, parse_markdown
from tests.security.hostile_markdown import HOSTILE

VAULT = Path(__file__).parent / "fixtures" / "vault"
OTEL = SHARED_BENCH / "otel-docs"
OTEL_SAMPLE = 120  # documents of the OTel docs compared (every n-th file, so all folders are seen)


@lru_cache(maxsize=1)
def _markdown_it() -> MarkdownIt:
    md = MarkdownIt("commonmark").use(front_matter_plugin)
    md.core.ruler.disable(["inline", "text_join"])
    md.block.ruler.disable(["list", "blockquote", "reference"])
    return md


def _lines(text: str) -> tuple[str, list[str]]:
    text = normalize_text(text)
    lines = text.split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()
    return text, lines


def reference_blocks(text: str) -> tuple[Blocks, list[str]]:
    """The blocks as markdown-it finds them, and the raw content of each paragraph."""
    text, _ = _lines(text)
    tokens = _markdown_it().parse(text)
    blocks = Blocks()
    contents: list[str] = []
    for i, tok in enumerate(tokens):
        assert tok.level == 0 or tok.type == "inline"
        if tok.type == "front_matter" and tok.map:
            blocks.front_matter = tok.content
            blocks.content_start = tok.map[1]
        elif tok.type in ("fence", "code_block", "html_block") and tok.map:
            blocks.code.append((tok.map[0], tok.map[1]))
        elif tok.type == "heading_open" and tok.map:
            setext = tok.markup if tok.markup in ("-", "=") else ""
            blocks.headings.append(Heading(int(tok.tag[1]), tok.map[0], tok.map[1], tokens[i + 1].content, setext))
        elif tok.type == "paragraph_open" and tok.map:
            blocks.paragraphs.append((tok.map[0], tok.map[1]))
            contents.append(tokens[i + 1].content)
    return blocks, contents


def assert_same_as_markdown_it(text: str) -> None:
    expected, contents = reference_blocks(text)
    text, lines = _lines(text)
    got = scan_blocks(lines, text.endswith("\n"), lambda: None)
    assert got == expected
    assert [paragraph_text(lines, span) for span in got.paragraphs] == contents
    # The sections, title and summary of the old path (its blocks) and of the new one (parse_markdown).
    old, new = document_from_blocks(lines, expected), parse_markdown(text)
    assert [
        (s.index, s.heading_path, s.level, s.line_start, s.line_end, s.subtree_end, s.body) for s in new.sections
    ] == [(s.index, s.heading_path, s.level, s.line_start, s.line_end, s.subtree_end, s.body) for s in old.sections]
    assert (new.title, new.summary, new.front_matter, new.tags, new.links) == (
        old.title,
        old.summary,
        old.front_matter,
        old.tags,
        old.links,
    )


def test_html_block_patterns_are_markdown_its() -> None:
    from markdown_it.rules_block.html_block import HTML_SEQUENCES as REFERENCE

    ours = [(o.pattern, o.flags, c.pattern, c.flags, interrupts) for o, c, interrupts in HTML_SEQUENCES]
    assert ours == [(o.pattern, o.flags, c.pattern, c.flags, interrupts) for o, c, interrupts in REFERENCE]


EDGE_CASES = {
    "empty": "",
    "blank": "   ",
    "blank_lines": "\n\n \t\n",
    "trailing_blank_no_newline": "# A\ntext\n   ",
    "front_matter": "---\ntitle: T\n---\n# H\nbody\n",
    "front_matter_longer_fences": "-----\na: 1\n---\nstill yaml\n------\n# H",
    "front_matter_dots": "---\na: 1\n...  \n# H",
    "front_matter_indented_close": "---\na: 1\n    ---\n  ---\n# H",
    "front_matter_unclosed": "---\na: 1\n# H\ntext",
    "front_matter_empty": "---\n---\n# H",
    "front_matter_open_with_text": "--- x\na: 1\n---\n",
    "front_matter_not_first": "\n---\na: 1\n---\n",
    "setext": "Title\n=====\n\nSub\n---\n\nmulti\nline\n  ---  \n",
    "setext_lazy_indented": "para\n      indented lazily\n===\n",
    "setext_after_list": "- a\n- b\n---\n",
    "setext_not_underline": "para\n- - -\n",
    "setext_first_line_equals": "===\n---\n",
    "hr_interrupts": "para\n***\n# H\n___\n- - -\n",
    "atx_variants": "#\n##\n# a #\n# a#\n## b ##   \n#######  x\n#x\n   # three\n    # code\n# #\n#\t#\n##\tt\t##\n",
    "atx_interrupts": "para\n# H\npara\n####### not\n",
    "fences": "```py\n# no\n```\n~~~\n# no\n```\n~~~~\n# yes\n````\n# no\n````\n",
    "fence_info_backtick": "``` a`b\n# yes\n",
    "fence_unclosed": "text\n```\n# no\n",
    "fence_indented_close": "  ```\n# no\n    ```\n# no\n ```  \n# yes\n",
    "fence_interrupts": "para\n```\ncode\n```\n",
    "tilde_fence_backticks_info": "~~~ a`b\n# no\n~~~\n",
    "indented_code": "    # no\n\n    # no\n\n# yes\n    code after heading\n",
    "tabs": "\t# code\n \t# code\n  \t# code\n\tpara\npara\n\t===\n",
    "html_kinds": (
        "<script>\n# no\n</script>\n# yes\n<!-- a\n\n# no\n-->\n<?x\n# no\n?>\n<!DOCTYPE\n# no\n>\n"
        "<![CDATA[\n# no\n]]>\n<div>\n# no\n\n# yes\n<a href='x'>\n# no\n\n# yes\n"
    ),
    "html_interrupts": "para\n<div>\n# no\n\npara\n<span>\n# yes\n\npara\n<a>\nstill para\n",
    "html_one_line": "<!-- c -->\n# yes\n<pre>x</pre>\n# yes\n",
    "html_unclosed": "<!--\n# no\n# no",
    "nul": "# a\0b\n\0para\n---\nx: \0\n",
    "unicode_space": "#\u00a0not\n# \u2003spaced\u2003\n\u00a0   # para\n",
    "summary": "# T\n\nfirst *para*\n\nsecond [link](x)\n\n" + "more words here\n\n" * 20,
    "lists_and_quotes": "- # heading in a list\n> # heading in a quote\n1. item\n   # h\n[ref]: http://x\n",
}


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_edge_cases_match_markdown_it(name: str) -> None:
    assert_same_as_markdown_it(EDGE_CASES[name])


def test_fixture_vault_matches_markdown_it() -> None:
    files = sorted(VAULT.rglob("*.md"))
    assert files
    for path in files:
        assert_same_as_markdown_it(path.read_text("utf-8", errors="replace"))


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_documents_match_markdown_it(name: str) -> None:
    assert_same_as_markdown_it(HOSTILE[name](3000))


# Lines chosen to meet every rule and its neighbours: openers and closers of every block, underlines, indents.
_LINES = [
    "",
    "   ",
    "text",
    "more text #tag [link](x)",
    "# H1",
    "## H2 ##",
    "###### H6",
    "####### no",
    "#no",
    "===",
    "---",
    "- - -",
    "***",
    "___",
    "- item",
    "1. item",
    "> quote",
    "```",
    "```py",
    "````",
    "~~~",
    "``` a`b",
    "    indented",
    "\tTabbed",
    "  ## two spaces",
    "<div>",
    "</div>",
    "<!--",
    "-->",
    "<script>",
    "</script>",
    "<a href='x'>",
    "<span>",
    "<?php",
    "?>",
    "...",
    "Title {#id}",
]


@pytest.mark.parametrize("seed", range(40))
def test_random_documents_match_markdown_it(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(25):
        lines = [rng.choice(_LINES) for _ in range(rng.randint(1, 40))]
        if rng.random() < 0.3:
            lines = ["---", "title: x", *lines]
        assert_same_as_markdown_it("\n".join(lines) + rng.choice(["", "\n"]))


def test_opentelemetry_docs_match_markdown_it() -> None:
    if not OTEL.is_dir():
        pytest.skip("the OpenTelemetry docs are not on this machine")
    files = sorted(OTEL.rglob("*.md"))
    step = max(1, len(files) // OTEL_SAMPLE)
    for path in files[::step]:
        assert_same_as_markdown_it(path.read_text("utf-8", errors="replace"))
