"""Document-level evidence a section score cannot see: does the document as a whole answer the query?

Sections are ranked one by one, so a page on the question's topic loses to a page that mentions the query's
words once, in one well-matching section (the .NET page listing metric instruments before the concept page on
metrics, a blog post before the docs page). Three signals, read for the ~10 best candidate documents only:

- coverage: the share of the query's words (IDF-weighted) found anywhere in the document, not just in its best
  section;
- path: the share found in the document's path (`en/docs/concepts/sampling/index.md` is about sampling), a
  field nothing else indexes;
- language: the document is in the query's language (function words tell; an identifier alone says nothing).

The words are compared as the full-text index analyses them (the same stemmed terms, see fulltext.py), from
each document's set of terms computed once while indexing (the catalog's `doc_terms` table): a query only
looks up the rows of its candidate documents. Pure: the analysis and the look-ups are the callers'.
"""

from __future__ import annotations

import array
import bisect
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..query_text import CODE_MARK, IDENTIFIER, QUERY_STOPWORDS, word_field_words

# Each candidate document's score gains the best document's score times
# COVERAGE_WEIGHT x coverage + PATH_WEIGHT x path + LANGUAGE_WEIGHT x (same language), each within [0, 1].
# Tuned on the OpenTelemetry questions, keyword lists (benchmarks/REPORT.md, "Answer-first results (issue 13)"):
# doc hit@1 0.733 -> 0.800, both halves gaining (odd 0.842 -> 0.895, even 0.622 -> 0.703); coverage 0.5-0.7,
# path 0.2-0.5 and language 0.1-0.3 are one plateau. Coverage alone gives 0.773, path alone 0.760, language 0.747.
COVERAGE_WEIGHT = 0.5
PATH_WEIGHT = 0.3
LANGUAGE_WEIGHT = 0.2
# How many of the best documents are looked at: the right one is nearly always among them (0.800 at 10, 15,
# 20 and 30; 0.787 at 5), and each costs a catalog row.
CANDIDATES = 10


@dataclass(frozen=True)
class DocumentTerms:
    """What indexing kept of one document: its language, its distinct stemmed terms as sorted 32-bit hashes
    (`pack_terms`: ~1 KB for an OpenTelemetry page, against 2.4 KB as text, and a binary search instead of a
    scan), and its path's terms as text (" term term "). `sections`: how many sections it has, read with the
    row (0: not known, counted as several)."""

    lang: str
    terms: bytes
    path: str
    sections: int = 0


@dataclass(frozen=True)
class QueryWord:
    """One word of the query: its terms in the stemmed fields, each with the languages whose documents it is
    written that way in (fulltext.FullTextIndex._stem_terms), and its weight (IDF)."""

    terms: Mapping[str, tuple[str, ...]]
    weight: float


@dataclass(frozen=True)
class QuerySignals:
    words: tuple[QueryWord, ...]
    language: str | None  # None: the query does not say
    # each word's share of the weights, and its terms: hashed, spelled " term " (for the path), their languages
    _patterns: tuple[tuple[float, tuple[tuple[int, str, tuple[str, ...]], ...]], ...] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        total = sum(w.weight for w in self.words)
        patterns = tuple(
            (w.weight / total, tuple((term_hash(t), f" {t} ", codes) for t, codes in w.terms.items()))
            for w in self.words
            if total > 0
        )
        object.__setattr__(self, "_patterns", patterns)

    def bonus(self, doc: DocumentTerms, fused: bool = False) -> float:
        """The share of the best document's score this document gains; `fused`: that score is hybrid's (see
        `coverage_weight`)."""
        covered = in_path = 0.0
        view = memoryview(doc.terms).cast("I")
        size = len(view)
        lang = doc.lang
        for share, terms in self._patterns:
            found = placed = False
            for h, spelled, codes in terms:
                if lang not in codes:  # a term stands for its own languages' documents only
                    continue
                if not found:
                    i = bisect.bisect_left(view, h)
                    found = i < size and view[i] == h
                placed = placed or spelled in doc.path
            covered += share * found
            in_path += share * placed
        same = self.language is not None and doc.lang == self.language
        return share_of_best(covered, in_path, same, doc.sections, fused, words=bool(self._patterns))


def share_of_best(
    covered: float, in_path: float, same_language: bool, sections: int, fused: bool = False, words: bool = False
) -> float:
    """The share of the best document's score a document gains from its signals, each within [0, 1]: the weighted
    shares of the query's words found in it (`covered`) and in its path (`in_path`), and whether it is in the
    query's language; `sections`: how many it has (0: not known); `words`: whether the query has words these
    signals can look for. Both stores weigh their signals here."""
    # The language counts only for a document that holds some of the query's words: a page in the asker's
    # language about something else (a French note on bicycles, for a French question on log levels) took the
    # bonus and went above the English-only page that answers (tests/search/test_translations.py). A query with no
    # such words (Thai, Khmer: their runs are not words here) is told by its language alone, as before.
    same = 1.0 if same_language and (not words or covered > 0 or in_path > 0) else 0.0
    return sections_coverage_weight(sections, fused) * covered + PATH_WEIGHT * in_path + LANGUAGE_WEIGHT * same


