"""The block structure the index needs, found by one pass over the lines: front matter, headings, code, paragraphs.

A document's sections need only its ATX and setext headings, what hides a `#` line from being one (fenced and
indented code, HTML blocks), the front matter and the first paragraphs (for the summary). markdown-it's block
parser found them too, but it walks every character in Python to build its line tables and tries every rule on
every line, and that was most of the cost of indexing. This scanner follows CommonMark's block rules (as
markdown-it-py implements them, with lists, block quotes and link reference definitions switched off as before,
so `#` lines inside those still count as headings) and gives the same blocks; tests/test_blocks.py pins that on
real and hostile documents against markdown-it itself.

Linear in the document: every line is looked at a bounded number of times, with no pattern that rescans it.
markdown-it itself is not imported (only the tests use it): importing it cost more than parsing a small vault.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

_CHECK_EVERY = 1024  # lines between two looks at the clock
_SPACE = " \t"  # CommonMark's indentation characters; other white space is content
# What is trimmed from a heading's or a paragraph's content: CommonMark's Unicode white space, as markdown-it does.
_TRIM = "\t\n\v\f\r \u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"


# CommonMark's seven kinds of HTML block (spec 4.6): (how one opens, how it ends, whether it may interrupt a
# paragraph), with markdown-it-py's patterns.
_BLOCK_TAGS = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|"
    "dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h1|h2|h3|h4|h5|h6|head|header|"
    "hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|search|"
    "section|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul"
)
_ATTRIBUTE = "(?:\\s+[a-zA-Z_:][a-zA-Z0-9:._-]*(?:\\s*=\\s*(?:[^\"'=<>`\\x00-\\x20]+|'[^']*'|\"[^\"]*\"))?)"
_OPEN_OR_CLOSE_TAG = f"^(?:<[A-Za-z][A-Za-z0-9\\-]*{_ATTRIBUTE}*\\s*\\/?>|<\\/[A-Za-z][A-Za-z0-9\\-]*\\s*>)"
HTML_SEQUENCES: list[tuple[re.Pattern[str], re.Pattern[str], bool]] = [
    (
        re.compile(r"^<(?a:(script|pre|style|textarea))(?=(\s|>|$))", re.IGNORECASE),
        re.compile(r"<\/(?a:(script|pre|style|textarea))>", re.IGNORECASE),
        True,
    ),
    (re.compile(r"^<!--"), re.compile(r"-->"), True),
    (re.compile(r"^<\?"), re.compile(r"\?>"), True),
    (re.compile(r"^<![A-Za-z]"), re.compile(r">"), True),
    (re.compile(r"^<!\[CDATA\["), re.compile(r"\]\]>"), True),
    (
        re.compile("^</?(?a:(" + _BLOCK_TAGS + "))(?=(\\s|/?>|$))", re.IGNORECASE),
        re.compile(r"^$"),
        True,
    ),
    (re.compile(_OPEN_OR_CLOSE_TAG + "\\s*$"), re.compile(r"^$"), False),
]


@dataclass(frozen=True)
class Heading:
    level: int
    start: int  # 0-based first line
    end: int  # 0-based line after it (after the underline of a setext heading)
    text: str  # raw inline content, trimmed
    setext: str = ""  # the underline character ('=' or '-') of a setext heading, "" for an ATX one


@dataclass
class Blocks:
    front_matter: str | None = None  # the YAML between the fences, None without front matter
    content_start: int = 0  # 0-based first line after the front matter
    headings: list[Heading] = field(default_factory=list)
    code: list[tuple[int, int]] = field(default_factory=list)  # [start, end) of code fences, indented code, HTML
    paragraphs: list[tuple[int, int]] = field(default_factory=list)  # [start, end) of each paragraph


def paragraph_text(lines: list[str], span: tuple[int, int]) -> str:
    """A paragraph's raw inline content, as markdown-it gives it."""
    return _content(_trim("\n".join(lines[span[0] : span[1]])))


def _trim(text: str) -> str:
    return text.strip(_TRIM)


def _content(text: str) -> str:
    # markdown-it replaces NUL before parsing; the lines themselves keep it, as the file has it.
    return text.replace("\0", "\ufffd") if "\0" in text else text


class _Lines:
    """Per line: the text after its indentation, and the indentation's width in columns (a tab to the next stop of 4)."""

    def __init__(self, lines: list[str], count: int) -> None:
        self.lines = lines
        self.count = count
        self.rest = [line.lstrip(_SPACE) for line in lines[:count]]
        # Tabs in the indentation advance to the next multiple of 4, as expandtabs does.
        self.indent = [
            len(line[: len(line) - len(rest)].expandtabs(4)) for line, rest in zip(lines, self.rest, strict=False)
        ]


