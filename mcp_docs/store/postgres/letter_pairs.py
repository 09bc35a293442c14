"""Thai, Lao, Khmer and Myanmar words inside a sentence, for PostgreSQL's text search.

These scripts write no spaces between words, and PostgreSQL's text-search parser cuts their runs at each vowel
sign and tone mark: a word inside a sentence matched none of the fragments (the embedded store indexes these
runs as letter pairs, store/embedded/fulltext.py). Here each section's runs add their letter pairs, and its single letters,
to the text its tsvector is built from, and a query's runs are searched by their pairs, as in Tantivy.

A pair is written as one ASCII token the parser keeps whole: `sea` and the code points in hexadecimal, five
digits each. A token of letters and digits is a `numword` to the parser, which every configuration (`english`,
`french`, `simple`, ...) maps to the `simple` dictionary: lowercased, never stemmed, so a section and a query
agree whatever the language's configuration.
"""

from __future__ import annotations

from ...language import SOUTHEAST_ASIAN_RUN, cjk_terms
from ...query_text import fold_marks

PREFIX = "sea"


def pair_words(text: str, letters: bool = False) -> list[str]:
    """The letter pairs of every Thai, Lao, Khmer or Myanmar run of `text`, each as one token; with `letters` (a
    section, not a query), every letter of a longer run as well."""
    return [_token(term) for run in SOUTHEAST_ASIAN_RUN.findall(text) for term in cjk_terms(run, letters=letters)]


def with_pairs(text: str) -> str:
    """`text` for `to_tsvector`, followed by its runs' pair tokens (none: `text` unchanged)."""
    return text + pair_suffix(text)


def pair_suffix(text: str) -> str:
    """What `with_pairs` appends to `text` (empty when it has no such run): the bulk load sends it beside the
    body, so that the stored body stays the text itself."""
    words = pair_words(text, letters=True)
    return f"\n{' '.join(words)}" if words else ""


def words_text(text: str) -> str | None:
    """The text a section's body tsvector is built from when it is not the body itself: composed (NFC), without the
    marks query_text.fold_marks drops (harakat, niqqud, the combining accents of a file saved decomposed), as a
    query's words are. None when that is the body (most text): the body is not sent twice. PostgreSQL's parser
    keeps a Devanagari or Tamil word whole with its marks (C.UTF-8); a decomposed 'é' was a word apart."""
    folded = fold_marks(text)
    return None if folded == text else folded


def _token(term: str) -> str:
    return PREFIX + "".join(f"{ord(c):05x}" for c in term)
