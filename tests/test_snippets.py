import time

import pytest

from mcp_docs.snippets import fold, make_snippet, snippet_words


def test_highlights_stems_identifiers_and_accents() -> None:
    text = "Set OTEL_EXPORTER_OTLP_ENDPOINT and vm.swappiness=10 for C++ builds. Les élèves installent."
    snippet = make_snippet(text, ["otel_exporter_otlp_endpoint", "vm.swappiness", "c++", "eleve", "installing"])
    assert "**OTEL_EXPORTER_OTLP_ENDPOINT**" in snippet
    assert "**vm.swappiness**" in snippet
    assert "**C++**" in snippet
    assert "**élèves**" in snippet
    assert "**installent**" in snippet  # 'installing' and 'installent' share a prefix


def test_short_terms_match_whole_words_only() -> None:
    assert make_snippet("a collector in C and vm tuning", ["c", "vm"]) == "a collector in **C** and **vm** tuning"


def test_matches_start_words_at_the_start_after_punctuation_and_never_inside_one() -> None:
    # The word-start check sits after each term's first letter (so the regex engine can skip to those letters):
    # it must still see the character before that letter, including none at the very start.
    text = "Install first; (install) reinstall x_install c-install, then C: vc"
    assert make_snippet(text, ["install", "c"]) == (
        "**Install** first; (**install**) reinstall x_install **c**-**install**, then **C**: vc"
    )


def test_window_covers_most_terms_and_is_bounded() -> None:
    filler = "lorem ipsum " * 100
    text = f"{filler} alpha beta gamma {filler}"
    snippet = make_snippet(text, ["alpha", "gamma"], width=120)
    assert "**alpha**" in snippet and "**gamma**" in snippet
    assert snippet.startswith("…") and snippet.endswith("…")
    assert len(snippet.replace("**", "")) <= 124


def test_no_match_gives_the_beginning_and_empty_body_gives_nothing() -> None:
    assert make_snippet("First words of the section.", ["zzz"]) == "First words of the section."
    assert make_snippet("", ["x"]) == ""


def test_fold_keeps_length() -> None:
    for word in ("Élève", "straße", "İstanbul", "Ǆ"):
        assert len(fold(word)) == len(word)


def test_link_targets_are_left_out_of_snippets() -> None:
    snippet = make_snippet(
        "See [the sampling spec](https://example.org/specs/sampling#probability) and ![chart](img.png).", ["sampling"]
    )
    assert snippet == "See the **sampling** spec and chart."


def test_many_matches_cost_linear_time_not_quadratic() -> None:
    """A section naming the query words 300 times: choosing the window used to compare every match with
    every later one (~90x the time of a section with 30 matches); now one pass (~3x). A ratio of two runs on
    the same machine, with a wide margin, not a timing."""

    def best_of(body: str) -> float:
        times = []
        for _ in range(5):
            started = time.perf_counter()
            make_snippet(body, ["alpha", "beta"])
            times.append(time.perf_counter() - started)
        return min(times)

    many = "alpha beta " * 300
    few = "alpha beta " * 30 + "lorem ipsum " * 270  # the same length: only the number of matches differs
    assert best_of(many) / best_of(few) < 20


def test_a_query_matcher_holds_only_the_marks_of_the_text() -> None:
    """Every combining mark of Unicode in the matcher (479 ranges, twice per word) made compiling it 12-22 ms a
    query; the marks on the pages of those the text holds keep its words whole."""
    from mcp_docs.snippets import _mark_pages, _matcher

    assert _mark_pages(fold("Un élève installé ici.")) == frozenset()  # composed: no mark
    assert _mark_pages(fold("Un e\u0301le\u0300ve")) == {0x03}
    latin = _matcher(("install", "collector"), frozenset({0x03}))
    assert latin is not None and len(latin.pattern) < 400, len(latin.pattern)
    # a text with no combining mark (most sections) is matched without any in the class
    plain = _matcher(("install", "collector"), frozenset())
    assert plain is not None and plain.pattern.isascii(), plain.pattern
    assert make_snippet("Installing the Collector.", ["install", "collector"]) == "**Installing** the **Collector**."
    assert make_snippet("Un élève installé ici.", ["eleve"]) == "Un **élève** installé ici."
    hindi = _matcher(("संग्रह",), frozenset({0x09}))
    assert hindi is not None and len(hindi.pattern) < 400, len(hindi.pattern)
    assert make_snippet("फ़ाइल संग्रहकर्ता है", ["संग्रह"]) == "फ़ाइल **संग्रहकर्ता** है"


