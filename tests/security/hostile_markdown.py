"""Hostile Markdown, one generator per pattern class that once took time quadratic in its size.

Each generator gives a document of about `size` characters. Shared by the linear-time tests and by
`python -m tests.security.hostile_markdown`, which times the parser on each class side by side.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable


def _fill(unit: str, size: int, head: str = "", tail: str = "") -> str:
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


HOSTILE: dict[str, Callable[[int], str]] = {
    # links: a pattern scanning to the end of the line from every '[' is quadratic
    "brackets": lambda n: _fill("[", n),
    "wikilink_runs": lambda n: _fill("[[", n),
    "wikilink_heading_part": lambda n: _fill("[[a#", n),
    "wikilink_alias_part": lambda n: _fill("[[a|", n),
    "nested_brackets": lambda n: "[" * (n // 2) + "]" * (n // 2),
    "link_targets": lambda n: _fill("[a](b", n),
    "link_titles": lambda n: _fill('[a](b "', n),
    "link_in_heading": lambda n: _fill("[a](b", n, head="# "),
    "brackets_in_heading": lambda n: _fill("[", n, head="# "),
    # emphasis in headings and paragraphs: an opener with no closer scanned to the end each time
    "equals_in_heading": lambda n: _fill("==a ", n, head="# "),
    "stars_in_heading": lambda n: _fill("*a ", n, head="# "),
    "underscores_in_heading": lambda n: _fill("_a ", n, head="# "),
    "tildes_in_heading": lambda n: _fill("~~a ", n, head="# "),
    "star_run_in_heading": lambda n: _fill("*", n, head="# "),
    "underscore_run": lambda n: _fill("_", n, head="# x "),
    "emphasis_in_paragraph": lambda n: _fill("**a *b __c _d ==e ~~f ", n, head="# T\n\n"),
    # code spans
    "backtick_run": lambda n: _fill("`", n),
    "backticks_in_heading": lambda n: _fill("``a ", n, head="# "),
    "open_code_spans": lambda n: _fill("`a ", n, head="# x "),
    # heading ids '{#id}' and the spaces before them
    "hash_then_spaces": lambda n: _fill(" ", n, head="#", tail="x"),
    "heading_then_spaces": lambda n: _fill(" ", n, head="# a", tail="x"),
    "heading_id_openers": lambda n: _fill("{#", n, head="# a ", tail="}x"),
    "heading_id_openers_in_text": lambda n: _fill("{: #", n, head="x #tag "),
    # many headings: one slice of the rest of the document per heading
    "40k_headings": lambda n: _fill("# h\n", n),
    "nested_headings": lambda n: _fill("# a\n## b\n### c\n#### d\n##### e\n###### f\n", n),
    "long_heading": lambda n: _fill("word ", n, head="# "),
    "long_setext_heading": lambda n: _fill("a b\n", n, tail="===\n"),
    # tags
    "many_tags": lambda n: _fill("#tag ", n),
    "distinct_tags": lambda n: "".join(f"#t{i} " for i in range(n // 7)),
    "hashes": lambda n: _fill("#", n, head="x "),
    "tag_like_runs": lambda n: _fill("#a#", n, head="x "),
    # inline HTML
    "html_tag_openers": lambda n: _fill("<a", n, head="x "),
    "html_in_heading": lambda n: _fill("<a ", n, head="# "),
    "html_blocks": lambda n: _fill("<div>\n<!--\n", n),
    "html_comments": lambda n: _fill("<!--", n, head="# T\n\n"),
    "shortcodes": lambda n: _fill("{{<", n, head="# T\n\n"),
    # block structure handed to markdown-it
    "link_reference_defs": lambda n: _fill("[a]: b\n", n),
    "long_link_reference": lambda n: _fill("a", n, head="[", tail="]: b\n"),
    "table_huge_row": lambda n: _fill("| a ", n, tail="|\n|---|\n"),
    "nested_lists": lambda n: "".join("  " * (i % 200) + "- a\n" for i in range(n // 200)),
    "deep_list_markers": lambda n: _fill("- ", n, tail="a\n"),
    "nested_blockquotes": lambda n: _fill(">", n, tail=" a\n"),
    "blockquote_lines": lambda n: _fill("> > > a\n", n),
    "setext_after_list": lambda n: _fill("- a\n---\n", n),
    "fences": lambda n: _fill("```\n", n),
    "unclosed_fence_then_headings": lambda n: _fill("# h\n", n, head="```\n"),
    # front matter
    "long_front_matter": lambda n: _fill("key: value\n", n, head="---\n", tail="---\n# T\n"),
    "front_matter_list": lambda n: _fill("- a\n", n, head="---\ntags:\n", tail="---\n# T\n"),
    # identifiers (full-text identifier field) and plain words
    "identifier_runs": lambda n: _fill("a_", n),
    "separator_run": lambda n: _fill("-", n, head="a"),
    "plain_words": lambda n: _fill("lorem ipsum dolor ", n),
}


# Classes made of many short lines or blocks: their cost is markdown-it's per block, so they are timed smaller.
BLOCK_CLASSES = frozenset(
    {
        "40k_headings",
        "nested_headings",
        "long_setext_heading",
        "html_blocks",
        "link_reference_defs",
        "nested_lists",
        "blockquote_lines",
        "setext_after_list",
        "fences",
        "unclosed_fence_then_headings",
        "long_front_matter",
        "front_matter_list",
    }
)


def time_parse(text: str) -> float:
    """The read path: parse, then the outline and summary views built from the parse."""
    from mcp_docs.markdown import parse_markdown
    from mcp_docs.outline import outline, summary

    started = time.perf_counter()
    parsed = parse_markdown(text, "hostile")
    outline(parsed), summary(parsed)
    return time.perf_counter() - started


def time_text_passes(text: str) -> float:
    """The other passes over a section's text: search snippet, identifier field, embedding pieces."""
    from mcp_docs.index.chunking import split_pieces
    from mcp_docs.query_text import identifiers
    from mcp_docs.snippets import make_snippet

    started = time.perf_counter()
    make_snippet(text, ["a", "tag", "lorem"])
    identifiers(text)
    split_pieces(text, 1000)
    return time.perf_counter() - started


if __name__ == "__main__":  # python -m tests.security.hostile_markdown [size] [name ...]
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 50_000
    time_parse("# warm-up\n"), time_text_passes("warm-up")  # lazy imports are not the parser's time
    for name in sys.argv[2:] or list(HOSTILE):
        text = HOSTILE[name](size)
        print(f"{name:32} parse {time_parse(text):8.3f} s   other passes {time_text_passes(text):8.3f} s", flush=True)
