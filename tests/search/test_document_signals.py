"""Document-level signals (search/document_signals.py) through a real index: the term sets are written while
indexing, and a search ranks its best documents with them, reading only their catalog rows."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_docs.library import Library
from mcp_docs.search.document_signals import (
    COVERAGE_WEIGHT,
    LONG_DOCUMENT_SECTIONS,
    PATH_WEIGHT,
    DocumentTerms,
    QuerySignals,
    QueryWord,
    pack_terms,
)
from mcp_docs.settings import Settings
from mcp_docs.store.embedded.fulltext import FULLTEXT_SCHEMA_VERSION, doc_key

NOTES = {
    # the page about the question: its words are spread over its sections
    "concepts/tracing.md": "# Tracing\n\nEach decision is about a whole trace.\n\n## Head sampling\n\nMade early.\n\n"
    "## Tail sampling\n\nMade once the spans are complete.\n",
    # one section repeating two of the question's words: the best section, on a page about something else
    "languages/go/setup.md": "# Go setup\n\n## Exporter\n\nThe exporter sends spans.\n\n## Tail sampling\n\n"
    "Tail sampling in Go: configure tail sampling in the collector; tail sampling keeps slow spans.\n",
    # nearly the same text, in and out of the folder the question names
    "misc/notes.md": "# Notes\n\nDeploy the operator with helm; the operator watches the operator resources in kubernetes.\n",
    "kubernetes/notes.md": "# Notes\n\nDeploy the operator with helm; the operator watches resources in kubernetes.\n",
    # two pages on one subject in two languages, the English one matching a little better (not at mirrored paths:
    # a page and its translation would be one answer, search/translations.py)
    "en/data-flow.md": "# Collector\n\nThe Collector pipelines receive, process and export pipelines of data.\n",
    "fr/flux.md": "---\nlang: fr\n---\n# Collector\n\nLe Collector reçoit des données par ses pipelines.\n",
}
FILLER = {
    f"filler/n{i:02}.md": f"# Note {i}\n\nThe service {i} exports data to the backend and the team reads dashboards.\n"
    for i in range(20)
}
COVERAGE_QUESTION = "when is the tail sampling decision made"


def make_library(base: Path) -> Library:
    root = base / "vault"
    for rel, text in {**NOTES, **FILLER}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    lib = Library(Settings.load(root, base / "index", embeddings="none"))
    lib.sync()
    return lib


@pytest.fixture
def library(tmp_path: Path) -> Iterator[Library]:
    lib = make_library(tmp_path)
    yield lib
    lib.close()


def first_documents(lib: Library, query: str, n: int = 2) -> list[str]:
    return [r.id for r in lib.search(query, max_results=n, mode="keyword").results]


def best_section(lib: Library, query: str) -> str:
    return lib.keyword_sections(query, 5)[0][0].doc_id


def test_the_page_covering_the_whole_question_beats_one_section_that_repeats_part_of_it(library: Library) -> None:
    assert best_section(library, COVERAGE_QUESTION) == "languages/go/setup.md"
    assert first_documents(library, COVERAGE_QUESTION) == ["concepts/tracing.md", "languages/go/setup.md"]


def test_a_word_of_the_question_in_a_documents_path_counts(library: Library) -> None:
    assert best_section(library, "kubernetes operator") == "misc/notes.md"
    assert first_documents(library, "kubernetes operator") == ["kubernetes/notes.md", "misc/notes.md"]


def test_a_question_in_french_prefers_the_french_page(library: Library) -> None:
    # the function words are dropped from the full-text query: both questions match the same sections alike
    assert first_documents(library, "Collector pipelines") == ["en/data-flow.md", "fr/flux.md"]
    assert first_documents(library, "le Collector et les pipelines") == ["fr/flux.md", "en/data-flow.md"]


def test_the_words_of_a_code_identifier_say_nothing_about_the_page(library: Library) -> None:
    signals = library.store.fulltext.query_signals("OTEL_TRACES_SAMPLER_ARG", library._languages)
    assert signals.words == () and signals.language is None
    kept = library.store.fulltext.query_signals("OTEL_TRACES_SAMPLER_ARG ratio of sampled traces", library._languages)
    assert [sorted(w.terms) for w in kept.words] == [["trac", "trace"], ["ratio"], ["sampl"]]  # en, fr stems


def test_a_search_reads_the_term_sets_written_while_indexing(library: Library) -> None:
    stored = library.catalog.document_terms([doc_key(d) for d in NOTES])
    assert {d for d in NOTES if doc_key(d) in stored} == set(NOTES)
    assert stored[doc_key("fr/flux.md")].lang == "fr"
    assert stored[doc_key("kubernetes/notes.md")].path == " kubernet note "
    # the file changes on disk, unsynced: the search still ranks by what was indexed, never reading the file
    (library.settings.root / "concepts/tracing.md").write_text("# Tracing\n\nNothing here.\n", encoding="utf-8")
    assert first_documents(library, COVERAGE_QUESTION)[0] == "concepts/tracing.md"
    # without the rows (an index written before they existed) documents rank by their sections alone
    with library.catalog.transaction() as conn:
        conn.execute("delete from doc_terms")
    assert first_documents(library, COVERAGE_QUESTION)[0] == "languages/go/setup.md"


def test_a_changed_or_deleted_document_changes_its_term_set(library: Library) -> None:
    root = library.settings.root
    key = doc_key("concepts/tracing.md")
    (root / "concepts/tracing.md").write_text("# Tracing\n\nNothing here.\n", encoding="utf-8")
    library.sync()
    assert first_documents(library, COVERAGE_QUESTION)[0] == "languages/go/setup.md"
    assert key in library.catalog.document_terms([key])
    (root / "concepts/tracing.md").unlink()
    library.sync()
    assert library.catalog.document_terms([key]) == {}


def test_an_index_from_before_the_term_sets_is_indexed_again_once_on_opening(tmp_path: Path) -> None:
    lib = make_library(tmp_path)
    with lib.catalog.transaction() as conn:
        conn.execute("delete from doc_terms")
    lib.close()
    version = tmp_path / "index" / "fulltext" / "schema-version"
    assert version.read_text() == FULLTEXT_SCHEMA_VERSION
    version.write_text("7")  # the schema before the term sets
    lib = Library(Settings.load(tmp_path / "vault", tmp_path / "index", embeddings="none"))
    try:
        report = lib.sync()
        assert report.added == len(NOTES) + len(FILLER)
        assert first_documents(lib, COVERAGE_QUESTION)[0] == "concepts/tracing.md"
    finally:
        lib.close()


# Two abstracts of one section each (SciFact's shape): the first matches the question's main words best, the
# second names more of its words once each, in a longer text.
ABSTRACTS = {
    "abstracts/focused.md": "# Sleep and memory consolidation\n\nSleep strengthens memory consolidation.\n",
    "abstracts/broad.md": "# Cohort of ageing adults\n\nSleep, memory and consolidation were measured with attention "
    "and mood in each participant.\n",
}
ABSTRACT_QUESTION = "does sleep help memory consolidation in ageing adults"


def test_documents_of_one_section_rank_by_that_section_not_by_a_recount_of_its_words(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    filler = {
        f"filler/s{i:02}.md": f"# Study {i}\n\nPatients in cohort {i} were followed and the team reported results.\n"
        for i in range(20)
    }
    for rel, text in {**ABSTRACTS, **filler}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    with Library(Settings.load(root, tmp_path / "index", embeddings="none")) as lib:
        lib.sync()
        sections = [s.doc_id for s, _ in lib.keyword_sections(ABSTRACT_QUESTION, 5)]
        assert sections[:2] == ["abstracts/focused.md", "abstracts/broad.md"]
        # the broad abstract covers more of the question (ageing, adults), but that is what its one section's
        # score has already weighed: counted again, it took the first place (0.689 vs 0.692 on SciFact)
        assert first_documents(lib, ABSTRACT_QUESTION) == ["abstracts/focused.md", "abstracts/broad.md"]
        stored = lib.catalog.document_terms([doc_key("abstracts/focused.md")])
        assert stored[doc_key("abstracts/focused.md")].sections == 1


def test_coverage_counts_for_a_document_of_several_sections_only() -> None:
    # pure: hand-built query words and term sets, no index
    signals = QuerySignals((QueryWord({"sleep": ("en",)}, 1.0), QueryWord({"memori": ("en",)}, 1.0)), None)
    terms = pack_terms(["sleep", "memori", "other"])
    one, several, unknown = (DocumentTerms("en", terms, " note ", n) for n in (1, 3, 0))
    assert signals.bonus(one) == 0.0
    assert signals.bonus(several) == pytest.approx(COVERAGE_WEIGHT)
    assert signals.bonus(unknown) == pytest.approx(COVERAGE_WEIGHT)  # a row without the count: as before
    # hybrid's scores are partly cosines: there coverage is not a recount and counts for every document
    assert signals.bonus(one, fused=True) == pytest.approx(COVERAGE_WEIGHT)
    # the other signals still count for a document of one section
    in_path = DocumentTerms("en", terms, " sleep ", 1)
    assert signals.bonus(in_path) == pytest.approx(PATH_WEIGHT * 0.5)


def test_coverage_counts_less_for_a_page_of_very_many_sections() -> None:
    # pure: a command reference of 160 sections holds any question's words somewhere; a page of 20 that holds
    # them all is the better answer (the Obsidian help's "Obsidian CLI" page, benchmarks/multilingual_eval.py)
    signals = QuerySignals((QueryWord({"restor": ("en",)}, 1.0), QueryWord({"delet": ("en",)}, 1.0)), None)
    terms = pack_terms(["restor", "delet", "file"])
    focused, reference = DocumentTerms("en", terms, " note ", 20), DocumentTerms("en", terms, " cli ", 160)
    assert signals.bonus(focused) == pytest.approx(COVERAGE_WEIGHT)
    assert signals.bonus(reference) == pytest.approx(COVERAGE_WEIGHT * LONG_DOCUMENT_SECTIONS / 160)
    assert signals.bonus(reference, fused=True) < signals.bonus(focused, fused=True)
