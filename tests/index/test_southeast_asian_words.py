"""Words of Thai, Khmer, Lao and Myanmar notes are found in the middle of a sentence (issue 29).

These scripts put no spaces between words, and their vowel signs and tone marks are not letters to Tantivy's word
tokenizer: a sentence was cut into fragments at each mark, and a word inside it matched none of them. Their runs are
indexed as letter pairs, as CJK runs are. The notes are written for the tests."""

from collections.abc import Iterator

import pytest

from mcp_docs.library import Library
from tests.index.written_vault import keyword_library

NOTES = {
    # Tomorrow it will rain hard in Bangkok, so take an umbrella.
    "th/weather.md": "# พยากรณ์อากาศ\n\nพรุ่งนี้ฝนจะตกหนักในกรุงเทพ ดังนั้นควรพกร่มไปด้วย\n",
    # My house has one cat and two dogs.
    "th/home.md": "# บ้านของฉัน\n\nบ้านของฉันมีแมวหนึ่งตัวและสุนัขสองตัว\n",
    # My mother goes to the market to buy fish and vegetables.
    "km/market.md": "# ថ្ងៃអាទិត្យ\n\nម្ដាយរបស់ខ្ញុំទៅផ្សារដើម្បីទិញត្រីនិងបន្លែ\n",
    # All the pupils study at school every day.
    "km/school.md": "# សិស្ស\n\nសិស្សទាំងអស់រៀននៅសាលារៀនរាល់ថ្ងៃ\n",
    # We eat sticky rice with the family every day.
    "lo/rice.md": "# ອາຫານ\n\nພວກເຮົາກິນເຂົ້າໜຽວທຸກມື້ກັບຄອບຄົວ\n",
    # I drink tea every morning.
    "my/tea.md": "# မနက်\n\nကျွန်တော်သည်မနက်တိုင်းလက်ဖက်ရည်သောက်သည်\n",
    "en/notes.md": "# Notes\n\nThe notes of the team are kept in this folder and read every morning.\n",
}


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    yield from keyword_library(tmp_path_factory, "southeast-asian", NOTES)


# Words inside a sentence of their script, and the note each is in (the PostgreSQL store's test reads them too).
CASES = [
    ("กรุงเทพ", "th/weather.md"),  # Bangkok
    ("ร่ม", "th/weather.md"),  # umbrella: a tone mark inside a word of two letters
    ("แมว", "th/home.md"),  # cat
    ("สุนัข", "th/home.md"),  # dog
    ("ផ្សារ", "km/market.md"),  # market
    ("ត្រី", "km/market.md"),  # fish
    ("សាលារៀន", "km/school.md"),  # school
    ("ເຂົ້າໜຽວ", "lo/rice.md"),  # sticky rice
    ("ຄອບຄົວ", "lo/rice.md"),  # family
    ("လက်ဖက်ရည်", "my/tea.md"),  # tea
]


@pytest.mark.parametrize(("query", "expected"), CASES)
def test_a_word_in_the_middle_of_a_sentence_is_found_first(library: Library, query: str, expected: str) -> None:
    found = [r.id for r in library.search(query, mode="keyword").results]
    assert found[:1] == [expected]


def test_the_notes_are_named_in_their_languages(library: Library) -> None:
    named = library.catalog.named_languages(list(NOTES))
    assert named == {rel: rel.split("/")[0] for rel in NOTES}
