"""A short query's language from its script and letters (mcp_docs/query_language.py), among the collection's:
named where the letters leave no doubt, left unnamed where they do not, never a language the vault lacks."""

import pytest

from mcp_docs.query_language import letter_language, query_language, script_language

OBSIDIAN = frozenset(
    [
        "ar",
        "bn",
        "ca",
        "cs",
        "da",
        "de",
        "el",
        "en",
        "es",
        "fa",
        "fi",
        "fr",
        "he",
        "hu",
        "id",
        "it",
        "ja",
        "km",
        "ko",
        "nl",
        "no",
        "pl",
        "pt",
        "ro",
        "ru",
        "sk",
        "sv",
        "th",
        "tr",
        "uk",
        "vi",
        "zh",
    ]
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("notatka na każdy dzień", "pl"),  # Polish: "na" also voted Portuguese; ż is Polish
        ("xem lai cac phien ban cu cua ghi chu", "vi"),  # Vietnamese without accents: "cu" voted Romanian
        ("Canvas là gì", "vi"),  # Vietnamese: two function words, too short for the identifier
        ("apa itu canvas", "id"),  # Indonesian
        ("подключить свой домен к сайту", "ru"),  # Cyrillic: the identifier chooses between Russian and Ukrainian
        ("як відновити видалений файл", "uk"),
        ("テンプレートの使い方", "ja"),  # kana: Japanese
        ("Canvas คืออะไร", "th"),  # the Thai letters decide, whatever the Latin name beside them
    ],
)
def test_the_query_language_on_a_vault_of_many_languages(query: str, expected: str) -> None:
    assert query_language(query, OBSIDIAN) == expected


def test_a_script_the_collection_does_not_write_names_no_language() -> None:
    # the OpenTelemetry docs are English and French: a Thai or Russian question there has no language of theirs
    assert script_language("Canvas คืออะไร", frozenset({"en", "fr"})) == ""
    assert query_language("Canvas คืออะไร", frozenset({"en", "fr"})) is None
    assert query_language("подключить свой домен", frozenset({"en", "fr"})) is None


def test_latin_letters_only_when_one_language_of_the_collection_writes_them() -> None:
    assert script_language("jak zmienić skróty", OBSIDIAN) is None  # Latin: not the script's to say
    assert letter_language("jak zmienić skróty klawiszowe ł", frozenset({"en", "fr"})) is None  # no Polish here
    assert letter_language("Straße", frozenset({"en", "de"})) == "de"
    assert letter_language("Straße łódź", frozenset({"en", "de", "pl"})) is None  # two languages: no decision
    assert query_language("jak zmienić skróty klawiszowe", frozenset({"en", "fr"})) is None


def test_function_words_still_decide_english_and_french() -> None:
    assert query_language("what is canvas", OBSIDIAN) == "en"
    assert query_language("qu'est-ce que le canvas", OBSIDIAN) == "fr"
    assert query_language("Canvas", OBSIDIAN) is None  # a name alone
