"""Vector hits across languages: a multilingual model's cosines depend on the pair of languages, not only on meaning.

multilingual-e5-small gives a question a higher cosine with any page in the question's language than with pages
in another one: on the OpenTelemetry docs (768 English pages, 66 French), 87 % of the top-5 pages of French
questions about English pages were French pages (benchmarks/REPORT.md, issue 14). Raw cosines of two languages
are not comparable, so the vector side ranks each document language against its own background first:

    score(q, d) = cos(q, d) - q·μ(lang d) + max over languages L of q·μ(L)

where μ(L) is the mean vector of the chunks in language L, so q·μ(L) is the query's mean cosine with that
language's chunks (its level there, whatever the question is about). A page counts by how far it stands above its
language's level, put back on the scale of the language the query is closest to. This is the language-mean
centring of multilingual representations (Libovický et al. 2020, "On the language neutrality of pre-trained
multilingual representations"): q·(d - μ) = q·d - q·μ. When the collection has enough translated pages
(search/translations.py), the means are taken over those only (VectorStore.language_centroids): a page and its
translation differ by their language alone, whole languages also by their topics.

Within a language the order is unchanged; in a collection with one language nothing changes at all.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ..search import translations
from .hits import VectorHit

# A language's mean vector from fewer chunks than this says more about their topics than about the language:
# its pages keep their raw cosines.
MIN_CENTROID_CHUNKS = 30
# The share of the gap between levels a language gains: the whole gap, as measured. With the means over whole
# languages the gap held topic as well, and the English original of a French page (and other English pages)
# went above it for a French question; the means over translated pages and one answer per translation fixed
# that, not a smaller share (whole OTel docs, hybrid: 0.75 loses the cross-lingual questions, 0.800 -> 0.686
# doc hit@5; 1.25 the French ones, 0.947 -> 0.842; benchmarks/REPORT.md, issue 14, deliverable 2).
SHIFT_SHARE = 1.0
# While embedding fills in, the languages are compared only from this share of the collection's chunks on. Part-way,
# a language's pages still without vectors cannot take the ranks the vectors give that language (hybrid's
# interleave), and the embedded ones took them from keyword answers: whole OTel docs with e5, hybrid doc hit@1
# at 10 / 50 % of random documents embedded 0.667-0.800 / 0.720-0.747 against keyword's 0.800; with raw cosines
# until then 0.800 / 0.787-0.800 (benchmarks/REPORT.md, issue 11). Above it, a saved file being re-embedded
# does not switch the comparison off and on.
MIN_COVERAGE = 0.95
CENTROID_SAMPLE = 1000  # chunks averaged per language at most (evenly spread): the mean is stable well before


@dataclass(frozen=True)
class LanguageView:
    """A query's view of a collection in several languages: which document is in which language, and what each
    language's cosines gain (language_shifts)."""

    main: str  # the language of most documents: any document not listed in `others`
    others: Mapping[str, Sequence[str]]  # document ids per other language
    shifts: Mapping[str, float]
    _lang_of: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._lang_of.update({doc_id: lang for lang, ids in self.others.items() for doc_id in ids})

    def language_of(self, doc_id: str) -> str:
        return self._lang_of.get(doc_id, self.main)


def main_language(counts: Mapping[str, int]) -> str | None:
    """The language of most documents (the first in code order of those tied), or None for a collection in one
    language, where cosines are used as they are."""
    if len(counts) < 2:
        return None
    return max(sorted(counts), key=lambda lang: counts[lang])


def by_language(chunks: Iterable[tuple[int, str, str]]) -> dict[str, list[int]]:
    """(chunk id, document id, language) → the chunk ids of each language, in the order given."""
    out: dict[str, list[int]] = {}
    for cid, _, lang in chunks:
        out.setdefault(lang, []).append(cid)
    return out


