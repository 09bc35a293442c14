"""Search through the library: OR semantics, identifiers, languages, filters, grouping, snippets."""

import pytest

from mcp_docs.errors import PathOutsideRoot
from mcp_docs.library import Library
from mcp_docs.search.keyword import group_keyword_hits
from mcp_docs.search.ranking import group_by_document


def top(library: Library, query: str, **kw) -> list[str]:
    return [r.id for r in library.search(query, mode="keyword", **kw).results]


def test_natural_language_questions_match_with_or_semantics(library: Library) -> None:
    # Not every word is in the document: an AND of all terms would return nothing.
    assert top(library, "how do we decide about monthly restore drills for backups?")[0] == "notes/meeting-2026-01.md"


def test_stemming_and_accent_folding(library: Library) -> None:
    assert top(library, "installing agents")[0] == "guides/setup/install.md"
    assert top(library, "eleve")[0] == "fr/eleves.md"
    assert top(library, "ÉLÈVES évalués")[0] == "fr/eleves.md"
    assert top(library, "réunion")[0] == "fr/eleves.md"  # French stemming: réunion ~ réunions


@pytest.mark.parametrize("identifier", ["OTEL_EXPORTER_OTLP_ENDPOINT", "vm.swappiness", "C++"])
def test_exact_identifiers_match(library: Library, identifier: str) -> None:
    result = library.search(identifier, mode="keyword")
    assert result.results[0].id == "guides/setup/install.md"


def test_identifier_beats_its_separate_words(library: Library, vault) -> None:
    (vault / "notes" / "words.md").write_text("# Otel\n\notel exporter otlp endpoint otel exporter otlp endpoint\n")
    library.sync()
    assert top(library, "OTEL_EXPORTER_OTLP_ENDPOINT")[0] == "guides/setup/install.md"


def test_result_shape_sections_and_snippets(library: Library) -> None:
    result = library.search("linux", mode="keyword")
    assert result.mode_used == "keyword"
    assert result.index.documents == 9
    doc = result.results[0]
    assert doc.id == "guides/setup/install.md"
    assert doc.title == "Installation"
    assert 1 <= len(doc.sections) <= 3
    paths = [s.heading_path for s in doc.sections]
    assert "Installation > Linux" in paths and "Build > Linux" in paths
    linux = next(s for s in doc.sections if s.heading_path == "Installation > Linux")
    assert (linux.line_start, linux.line_end) == (5, 14)
    assert "**" in linux.snippet or linux.heading == "Linux"
    scores = [r.score for r in result.results]
    assert scores == sorted(scores, reverse=True)


def test_at_most_three_sections_per_document(library: Library, vault) -> None:
    body = "\n\n".join(f"## Part {i}\n\nrepeatedterm here" for i in range(6))
    (vault / "notes" / "parts.md").write_text(f"# Parts\n\n{body}\n")
    library.sync()
    result = library.search("repeatedterm", mode="keyword")
    assert result.results[0].id == "notes/parts.md"
    assert len(result.results[0].sections) == 3


def test_keyword_documents_read_only_the_sections_of_the_documents_shown(library: Library, vault) -> None:
    """Hits are grouped by the documents' keys (a fast field) before stored fields are read; the documents, their
    order, scores and sections are those of grouping the fully read sections."""
    for n in range(8):
        body = "\n\n".join(f"## Part {i}\n\nsharedterm " + "sharedterm " * ((n * 3 + i) % 7) for i in range(4))
        (vault / "notes" / f"shared{n}.md").write_text(f"# Shared {n}\n\n{body}\n")
    library.sync()
    hits = library.keyword_hits("sharedterm", 50)
    shown = group_keyword_hits(hits, 2)
    full = group_by_document([(s.doc_id, score, s) for s, score in library.keyword_sections("sharedterm", 50)], 2)
    assert [(g.doc_id, g.score, g.hits) for g in shown] == [(g.doc_id, g.score, g.hits) for g in full]
    assert len(hits) == 32 and sum(h.loaded for h in hits) == 8  # the 4 sections of each document shown, not 32
    assert {h.section.doc_id for h in hits if h.loaded} == {g.doc_id for g in shown}


def test_folder_and_tag_filters(library: Library) -> None:
    assert set(top(library, "linux question", folder="guides/setup")) <= {
        "guides/setup/install.md",
        "guides/setup/duplicate.md",
    }
    assert top(library, "release", folder="guides") == []
    assert top(library, "guide", tags=["style"]) == ["guides/writing.md"]
    assert top(library, "guide", tags=["#Style", "guide"]) == ["guides/writing.md"]
    assert top(library, "guide", tags=["style", "nope"]) == []
    with pytest.raises(PathOutsideRoot):
        library.search("x", folder="../outside")


@pytest.mark.parametrize(
    "query",
    [
        "",
        "   ",
        "foo:bar",
        '"unclosed',
        "AND",
        "OR NOT",
        "(((",
        "*",
        "title:x^3",
        "a" * 10_000,
        "\x00\x1b[31m",
        "💥 ∑ 漢字",
    ],
)
def test_any_text_is_a_valid_query(library: Library, query: str) -> None:
    result = library.search(query, mode="keyword")
    assert isinstance(result.results, list)


def test_huge_max_results_is_bounded(library: Library) -> None:
    assert len(library.search("the", mode="keyword", max_results=10**9).results) <= 100


def test_hybrid_without_vectors_falls_back_and_says_so(library: Library) -> None:
    result = library.search("linux", mode="hybrid")
    assert result.mode_used == "keyword"
    assert result.note and "keyword" in result.note
    assert result.results[0].id == "guides/setup/install.md"


def test_crlf_file_sections_and_search(library: Library) -> None:
    result = library.search("crlfmarker", mode="keyword")
    assert result.results[0].id == "windows.md"
    assert result.results[0].sections[0].heading_path == "Windows note > Second"
