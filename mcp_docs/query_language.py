"""A query's language, among the collection's: what its script says, then its letters, its function words, and
last the statistical identifier. Pure text (the identifier's model is loaded on first use, language.py).

A query is a few words, often a name and two words of a language ("Canvas คืออะไร", "apa itu canvas"), so the
identifier alone is unsure on most of them. But a script written by one language of the collection tells it
with no statistics at all: Thai letters are Thai, Hangul Korean, kana Japanese. A script shared by several
languages (Cyrillic: Russian and Ukrainian; Arabic: Arabic and Persian; Han: Chinese and Japanese) narrows the
identifier's choice to those of the collection, where it is sure far more often. Latin-script queries are
the ambiguous ones: a letter only one language writes (Polish `ł`, Czech `ř`, Romanian `ș`, Vietnamese `ơ`)
tells it; function words tell the rest, a tie tells nothing. Whatever names a language the collection does
not hold names none: a query is never given a language its vault lacks (a Spanish question about English and
French pages keeps "no language", as before).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .language import (
    LANGUAGE_NAMES,
    QUERY_MIN_LETTERS,
    STOPWORDS,
    identifier_shares,
    query_language_beyond_stopwords,
)
from .query_text import query_words
from .search.document_signals import query_language as function_word_vote

# Scripts and the languages that write them (ISO 639-1, among those the identifier knows). Latin is not here:
# every query may hold a Latin-script name ("Canvas", "Obsidian Sync") whatever its language.
SCRIPTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("thai", "\u0e00-\u0e7f", ("th",)),
    ("lao", "\u0e80-\u0eff", ("lo",)),
    ("khmer", "\u1780-\u17ff\u19e0-\u19ff", ("km",)),
    ("myanmar", "\u1000-\u109f", ("my",)),
    ("hangul", "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af", ("ko",)),
    ("kana", "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f", ("ja",)),
    ("han", "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff", ("zh", "ja")),
    ("hebrew", "\u0590-\u05ff", ("he",)),
    ("greek", "\u0370-\u03ff\u1f00-\u1fff", ("el",)),
    ("georgian", "\u10a0-\u10ff", ("ka",)),
    ("armenian", "\u0530-\u058f", ("hy",)),
    ("bengali", "\u0980-\u09ff", ("bn", "as")),
    ("devanagari", "\u0900-\u097f", ("hi", "mr", "ne", "sa")),
    ("gurmukhi", "\u0a00-\u0a7f", ("pa",)),
    ("gujarati", "\u0a80-\u0aff", ("gu",)),
    ("odia", "\u0b00-\u0b7f", ("or",)),
    ("tamil", "\u0b80-\u0bff", ("ta",)),
    ("telugu", "\u0c00-\u0c7f", ("te",)),
    ("kannada", "\u0c80-\u0cff", ("kn",)),
    ("malayalam", "\u0d00-\u0d7f", ("ml",)),
    ("sinhala", "\u0d80-\u0dff", ("si",)),
    ("ethiopic", "\u1200-\u137f", ("am",)),
    ("arabic", "\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff", ("ar", "fa", "ur", "ps", "ku", "ug")),
    ("cyrillic", "\u0400-\u04ff", ("ru", "uk", "bg", "sr", "mk", "be", "kk", "ky", "mn", "tg", "tt", "ba")),
)
_SCRIPT_PATTERNS = tuple((name, re.compile(f"[{ranges}]"), codes) for name, ranges, codes in SCRIPTS)
# A script decides when it holds this share of the query's letters outside Latin (a query mixing two others
# names neither).
SCRIPT_SHARE = 2 / 3
# Among the few languages of one script, the identifier's best needs this share of their probabilities: it
# chooses between two or three, not among 97 (the 0.9 of language.QUERY_MIN_PROBABILITY).
SCRIPT_CHOICE_SHARE = 0.75

# Latin letters that only these languages write (of the identifier's): one of them in a query names the
# language, when exactly one of them is in the collection. Letters shared more widely (é, ä, ç, ñ in
# Spanish, Galician, Basque and Tagalog) are not here.
_VIETNAMESE = "ơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ"
DISTINCTIVE_LETTERS: Mapping[str, tuple[str, ...]] = {
    "ł": ("pl",),
    "ż": ("pl", "mt"),
    "ś": ("pl",),
    "ź": ("pl",),
    "ą": ("pl", "lt"),
    "ę": ("pl", "lt"),
    "ř": ("cs",),
    "ů": ("cs",),
    "ě": ("cs",),
    "ő": ("hu",),
    "ű": ("hu",),
    "ș": ("ro",),
    "ț": ("ro",),
    "ğ": ("tr", "az"),
    "ı": ("tr", "az"),
    "ß": ("de",),
    **{letter: ("vi",) for letter in _VIETNAMESE},
}

# Function words of Latin-script languages without a stemmer (language.STOPWORDS has those with one): they vote
# beside STOPWORDS, but leave these languages to the identifier when the query uses none. Words short enough to
# be another language's (`a`, `i`, `na`, `to`, `do`, `se`) are left out.
MORE_FUNCTION_WORDS: Mapping[str, frozenset[str]] = {
    code: frozenset(words.split())
    for code, words in {
        "vi": "là gì của và các cho không có được những này một cách làm sao thế nào ở với trong để khi "
        "cua cac nhung duoc khong",
        "id": "apa itu yang dan di ke dari untuk dengan ini cara bagaimana tidak ada bisa saya dalam atau",
        "cs": "jak je jsou v se s z pro že co jako nebo ale tak když už",
        "pl": "jak jest są w się z dla że co jako lub ale czy nie gdzie",
        "sk": "ako je sú sa pre že čo alebo ale keď",
        "ca": "el els les és amb per què com una això quan",
    }.items()
}


def query_language(text: str, languages: Iterable[str]) -> str | None:
    """The language of a query among the collection's `languages`, or None when nothing tells it."""
    present = frozenset(languages)
    decided = script_language(text, present)
    if decided is not None:
        return decided or None  # "": a script the collection does not write
    lettered = letter_language(text, present)
    if lettered is not None:
        return lettered
    vote = {code: STOPWORDS.get(code) or MORE_FUNCTION_WORDS[code] for code in present if _has_words(code)}
    return function_word_vote(query_words(text), vote) or query_language_beyond_stopwords(text, present)


