"""The search result as the model reads it: small, answer first, every section still reachable."""

from __future__ import annotations

from pathlib import Path

from mcp_docs.library import Library
from mcp_docs.models import DocumentMatch, IndexInfo, SearchResult, SectionMatch
from mcp_docs.render import ALSO_RANKS, render_search
from mcp_docs.search.results import LEAD_SNIPPET_CHARS, OTHER_SNIPPET_CHARS
from mcp_docs.settings import Settings
from mcp_docs.snippets import make_snippet

WORDS = "the exporter retries a failed batch with exponential backoff until the queue is full " * 6


def five_documents() -> SearchResult:
    """A 5-document result of the usual shape (heading paths of ~30 characters, the OpenTelemetry docs' mean),
    at its largest: three sections each, full-width snippets."""
    results = []
    for d in range(5):
        sections = [
            SectionMatch(
                heading=f"Retries {s}",
                heading_path=f"Configure the exporter > Retries {s}",
                line_start=10 * s + 1,
                line_end=10 * s + 9,
                snippet=make_snippet(WORDS, ["exporter", "retries", "queue"], 220),
            )
            for s in range(3)
        ]
        results.append(
            DocumentMatch(
                id=f"en/docs/collector/guide-{d}.md", title=f"Guide {d} to exporters", score=1.0, sections=sections
            )
        )
    return SearchResult(
        query="exporter retries queue", mode_used="hybrid", results=results, index=IndexInfo(documents=835)
    )


def test_a_five_document_result_renders_in_under_1500_characters() -> None:
    text = render_search(five_documents())
    assert len(text) <= 1500, len(text)


def test_each_document_leads_with_a_snippet_and_lists_its_other_sections() -> None:
    result = five_documents()
    lines = render_search(result).splitlines()
    for rank, doc in enumerate(result.results, start=1):
        at = lines.index(f"{rank}. {doc.id} — {doc.title}")
        lead = doc.sections[0]
        assert lines[at + 1].startswith(f"   § {lead.heading_path} (L{lead.line_start}-{lead.line_end}): ")
        assert "**exporter**" in lines[at + 1]  # why it matched
        also = lines[at + 2]
        if rank <= ALSO_RANKS:  # the other sections by heading path and lines, ready for read_section
            assert also == "   also § " + "; § ".join(
                f"{s.heading_path} (L{s.line_start}-{s.line_end})" for s in doc.sections[1:]
            )
        else:
            assert not also.startswith("   also")
    assert lines[-1].startswith("Next: read_section(")


def test_lead_sections_get_the_wide_snippet_the_others_a_short_one(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    body = ("Retry the export with backoff when the queue is full. " * 12).strip()
    (root / "guide.md").write_text(f"# Retry\n\n{body}\n\n## Retry queue\n\n{body}\n\n## Retry limits\n\n{body}\n")
    with Library(Settings.load(root, tmp_path / "index", embeddings="none", environ={})) as lib:
        lib.sync()
        sections = lib.search("retry queue backoff", mode="keyword").results[0].sections
    assert len(sections) == 3
    lengths = [len(s.snippet.replace("**", "")) for s in sections]
    assert LEAD_SNIPPET_CHARS - 30 <= lengths[0] <= LEAD_SNIPPET_CHARS + 2
    assert all(n <= OTHER_SNIPPET_CHARS + 2 for n in lengths[1:]), lengths