def centroid_samples(
    chunks: Sequence[tuple[int, str, str]], min_chunks: int = MIN_CENTROID_CHUNKS
) -> dict[str, list[int]]:
    """The chunks each language's mean vector is taken over, from every embedded chunk as (chunk id, document id,
    language) in id order: at most CENTROID_SAMPLE per language, evenly spread, for the languages with at least
    `min_chunks`; only the chunks of translated pages when every such language has that many of them. Both stores
    read the chunks and their vectors; this picks which."""
    chunk_ids = by_language(chunks)
    # Pages and their translations say the same things: their means differ by the language alone. The means
    # of whole languages also differ by topic (on the OpenTelemetry docs the French pages are the core pages,
    # the English ones add blogs and every SDK), and that difference was given to the other language as if it
    # were the language's (benchmarks/REPORT.md, issue 14, deliverable 2). So when every language has enough
    # chunks in translated pages, the means are taken over those.
    translated = translations.translated({doc_id: lang for _, doc_id, lang in chunks}.items())
    paired = by_language([c for c in chunks if c[1] in translated])
    if paired.keys() >= {lang for lang, ids in chunk_ids.items() if len(ids) >= min_chunks} and all(
        len(ids) >= min_chunks for ids in paired.values()
    ):
        chunk_ids = paired
    samples: dict[str, list[int]] = {}
    for lang, ids in chunk_ids.items():
        if len(ids) < min_chunks:
            continue
        step = max(1, len(ids) // CENTROID_SAMPLE)
        samples[lang] = ids[::step][:CENTROID_SAMPLE]
    return samples


# (the language of most documents, the ids of the others' documents per language), or None for one language
Split = tuple[str, dict[str, list[str]]] | None
Centroids = dict[str, np.ndarray]


def view_of(
    query: np.ndarray, multilingual: bool, split: Split, centroids: Callable[[str, dict[str, list[str]]], Centroids]
) -> LanguageView | None:
    """The query's view of a collection in several languages, as both stores build it: None for a model that is not
    multilingual (MiniLM on a mixed collection: raw cosines, see Embedder.multilingual), for a collection in one
    language, and when no language has a mean to compare."""
    if not multilingual or split is None:
        return None
    main, others = split
    shifts = language_shifts(query, centroids(main, others))
    return LanguageView(main, others, shifts) if shifts else None


@dataclass
class CentroidCache:
    """Each language's mean chunk vector, kept while the languages stay and the embedded chunks change by less than
    a tenth, looked at every `refresh` seconds (a search in a collection of several languages asks each time)."""

    refresh: float
    kept: tuple[tuple[str, ...], int, float, Centroids] | None = None  # (languages, embedded chunks, when, means)

    def get(
        self, main: str, others: Mapping[str, object], embedded: Callable[[], int], compute: Callable[[], Centroids]
    ) -> Centroids:
        key = (main, *sorted(others))
        kept = self.kept
        now = time.monotonic()
        if kept is not None and kept[0] == key and now - kept[2] < self.refresh:
            return kept[3]
        count = embedded()
        if kept is not None and kept[0] == key and abs(count - kept[1]) <= 0.1 * kept[1]:
            self.kept = (key, kept[1], now, kept[3])
            return kept[3]
        centroids = compute()
        self.kept = (key, count, now, centroids)
        return centroids


def language_shifts(query: np.ndarray, centroids: Mapping[str, np.ndarray]) -> dict[str, float]:
    """What each language's cosines gain: the query's level in its closest language minus its level in this one
    (0 for the closest; {} with fewer than two languages, where there is nothing to compare)."""
    if len(centroids) < 2:
        return {}
    levels = {lang: float(np.dot(query, mean)) for lang, mean in centroids.items()}
    top = max(levels.values())
    return {lang: SHIFT_SHARE * (top - level) for lang, level in levels.items()}


def merge(per_language: Mapping[str, Sequence[VectorHit]], shifts: Mapping[str, float], limit: int) -> list[VectorHit]:
    """Each language's hits (best first, disjoint documents) with its shift added, merged best first, cut to `limit`.
    A language without a shift (too few chunks for a mean) keeps its raw cosines."""
    merged = [
        replace(hit, similarity=hit.similarity + shifts.get(lang, 0.0)) if shifts.get(lang) else hit
        for lang, hits in per_language.items()
        for hit in hits
    ]
    merged.sort(key=lambda h: -h.similarity)  # stable: ties keep the order the languages came in
    return merged[:limit]
