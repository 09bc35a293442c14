"""Thai, Lao, Khmer and Myanmar words inside a sentence, and Chinese, Japanese and Korean ones, for PostgreSQL's
text search.

These scripts write no spaces between words, and PostgreSQL's text-search parser cuts their runs at each vowel
sign and tone mark (a CJK sentence it keeps as one word): a word inside a sentence matched none of the fragments (the embedded store indexes these
runs as letter pairs, store/embedded/fulltext.py). Here each section's runs add their letter pairs, and its single letters,
to the text its tsvector is built from, and a query's runs are searched by their pairs, as in Tantivy.

A pair is written as one ASCII token the parser keeps whole: `sea` and the code points in hexadecimal, five
digits each. A token of letters and digits is a `numword` to the parser, which every configuration (`english`,
`french`, `simple`, ...) maps to the `simple` dictionary: lowercased, never stemmed, so a section and a query
agree whatever the language's configuration.
"""

from __future__ import annotations

from functools import lru_cache

from ...ascii_fold import ascii_fold
from ...language import NO_SPACE_RUN, SOUTHEAST_ASIAN_RUN, cjk_terms
from ...query_text import fold_marks, spaced_text

PREFIX = "sea"


def pair_words(text: str, letters: bool = False) -> list[str]:
    """The letter pairs of every Chinese, Japanese, Korean, Thai, Lao, Khmer or Myanmar run of `text`, each as one
    token; with `letters` (a section, not a query), every letter of a longer run as well. The CJK runs too, as the
    embedded store's `cjk` field: the parser keeps a Chinese or Japanese sentence as one word, which no question
    matched (every Chinese and Japanese question of the Obsidian help's multilingual evaluation found nothing)."""
    return [_token(term) for run in NO_SPACE_RUN.findall(text) for term in cjk_terms(run, letters=letters)]


def with_pairs(text: str) -> str:
    """`text` for `to_tsvector`, its Thai, Lao, Khmer and Myanmar runs as their pair tokens only (none: `text`
    unchanged). The parser's fragments of those runs were never searched (a query's runs are its pairs), and
    only made their sections longer (`bm25_length`)."""
    return (spaced_text(text) if SOUTHEAST_ASIAN_RUN.search(text) else text) + pair_suffix(text)


def pair_suffix(text: str) -> str:
    """What `with_pairs` appends to `text` (empty when it has no such run): the bulk load sends it beside the
    body, so that the stored body stays the text itself."""
    words = pair_words(text, letters=True)
    return f"\n{' '.join(words)}" if words else ""


def words_text(text: str) -> str | None:
    """The text a section's body tsvector is built from when it is not the body itself: composed (NFC), without the
    marks query_text.fold_marks drops (harakat, niqqud, the combining accents of a file saved decomposed), and its
    accents folded as the embedded store folds them (`word_fold`), as a query's words are. None when that is the
    body (most English text): the body is not sent twice. PostgreSQL's parser keeps a Devanagari or Tamil word
    whole with its marks (C.UTF-8); a decomposed 'é' was a word apart."""
    folded = word_fold(spaced_text(text))  # Thai, Khmer...: their pairs alone (`pair_suffix`), as in Tantivy
    return None if folded == text else folded


def word_fold(text: str) -> str:
    """A text's words, or a query's, as PostgreSQL's tsvectors hold them: without the marks of fold_marks, and
    accent-folded by the embedded store's filter (ascii_fold.py), before the configuration stems them. So 'vlastni'
    finds 'vlastní', 'sayisi' 'sayısı' and 'cach dung' 'cách dùng' in every configuration, the stemmed ones too
    (the stemmer sees the same folded word in the section and in the query): no word was found without its accents
    before."""
    return ascii_fold(fold_marks(text))


def bm25_length(text: str, tokens: int) -> int:
    """A section's length for BM25's normalisation: its `tokens` (the estimate of its text) without its Thai, Lao,
    Khmer and Myanmar runs, which the word terms no longer hold (the embedded store's word fields do not either,
    query_text.spaced_text). A Thai page's 'Canvas' then weighs as a word of a short page, not of one ten times
    longer: "Canvas คืออะไร" ranked 22 other languages' Canvas pages above the Thai one. The same estimate (about
    four UTF-8 bytes a token, tokens.py), so the other sections' lengths are their tokens unchanged."""
    runs = sum(len(run.encode("utf-8")) for run in SOUTHEAST_ASIAN_RUN.findall(text))
    return max(1, tokens - runs // 4) if runs else tokens


# A few thousand pairs make up most of a language's text: each spelled once (on the Obsidian help vault the spelling
# was most of the writer's time for these texts once the CJK runs had their pairs too).
@lru_cache(maxsize=1 << 16)
def _token(term: str) -> str:
    return PREFIX + "".join(f"{ord(c):05x}" for c in term)
