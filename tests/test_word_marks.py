"""Words with combining marks, as the query and the full-text index read them (pure text: no index here).

A vowel sign, virama or nukta is a combining mark, not a letter to Python's \\w; viramas and nuktas are not
alphanumeric to Tantivy's `simple` tokenizer either. Both cut 'संपीड़न' into pieces."""

from __future__ import annotations

import re
import sys
import unicodedata

import pytest
import tantivy

from mcp_docs.query_text import MARKS, WORD, fold_marks, query_words
from mcp_docs.store.embedded.fulltext import _analyzer, _stem_terms_of, _stemming, _word_tokenizer

MARKED_WORDS = [
    "संपीड़न",  # Hindi: nukta, virama (in the anusvara's place: a sign), vowel sign
    "प्रतीक्षा",  # Hindi: two viramas
    "সংকোচন",  # Bengali
    "ਪੰਜਾਬੀ",  # Gurmukhi
    "ગુજરાતી",  # Gujarati
    "କମ୍ପ୍ୟୁଟର",  # Oriya
    "நகலெடுக்கிறது",  # Tamil
    "ఫైల్",  # Telugu
    "ಕನ್ನಡ",  # Kannada
    "മലയാളം",  # Malayalam
    "සිංහල",  # Sinhala
    "བོད་",  # Tibetan (the tsheg after it is punctuation)
]


@pytest.mark.parametrize("word", MARKED_WORDS)
def test_a_word_with_marks_is_one_query_word(word: str) -> None:
    whole = word.rstrip("་")
    assert query_words(f"({word}) x") == [whole, "x"]


@pytest.mark.parametrize("word", MARKED_WORDS)
def test_a_word_with_marks_is_one_index_term(word: str) -> None:
    whole = word.rstrip("་")
    assert _analyzer(None).analyze(f"«{word}», 2") == [whole, "2"]


def test_a_decomposed_word_is_the_composed_word() -> None:
    decomposed = unicodedata.normalize("NFD", "Décaféiné, fenêtre")
    assert query_words(decomposed) == ["décaféiné", "fenêtre"]
    # the index folds accents: the decomposed text's terms are those of the composed text, and of the unaccented
    assert _analyzer(None).analyze(fold_marks(decomposed)) == ["decafeine", "fenetre"]
    assert _stemming("fr").analyze(fold_marks(decomposed)) == _stemming("fr").analyze("décaféiné fenetre")


def test_arabic_and_hebrew_vowel_marks_are_folded_as_accents_are() -> None:
    assert fold_marks("كِتَابًا جَدِيدًا") == "كتابا جديدا"
    assert fold_marks("שָׁלוֹם") == "שלום"
    # the marks of Indic scripts are letters of their words and stay
    assert fold_marks("संपीड़न நகலெடு") == "संपीड़न நகலெடு"


@pytest.mark.parametrize(
    "text",
    [
        "The OTEL_EXPORTER_OTLP_ENDPOINT (v1.2) isn't set; use C++ & x86-64, 3.5 GB — naïve café, Ærø, ß.",
        "Le collecteur reçoit des données : « traces », métriques, journaux (l'exportateur).",
        "東京都の天気 서울 날씨 ٢٠٢٤ ½ ² Ⅻ x²",
        "Привет, мир! Γειά σου κόσμε",
        "⚠️ Warning ✔️ done",  # a variation selector (a mark) after a symbol starts no word
    ],
)
def test_text_without_combining_marks_has_the_simple_tokenizers_terms(text: str) -> None:
    simple = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).build()
    words = tantivy.TextAnalyzerBuilder(_word_tokenizer()).build()
    assert words.analyze(text) == simple.analyze(text)
    assert [m.group(0).lower() for m in WORD.finditer(text)] == [m.lower() for m in re.findall(r"[^\W_]+", text)]


def test_the_written_out_marks_are_every_combining_mark() -> None:
    listed = re.compile(f"[{MARKS}]")
    for code in range(0x0300, sys.maxunicode + 1):
        char = chr(code)
        assert bool(listed.match(char)) == unicodedata.category(char).startswith("M"), hex(code)


@pytest.mark.parametrize("text", ["Tail sampling, naïve café and C++ ⚠️", "फ़ाइलों का संपीड़न", "𑀅𑀲𑁄𑀓 Brahmi"])
def test_a_documents_term_set_is_the_indexs_terms(text: str) -> None:
    # the term sets take Tantivy's faster `simple` tokenizer for text without a combining mark: the same terms
    assert _stem_terms_of(text, "en") == _stemming("en").analyze(text)
