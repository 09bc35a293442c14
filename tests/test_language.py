"""Language detection, language names and CJK bigrams (mcp_docs.language), as pure functions."""

import random
import time

import pytest

from mcp_docs.language import cjk_terms, describe_languages, detect_language
from tests.security.crash_trials import GREEK_LETTERS

SAMPLES = {
    "en": "The collector receives traces from the applications and exports them to the backend of your choice.",
    "fr": "Les élèves mangeaient à la cantine avec leurs professeurs, puis ils sont allés dans la cour pour jouer.",
    "de": "Der Collector empfängt die Daten von den Anwendungen und sendet sie an das Backend, das Sie gewählt haben.",
    "es": "El colector recibe los datos de las aplicaciones y los envía al sistema que se ha elegido para ellos.",
    "it": "Il collettore riceve i dati dalle applicazioni e li invia al sistema che è stato scelto per questo.",
    "nl": "De collector ontvangt de gegevens van de applicaties en stuurt deze naar het systeem dat je kiest.",
    "ru": "Коллектор получает данные от приложений и отправляет их в выбранную систему хранения.",
    "el": "Ο συλλέκτης λαμβάνει τα δεδομένα από τις εφαρμογές και τα στέλνει στο σύστημα.",
    "zh": "收集器从应用程序接收遥测数据，并将其导出到您选择的后端系统。",
    "ja": "コレクターはアプリケーションからテレメトリーデータを受信し、選択したバックエンドに送信します。",
}


@pytest.mark.parametrize("code", sorted(SAMPLES))
def test_detects_the_language_of_prose(code: str) -> None:
    assert detect_language([SAMPLES[code]]) == code


def test_code_and_links_do_not_vote() -> None:
    # English keywords in a code block and an English link target must not outvote the French prose.
    text = (
        "Les traces sont envoyées vers le collecteur et les métriques sont exportées par le SDK.\n\n"
        "```python\nfor span in the_spans:\n    if span.is_recording() and not span.ended: export(span)\n```\n"
        "Voir [la page](https://example.com/the-guide-for-the-setup-of-the-collector) pour plus de détails."
    )
    assert detect_language([text]) == "fr"


@pytest.mark.parametrize(
    "text",
    ["", "```\nthe and of to is in that it for with\n```", "| 1 | 2 |\n| 3 | 4 |", "Kubernetes OpenTelemetry OTLP"],
)
def test_abstains_without_enough_prose(text: str) -> None:
    assert detect_language([text]) is None


def test_word_salad_without_function_words_abstains() -> None:
    # Random Greek letter names (the crash trials' documents) hold Romanian "nu" and nothing else that votes:
    # they were named Romanian ~72 % of the time. One word repeated is no evidence of a language.
    rng = random.Random(14)
    named = []
    for _ in range(200):
        body = " ".join(rng.choice(GREEK_LETTERS) for _ in range(rng.randrange(20, 120)))
        sections = [f"{body} collector pipeline" for _ in range(rng.randrange(1, 5))]
        named.append(detect_language(["Doc", body, *sections]))
    assert set(named) == {None}


def test_a_few_function_words_among_many_names_abstain() -> None:
    # Four different French words, then a list of 300 identifiers: not French prose.
    assert detect_language(["le la les des " + "span " * 300]) is None
    assert detect_language(["le la les des " + "et les traces sont dans la base"]) == "fr"


def test_describe_languages_largest_first_and_never_zero() -> None:
    assert describe_languages({"fr": 8, "en": 92}) == "92 % English, 8 % French"
    assert describe_languages({"en": 999, "ja": 1}) == "100 % English, <1 % Japanese"
    assert describe_languages({}) == ""


def test_cjk_terms_cover_every_pair_of_each_run() -> None:
    assert cjk_terms("東京都 and 京") == ["東京", "京都", "京"]
    assert cjk_terms("plain English text") == []


def test_cjk_terms_for_the_index_add_every_letter() -> None:
    assert cjk_terms("東京都 and 京", letters=True) == ["東京", "京都", "東", "京", "都", "京"]


@pytest.mark.parametrize("hostile", ["<" * 12_000, "`a" * 6_000, "](" * 6_000, "http://" * 2_000, "```x\n" * 3_000])
def test_hostile_lines_cost_about_what_prose_costs(hostile: str) -> None:
    # Every note without `lang:` goes through the detector: a line of unclosed `<` once took 16 s (each `<`
    # scanned to the end of the line). A ratio with a wide margin, not a timing: linear stays far below it.
    def best_of_3(text: str) -> float:
        times = []
        for _ in range(3):
            started = time.perf_counter()
            detect_language([text])
            times.append(time.perf_counter() - started)
        return min(times)

    assert best_of_3(hostile) < 50 * best_of_3("the word " * 1_500) + 0.01


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Les élèves mangeaient à la cantine avec leurs professeurs.", "fr"),
        ("The pupils ate lunch in the canteen with their teachers.", "en"),
        ("Die Schüler essen mit den Lehrern in der Kantine.", "de"),
    ],
)
def test_one_sentence_with_three_function_words_of_one_language_is_named(text: str, code: str) -> None:
    # before: four votes were needed, and a one-line note stayed in the root's language (its stemmer)
    assert detect_language([text]) == code


@pytest.mark.parametrize("text", ["Notes sur le projet", "Casa de la Playa del Carmen", "la la la la"])
def test_one_short_line_without_a_clear_lead_still_abstains(text: str) -> None:
    assert detect_language([text]) is None