def _has_words(code: str) -> bool:
    return code in STOPWORDS or code in MORE_FUNCTION_WORDS


_SCRIPT_CODES = {name: codes for name, _, codes in SCRIPTS}


def _main_script(text: str, with_latin: bool) -> str | None:
    """The script holding SCRIPT_SHARE of the query's letters (of those outside Latin, unless `with_latin`):
    a name of SCRIPTS, "latin", or None (no such letter, or no script holds that share)."""
    counts: dict[str, int] = {}
    for name, pattern, _ in _SCRIPT_PATTERNS:
        n = len(pattern.findall(text))
        if n:
            counts[name] = n
    if with_latin:
        latin = sum(1 for c in text if c.isalpha() and (c.isascii() or "LATIN" in unicodedata.name(c, "")))
        if latin:
            counts["latin"] = latin
    if not counts:
        return None
    if "kana" in counts:  # Japanese writes Han and kana together
        counts["kana"] += counts.pop("han", 0)
    name, n = max(counts.items(), key=lambda item: item[1])
    return name if n >= SCRIPT_SHARE * sum(counts.values()) else None


def script_language(text: str, languages: frozenset[str]) -> str | None:
    """What the query's script says: a language of `languages`, "" when its script is written by none of them
    (no language at all), None when the query is in Latin letters (or mixes other scripts: undecided)."""
    name = _main_script(text, with_latin=False)
    if name is None:
        return None
    codes = _SCRIPT_CODES[name]
    candidates = [code for code in codes if code in languages]
    if len(candidates) <= 1:
        return candidates[0] if candidates else ""
    return _identifier_choice(text, candidates) or ""


_WRITTEN_IN_OTHER_SCRIPTS = frozenset(code for _, _, codes in SCRIPTS for code in codes) - {"sr"}  # Serbian: both


@dataclass(frozen=True)
class ScriptWriters:
    """The languages that write a query's script: the script's own (Han: Chinese and Japanese), or for Latin
    letters every language but those `SCRIPTS` lists (`outside`)."""

    codes: frozenset[str]
    outside: bool = False

    def write(self, code: str) -> bool:
        return (code not in self.codes) if self.outside else (code in self.codes)


def writes_query_script(text: str) -> ScriptWriters | None:
    """Which languages write the query's script, for a query whose language is not known; None when it holds no
    letter or mixes scripts evenly. A page found in several languages by a bare name ("Canvas") showed its
    Khmer version: the versions tie on the name, and a Khmer page's word fields hold little else, so BM25
    ranked it first."""
    name = _main_script(text, with_latin=True)
    if name is None:
        return None
    if name == "latin":
        return ScriptWriters(_WRITTEN_IN_OTHER_SCRIPTS, outside=True)
    return ScriptWriters(frozenset(_SCRIPT_CODES[name]))


# A section in a language not written in the query's script scores this share of its keyword score. Its own
# words are in another script; the query's matched only the names and commands it borrows, and a page in
# Japanese or Thai holds few words of the query's script, so BM25 weighs those many times: on the tldr pages
# "extract a tar.gz archive" found the Japanese, Chinese and Korean tar pages at 94 and the English one at 53
# (35th section), and "sync" on the Obsidian help vault the Thai and Khmer Sync pages at 17 (the English at 14).
OTHER_SCRIPT_SHARE = 0.5


def languages_outside_query_script(text: str, languages: Iterable[str]) -> list[str]:
    """Those of the collection's `languages` that do not write the query's script (none when the script is not
    clear, or the collection writes one script)."""
    writers = writes_query_script(text)
    if writers is None:
        return []
    return [code for code in languages if code and not writers.write(code)]


def _identifier_choice(text: str, candidates: list[str]) -> str | None:
    """The identifier's choice among a few languages of one script, when it is sure enough of it."""
    if sum(1 for c in text if c.isalpha()) < QUERY_MIN_LETTERS:
        return None
    shares = identifier_shares(text, candidates)
    total = sum(shares.values())
    if not total:
        return None
    code, best = max(shares.items(), key=lambda item: item[1])
    return code if best >= SCRIPT_CHOICE_SHARE * total and code in LANGUAGE_NAMES else None


def letter_language(text: str, languages: frozenset[str]) -> str | None:
    """The one language of `languages` that the query's distinctive Latin letters name, or None (none, or
    letters of two languages)."""
    named: set[str] = set()
    for letter in set(text.lower()):
        codes = DISTINCTIVE_LETTERS.get(letter)
        if codes is None:
            continue
        held = [code for code in codes if code in languages]
        if len(held) == 1:
            named.add(held[0])
    return named.pop() if len(named) == 1 else None
