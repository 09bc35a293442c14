"""Sections cut into embedding chunks (index/chunking.py): budgets, overlap, prefixes; no model needed."""

from __future__ import annotations

import itertools

from mcp_docs.index.chunking import Chunk, chunk_document, section_prefix, split_pieces
from mcp_docs.markdown import parse_markdown
from tests.store.embedded.test_vector_store import LONG_PARAGRAPHS, TELESCOPE


def test_pieces_fit_the_budget_and_overlap() -> None:
    body = "\n\n".join(LONG_PARAGRAPHS)
    pieces = split_pieces(body, 500, overlap=100)
    assert len(pieces) > 3
    assert all(len(p) <= 500 for p in pieces)
    for prev, nxt in itertools.pairwise(pieces):
        assert nxt.split("\n", 1)[0] in prev  # each piece starts with the tail of the one before
    words = set(body.split())
    assert set(" ".join(pieces).split()) == words  # nothing lost


def test_one_huge_paragraph_is_split_at_sentences_then_words() -> None:
    body = ("word " * 700).strip() + ". Another sentence follows here."
    pieces = split_pieces(body, 300, overlap=0)
    assert all(0 < len(p) <= 300 for p in pieces)
    assert pieces[-1].endswith("follows here.")


def test_chunks_carry_title_and_heading_path_and_skip_empty_sections() -> None:
    parsed = parse_markdown(
        "# Guide\n\n## Install\n\nRun the installer.\n\n## Empty\n\n## Usage\n\nType `go`.\n", "guide"
    )
    chunks = chunk_document(parsed, 1000)
    assert [c.text for c in chunks] == ["Guide > Install\nRun the installer.", "Guide > Usage\nType go."]
    assert chunks[0].piece == "Run the installer." and len({c.hash for c in chunks}) == 2
    assert section_prefix("Notes", "Setup > Linux") == "Notes > Setup > Linux"
    assert section_prefix("Notes", "(top)") == "Notes"
    assert chunk_document(parse_markdown("# Only a title\n", "x"), 1000) == []


def test_chunks_respect_the_model_limit() -> None:
    chunks = chunk_document(parse_markdown(TELESCOPE, "t"), 1000)
    assert len(chunks) > 2 and all(len(c.text) <= 1000 for c in chunks)
    assert all(isinstance(c, Chunk) and c.text.startswith("Telescope care > Routine\n") for c in chunks)


def test_small_subsections_join_their_parents_chunk_and_nothing_else_does() -> None:
    # The Obsidian help vault's shape: a section, then one-line steps under their own headings.
    parsed = parse_markdown(
        "# Sync\n\n## Set up\n\nOpen the settings and sign in to your account first.\n\n"
        "### Desktop\n\nClick Sync in the sidebar.\n\n### Mobile\n\nTap the Sync icon.\n\n"
        "## Pricing\n\nOne plan per vault.\n\n## Limits\n\n" + "Each vault holds at most ten gigabytes. " * 8 + "\n",
        "sync",
    )
    chunks = chunk_document(parsed, 1000)
    set_up = next(s.index for s in parsed.sections if s.heading == "Set up")
    # Desktop and Mobile are Set up's subsections: one vector, and a hit on it points at Set up (read_section of
    # Set up returns them too)
    assert chunks[0].section_idx == set_up
    assert chunks[0].text == (
        "Sync > Set up\nOpen the settings and sign in to your account first.\n"
        "Desktop\nClick Sync in the sidebar.\nMobile\nTap the Sync icon."
    )
    # Pricing is small but a sibling, not a subsection: it keeps its own chunk, as does the long Limits
    assert [c.text.split("\n", 1)[0] for c in chunks] == ["Sync > Set up", "Sync > Pricing", "Sync > Limits"]
    # and a subsection that does not fit in its parent's chunk keeps its own
    assert len(chunk_document(parsed, 120)) == 5
