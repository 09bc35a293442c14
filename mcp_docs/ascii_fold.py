"""Accents folded as the embedded store folds them: Tantivy's `ascii_fold` filter, as a table for Python and SQL.

The embedded store's word fields end with `tantivy.Filter.ascii_fold()` (Lucene's ASCIIFoldingFilter), so 'vlastní',
'sayısı' and 'cách' are found by 'vlastni', 'sayisi' and 'cach'. The PostgreSQL store folds the text it builds a
section's tsvector from, and a query's words, with this module (the `unaccent` extension may not be installed on a
user's server), so both stores fold alike: the table is read from that very filter, one pass over every code point
(~40 ms, once per process), not written by hand. It folds Latin letters, and punctuation, digits and letters in
their fullwidth, circled or ligature forms; Cyrillic, Greek, Arabic, Indic and CJK text it leaves as it is ('й'
stays 'й', whose Russian stem differs from 'и''s).
"""

from __future__ import annotations

from functools import cache

import tantivy

# The planes Lucene's table covers (its last entry is U+FF5E); above them nothing folds.
_LAST = 0x2FFFF
_SEPARATOR = "\x00"  # folds to itself, and no character folds to it


@cache
def fold_table() -> dict[int, str]:
    """Code point → what Tantivy's ascii_fold makes of it, for every character it changes."""
    analyzer = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw()).filter(tantivy.Filter.ascii_fold()).build()
    chars = [chr(c) for c in range(1, _LAST + 1) if not 0xD800 <= c < 0xE000]
    folded = analyzer.analyze(_SEPARATOR.join(chars))[0].split(_SEPARATOR)
    if len(folded) != len(chars):  # a filter that folded the separator: fold nothing rather than misalign
        raise RuntimeError("tantivy's ascii_fold changed the separator: cannot read its table")
    return {ord(c): f for c, f in zip(chars, folded, strict=True) if c != f}


def ascii_fold(text: str) -> str:
    """`text` with its accents folded as the embedded store's analyzers fold them ('Vlastní doména' → 'Vlastni
    domena', 'Straße' → 'Strasse'); case is kept (each store lowercases on its own)."""
    return text if text.isascii() else text.translate(fold_table())


def sql_fold(expression: str) -> str:
    """A SQL expression folding `expression` as `ascii_fold` does, for text only the database holds in a statement
    (a result's path): `translate` for the characters folded to one, `replace` for the few Latin letters folded to
    two (æ, œ, ß, þ, ĳ); the other multi-character forms (ligatures, circled numbers) are left, as no path or word
    of the vaults measured holds them."""
    table = fold_table()
    # not the quote (the literal's own) nor '%' (a placeholder to psycopg, which sends the statement with parameters)
    single = {c: f for c, f in table.items() if len(f) == 1 and f not in "'%"}
    source = "".join(chr(c) for c in single)
    target = "".join(single.values())
    sql = f"translate({expression}, '{source}', '{target}')"
    for letter in "æÆœŒßẞþÞĳĲ":
        sql = f"replace({sql}, '{letter}', '{table[ord(letter)]}')"
    return sql
