"""A collection in several languages: the query's language, and one answer per page and its translations."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

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

    # the pages whose front matter names their translations (translations.declared_key)
    declared = declared_keys(catalog.front_matters(ids))
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


def declared_keys(front_matters: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Document id → the translation key its front matter declares, for those that declare one."""
    return {doc_id: key for doc_id, fm in front_matters.items() if (key := translations.declared_key(fm)) is not None}


# Pages in other languages → those of them that also have a version in the asker's language.
AlsoInOwn = Callable[[Sequence[str]], set[str]]


def also_in(catalog: CatalogReader, view: LanguageView, language: str) -> AlsoInOwn:
    """For hybrid's `interleave`: which pages in other languages also have a version in `language` (the asker's),
    among all the collection's documents, not only the candidates. Paired as `one_answer_per_translation` pairs
    them: by the key their front matter declares, else by their paths, with section counts alike. Read from the
    catalog only when asked: the front matter of the foreign pages, the section counts of the pairs, and the keys
    of the language's own pages (`_own_keys`, kept while the store's list of them is the same)."""

    def of(foreign: Sequence[str]) -> set[str]:
        own = view.others.get(language, ())
        if not foreign or not own:
            return set()
        own_by_key = _own_keys(catalog, own, language)
        declared = declared_keys(catalog.front_matters(list(foreign)))
        pairs = {
            f: own_by_key[k]
            for f in foreign
            if (k := declared.get(f) or translations.translation_key(f, view.language_of(f))) in own_by_key
        }
        if not pairs:
            return set()
        counts = catalog.section_counts(sorted({*pairs, *(d for ds in pairs.values() for d in ds)}))
        return {
            f for f, mine in pairs.items() if any(translations.alike(counts.get(f, 0), counts.get(d, 0)) for d in mine)
        }

    return of


# (language, the store's list of its documents) → their translation keys. The stores hand out the same list object
# until the documents change (the embedded catalog until a commit, per thread; PostgreSQL for a few seconds), so
# the front matter of a language's pages (5,000 of them in a vault half French) is read once, not for every search.
_OWN_KEYS: dict[tuple[str, int], tuple[Sequence[str], dict[str, list[str]]]] = {}


def _own_keys(catalog: CatalogReader, own: Sequence[str], language: str) -> dict[str, list[str]]:
    kept = _OWN_KEYS.get((language, id(own)))
    if kept is not None and kept[0] is own:
        return kept[1]
    declared = declared_keys(catalog.front_matters(list(own)))
    by_key: dict[str, list[str]] = {}
    for doc_id in own:
        by_key.setdefault(declared.get(doc_id) or translations.translation_key(doc_id, language), []).append(doc_id)
    if len(_OWN_KEYS) >= 64:  # lists replaced after commits, threads, libraries: forget, do not grow
        _OWN_KEYS.clear()
    _OWN_KEYS[(language, id(own))] = (own, by_key)
    return by_key
