"""Hybrid search in a vault translated into many languages: a foreign vector hit takes a rank only for a page the
asker cannot read in their own language (search/hybrid.py `interleave`, search/languages.py `also_in`).

The rule on a hand-made fused list and vector list, and the language signal that goes with it; `also_in` on both
stores' real catalogs is in tests/store/postgres/test_pg_versions_of_a_page.py."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from mcp_docs.index.hits import RankedSection, VectorHit
from mcp_docs.index.language_mix import LanguageView
from mcp_docs.library import Library
from mcp_docs.search.document_signals import LANGUAGE_WEIGHT, share_of_best
from mcp_docs.search.hybrid import interleave, readable_in_own
from mcp_docs.search.languages import also_in
from mcp_docs.settings import Settings


def vhit(doc_id: str, similarity: float) -> VectorHit:
    return VectorHit(doc_id, 0, similarity, doc_id, "H", "H", 1, 2, "piece", ())


def section(doc_id: str) -> RankedSection:
    return RankedSection(doc_id, 0, doc_id, "H", "H", 1, 2, "body", ())


VIEW = LanguageView("en", {"fr": ["fr/a", "fr/b", "fr/x"], "de": ["de/x"]}, {"en": 0.0, "fr": 0.0, "de": 0.0})
FUSED = [(section("fr/b"), 0.9), (section("fr/a"), 0.8), (section("fr/x"), 0.5)]
# the German version of fr/x stands out on the vector side, then a page only in English, then French pages
VECTOR_HITS = [vhit("de/x", 0.9), vhit("en/only", 0.88), vhit("fr/a", 0.86), vhit("fr/x", 0.8)]


def test_a_foreign_version_of_a_page_in_the_askers_language_takes_no_rank() -> None:
    asked: list[list[str]] = []

    def also_in_french(foreign: Sequence[str]) -> set[str]:
        asked.append(list(foreign))
        return {"de/x"}

    mixed = interleave(FUSED, VECTOR_HITS, VIEW, "fr", limit=10, also_in_own=also_in_french)
    assert [s.doc_id for s, _ in mixed] == ["en/only", "fr/b", "fr/a", "fr/x"]
    assert asked == [["de/x", "en/only"]]  # asked once, for the foreign hits only, best first
    # before: the German version took the first rank from every French page
    assert [s.doc_id for s, _ in interleave(FUSED, VECTOR_HITS, VIEW, "fr", limit=10)][:2] == ["de/x", "en/only"]


def test_no_foreign_hit_asks_nothing() -> None:
    def never(foreign: Sequence[str]) -> set[str]:
        raise AssertionError("asked without a foreign hit")

    own_hits = [vhit("fr/a", 0.86), vhit("fr/x", 0.8)]
    assert [s.doc_id for s, _ in interleave(FUSED, own_hits, VIEW, "fr", limit=10, also_in_own=never)] == [
        "fr/b",
        "fr/a",
        "fr/x",
    ]


def test_the_language_bonus_needs_some_of_the_querys_words() -> None:
    # a page in the asker's language about something else gains nothing for its language alone
    assert share_of_best(0.0, 0.0, True, sections=1, words=True) == 0.0
    with_words = share_of_best(0.5, 0.0, True, sections=1, words=True)
    assert with_words == pytest.approx(share_of_best(0.5, 0.0, False, sections=1, words=True) + LANGUAGE_WEIGHT)
    assert share_of_best(0.0, 0.5, True, 1, words=True) > share_of_best(0.0, 0.5, False, 1, words=True)
    # a query without words the signals can look for (a Thai or Khmer run) is told by its language alone
    assert share_of_best(0.0, 0.0, True, sections=1, words=False) == LANGUAGE_WEIGHT


def test_readable_in_own_asks_once_for_the_foreign_pages_best_first() -> None:
    asked: list[list[str]] = []

    def also_in_french(foreign: Sequence[str]) -> set[str]:
        asked.append(list(foreign))
        return {"de/x"}

    hits = [vhit("de/x", 0.9), vhit("fr/a", 0.86), vhit("en/only", 0.85), vhit("de/x", 0.84)]
    assert readable_in_own(hits, VIEW, "fr", also_in_french) == {"de/x"}
    assert asked == [["de/x", "en/only"]]
    assert readable_in_own(hits, VIEW, "fr", None) == set()


def test_a_translation_added_later_is_paired_by_the_next_search(tmp_path: Path) -> None:
    # The keys of the asker's pages are kept while the store hands out the same list of them (until a commit).
    root = tmp_path / "vault"
    french = (
        "Le collecteur reçoit les données de télémétrie, les traite puis les exporte vers un ou plusieurs backends."
    )
    german = (
        "Der Collector empfängt die Telemetriedaten, verarbeitet sie und exportiert sie an ein oder mehrere Backends."
    )
    english = (
        "The collector receives telemetry data, processes it and exports it to one or more backends of your choice."
    )
    for rel, text in {"en/collector.md": english, "de/collector.md": german, "fr/autre.md": french}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# T\n\n{text}\n", encoding="utf-8")
    lib = Library(Settings.load(root, tmp_path / "index", embeddings="none"))
    lib.sync()
    catalog = lib.catalog

    def view() -> LanguageView:
        return LanguageView("en", catalog.documents_by_language("en"), {})  # type: ignore[attr-defined]

    assert also_in(catalog, view(), "fr")(["de/collector.md"]) == set()
    (root / "fr/collector.md").write_text(f"# T\n\n{french}\n", encoding="utf-8")
    lib.sync()
    assert also_in(catalog, view(), "fr")(["de/collector.md"]) == {"de/collector.md"}
    lib.close()
