"""Search in a vault of several languages with no configuration: no `lang:`, no --language (English default)."""

from collections.abc import Iterator

import pytest

from mcp_docs.library import Library
from mcp_docs.settings import Settings

NOTES = {
    "en/collector.md": "# Collector\n\nThe collector receives traces from the applications and exports them "
    "to the backend that you configured.\n",
    "fr/cantine.md": "# La cantine\n\nLes élèves mangeaient à la cantine avec leurs professeurs, puis ils sont "
    "allés dans la cour.\n\n## Réunions\n\nLes parents rencontrent les professeurs deux fois par an.\n",
    "ja/tokyo.md": "# 東京の天気\n\n東京都の天気予報によると、明日は晴れるでしょう。\n",
    "zh/shuju.md": "# 数据收集\n\n收集器从应用程序接收遥测数据，并将其导出到后端系统。\n",
}


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    base = tmp_path_factory.mktemp("languages")
    root = base / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    lib = Library(Settings.load(root, base / "index", embeddings="none", environ={}))
    lib.sync()
    yield lib
    lib.close()


def top(library: Library, query: str) -> list[str]:
    return [r.id for r in library.search(query, mode="keyword").results]


def test_each_document_gets_its_detected_language(library: Library) -> None:
    langs = {r.id: r.lang for r in (library.catalog.document(i) for i in NOTES) if r is not None}
    assert langs == {"en/collector.md": "en", "fr/cantine.md": "fr", "ja/tokyo.md": "ja", "zh/shuju.md": "zh"}


@pytest.mark.parametrize("query", ["élève", "eleve", "élèves", "Élève", "professeur"])
def test_french_word_forms_find_a_french_note_of_an_english_vault(library: Library, query: str) -> None:
    # The English stemmer leaves 'élèves' and 'élève' apart; the French one, chosen by detection, joins them.
    assert top(library, query)[:1] == ["fr/cantine.md"]


def test_english_stemming_still_applies(library: Library) -> None:
    assert top(library, "receiving exported trace")[:1] == ["en/collector.md"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("東京", "ja/tokyo.md"),
        ("天気", "ja/tokyo.md"),
        ("予報", "ja/tokyo.md"),
        ("遥测", "zh/shuju.md"),
        ("收集器", "zh/shuju.md"),
        ("后端系统", "zh/shuju.md"),
    ],
)
def test_cjk_words_of_two_letters_or_more_are_found(library: Library, query: str, expected: str) -> None:
    # The words sit inside runs with no spaces (東京都の天気予報によると…): a word tokenizer sees one token.
    assert top(library, query)[:1] == [expected]


def test_cjk_pair_absent_from_every_note_finds_nothing(library: Library) -> None:
    assert top(library, "大阪") == []
