"""Heading matching of read_section (mcp_docs.section_match.match_section): case and accents ignored, exact first."""

import pytest

from mcp_docs.errors import SectionAmbiguous, SectionNotFound, ToolInputError
from mcp_docs.markdown import parse_markdown
from mcp_docs.section_match import match_section

DOC = parse_markdown(
    "# Suivi des élèves\n\nTexte.\n\n## Réunions\n\nParents.\n\n### Ordre du jour\n\nPoints.\n\n"
    "## Élèves en difficulté\n\nAide.\n\n## Reunions\n\nUne autre, sans accent.\n\n## Café\n\nPause.\n\n## Cafe au lait\n\nRecette.\n"
).sections


def heading_path(wanted: str) -> str:
    return match_section(DOC, wanted, "fr/suivi.md").heading_path


@pytest.mark.parametrize(
    ("wanted", "expected"),
    [
        ("cafe", "Suivi des élèves > Café"),
        ("CAFÉ", "Suivi des élèves > Café"),
        ("eleves en difficulte", "Suivi des élèves > Élèves en difficulté"),
        ("difficulte", "Suivi des élèves > Élèves en difficulté"),  # a unique partial match
        ("suivi des eleves > reunions > ordre du jour", "Suivi des élèves > Réunions > Ordre du jour"),
        ("reunions > ordre", "Suivi des élèves > Réunions > Ordre du jour"),
    ],
)
def test_accents_and_case_are_ignored(wanted: str, expected: str) -> None:
    assert heading_path(wanted) == expected


def test_the_spelling_as_written_wins_over_an_accent_free_match() -> None:
    # Both headings fold to 'reunions': the one spelled as asked is chosen, not an ambiguity.
    assert heading_path("Réunions") == "Suivi des élèves > Réunions"
    assert heading_path("reunions") == "Suivi des élèves > Reunions"
    assert heading_path("Suivi des élèves > Réunions") == "Suivi des élèves > Réunions"


def test_an_exact_accent_free_match_beats_a_partial_one() -> None:
    # 'cafe' is inside 'Cafe au lait' as written, and equal to 'Café' once accents are ignored: equality wins.
    assert heading_path("cafe") == "Suivi des élèves > Café"
    assert heading_path("cafe au") == "Suivi des élèves > Cafe au lait"


def test_a_partial_match_in_several_headings_is_ambiguous_and_lists_them() -> None:
    with pytest.raises(SectionAmbiguous, match="ambiguous") as exc:
        match_section(DOC, "eleves", "fr/suivi.md")
    assert "Élèves en difficulté" in str(exc.value) and "'Suivi des élèves'" in str(exc.value)


def test_a_heading_longer_than_the_clip_limit_is_found_as_written_in_the_document() -> None:
    # Headings are clipped to 200 characters where they are parsed; a model copies one whole from the text.
    long_a = "Why does the collector drop spans when the exporter queue is full " * 4
    long_b = "and how do I tune the queue size, the consumers and the memory limiter together " * 4
    doc = parse_markdown(f"# FAQ\n\n## {long_a.strip()}\n\nA.\n\n## {long_b.strip()}\n\nB.\n").sections
    for wanted, body in ((long_a, "A."), (f"FAQ > {long_b}", "B."), (long_b + " > ", "B.")):
        found = match_section(doc, wanted, "faq.md")  # was "No section '…'"
        assert found.body.strip() == body


def test_a_heading_that_names_no_section_is_section_not_found_and_lists_the_headings() -> None:
    """Named for what failed (issue 28), still a ToolInputError for read_section's anchor fallback and the server."""
    with pytest.raises(SectionNotFound, match="No section 'Budget'") as exc:
        match_section(DOC, "Budget", "fr/suivi.md")
    assert isinstance(exc.value, ToolInputError) and "'Suivi des élèves > Café'" in str(exc.value)
    with pytest.raises(SectionNotFound, match="has no sections"):
        match_section((), "Budget", "empty.md")


TURKISH = parse_markdown("# İçe aktarma\n\nGiriş.\n\n## İçerik\n\nMetin.\n\n## Işık ayarları\n\nAçık.\n").sections


@pytest.mark.parametrize(
    ("wanted", "expected"),
    [
        ("icerik", "İçe aktarma > İçerik"),  # casefold made 'İ' an 'i' and a combining dot: no accent-free match
        ("ice aktarma > icerik", "İçe aktarma > İçerik"),
        ("İÇERİK", "İçe aktarma > İçerik"),
        ("isik ayarlari", "İçe aktarma > Işık ayarları"),  # dotless 'ı', as the index folds it
    ],
)
def test_turkish_headings_are_found_without_their_accents(wanted: str, expected: str) -> None:
    assert match_section(TURKISH, wanted, "tr/ice.md").heading_path == expected
