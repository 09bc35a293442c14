"""Search in a vault of several languages with no configuration: no `lang:`, no --language (English default)."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_docs.library import Library
from mcp_docs.settings import Settings
from tests.index.written_vault import keyword_library

NOTES = {
    "en/collector.md": "# Collector\n\nThe collector receives traces from the applications and exports them "
    "to the backend that you configured.\n",
    "fr/cantine.md": "# La cantine\n\nLes élèves mangeaient à la cantine avec leurs professeurs, puis ils sont "
    "allés dans la cour.\n\n## Réunions\n\nLes parents rencontrent les professeurs deux fois par an.\n",
    "ja/tokyo.md": "# 東京の天気\n\n東京都の天気予報によると、明日は晴れるでしょう。\n",
    "zh/shuju.md": "# 数据收集\n\n收集器从应用程序接收遥测数据，并将其导出到后端系统。\n",
    "ja/ame.md": "# 週末\n\n週末は雨が降るので、傘を持って行きましょう。\n",
    "zh/mao.md": "# 我的家\n\n我家有一只猫和两只狗。\n",
    "ko/san.md": "# 주말\n\n주말에 산에 갔어요.\n",
    "en/sampler.md": "# Sampler\n\nThe sampler of the SDK is chosen with an environment variable.\n",
    "en/sampling.md": "# Head and tail\n\nSampling keeps some traces; sampling early is cheap, sampling late is not.\n",
    # a page and its translation: the French question must find the French page first
    "en/excluded-urls.md": "# Excluded URLs\n\nA list of URLs that the Python instrumentation ignores, "
    "separated by commas.\n",
    "fr/urls-exclues.md": "# URLs à exclure\n\nUne liste d'URLs que l'instrumentation Python ignore, "
    "séparées par des virgules.\n",
}
# English notes enough that French sections are a small share of the index, as in real mixed vaults
FILLER = {
    f"en/filler/note{i:02}.md": f"# Note {i}\n\nThe service {i} exports the data of the application to the backend "
    "and the team reads the dashboards every morning before the meeting.\n"
    for i in range(30)
}


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    yield from keyword_library(tmp_path_factory, "languages", {**NOTES, **FILLER})


def top(library: Library, query: str) -> list[str]:
    return [r.id for r in library.search(query, mode="keyword").results]


def test_each_document_gets_its_detected_language(library: Library) -> None:
    langs = {r.id: r.lang for r in (library.catalog.document(i) for i in NOTES) if r is not None}
    assert langs == {
        "en/collector.md": "en",
        "fr/cantine.md": "fr",
        "ja/tokyo.md": "ja",
        "zh/shuju.md": "zh",
        "ja/ame.md": "ja",
        "zh/mao.md": "zh",
        "ko/san.md": "ko",
        "en/sampler.md": "en",
        "en/sampling.md": "en",
        "en/excluded-urls.md": "en",
        "fr/urls-exclues.md": "fr",
    }


def test_a_minority_language_is_not_penalised_by_its_share_of_the_index(library: Library) -> None:
    # With one stemmed field per language, the French fields' average length counted every English section as
    # empty, so French sections looked ten times too long to BM25 and lost to their English translations.
    assert top(library, "exclure des URLs de l'instrumentation Python")[:1] == ["fr/urls-exclues.md"]
    assert top(library, "excluded URLs of the Python instrumentation")[:1] == ["en/excluded-urls.md"]


def test_a_word_stemmed_in_another_language_only_matches_that_language(library: Library) -> None:
    # French stems 'sampler' to 'sampl', which is also the English stem of 'sampling': that French stem must
    # not make English pages about sampling match an English query for 'sampler'.
    assert top(library, "sampler") == ["en/sampler.md"]


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


@pytest.mark.parametrize(
    ("query", "expected"),
    [("雨", "ja/ame.md"), ("傘", "ja/ame.md"), ("猫", "zh/mao.md"), ("狗", "zh/mao.md"), ("산", "ko/san.md")],
)
def test_a_cjk_word_of_one_letter_is_found(library: Library, query: str, expected: str) -> None:
    # 雨 (rain), 猫 (cat), 산 (mountain) are whole words, yet sit inside runs (週末は雨が降るので…)
    assert top(library, query)[:1] == [expected]


def test_a_lone_letter_and_a_word_in_one_query(library: Library) -> None:
    assert set(top(library, "雨 天気")[:2]) == {"ja/ame.md", "ja/tokyo.md"}


@pytest.mark.parametrize("query", ["大阪", "雪"])
def test_cjk_terms_absent_from_every_note_find_nothing(library: Library, query: str) -> None:
    assert top(library, query) == []


def test_a_french_root_stems_its_english_notes_in_english(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "agents.md").write_text("# Agents\n\nThe agents were installed on every host of the cluster.\n")
    (root / "notes.md").write_text("# Notes\n\nLes élèves mangeaient à la cantine avec leurs professeurs.\n")
    lib = Library(Settings.load(root, tmp_path / "index", language="fr", embeddings="none", environ={}))
    try:
        lib.sync()
        assert lib.language_counts == {"en": 1, "fr": 1}
        assert top(lib, "installing agent")[:1] == ["agents.md"]
        assert top(lib, "élève")[:1] == ["notes.md"]
    finally:
        lib.close()


@pytest.mark.parametrize("query", ["élève", "eleve"])
def test_a_one_sentence_french_note_of_an_english_vault_is_stemmed_in_french(tmp_path: Path, query: str) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "cantine.md").write_text("# Cantine\n\nLes élèves mangeaient à la cantine avec leurs professeurs.\n")
    (root / "lunch.md").write_text("# Lunch\n\nThe pupils ate lunch in the canteen with their teachers.\n")
    with Library(Settings.load(root, tmp_path / "index", embeddings="none", environ={})) as lib:
        lib.sync()
        assert top(lib, query)[:1] == ["cantine.md"]  # before: nothing (the note was stemmed in English)
