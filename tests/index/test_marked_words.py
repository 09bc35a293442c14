"""Words written with combining marks are whole words in the full-text index, for the index and the query alike.

Devanagari, Tamil and the other Indic scripts write their vowel signs, viramas and nuktas as combining marks, which
are not letters to Python's \\w nor (viramas, nuktas) to Tantivy's `simple` tokenizer: a Hindi word was cut into
pieces, and a word found in no note matched pieces of every note. Arabic harakat, Hebrew niqqud and the accents of
a Latin file saved decomposed ('e' + U+0301) are folded as accents are: the word matches with or without them. The
notes are written for the tests; the PostgreSQL store's test reads them too."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_docs.library import Library
from mcp_docs.settings import Settings
from tests.index.written_vault import keyword_library

NOTES = {
    # Compressing files: this command compresses files and makes an archive.
    "hi/compress.md": "# फ़ाइलें संपीड़ित करना\n\nयह आदेश फ़ाइलों का संपीड़न करता है और संग्रह बनाता है।\n",
    # Network: send a ping to check the connection and wait for the answer.
    "hi/network.md": "# नेटवर्क\n\nकनेक्शन की जाँच के लिए पिंग भेजें और उत्तर की प्रतीक्षा करें।\n",
    # Files: this command copies the file to another folder.
    "ta/files.md": "# கோப்புகள்\n\nஇந்த கட்டளை கோப்பை வேறு அடைவுக்கு நகலெடுக்கிறது.\n",
    # Search: look for a word in the text.
    "ta/search.md": "# தேடல்\n\nஉரையில் ஒரு சொல்லைத் தேடுங்கள்.\n",
    # The library: I read a new book about programming (with its vowel marks).
    "ar/library.md": "# المكتبة\n\nقَرَأْتُ كِتَابًا جَدِيدًا عَنِ البَرْمَجَةِ فِي المَكْتَبَةِ.\n",
    # A greeting: peace to all the friends of the team (with niqqud).
    "he/greeting.md": "# ברכה\n\nשָׁלוֹם לְכָל הַחֲבֵרִים בַּצֶּוֶת.\n",
    # French, saved decomposed (NFD): decaffeinated coffee is served in summer.
    "fr/coffee.md": unicodedata.normalize(
        "NFD", "# Le café\n\nLe café décaféiné est servi pendant l'été, près de la fenêtre.\n"
    ),
    "en/notes.md": "# Notes\n\nThe notes of the team are kept in this folder and read every morning.\n",
}

# A word of a note, as a reader would type it, and the only note it is in.
CASES = [
    ("संपीड़न", "hi/compress.md"),  # compression: a nukta inside the word
    ("संग्रह", "hi/compress.md"),  # archive: a virama inside the word
    ("प्रतीक्षा", "hi/network.md"),  # waiting: two viramas
    ("नकलெடுக்கிறது", None),  # Devanagari and Tamil letters in one made-up word: in no note
    ("நகலெடுக்கிறது", "ta/files.md"),  # copies
    ("சொல்லைத்", "ta/search.md"),  # the word (accusative)
    ("كِتَابًا", "ar/library.md"),  # a book, with its harakat
    ("كتابا", "ar/library.md"),  # the same, written without them
    ("שלום", "he/greeting.md"),  # peace, without niqqud
    ("décaféiné", "fr/coffee.md"),  # composed query, decomposed note
    ("decafeine", "fr/coffee.md"),  # without accents
    ("fenêtre", "fr/coffee.md"),
]

# Words of these scripts found in no note: whole, they match nothing (their pieces were letters of every note).
ABSENT = ["गुमसुम", "संपीड़क", "மரம்", "கோப்புறை"]


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    yield from keyword_library(tmp_path_factory, "marked-words", NOTES)


@pytest.mark.parametrize(("query", "expected"), [(q, e) for q, e in CASES if e])
def test_a_word_with_marks_finds_its_note_alone(library: Library, query: str, expected: str) -> None:
    # each word is in one note only: its pieces matched pieces of the others too
    assert [r.id for r in library.search(query, mode="keyword").results] == [expected]


@pytest.mark.parametrize("query", ABSENT + [q for q, e in CASES if e is None])
def test_a_word_in_no_note_finds_nothing(library: Library, query: str) -> None:
    assert [r.id for r in library.search(query, mode="keyword").results] == []


def test_words_without_marks_are_found_as_before(library: Library) -> None:
    assert [r.id for r in library.search("morning notes", mode="keyword").results][:1] == ["en/notes.md"]


def test_an_index_of_the_schema_before_is_indexed_again_and_finds_whole_words(tmp_path: Path) -> None:
    """An index made before words kept their marks (schema 10) holds their pieces: it is rebuilt and every note
    indexed again, none lost."""
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    settings = Settings.load(root, tmp_path / "index", embeddings="none", environ={})
    lib = Library(settings)
    lib.sync()
    lib.close()
    (tmp_path / "index" / "fulltext" / "schema-version").write_text("10")
    lib = Library(settings)
    try:
        assert lib.sync().added == len(NOTES)
        assert [r.id for r in lib.search("संपीड़न", mode="keyword").results] == ["hi/compress.md"]
    finally:
        lib.close()
