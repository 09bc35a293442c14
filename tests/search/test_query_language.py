"""A question in a language without a function-word list (Thai, Khmer, Czech ...) ranks that language's pages
first when they answer it (issue 29, part 3): the query's language comes from the identifier, among the
collection's languages, when function words do not tell."""

from collections.abc import Iterator

import pytest

from mcp_docs.language import query_language_beyond_stopwords
from mcp_docs.library import Library
from tests.index.written_vault import keyword_library

# The same page in four languages, each naming the feature "Canvas" (the word every version shares); the Thai and
# Khmer ones are the longest, so on the shared word alone BM25 puts them last.
NOTES = {
    "en/canvas.md": "# Canvas\n\nCanvas is a space where you lay out your notes as cards and draw lines between them.\n",
    "fr/canvas.md": "# Canvas\n\nCanvas est un espace où vous disposez vos notes en cartes et tracez des liens.\n",
    "th/canvas.md": "# Canvas\n\nCanvas เป็นพื้นที่ที่คุณสามารถจัดวางบันทึกของคุณเป็นการ์ดและลากเส้นเชื่อมระหว่างการ์ดเหล่านั้น"
    " คุณสามารถย่อขยายและเลื่อนไปรอบๆ พื้นที่ได้อย่างอิสระ\n",
    "km/canvas.md": "# Canvas\n\nCanvas គឺជាកន្លែងដែលអ្នកអាចរៀបចំកំណត់ចំណាំរបស់អ្នកជាកាត ហើយគូរបន្ទាត់រវាងកាតទាំងនោះ"
    " អ្នកអាចពង្រីក និងរំកិលជុំវិញកន្លែងនោះដោយសេរី។\n",
}


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    yield from keyword_library(tmp_path_factory, "query-language", NOTES)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Canvas คืออะไร", "th/canvas.md"),  # Thai: what is Canvas?
        ("តើ Canvas ជាអ្វី", "km/canvas.md"),  # Khmer: what is Canvas?
        ("what is Canvas", "en/canvas.md"),  # function words still tell English and French
        ("qu'est-ce que Canvas", "fr/canvas.md"),
    ],
)
def test_a_question_ranks_the_page_in_its_language_first(library: Library, query: str, expected: str) -> None:
    assert [r.id for r in library.search(query, mode="keyword").results][:1] == [expected]


def test_the_identifier_is_asked_only_for_languages_without_a_word_list() -> None:
    # English and French have function words: a collection of only those never asks (no change for the OTel docs)
    assert query_language_beyond_stopwords("Canvas คืออะไร", ["en", "fr"]) is None
    assert query_language_beyond_stopwords("Canvas คืออะไร", ["en", "th"]) == "th"
    # a name alone is no language; nor is an English question the identifier might call something else
    assert query_language_beyond_stopwords("Canvas", ["en", "th", "cs"]) is None
    assert query_language_beyond_stopwords("Obsidian Sync", ["en", "th", "cs"]) is None
