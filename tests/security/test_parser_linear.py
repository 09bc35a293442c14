"""One Markdown file cannot freeze the server: parsing and every later pass over a file's text take time
linear in its size, for each class of input that once took quadratic time (and cousins found since).

Timings are compared as a ratio on one machine, in CPU time of this process (other tests running at the same
time do not count), never as absolute limits: ten times the input may cost at most RATIO times the time.
A quadratic pattern costs 100 times; the old ones ran for minutes on the large sizes used here.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_docs.markdown import _build_sections, _Deadline, parse_markdown
from mcp_docs.outline import outline, summary

from .hostile_markdown import BLOCK_CLASSES, HOSTILE, time_parse, time_text_passes

RATIO = 25  # linear is 10; generous for a busy machine
FLOOR = 0.02  # seconds: below this the small timing is noise
LINE_SIZE, BLOCK_SIZE = 100_000, 20_000  # the large size; the small one is a tenth


def _cpu(measure: Callable[[str], float], text: str) -> float:
    started = time.process_time()
    measure(text)
    return time.process_time() - started


def _assert_linear(measure: Callable[[str], float], make: Callable[[int], str], large: int, what: str) -> None:
    small_text, large_text = make(large // 10), make(large)
    measure(small_text)  # warm caches and lazy imports
    t_small = min(_cpu(measure, small_text) for _ in range(2))
    limit = RATIO * max(t_small, FLOOR)
    t_large = _cpu(measure, large_text)
    if t_large > limit:  # measured once more before failing: a busy machine slows a run now and then
        t_large = min(t_large, _cpu(measure, large_text))
    assert t_large <= limit, (
        f"{what}: {len(large_text)} chars took {t_large:.3f} s, {len(small_text)} took {t_small:.3f} s"
    )


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_parse_and_text_passes_are_linear(name: str) -> None:
    large = BLOCK_SIZE if name in BLOCK_CLASSES else LINE_SIZE
    _assert_linear(lambda text: time_parse(text) + time_text_passes(text), HOSTILE[name], large, name)


def test_many_headings_build_sections_without_a_slice_per_heading() -> None:
    # 50,000 headings: through markdown-it this would take seconds, so the heading list is given directly.
    def build(text: str) -> float:
        n = len(text)
        headings = [(1 + k % 3, k, k + 1, "h") for k in range(n)]
        _build_sections([""] * n, n, 0, headings, _Deadline(None))
        return 0.0

    _assert_linear(build, lambda n: "h" * n, 50_000, "50k headings")


ATOMS = [
    "[",
    "[[",
    "]",
    "]]",
    "](",
    "(",
    ")",
    "!",
    "|",
    "#",
    "*",
    "**",
    "_",
    "__",
    "==",
    "~~",
    "`",
    "``",
    "<a",
    ">",
    "<!--",
    "-->",
    "{{<",
    ">}}",
    "{#",
    "{:",
    "}",
    " ",
    "a",
    "a_b",
    '"',
    "\n",
    "- ",
    "> ",
    "# ",
]


@settings(max_examples=8, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(ATOMS), min_size=1, max_size=4), st.sampled_from(["", "# ", "x "]))
def test_cousins_are_linear(unit: list[str], head: str) -> None:
    """Any short repeated mix of the characters patterns start, end or nest with."""
    piece = "".join(unit)
    make = lambda n: head + piece * max(1, (n - len(head)) // len(piece))  # noqa: E731
    _assert_linear(lambda text: time_parse(text) + time_text_passes(text), make, 30_000, repr(head + piece))


def test_a_huge_heading_is_clipped_where_it_is_made_and_its_section_stays_whole() -> None:
    body = "The body. " * 1000
    long = "long " * 200_000  # 1 MB
    text = "# Intro\n\n" + "".join(
        f"{'#' * level} {long if level == 2 else long[:5000]}\n\n{body}\n\n" for level in range(2, 7)
    )
    text += "## Setup\n\nRun it.\n"
    doc = parse_markdown(text, "x")
    assert max(len(s.heading) for s in doc.sections) <= 200
    assert max(len(s.heading_path) for s in doc.sections) <= 1000
    assert doc.sections[1].heading.endswith("…")
    assert all(s.body.strip() == body.strip() for s in doc.sections[1:-1])  # the text is never cut
    deepest = doc.sections[-2]
    assert deepest.heading_path.endswith(" > " + deepest.heading)  # ancestors are clipped, not the heading
    assert doc.sections[-1].heading_path == "Intro > Setup"
    for view in (outline(doc), summary(doc)):
        assert len(view) < 10_000
