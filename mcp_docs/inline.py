"""Inline Markdown → plain text, in time linear in the text.

Headings, summaries and embedding pieces need link labels without targets and words
without emphasis or code marks. A regex such as `(\\*)(.+?)\\1` rescans the rest of the
line from every opener that has no closer, and holds the GIL while it does: one line
of `*a *a *a …` froze the whole server. So every pattern here either cannot rescan
(its repeated part excludes the characters a match starts with) or is replaced by a
scan that looks for each kind of closer at most once per position.
"""

from __future__ import annotations

import re
import sys

# [label](target "title") and ![alt](src): group 1 is the label, group 2 the target. Neither part may hold
# a '[', where every match starts, so no '[' is ever scanned twice: linear even on a line of 500 KB of '[a](b'.
MARKDOWN_LINK = re.compile(r"!?\[([^\[\]\n]*)\]\(\s*<?([^)\s>\[]+)>?(?:\s+[\"'][^\"'\n]*[\"'])?\s*\)")

# The label, heading and alias parts exclude '[' so a run of '[' is never rescanned (wiki targets cannot contain it).
WIKILINK = re.compile(r"!?\[\[([^\[\]\|#\n]*)(?:#([^\[\]\|\n]*))?(?:\|([^\[\]\n]*))?\]\]")
INLINE_CODE = re.compile(r"`+[^`]*`+")
# The same without the embed's '!' (it is not captured), for finding links: a pattern that starts with a literal
# '[' is searched for that character at C speed, where '!?' makes the engine try every position (a line of 4.9 MB
# of `[[a]] `: 0.4 s instead of 0.8 s, and 0.2 s instead of 0.6 s for Markdown links it does not hold).
WIKILINK_FIND = re.compile(WIKILINK.pattern.removeprefix("!?"))
# Every bracket-free `[[...]]` splits into WIKILINK's parts, so this finds the same links; as one string per link
# (not a tuple of three) it takes half the time, and each distinct link is then split once (WIKILINK_FIND).
WIKILINK_WHOLE = re.compile(r"\[\[[^\[\]\n]*\]\]")
MARKDOWN_LINK_FIND = re.compile(MARKDOWN_LINK.pattern.removeprefix("!?"))

_HTML_TAG = re.compile(r"</?[A-Za-z][^<>\n]*>")
_BACKTICKS = re.compile(r"`+")
_NEVER = sys.maxsize


def wikilink_parts(target: str, heading: str, alias: str) -> tuple[str, str | None, str | None]:
    """(target, heading, alias) of a WIKILINK's groups (`findall`'s, '' for a part not written). In a table cell
    the alias separator is written `\\|` (`| [[Table view\\|Table]] |`, so the table keeps its columns) and
    Obsidian reads it as `|`: the backslash left at the end of the target or heading is that escape."""
    target, heading, alias = target.strip(), heading.strip(), alias.strip()
    if alias:
        if heading:
            heading = heading.removesuffix("\\").rstrip()
        else:
            target = target.removesuffix("\\").rstrip()
    return target, heading or None, alias or None


def clean_inline(text: str) -> str:
    """Inline Markdown → plain text: links keep their label, emphasis and code marks go."""
    if not text:
        return ""
    if "[" in text:
        text = WIKILINK.sub(lambda m: m.group(3) or m.group(2) or m.group(1), text)
        text = MARKDOWN_LINK.sub(lambda m: m.group(1), text)
    if "<" in text:
        text = _HTML_TAG.sub("", text)
    if "`" in text:  # code spans keep their text verbatim: `OTEL_SERVICE_NAME` is not emphasis
        text = _outside_code_spans(text)
    else:
        text = _strip_emphasis(text)
    return " ".join(text.split())