# A page of very many sections holds nearly any query's words somewhere (the Obsidian help's command reference,
# "Obsidian CLI", 163 sections in every language, came first for "restore a deleted file" in Japanese, Korean,
# Ukrainian, Czech, Indonesian): past this many sections, coverage counts in proportion. On
# benchmarks/multilingual_eval.py, chosen on the odd half (lang@1 keyword 0.452 -> 0.484, hybrid 0.452 -> 0.484;
# 20 and 40 alike, 80 no change), the even half unchanged; OpenTelemetry questions unchanged in keyword and
# hybrid, French cross-lingual hybrid hit@1 0.229 -> 0.257; SciFact (one section each) unchanged by construction.
LONG_DOCUMENT_SECTIONS = 40


def coverage_weight(doc: DocumentTerms, fused: bool = False) -> float:
    """How much the coverage signal counts for `doc`: COVERAGE_WEIGHT, or nothing for a document of one section
    ranked by BM25 alone. Coverage is evidence from a document's other sections (the page's words spread over it,
    not just in its best section); a document of one section has none, its one section's BM25 has already weighed
    every word it holds, and counting them again reordered such documents by a coarse count of matched words:
    SciFact abstracts, keyword nDCG@10 0.692 -> 0.689 with the signals, 0.692 with this gate. `fused`: the score is
    hybrid's, partly a cosine, and there coverage gives back the words' evidence the fusion diluted (SciFact hybrid
    0.731 with it, 0.730 without), so it counts. The OpenTelemetry questions are the same either way, in both
    modes (benchmarks/REPORT.md, "Search quality, issue 31 items 1–2")."""
    return sections_coverage_weight(doc.sections, fused)


def sections_coverage_weight(sections: int, fused: bool = False) -> float:
    """coverage_weight of a document of `sections` sections (0: not known, counted as several)."""
    weight = COVERAGE_WEIGHT if fused or sections != 1 else 0.0
    if sections > LONG_DOCUMENT_SECTIONS:  # see LONG_DOCUMENT_SECTIONS
        weight *= LONG_DOCUMENT_SECTIONS / sections
    return weight


def term_hash(term: str) -> int:
    """A term's 32-bit hash, the same in every process (two of one document's ~250 terms sharing one, odds
    ~1e-7, would count the second as present when the first is)."""
    return zlib.crc32(term.encode("utf-8", "surrogatepass"))


def pack_terms(terms: Iterable[str]) -> bytes:
    """A document's terms → the stored form (see DocumentTerms): sorted distinct hashes as C unsigned ints
    (32 bits on every platform Python supports), in the machine's byte order (the index folder is read where
    it was written; the full-text index is rebuilt anyway when moved to another root)."""
    return array.array("I", sorted({term_hash(t) for t in terms})).tobytes()


def joined(terms: Iterable[str]) -> str:
    """Path terms → their stored form (see DocumentTerms)."""
    return f" {' '.join(sorted(set(terms)))} "


def signal_words(text: str) -> list[str]:
    """The query's words the signals weigh, as both stores read them: its words for the word fields, without the
    query stopwords (unless it has nothing else) and without the words of its code identifiers. The words of an
    identifier (OTEL_TRACES_SAMPLER_ARG) name it; they do not say what the page is about, and the identifier is
    matched whole already: a page in a `traces` folder is no better an answer. OpenTelemetry questions, keyword
    doc hit@5: 0.933 with them, 0.947 without."""
    words = word_field_words(text)
    content = [w for w in words if w not in QUERY_STOPWORDS] or words
    code = IDENTIFIER.sub(lambda m: " " if CODE_MARK.search(m.group(0)) else m.group(0), text)
    if code != text:
        outside = set(word_field_words(code))
        content = [w for w in content if w in outside]
    return content


def query_language(words: Iterable[str], stopwords: Mapping[str, frozenset[str]]) -> str | None:
    """The one language (of `stopwords`: the collection's) whose function words the query uses most, or None
    when it uses none or two languages tie ("Collector quick start", "OTEL_PYTHON_EXCLUDED_URLS")."""
    votes: dict[str, int] = {}
    for word in words:
        for code, function_words in stopwords.items():
            if word in function_words:
                votes[code] = votes.get(code, 0) + 1
    if not votes:
        return None
    best = max(votes.values())
    leaders = [code for code, n in votes.items() if n == best]
    return leaders[0] if len(leaders) == 1 else None
