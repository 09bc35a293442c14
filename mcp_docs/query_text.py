"""The words of a query (or of any user text) as every store and the search pipeline read them: bounded, free of
query-syntax characters, with the function words to drop and the code-like identifiers to match exactly. Pure
text: no index here."""

from __future__ import annotations

import re

from .language import INDIC_WORD, SOUTHEAST_ASIAN_RUN

MAX_QUERY_TERMS = 64
MAX_IDENTIFIERS = 200

# Function words dropped from natural-language queries (when other words remain): they match nearly every
# section and only add noise to BM25. Lucene's English list plus the French articles and prepositions.
QUERY_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
        "how",
        "what",
        "which",
        "who",
        "why",
        "when",
        "where",
        "do",
        "does",
        "did",
        "can",
        "could",
        "should",
        "would",
        "i",
        "me",
        "my",
        "we",
        "our",
        "you",
        "your",
        "au",
        "aux",
        "c",
        "ce",
        "ces",
        "d",
        "dans",
        "de",
        "des",
        "du",
        "elle",
        "en",
        "est",
        "et",
        "il",
        "l",
        "la",
        "le",
        "les",
        "leur",
        "n",
        "ne",
        "ou",
        "par",
        "pas",
        "pour",
        "qu",
        "que",
        "qui",
        "s",
        "sa",
        "se",
        "ses",
        "son",
        "sur",
        "un",
        "une",
    ]
)

WORD = re.compile(r"[^\W_]+", re.UNICODE)
CODE_MARK = re.compile(r"[_.+#]")
# Only tokens with inner punctuation (a_b, a.b, a-b) or a trailing ++/# (C++, C#): plain words are not identifiers.
# Possessive quantifiers and a word-start anchor keep this linear (it runs over every section body).
IDENTIFIER = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]++(?:(?:[_.+#-]++[A-Za-z0-9]++)++[+#]*+|[+#]++)")


def identifiers(text: str) -> list[str]:
    """Tokens with inner punctuation that must match exactly, lowercased."""
    found: dict[str, None] = {}
    for token in IDENTIFIER.findall(text):
        if len(token) <= 100:
            found.setdefault(token.lower(), None)
            if len(found) >= MAX_IDENTIFIERS:
                break
    return list(found)


def query_words(text: str) -> list[str]:
    """The words of any user text, bounded, free of query-syntax characters."""
    words: dict[str, None] = {}
    for m in WORD.finditer(text):
        words.setdefault(m.group(0).lower(), None)
        if len(words) >= MAX_QUERY_TERMS:
            break
    return list(words)


def spaced_words(text: str) -> list[str]:
    """The query's words for the word fields: Thai, Lao, Khmer and Myanmar runs are left to their letter pairs
    (cjk_terms). The word pattern cuts them at every vowel sign, and the pieces (one consonant, often) matched the
    pieces of every page in the language ('ផ្សារ', market, found the school note first through its 'ស')."""
    return query_words(spaced_text(text))


def word_field_words(text: str) -> list[str]:
    """The query's words for the embedded index's word fields: spaced_words without the Indic words, which it
    searches whole in its letter field (language.marked_words), not as the pieces its tokenizer cut them into."""
    return spaced_words(INDIC_WORD.sub(" ", text))


def spaced_text(text: str) -> str:
    """`text` without its Thai, Lao, Khmer and Myanmar runs, for the word fields of the index: a query never
    searches their fragments there (spaced_words), so indexing them only lengthened those languages' sections.
    A Thai page's "Canvas" then weighed as little as a word in a page ten times longer, and "Canvas คืออะไร"
    found 22 other languages' pages before the Thai one (benchmarks/REPORT.md, "Every language at reading
    speed")."""
    return SOUTHEAST_ASIAN_RUN.sub(" ", text)
