"""Accents folded as the embedded store folds them: Tantivy's `ascii_fold` filter, as a table for Python and SQL.

The embedded store's word fields end with `tantivy.Filter.ascii_fold()` (Lucene's ASCIIFoldingFilter), so 'vlastní',
'sayısı' and 'cách' are found by 'vlastni', 'sayisi' and 'cach'. The PostgreSQL store folds the text it builds a
section's tsvector from, and a query's words, with this module (the `unaccent` extension may not be installed on a
user's server), so both stores fold alike: the table is read from that very filter, one pass over every code point
(~15 ms, once per process), not written by hand. It folds Latin letters, and punctuation, digits and letters in
their fullwidth, circled or ligature forms; Cyrillic, Greek, Arabic, Indic and CJK text it leaves as it is ('й'
stays 'й', whose Russian stem differs from 'и''s).
"""

from __future__ import annotations

import unicodedata
from functools import cache

import tantivy

# Lucene's table ends at U+FF5E (fullwidth forms): above the Basic Multilingual Plane nothing folds.
_LAST = 0xFFFF
_BLOCK = (
    4096  # code points read per call: a few hundred kB at a time (every code point at once added 35 MB to the peak)
)
_SEPARATOR = "\x00"  # folds to itself, and no character folds to it


@cache
def fold_table() -> dict[int, str]:
    """Code point → what Tantivy's ascii_fold makes of it, for every character it changes."""
    analyzer = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw()).filter(tantivy.Filter.ascii_fold()).build()
    table: dict[int, str] = {}
    for start in range(1, _LAST + 1, _BLOCK):
        chars = [chr(c) for c in range(start, min(start + _BLOCK, _LAST + 1)) if not 0xD800 <= c < 0xE000]
        if not chars:
            continue
        folded = analyzer.analyze(_SEPARATOR.join(chars))[0].split(_SEPARATOR)
        if len(folded) != len(chars):  # a filter that folded the separator: misaligned, so refuse to guess
            raise RuntimeError("tantivy's ascii_fold changed the separator: cannot read its table")
        table.update((ord(c), f) for c, f in zip(chars, folded, strict=True) if c != f)
    return table


def ascii_fold(text: str) -> str:
    """`text` with its accents folded as the embedded store's analyzers fold them ('Vlastní doména' → 'Vlastni
    domena', 'Straße' → 'Strasse'); case is kept (each store lowercases on its own)."""
    return text if text.isascii() else text.translate(fold_table())


def sql_fold(expression: str) -> str:
    """A SQL expression folding `expression` (NFC text) as `ascii_fold` does, for text only the database holds in a
    statement (a result's path): the combining marks after a Latin letter dropped (NFD, then NFC again), then
    `translate` for the Latin-1 and Latin Extended-A letters that do not decompose ('ı', 'đ', 'ø', 'ł', ...) and
    `replace` for those folded to two ('æ', 'œ', 'ß', 'þ', 'ĳ'). Linear in the text: a `translate` over the whole
    table (1,070 characters, which PostgreSQL scans for each character of the text) doubled a keyword search's
    database time on the Obsidian help vault (11-13 -> 24 ms). The rarer letters the table folds (IPA, Latin
    Extended-B and beyond, ligatures, fullwidth forms) are left as they are in a path."""
    table = fold_table()
    marks = "\u0300-\u036f"  # the combining diacritical marks (the characters, in the literal)
    composed = f"normalize(regexp_replace(normalize({expression}, nfd), '([A-Za-z])[{marks}]+', '\\1', 'g'), nfc)"
    single = {
        chr(c): f
        for c, f in table.items()
        if c < 0x180 and len(f) == 1 and f not in "'%" and _without_marks(chr(c)) != f
    }
    sql = f"translate({composed}, '{''.join(single)}', '{''.join(single.values())}')"
    for c, f in table.items():
        if c < 0x180 and len(f) > 1:
            sql = f"replace({sql}, '{chr(c)}', '{f}')"
    return sql


def _without_marks(char: str) -> str:
    """What `sql_fold`'s first step makes of a character: its combining marks after a Latin letter dropped."""
    decomposed = unicodedata.normalize("NFD", char)
    if len(decomposed) > 1 and decomposed[0].isascii() and decomposed[0].isalpha():
        decomposed = decomposed[0] + "".join(m for m in decomposed[1:] if not "\u0300" <= m <= "\u036f")
    return unicodedata.normalize("NFC", decomposed)
