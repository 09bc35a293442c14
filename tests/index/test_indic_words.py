"""Hindi and Bengali words are found whole, not by the consonants they share (issue 29; the reviewer's finding 13).

These scripts write spaces between words, but their vowel signs are marks, not letters, to Tantivy's word
tokenizer: `गुमसुम` was cut into `ग`, `मस`, `म`, pieces nearly every page of the language holds (a word found nowhere
returned five tldr pages), and a word's own note lost to others sharing its pieces. Their words are now searched
whole in the letter field. The notes are written for
the tests."""

from collections.abc import Iterator

import pytest

from mcp_docs.library import Library
from tests.index.written_vault import keyword_library

NOTES = {
    # Tomorrow it will rain hard in Delhi, so keep an umbrella with you.
    "hi/rain.md": "# मौसम\n\nकल दिल्ली में तेज़ बारिश होगी, इसलिए छाता साथ रखें।\n",
    # There is a cat and two dogs in my house.
    "hi/home.md": "# मेरा घर\n\nमेरे घर में एक बिल्ली और दो कुत्ते हैं।\n",
    # All the pupils study at school every day.
    "hi/school.md": "# विद्यालय\n\nसभी छात्र हर दिन विद्यालय में पढ़ते हैं।\n",
    # My mother goes to the market to buy fish and vegetables.
    "bn/market.md": "# বাজার\n\nআমার মা মাছ আর সবজি কিনতে বাজারে যান।\n",
    "en/notes.md": "# Notes\n\nThe notes of the team are kept in this folder and read every morning.\n",
}


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    yield from keyword_library(tmp_path_factory, "indic", NOTES)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("बिल्ली", "hi/home.md"),  # cat
        ("छाता", "hi/rain.md"),  # umbrella
        ("विद्यालय", "hi/school.md"),  # school
        ("মাছ", "bn/market.md"),  # fish
    ],
)
def test_a_word_is_found_in_its_note_first(library: Library, query: str, expected: str) -> None:
    assert [r.id for r in library.search(query, mode="keyword").results][:1] == [expected]
