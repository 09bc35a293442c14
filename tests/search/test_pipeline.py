"""The search pipeline over a store that is not the library: a tiny in-memory one implementing only what
search.sources.SearchSources asks for. It proves the pipeline reads the stores it is given and nothing else (a
third store, or the library composed over a Store protocol, passes its own in)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mcp_docs.index.hits import RankedSection
from mcp_docs.search import pipeline
from mcp_docs.search.request import SearchRequest
from mcp_docs.store.api import SectionHit


@dataclass
class Page:
    id: str
    lang: str
    sections: list[tuple[str, str]]  # heading, body
    tags: tuple[str, ...] = ()
    front_matter: dict[str, Any] = field(default_factory=dict)


class MemoryCatalog:
    """The catalog reads a search makes, over a list of pages."""

    def __init__(self, pages: list[Page]) -> None:
        self.pages = {p.id: p for p in pages}

    def count(self) -> int:
        return len(self.pages)

    def named_languages(self, doc_ids: list[str]) -> dict[str, str | None]:
        return {i: self.pages[i].front_matter.get("lang") for i in doc_ids}

    def languages_of(self, doc_ids: list[str]) -> dict[str, str]:
        return {i: self.pages[i].lang for i in doc_ids}

    def language_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for page in self.pages.values():
            counts[page.lang] = counts.get(page.lang, 0) + 1
        return counts

    def section_counts(self, doc_ids: list[str]) -> dict[str, int]:
        return {i: len(self.pages[i].sections) for i in doc_ids}

    def document(self, doc_id: str) -> Page | None:
        return self.pages.get(doc_id)

    def front_matters(self, doc_ids: list[str]) -> dict[str, dict[str, object]]:
        return {i: self.pages[i].front_matter for i in doc_ids if i in self.pages}


class Heard:
    """The embedding worker's hook: what the searches returned."""

    def __init__(self) -> None:
        self.ids: list[list[str]] = []

    def searched_for(self, doc_ids: Iterable[str]) -> None:
        self.ids.append(list(doc_ids))


class MemorySources:
    """Keyword search by shared words; no vectors, no reranker, no document signals."""

    vectors = None
    reranker = None

    def __init__(self, pages: list[Page]) -> None:
        self.catalog = MemoryCatalog(pages)
        self.embedding = Heard()
        self.languages = frozenset(p.lang for p in pages) or frozenset({"en"})
        self.asked: list[tuple[str, int, str | None, tuple[str, ...]]] = []

    def keyword_hits(
        self, query: str, limit: int, folder: str | None = None, tags: Iterable[str] = ()
    ) -> list[SectionHit]:
        self.asked.append((query, limit, folder, tuple(tags)))
        words = set(re.findall(r"\w+", query.lower()))
        hits = []
        for page in self.catalog.pages.values():
            if folder and not page.id.startswith(folder + "/"):
                continue
            if not set(tags) <= set(page.tags):
                continue
            for i, (heading, body) in enumerate(page.sections):
                score = len(words & set(re.findall(r"\w+", f"{heading} {body}".lower())))
                if score:
                    section = RankedSection(
                        page.id, i, page.sections[0][0], heading, heading, i + 1, i + 2, body, page.tags
                    )
                    hits.append(SectionHit(page.id, float(score), section))
        hits.sort(key=lambda h: -h.score)
        return hits[:limit]

    def document_bonus(self, query: str, by_key: bool = False, fused: bool = False) -> None:
        return None

    def empty_note(self) -> str | None:
        return None if self.catalog.pages else "Nothing is indexed."


PAGES = [
    Page("en/tides.md", "en", [("Tides", "The moon pulls the sea."), ("High tide", "High tide comes twice a day.")]),
    Page(
        "fr/tides.md", "fr", [("Marées", "La lune attire la mer."), ("Marée haute", "La marée haute: tide deux fois.")]
    ),
    Page("en/bread.md", "en", [("Bread", "Knead the dough and bake it.")], tags=("kitchen",)),
]


def test_keyword_search_over_another_store_ranks_documents_and_shows_a_translation_once() -> None:
    sources = MemorySources(PAGES)
    result = pipeline.search(sources, SearchRequest("when is high tide", 5, "keyword"))
    assert result.mode_used == "keyword"
    assert [r.id for r in result.results] == ["en/tides.md"]  # and its French version named, not listed
    assert result.note == "Pages found in several languages are shown once: en/tides.md (also fr/tides.md)."
    lead = result.results[0].sections[0]
    assert lead.heading == "High tide" and "twice" in lead.snippet
    assert result.index.documents == 3 and result.index.pending_embeddings == 0
    # the depth of candidates was worked out once: 50 sections for 5 documents
    assert sources.asked == [("when is high tide", 50, "", ())]
    assert sources.embedding.ids == [["en/tides.md"]]  # the hook hears what was returned


def test_filters_reach_the_store_and_a_vector_mode_falls_back_with_its_note() -> None:
    sources = MemorySources(PAGES)
    result = pipeline.search(sources, SearchRequest("bake the dough", 5, "hybrid", "en", ("kitchen",)))
    assert result.mode_used == "keyword"
    assert result.note == "hybrid search is unavailable (embeddings are off): keyword results shown."
    assert [r.id for r in result.results] == ["en/bread.md"]
    assert sources.asked == [("bake the dough", 50, "en", ("kitchen",))]


def test_an_empty_store_says_why_nothing_was_found() -> None:
    sources = MemorySources([])
    result = pipeline.search(sources, SearchRequest("anything", 3, "semantic"))
    assert result.results == [] and result.mode_used == "keyword"
    assert result.note == "Nothing is indexed."
