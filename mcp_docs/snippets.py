"""Snippets: the stretch of a section that best covers the query words, with the matches in **bold**.

Made here rather than by Tantivy so that one rule serves every language field
(stemmed, accent-folded, identifiers) and semantic hits alike. This runs for
every section shown in a search result, so it works on a folded copy of the
text that keeps every character's position (one regex pass, no per-word
Python loop).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from .ascii_fold import ascii_fold
from .inline import MARKDOWN_LINK

SNIPPET_CHARS = 220
_MAX_MATCHES = 300
_MAX_TERMS = 64


@lru_cache(maxsize=1)
def _mark_ranges() -> tuple[tuple[int, int], ...]:
    """The code point ranges of every combining mark (Unicode categories Mn, Mc, Me), found once on first use.

    A vowel sign or virama is no word character to `re`, so Hindi 'स्थापना' read as the words 'स', 'थ', 'पन',
    and a snippet bolded single consonants inside words ('**स**ं**ग**्रह'); Thai and Khmer alike."""
    ranges: list[tuple[int, int]] = []
    for code in range(0x0300, 0x10000):  # the Basic Multilingual Plane: 12 ms once, where all 17 planes took 80
        if unicodedata.category(chr(code)).startswith("M"):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    return tuple(ranges)


def _class_body(ranges: Iterable[tuple[int, int]]) -> str:
    return "".join(re.escape(chr(a)) + (f"-{re.escape(chr(b))}" if b > a else "") for a, b in ranges)


@lru_cache(maxsize=1)
def _marks() -> str:
    """A regex class body of every combining mark."""
    return _class_body(_mark_ranges())


def _page_ranges() -> list[tuple[int, int]]:
    """The mark ranges cut at the 256-code-point page boundaries, so that each lies on one page."""
    return [
        (max(a, page << 8), min(b, (page << 8) | 0xFF))
        for a, b in _mark_ranges()
        for page in range(a >> 8, (b >> 8) + 1)
    ]


@lru_cache(maxsize=64)
def _marks_on(pages: frozenset[int]) -> str:
    """A regex class body of the marks on these pages. The class is asked only about the text's own characters, so
    holding every mark the text holds gives the matches of the class of all 479 ranges (which, repeated in each
    alternative, made compiling a query's matcher take 12-22 ms). Taken from the query's scripts instead, the class
    missed the marks of the text's: an English word inside Thai ('ที่Syncได้') was bolded mid-letter."""
    return _class_body(r for r in _page_ranges() if r[0] >> 8 in pages)


@lru_cache(maxsize=64)
def _marks_off(pages: frozenset[int]) -> re.Pattern[str] | None:
    """A mark on none of these pages."""
    body = _class_body(r for r in _page_ranges() if r[0] >> 8 not in pages)
    return re.compile(f"[{body}]") if body else None


def _mark_pages(folded: str) -> frozenset[int]:
    """The pages holding the combining marks of a text: none for most sections, one for a text in a script with
    marks (Thai's share their page with its letters), more when it holds marks of other pages (a Vedic accent
    U+1CD0 in Sanskrit, an Arabic mark U+08F0, an emoji's variation selector U+FE0F). One regex scan per page
    found (a set of the text's characters took 3-7 times as long as a scan)."""
    pages: frozenset[int] = frozenset()
    if folded.isascii():
        return pages
    finder = _marks_off(pages)
    pos = 0
    while finder is not None and (found := finder.search(folded, pos)) is not None:
        if len(pages) >= _MAX_MARK_PAGES:  # a text of many scripts: every mark, one class, not a scan per page
            return _all_mark_pages()
        pages |= {ord(found.group()) >> 8}
        pos = found.end()
        finder = _marks_off(pages)
    return pages


_MAX_MARK_PAGES = 4


@lru_cache(maxsize=1)
def _all_mark_pages() -> frozenset[int]:
    return frozenset(r[0] >> 8 for r in _page_ranges())


@lru_cache(maxsize=1)
def _word() -> re.Pattern[str]:
    return re.compile(rf"[^\W_](?:[^\W_]|[{_marks()}])*")


# The scripts written without spaces between words (language.NO_SPACE_RUN's, named here: language.py imports the
# settings, which import this module), by the first word of their letters' Unicode names.
_UNSPACED_SCRIPTS = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "THAI", "LAO", "KHMER", "MYANMAR")


def _unspaced(word: str) -> bool:
    return not word.isascii() and any(unicodedata.name(c, "").startswith(_UNSPACED_SCRIPTS) for c in word)


def snippet_words(text: str) -> list[str]:
    """The words of a query as a snippet looks for them: letters with their combining marks, lowercased, once each
    (a Thai, Lao, Khmer, Myanmar or CJK run, written without spaces, is one word: it is looked for anywhere)."""
    words: dict[str, None] = {}
    for m in _word().finditer(text):
        # 'İ' lowercases to 'i' and a combining dot, which the text's fold (one 'i') does not hold
        words.setdefault(m.group(0).replace("İ", "I").lower(), None)
        if len(words) >= _MAX_TERMS:
            break
    return list(words)


class _FoldTable(dict[int, str]):
    """str.translate table: every character → exactly one lowercase, accent-free character."""

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        decomposed = unicodedata.normalize("NFKD", ch.lower())
        base = "".join(c for c in decomposed if not unicodedata.combining(c))
        folded = base[0] if base else ch
        if not folded.isascii():  # a letter without a decomposition ('ı', 'ł', 'ø', 'đ'): as the index folds it
            letter = ascii_fold(folded)
            folded = letter.lower() if len(letter) == 1 else folded
        self[code] = folded
        return folded


_FOLD = _FoldTable()


def fold_same_length(text: str) -> str:
    return text.lower() if text.isascii() else text.translate(_FOLD)


