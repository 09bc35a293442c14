"""Languages without a stemmer are lowercased and accent-folded, not stemmed with the root's stemmer, and their
words do not count as the root's stems (issue 29: in the Obsidian help vault, "what is canvas" found the English
page third, after the Norwegian and Portuguese ones)."""

from collections.abc import Iterator

import pytest

from mcp_docs.library import Library
from mcp_docs.search.languages import query_language
from tests.index.written_vault import keyword_library

# One page about the canvas in English, Norwegian and Portuguese (languages with a stemmer: Norwegian and
# Portuguese stem 'canvas' to 'canv', English to 'canva'), and pages in languages without one that keep the
# feature's English name, as translated docs do.
NOTES = {
    "en/canvas.md": "# Canvas\n\nThe canvas is a space where you lay out your notes as cards and connect them.\n\n"
    "## Embed a canvas\n\nA canvas can be embedded in a note like an image.\n",
    "no/canvas.md": "# Canvas\n\nEt canvas er et område der du legger ut notatene dine som kort og kobler dem sammen.\n\n"
    "## Bygg inn et canvas\n\nEt canvas kan bygges inn i et notat som et bilde.\n",
    "pt/canvas.md": "# Canvas\n\nO canvas é um espaço onde você organiza as suas notas como cartões e as liga entre si.\n\n"
    "## Incorporar um canvas\n\nUm canvas pode ser incorporado numa nota como uma imagem.\n",
    "cs/canvas.md": "# Canvas\n\nCanvas je prostor, kde můžete rozložit své poznámky jako karty a propojit je.\n",
    "sk/canvas.md": "# Canvas\n\nCanvas je priestor, kde môžete rozložiť svoje poznámky ako karty a prepojiť ich.\n",
    "pl/canvas.md": "# Canvas\n\nCanvas to przestrzeń, w której możesz rozmieścić swoje notatki jako karty i je połączyć.\n",
    "vi/canvas.md": "# Canvas\n\nCanvas là không gian nơi bạn sắp xếp các ghi chú của mình thành thẻ và nối chúng với nhau.\n",
    "id/canvas.md": "# Canvas\n\nCanvas adalah ruang tempat Anda menata catatan Anda sebagai kartu dan menghubungkannya.\n",
    "uk/canvas.md": "# Canvas\n\nCanvas — це простір, де ви розкладаєте свої нотатки як картки та з'єднуєте їх.\n",
    "ca/canvas.md": "# Canvas\n\nEl Canvas és un espai on podeu disposar les vostres notes com a targetes i connectar-les.\n",
    "he/canvas.md": "# Canvas\n\nCanvas הוא מרחב שבו אתם מסדרים את הפתקים שלכם ככרטיסים ומחברים ביניהם.\n",
    "fa/canvas.md": "# Canvas\n\nCanvas فضایی است که در آن یادداشت‌های خود را به شکل کارت می‌چینید و به هم وصل می‌کنید.\n",
    "hi/canvas.md": "# Canvas\n\nCanvas एक ऐसी जगह है जहाँ आप अपने नोट्स को कार्ड की तरह रखते हैं और उन्हें जोड़ते हैं।\n",
    "th/canvas.md": "# Canvas\n\nCanvas คือพื้นที่ที่คุณจัดวางบันทึกของคุณเป็นการ์ดและเชื่อมต่อเข้าด้วยกัน\n",
}


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    yield from keyword_library(tmp_path_factory, "unstemmed", NOTES)


def test_an_english_question_finds_the_english_page_first(library: Library) -> None:
    assert [r.id for r in library.search("what is canvas", mode="keyword").results][:1] == ["en/canvas.md"]


def test_pages_without_a_stemmer_do_not_make_the_roots_stems_common(library: Library) -> None:
    # The bare name, no function word to tell a language: it weighs as much in English as in Portuguese. When the
    # eleven pages without a stemmer counted in English 'canva', Norwegian and Portuguese 'canv' (two pages) was
    # the rarer term and their pages came first.
    assert [r.id for r in library.search("canvas", mode="keyword").results][:1] == ["en/canvas.md"]


def test_a_word_of_a_language_without_a_stemmer_is_found_as_written_and_accent_folded(library: Library) -> None:
    # Czech 'své' (Slovak has 'svoje'): found as written and without its accent
    assert [r.id for r in library.search("své", mode="keyword").results][:1] == ["cs/canvas.md"]
    assert [r.id for r in library.search("sve", mode="keyword").results][:1] == ["cs/canvas.md"]
    assert [r.id for r in library.search("нотатки", mode="keyword").results][:1] == ["uk/canvas.md"]


def test_an_english_question_with_portuguese_looking_words_is_english(library: Library) -> None:
    # 'do' and 'a' are Portuguese function words too: "how do I ..." was called Portuguese, and of the page and
    # its translation the Portuguese one was shown
    assert query_language("how do I connect a card", library.languages) == "en"
    assert [r.id for r in library.search("how do I connect a card", mode="keyword").results][:1] == ["en/canvas.md"]