def _outside_code_spans(text: str) -> str:
    """Emphasis stripped outside code spans; a span is a backtick run closed by the next run of the same length on its line."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)]
    line_of: list[int] = []
    line, counted = 0, 0
    for start, _ in runs:
        line += text.count("\n", counted, start)
        counted = start
        line_of.append(line)
    closer: list[int] = [-1] * len(runs)
    last_of_length: dict[int, int] = {}
    for k in range(len(runs) - 1, -1, -1):
        length = runs[k][1] - runs[k][0]
        closer[k] = last_of_length.get(length, -1)
        last_of_length[length] = k
    out: list[str] = []
    done = 0  # text before this offset is already in `out`
    k = 0
    while k < len(runs):
        c = closer[k]
        if c == -1 or line_of[c] != line_of[k]:
            k += 1
            continue
        out.append(_strip_emphasis(text[done : runs[k][0]]))
        out.append(text[runs[k][1] : runs[c][0]])
        done = runs[c][1]
        k = c + 1
    out.append(_strip_emphasis(text[done:]))
    return "".join(out)


class _Closers:
    """The first closing mark at or after a position. Positions asked only grow, so all searches add up to one pass."""

    def __init__(self, text: str, mark: str, word_boundary_after: bool) -> None:
        self.text = text
        self.pattern = re.compile(r"(?<=\S)" + re.escape(mark) + (r"(?!\w)" if word_boundary_after else ""))
        self.found = -1

    def first_at_or_after(self, pos: int) -> int:
        if self.found < pos:
            m = self.pattern.search(self.text, pos)
            self.found = _NEVER if m is None else m.start()
        return self.found


def _strip_emphasis(text: str) -> str:
    if "*" in text or "~~" in text or "==" in text:
        text = _strip_pairs(text, {"*": r"\*", "~~": "~~", "==": "=="}, intraword=True)
    if "_" in text:
        # CommonMark: '_' never opens or closes emphasis inside a word (snake_case stays intact).
        text = _strip_pairs(text, {"_": r"(?<!\w)_"}, intraword=False)
    return text


def _strip_pairs(text: str, openers: dict[str, str], intraword: bool) -> str:
    """Drop emphasis marks around text, keeping the text: `**a**` → `a`, `==b==` → `b`.

    As the regex `(\\*{1,3}|~~|==)(?=\\S)(.+?)(?<=\\S)\\1` would, but linear: at each opener the
    longest mark is tried first, and the nearest closer on the same line wins. A mark with no closer
    left stops being looked for (no `*` closer also means no `**` or `***` one).
    """
    n = len(text)
    alive = dict(openers)
    opener = re.compile("|".join(alive.values()))
    closers: dict[str, _Closers] = {}
    newline = -1  # the first '\n' at or after the current opener
    out: list[str] = []
    done = 0
    m = opener.search(text)
    while m is not None:
        i = m.start()
        if newline != _NEVER and newline < i:
            found = text.find("\n", i)
            newline = _NEVER if found == -1 else found
        first = m.group(0)
        run = 1
        if first in ("*", "_"):
            while run < 3 and i + run < n and text[i + run] == first:
                run += 1
        resume = i + 1
        for mark in [first * k for k in range(run, 0, -1)]:
            content = i + len(mark)
            if content >= n or text[content].isspace():
                continue
            finder = closers.get(mark)
            if finder is None:
                finder = closers[mark] = _Closers(text, mark, word_boundary_after=not intraword)
            j = finder.first_at_or_after(content + 1)
            if j < newline:
                out.append(text[done:i])
                out.append(text[content:j])
                done = resume = j + len(mark)
                break
            if j == _NEVER and len(mark) == len(first) and first in alive:
                del alive[first]
                if not alive:
                    break
                opener = re.compile("|".join(alive.values()))
        if not alive:
            break
        m = opener.search(text, resume)
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def drop_spans(text: str, opener: re.Pattern[str], closer: re.Pattern[str], replacement: str = " ") -> str:
    """Replace each span from an opener to the nearest closer after it, as `opener.*?closer` (DOTALL) would.

    Linear where that regex is not: once an opener has no closer after it, no later one has either.
    """
    out: list[str] = []
    done = 0
    while (start := opener.search(text, done)) is not None:
        end = closer.search(text, start.end())
        if end is None:
            break
        out.append(text[done : start.start()])
        out.append(replacement)
        done = end.end()
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)
