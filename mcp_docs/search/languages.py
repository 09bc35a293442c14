"""A collection in several languages: the query's language, and one answer per page and its translations."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..query_language import query_language as query_language_of_text
from ..query_language import writes_query_script
from . import translations
from .ranking import DocumentGroup

if TYPE_CHECKING:
    from ..index.hits import RankedSection
    from ..index.language_mix import LanguageView
    from ..store.api import CatalogReader


def query_language(query: str, languages: frozenset[str]) -> str | None:
    """The query's language, among the collection's (mcp_docs/query_language.py: its script, its distinctive
    letters, its function words, the identifier), None when nothing tells it (an identifier, a few names, two
    languages tie). On the OpenTelemetry questions it names 93 of 110, none wrongly; the language the query's
    vector is closest to named two English identifiers French."""
    return query_language_of_text(query, languages)


def one_answer_per_translation(
    catalog: CatalogReader,
    groups: list[DocumentGroup[RankedSection]],
    language: str | None,
    view: LanguageView | None,
    limit: int,
    query: str = "",
) -> tuple[list[DocumentGroup[RankedSection]], str | None]:
    """Documents best first → the first `limit` answers, each page and its translation merged into one entry at
    the better rank of the two, showing the version in `language` (the query's, `query_language`), or the
    better-ranked one in the query's script when its words name no language (search/translations.py); and a sentence naming the
    versions left out (None when no pair was found: the documents are returned as they are).

    In every mode, so that a page is one answer whichever mode the agent picks (and hybrid, merged, is never
    compared with an unmerged keyword list). A question's words find the pages of its language, so in keyword
    search pairs are rare; on the OpenTelemetry questions the one change is a language-less identifier
    (OTEL_PYTHON_EXCLUDED_URLS) whose French page now shows as its English original, the French one named."""
    ids = [g.doc_id for g in groups]
    language_of: Callable[[str], str]
    if view is not None:
        language_of = view.language_of
    else:
        langs = catalog.languages_of(ids)
        language_of = lambda doc_id: langs.get(doc_id, "")  # noqa: E731
    sections: dict[str, int] = {}

    def same_page(a: str, b: str) -> bool:  # read once, and only when two ids could be a pair
        if not sections:
            sections.update(catalog.section_counts(ids))
        return translations.alike(sections.get(a, 0), sections.get(b, 0))

    declared = {}  # the pages whose front matter names their translations (translations.declared_key)
    for doc_id in ids:
        record = catalog.document(doc_id)
        key = translations.declared_key(record.front_matter) if record is not None else None
        if key is not None:
            declared[doc_id] = key
    writers = writes_query_script(query)  # of versions none in the query's language: one in its script
    main: list[str | None] = []

    def main_language() -> str | None:  # the collection's most frequent language, read once and only if asked
        if not main:
            counts = catalog.language_counts()
            main.append(max(counts, key=lambda code: counts[code]) if counts else None)
        return main[0]

    answers = translations.collapse(
        ids,
        language_of,
        language,
        same_page,
        declared,
        writers.write if writers is not None else None,
        main_language,
        lambda position: groups[position].score,
    )
    answers = answers[:limit]
    if not translations.has_pairs(answers):
        return groups[:limit], None
    merged = [DocumentGroup(a.shown, groups[a.rank].score, groups[a.shown_rank].hits) for a in answers]
    listed = "; ".join(f"{a.shown} (also {', '.join(a.others)})" for a in answers if a.others)
    return merged, f"Pages found in several languages are shown once: {listed}."