def scan_blocks(lines: list[str], ends_with_newline: bool, check: Callable[[], None]) -> Blocks:
    """The blocks of a document split into `lines`; `check` is called every so often and may raise to stop."""
    count = len(lines)
    if count and not ends_with_newline and not lines[-1].strip(_SPACE):
        count -= 1  # markdown-it does not count a last line of blanks without a line end
    ls = _Lines(lines, count)
    rest, indent = ls.rest, ls.indent
    blocks = Blocks()
    line = 0
    fm_end = _front_matter_end(ls)
    if fm_end is not None:
        blocks.front_matter = _content("\n".join(lines[1 : fm_end - 1]))
        blocks.content_start = line = fm_end
    seen = 0  # blocks
    while line < count:
        if not rest[line]:
            line += 1
            continue
        if seen % 64 == 0:  # from the first block on, so even a tiny budget is enforced
            check()
        seen += 1
        start = line
        if indent[line] >= 4:
            line = _code_end(ls, line)
            blocks.code.append((start, line))
        elif _fence_open(rest[line]):
            line = _fence_end(ls, line, check)
            blocks.code.append((start, line))
        elif _is_hr(rest[line]):
            line += 1
        elif (html := _html_start(rest[line])) is not None:
            line = _html_end(ls, line, html, check)
            blocks.code.append((start, line))
        elif (atx := _atx(rest[line])) is not None:
            level, text = atx
            line += 1
            blocks.headings.append(Heading(level, start, line, _content(text)))
        else:
            end, underline = _paragraph_end(ls, line, check)
            if underline:
                level = 1 if underline == "=" else 2
                text = _content(_trim("\n".join(lines[start:end])))
                line = end + 1
                blocks.headings.append(Heading(level, start, line, text, underline))
            else:
                line = end
                blocks.paragraphs.append((start, end))
    return blocks


def _front_matter_end(ls: _Lines) -> int | None:
    """The line after a front matter block that opens the document, or None."""
    if not ls.count or not ls.lines[0].startswith("---"):
        return None
    opening = len(ls.lines[0]) - len(ls.lines[0].lstrip("-"))
    for n in range(1, ls.count):
        line, rest = ls.lines[n], ls.rest[n]
        if line.startswith("...") and not line[3:].strip(_SPACE):
            return n + 1  # YAML's document end marker, at column 0
        if rest.startswith("-") and ls.indent[n] < 4:
            run = len(rest) - len(rest.lstrip("-"))
            if run >= opening and not rest[run:].strip(_SPACE):
                return n + 1
    return None  # never closed: not front matter


def _code_end(ls: _Lines, line: int) -> int:
    """Indented code: through the last indented line, blank lines between them included."""
    last = n = line + 1
    while n < ls.count:
        if not ls.rest[n]:
            n += 1
        elif ls.indent[n] >= 4:
            n += 1
            last = n
        else:
            break
    return last


def _fence_open(rest: str) -> bool:
    if len(rest) < 3 or rest[0] not in "`~":
        return False
    marker = rest[0]
    run = len(rest) - len(rest.lstrip(marker))
    return run >= 3 and not (marker == "`" and "`" in rest[run:])


def _fence_end(ls: _Lines, line: int, check: Callable[[], None]) -> int:
    """The line after the closing fence, or the end of the document for a fence never closed."""
    opening = ls.rest[line]
    marker = opening[0]
    run = len(opening) - len(opening.lstrip(marker))
    for n in range(line + 1, ls.count):
        if n % _CHECK_EVERY == 0:
            check()
        rest = ls.rest[n]
        if not rest.startswith(marker) or ls.indent[n] >= 4:
            continue
        closing = len(rest) - len(rest.lstrip(marker))
        if closing >= run and not rest[closing:].strip(_SPACE):
            return n + 1
    return ls.count


def _is_hr(rest: str) -> bool:
    if not rest or rest[0] not in "*-_":
        return False
    bare = rest.replace(" ", "").replace("\t", "")
    return len(bare) >= 3 and not bare.strip(rest[0])


def _html_start(rest: str) -> int | None:
    """Which of CommonMark's seven kinds of HTML block opens here (an index into HTML_SEQUENCES), if any."""
    if not rest.startswith("<"):
        return None
    for kind, (opening, _, _) in enumerate(HTML_SEQUENCES):
        if opening.search(rest):
            return kind
    return None


def _html_end(ls: _Lines, line: int, kind: int, check: Callable[[], None]) -> int:
    closing = HTML_SEQUENCES[kind][1]
    if closing.search(ls.rest[line]):
        return line + 1
    n = line + 1
    while n < ls.count:
        if n % _CHECK_EVERY == 0:
            check()
        rest = ls.rest[n]
        if closing.search(rest):
            return n + 1 if rest else n
        n += 1
    return n


def _atx(rest: str) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line, its closing sequence of '#' removed."""
    if not rest.startswith("#"):
        return None
    level = len(rest) - len(rest.lstrip("#"))
    if level > 6 or (len(rest) > level and rest[level] not in _SPACE):
        return None
    text = rest[level:].rstrip(_SPACE)
    before_closing = text.rstrip("#")
    if before_closing and before_closing[-1] in _SPACE:
        text = before_closing
    return level, _trim(text)


def _interrupts_paragraph(rest: str) -> bool:
    """A line that ends a paragraph without a blank line: a fence, a rule, an ATX heading, most HTML blocks."""
    first = rest[0]
    if first in "`~":
        return _fence_open(rest)
    if first in "*-_":
        return _is_hr(rest)
    if first == "#":
        return _atx(rest) is not None
    if first == "<":
        kind = _html_start(rest)
        return kind is not None and HTML_SEQUENCES[kind][2]
    return False


def _paragraph_end(ls: _Lines, line: int, check: Callable[[], None]) -> tuple[int, str]:
    """(end, underline): the line after a paragraph's last line, and, if a setext underline ends it, its character.

    A setext heading is a paragraph whose next line is '===' or '---'; indented lines are lazy continuations.
    """
    n = line + 1
    while n < ls.count:
        if n % _CHECK_EVERY == 0:
            check()
        rest = ls.rest[n]
        if not rest:
            break
        if ls.indent[n] > 3:
            n += 1
            continue
        first = rest[0]
        if first in "=-" and not rest.lstrip(first).strip(_SPACE):
            return n, first
        if first in "`~*-_#<" and _interrupts_paragraph(rest):
            break
        n += 1
    return n, ""