def fold(word: str) -> str:
    """Lowercase and strip accents: 'Élève' → 'eleve'."""
    return fold_same_length(word)


def _stem(word: str) -> str:
    # A crude, language-neutral stand-in for the stemmer: compare on a prefix.
    return word if len(word) <= 4 else word[: max(4, len(word) - 3)]


@lru_cache(maxsize=256)
def _matcher(terms: tuple[str, ...], mark_pages: frozenset[int]) -> re.Pattern[str] | None:
    """The query words' pattern for a text whose combining marks lie on `mark_pages`: its word class holds those
    marks only (none for a text with no mark, most sections in most languages), which changes no match there and
    compiles in a fraction of the time."""
    unspaced = sorted({fold(t) for t in terms if t and _unspaced(t)}, key=len, reverse=True)
    stems = sorted({_stem(fold(t)) for t in terms if t and not _unspaced(t)}, key=len, reverse=True)
    if not stems and not unspaced:
        return None
    marks = _marks_on(mark_pages) if mark_pages else ""
    word = rf"[\w{marks}]"  # a word goes on through its combining marks
    # Short terms (a, c, vm) must match a whole word; longer ones match word starts ('install' → 'installing').
    # Every alternative opens with its first letter, then checks that no word character comes before it
    # (`(?<!\w[\s\S])`: the character before that letter): a pattern that starts with literals lets the
    # regex engine skip to the positions holding one of them, instead of trying each position (a third
    # less time over the sections of a search than the same word-start check placed first).
    parts = [
        re.escape(s[0])
        + rf"(?<!{word}[\s\S])"
        + re.escape(s[1:])
        + (rf"(?!{word})" if len(s) <= 2 else rf"[\w{marks}.+#-]*?(?![\w{marks}+#])")
        for s in stems
    ]
    # A run of a script written without spaces has no word boundaries to check: it matches where it stands.
    parts += [re.escape(run) for run in unspaced]
    return re.compile("|".join(parts))


def clip(text: str, limit: int) -> str:
    """Whitespace collapsed, cut at a word boundary near `limit`, with an ellipsis when cut.

    Looks at a bounded prefix only, so clipping a megabyte heading costs no more than a short one.
    """
    window = limit * 4 + 64
    cut_early = len(text) > window
    text = " ".join(text[:window].split())
    if len(text) <= limit:
        return text + "…" if cut_early else text
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def clip_list(items: Iterable[str], budget: int, item_chars: int = 200, sep: str = ", ", where: str = "") -> str:
    """Items clipped to `item_chars` each and joined until `budget` characters, then '… and K more' (`where`)."""
    shown: list[str] = []
    used = 0
    more = 0
    for item in items:
        if more:
            more += 1
            continue
        text = clip(item, item_chars)
        if shown and used + len(sep) + len(text) > budget:
            more = 1
            continue
        shown.append(text)
        used += len(sep) + len(text)
    return sep.join(shown) + (f"{sep}… and {more} more{where}" if more else "")


def _best_window(matches: list[tuple[int, int, str]], width: int) -> int:
    """Where the window of `width` characters that shows the most distinct terms starts (the first such one).

    A window starts a little before a match and holds that match and the following ones that end inside it.
    Both ends only move forward, so one pass with a count per term does it: a section that mentions a word
    300 times costs 300 steps, not 300 x 300 (this runs for every section a search shows)."""
    counts: dict[str, int] = {}
    best_start, best_count = 0, -1
    end = 0  # matches[i:end] are in the window of match i
    for i, (start, _, _) in enumerate(matches):
        window_start = max(0, start - width // 5)
        if end < i:
            end = i
        while end < len(matches) and matches[end][1] <= window_start + width:
            key = matches[end][2]
            counts[key] = counts.get(key, 0) + 1
            end += 1
        if len(counts) > best_count:
            best_start, best_count = window_start, len(counts)
        if i < end:  # match i leaves before the next window is measured
            key = matches[i][2]
            counts[key] -= 1
            if not counts[key]:
                del counts[key]
    return best_start


def make_snippet(body: str, query_terms: list[str], width: int = SNIPPET_CHARS) -> str:
    text = " ".join(body.split())  # whitespace collapsed (str.split knows the same spaces as re's \s, faster)
    if "](" in text:  # link targets are noise in a snippet: keep the labels
        text = MARKDOWN_LINK.sub(r"\1", text)  # a template, not a function: no Python call per link
    if not text:
        return ""
    folded = fold_same_length(text)
    pattern = _matcher(tuple(query_terms), _mark_pages(folded))
    matches: list[tuple[int, int, str]] = []
    if pattern is not None:
        stems: dict[str, str] = {}  # a section repeats its words: each is cut once
        for m in pattern.finditer(folded):
            word = m.group()
            stem = stems.get(word)
            if stem is None:
                stem = stems[word] = _stem(word)
            matches.append((m.start(), m.end(), stem))
            if len(matches) >= _MAX_MATCHES:
                break
    if not matches:
        return text if len(text) <= width else text[:width].rsplit(" ", 1)[0] + "…"
    begin = _best_window(matches, width)
    if begin > 0:
        space = text.find(" ", begin)
        begin = space + 1 if 0 <= space < begin + 20 else begin
    end = min(len(text), begin + width)
    if end < len(text):
        space = text.rfind(" ", begin, end)
        end = space if space > begin + width // 2 else end
    out: list[str] = ["…"] if begin > 0 else []
    cursor = begin
    for start, stop, _ in matches:
        if start < begin or stop > end:
            continue
        out.append(text[cursor:start])
        out.append(f"**{text[start:stop]}**")
        cursor = stop
    out.append(text[cursor:end])
    if end < len(text):
        out.append("…")
    return "".join(out)