@pytest.mark.parametrize(
    ("body", "terms", "expected"),
    [
        # a Vedic accent (U+1CD0-1CFF) inside Sanskrit: far from Devanagari's letters (U+0900)
        ("वेद स्थापना\u1cd0करें", ["स्थापना"], "वेद **स्थापना\u1cd0करें**"),
        ("x\u1cd0अग्निमीळे पुरोहितं", ["अग्निम्"], "x\u1cd0अग्निमीळे पुरोहितं"),
        # an Arabic mark of the Extended-A block (U+08F0) after a letter of the Arabic block (U+0600)
        ("بسم الله\u08f0 الرحمن", ["الله"], "بسم **الله\u08f0** الرحمن"),
        # Hebrew's point in its presentation forms (U+FB1E)
        ("שלום\ufb1e עולם", ["שלום"], "**שלום\ufb1e** עולם"),
        # an emoji keycap: the digit with its variation selector (U+FE0F) is no word '1'
        ("Press 1\ufe0f\u20e3 then 2", ["1"], "Press 1\ufe0f\u20e3 then 2"),
        # an English word after a Hindi vowel sign (no space): inside a word, as a Thai one is
        ("क्ab and ab", ["ab"], "क्ab and **ab**"),
    ],
)
def test_marks_far_from_the_query_letters_are_part_of_the_word(body: str, terms: list[str], expected: str) -> None:
    """The matcher's word class held only the marks within 256 code points of the query's letters: a mark of
    another block (a Vedic accent, an Arabic Extended-A mark, a variation selector) ended or began a word there,
    and the bold cut the letter from its mark (as 'ที่**vaultน**ี้' in the Obsidian help vault's Thai folder)."""
    assert make_snippet(body, terms) == expected


def test_a_text_of_many_scripts_costs_a_few_scans_not_one_per_script() -> None:
    """Each page of marks found costs a scan and a pattern: a note mixing ten scripts' marks takes every mark at
    once after the fourth page, and its words stay whole."""
    from mcp_docs.snippets import _marks_off

    _marks_off.cache_clear()
    body = "a\u0301 क्ष ไม่ ខ្មែរ بَ שָ ম্ ਕੁ ಕೆ ကို ที่vaultนี้ and vault"
    snippet = make_snippet(body, ["vault"])
    assert snippet.endswith("ที่vaultนี้ and **vault**") and snippet.count("**") == 2, snippet
    assert _marks_off.cache_info().currsize <= 5


@pytest.mark.parametrize(
    ("query", "word"),
    [
        ("isik", "Işık"),  # Turkish dotless ı: no decomposition, the index folds it to 'i'
        ("lodz", "Łódź"),  # Polish ł
        ("orsted", "Ørsted"),  # Danish ø
        ("duong", "Đường"),  # Vietnamese đ
        ("İçe", "İçe"),  # the capital dotted İ typed in the question: lowercased, an 'i' and a combining dot
        ("içe", "İçe"),
    ],
)
def test_a_word_the_index_finds_without_its_accents_is_in_the_snippet(query: str, word: str) -> None:
    """The index finds these words typed without the letters Unicode does not decompose (ascii_fold); the snippet
    folded by decomposition alone, found no match, and showed the section's first words instead of the passage
    (here past the first window), nothing in bold."""
    filler = "lorem ipsum dolor " * 30
    text = f"{filler} {word} ve diğerleri. {filler}"
    snippet = make_snippet(text, snippet_words(query), width=120)
    assert f"**{word}**" in snippet, snippet
