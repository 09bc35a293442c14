"""The Tantivy full-text index on real files in a tmp dir: OR over stemmed words, exact identifiers, folder and
tag filters, deletes, the single writer across processes' handles, and reopening what was committed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_docs.errors import IndexBusy
from mcp_docs.query_text import identifiers, query_words
from mcp_docs.store.embedded import ownership
from mcp_docs.store.embedded.fulltext import FullTextIndex, SectionDoc, ancestor_folders


def section(doc_id: str, body: str, idx: int = 0, tags: tuple[str, ...] = (), lang: str = "en") -> SectionDoc:
    folder = doc_id.rsplit("/", 1)[0] if "/" in doc_id else ""
    title = doc_id.rsplit("/", 1)[-1].removesuffix(".md").title()
    return SectionDoc(doc_id, idx, title, f"Part {idx}", f"{title} > Part {idx}", 2, 1, 9, body, tags, folder, lang)


@pytest.fixture
def index(tmp_path: Path) -> Iterator[FullTextIndex]:
    ownership.claim(tmp_path / "idx")
    fulltext = FullTextIndex(tmp_path / "idx" / "fulltext")
    fulltext.add_sections(
        [
            section(
                "ops/backups.md", "The database is dumped nightly and the dumps are restored quarterly.", tags=("ops",)
            ),
            section("ops/deploy.md", "Set OTEL_EXPORTER_OTLP_ENDPOINT before deploying the collector.", tags=("ops",)),
            section("pets/cats.md", "Cats sleep sixteen hours a day.", tags=("pets",)),
            section("pets/cats.md", "Cats restore their energy by sleeping.", idx=1, tags=("pets",)),
        ]
    )
    fulltext.end()
    yield fulltext


def ids(
    index: FullTextIndex, text: str, folder: str | None = None, tags: tuple[str, ...] = ()
) -> list[tuple[str, int]]:
    query = index.build_query(text, {"en"}, folder, tags)
    assert query is not None
    return [(s.doc_id, s.section_idx) for s, _ in index.search(query, 10)]


def test_any_stemmed_word_matches_and_more_matching_words_rank_higher(index: FullTextIndex) -> None:
    assert ids(index, "restoring dumps")[0] == ("ops/backups.md", 0)  # both words, stemmed
    assert ("pets/cats.md", 1) in ids(index, "restoring dumps")  # one word is enough (OR)


def test_an_identifier_matches_exactly_and_stopwords_alone_still_search(index: FullTextIndex) -> None:
    assert ids(index, "where is OTEL_EXPORTER_OTLP_ENDPOINT set")[0] == ("ops/deploy.md", 0)
    assert index.build_query("the of and", {"en"}) is not None
    assert index.build_query("?! --", {"en"}) is None  # nothing to search for


def test_folder_and_tag_filters_cut_before_ranking(index: FullTextIndex) -> None:
    assert {d for d, _ in ids(index, "restore", folder="pets")} == {"pets/cats.md"}
    assert {d for d, _ in ids(index, "restore", tags=("ops",))} == {"ops/backups.md"}
    assert ids(index, "restore", folder="pet") == []  # a folder is a whole path segment, not a prefix


def test_a_hit_carries_its_stored_section(index: FullTextIndex) -> None:
    query = index.build_query("sixteen hours", {"en"})
    assert query is not None
    hit, score = index.search(query, 1)[0]
    assert (hit.title, hit.heading_path, hit.line_start, hit.tags) == ("Cats", "Cats > Part 0", 1, ("pets",))
    assert hit.body.startswith("Cats sleep") and score > 0


def test_deleted_documents_are_gone_after_commit_and_a_reopened_index_keeps_the_rest(
    index: FullTextIndex, tmp_path: Path
) -> None:
    index.delete_document("pets/cats.md")
    index.end()
    assert index.num_sections() == 2
    again = FullTextIndex(tmp_path / "idx" / "fulltext")
    assert again.num_sections() == 2 and ids(again, "database") == [("ops/backups.md", 0)]


def test_a_second_writer_is_refused_with_a_clear_reason(index: FullTextIndex, tmp_path: Path) -> None:
    index.begin()
    other = FullTextIndex(tmp_path / "idx" / "fulltext")
    with pytest.raises(IndexBusy, match="another mcp-docs process"):
        other.begin()
    index.end()
    other.begin()
    other.end()


def test_query_text_is_bounded_words_and_identifiers() -> None:
    assert query_words("Install AND (Helm) OR not:this") == ["install", "and", "helm", "or", "not", "this"]
    assert identifiers("call os.path.join or foo_bar, not plain") == ["os.path.join", "foo_bar"]
    assert ancestor_folders("a/b/c") == ["a", "a/b", "a/b/c"] and ancestor_folders("") == []
